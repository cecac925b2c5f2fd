"""What each failure mode *is*: :func:`differs_by`, the one predicate the validator, the generator and the guard share.

``differs_by(mode, a, b)`` says whether one change of that mode stands
between the two texts: the perturbation rules of :mod:`core.probes.perturb`
run in reverse, read from the word sets of :mod:`core.lexicon.wordsets`.
The generator keeps only variants its own mode recognises, the guard flags
a pair with every mode that recognises it, and the validator requires it
(or, for pairs written by hand, a word of the mode among the differing
words) before checking that little else changed.

Words are :func:`core.words.rule_words`, and most rules look at the multiset
difference of the two word lists (:func:`word_difference`), so words both
texts share never count.

===========  ==============================================================
mode         differs when
===========  ==============================================================
negation     the two texts carry a different number of negation cues
             ("no less than" is a bound, not a cue; "did not refuse" has two)
numerical    both texts state numbers (digits, "three", "three-year",
             "hundred", ...), and their sets of values differ
entity_swap  the same words in a different order, or the content words the
             texts share appear in the order ``P X M Y S`` in one and
             ``P Y M X S`` in the other (two roles exchanged around a kept
             middle holding a verb), while the voice stays the same (a
             ``by`` agent on one side only is a passive paraphrase)
temporal     opposite time words ("before" / "after"), a future marker
             (will, shall, 'll) on one side only, or one verb in past tense
             on one side and in present tense on the other ("reduces" /
             "reduced", "is" / "was")
quantifier   a quantifier the perturbation rules swap or add (all, every,
             some, none, few, many, most, no) is on one side only where the
             other has "the" or nothing ("Some customers" / "Customers"), or
             both sides have a differing quantifier
hedging      the texts carry a different number of hedges (hedge words and
             phrases, evidential adverbs, "is said to"); a modal that opens
             a question ("Could you ...?") is a request and a "may" of
             permission ("No contractor may begin") a rule, not hedges
===========  ==============================================================
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from core import constants
from core.lexicon.morphology import is_unambiguous_verb, verb_tags, word_forms
from core.lexicon.numbers import NUMBER_WORDS, WORD_VALUES, is_number_token, number_values
from core.lexicon.verbs import finite_tenses, possible_tenses
from core.lexicon.wordsets import (
    AUXILIARIES,
    COMPARATIVES,
    DETERMINERS,
    DIRECTION_DOWN,
    DIRECTION_SWAPS,
    DIRECTION_UP,
    DIRECTION_WORDS,
    EVIDENTIAL_ADVERBS,
    FUTURE_MARKERS,
    HEDGE_CUES,
    HEDGE_PHRASES,
    HEDGE_VERBS,
    HEDGE_WORDS,
    MODALS,
    NEGATING_VERB_BASES,
    NEGATION_CUES,
    NEGATION_PARTICLES,
    NEGATION_SUPPORT,
    NOT_VERBS,
    PERMISSION_FOLLOWERS,
    PERMISSION_SUBJECTS,
    PHRASE_BREAKS,
    PRONOUN_SUBJECTS,
    PROPORTION_ADVERBS,
    QUANTIFIER_CLASS,
    QUANTIFIER_CUES,
    QUANTIFIER_SUPPORT,
    QUANTIFIERS,
    RELATIVE_AGE,
    RULE_QUANTIFIERS,
    TEMPORAL_SWAPS,
    TEMPORAL_WORDS,
    TIME_CLASS,
    TIME_CUES,
    TIME_PREPOSITIONS,
)
from core.words import rule_words

# Words that carry no role: a swap of two of them is no swap of who-did-what.
_FUNCTION_WORDS = frozenset(
    DETERMINERS | PHRASE_BREAKS | AUXILIARIES | PRONOUN_SUBJECTS | NOT_VERBS | NEGATION_CUES | QUANTIFIERS | TEMPORAL_WORDS
)
_HEDGE_PHRASE_WORDS = frozenset(w for phrase in HEDGE_PHRASES for w in phrase.split())
_HEARSAY_WORDS = frozenset("is are was were be been said believed thought understood expected suspected reported alleged to".split())  # noqa: SIM905
_ARTICLES = frozenset({"a", "an", "the"})
_HEARSAY_RE = re.compile(r"\b(?:is|are|was|were|be|been)\s+(?:said|believed|thought|understood|expected|suspected|reported|alleged)\s+to\b")


def word_difference(text_a: str, text_b: str) -> tuple[Counter, Counter]:
    """Multiset difference of the rule words: (only in A, only in B); reordering alone gives none."""
    ca, cb = Counter(rule_words(text_a)), Counter(rule_words(text_b))
    return ca - cb, cb - ca


@dataclass
class _Pair:
    """Two texts as the rules read them: their words and what differs."""

    text_a: str
    text_b: str
    words_a: list[str] = field(init=False)
    words_b: list[str] = field(init=False)
    only_a: Counter = field(init=False)
    only_b: Counter = field(init=False)

    def __post_init__(self) -> None:
        self.words_a, self.words_b = rule_words(self.text_a), rule_words(self.text_b)
        ca, cb = Counter(self.words_a), Counter(self.words_b)
        self.only_a, self.only_b = ca - cb, cb - ca


def _count(words: Iterable[str], lexicon: frozenset[str]) -> int:
    return sum(1 for w in words if w in lexicon)


# ------------------------------------------------------------------ negation


def negation_count(words: list[str]) -> int:
    """Negation cues of a text: cue words, plus the base form of a negating verb ("did not refuse"), minus "no less than"."""
    bounds = sum(1 for w, nxt in zip(words, words[1:], strict=False) if w == "no" and nxt in COMPARATIVES)
    return _count(words, NEGATION_CUES) + _count(words, NEGATING_VERB_BASES) - bounds


def _negation(p: _Pair) -> bool:
    return negation_count(p.words_a) != negation_count(p.words_b)


# ------------------------------------------------------------------ numerical


def _numerical(p: _Pair) -> bool:
    # A question without a number ("How much ...?") does not contradict the passage that gives one.
    values_a, values_b = number_values(p.words_a), number_values(p.words_b)
    return bool(values_a) and bool(values_b) and values_a != values_b


# ------------------------------------------------------------------ entity swap


def _content_once(words: list[str]) -> list[str]:
    counts = Counter(words)
    return [w for w in words if counts[w] == 1 and w not in _FUNCTION_WORDS and not is_number_token(w) and w not in WORD_VALUES]


def _is_block_swap(order_a: list[str], order_b: list[str]) -> bool:
    """Whether ``order_b`` is ``order_a`` with two blocks exchanged around a kept middle that holds a verb.

    ``P X M Y S`` -> ``P Y M X S``.  An empty middle would be a rotation
    ("In June, Paris hosted ..." / "Paris hosted ... in June"), and a middle
    without a verb a moved phrase ("Over 68 weeks, ... the trial"): how
    paraphrases reorder, not how roles swap.
    """
    if order_a == order_b:
        return False
    start = next(i for i, (x, y) in enumerate(zip(order_a, order_b, strict=True)) if x != y)
    end = len(order_a) - next(i for i, (x, y) in enumerate(zip(order_a[::-1], order_b[::-1], strict=True)) if x != y)
    span_a, span_b = order_a[start:end], order_b[start:end]
    n = len(span_a)
    for len_x in range(1, n - 1):
        for len_y in range(1, n - len_x):
            x, middle, y = span_a[:len_x], span_a[len_x : n - len_y], span_a[n - len_y :]
            if middle and span_b == y + middle + x and any(is_unambiguous_verb(w) for w in middle):
                return True
    return False


def _entity_swap(p: _Pair) -> bool:
    words_a, words_b = p.words_a, p.words_b
    if Counter(words_a) == Counter(words_b):
        return words_a != words_b
    if words_a.count("by") != words_b.count("by"):
        return False  # "X acquired Y" / "Y was acquired by X": a change of voice reverses the order without a swap
    once_a, once_b = _content_once(words_a), _content_once(words_b)
    shared = set(once_a) & set(once_b)
    order_a = [w for w in once_a if w in shared]
    order_b = [w for w in once_b if w in shared]
    return len(order_a) >= 3 and _is_block_swap(order_a, order_b)


# ------------------------------------------------------------------ temporal


def tense_changed(p: _Pair) -> bool:
    """One verb is past on one side and present on the other ("reduces" / "reduced", "is" / "was").

    Compared as multisets, so "is charged ... is paid" / "was charged ... is
    paid" is a change although "is" stays on both sides.
    """
    tenses_a, tenses_b = Counter(finite_tenses(p.words_a)), Counter(finite_tenses(p.words_b))
    gone, new = tenses_a - tenses_b, tenses_b - tenses_a
    changed = {lemma for lemma, _ in gone} & {lemma for lemma, _ in new}
    # Only verbs whose form differs count: "had" on both sides is the same tense whatever follows.
    differing = {found[0] for w in (*p.only_a, *p.only_b) if (found := verb_tags(w)) is not None}
    return bool(changed & differing) or _swapped_forms(p)


def _swapped_forms(p: _Pair) -> bool:
    """One differing word is a present form where the other text has a simple past of the same verb, or the reverse.

    For forms the multiset rule cannot place because they are ambiguous:
    "run" / "ran", "shuts" / "shut", "report" / "reported".  The two must
    follow the same word ("patients report" / "patients reported"), as a
    rewritten verb does; a paraphrase that turns a verb into a noun ("Brooks
    repaired" / "the valve repair") moves it.
    """
    for w in p.only_a:
        found = verb_tags(w)
        if found is None:
            continue
        i = p.words_a.index(w)
        here = possible_tenses(p.words_a, i)
        for v in p.only_b:
            other = verb_tags(v)
            j = p.words_b.index(v)
            if other is None or other[0] != found[0] or p.words_a[i - 1 : i] != p.words_b[j - 1 : j]:
                continue
            there = possible_tenses(p.words_b, j)
            if (len(here) == 1 and (there - here)) or (len(there) == 1 and (here - there)):
                return True
    return False


def _future_count(words: list[str]) -> int:
    return sum(1 for w in words if w in FUTURE_MARKERS or w.endswith("'ll"))


def _classes(words: Counter, cues: frozenset[str], classes: dict[str, str]) -> Counter:
    return Counter({classes.get(w, w): n for w, n in words.items() if w in cues})


def _temporal(p: _Pair) -> bool:
    only_a, only_b = p.only_a, p.only_b
    if any(TEMPORAL_SWAPS.get(w) in only_b for w in only_a):
        return True
    time_a, time_b = _classes(only_a, TIME_CUES, TIME_CLASS), _classes(only_b, TIME_CUES, TIME_CLASS)
    time_a, time_b = time_a - time_b, time_b - time_a
    if time_a and time_b:
        return True  # "during" / "after", "morning" / "evening", "since" / "until"
    # "within 30 days" / "after 30 days": a direction word replaces a time preposition.
    directional = {"before", "after"}
    if (directional & set(time_a) and TIME_PREPOSITIONS & set(only_b)) or (directional & set(time_b) and TIME_PREPOSITIONS & set(only_a)):
        return True
    if _future_count(p.words_a) != _future_count(p.words_b):
        return True
    return tense_changed(p)


# ------------------------------------------------------------------ quantifier


def _added_quantifier(words_a: list[str], words_b: list[str]) -> bool:
    """add_quantifier in reverse: a rule quantifier in A stands where B has "the" or nothing.

    "All patients" / "The patients", "Some customers can" / "Customers can",
    "on some purchases" / "on purchases".  Where B has nothing, a "no" is
    left to the negation rule ("has no fever" / "has fever").
    """
    after_the = {nxt for w, nxt in zip(words_b, words_b[1:], strict=False) if w == "the"}
    bigrams_b = set(zip(["", *words_b], words_b, strict=False))
    for i, w in enumerate(words_a[:-1]):
        if QUANTIFIER_CLASS.get(w, w) not in RULE_QUANTIFIERS:
            continue
        nxt, prev = words_a[i + 1], words_a[i - 1] if i else ""
        if nxt in after_the or (QUANTIFIER_CLASS.get(w, w) != "no" and (prev, nxt) in bigrams_b):
            return True
    return False


def _quantifier(p: _Pair) -> bool:
    quant_a, quant_b = _classes(p.only_a, QUANTIFIER_CUES, QUANTIFIER_CLASS), _classes(p.only_b, QUANTIFIER_CUES, QUANTIFIER_CLASS)
    quant_a, quant_b = quant_a - quant_b, quant_b - quant_a
    if quant_a and quant_b:
        return True  # "all" / "some", "most" / "few"
    return (bool(quant_a) and _added_quantifier(p.words_a, p.words_b)) or (bool(quant_b) and _added_quantifier(p.words_b, p.words_a))


# ------------------------------------------------------------------ hedging


def is_permission_may(words: list[str], i: int) -> bool:
    """Whether the "may" at ``words[i]`` grants or denies permission instead of hedging.

    "No contractor may begin", "Any employee may apply", "You may leave",
    "Passengers may now board", "Staff may only use": a subject quantified
    by no/any/only or in the second person, or "only"/"now" after it.  The
    generator leaves such a "may" alone (removing it changes a rule, not a
    claim's certainty); the guard still counts every "may", because a
    "may" of permission against a bare statement is a change of force too.
    """
    if words[i] != "may":
        return False
    if words[i + 1 : i + 2] and words[i + 1] in PERMISSION_FOLLOWERS:
        return True
    subject = words[max(0, i - 3) : i]
    return any(w in PERMISSION_SUBJECTS for w in subject)


def opens_question(text: str, words: list[str]) -> bool:
    """Whether a modal opens a question ("Could you tell me ...?"): a request, not a hedge."""
    return bool(words) and words[0] in MODALS and text.rstrip().endswith("?")


def hedge_count(text: str, words: list[str] | None = None) -> int:
    """Hedges of a text: hedge words and phrases, evidential adverbs, "is said to", hedge verbs ("suggests").

    A modal that opens a question ("Could you tell me ...?") asks; it does not hedge.
    """
    words = rule_words(text) if words is None else words
    joined = " ".join(words)
    phrases = sum(joined.count(p) for p in HEDGE_PHRASES) + len(_HEARSAY_RE.findall(joined))
    hedges = [w for w in words if w in HEDGE_WORDS or w in EVIDENTIAL_ADVERBS]
    if opens_question(text, words):
        hedges = hedges[1:]
    verbs = [w for w in words if (found := verb_tags(w)) is not None and found[0] in HEDGE_VERBS]
    # A hedge phrase's own verb ("it appears that") is counted once, as the phrase.
    return phrases + len(hedges) + max(0, len(verbs) - phrases)


def _hedging(p: _Pair) -> bool:
    return hedge_count(p.text_a, p.words_a) != hedge_count(p.text_b, p.words_b)


# ------------------------------------------------------------------ direction (beyond the papers)


def _direction_words(words: list[str]) -> Counter:
    # "10 percent or more" is a bound, not a direction: the rule ignores "or more" / "or less".
    return Counter(w for i, w in enumerate(words) if w in DIRECTION_WORDS and not (w in COMPARATIVES and words[i - 1 : i] == ["or"]))


def _direction(p: _Pair) -> bool:
    # Words of one direction only on one side, of the other only on the other: "increases" / "decreases".
    # A side with both ("falls" / "decreases at higher altitudes") is a paraphrase the rule cannot read, not a swap.
    dir_a, dir_b = _direction_words(p.words_a), _direction_words(p.words_b)
    only_a, only_b = dir_a - dir_b, dir_b - dir_a
    up_a, down_a = _count(only_a, DIRECTION_UP), _count(only_a, DIRECTION_DOWN)
    up_b, down_b = _count(only_b, DIRECTION_UP), _count(only_b, DIRECTION_DOWN)
    return bool((up_a and not down_a and down_b and not up_b) or (down_a and not up_a and up_b and not down_b))


# ------------------------------------------------------------------ the records

# How a suite pair of a mode is checked (core.files.validators): the same words reordered, only numbers,
# a different count of the mode's cues, a cue among the differing words, or only that the texts differ.
PAIR_SAME_WORDS = "same_words"
PAIR_NUMBERS = "numbers"
PAIR_CUE_COUNT = "cue_count"
PAIR_CUE_WORDS = "cue_words"
PAIR_DISTINCT = "distinct"
PAIR_RULES = (PAIR_SAME_WORDS, PAIR_NUMBERS, PAIR_CUE_COUNT, PAIR_CUE_WORDS, PAIR_DISTINCT)


@dataclass(frozen=True)
class FailureMode:
    """One failure mode, whole: every table, list, label and order of the code derives from these records.

    Attributes:
        name: The category written in suites, results and retrieval columns ("negation").
        label: How pages, charts and reports name it.
        chart_rank: Where charts and the paper-comparison tables place it (the failure paper's Table 1
            order for its six; a mode beyond the papers after them).
        summary: What differs between the two texts, in one line (docs, help).
        rule: The predicate behind :func:`differs_by` (two texts as the rules read them).
        cues: Words that mark the mode: a hand-written pair or variant needs one among its differing words
            (unless the predicate recognises it).
        cue_noun: How a validator's message names a cue ("no hedge word among ...").
        support: Words a change of the mode may drag along without counting as other changes.
        max_extra: How many other words a suite pair may change.
        pair_rule: How a suite pair is checked (one of :data:`PAIR_RULES`).
        variant_rule: How a retrieval variant is checked (one of :data:`PAIR_RULES`).
        variant_cues: The cues of a retrieval variant, which may keep its grammar ("the older model").
        variant_max_extra: How many other words a retrieval variant may change.
        tense_counts: Whether a verb in another tense is itself the variant's change (temporal).
        swaps: The generator's word swaps for a mode :mod:`core.probes.perturb` has no own rules for
            (the first word found is swapped for its opposite); None for the papers' six, whose rules read syntax.
        no_variant_reason: Why the generator made no variant of a sentence.
        suite_count: Pairs of the mode in the failure-mode suite (``data/suites/failure-modes.csv``).
        baseline_count: Pairs of the mode in the OOV paper's baseline suite (0: not in it).
        in_papers: False for a mode beyond the papers: its figures are never compared with theirs.
        edit_words: Every word one edit of the mode may change (its cues and the words they drag along): a
            stretch of differing words holding any other word is more than this mode's edit (:func:`unexplained`).
        counts_numbers: Whether numbers, and the unit after each, are the mode's edit (numerical).
    """

    name: str
    label: str
    chart_rank: int
    summary: str
    rule: Callable[[_Pair], bool] = field(repr=False)
    cues: frozenset[str] = field(repr=False)
    cue_noun: str
    pair_rule: str
    variant_rule: str
    no_variant_reason: str
    suite_count: int
    support: frozenset[str] = field(default=frozenset(), repr=False)
    max_extra: int = 3
    variant_cues: frozenset[str] | None = field(default=None, repr=False)
    variant_max_extra: int = 3
    tense_counts: bool = False
    swaps: Mapping[str, str] | None = field(default=None, repr=False)
    baseline_count: int = 0
    in_papers: bool = True
    edit_words: frozenset[str] = field(default=frozenset(), repr=False)
    counts_numbers: bool = False

    @property
    def order(self) -> int:
        """The mode's place in every list, table and chart (0 first)."""
        return FAILURE_MODES.index(self.name)

    @property
    def cues_of_variants(self) -> frozenset[str]:
        """The cues of a retrieval variant (the pair cues unless the record names others)."""
        return self.cues if self.variant_cues is None else self.variant_cues


# In the order every list, table and chart shows them: the papers' six, then ours.
MODE_RECORDS: tuple[FailureMode, ...] = (
    FailureMode(
        name=constants.CAT_NEGATION,
        chart_rank=2,
        label="Negation",
        summary="the two texts carry a different number of negation cues",
        rule=_negation,
        cues=NEGATION_CUES,
        cue_noun="negation",
        support=NEGATION_SUPPORT,
        max_extra=6,
        pair_rule=PAIR_CUE_COUNT,
        variant_rule=PAIR_CUE_COUNT,
        no_variant_reason="no verb group to negate and no negation to remove",
        suite_count=55,
        baseline_count=15,
        edit_words=NEGATION_CUES | NEGATING_VERB_BASES | NEGATION_SUPPORT | NEGATION_PARTICLES | frozenset({"n't", "to"}),
    ),
    FailureMode(
        name=constants.CAT_NUMERICAL,
        chart_rank=3,
        label="Numerical",
        summary="both texts state numbers and their values differ",
        rule=_numerical,
        cues=frozenset(WORD_VALUES),
        cue_noun="number",
        pair_rule=PAIR_NUMBERS,
        variant_rule=PAIR_NUMBERS,
        no_variant_reason="no number to scale (four-digit years are left to temporal)",
        suite_count=56,
        baseline_count=15,
        edit_words=NUMBER_WORDS | frozenset({"and", "point", "percent", "per", "cent"}),
        counts_numbers=True,
    ),
    FailureMode(
        name=constants.CAT_ENTITY_SWAP,
        chart_rank=0,
        label="Entity/role swap",
        summary="the same words in another order, or two roles exchanged around a verb",
        rule=_entity_swap,
        cues=frozenset(),
        cue_noun="swapped",
        pair_rule=PAIR_SAME_WORDS,
        variant_rule=PAIR_SAME_WORDS,
        no_variant_reason="no two names and no subject-verb-object to swap",
        suite_count=45,
        baseline_count=10,
    ),
    FailureMode(
        name=constants.CAT_TEMPORAL,
        chart_rank=1,
        label="Temporal",
        summary="opposite time words, a future marker on one side, or a verb's tense",
        rule=_temporal,
        cues=TEMPORAL_WORDS,
        cue_noun="temporal",
        pair_rule=PAIR_CUE_WORDS,
        variant_rule=PAIR_CUE_WORDS,
        variant_cues=TEMPORAL_WORDS | RELATIVE_AGE,
        tense_counts=True,
        no_variant_reason="no time word (before, after, yesterday, ...) and no simple present, past or future verb",
        suite_count=35,
        baseline_count=10,
        edit_words=TEMPORAL_WORDS | RELATIVE_AGE | FUTURE_MARKERS | AUXILIARIES | frozenset({"'ll", "be", "been", "being", "going", "to"}),
    ),
    FailureMode(
        name=constants.CAT_QUANTIFIER,
        chart_rank=4,
        label="Quantifier",
        summary="a quantifier differs, or is added where the other text has 'the' or nothing",
        rule=_quantifier,
        cues=QUANTIFIERS,
        cue_noun="quantifier",
        support=QUANTIFIER_SUPPORT,
        pair_rule=PAIR_CUE_WORDS,
        variant_rule=PAIR_CUE_WORDS,
        variant_cues=QUANTIFIERS | PROPORTION_ADVERBS,
        no_variant_reason="no quantifier (all, some, none, few, many, ...) and no 'The' + plural subject",
        suite_count=35,
        baseline_count=10,
        edit_words=QUANTIFIERS | PROPORTION_ADVERBS | QUANTIFIER_SUPPORT | frozenset({"of"}),
    ),
    FailureMode(
        name=constants.CAT_HEDGING,
        chart_rank=5,
        label="Hedging",
        summary="the texts carry a different number of hedges",
        rule=_hedging,
        cues=HEDGE_CUES,
        cue_noun="hedge",
        pair_rule=PAIR_DISTINCT,
        variant_rule=PAIR_CUE_WORDS,
        variant_max_extra=6,
        no_variant_reason="nothing to hedge",
        suite_count=25,
        baseline_count=5,
        edit_words=HEDGE_CUES | EVIDENTIAL_ADVERBS | HEDGE_VERBS | _HEDGE_PHRASE_WORDS | _HEARSAY_WORDS,
    ),
    FailureMode(
        name="direction",
        chart_rank=6,
        label="Direction (beyond the papers)",
        summary="a change goes the other way: increases / decreases, higher / lower, rise / fall, gain / lose",
        rule=_direction,
        cues=DIRECTION_WORDS,
        cue_noun="direction",
        pair_rule=PAIR_CUE_WORDS,
        variant_rule=PAIR_CUE_WORDS,
        swaps=DIRECTION_SWAPS,
        no_variant_reason="no direction word (increase, decrease, higher, lower, rise, fall, improve, worsen, more, less, gain, lose)",
        suite_count=45,
        in_papers=False,
        edit_words=DIRECTION_WORDS,
    ),
)
_BY_NAME = {r.name: r for r in MODE_RECORDS}
# Every failure mode's name, in order; the papers' own six (what paper figures are compared with); ours.
FAILURE_MODES: tuple[str, ...] = tuple(_BY_NAME)
PAPER_MODES: tuple[str, ...] = tuple(r.name for r in MODE_RECORDS if r.in_papers)
EXTENSION_MODES: tuple[str, ...] = tuple(r.name for r in MODE_RECORDS if not r.in_papers)
MODES = FAILURE_MODES
# Every category a meaning-changing pair can carry: the named failure modes, then the unnamed contradiction.
# Validators, summaries, gate budgets and pages accept these wherever they accept a failure mode.
ADVERSARIAL_CATEGORIES: tuple[str, ...] = (*FAILURE_MODES, constants.CAT_CONTRADICTION)
CATEGORY_LABELS: dict[str, str] = {**{r.name: r.label for r in MODE_RECORDS}, **constants.OTHER_CATEGORY_LABELS}
# Exact per-category pair counts of the shipped suites: the modes' counts from their records, the rest from constants.
SUITE_COUNTS: dict[str, dict[str, int]] = {
    constants.SUITE_OOV: dict(constants.OTHER_SUITE_COUNTS[constants.SUITE_OOV]),
    constants.SUITE_BASELINE: {
        **{r.name: r.baseline_count for r in MODE_RECORDS if r.baseline_count},
        **constants.OTHER_SUITE_COUNTS[constants.SUITE_BASELINE],
    },
    constants.SUITE_FAILURE_MODES: {
        **{r.name: r.suite_count for r in MODE_RECORDS if r.suite_count},
        **constants.OTHER_SUITE_COUNTS[constants.SUITE_FAILURE_MODES],
    },
}


def mode_record(name: str) -> FailureMode:
    """The record of failure mode ``name``.

    Raises:
        ValueError: If ``name`` is no failure mode.
    """
    if name not in _BY_NAME:
        raise ValueError(f"unknown failure mode {name!r}; use one of {FAILURE_MODES}")
    return _BY_NAME[name]


def modes_in_words(modes: Iterable[str] | None = None, *, codes: bool = False) -> str:
    """The modes in prose for pages and help texts: "negation, numerical, ... and direction (beyond the papers)".

    Args:
        modes: Mode names (every failure mode when None), listed in their records' order.
        codes: Their codes ("entity_swap") instead of their lower-cased labels.

    Raises:
        ValueError: If a name is no failure mode.
    """
    wanted = FAILURE_MODES if modes is None else tuple(modes)
    records = sorted((mode_record(m) for m in wanted), key=lambda r: r.order)
    words = [r.name if codes else r.label[0].lower() + r.label[1:] for r in records]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _require_texts(text_a: object, text_b: object) -> None:
    for name, text in (("text_a", text_a), ("text_b", text_b)):
        if not isinstance(text, str):
            raise ValueError(f"{name} must be a string, got {type(text).__name__}")  # noqa: TRY004 - the project's input errors are ValueErrors


def differs_by(mode: str, text_a: str, text_b: str) -> bool:
    """Whether one change of failure mode ``mode`` stands between the two texts (see the module table).

    Symmetric in the two texts.

    Args:
        mode: A failure mode (:data:`FAILURE_MODES`).
        text_a: One text.
        text_b: Another.

    Returns:
        True when the mode's change is there.

    Raises:
        ValueError: If ``mode`` is unknown or a text is not a string.
    """
    record = mode_record(mode)
    _require_texts(text_a, text_b)
    return record.rule(_Pair(text_a, text_b))


def modes_differing(text_a: str, text_b: str) -> set[str]:
    """Every mode :func:`differs_by` finds between two texts (the words are read once).

    Raises:
        ValueError: If a text is not a string.
    """
    _require_texts(text_a, text_b)
    pair = _Pair(text_a, text_b)
    return {r.name for r in MODE_RECORDS if r.rule(pair)}


def _pair_off_inflections(rest_a: list[str], rest_b: list[str]) -> tuple[list[str], list[str]]:
    """The words left once each word of A is paired with a word of B that inflects the same word ("has" / "have")."""
    pool = [(w, word_forms(w)) for w in rest_b]
    left_a = []
    for word in rest_a:
        mine = word_forms(word)
        match = next((k for k, (_, other) in enumerate(pool) if mine & other), None)
        if match is None:
            left_a.append(word)
        else:
            pool.pop(match)
    return left_a, [w for w, _ in pool]


def _without_numbers(words: list[str]) -> list[str]:
    """The words with every number and the unit after it dropped ("500 mg" -> nothing, "3 weeks" -> nothing)."""
    out, unit_due = [], False
    for w in words:
        if is_number_token(w):
            unit_due = True
            continue
        if unit_due and w not in _ARTICLES:
            unit_due = False
            continue
        out.append(w)
    return out


def unexplained(mode: str, removed: list[str], added: list[str]) -> tuple[list[str], list[str]]:
    """The differing words one edit of ``mode`` does not explain, on each side.

    A stretch of differing words is one edit of the mode when every word in
    it is one of the mode's :attr:`FailureMode.edit_words` (for numerical: a
    number and the unit after it) in any of its forms, an article, or another inflection of a
    differing word on the other side ("has" / "have"): "took aspirin" /
    "did not take ibuprofen" leaves "aspirin" / "ibuprofen" unexplained.

    Args:
        mode: A failure mode.
        removed: The stretch's words in the first text (:func:`core.words.rule_words`), in order.
        added: Its words in the second text.

    Returns:
        (words of ``removed`` left, words of ``added`` left); both empty when the edit is the mode's alone.

    Raises:
        ValueError: an unknown mode.
    """
    record = mode_record(mode)
    sides = []
    for words in (removed, added):
        kept = _without_numbers(words) if record.counts_numbers else list(words)
        # Any form of an edit word is one ("having" / "lacking" is have -> lack).
        sides.append([w for w in kept if w not in _ARTICLES and not (word_forms(w) & record.edit_words)])
    return _pair_off_inflections(sides[0], sides[1])
