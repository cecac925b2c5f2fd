"""The contradiction guard: the perturbation rules run in reverse.

``core.probes.perturb`` turns a sentence into its adversarial variants by
six families of rules.  :func:`contradiction_flags` reads two texts and says
which of those families could turn one into the other: every mode for which
:func:`core.lexicon.differs_by` holds (its module, :mod:`core.lexicon.modes`,
tables what each mode's change is).  The validator and the generator's
self-check use the same predicate, so what the generator writes the guard
flags (``tests/core/lexicon/test_properties.py``).

What the guard compares (``mitigations.ContradictionGuard``): for each
query, the passages scoring near the top (within ``GUARD_FLOOR_GAP`` of the
best or above ``GUARD_FLOOR_MIN``, at most ``GUARD_MAX_CANDIDATES``) are
compared with the query *and* with each other.  A candidate is demoted by
``GUARD_PENALTY`` when the query disagrees with it on a mode and another
candidate both differs from it on that mode and agrees with the query there
(``mitigations.guard_demotions``).  Why both comparisons: a query is usually
a question, which differs from its own answer in surface form ("Which
drug ...?" names none), so query-vs-passage flags alone are weak evidence;
two near-top passages that differ by exactly a perturbation rule, one of them
agreeing with the query, are what a contradiction next to the truth looks
like.  A lone candidate has no rival, and the query's flag alone decides.

The flag is a heuristic with false positives (a paraphrase that says "no
abnormalities" where the anchor says "normal" differs by a negation cue) and
false negatives (a swap hidden behind a change of voice).
:func:`guard_precision_recall` measures both on labelled pairs.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from core import constants, lexicon
from core.lexicon import modes_differing

COL_FLAGS = "guard_flags"


def contradiction_flags(text_a: str, text_b: str) -> set[str]:
    """The failure modes by which ``text_b`` could contradict ``text_a`` (:func:`core.lexicon.differs_by` for each mode).

    Symmetric: ``contradiction_flags(a, b) == contradiction_flags(b, a)``.

    Args:
        text_a: A query, an anchor or a passage.
        text_b: Another text.

    Returns:
        A subset of ``core.lexicon.FAILURE_MODES``; empty when no rule fires.

    Raises:
        ValueError: If either argument is not a string.
    """
    return modes_differing(text_a, text_b)


# ------------------------------------------------------------------ labelled pairs

KIND_FAILURE = "failure"
KIND_MUST_PASS = "must_pass"
KIND_OTHER = "other"
KIND_ALL = "all"


def _pair_kind(category: str) -> str:
    if category in lexicon.ADVERSARIAL_CATEGORIES:
        return KIND_FAILURE
    if category in constants.PARAPHRASE_CATEGORIES:
        return KIND_MUST_PASS
    return KIND_OTHER


def flag_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Each pair with the modes the guard flags on it.

    Args:
        pairs: One row per pair with ``text_a`` and ``text_b``; other columns are kept.

    Returns:
        ``pairs`` plus ``guard_flags``: the flagged modes, a sorted tuple (empty when none).

    Raises:
        ValueError: If a text column is missing.
    """
    missing = {constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs lack the columns {sorted(missing)}")
    out = pairs.copy()
    out[COL_FLAGS] = [
        tuple(sorted(contradiction_flags(str(a), str(b))))
        for a, b in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)
    ]
    return out


def _category_row(category: str, kind: str, flags: pd.Series, flagged_with: Counter) -> dict:
    n = len(flags)
    any_flag = int(sum(bool(f) for f in flags))
    row = {
        constants.COL_CATEGORY: category,
        constants.COL_KIND: kind,
        "n": n,
        "n_flagged": any_flag,
        "flag_rate": any_flag / n,
        "n_mode_flagged": float("nan"),
        "recall": float("nan"),
        "precision": float("nan"),
    }
    if kind == KIND_FAILURE:
        own = int(sum(category in f for f in flags))
        row.update(n_mode_flagged=own, recall=own / n, precision=own / flagged_with[category] if flagged_with[category] else float("nan"))
    return row


