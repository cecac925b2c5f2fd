"""The retrieval suite's format: two tidy tables, passages and queries.

The shipped suite (``data/suites/retrieval.csv``, schema in ``data/README.md``)
is wide: one anchor group per row, with a paraphrase, one adversarial variant
per failure mode that applies, and, for NevIR-style groups, two queries.
:func:`tidy_suite` turns it into two long tables that the run and the page
share:

* passages: ``group_id, domain, role, mode, text``; role is ``anchor``,
  ``paraphrase`` or ``variant`` (``mode`` is empty except for variants);
* queries: ``group_id, domain, query_mode, which, text``; ``which`` is ``q1``
  (answered by the anchor, not by the ``query_mode`` variant) or ``q2`` (the
  other way round).

The wide file's rules are :mod:`core.probes.retrieval.suite_checks`; a pairs
or triples table becomes a suite in :mod:`core.probes.retrieval.convert`;
files and uploads are read in :mod:`core.probes.retrieval.suite_files`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core import constants, lexicon

MODES = lexicon.FAILURE_MODES
# The columns a wide file must have; of the per-mode columns (one per failure mode), any may be missing:
# a file written before a mode existed, or for some modes only, scores the modes it has.
REQUIRED_COLUMNS = (
    constants.COL_GROUP_ID,
    constants.COL_DOMAIN,
    constants.COL_ANCHOR,
    constants.COL_PARAPHRASE,
    constants.COL_QUERY_MODE,
    constants.COL_Q1,
    constants.COL_Q2,
)
WIDE_COLUMNS = (*REQUIRED_COLUMNS[:4], *MODES, *REQUIRED_COLUMNS[4:])
PASSAGE_COLUMNS = (constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_ROLE, constants.COL_MODE, constants.COL_TEXT)
QUERY_COLUMNS = (constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_QUERY_MODE, constants.COL_WHICH, constants.COL_TEXT)


class RetrievalSuiteError(ValueError):
    """A retrieval suite file, or a pairs table read as one, cannot be used; the message says why."""


@dataclass(frozen=True)
class RetrievalSuite:
    """A retrieval suite as two tidy tables.

    Attributes:
        name: the suite's name (``retrieval``) or the file's stem.
        passages: one row per passage: group_id, domain, role, mode, text.
        queries: one row per NevIR query: group_id, domain, query_mode, which, text
            (empty for a pairs file).
        notes: what reading a user's file changed or ignored.
    """

    name: str
    passages: pd.DataFrame
    queries: pd.DataFrame
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def group_ids(self) -> list[str]:
        return list(dict.fromkeys(self.passages[constants.COL_GROUP_ID]))

    def sample(self, n_groups: int) -> RetrievalSuite:
        """A deterministic sample of ``n_groups`` groups spread evenly over the suite (the whole suite when it has no more).

        The shipped suite is ordered by failure mode and domain, so its first
        groups would all be one mode: evenly spaced groups cover every mode
        and domain, and the same ``n_groups`` always gives the same groups.
        """
        if n_groups < 1:
            raise ValueError(f"n_groups must be at least 1, got {n_groups}")
        ids = self.group_ids
        if n_groups >= len(ids):
            return self
        step = len(ids) / n_groups
        return self._keep({ids[int(i * step)] for i in range(n_groups)})

    def head(self, n_groups: int) -> RetrievalSuite:
        """The same suite cut to its first ``n_groups`` groups (for quick runs and tests)."""
        if n_groups < 1:
            raise ValueError(f"n_groups must be at least 1, got {n_groups}")
        return self._keep(set(self.group_ids[:n_groups]))

    def _keep(self, keep: set[str]) -> RetrievalSuite:
        return RetrievalSuite(
            self.name,
            self.passages[self.passages[constants.COL_GROUP_ID].isin(keep)].reset_index(drop=True),
            self.queries[self.queries[constants.COL_GROUP_ID].isin(keep)].reset_index(drop=True),
            self.notes,
        )


def tidy_suite(wide: pd.DataFrame, name: str = constants.SUITE_RETRIEVAL) -> RetrievalSuite:
    """Long passage and query tables from the wide file (see the module docstring).

    Args:
        wide: one row per group with the columns of :data:`REQUIRED_COLUMNS` and any of the per-mode
            columns (:data:`WIDE_COLUMNS`); a missing mode column is a mode with no variant.
        name: the suite's name.

    Returns:
        A :class:`RetrievalSuite`; an empty mode cell gives no variant, an
        empty ``query_mode`` no queries.

    Raises:
        ValueError: a required column is missing or the table has no row.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in wide.columns]
    if missing:
        raise ValueError(f"the retrieval table lacks columns {missing}")
    if wide.empty:
        raise ValueError("the retrieval table has no anchor group")
    wide = with_mode_columns(wide)
    passages, queries = [], []
    for row in wide.to_dict("records"):
        gid, domain = row[constants.COL_GROUP_ID], row[constants.COL_DOMAIN]
        passages.append((gid, domain, constants.ROLE_ANCHOR, "", row[constants.COL_ANCHOR]))
        passages.append((gid, domain, constants.ROLE_PARAPHRASE, "", row[constants.COL_PARAPHRASE]))
        passages += [(gid, domain, constants.ROLE_VARIANT, mode, row[mode]) for mode in MODES if row[mode]]
        if row[constants.COL_QUERY_MODE]:
            queries += [(gid, domain, row[constants.COL_QUERY_MODE], which, row[which]) for which in constants.QUERY_WHICH]
    return RetrievalSuite(name, pd.DataFrame(passages, columns=list(PASSAGE_COLUMNS)), pd.DataFrame(queries, columns=list(QUERY_COLUMNS)))


def with_mode_columns(wide: pd.DataFrame) -> pd.DataFrame:
    """The wide table with an empty column for each failure mode it lacks (a missing mode has no variants)."""
    absent = [m for m in MODES if m not in wide.columns]
    return wide.assign(**dict.fromkeys(absent, "")) if absent else wide


def suite_counts(suite: RetrievalSuite) -> pd.DataFrame:
    """Variants per mode and domain, plus groups and NevIR groups per domain (for data/README.md).

    Returns:
        One row per domain (and a ``total`` row): groups, each mode's
        variant count, and ``queries`` (groups with q1/q2).
    """
    p, q = suite.passages, suite.queries
    groups = p[p[constants.COL_ROLE] == constants.ROLE_ANCHOR].groupby(constants.COL_DOMAIN, sort=False).size().rename("groups")
    variants = p[p[constants.COL_ROLE] == constants.ROLE_VARIANT]
    by_mode = pd.crosstab(variants[constants.COL_DOMAIN], variants[constants.COL_MODE]).reindex(columns=list(MODES), fill_value=0)
    nevir = q[q[constants.COL_WHICH] == constants.COL_Q1].groupby(constants.COL_DOMAIN).size().rename("queries")
    table = pd.concat([groups, by_mode, nevir], axis=1).fillna(0).astype(int)
    order = [d for d in constants.DOMAINS if d in table.index] + [d for d in table.index if d not in constants.DOMAINS]
    table = table.loc[order]
    table.loc["total"] = table.sum()
    return table.rename_axis(constants.COL_DOMAIN).reset_index()
