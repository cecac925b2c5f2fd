"""The project's four ways of cutting a text into words, in one place.

They differ on purpose, because each feeds a different consumer:

==========================  ==============================  ==========================================
function                    used by                         why it cuts this way
==========================  ==============================  ==========================================
:func:`overlap_words`       word Jaccard (``core.stats``)   lowercase words only, digits kept whole
                                                            ("500mg"), punctuation dropped: overlap
                                                            should not count commas or case
:func:`rule_words`          suite category rules            contractions split off ("do", "n't") so a
                            (``core.files.validators``)     negation cue is its own word; units stay on
                                                            their number ("$3.2m", "10:30", "1,200")
:func:`pretokenizer_words`  per-word subword splits         words *and* punctuation marks, case kept, as
                            (``core.models.tokens``)        BERT's pre-tokenizer cuts a sentence before
                                                            WordPiece runs
:func:`surface_tokens`      rewriting sentences             lossless: numbers ("3.5%"), words,
                            (``core.probes.perturb``)       punctuation *and* whitespace, so
                                                            ``"".join(surface_tokens(t)) == t``
==========================  ==============================  ==========================================

Standard library only: this module sits beside ``core.constants`` at the
bottom of the layers, so every package may use it.
"""

from __future__ import annotations

import re

# A run of word characters, optionally joined to another by one apostrophe, so
# "don't" and "patient's" stay whole while "v1.5" splits at the dot.
_OVERLAP_RE = re.compile(r"\w+(?:'\w+)?")
# Typographic apostrophes would otherwise split "don’t" into "don" and "t".
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})

# Letters, digits and the signs numbers and units carry ($, %, £, €, . , : / -),
# so "$3.2m", "40%" and "10:30" reach the number rule as one token.
_RULE_RE = re.compile(r"[A-Za-z0-9$%£€.,:/'’\-]+")
_RULE_STRIP = ".,;:!?\"“”()[]'’"
# An ellipsis or a dash between two words separates them: "That's...not possible" holds the word "not".
_RULE_BREAKS = re.compile(r"\.{2,}|[…—–]|(?<=\w)--(?=\w)")
# "can't" and "won't" do not split into a word plus "n't" ("ca", "wo" are not words).
_UNSPLIT_CONTRACTIONS = ("can't", "won't")

_PRETOKENIZER_RE = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]", re.UNICODE)

_SURFACE_RE = re.compile(r"\d+(?:[.,]\d+)*%?|\w+(?:['’]\w+)*|[^\w\s]|\s+")


