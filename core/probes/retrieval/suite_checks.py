"""The retrieval suite's rules: what a valid anchor group of the wide file looks like.

:func:`validate_retrieval_suite` checks the wide file with the variant rules
of ``core.files.validators`` (``VARIANT_RULES``): where a pair rule fits a
variant as it is (negation, entity swap) it is that rule; the numerical,
temporal, quantifier and hedging rules first pair off inflections of one word
("month"/"months", "acquired"/"acquire"), since a variant of a longer passage
must keep its grammar ("1 month" -> "10 months", "acquired" -> "will
acquire") where the pair suites' one-line rules allow no other change.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from core import constants
from core.files.validators import VARIANT_RULES, Violation, check_distinct
from core.probes.retrieval.suite import MODES, REQUIRED_COLUMNS, with_mode_columns


def _group_violations(row: dict[str, str]) -> list[Violation]:
    gid = row[constants.COL_GROUP_ID] or "(no id)"
    out = []
    if row[constants.COL_DOMAIN] not in constants.DOMAINS:
        out.append(Violation(gid, "domain", f"unknown domain {row[constants.COL_DOMAIN]!r}; use one of {constants.DOMAINS}"))
    anchor, paraphrase = row[constants.COL_ANCHOR], row[constants.COL_PARAPHRASE]
    for col, text in ((constants.COL_ANCHOR, anchor), (constants.COL_PARAPHRASE, paraphrase)):
        if not text:
            out.append(Violation(gid, col, f"the {col} is empty"))
    if not anchor:
        return out
    if paraphrase and check_distinct(anchor, paraphrase):
        out.append(Violation(gid, "paraphrase", "the paraphrase repeats the anchor"))
    modes = [m for m in MODES if row[m]]
    if len(modes) < constants.RETRIEVAL_MIN_MODES:
        out.append(
            Violation(
                gid, "modes", f"{len(modes)} mode(s) ({', '.join(modes) or 'none'}); a group needs at least {constants.RETRIEVAL_MIN_MODES}"
            )
        )
    for mode in modes:
        problem = check_distinct(anchor, row[mode]) or VARIANT_RULES[mode](anchor, row[mode])
        if problem is None and paraphrase and check_distinct(paraphrase, row[mode]) is not None:
            problem = "the variant repeats the paraphrase"
        if problem:
            out.append(Violation(gid, mode, problem))
    qmode, q1, q2 = row[constants.COL_QUERY_MODE], row[constants.COL_Q1], row[constants.COL_Q2]
    if qmode:
        if qmode not in MODES:
            out.append(Violation(gid, "query_mode", f"unknown mode {qmode!r}; use one of {MODES}"))
        elif not row[qmode]:
            out.append(Violation(gid, "query_mode", f"query_mode {qmode!r} names an empty variant"))
        if not q1 or not q2:
            out.append(Violation(gid, "queries", "a group with a query_mode needs both q1 and q2"))
        elif check_distinct(q1, q2) is not None:
            out.append(Violation(gid, "queries", "q1 and q2 are the same"))
    elif q1 or q2:
        out.append(Violation(gid, "queries", "q1/q2 given without a query_mode"))
    return out


def _repeats(wide: pd.DataFrame, columns: Iterable[str], what: str) -> list[Violation]:
    seen: dict[str, tuple[int, str]] = {}
    out = []
    for i, row in enumerate(wide.to_dict("records")):
        for col in columns:
            text = row[col]
            if not text:
                continue
            # By row, not by id: two rows sharing an id still share no text.
            if text in seen and seen[text][0] != i:
                out.append(Violation(row[constants.COL_GROUP_ID], f"unique-{what}", f"{col} repeats a {what} of {seen[text][1]}"))
            seen.setdefault(text, (i, row[constants.COL_GROUP_ID]))
    return out


def validate_retrieval_suite(wide: pd.DataFrame) -> list[Violation]:
    """Check the wide retrieval table; every violation names the group and the rule.

    Rules: the columns of :data:`REQUIRED_COLUMNS` (a per-mode column may be missing); unique, non-empty group ids;
    known domains; non-empty anchor and paraphrase, the paraphrase not the
    anchor; at least ``RETRIEVAL_MIN_MODES`` variants; each variant obeys
    its mode's rule (:data:`VARIANT_RULES`); a ``query_mode`` names a mode
    with a variant and comes with two different queries; no passage and no
    query text occurs in two groups (a query has exactly one right passage).

    Args:
        wide: the table :func:`read_retrieval_file` returns.

    Returns:
        The violations; an empty list means the suite is valid.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in wide.columns]
    if missing:
        return [Violation("*", "columns", f"missing columns: {missing}")]
    wide = with_mode_columns(wide).fillna("").astype(str)
    out: list[Violation] = []
    ids = wide[constants.COL_GROUP_ID]
    out += [Violation(str(g), "unique-id", "group_id appears more than once") for g in ids[ids.duplicated() & (ids != "")].unique()]
    for row in wide.to_dict("records"):
        if not row[constants.COL_GROUP_ID]:
            out.append(Violation("(no id)", "group_id", f"a row has no group_id (anchor {row[constants.COL_ANCHOR][:40]!r})"))
        out += _group_violations({str(k): v for k, v in row.items()})
    out += _repeats(wide, (constants.COL_ANCHOR, constants.COL_PARAPHRASE, *MODES), "passage")
    out += _repeats(wide, (constants.COL_Q1, constants.COL_Q2), "query")
    return out


def perturb_matches(wide: pd.DataFrame) -> pd.DataFrame:
    """How many variants per mode equal one of ``core.probes.perturb.perturb(anchor)``'s variants of that mode.

    Returns:
        Columns mode, variants, from_perturb (counts), in failure-mode order.
    """
    from core.probes.perturb import perturb

    wide = with_mode_columns(wide)
    made = {mode: 0 for mode in MODES}
    total = {mode: 0 for mode in MODES}
    for row in wide.to_dict("records"):
        report = perturb(row[constants.COL_ANCHOR])
        for mode in (m for m in MODES if row[m]):
            total[mode] += 1
            made[mode] += any(v.mode == mode and v.text == row[mode] for v in report.variants)
    return pd.DataFrame({"mode": list(MODES), "variants": [total[m] for m in MODES], "from_perturb": [made[m] for m in MODES]})