def guard_precision_recall(pairs: pd.DataFrame) -> pd.DataFrame:
    """Precision and recall of :func:`contradiction_flags` per category of labelled pairs.

    Failure-mode pairs (``category`` in ``FAILURE_MODES``) should be flagged,
    paraphrases and positive controls (``PARAPHRASE_CATEGORIES``) must not
    be; other categories (negative and near-miss controls: pairs a
    retriever never ranks side by side) are reported but count in neither.

    Per failure mode ``m``: ``recall`` = pairs of ``m`` flagged with ``m`` /
    pairs of ``m``; ``precision`` = pairs of ``m`` flagged with ``m`` / all
    failure and must-pass pairs flagged with ``m``.  ``flag_rate`` is the
    share flagged with any mode: for a failure mode the guard's recall as a
    demoter (any flag demotes), for a must-pass category its false-flag
    rate.  The last row, ``all``, pools failure and must-pass pairs:
    ``recall`` = failure pairs flagged with any mode / failure pairs,
    ``precision`` = failure pairs flagged / all flagged pairs.

    Args:
        pairs: One row per pair with ``category``, ``text_a``, ``text_b``.

    Returns:
        One row per category in input order, then ``all``: ``category``,
        ``kind`` (failure, must_pass, other, all), ``n``, ``n_flagged``,
        ``flag_rate``, ``n_mode_flagged``, ``recall``, ``precision`` (NaN
        where a figure does not apply).

    Raises:
        ValueError: If a column is missing or ``pairs`` is empty.
    """
    if constants.COL_CATEGORY not in pairs.columns:
        raise ValueError(f"pairs lack the column {constants.COL_CATEGORY!r}")
    if pairs.empty:
        raise ValueError("no pairs to measure the guard on")
    flagged = flag_pairs(pairs)
    categories = flagged[constants.COL_CATEGORY].astype(str)
    kinds = categories.map(_pair_kind)
    scored = flagged[kinds != KIND_OTHER]
    flagged_with = Counter(mode for f in scored[COL_FLAGS] for mode in f)
    rows = [
        _category_row(category, _pair_kind(category), flagged.loc[categories == category, COL_FLAGS], flagged_with)
        for category in pd.unique(categories)
    ]
    failure_flags = flagged.loc[kinds == KIND_FAILURE, COL_FLAGS]
    n_any = int(sum(bool(f) for f in scored[COL_FLAGS]))
    caught = int(sum(bool(f) for f in failure_flags))
    rows.append(
        {
            constants.COL_CATEGORY: KIND_ALL,
            constants.COL_KIND: KIND_ALL,
            "n": len(scored),
            "n_flagged": n_any,
            "flag_rate": n_any / len(scored) if len(scored) else float("nan"),
            "n_mode_flagged": float("nan"),
            "recall": caught / len(failure_flags) if len(failure_flags) else float("nan"),
            "precision": caught / n_any if n_any else float("nan"),
        }
    )
    return pd.DataFrame(rows)


def suite_pairs(passages: pd.DataFrame) -> pd.DataFrame:
    """The retrieval suite's labelled pairs: (anchor, paraphrase) and (anchor, variant) per group.

    Args:
        passages: The tidy passage table of ``core.probes.retrieval.suite``:
            ``group_id``, ``role`` (anchor, paraphrase, variant), ``mode``, ``text``.

    Returns:
        ``pair_id`` (``<group>-<paraphrase or mode>``), ``group_id``,
        ``category`` (``paraphrase`` or the variant's mode), ``text_a`` (the
        anchor), ``text_b``.

    Raises:
        ValueError: If a column is missing.
    """
    needed = {constants.COL_GROUP_ID, constants.COL_ROLE, constants.COL_MODE, constants.COL_TEXT}
    missing = needed - set(passages.columns)
    if missing:
        raise ValueError(f"passages lack the columns {sorted(missing)}")
    rows = []
    for gid, group in passages.groupby(constants.COL_GROUP_ID, sort=False):
        anchors = group.loc[group[constants.COL_ROLE] == constants.ROLE_ANCHOR, constants.COL_TEXT]
        if anchors.empty:
            continue
        anchor = str(anchors.iloc[0])
        for role, mode, text in zip(group[constants.COL_ROLE], group[constants.COL_MODE], group[constants.COL_TEXT], strict=True):
            if role == constants.ROLE_ANCHOR:
                continue
            category = constants.ROLE_PARAPHRASE if role == constants.ROLE_PARAPHRASE else str(mode)
            rows.append((f"{gid}-{category}", gid, category, anchor, str(text)))
    columns = [constants.COL_PAIR_ID, constants.COL_GROUP_ID, constants.COL_CATEGORY, constants.COL_TEXT_A, constants.COL_TEXT_B]
    return pd.DataFrame(rows, columns=columns)
