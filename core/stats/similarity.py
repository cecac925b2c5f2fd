"""Cosine similarity: ``cos_sim`` for every row of one matrix against every row of another, ``pairwise_cos_sim`` for aligned rows."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.stats._validation import _as_2d


def _normalize_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector has no direction; dividing by 1 keeps it zero, so its
    # cosine with anything is 0 instead of nan.
    return matrix / np.where(norms == 0.0, 1.0, norms)


def cos_sim(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cosine similarity between every row of ``a`` and every row of ``b``.

    ``cos(a_i, b_j) = a_i . b_j / (||a_i|| ||b_j||)``, computed on
    L2-normalized rows. A 1-D input is treated as a single row, as in
    ``sentence_transformers.util.cos_sim``.

    Args:
        a: Embeddings of shape ``(n, d)`` (or ``(d,)``).
        b: Embeddings of shape ``(m, d)`` (or ``(d,)``).

    Returns:
        Matrix of shape ``(n, m)`` with values in ``[-1, 1]``. Rows that are
        all zeros give similarity 0 with everything.

    Raises:
        ValueError: If an input is empty, not 1-D/2-D, contains NaN/inf, or
            the embedding dimensions differ.
    """
    a_arr = _as_2d(a, "a")
    b_arr = _as_2d(b, "b")
    if a_arr.shape[1] != b_arr.shape[1]:
        raise ValueError(
            f"a and b must have the same embedding dimension, "
            f"got {a_arr.shape[1]} and {b_arr.shape[1]}"
        )
    sims = _normalize_rows(a_arr) @ _normalize_rows(b_arr).T
    # Rounding can push identical vectors to 1.0000000000000002, which would
    # count as "above" a threshold of 1.0 and break arccos downstream.
    return np.clip(sims, -1.0, 1.0)


def pairwise_cos_sim(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cosine similarity of aligned rows: ``cos(a_i, b_i)`` for each ``i``.

    Equivalent to ``np.diag(cos_sim(a, b))`` without building the ``(n, n)``
    matrix.

    Args:
        a: Embeddings of shape ``(n, d)``.
        b: Embeddings of shape ``(n, d)``.

    Returns:
        Array of shape ``(n,)`` with values in ``[-1, 1]``; zero rows give 0.

    Raises:
        ValueError: If an input is empty, not 1-D/2-D (1-D counts as one
            row), contains NaN/inf, or the shapes differ.
    """
    a_arr = _as_2d(a, "a")
    b_arr = _as_2d(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must have the same shape (n, d), "
            f"got {a_arr.shape} and {b_arr.shape}"
        )
    sims = np.einsum("ij,ij->i", _normalize_rows(a_arr), _normalize_rows(b_arr))
    return np.clip(sims, -1.0, 1.0)


def unit_rows(matrix: ArrayLike) -> np.ndarray:
    """Rows scaled to length 1 once, checked once, for many :func:`cos_sim_units` calls (a zero row stays zero).

    A float32 matrix (what models return) stays float32, halving the memory and
    the time of every product after; anything else becomes float64.

    Raises:
        ValueError: as :func:`cos_sim` for an empty, non-2-D or non-finite input.
    """
    dtype = np.float32 if np.asarray(matrix).dtype == np.float32 else np.float64
    arr = _as_2d(matrix, "matrix").astype(dtype, copy=False)
    return _normalize_rows(arr).astype(dtype, copy=False)


def cos_sim_units(a_unit: np.ndarray, b_unit: np.ndarray) -> np.ndarray:
    """:func:`cos_sim` of rows already made unit by :func:`unit_rows`: the product, clipped to [-1, 1] in place.

    No checks: the inner call of a loop over blocks of the same two checked matrices.
    """
    sims = a_unit @ b_unit.T
    return np.clip(sims, -1.0, 1.0, out=sims)
