"""The contradiction guard: the perturbation rules run in reverse.

``core.probes.perturb`` turns a sentence into its adversarial variants by
six families of rules.  :func:`contradiction_flags` reads two texts and says
which of those families could turn one into the other, from the same
lexicons (``core.files.validators``: negation cues, number tokens, time
words, quantifiers; ``core.probes.perturb``: time-word and quantifier swaps,
hedge words and phrases, function words).  Words are
:func:`core.words.rule_words`, and most rules look at the multiset
difference of the two word lists (``validators.word_difference``), so words
both texts share never raise a flag.

===========  ==============================================================
mode         flagged when
===========  ==============================================================
negation     the two texts carry a different number of negation cues
numerical    both texts carry numbers (digits, or cardinal words "two".."ninety",
             "hundred", ...), and their sets of values differ
entity_swap  the same words in a different order (the suite rule), or the
             content words the texts share appear in the order
             ``P X M Y S`` in one and ``P Y M X S`` in the other (two
             roles exchanged around a kept middle, e.g. the verb), while the
             voice stays the same (a ``by`` agent on one side only is a
             passive paraphrase, not a swap)
temporal     opposite time words ("before" / "after": ``perturb.TEMPORAL_SWAPS``),
             a future marker (will, shall, 'll) on one side only, or one verb
             in past tense on one side and non-past on the other
             ("reduces" / "reduced", "is" / "was")
quantifier   a quantifier the perturbation rules swap or add (all, every,
             some, none, few, many, most, no) is on one side only, or both
             sides have a differing quantifier from ``validators.QUANTIFIERS``
hedging      the texts carry a different number of hedges (``perturb.HEDGE_WORDS``
             and ``HEDGE_PHRASES``); a modal that opens a question ("Could
             you ...?") is a request, not a hedge
===========  ==============================================================

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

import re
from collections import Counter
from collections.abc import Iterable
from functools import cache

import pandas as pd

from core import constants
from core.files.validators import NEGATION_CUES, QUANTIFIERS, TEMPORAL_WORDS, is_number_token, word_difference
from core.probes.perturb import (
    AUXILIARIES,
    BE_FORMS,
    DETERMINERS,
    DO_FORMS,
    HAVE_FORMS,
    HEDGE_PHRASES,
    HEDGE_WORDS,
    MODALS,
    NOT_VERBS,
    PHRASE_BREAKS,
    PRONOUN_SUBJECTS,
    QUANTIFIER_SWAPS,
    TEMPORAL_SWAPS,
)
from core.words import rule_words

COL_FLAGS = "guard_flags"

# Words that carry no role: a swap of two of them is no swap of who-did-what.
_FUNCTION_WORDS = frozenset(
    DETERMINERS | PHRASE_BREAKS | AUXILIARIES | PRONOUN_SUBJECTS | NOT_VERBS | NEGATION_CUES | QUANTIFIERS | TEMPORAL_WORDS
)
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_CARDINALS = "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()  # noqa: SIM905
_TENS = "thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905
# Number words as values, so "three" and "3" are one number.  "one" is left out: it is as often "a"
# ("one full charge" / "a single charge") as a count; "twice", "half" have no one value.
_WORD_VALUES = (
    {w: float(i) for i, w in enumerate(_CARDINALS) if w != "_"}
    | {w: float(30 + 10 * i) for i, w in enumerate(_TENS)}
    | {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "dozen": 12.0}
)

# Synonyms within the lexicons, so a paraphrase that says "every" for "all" or
# "prior to" for "before" raises no flag: each word maps to its class.
_QUANTIFIER_CLASS = {
    "every": "all", "each": "all", "both": "all", "entire": "all", "whole": "all", "everyone": "all", "everybody": "all",
    "everything": "all", "majority": "most", "none": "no", "neither": "no", "nobody": "no", "nothing": "no",
    "several": "some", "someone": "some", "somebody": "some", "something": "some", "minority": "few", "handful": "few",
    "numerous": "many", "countless": "many", "lot": "many", "lots": "many", "plenty": "many", "almost": "nearly",
    "barely": "hardly",
}
# "a", "an", "one", "only", "more", "less" are quantifiers too, but a paraphrase trades them freely;
# "any" is mostly a negative-polarity item ("did not occur in any") and "never" a negation (that rule has it).
_QUANTIFIER_CUES = frozenset(QUANTIFIERS - {"a", "an", "one", "single", "only", "more", "less", "much", "little", "fewer", "least", "any", "never"})
# The quantifiers the perturbation rules write (swap_quantifier, add_quantifier), by class.
_RULE_QUANTIFIERS = frozenset(_QUANTIFIER_CLASS.get(q, q) for q in QUANTIFIER_SWAPS) | frozenset(
    _QUANTIFIER_CLASS.get(q, q) for swaps in QUANTIFIER_SWAPS.values() for q in swaps
)
_TIME_CLASS = {
    "prior": "before", "previously": "before", "earlier": "before", "preceding": "before", "beforehand": "before",
    "precede": "before", "precedes": "before", "preceded": "before", "former": "before", "formerly": "before",
    "previous": "before", "past": "before", "last": "before", "following": "after", "follow": "after", "follows": "after", "followed": "after",
    "subsequently": "after", "later": "after", "afterwards": "after", "afterward": "after", "once": "after",
    "post": "after", "succeeding": "after", "next": "after", "upcoming": "after",
    "beginning": "start", "begins": "start", "began": "start", "ending": "end", "ends": "end", "ended": "end",
    "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year", "annually": "year",
}
# Time words that are tense auxiliaries (the tense rule handles them) or question and clause words.
_TIME_IGNORED = frozenset(BE_FORMS | HAVE_FORMS | DO_FORMS | {"will", "been", "going", "went", "go", "when", "while", "then", "now"})
_TIME_CUES = frozenset(TEMPORAL_WORDS - _TIME_IGNORED)
_TIME_PREPOSITIONS = frozenset({"within"} | (PHRASE_BREAKS & TEMPORAL_WORDS))
_FUTURE_MARKERS = frozenset({"will", "won't"})
_COMPARATIVES = frozenset({"less", "more", "fewer", "greater"})
# A base form after these is an infinitive ("did not give", "may reduce", "to resolve"), not a present tense.
_INFINITIVE_MARKERS = frozenset(DO_FORMS | MODALS | {"to", "not", "n't", "never"})
_PAST_TAGS = frozenset({"VBD", "VBN"})
_PRESENT_TAGS = frozenset({"VB", "VBP", "VBZ"})
# A participle after these is passive or perfect ("is covered", "has filed"), not a past tense.
_PARTICIPLE_AUX = frozenset(BE_FORMS | HAVE_FORMS | {"be", "been", "being"})
# Hedges the perturbation rules never write but people do: evidential adverbs, and the verbs of
# perturb.HEDGE_PHRASES ("it appears that", "some evidence suggests that") in any form.
_EVIDENTIAL_ADVERBS = frozenset({"reportedly", "apparently", "allegedly", "supposedly", "presumably", "arguably", "seemingly"})
_HEDGE_VERBS = frozenset({"suggest", "appear", "seem"})
_HEARSAY_RE = re.compile(r"\b(?:is|are|was|were|be|been)\s+(?:said|believed|thought|understood|expected|suspected|reported|alleged)\s+to\b")


# ------------------------------------------------------------------ the rules


def _count(words: Iterable[str], lexicon: frozenset[str]) -> int:
    return sum(1 for w in words if w in lexicon)


def _negations(words: list[str]) -> int:
    # "no less than" is "at least", a bound, not a negation.
    bounds = sum(1 for w, nxt in zip(words, words[1:], strict=False) if w == "no" and nxt in _COMPARATIVES)
    return _count(words, NEGATION_CUES) - bounds


def _negation(words_a: list[str], words_b: list[str]) -> bool:
    return _negations(words_a) != _negations(words_b)


def _number_values(words: list[str]) -> set[float]:
    values: set[float] = set()
    for w in words:
        if w in _WORD_VALUES:
            values.add(_WORD_VALUES[w])
        elif is_number_token(w):
            values.update(float(n.replace(",", "")) for n in _NUMBER_RE.findall(w))
    return values


def _numerical(words_a: list[str], words_b: list[str]) -> bool:
    # A question without a number ("How much ...?") does not contradict the passage that gives one.
    values_a, values_b = _number_values(words_a), _number_values(words_b)
    return bool(values_a) and bool(values_b) and values_a != values_b


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def _is_verb(word: str) -> bool:
    """A word that can only be a verb, or a past form ("chased", "owes"; not "weight", "stores", "give")."""
    lemmas = _lemmas(word)
    if "VERB" not in lemmas:
        return False
    found = _verb_tags(word)
    return "NOUN" not in lemmas or (found is not None and found[1] <= _PAST_TAGS)


def _content_once(words: list[str]) -> list[str]:
    counts = Counter(words)
    return [w for w in words if counts[w] == 1 and w not in _FUNCTION_WORDS and not is_number_token(w) and w not in _WORD_VALUES]


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
            if middle and span_b == y + middle + x and any(_is_verb(w) for w in middle):
                return True
    return False


def _entity_swap(words_a: list[str], words_b: list[str]) -> bool:
    if Counter(words_a) == Counter(words_b):
        return words_a != words_b
    if words_a.count("by") != words_b.count("by"):
        return False  # "X acquired Y" / "Y was acquired by X": a change of voice reverses the order without a swap
    once_a, once_b = _content_once(words_a), _content_once(words_b)
    shared = set(once_a) & set(once_b)
    order_a = [w for w in once_a if w in shared]
    order_b = [w for w in once_b if w in shared]
    return len(order_a) >= 3 and _is_block_swap(order_a, order_b)


@cache
def _verb_tags(word: str) -> tuple[str, frozenset[str]] | None:
    """``(lemma, Penn tags)`` of a verb form ("reduced" -> ("reduce", {VBD, VBN})), or None for a non-verb."""
    from lemminflect import getAllInflections

    lemmas = _lemmas(word)
    lemma = (lemmas.get("VERB") or lemmas.get("AUX") or (None,))[0]
    if lemma is None:
        return None
    forms = getAllInflections(lemma, upos="VERB") or getAllInflections(lemma, upos="AUX")
    tags = frozenset(tag for tag, words in forms.items() if word in words)
    return (lemma, tags) if tags else None


def _finite_tenses(words: list[str]) -> dict[str, str]:
    """Lemma -> ``past`` or ``present`` for each unambiguous finite verb form of a text.

    A participle after a be or have form is passive or perfect, not a past
    tense; a present form that is also a noun ("repair", "covers") may be the
    noun; a base form after "to", a modal or "do" is an infinitive; "-ing"
    forms carry no tense.
    """
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        found = _verb_tags(w)
        if found is None:
            continue
        lemma, tags = found
        if tags <= _PAST_TAGS and not (_PARTICIPLE_AUX & set(words[max(0, i - 2) : i])):
            out[lemma] = "past"
        elif tags <= _PRESENT_TAGS and "NOUN" not in _lemmas(w) and ("VBZ" in tags or not (i and words[i - 1] in _INFINITIVE_MARKERS)):
            out[lemma] = "present"
    return out


def _tense_changed(only_a: Counter, only_b: Counter, words_a: list[str], words_b: list[str]) -> bool:
    """One verb is past on one side and present on the other ("reduces" / "reduced", "is" / "was")."""
    tense_a, tense_b = _finite_tenses(words_a), _finite_tenses(words_b)
    changed = {lemma for lemma in tense_a.keys() & tense_b.keys() if tense_a[lemma] != tense_b[lemma]}
    # Only verbs whose form differs count: "had" on both sides is the same tense whatever follows.
    differing = {found[0] for w in (*only_a, *only_b) if (found := _verb_tags(w)) is not None}
    return bool(changed & differing)


def _future_count(words: list[str]) -> int:
    return sum(1 for w in words if w in _FUTURE_MARKERS or w.endswith("'ll"))


def _classes(words: Counter, cues: frozenset[str], classes: dict[str, str]) -> Counter:
    return Counter({classes.get(w, w): n for w, n in words.items() if w in cues})


def _temporal(words_a: list[str], words_b: list[str], only_a: Counter, only_b: Counter) -> bool:
    if any(TEMPORAL_SWAPS.get(w) in only_b for w in only_a):
        return True
    time_a, time_b = _classes(only_a, _TIME_CUES, _TIME_CLASS), _classes(only_b, _TIME_CUES, _TIME_CLASS)
    time_a, time_b = time_a - time_b, time_b - time_a
    if time_a and time_b:
        return True  # "during" / "after", "morning" / "evening", "since" / "until"
    # "within 30 days" / "after 30 days": a direction word replaces a time preposition.
    directional = {"before", "after"}
    if (directional & set(time_a) and _TIME_PREPOSITIONS & set(only_b)) or (directional & set(time_b) and _TIME_PREPOSITIONS & set(only_a)):
        return True
    if _future_count(words_a) != _future_count(words_b):
        return True
    return _tense_changed(only_a, only_b, words_a, words_b)


def _replaces_the(words_a: list[str], words_b: list[str]) -> bool:
    """add_quantifier in reverse: a rule quantifier in A stands where B has "the" ("All patients" / "The patients")."""
    after_the = {nxt for w, nxt in zip(words_b, words_b[1:], strict=False) if w == "the"}
    return any(_QUANTIFIER_CLASS.get(w, w) in _RULE_QUANTIFIERS and nxt in after_the for w, nxt in zip(words_a, words_a[1:], strict=False))


def _quantifier(words_a: list[str], words_b: list[str], only_a: Counter, only_b: Counter) -> bool:
    quant_a, quant_b = _classes(only_a, _QUANTIFIER_CUES, _QUANTIFIER_CLASS), _classes(only_b, _QUANTIFIER_CUES, _QUANTIFIER_CLASS)
    quant_a, quant_b = quant_a - quant_b, quant_b - quant_a
    if quant_a and quant_b:
        return True  # "all" / "some", "most" / "few"
    return (bool(quant_a) and _replaces_the(words_a, words_b)) or (bool(quant_b) and _replaces_the(words_b, words_a))


def _hedge_count(text: str, words: list[str]) -> int:
    joined = " ".join(words)
    phrases = sum(joined.count(p) for p in HEDGE_PHRASES) + len(_HEARSAY_RE.findall(joined))
    hedges = [w for w in words if w in HEDGE_WORDS or w in _EVIDENTIAL_ADVERBS]
    if words and words[0] in MODALS and text.rstrip().endswith("?"):
        hedges = hedges[1:]  # "Could you tell me ...?" asks; it does not hedge
    verbs = [w for w in words if (found := _verb_tags(w)) is not None and found[0] in _HEDGE_VERBS]
    # A hedge phrase's own verb ("it appears that") is counted once, as the phrase.
    return phrases + len(hedges) + max(0, len(verbs) - phrases)


def contradiction_flags(text_a: str, text_b: str) -> set[str]:
    """The failure modes by which ``text_b`` could contradict ``text_a`` (see the module table).

    Symmetric: ``contradiction_flags(a, b) == contradiction_flags(b, a)``.

    Args:
        text_a: A query, an anchor or a passage.
        text_b: Another text.

    Returns:
        A subset of ``core.constants.FAILURE_MODES``; empty when no rule fires.

    Raises:
        ValueError: If either argument is not a string.
    """
    for name, text in (("text_a", text_a), ("text_b", text_b)):
        if not isinstance(text, str):
            raise ValueError(f"{name} must be a string, got {type(text).__name__}")  # noqa: TRY004 - the project's input errors are ValueErrors
    words_a, words_b = rule_words(text_a), rule_words(text_b)
    only_a, only_b = word_difference(text_a, text_b)
    rules = {
        constants.CAT_NEGATION: lambda: _negation(words_a, words_b),
        constants.CAT_NUMERICAL: lambda: _numerical(words_a, words_b),
        constants.CAT_ENTITY_SWAP: lambda: _entity_swap(words_a, words_b),
        constants.CAT_TEMPORAL: lambda: _temporal(words_a, words_b, only_a, only_b),
        constants.CAT_QUANTIFIER: lambda: _quantifier(words_a, words_b, only_a, only_b),
        constants.CAT_HEDGING: lambda: _hedge_count(text_a, words_a) != _hedge_count(text_b, words_b),
    }
    return {mode for mode, rule in rules.items() if rule()}


# ------------------------------------------------------------------ labelled pairs

KIND_FAILURE = "failure"
KIND_MUST_PASS = "must_pass"
KIND_OTHER = "other"
KIND_ALL = "all"


def _pair_kind(category: str) -> str:
    if category in constants.ADVERSARIAL_CATEGORIES:
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
    out[COL_FLAGS] = [tuple(sorted(contradiction_flags(str(a), str(b)))) for a, b in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)]
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
