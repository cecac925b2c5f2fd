"""What a close pair is: a confusable twin, a near-duplicate, or another difference; and which words differ.

The rule, in order (documented in ``docs/audit.md``):

1. **near-duplicate** when the texts are equal after normalisation (Unicode
   NFKC, case folded, punctuation dropped, whitespace collapsed), or when the
   only words that differ are articles (a, an, the) or other inflections of
   a word on the other side ("patient" / "patients", "reduces" / "reduce")
   and no failure mode tells them apart;
2. **twin** (a confusable twin) when :func:`core.lexicon.modes_differing`
   finds a failure mode between them *and* the two texts share most of their
   words (word Jaccard at least :data:`MIN_SHARED_WORDS`): one edit of that
   mode, not two different passages that happen to hold different numbers.
   Every mode found is kept (``modes``); ``mode`` is the first of them in
   ``core.lexicon.FAILURE_MODES`` order;
3. **other** otherwise: close, but different in a way no failure mode names.

:data:`MIN_SHARED_WORDS` was chosen on the planted corpus's dev split
(:mod:`core.audit.planted`) and never on its held-out split.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from core import lexicon
from core.lexicon import modes_differing, word_difference
from core.lexicon.morphology import lemmas
from core.stats.overlap import word_jaccard
from core.words import word_changes

KIND_TWIN = "twin"
KIND_DUPLICATE = "near-duplicate"
KIND_OTHER = "other"
KINDS = (KIND_TWIN, KIND_DUPLICATE, KIND_OTHER)
MIN_SHARED_WORDS = 0.4
_ARTICLES = frozenset({"a", "an", "the"})
_PUNCT_RE = re.compile(r"[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class PairKind:
    """What one close pair is.

    Attributes:
        kind: ``twin``, ``near-duplicate`` or ``other``.
        mode: the first failure mode found for a twin, else "".
        modes: every failure mode found, in ``FAILURE_MODES`` order (a near-duplicate or other has none).
        why: the rule that decided, in a few words.
    """

    kind: str
    mode: str = ""
    modes: tuple[str, ...] = ()
    why: str = ""


def normalise(text: str) -> str:
    """The text as the near-duplicate rule compares it: NFKC, case folded, no punctuation, one space between words."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT_RE.sub(" ", folded).split())


def _lemma_set(word: str) -> frozenset[str]:
    found = {lemma for forms in lemmas(word).values() for lemma in forms}
    return frozenset(found | {word})


def _inflections_only(only_a: Counter, only_b: Counter) -> bool:
    """Whether every differing word is an article or shares a lemma with a differing word on the other side."""
    rest_a = [w for w in only_a.elements() if w not in _ARTICLES]
    rest_b = [w for w in only_b.elements() if w not in _ARTICLES]
    if len(rest_a) != len(rest_b):
        return False
    pool = [_lemma_set(w) for w in rest_b]
    for word in rest_a:
        mine = _lemma_set(word)
        match = next((k for k, other in enumerate(pool) if mine & other), None)
        if match is None:
            return False
        pool.pop(match)
    return True


@lru_cache(maxsize=200_000)
def pair_kind(text_a: str, text_b: str) -> PairKind:
    """Classify one close pair by the module's rule (cached: a corpus repeats pairs across models).

    Raises:
        ValueError: a text is not a string.
    """
    if not isinstance(text_a, str) or not isinstance(text_b, str):
        raise ValueError("both texts must be strings")  # noqa: TRY004 - the project's input errors are ValueErrors
    if normalise(text_a) == normalise(text_b):
        return PairKind(KIND_DUPLICATE, why="identical after normalisation")
    shared = word_jaccard(text_a, text_b) >= MIN_SHARED_WORDS
    # The failure-mode rules are the costly part (lemmas, tenses): asked only where their answer can change the kind,
    # i.e. when the texts share enough words for a twin, or differ only by inflections (then any mode rules a duplicate out).
    inflections = _inflections_only(*word_difference(text_a, text_b))
    if not shared and not inflections:
        return PairKind(KIND_OTHER, why="few shared words")
    found = modes_differing(text_a, text_b)
    ordered = tuple(m for m in lexicon.FAILURE_MODES if m in found)
    if ordered and shared:
        return PairKind(KIND_TWIN, ordered[0], ordered, why="one failure-mode edit apart")
    if not ordered and inflections:
        return PairKind(KIND_DUPLICATE, why="differs only by articles or inflection")
    return PairKind(KIND_OTHER, why="few shared words" if ordered else "no failure mode tells them apart")


def changed_words(text_a: str, text_b: str) -> tuple[str, str]:
    """The differing words of each side, in order, joined by spaces (the exported form of :func:`core.words.word_changes`)."""
    marks_a, marks_b = word_changes(text_a, text_b)
    return " ".join(t for t, m in marks_a if m and not t.isspace()), " ".join(t for t, m in marks_b if m and not t.isspace())