def _require_str(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return text


def overlap_words(text: str) -> list[str]:
    """Lowercase words of ``text`` for word Jaccard.

    The text is lowercased, typographic apostrophes (’ ‘ ʼ) become ``'``, and
    tokens are the matches of ``\\w+(?:'\\w+)?``: runs of Unicode letters,
    digits and underscores, optionally joined by one inner apostrophe.
    Digits are kept ("500mg" is one token), other punctuation separates
    tokens ("3.5" gives "3" and "5") and is dropped.

    Args:
        text: Any string.

    Returns:
        Tokens in order of appearance, duplicates kept, shape ``(n_words,)``;
        ``[]`` for text without word characters.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    return _OVERLAP_RE.findall(_require_str(text).translate(_APOSTROPHES).lower())


def rule_words(text: str) -> list[str]:
    """Lowercase words for the suite category rules, punctuation stripped, contractions split off.

    ``"Don't take 5mg."`` gives ``["do", "n't", "take", "5mg"]``.

    Args:
        text: Any string.

    Returns:
        Words in order, duplicates kept, shape ``(n_words,)``.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    out: list[str] = []
    for raw in _RULE_RE.findall(_RULE_BREAKS.sub(" ", _require_str(text).replace("’", "'"))):
        tok = raw.strip(_RULE_STRIP).lower()
        if not tok:
            continue
        if tok.endswith("n't") and tok not in _UNSPLIT_CONTRACTIONS and tok != "n't":
            out.extend([tok[:-3], "n't"])
        else:
            out.append(tok)
    return out


def pretokenizer_words(text: str) -> list[str]:
    """Words and punctuation marks of a text, in order and as typed.

    ``"Don't take 5mg, O'Brien!"`` gives
    ``["Don't", "take", "5mg", ",", "O'Brien", "!"]``.

    Args:
        text: Any string.

    Returns:
        Words and marks, shape ``(n_words,)``.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    return _PRETOKENIZER_RE.findall(_require_str(text))


def surface_tokens(text: str) -> list[str]:
    """Number, word, punctuation and whitespace tokens that join back to ``text``.

    ``"Take 2.5 mg, daily."`` gives
    ``["Take", " ", "2.5", " ", "mg", ",", " ", "daily", "."]``.

    Args:
        text: Any string.

    Returns:
        Tokens, shape ``(n_tokens,)``, with ``"".join(tokens) == text``.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    return _SURFACE_RE.findall(_require_str(text))


# --------------------------------------------------------------- what changed between two texts


def word_changes(text_a: str, text_b: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both texts cut into :func:`surface_tokens`, each token flagged when the other text lacks it there.

    The longest matching runs of words (case-insensitive, whitespace
    ignored) are the same; every other word is changed: "not" in
    ``"is allergic"`` vs ``"is not allergic"``, both numbers in
    ``"5 mg"`` vs ``"50 mg"``. Texts of as many words are also read word
    by word, and that reading wins when it changes fewer words (a swap). Whitespace is changed only between two
    changed words, so a marked run reads as one phrase.

    Args:
        text_a: First text.
        text_b: Second text.

    Returns:
        ``(tokens_a, tokens_b)``: lists of ``(token, changed)`` whose tokens
        join back to each text.

    Raises:
        TypeError: If either text is not a string.
    """
    import difflib

    tokens = [surface_tokens(text_a), surface_tokens(text_b)]
    words = [[i for i, tok in enumerate(side) if not tok.isspace()] for side in tokens]
    keys = [[side[i].casefold() for i in idx] for side, idx in zip(tokens, words, strict=True)]
    kept: list[set[int]] = [set(), set()]
    for block in difflib.SequenceMatcher(a=keys[0], b=keys[1], autojunk=False).get_matching_blocks():
        kept[0].update(words[0][block.a + k] for k in range(block.size))
        kept[1].update(words[1][block.b + k] for k in range(block.size))
    if len(keys[0]) == len(keys[1]):
        # Same length: word by word is the closer reading when it changes fewer words. A swap ("the landlord sued the
        # tenant" / "the tenant sued the landlord") then marks the two swapped words, not a run around one of them.
        aligned = [j for j, (x, y) in enumerate(zip(keys[0], keys[1], strict=True)) if x == y]
        if len(keys[0]) - len(aligned) < len(keys[0]) - len(kept[0]):
            kept = [{words[0][j] for j in aligned}, {words[1][j] for j in aligned}]
    out: list[list[tuple[str, bool]]] = []
    for side, same in zip(tokens, kept, strict=True):
        changed = [not tok.isspace() and i not in same for i, tok in enumerate(side)]
        for i, tok in enumerate(side):
            # a space between two changed words joins them into one marked phrase
            if tok.isspace() and 0 < i < len(side) - 1 and changed[i - 1] and changed[i + 1]:
                changed[i] = True
        out.append(list(zip(side, changed, strict=True)))
    return out[0], out[1]


def change_summary(text_a: str, text_b: str, limit: int = 80) -> str:
    """The words that differ between two texts, in one short line: ``"allergic → not allergic"`` style.

    Each differing stretch reads ``"A-words → B-words"``; a stretch only one
    text has reads ``"+ words"`` (added in B) or ``"− words"`` (dropped from
    A). Stretches are joined by ``"; "`` and the line is cut at ``limit``
    characters with "…". Identical texts give ``"(no change)"``.

    Args:
        text_a: First text.
        text_b: Second text.
        limit: Longest line returned (at least 10).

    Returns:
        One line.

    Raises:
        TypeError: If either text is not a string.
        ValueError: If ``limit`` is below 10.
    """
    if limit < 10:
        raise ValueError(f"limit must be at least 10, got {limit}")
    sides = word_changes(text_a, text_b)
    runs: list[list[str]] = [_changed_runs(side) for side in sides]
    if not runs[0] and not runs[1]:
        return "(no change)"
    if len(runs[0]) == len(runs[1]):
        parts = [f"{a} → {b}" for a, b in zip(runs[0], runs[1], strict=True)]
    else:
        parts = [*(f"− {a}" for a in runs[0]), *(f"+ {b}" for b in runs[1])]
    line = "; ".join(parts)
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _changed_runs(tokens: list[tuple[str, bool]]) -> list[str]:
    runs: list[str] = []
    current: list[str] = []
    for tok, changed in tokens:
        if changed:
            current.append(tok)
        elif current and not tok.isspace():
            runs.append("".join(current).strip())
            current = []
    if current:
        runs.append("".join(current).strip())
    return [r for r in runs if r]


def passage_key(text: object) -> str:
    """What makes two passages one: the text with every run of whitespace one space, ends stripped ("" for a blank).

    The one rule of every corpus reader (a text file, a BEIR folder, a store, a vectors file), the audit and the
    store searches' answers: two rows that differ only in spacing are one passage, kept once under this text.
    """
    return " ".join(str(text).split())


def passage_keys(texts: object) -> list[str]:
    """The distinct non-blank :func:`passage_key` of ``texts`` (strings only; anything else is not a passage), first seen first."""
    if isinstance(texts, str):
        raise ValueError("give a list of texts, not one string")  # noqa: TRY004 - a value error for the callers' one-line messages
    return list(dict.fromkeys(k for k in (passage_key(t) for t in texts if isinstance(t, str)) if k))  # type: ignore[attr-defined]
