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
    for raw in _RULE_RE.findall(_require_str(text).replace("’", "'")):
        tok = raw.strip(_RULE_STRIP).lower()
        if not tok:
            continue
        if tok.endswith("n't") and tok not in _UNSPLIT_CONTRACTIONS:
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
