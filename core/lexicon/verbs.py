"""The verb group: where a simple clause's verb is, and which tense each verb of a text is in.

:func:`find_verb_group` is what the generator rewrites (negation, tense,
hedging, role swaps all start from it); :func:`finite_tenses` is what the
validator and the guard compare when a tense changes.  Both read verbs the
same way (:mod:`core.lexicon.morphology`): one parse of "the verb" for the
whole project.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.lexicon.morphology import PAST_TAGS, PRESENT_TAGS, finite_verb_form, is_plural_noun, lemmas, verb_tags
from core.lexicon.wordsets import (
    AUXILIARIES,
    BE_FORMS,
    CONTRACTIONS,
    DETERMINERS,
    DO_FORMS,
    HAVE_FORMS,
    LABEL_NOUNS,
    MODALS,
    NOT_VERBS,
    PHRASE_BREAKS,
    PLURAL_PRONOUNS,
)
from core.words import surface_tokens

# A base form after these is an infinitive ("did not give", "may reduce", "to resolve"), not a present tense.
_INFINITIVE_MARKERS = frozenset(DO_FORMS | MODALS | {"to", "not", "n't", "never"})
_NEGATORS = frozenset({"not", "n't", "never"})
# A participle after these is passive or perfect ("is covered", "has filed"), not a past tense.
_PARTICIPLE_AUX = frozenset(BE_FORMS | HAVE_FORMS | {"be", "been", "being"})


class Sentence:
    """A sentence as word, number, punctuation and whitespace tokens that join back losslessly."""

    def __init__(self, text: str):
        self.tokens: list[str] = surface_tokens(text)

    @property
    def words(self) -> list[int]:
        """Indices of the non-space, non-punctuation tokens."""
        return [i for i, t in enumerate(self.tokens) if t[0].isalnum()]

    def lower(self, i: int) -> str:
        """The token at ``i``, lowercased."""
        return self.tokens[i].lower()

    def names_a_number(self, i: int) -> bool:
        """Whether the word at ``i`` is a label noun before a number ("type 2", "phase 3"): a noun, never the verb."""
        nxt = [j for j in self.words if j > i]
        return self.lower(i) in LABEL_NOUNS and bool(nxt) and self.tokens[nxt[0]][:1].isdigit()

    def in_compound(self, i: int) -> bool:
        """Whether the word at ``i`` ends a hyphenated compound ("ammonia-based", "USB-C"): not a word of its own."""
        return i >= 2 and self.tokens[i - 1] == "-" and self.tokens[i - 2][:1].isalnum()

    def glued(self, i: int) -> bool:
        """Whether the token at ``i`` is glued to a word or number before it ("4K": "K"), or joined by a hyphen after it."""
        before = i >= 1 and self.tokens[i - 1][:1].isalnum()
        after = i + 2 < len(self.tokens) and self.tokens[i + 1] == "-" and self.tokens[i + 2][:1].isalnum()
        return before or after or self.in_compound(i)


@dataclass(frozen=True)
class VerbGroup:
    """The verb group of a simple clause: where it is and what kind.

    Attributes:
        start: token index of the first verb-group word.
        end: token index of the main verb (== start for a single word).
        aux: lowercased auxiliary or modal, if the group has one.
        lemma: main verb lemma.
        tag: VBD, VBZ, VBP, or MD for a modal group, BE for a lone be-form.
    """

    start: int
    end: int
    aux: str | None
    lemma: str
    tag: str


def find_verb_group(s: Sentence) -> VerbGroup | None:
    """The first verb group after a non-empty subject, or None.

    An auxiliary (be, have, do, a modal) wins; otherwise the first finite verb
    form that is not capitalized (a name), not inside a hyphenated compound
    ("ammonia-based") and not right after a determiner (a noun: "the
    report").  A bare base form ("report") counts only after a plural
    pronoun or noun, so "Patients report pain" is found but "The report
    shows" finds "shows".
    """
    words = s.words
    for pos, i in enumerate(words[1:], start=1):
        w = s.lower(i)
        if w in CONTRACTIONS:
            w = CONTRACTIONS[w]
        if w in AUXILIARIES and not s.glued(i):
            nxt = words[pos + 1] if pos + 1 < len(words) else None
            # "is not accepted", "will acquire", "has grown", or a lone "is" (copula)
            j = nxt
            if j is not None and s.lower(j) in {"not", "never"}:
                j = words[pos + 2] if pos + 2 < len(words) else None
            main = None
            if j is not None:
                lem = lemmas(s.tokens[j]).get("VERB")
                if lem and s.tokens[j][:1].islower() and s.lower(j) not in NOT_VERBS:
                    main = (j, lem[0])
            if w in BE_FORMS and (
                main is None or not s.lower(main[0]).endswith(("ed", "en", "ing")) and finite_verb_form(s.tokens[main[0]]) is None
            ):
                return VerbGroup(i, i, w, "be", "BE")
            if main is None:
                if w in BE_FORMS:
                    return VerbGroup(i, i, w, "be", "BE")
                continue
            return VerbGroup(i, main[0], w, main[1], "MD" if w in MODALS else w.upper())
    for pos, i in enumerate(words[1:], start=1):
        tok = s.tokens[i]
        if not tok[:1].islower() or s.lower(i) in NOT_VERBS or s.glued(i) or s.names_a_number(i):
            continue
        form = finite_verb_form(tok)
        if form is None:
            continue
        prev = s.lower(words[pos - 1])
        if prev in DETERMINERS or prev in PHRASE_BREAKS:
            continue  # "the report" is a noun; "to drugs", "of sales" are no finite verbs
        if form[1] == "VBP" and prev not in PLURAL_PRONOUNS and not is_plural_noun(s.tokens[words[pos - 1]]):
            continue
        nxt = words[pos + 1] if pos + 1 < len(words) else None
        if (
            form[1] in {"VBZ", "VBP"}
            and "NOUN" in lemmas(tok)
            and nxt is not None
            and s.tokens[nxt][:1].islower()
            and s.lower(nxt) not in NOT_VERBS
            and not s.names_a_number(nxt)
            and finite_verb_form(s.tokens[nxt]) is not None
        ):
            continue  # "Consumer prices rose": "prices" is the noun, "rose" the verb
        return VerbGroup(i, i, None, form[0], form[1])
    return None


def finite_tenses(words: list[str]) -> list[tuple[str, str]]:
    """``(lemma, "past" | "present")`` for each unambiguous finite verb form of a text, in order.

    A participle after a be or have form is passive or perfect, not a past
    tense; a present form that is also a noun ("repair", "covers") may be the
    noun; a base form after "to", a modal or "do" is an infinitive; "-ing"
    forms carry no tense.

    Args:
        words: Lowercase words (:func:`core.words.rule_words`).

    Returns:
        One entry per finite verb, repeats kept ("is ... is" gives two).
    """
    out: list[tuple[str, str]] = []
    for i, w in enumerate(words):
        found = verb_tags(w)
        if found is None:
            continue
        lemma, tags = found
        if tags <= PAST_TAGS and not (_PARTICIPLE_AUX & set(words[max(0, i - 2) : i])):
            out.append((lemma, "past"))
        elif tags <= PRESENT_TAGS and "NOUN" not in lemmas(w) and ("VBZ" in tags or not (i and words[i - 1] in _INFINITIVE_MARKERS)):
            out.append((lemma, "present"))
    return out


def possible_tenses(words: list[str], i: int) -> frozenset[str]:
    """The tenses the word at ``words[i]`` may carry here: ``past``, ``present``, both or none.

    For forms :func:`finite_tenses` cannot place: "run" (present or
    participle), "shut" (present or past), "report" (verb or noun).  None
    after a determiner (a noun: "the start"), after "to", a modal or "do"
    (an infinitive: "may cut"); no past after a be or have form (passive or
    perfect: "was started").
    """
    found = verb_tags(words[i])
    prev = words[i - 1] if i else ""
    if found is None or prev in DETERMINERS or prev in _INFINITIVE_MARKERS - _NEGATORS:
        return frozenset()
    tags = found[1]
    out = set()
    if "VBD" in tags and not (_PARTICIPLE_AUX & set(words[max(0, i - 2) : i])):
        out.add("past")
    # "never shares" is present; "did not share" an infinitive.
    if "VBZ" in tags or ("VBP" in tags and prev not in _NEGATORS):
        out.add("present")
    return frozenset(out)
