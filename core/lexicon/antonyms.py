"""Antonyms from WordNet 3.0, so a negated antonym ("not bad" / "good") reads as the same meaning, not a negation.

The pairs are WordNet's own: every direct antonym pointer (``!``) between two
one-word lemmas of any part of speech, and for adjectives the indirect ones
(a satellite such as "damp" opposes the antonym of its head "wet": "dry").
They ship as ``data/lexicon/wordnet-antonyms.csv`` (how it was made, the
source and its licence: ``data/lexicon/README.md``); no list is written here.

A word made of a negative prefix and the other word ("unlabelled" /
"labelled") counts too.  Words are compared through their lemmas (:mod:`core.lexicon.morphology`), so
"closed" / "opened" and "dead" / "alive" are found in any inflection.
"""

from __future__ import annotations

import csv
from functools import cache

from core.lexicon.morphology import lemmas
from core.paths import DATA_DIR

ANTONYMS_FILE = DATA_DIR / "lexicon" / "wordnet-antonyms.csv"
# English's negative prefixes on adjectives ("unsafe", "invalid", "illegal", "impossible", "irregular", "nontoxic",
# "dishonest"): a word made of one and another word is that word's opposite.
NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "non", "non-", "dis")


@cache
def _pairs() -> frozenset[tuple[str, str]]:
    with ANTONYMS_FILE.open(encoding="utf-8", newline="") as fh:
        rows = [(r["word"], r["antonym"]) for r in csv.DictReader(fh)]
    return frozenset(rows) | frozenset((b, a) for a, b in rows)


@cache
def _forms(word: str) -> frozenset[str]:
    word = word.lower()
    return frozenset({word} | {lemma for found in lemmas(word).values() for lemma in found})


def are_antonyms(word_a: str, word_b: str) -> bool:
    """Whether WordNet lists the two words (or one of their lemmas each) as antonyms.

    Args:
        word_a: One word, any case.
        word_b: Another.

    Returns:
        True for "good" / "bad", "unafraid" / "afraid", "closed" / "open".

    Raises:
        ValueError: a word is not a string.
    """
    if not isinstance(word_a, str) or not isinstance(word_b, str):
        raise ValueError("both words must be strings")  # noqa: TRY004 - the project's input errors are ValueErrors
    pairs = _pairs()
    forms_a, forms_b = _forms(word_a), _forms(word_b)
    return any((x, y) in pairs for x in forms_a for y in forms_b) or _prefixed(forms_a, forms_b) or _prefixed(forms_b, forms_a)


def _prefixed(forms_a: frozenset[str], forms_b: frozenset[str]) -> bool:
    # WordNet lists the common ones ("unafraid"); the rest of English's negative prefixes are read off the word
    # ("unlabelled" / "labelled"), when what is left is the other word itself.
    return any(x.startswith(p) and len(x) > len(p) + 2 and x[len(p) :] in forms_b for x in forms_a for p in NEGATIVE_PREFIXES)
