"""The shipped test suites and any suite a user names by file.

Suites are CSV files under ``data/suites/`` (schemas in ``data/README.md``).
:func:`load_suite` returns one row per pair to encode, in the tidy layout the
runner expects; the OOV suite becomes three rows per item, one per variant
(original, entity replaced in both sentences, entity replaced in the second
sentence only), sharing the item's ``pair_id``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core import constants
from core.files.reader import PairsFileError, read_pairs_file
from core.paths import SUITES_DIR
from core.words import rule_words

SUITE_FILES = {
    constants.SUITE_OOV: SUITES_DIR / "oov.csv",
    constants.SUITE_BASELINE: SUITES_DIR / "baseline.csv",
    constants.SUITE_FAILURE_MODES: SUITES_DIR / "failure-modes.csv",
}


# Suites whose summary needs another suite's rows: the OOV paper divides each
# OOV delta by the model's dynamic range, which the baseline suite measures.
COMPANION_SUITES: dict[str, tuple[str, ...]] = {constants.SUITE_OOV: (constants.SUITE_BASELINE,)}


class SuiteError(ValueError):
    """A suite name or file cannot be used."""


def read_suite_file(name: str) -> pd.DataFrame:
    """The raw rows of a shipped suite file, one per pair or OOV item."""
    try:
        path = SUITE_FILES[name]
    except KeyError as exc:
        raise SuiteError(f"unknown suite {name!r}; choose one of {', '.join(constants.SUITES)} or {constants.SUITE_ALL}") from exc
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame[constants.COL_SUITE] = name
    if name == constants.SUITE_OOV:
        frame[constants.COL_CATEGORY] = constants.CAT_OOV
    return frame


def replace_entity(text: str, entity: str, replacement: str) -> str:
    """Replace whole-word occurrences of ``entity`` (case-sensitive)."""
    return re.sub(rf"\b{re.escape(entity)}\b", replacement, text)


def expand_oov(items: pd.DataFrame) -> pd.DataFrame:
    """One row per OOV item and variant.

    ``original`` keeps both sentences; ``replaced_both`` puts the invented
    word in both; ``replaced_b`` only in the second sentence.
    """
    rows = []
    for item in items.to_dict("records"):
        ent, rep = item[constants.COL_ENTITY], item[constants.COL_REPLACEMENT]
        a, b = item[constants.COL_TEXT_A], item[constants.COL_TEXT_B]
        variants = {
            constants.VARIANT_ORIGINAL: (a, b),
            constants.VARIANT_REPLACED_BOTH: (replace_entity(a, ent, rep), replace_entity(b, ent, rep)),
            constants.VARIANT_REPLACED_B: (a, replace_entity(b, ent, rep)),
        }
        for variant, (ta, tb) in variants.items():
            rows.append({**item, constants.COL_VARIANT: variant, constants.COL_TEXT_A: ta, constants.COL_TEXT_B: tb})
    return pd.DataFrame(rows)


def load_suite(name_or_path: str) -> pd.DataFrame:
    """Pairs to encode for a suite name, ``all``, or a pairs file path (see :func:`load_suite_with_notes`)."""
    return load_suite_with_notes(name_or_path)[0]


def load_suite_with_notes(name_or_path: str, **file_options) -> tuple[pd.DataFrame, list[str]]:
    """Pairs to encode for a suite name, ``all``, or a pairs file path, and what reading a file changed.

    ``file_options`` (``columns``, ``header``, ``flags``) go to
    :func:`core.files.reader.read_pairs_file` for a file.

    Returns:
        The pairs, with columns ``suite``, ``category``, ``pair_id``,
        ``text_a``, ``text_b`` plus whatever the suite carries (``domain``,
        ``source``, ``entity``, ``replacement``, ``variant``, ``label``); and
        the file's notes (decoding, dropped or duplicate rows), empty for a
        shipped suite.

    Raises:
        SuiteError: unknown name, or a file that cannot be read.
    """
    if name_or_path == constants.SUITE_ALL:
        return pd.concat([load_suite(s) for s in constants.SUITES], ignore_index=True), []
    if name_or_path in SUITE_FILES:
        frame = read_suite_file(name_or_path)
        return (expand_oov(frame) if name_or_path == constants.SUITE_OOV else frame), []
    path = Path(name_or_path).expanduser()
    # lexists: a symlink loop or a dangling link is there, and the reader says what is wrong with it.
    if not os.path.lexists(path):
        raise SuiteError(f"no suite named {name_or_path!r} and no such file; suites: {', '.join(constants.SUITES)}, {constants.SUITE_ALL}")
    try:
        return read_pairs_file(path, **file_options)
    except PairsFileError as exc:
        raise SuiteError(f"{path}: {exc}") from exc


def suite_report(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-category variety figures of a suite (as documented in data/README.md).

    Returns:
        Columns category, pairs, distinct_words, mean_len, min_len, max_len,
        where lengths are in words per sentence.
    """
    rows = []
    for cat, group in frame.groupby(constants.COL_CATEGORY, sort=False):
        sentences = list(group[constants.COL_TEXT_A]) + list(group[constants.COL_TEXT_B])
        lengths = [len(rule_words(s)) for s in sentences]
        vocab = {w for s in sentences for w in rule_words(s)}
        rows.append(
            {
                "category": cat,
                "pairs": len(group),
                "distinct_words": len(vocab),
                "mean_len": round(sum(lengths) / len(lengths), 1),
                "min_len": min(lengths),
                "max_len": max(lengths),
            }
        )
    return pd.DataFrame(rows)


def check_negative_controls(negatives: Sequence[str]) -> tuple[str, ...]:
    """``negatives`` as a tuple, or ``ValueError`` unless it is a non-empty subset of negative and near-miss controls."""
    negatives = tuple(negatives)
    allowed = {constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS}
    if not negatives or not set(negatives) <= allowed:
        raise ValueError(f"negatives must be a non-empty subset of {sorted(allowed)}, got {list(negatives)}")
    return negatives


def control_pairs(negatives: Sequence[str] = (constants.CAT_NEGATIVE,)) -> pd.DataFrame:
    """The failure-mode suite's positive controls and the chosen negative controls, ready for ``run_pairs``.

    Args:
        negatives: Which control categories count as negatives: ``negative``,
            ``near_miss`` or both.

    Returns:
        The suite's rows of those categories, in file order.
    """
    negatives = check_negative_controls(negatives)
    suite = load_suite(constants.SUITE_FAILURE_MODES)
    return suite[suite[constants.COL_CATEGORY].isin((constants.CAT_POSITIVE, *negatives))].reset_index(drop=True)
