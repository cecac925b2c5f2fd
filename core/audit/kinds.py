"""What a close pair is: a confusable twin, a near-duplicate, several differences, or another difference.

A pair is read from its aligned word difference, not from how many words
it shares: the two texts' words (:func:`core.words.rule_words`, a leading
reply word such as "No," or "Naw," set aside) are aligned, and every
stretch of words that differs is one *edit*.  Then, in order (documented in
``docs/audit.md``):

1. **near-duplicate** when the texts are equal after normalisation (Unicode
   NFKC, case folded, punctuation dropped, whitespace collapsed), or when
   every edit changes only articles (a, an, the) or another inflection of a
   word on the other side ("patient" / "patients") and no failure mode
   tells them apart.  The same words in another order are never a
   near-duplicate ("A man prepares a pizza while a woman watches" / "A
   woman prepares a pizza while a man watches");
2. the same words (as lemmas) in another order: a **twin** of
   ``entity_swap`` when :func:`core.lexicon.differs_by` reads roles
   exchanged, else **other**;
3. **twin** when exactly one edit stands between the texts, a failure mode
   (:func:`core.lexicon.modes_differing`) tells its two sides apart, and one
   of those modes explains every word the edit changes
   (:func:`core.lexicon.unexplained`: a number and its unit for numerical, a
   negation cue and its auxiliaries for negation, ...).  A negation edit
   must also flip the polarity: a negated antonym ("not bad" / "good",
   WordNet's antonyms, :mod:`core.lexicon.antonyms`), a double negation
   ("not unafraid" / "afraid") or a cue against a verb of ceasing ("no
   longer smokes" / "stopped smoking") keeps the meaning, and is **other**;
4. **several differences** when a failure mode's edit is there but so is
   something else: a second edit (a different patient *and* a different
   day), or other words in the same stretch ("took aspirin" / "did not take
   ibuprofen").  ``why`` names each edit; not a twin;
5. **other** otherwise: close, but different in a way no failure mode names.

``mode`` is the first mode (in ``core.lexicon.FAILURE_MODES`` order) that
explains the twin's edit and ``modes`` every mode found for it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from core import constants, lexicon
from core.lexicon import modes_differing, unexplained
from core.lexicon.antonyms import are_antonyms
from core.lexicon.modes import negation_count
from core.lexicon.morphology import lemmas, word_forms
from core.lexicon.numbers import is_number_token
from core.lexicon.wordsets import (
    EVIDENTIAL_ADVERBS,
    FUTURE_MARKERS,
    HEDGE_CUES,
    HEDGE_VERBS,
    IMPLICIT_NEGATIVE_VERBS,
    INTERJECTIONS,
    NEGATING_VERB_BASES,
    NEGATION_CUES,
    QUANTIFIER_CUES,
    TIME_CUES,
)
from core.words import rule_words, word_changes

KIND_TWIN = "twin"
KIND_DUPLICATE = "near-duplicate"
KIND_SEVERAL = "several differences"
KIND_OTHER = "other"
KINDS = (KIND_TWIN, KIND_DUPLICATE, KIND_SEVERAL, KIND_OTHER)
# Texts this long that share in order less than half the shorter one's words are two passages, not one edited: the edits are not
# read one by one (the costly part), whatever numbers they hold.
MIN_SHARED_SHARE = 0.5
_LONG_TEXT = 6
# Past this many edits a pair is "other" or "several differences" whatever the rest says: only the first few are read.
_MAX_EDITS_READ = 4
_CONTEXT = 5
# A stretch rewritten at this length is another passage's text, not an edit of a mode: it is not read for modes.
_MAX_EDIT_WORDS = 10
_ARTICLES = frozenset({"a", "an", "the"})
# Every word some mode's rule reads (its cues), so an edit without one is read by no rule.
_CUES = frozenset().union(*(r.cues | r.cues_of_variants for r in lexicon.MODE_RECORDS)) | (
    NEGATION_CUES | NEGATING_VERB_BASES | TIME_CUES | FUTURE_MARKERS | QUANTIFIER_CUES | HEDGE_CUES | EVIDENTIAL_ADVERBS | HEDGE_VERBS
)
_PUNCT_RE = re.compile(r"[^\w\s]", re.UNICODE)
# A reply word before a comma or a stop at the very start: "No, I think it works." answers; it negates nothing.
_INTERJECTION_RE = re.compile(r"^\W*(\w+)\s*[,.!;:\u2014\u2013-]")


@dataclass(frozen=True)
class PairKind:
    """What one close pair is.

    Attributes:
        kind: ``twin``, ``near-duplicate``, ``several differences`` or ``other`` (:data:`KINDS`).
        mode: the first failure mode that explains a twin's edit, else "".
        modes: every failure mode found for a twin's edit, in ``FAILURE_MODES`` order (other kinds have none).
        why: the rule that decided, in a few words (for several differences: each edit and its mode).
        edits: each differing stretch as "A-words → B-words", in order (empty for an identical or reordered pair).
    """

    kind: str
    mode: str = ""
    modes: tuple[str, ...] = ()
    why: str = ""
    edits: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Edit:
    """One differing stretch of the aligned words: its words on each side and where it sits in A."""

    removed: tuple[str, ...]
    added: tuple[str, ...]
    a_span: tuple[int, int]

    @property
    def text(self) -> str:
        return f"{' '.join(self.removed) or '∅'} → {' '.join(self.added) or '∅'}"


def normalise(text: str) -> str:
    """The text as the near-duplicate rule compares it: NFKC, case folded, no punctuation, one space between words."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT_RE.sub(" ", folded).split())


