"""Cosine similarity: ``cos_sim`` for every row of one matrix against every row of another, ``pairwise_cos_sim`` for aligned rows.

``normalize_rows`` is the one safe normalisation of fresh vectors (scaled by
their largest entry first, in float64; a zero or non-finite row refused):
the backends and the explanations' forward pass use it before a vector is
cached or compared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from core.stats._validation import _as_2d

# How far a fresh or cached vector's L2 norm may stray from 1 and still count as unit (float32 rounding is ~1e-7).
UNIT_NORM_TOLERANCE = 1e-3


class UnnormalizableRows(ValueError):
    """Rows that have no direction: all zero, or holding NaN or an infinity.

    Attributes:
        rows: their indices, in order.
    """

    def __init__(self, rows: Sequence[int], message: str) -> None:
        super().__init__(message)
        self.rows = tuple(int(r) for r in rows)


def _unit_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float64 rows scaled to unit L2 norm, mask of rows that cannot be: zero or not finite).

    Each row is divided by its largest absolute entry before its norm is
    taken, so entries near 1e19 (whose squares overflow float32) or 1e-40
    (whose squares underflow) keep their direction; a row that cannot be
    scaled is left as zeros.
    """
    rows = np.asarray(matrix, dtype=np.float64)
    finite: np.ndarray = np.asarray(np.isfinite(rows).all(axis=1))
    safe = np.where(finite[:, None], rows, 0.0)
    peak = np.abs(safe).max(axis=1, keepdims=True) if safe.shape[1] else np.zeros((safe.shape[0], 1))
    scaled = safe / np.where(peak > 0.0, peak, 1.0)
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    bad = ~finite | (norms[:, 0] == 0.0)
    return scaled / np.where(norms > 0.0, norms, 1.0), bad


def normalize_rows(matrix: ArrayLike) -> np.ndarray:
    """Each row scaled to unit L2 norm, safely: the one normalisation of fresh vectors.

    The row is first divided by its largest absolute entry, then by its norm,
    in float64, so vectors whose entries overflow or underflow when squared
    in float32 (about 1e19 and up, or 1e-40) keep their direction instead of
    becoming zero vectors.

    Args:
        matrix: vectors of shape ``(n, d)``.

    Returns:
        ``(n, d)`` float64 rows of unit norm.

    Raises:
        UnnormalizableRows: a row is all zeros or holds NaN or an infinity
            (``rows`` names them): it has no direction, and no cosine of it means anything.
        ValueError: ``matrix`` is not 2-D.
    """
    rows = np.asarray(matrix, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n, d), got shape {rows.shape}")
    unit, bad = _unit_rows(rows)
    if bad.any():
        which = np.flatnonzero(bad)
        zero = [int(i) for i in which if np.isfinite(rows[i]).all()]
        kind = "all zeros" if len(zero) == len(which) else ("not finite" if not zero else "all zeros or not finite")
        raise UnnormalizableRows(
            [int(i) for i in which],
            f"{len(which)} of {len(rows)} vector(s) are {kind} (row(s) {', '.join(map(str, which[:5]))}): they have no direction",
        )
    return unit


def unit_checked(matrix: ArrayLike, tolerance: float = UNIT_NORM_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """A backend's fresh vectors with their norm checked: rows already unit kept as they are, the others normalised.

    Every cosine here is the dot product of unit rows, so a backend that
    returns vectors of another length (a plugin that forgets to normalise)
    would otherwise report dot products; its rows are normalised by
    :func:`normalize_rows` and their norms returned so the caller can say so.

    Args:
        matrix: ``(n, d)`` vectors.
        tolerance: largest ``| ||row|| - 1 |`` that counts as unit.

    Returns:
        ``(rows, norms)``: ``(n, d)`` float32 unit rows, and the norms of the rows that were not unit (empty when all were).

    Raises:
        UnnormalizableRows: a row that had to be normalised is all zeros or not finite.
        ValueError: ``matrix`` is not 2-D.
    """
    rows = np.asarray(matrix)
    if rows.ndim != 2:
        raise ValueError(f"matrix must be 2-D (n, d), got shape {rows.shape}")
    wide = rows.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(wide, axis=1) if rows.shape[1] else np.zeros(rows.shape[0])
    off = ~(np.abs(norms - 1.0) <= tolerance)  # NaN norms count as off, and are refused below
    if not off.any():
        return rows.astype(np.float32, copy=False), norms[:0]
    out = rows.astype(np.float32, copy=True)
    where = np.flatnonzero(off)
    try:
        fixed = normalize_rows(wide[off])
    except UnnormalizableRows as exc:  # named by their place in ``matrix``, not in the subset
        raise UnnormalizableRows([int(where[i]) for i in exc.rows], str(exc)) from None
    out[off] = fixed.astype(np.float32)
    return out, norms[off]


def _normalize_rows(matrix: np.ndarray) -> np.ndarray:
    # A zero vector has no direction; it stays zero, so its cosine with anything
    # is 0 instead of nan (inputs here are already checked finite).
    return _unit_rows(matrix)[0]


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
        raise ValueError(f"a and b must have the same embedding dimension, got {a_arr.shape[1]} and {b_arr.shape[1]}")
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
        raise ValueError(f"a and b must have the same shape (n, d), got {a_arr.shape} and {b_arr.shape}")
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
