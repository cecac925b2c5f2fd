"""Rules every suite pair must obey, usable on shipped and uploaded suites.

What each failure mode *is* lives in :mod:`core.lexicon`; a rule here asks
:func:`core.lexicon.differs_by` (or, for pairs written by hand, whether a
word of the mode is among the differing words) and then checks that little
else changed.  Words are lowercase tokens from :func:`core.words.rule_words`;
the difference is the multiset symmetric difference (words in A not matched
in B, and vice versa), so reordering alone produces no difference.

The rules sit in one table per kind of file, one entry per failure mode,
both made from the modes' records (:data:`core.lexicon.MODE_RECORDS`: each
names its kind of rule, its cues and how many other words may change):
:data:`CATEGORY_RULES` (pair suites: one sentence, one change) and
:data:`VARIANT_RULES` (retrieval variants of a longer passage, which may
keep their grammar: "1 month" -> "10 months").  A new mode is a new record,
not an entry here.

A violation names the pair and the rule, so a suite author can fix it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from core import constants
from core.lexicon import MODE_RECORDS, FailureMode, differs_by, mode_record, word_difference
from core.lexicon.modes import PAIR_CUE_COUNT, PAIR_CUE_WORDS, PAIR_DISTINCT, PAIR_NUMBERS, PAIR_SAME_WORDS
from core.lexicon.morphology import can_be_verb, word_forms
from core.lexicon.numbers import is_number_token, number_values
from core.lexicon.wordsets import (
    NEGATION_CUES,
    QUANTIFIERS,
    TEMPORAL_WORDS,
)
from core.words import rule_words

# The word sets and number test live in core.lexicon; these names stay importable from here.
__all__ = [
    "CATEGORY_RULES",
    "NEGATION_CUES",
    "QUANTIFIERS",
    "TEMPORAL_WORDS",
    "VARIANT_RULES",
    "Violation",
    "check_distinct",
    "check_entity_swap",
    "check_hedging_variant",
    "check_negation",
    "check_numerical",
    "check_numerical_variant",
    "check_quantifier",
    "check_quantifier_variant",
    "check_temporal",
    "check_temporal_variant",
    "is_number_token",
    "validate_oov",
    "validate_pairs",
    "word_difference",
]


@dataclass(frozen=True)
class Violation:
    """One broken rule on one pair."""

    pair_id: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.pair_id}: [{self.rule}] {self.message}"


def _count(tokens: list[str], lexicon: frozenset[str]) -> int:
    return sum(1 for t in tokens if t in lexicon)


def check_entity_swap(text_a: str, text_b: str) -> str | None:
    """Both sentences use the same multiset of words, in a different order."""
    if Counter(rule_words(text_a)) != Counter(rule_words(text_b)):
        only_a, only_b = word_difference(text_a, text_b)
        return f"word multisets differ: A has {sorted(only_a.elements())}, B has {sorted(only_b.elements())}"
    if not differs_by(constants.CAT_ENTITY_SWAP, text_a, text_b):
        return "sentences are identical: nothing was swapped"
    return None


def check_numerical(text_a: str, text_b: str) -> str | None:
    """The sentences differ only in number tokens (units attached allowed), and in value, not only in form."""
    only_a, only_b = word_difference(text_a, text_b)
    if not only_a and not only_b:
        return "no word differs"
    bad = [t for t in (*only_a.elements(), *only_b.elements()) if not is_number_token(t)]
    if bad:
        return f"non-number words differ: {sorted(set(bad))}"
    values_a, values_b = number_values(only_a), number_values(only_b)
    if values_a and values_a == values_b:
        return f"the numbers differ in form only, not in value: {sorted(only_a)} / {sorted(only_b)}"
    return None


def _check_cue_count(record: FailureMode, text_a: str, text_b: str) -> str | None:
    if not differs_by(record.name, text_a, text_b):
        return f"both sentences carry the same number of {record.cue_noun} cues"
    only_a, only_b = word_difference(text_a, text_b)
    extra = [t for t in (*only_a.elements(), *only_b.elements()) if t not in record.cues and t not in record.support]
    if len(extra) > record.max_extra:
        return f"too many words change besides the {record.cue_noun}: {sorted(set(extra))}"
    return None


def _check_lexical(record: FailureMode, text_a: str, text_b: str) -> str | None:
    only_a, only_b = word_difference(text_a, text_b)
    diff = [*only_a.elements(), *only_b.elements()]
    if not diff:
        return "no word differs"
    if not any(t in record.cues for t in diff) and not differs_by(record.name, text_a, text_b):
        return f"no {record.cue_noun} word among the differing words {sorted(set(diff))}"
    extra = [t for t in diff if t not in record.cues and t not in record.support]
    if len(extra) > record.max_extra:
        return f"too many non-{record.cue_noun} words differ: {sorted(set(extra))}"
    return None


def check_negation(text_a: str, text_b: str) -> str | None:
    """Exactly one side carries (more) negation cues; little else changes."""
    return _check_cue_count(mode_record(constants.CAT_NEGATION), text_a, text_b)


def check_temporal(text_a: str, text_b: str) -> str | None:
    """The sentences differ by a temporal word (before/after, yesterday/tomorrow, ...) or a verb's tense."""
    return _check_lexical(mode_record(constants.CAT_TEMPORAL), text_a, text_b)