def _words(text: str) -> tuple[list[str], str]:
    """The rule words of ``text`` and its leading reply word ("" when none): "No, it works" -> (["it", "works"], "no")."""
    words = rule_words(text)
    found = _INTERJECTION_RE.match(text)
    if found and words and found.group(1).casefold() in INTERJECTIONS and words[0] == found.group(1).casefold():
        return words[1:], words[0]
    return words, ""


def _joined(words: list[str] | tuple[str, ...], question: bool) -> str:
    # Rule words joined back into a text the mode rules read the same way ("do n't" -> "don't").
    return " ".join(words).replace(" n't", "n't") + ("?" if question else "")


@lru_cache(maxsize=100_000)
def _lemma_key(word: str) -> str:
    found = lemmas(word)
    return min((lemma for forms in found.values() for lemma in forms), default=word)


def _is_trivial(edit: _Edit) -> bool:
    """Whether the edit changes only articles or inflections of a word on the other side."""
    rest_a = [w for w in edit.removed if w not in _ARTICLES]
    rest_b = [w for w in edit.added if w not in _ARTICLES]
    if len(rest_a) != len(rest_b):
        return False
    pool = [word_forms(w) for w in rest_b]
    for word in rest_a:
        mine = word_forms(word)
        match = next((k for k, other in enumerate(pool) if mine & other), None)
        if match is None:
            return False
        pool.pop(match)
    return True


def _implicit_negatives(words: tuple[str, ...] | list[str]) -> int:
    """Verbs that negate by meaning and carry no cue ("stopped", "ceases"); cue verbs ("refused") are counted as cues."""
    return sum(
        1
        for w in words
        if w not in NEGATION_CUES and w not in NEGATING_VERB_BASES and any(_lemma_key(f) in IMPLICIT_NEGATIVE_VERBS for f in word_forms(w))
    )


def _antonym_pairs(left_a: list[str], left_b: list[str]) -> list[tuple[str, str]]:
    pool = list(left_b)
    found = []
    for word in left_a:
        match = next((k for k, other in enumerate(pool) if are_antonyms(word, other)), None)
        if match is not None:
            found.append((word, pool.pop(match)))
    return found


def _polarity_kept(edit: _Edit) -> bool:
    """Whether the negations across the edit cancel: cues, verbs of ceasing and antonyms flip it an even number of times."""
    cues = negation_count(list(edit.removed)) - negation_count(list(edit.added))
    implicit = _implicit_negatives(edit.removed) - _implicit_negatives(edit.added)
    left_a, left_b = unexplained(constants.CAT_NEGATION, list(edit.removed), list(edit.added))
    flips = abs(cues) + abs(implicit) + len(_antonym_pairs(left_a, left_b))
    return flips % 2 == 0


def _edits(words_a: list[str], words_b: list[str]) -> tuple[list[_Edit], int]:
    matcher = difflib.SequenceMatcher(a=words_a, b=words_b, autojunk=False)
    edits, shared = [], 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            shared += i2 - i1
        else:
            edits.append(_Edit(tuple(words_a[i1:i2]), tuple(words_b[j1:j2]), (i1, i2)))
    return edits, shared


