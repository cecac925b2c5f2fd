"""The one number parser: which tokens are numbers, what they are worth, which ones may be scaled.

The validator asks whether only numbers differ (:func:`is_number_token`), the
guard whether two texts state different values (:func:`number_values`), and
the generator which numbers it may multiply (:func:`scalable_number`,
:func:`is_label_or_date`): one reading of "3", "three", "three-year",
"$3.2m" and "type 2" for all three.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.lexicon.wordsets import LABEL_NOUNS, MONTHS

_CARDINALS = (  # noqa: SIM905
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_TENS = "thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905
# Number words as values, so "three" and "3" are one number.  "one" is left out: it is as often "a"
# ("one full charge" / "a single charge") as a count; "twice", "half" have no one value.
WORD_VALUES: dict[str, float] = (
    {w: float(i) for i, w in enumerate(_CARDINALS) if w != "_"}
    | {w: float(30 + 10 * i) for i, w in enumerate(_TENS)}
    | {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "dozen": 12.0}
)
# Words that count as numbers when only numbers may differ: every valued word, plus the ones with no
# single value ("one" is also a pronoun, "twice" a ratio), because natural sentences write them out.
NUMBER_WORDS = frozenset(WORD_VALUES) | frozenset("one half once twice double triple single".split())  # noqa: SIM905
# The generator's scaling of a spelled-out count: "three" -> "thirty" ("one" is skipped: often a pronoun).
TENFOLD_WORDS = {w: t for w in _CARDINALS[2:10] for t in _TENS + ["twenty"] if WORD_VALUES[t] == 10 * WORD_VALUES[w]}

_VALUE_RE = re.compile(r"\d+(?:[.,]\d+)*")
# "-18" (degrees) is minus eighteen, where "3-1" (a score) and "30-day" carry their numbers between hyphens.
_NEGATIVE_RE = re.compile(r"^-\d+(?:[.,]\d+)*$")
# A number the generator may scale: "5", "1,200", "2.5", "40%" (units are separate tokens).
SCALABLE_RE = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)$")
YEAR_RANGE = (1800, 2100)
_DATE_GLUE = frozenset({":", "/", "-", "."})


def is_number_token(token: str) -> bool:
    """True for a (lowercase) token carrying a number: digits with or without a unit, or a number word.

    "three-year" and "30-day" carry their number in the first part.

    Args:
        token: One word of :func:`core.words.rule_words`.

    Returns:
        Whether the token states a number.
    """
    if any(ch.isdigit() for ch in token) or token in NUMBER_WORDS:
        return True
    return "-" in token and any(part in NUMBER_WORDS for part in token.split("-"))


def number_values(words: Iterable[str]) -> set[float]:
    """The values a text states: digits ("1,200", "$3.2m", "30-day") and number words ("three", "three-year").

    Args:
        words: Lowercase words (:func:`core.words.rule_words`).

    Returns:
        The distinct values; empty when the text states none.
    """
    values: set[float] = set()
    for w in words:
        if _NEGATIVE_RE.match(w):
            values.add(-float(_VALUE_RE.findall(w)[0].replace(",", "")))
            continue
        for part in w.split("-"):
            if part in WORD_VALUES:
                values.add(WORD_VALUES[part])
            elif any(ch.isdigit() for ch in part):
                values.update(float(n.replace(",", "")) for n in _VALUE_RE.findall(part))
    return values


def is_year(token: str) -> bool:
    """A bare four-digit number in ``YEAR_RANGE``: shifting it is a temporal change, not a magnitude."""
    return len(token) == 4 and token.isdigit() and YEAR_RANGE[0] <= int(token) <= YEAR_RANGE[1]


def is_label_or_date(tokens: list[str], i: int) -> bool:
    """Whether the number at ``tokens[i]`` names or dates something instead of counting it.

    "type 2 diabetes", "Chapter 11", "phase 3" (a label noun before it),
    "March 5" / "5 March" (a month beside it), "10:30", "5/3/2024",
    "2024-05-01" (a date or time).  "30-day", "1-0" and "3-5 days" count.

    Args:
        tokens: Lossless surface tokens (:func:`core.words.surface_tokens`).
        i: Index of the number token.

    Returns:
        True when the number is a label, a date or a time, not a quantity.
    """
    # The nearest word on each side, found by walking out from i: a scan of the whole sentence per number
    # made scaling every number of a long text cost the square of its length.
    prev = next((j for j in range(i - 1, -1, -1) if tokens[j][:1].isalnum()), None)
    nxt = next((j for j in range(i + 1, len(tokens)) if tokens[j][:1].isalnum()), None)
    prev_word = tokens[prev].lower().rstrip(".") if prev is not None else ""
    next_word = tokens[nxt].lower().rstrip(".") if nxt is not None else ""
    if prev_word in LABEL_NOUNS or prev_word in MONTHS or next_word in MONTHS:
        return True
    return _in_date_or_time(tokens, i)


def _in_date_or_time(tokens: list[str], i: int) -> bool:
    """Whether the number at ``tokens[i]`` is part of a date or a time.

    Glued to other numbers by ``:`` or ``/`` ("10:30", "5/3/2024"), or by
    ``-`` in a chain holding a year or a zero-padded part ("2024-05-01").  A
    score or a range ("1-0", "3-5 days") is a count and stays scalable.
    """
    lo = hi = i
    while lo >= 2 and tokens[lo - 1] in _DATE_GLUE and tokens[lo - 2][:1].isdigit():
        lo -= 2
    while hi + 2 < len(tokens) and tokens[hi + 1] in _DATE_GLUE and tokens[hi + 2][:1].isdigit():
        hi += 2
    if lo == hi:
        return False
    glue = set(tokens[lo + 1 : hi : 2])
    parts = tokens[lo : hi + 1 : 2]
    return bool(glue & {":", "/"}) or any(is_year(p) or (len(p) == 2 and p.startswith("0")) for p in parts)
