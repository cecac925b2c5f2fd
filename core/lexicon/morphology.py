"""Lemmas and inflections from lemminflect, cached once for the validator, the generator and the guard.

Why lemminflect: spaCy's English models and NLTK's tagger data download at
run time, which fails offline; lemminflect ships its English lexicon inside
its wheel.  Every function takes a word in any case and reads it lowercased,
so "Acquired" and "acquired" are one cache entry.
"""

from __future__ import annotations

from functools import cache

PAST_TAGS = frozenset({"VBD", "VBN"})
PRESENT_TAGS = frozenset({"VB", "VBP", "VBZ"})


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Part of speech -> lemmas of ``word`` ("acquired" -> ``{"VERB": ("acquire",)}``), cached.

    Args:
        word: One word, any case.

    Returns:
        lemminflect's ``getAllLemmas`` of the lowercased word; empty for an unknown word.
    """
    return _lemmas(word.lower())


def inflect(lemma: str, tag: str) -> str:
    """``lemma`` in the Penn ``tag`` ("acquire", "VBD" -> "acquired"); the lemma itself when unknown."""
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else lemma


def word_forms(word: str) -> frozenset[str]:
    """The word and all its lemmas: two words share one when they inflect one word ("months", "month")."""
    w = word.lower()
    return frozenset({w}.union(*lemmas(w).values()))


def can_be_verb(word: str) -> bool:
    """Whether any reading of ``word`` is a verb or auxiliary ("report", "reduced", "is")."""
    return bool({"VERB", "AUX"} & set(lemmas(word)))


@cache
def verb_tags(word: str) -> tuple[str, frozenset[str]] | None:
    """``(lemma, Penn tags)`` of a verb form ("reduced" -> ("reduce", {VBD, VBN})), or None for a non-verb."""
    from lemminflect import getAllInflections

    w = word.lower()
    found = lemmas(w)
    lemma = (found.get("VERB") or found.get("AUX") or (None,))[0]
    if lemma is None:
        return None
    forms = getAllInflections(lemma, upos="VERB") or getAllInflections(lemma, upos="AUX")
    tags = frozenset(tag for tag, words in forms.items() if w in words)
    return (lemma, tags) if tags else None


def is_unambiguous_verb(word: str) -> bool:
    """A word that can only be a verb, or a past form ("chased", "owes"; not "weight", "stores", "give")."""
    found = lemmas(word)
    if "VERB" not in found:
        return False
    tags = verb_tags(word)
    return "NOUN" not in found or (tags is not None and tags[1] <= PAST_TAGS)


def finite_verb_form(word: str) -> tuple[str, str] | None:
    """``(lemma, tag)`` when ``word`` is a finite verb form: VBD, VBZ or VBP (the lemma itself)."""
    verbs = lemmas(word).get("VERB")
    if not verbs:
        return None
    lemma, w = verbs[0], word.lower()
    from lemminflect import getInflection

    for tag in ("VBD", "VBZ"):
        if w in getInflection(lemma, tag=tag):
            return lemma, tag
    if w == lemma:
        return lemma, "VBP"
    return None


def is_participle(word: str) -> bool:
    """Whether ``word`` is a past participle ("made", "acquired", "taken")."""
    from lemminflect import getInflection

    verbs = lemmas(word).get("VERB")
    return verbs is not None and bool(verbs) and word.lower() in (getInflection(verbs[0], tag="VBN") or ())


def is_plural_noun(word: str) -> bool:
    """A noun in its plural ("patients"), not a mass noun or a singular ending in s."""
    w = word.lower()
    nouns = lemmas(w).get("NOUN")
    return nouns is not None and bool(nouns) and nouns[0] != w and w.endswith("s")
