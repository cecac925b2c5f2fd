"""Rules every suite pair must obey, usable on shipped and uploaded suites.

Each rule looks at the word-level difference between the two sentences of a
pair. Words are lowercase tokens from :func:`core.words.rule_words`; the difference is the
multiset symmetric difference (words in A not matched in B, and vice versa),
so reordering alone produces no difference.

A violation names the pair and the rule, so a suite author can fix it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from core import constants
from core.words import rule_words

# The lexicons below share a shape (a frozenset of a split string) because they are word lists, not logic.
# Tokens that contain a digit count as numbers, units attached ("5mg", "$3.2m",
# "40%", "1,200", "10:30").  Number words are accepted too because natural
# sentences write small numbers out.
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "  # noqa: SIM905 - a word list reads best as words
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty "
    "sixty seventy eighty ninety hundred thousand million billion trillion dozen "
    "half once twice double triple single".split()
)

NEGATION_CUES = frozenset(
    "not n't no never cannot can't won't don't doesn't didn't isn't aren't wasn't "  # noqa: SIM905 - a word list reads best as words
    "weren't hasn't haven't hadn't shouldn't wouldn't couldn't mustn't needn't "
    "without none nobody nothing nowhere neither nor no-one non lacks lacking absent "
    "fails failed refuses refused denies denied unable".split()
)
# Words a negation legitimately drags along ("has" -> "does not have").
_NEGATION_SUPPORT = frozenset(
    "do does did is are was were has have had can could will would should must may "  # noqa: SIM905 - a word list reads best as words
    "might shall be been being a an any some".split()
)

TEMPORAL_WORDS = frozenset(
    "before after prior following earlier later previously subsequently then first "  # noqa: SIM905 - a word list reads best as words
    "last next previous yesterday today tomorrow tonight morning evening night noon "
    "midnight daily weekly monthly yearly annually past future ago since until till "
    "during while when once soon already still yet recently now formerly afterwards "
    "afterward beforehand early late preceding succeeding upcoming former latter "
    "start end beginning ending began ended begins ends pre post precede precedes "
    "preceded follow follows followed week month year day hour minute weekend "
    "monday tuesday wednesday thursday friday saturday sunday will was were is are "
    "had has have been did does do going went go".split()
)
QUANTIFIERS = frozenset(
    "all some none no few many most several every each any both neither either "  # noqa: SIM905 - a word list reads best as words
    "nobody everyone everybody someone somebody anyone nothing everything something "
    "anything always never sometimes rarely often seldom usually occasionally "
    "majority minority half fraction handful lot lots plenty numerous countless "
    "only single one a an little much more less fewer least nearly almost hardly "
    "barely entire whole partial".split()
)
# Agreement changes a quantifier forces ("All patients were" -> "No patient was").
_QUANTIFIER_SUPPORT = frozenset(
    "is are was were has have does do of the them their its it they he she his her "  # noqa: SIM905 - a word list reads best as words
    "patient patients customer customers user users employee employees".split()
)

_MAX_EXTRA_WORDS = 3


@dataclass(frozen=True)
class Violation:
    """One broken rule on one pair."""

    pair_id: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.pair_id}: [{self.rule}] {self.message}"


def word_difference(text_a: str, text_b: str) -> tuple[Counter, Counter]:
    """Multiset difference of words: (only in A, only in B)."""
    ca, cb = Counter(rule_words(text_a)), Counter(rule_words(text_b))
    return ca - cb, cb - ca


def is_number_token(token: str) -> bool:
    """True for tokens carrying a number, with or without an attached unit."""
    return any(ch.isdigit() for ch in token) or token in _NUMBER_WORDS


def _count(tokens: Iterable[str], lexicon: frozenset[str]) -> int:
    return sum(1 for t in tokens if t in lexicon)


def check_entity_swap(text_a: str, text_b: str) -> str | None:
    """Both sentences use the same multiset of words, in a different order."""
    if Counter(rule_words(text_a)) != Counter(rule_words(text_b)):
        only_a, only_b = word_difference(text_a, text_b)
        return f"word multisets differ: A has {sorted(only_a.elements())}, B has {sorted(only_b.elements())}"
    if rule_words(text_a) == rule_words(text_b):
        return "sentences are identical: nothing was swapped"
    return None


def check_numerical(text_a: str, text_b: str) -> str | None:
    """The sentences differ only in number tokens (units attached allowed)."""
    only_a, only_b = word_difference(text_a, text_b)
    if not only_a and not only_b:
        return "no word differs"
    bad = [t for t in (*only_a.elements(), *only_b.elements()) if not is_number_token(t)]
    if bad:
        return f"non-number words differ: {sorted(set(bad))}"
    return None


def check_negation(text_a: str, text_b: str) -> str | None:
    """Exactly one side carries (more) negation cues; little else changes."""
    wa, wb = rule_words(text_a), rule_words(text_b)
    if _count(wa, NEGATION_CUES) == _count(wb, NEGATION_CUES):
        return "both sentences carry the same number of negation cues"
    only_a, only_b = word_difference(text_a, text_b)
    extra = [
        t
        for t in (*only_a.elements(), *only_b.elements())
        if t not in NEGATION_CUES and t not in _NEGATION_SUPPORT
    ]
    if len(extra) > 2 * _MAX_EXTRA_WORDS:
        return f"too many words change besides the negation: {sorted(set(extra))}"
    return None


def _check_lexical(text_a: str, text_b: str, lexicon: frozenset[str], support: frozenset[str], name: str) -> str | None:
    only_a, only_b = word_difference(text_a, text_b)
    diff = [*only_a.elements(), *only_b.elements()]
    if not diff:
        return "no word differs"
    if not any(t in lexicon for t in diff):
        return f"no {name} word among the differing words {sorted(set(diff))}"
    extra = [t for t in diff if t not in lexicon and t not in support]
    if len(extra) > _MAX_EXTRA_WORDS:
        return f"too many non-{name} words differ: {sorted(set(extra))}"
    return None


def check_temporal(text_a: str, text_b: str) -> str | None:
    """The sentences differ by a temporal word (before/after, yesterday/tomorrow, ...)."""
    return _check_lexical(text_a, text_b, TEMPORAL_WORDS, frozenset(), "temporal")


def check_quantifier(text_a: str, text_b: str) -> str | None:
    """The sentences differ by a quantifier (all, some, none, few, many, ...)."""
    return _check_lexical(text_a, text_b, QUANTIFIERS, _QUANTIFIER_SUPPORT, "quantifier")


def check_distinct(text_a: str, text_b: str) -> str | None:
    """The two sentences of a pair are not the same text."""
    if " ".join(rule_words(text_a)) == " ".join(rule_words(text_b)):
        return "the two sentences are the same"
    return None


CATEGORY_RULES = {
    constants.CAT_ENTITY_SWAP: check_entity_swap,
    constants.CAT_NUMERICAL: check_numerical,
    constants.CAT_NEGATION: check_negation,
    constants.CAT_TEMPORAL: check_temporal,
    constants.CAT_QUANTIFIER: check_quantifier,
}


def validate_pairs(pairs: pd.DataFrame, expected_counts: Mapping[str, int] | None = None) -> list[Violation]:
    """Check a suite table against the category rules.

    Args:
        pairs: one row per pair with columns ``pair_id``, ``category``,
            ``text_a``, ``text_b`` (``domain`` checked when present).
        expected_counts: category -> exact number of pairs, or None.

    Returns:
        Every violation found; an empty list means the suite is valid.
    """
    missing = {constants.COL_PAIR_ID, constants.COL_CATEGORY, constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        return [Violation("*", "columns", f"missing columns: {sorted(missing)}")]
    out: list[Violation] = []
    dup_ids = pairs[constants.COL_PAIR_ID][pairs[constants.COL_PAIR_ID].duplicated()]
    out += [Violation(str(p), "unique-id", "pair_id appears more than once") for p in dup_ids.unique()]
    seen: dict[tuple[str, str], str] = {}
    for row in pairs.itertuples(index=False):
        pid, cat = str(getattr(row, constants.COL_PAIR_ID)), str(getattr(row, constants.COL_CATEGORY))
        a, b = str(getattr(row, constants.COL_TEXT_A)), str(getattr(row, constants.COL_TEXT_B))
        first, second = sorted((" ".join(rule_words(a)), " ".join(rule_words(b))))
        key = (first, second)
        if key in seen:
            out.append(Violation(pid, "no-duplicates", f"same pair as {seen[key]}"))
        else:
            seen[key] = pid
        problem = check_distinct(a, b)
        if problem is None and cat in CATEGORY_RULES:
            problem = CATEGORY_RULES[cat](a, b)
        if problem:
            out.append(Violation(pid, cat, problem))
        if constants.COL_DOMAIN in pairs.columns and str(getattr(row, constants.COL_DOMAIN)) not in constants.DOMAINS:
            out.append(Violation(pid, "domain", f"unknown domain {getattr(row, constants.COL_DOMAIN)!r}; use one of {constants.DOMAINS}"))
    if expected_counts is not None:
        counts = {str(k): int(v) for k, v in pairs[constants.COL_CATEGORY].value_counts().items()}
        for cat in sorted(set(expected_counts) | set(counts)):
            want, got = expected_counts.get(cat, 0), counts.get(cat, 0)
            if want != got:
                out.append(Violation("*", "counts", f"category {cat!r} has {got} pairs, expected {want}"))
    return out


def validate_oov(items: pd.DataFrame, vocab_contains, split) -> list[Violation]:
    """Check OOV items: the entity is in both sentences, its replacement is not
    a single vocabulary entry, and the replacement splits as published.

    Args:
        items: columns ``pair_id``, ``entity``, ``replacement``, ``text_a``,
            ``text_b`` and optionally ``replacement_tokens`` (space-separated
            expected split).
        vocab_contains: callable word -> bool, True when the word is a single
            vocabulary entry of the reference tokenizer.
        split: callable word -> list of subword tokens.
    """
    out: list[Violation] = []
    for row in items.itertuples(index=False):
        pid, ent, rep = str(row.pair_id), str(row.entity), str(row.replacement)
        for side in ("text_a", "text_b"):
            if not re.search(rf"\b{re.escape(ent)}\b", str(getattr(row, side))):
                out.append(Violation(pid, "oov-entity", f"entity {ent!r} does not occur in {side}"))
        if vocab_contains(rep):
            out.append(Violation(pid, "oov-vocab", f"replacement {rep!r} is a single vocabulary entry"))
        expected = getattr(row, "replacement_tokens", None)
        if isinstance(expected, str) and expected.strip():
            got = split(rep)
            if got != expected.split():
                out.append(Violation(pid, "oov-split", f"{rep!r} splits as {got}, expected {expected.split()}"))
    return out