def _edit_modes(edit: _Edit, words_a: list[str], whole: tuple[str, str] | None, question: bool) -> tuple[str, ...]:
    """The failure modes that tell A apart from A with only this edit made (read in the whole sentence)."""
    if max(len(edit.removed), len(edit.added)) > _MAX_EDIT_WORDS or not _may_hold_a_mode(edit):
        return ()
    if whole is not None:
        found = modes_differing(*whole)
    else:
        # One edit among several: read in its own clause (a few words either side), not the whole passage, which
        # costs as much per edit as the whole pair and cannot turn "several differences" into a twin.
        start, end = max(0, edit.a_span[0] - _CONTEXT), edit.a_span[1] + _CONTEXT
        before, after = words_a[start : edit.a_span[0]], words_a[edit.a_span[1] : end]
        found = modes_differing(_joined([*before, *edit.removed, *after], False), _joined([*before, *edit.added, *after], False))
    return tuple(m for m in lexicon.FAILURE_MODES if m in found)


def _may_hold_a_mode(edit: _Edit) -> bool:
    """Whether any mode's rule could fire on this edit: a cue of some mode, a number, or a verb in another form.

    The rules are the costly part (lemmas, tenses), and most edits of two different passages hold none of these.
    An edit that is a whole reordering never reaches here (the same words in another order are read first).
    """
    words = (*edit.removed, *edit.added)
    if any(w in _CUES or is_number_token(w) or w.endswith("'ll") for w in words):
        return True
    # A verb in another tense ("reports" / "reported"): the same word on both sides in another form.
    forms_b = [word_forms(w) for w in edit.added]
    return any(word_forms(w) & other for w in edit.removed for other in forms_b)


def _explaining(edit: _Edit, modes: tuple[str, ...]) -> str:
    """The first of ``modes`` whose edit alone explains every changed word, else ""."""
    return next((m for m in modes if unexplained(m, list(edit.removed), list(edit.added)) == ([], [])), "")


def _same_words_reordered(words_a: list[str], words_b: list[str]) -> bool:
    """The same words, or the same lemmas ("The dog chases the cats" / "The cats chase the dog"), in another order."""
    if abs(len(words_a) - len(words_b)) > 1 or words_a == words_b:
        return False
    count_a, count_b = Counter(words_a), Counter(words_b)
    if count_a == count_b:
        return True
    if sum((count_a - count_b).values()) > _MAX_EDITS_READ:
        return False  # many words differ: not one sentence reordered (and the lemma reading below is the costly part)
    # Articles aside: "Anna sent the boxes to Ben" / "Ben sent a box to Anna" is the same words reordered.
    order_a = [_lemma_key(w) for w in words_a if w not in _ARTICLES]
    order_b = [_lemma_key(w) for w in words_b if w not in _ARTICLES]
    return order_a != order_b and Counter(order_a) == Counter(order_b)


def _exchanges(edits: list[_Edit]) -> tuple[list[_Edit], list[tuple[_Edit, tuple[str, ...]]]]:
    """Two edits that exchange their words ("Anna → Ben" ... "Ben → Anna") read as one role swap beside other edits.

    Returns:
        The other edits, and each swap as one edit of ``entity_swap``.
    """
    rest: list[_Edit] = []
    swaps: list[tuple[_Edit, tuple[str, ...]]] = []
    used: set[int] = set()
    for i, edit in enumerate(edits):
        if i in used:
            continue
        partner = next(
            (
                j
                for j in range(i + 1, len(edits))
                if j not in used and edit.removed and edit.removed == edits[j].added and edit.added == edits[j].removed
            ),
            None,
        )
        if partner is None:
            rest.append(edit)
            continue
        used.add(partner)
        swaps.append((edit, (constants.CAT_ENTITY_SWAP,)))
    return rest, swaps


def _reordered(text_a: str, text_b: str) -> PairKind:
    if lexicon.differs_by(constants.CAT_ENTITY_SWAP, text_a, text_b):
        return PairKind(KIND_TWIN, constants.CAT_ENTITY_SWAP, (constants.CAT_ENTITY_SWAP,), why="the same words with two roles exchanged")
    return PairKind(KIND_OTHER, why="the same words in another order")


