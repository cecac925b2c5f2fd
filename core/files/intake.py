"""The one validation path for a pairs table: the CLI's ``validate`` and ``run`` and the app's upload all go through it.

A read pairs table (from :mod:`core.files.reader`) is checked once, here:

* **identical pairs**: both texts the same (ignoring case and punctuation, as
  the suite rules compare words). A model scores them near 1.0, so they
  raise a category's mean and its share above any threshold.
* **mirrored pairs**: ``(b, a)`` after an earlier ``(a, b)``. Cosine is
  symmetric, so the mirror adds the same score again: the pair counts twice
  in every mean, rate and interval.
* the **category rules** of :mod:`core.files.validators` (what a negation
  pair is, unique ids, expected counts).

Either kind can be kept (the default: the file is scored as written) or
dropped; notes say what was found and what was done, in the same words
wherever the table came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from core import constants
from core.files.validators import Violation, validate_pairs
from core.words import rule_words

# Notes name at most this many pair ids, then say how many more there are.
_MAX_IDS_NAMED = 8


@dataclass(frozen=True)
class CheckedPairs:
    """A pairs table after the one validation path.

    Attributes:
        pairs: the pairs to score, ``(n_pairs, n_columns)``, after any drop asked for.
        notes: what reading found and changed, then what this check found and did.
        identical: ids of the pairs whose two texts are the same, as read.
        mirrored: ``(id, id of the earlier pair it mirrors)`` for each mirror, as read.
        violations: the category rules the kept pairs break.
        dropped: ids of the pairs left out at the user's request.
    """

    pairs: pd.DataFrame
    notes: tuple[str, ...]
    identical: tuple[str, ...]
    mirrored: tuple[tuple[str, str], ...]
    violations: tuple[Violation, ...]
    dropped: tuple[str, ...]


def _key(text: str) -> str:
    # The words the suite rules compare (validators.check_distinct), so
    # "The drug works." and "the drug works" are the same text here too.
    return " ".join(rule_words(str(text)))


def find_identical(pairs: pd.DataFrame) -> list[str]:
    """Ids of pairs whose two texts are the same, ignoring case and punctuation.

    Args:
        pairs: columns ``pair_id``, ``text_a``, ``text_b``; ``n`` rows.

    Returns:
        Pair ids in table order.
    """
    _require_columns(pairs)
    same = [_key(a) == _key(b) for a, b in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)]
    return [str(p) for p, s in zip(pairs[constants.COL_PAIR_ID], same, strict=True) if s]


def find_mirrored(pairs: pd.DataFrame) -> list[tuple[str, str]]:
    """Pairs ``(b, a)`` that repeat an earlier pair ``(a, b)`` with the sides swapped.

    Texts compare ignoring case and punctuation; an identical pair is not
    its own mirror.

    Args:
        pairs: columns ``pair_id``, ``text_a``, ``text_b``; ``n`` rows.

    Returns:
        ``(id of the mirror, id of the earlier pair)`` in table order.
    """
    _require_columns(pairs)
    first: dict[tuple[str, str], str] = {}
    found: list[tuple[str, str]] = []
    for pid, a, b in zip(pairs[constants.COL_PAIR_ID], pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True):
        ka, kb = _key(a), _key(b)
        if ka == kb:
            continue
        if (kb, ka) in first:
            found.append((str(pid), first[(kb, ka)]))
        else:
            first.setdefault((ka, kb), str(pid))
    return found


def check_pairs(
    pairs: pd.DataFrame,
    notes: Sequence[str] = (),
    *,
    drop_identical: bool = False,
    drop_mirrored: bool = False,
    expected_counts: Mapping[str, int] | None = None,
) -> CheckedPairs:
    """Find identical and mirrored pairs, drop them if asked, and check the category rules.

    Args:
        pairs: a read pairs table (columns ``pair_id``, ``category``,
            ``text_a``, ``text_b``, ...), ``n`` rows.
        notes: what reading the file already found (decoding, mapping,
            empty rows, exact duplicates); they come first in the result.
        drop_identical: leave out pairs whose two texts are the same.
        drop_mirrored: leave out each mirror, keeping the earlier pair.
        expected_counts: category -> exact number of pairs, for a shipped suite.

    Returns:
        The :class:`CheckedPairs`.

    Raises:
        ValueError: a required column is missing, or dropping leaves no pair.
    """
    _require_columns(pairs)
    identical = find_identical(pairs)
    mirrored = find_mirrored(pairs)
    dropped = [*(identical if drop_identical else []), *(m for m, _ in mirrored if drop_mirrored)]
    kept = pairs[~pairs[constants.COL_PAIR_ID].astype(str).isin(dropped)].reset_index(drop=True)
    if kept.empty:
        raise ValueError(f"no pair is left after dropping {len(dropped)} identical or mirrored pair(s)")
    found = list(notes)
    if identical:
        done = "dropped" if drop_identical else "kept"
        found.append(f"{len(identical)} pair(s) have the same text on both sides ({_ids(identical)}): a model scores them near 1.0; {done}")
    if mirrored:
        done = "dropped the mirrors" if drop_mirrored else "kept"
        shown = _ids([f"{m} mirrors {first}" for m, first in mirrored])
        found.append(
            f"{len(mirrored)} pair(s) repeat an earlier pair with the sides swapped ({shown}): cosine is symmetric, so each counts "
            f"twice; {done}"
        )
    violations = validate_pairs(kept, expected_counts)
    return CheckedPairs(kept, tuple(found), tuple(identical), tuple(mirrored), tuple(violations), tuple(dropped))


def _ids(ids: Sequence[str]) -> str:
    more = len(ids) - _MAX_IDS_NAMED
    return ", ".join(ids[:_MAX_IDS_NAMED]) + (f" and {more} more" if more > 0 else "")


def _require_columns(pairs: pd.DataFrame) -> None:
    missing = {constants.COL_PAIR_ID, constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs table is missing columns {sorted(missing)}")
