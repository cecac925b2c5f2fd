"""Lexical overlap: token Jaccard over subword pieces, word Jaccard over words (``core.words.overlap_words``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.words import overlap_words


def _jaccard(set_a: set[str], set_b: set[str]) -> float:
    union = set_a | set_b
    # Two empty token sets are the same (empty) sentence, so overlap is total.
    if not union:
        return 1.0
    return len(set_a & set_b) / len(union)


def _token_set(tokens: Sequence[str], name: str) -> set[str]:
    # A bare string is a Sequence[str] too, but Jaccard over its characters
    # is never what the caller meant.
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a sequence of tokens, not a string")
    token_set = set(tokens)
    if not all(isinstance(tok, str) for tok in token_set):
        raise TypeError(f"{name} must contain only strings")
    return token_set


def token_jaccard(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> float:
    """Jaccard overlap of two subword-token sets (OOV paper, Section 3.4).

    ``J(A, B) = |A ∩ B| / |A ∪ B|`` where ``A`` and ``B`` are the *sets* of
    tokens, so repeated tokens count once and order is ignored (an entity
    swap therefore scores 1.0). Tokens are compared exactly as the tokenizer
    produced them (e.g. ``"##mp"``), including case.

    Args:
        tokens_a: Tokens of the first sentence, length ``n_a``.
        tokens_b: Tokens of the second sentence, length ``n_b``.

    Returns:
        Overlap in ``[0, 1]``; 1.0 when both token lists are empty.

    Raises:
        TypeError: If an argument is a plain string or holds non-strings.
    """
    return _jaccard(_token_set(tokens_a, "tokens_a"), _token_set(tokens_b, "tokens_b"))


def word_jaccard(text_a: str, text_b: str) -> float:
    """Jaccard overlap of the word sets of two texts.

    ``J = |W_a ∩ W_b| / |W_a ∪ W_b|`` with ``W = set(overlap_words(text))``.
    A tokenizer-free companion to :func:`token_jaccard`.

    Args:
        text_a: First sentence.
        text_b: Second sentence.

    Returns:
        Overlap in ``[0, 1]``; 1.0 when neither text has a word token.

    Raises:
        TypeError: If an argument is not a string.
    """
    return _jaccard(set(overlap_words(text_a)), set(overlap_words(text_b)))


def top_k_overlap(got: Sequence[Sequence[int]] | np.ndarray, exact: Sequence[Sequence[int]] | np.ndarray, k: int) -> np.ndarray:
    """Each query's share of an exact top ``k`` that another ranking's top ``k`` holds, shape (q,): recall@k against exact.

    The one top-k overlap of every ranking compared with exact search (a store's search, an index setting,
    an approximate index).  ``got[q]`` and ``exact[q]`` are ranked passage indices, best first; only their first
    ``k`` count (a ranking that returned fewer holds what it returned), divided by the size of exact's top ``k``.

    Raises:
        ValueError: ``k`` below 1, or rankings of different lengths.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(got) != len(exact):
        raise ValueError(f"{len(got)} rankings against {len(exact)} exact ones")
    return np.array([len(set(list(g)[:k]) & set(e := list(x)[:k])) / len(e) for g, x in zip(got, exact, strict=True)], dtype=float)