def check_quantifier(text_a: str, text_b: str) -> str | None:
    """The sentences differ by a quantifier (all, some, none, few, many, ...)."""
    return _check_lexical(mode_record(constants.CAT_QUANTIFIER), text_a, text_b)


def check_distinct(text_a: str, text_b: str) -> str | None:
    """The two sentences of a pair are not the same text."""
    if " ".join(rule_words(text_a)) == " ".join(rule_words(text_b)):
        return "the two sentences are the same"
    return None


# How each kind of pair rule (a record's ``pair_rule``) checks a pair of that record's mode.
_PAIR_CHECKS: dict[str, Callable[[FailureMode, str, str], str | None]] = {
    PAIR_SAME_WORDS: lambda _record, a, b: check_entity_swap(a, b),
    PAIR_NUMBERS: lambda _record, a, b: check_numerical(a, b),
    PAIR_CUE_COUNT: _check_cue_count,
    PAIR_CUE_WORDS: _check_lexical,
}


def _rule_of(
    record: FailureMode, checks: Mapping[str, Callable[[FailureMode, str, str], str | None]], kind: str
) -> Callable[[str, str], str | None]:
    check = checks[kind]
    return lambda a, b: check(record, a, b)


# One entry per failure mode that checks more than distinct sentences, made from the mode's record
# (core.lexicon.MODE_RECORDS): a category without an entry is checked for distinct sentences only.
CATEGORY_RULES: dict[str, Callable[[str, str], str | None]] = {
    r.name: _rule_of(r, _PAIR_CHECKS, r.pair_rule) for r in MODE_RECORDS if r.pair_rule != PAIR_DISTINCT
}


# ------------------------------------------------------------------ retrieval variants


def _content_difference(anchor: str, variant: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Differing words once inflections of one word are paired off, and the pairs taken out.

    ``"acquired ... last March"`` vs ``"will acquire ... next March"`` leaves
    ``["last", "will", "next"]`` and the pair ``("acquired", "acquire")``.
    """
    only_a, only_v = word_difference(anchor, variant)
    left_a, left_v = list(only_a.elements()), list(only_v.elements())
    paired = []
    for a in list(left_a):
        match = next((v for v in left_v if word_forms(a) & word_forms(v)), None)
        if match is not None:
            left_a.remove(a)
            left_v.remove(match)
            paired.append((a, match))
    return left_a + left_v, paired


def check_numerical_variant(anchor: str, variant: str) -> str | None:
    """A number changes; other words change only in agreement with it ("1 month" -> "10 months")."""
    diff, _ = _content_difference(anchor, variant)
    if not diff:
        return "no number differs"
    bad = sorted({t for t in diff if not is_number_token(t)})
    return f"non-number words differ: {bad}" if bad else None


def _lexical_variant(record: FailureMode, anchor: str, variant: str) -> str | None:
    diff, paired = _content_difference(anchor, variant)
    cues = record.cues_of_variants
    # A verb in another tense ("reduces" -> "reduced") is itself the temporal change.
    tense = record.tense_counts and any(can_be_verb(a) and can_be_verb(b) for a, b in paired)
    if not any(t in cues for t in diff) and not tense and not differs_by(record.name, anchor, variant):
        return f"no {record.cue_noun} word among the differing words {sorted(set(diff) | {w for p in paired for w in p})}"
    extra = sorted({t for t in diff if t not in cues})
    if len([t for t in diff if t not in cues]) > record.variant_max_extra:
        return f"too many non-{record.cue_noun} words differ: {extra}"
    return None


def check_temporal_variant(anchor: str, variant: str) -> str | None:
    """A time word or a verb's tense changes, with at most three other words."""
    return _lexical_variant(mode_record(constants.CAT_TEMPORAL), anchor, variant)


def check_quantifier_variant(anchor: str, variant: str) -> str | None:
    """A quantifier changes (all/some/few/most/mostly ...), with at most three other words."""
    return _lexical_variant(mode_record(constants.CAT_QUANTIFIER), anchor, variant)


def check_hedging_variant(anchor: str, variant: str) -> str | None:
    """A hedge (may, apparently, is said to, suggested ...) is added or removed."""
    return _lexical_variant(mode_record(constants.CAT_HEDGING), anchor, variant)


# How each kind of variant rule (a record's ``variant_rule``) checks a retrieval variant.
_VARIANT_CHECKS: dict[str, Callable[[FailureMode, str, str], str | None]] = {
    PAIR_SAME_WORDS: lambda _record, a, v: check_entity_swap(a, v),
    PAIR_NUMBERS: lambda _record, a, v: check_numerical_variant(a, v),
    PAIR_CUE_COUNT: _check_cue_count,
    PAIR_CUE_WORDS: _lexical_variant,
}

# One entry per mode of the retrieval suite's variant columns, made from the mode's record.
VARIANT_RULES: dict[str, Callable[[str, str], str | None]] = {r.name: _rule_of(r, _VARIANT_CHECKS, r.variant_rule) for r in MODE_RECORDS}


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