def _one_edit(edit: _Edit, modes: tuple[str, ...], edits: tuple[str, ...]) -> PairKind:
    """The kind of a pair one stretch apart that some failure mode tells apart."""
    explaining = _explaining(edit, modes)
    negation = constants.CAT_NEGATION
    if negation in modes and _polarity_kept(edit):
        left_a, left_b = unexplained(negation, list(edit.removed), list(edit.added))
        antonyms = _antonym_pairs(left_a, left_b)
        what = f"a negated antonym ({antonyms[0][0]} / {antonyms[0][1]})" if antonyms else "the negations cancel"
        return PairKind(KIND_OTHER, why=f"{what}: the same polarity on both sides", edits=edits)
    if explaining:
        return PairKind(KIND_TWIN, explaining, modes, why=f"one {explaining} edit apart", edits=edits)
    left = [w for side in unexplained(modes[0], list(edit.removed), list(edit.added)) for w in side]
    return PairKind(KIND_SEVERAL, why=f"a {modes[0]} edit and other words ({', '.join(left)}) in one stretch", edits=edits)


@lru_cache(maxsize=200_000)
def pair_kind(text_a: str, text_b: str) -> PairKind:
    """Classify one close pair by the module's rule (cached: a corpus repeats pairs across models).

    Symmetric: both orders get the same kind, mode and modes (the edits read
    from ``text_a`` to ``text_b``).

    Raises:
        ValueError: a text is not a string.
    """
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise ValueError("both texts must be strings")  # noqa: TRY004 - the project's input errors are ValueErrors
    if text_a <= text_b:
        return _classify(text_a, text_b)
    # An edit is read in the context of one side, so one fixed order keeps the kind the same both ways.
    found = _classify(text_b, text_a)
    flipped = tuple(" → ".join(reversed(e.split(" → ", 1))) if " → " in e else e for e in found.edits)
    return PairKind(found.kind, found.mode, found.modes, found.why, flipped)


def _classify(text_a: str, text_b: str) -> PairKind:
    if normalise(text_a) == normalise(text_b):
        return PairKind(KIND_DUPLICATE, why="identical after normalisation")
    (words_a, reply_a), (words_b, reply_b) = _words(text_a), _words(text_b)
    question = text_a.rstrip().endswith("?") and text_b.rstrip().endswith("?")
    extra = [f"{reply_a or '∅'} → {reply_b or '∅'}"] if reply_a != reply_b else []
    if not extra and _same_words_reordered(words_a, words_b):
        return _reordered(text_a, text_b)
    edits, shared = _edits(words_a, words_b)
    if max(len(words_a), len(words_b)) > _LONG_TEXT and shared < MIN_SHARED_SHARE * min(len(words_a), len(words_b)):
        return PairKind(KIND_OTHER, why="few shared words")
    described = tuple([*(e.text for e in edits), *extra])
    if not edits:
        return PairKind(KIND_OTHER, why="differs only by a reply word", edits=described)
    edits, swaps = _exchanges(edits)
    single = len(edits) == 1 and not swaps
    read = []
    for edit in edits[:_MAX_EDITS_READ]:
        modes = _edit_modes(edit, words_a, (_joined(words_a, question), _joined(words_b, question)) if single else None, question)
        read.append((edit, modes))
    mode_edits = [(e, m) for e, m in read if m] + swaps
    real = [(e, m) for e, m in read if m or not _is_trivial(e)]
    if not real and len(edits) <= _MAX_EDITS_READ and not extra and not swaps:
        return PairKind(KIND_DUPLICATE, why="differs only by articles or inflection", edits=described)
    n_edits = len(real) + (len(edits) - len(read)) + len(extra) + len(swaps)
    if n_edits == 1 and swaps:
        # Two roles exchanged, the rest articles or inflections ("Anna sent the boxes to Ben" / "Ben sent a box to Anna").
        return PairKind(KIND_TWIN, constants.CAT_ENTITY_SWAP, (constants.CAT_ENTITY_SWAP,), why="two roles exchanged", edits=described)
    if n_edits == 1 and mode_edits:
        return _one_edit(*mode_edits[0], described)
    if mode_edits:
        parts = [f"{m[0]} ({e.text})" for e, m in mode_edits]
        others = n_edits - len(mode_edits)
        tail = f" and {others} other change{'s' if others > 1 else ''}" if others else ""
        return PairKind(KIND_SEVERAL, why=f"{n_edits} separate edits: {'; '.join(parts)}{tail}", edits=described)
    return PairKind(KIND_OTHER, why="no failure mode tells them apart", edits=described)


def changed_words(text_a: str, text_b: str) -> tuple[str, str]:
    """The differing words of each side, in order, joined by spaces (the exported form of :func:`core.words.word_changes`)."""
    marks_a, marks_b = word_changes(text_a, text_b)
    return " ".join(t for t, m in marks_a if m and not t.isspace()), " ".join(t for t, m in marks_b if m and not t.isspace())
