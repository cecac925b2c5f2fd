"""Exact near neighbours above a threshold, by blocked matrix products (never the whole n x n at once).

The upper triangle of the cosine matrix is computed one square tile at a
time (rows ``[r, r + side)`` against columns ``[c, c + side)`` with ``c >= r``),
so every unordered pair is seen once and a tile holds at most ``max_cells``
cosines whatever the corpus size (a side of 4,000 rows by default).  Rows are
normalised once, block by block into one float32 array (``unit_float_rows``:
never a float64 copy of the whole matrix).  For wide vectors each tile is
first an upper bound of its cosines from 129 numbers per row instead of 384
(``bound_rows``: the main directions plus the length of the rest), and only
the pairs whose bound reaches the threshold get their exact cosine
(:func:`core.stats.similarity.pairwise_cos_sim`, the project's one cosine);
the result is the exact search's, at a third of the work.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from core.audit.search import ClosePairs, ProgressFn, SearchReport, TooManyPairs
from core.stats.similarity import cos_sim, cos_sim_units, pairwise_cos_sim, unit_rows

__all__ = ["ClosePairs", "ExactSearch", "TooManyPairs", "close_pairs", "top_k"]

# Cosines one block may hold at once: 16M float64 cells is 128 MB.
DEFAULT_MAX_CELLS = 16_000_000
DEFAULT_MAX_PAIRS = 2_000_000
# The bound's main directions: at 128 of MiniLM's 384, about 1 pair in 10,000 passes a 0.8 bound on real passages.
KEEP_DIMS = 128
BASIS_SAMPLE = 4_096  # rows whose SVD gives the main directions
BOUND_MARGIN = 1e-3
MAX_PASSING = 0.02  # share of a tile's pairs passing the bound above which the tile is computed whole


def block_rows(n: int, max_cells: int = DEFAULT_MAX_CELLS) -> int:
    """How many rows one block of queries takes so that block x n cosines stay within ``max_cells``."""
    return max(1, min(n, max_cells // max(n, 1)))


def tile_side(n: int, max_cells: int = DEFAULT_MAX_CELLS) -> int:
    """The side of a square tile of at most ``max_cells`` cosines (at most n)."""
    return max(1, min(n, math.isqrt(max_cells)))


def unit_float_rows(vectors: np.ndarray, side: int) -> np.ndarray:
    """:func:`core.stats.similarity.unit_rows` of ``vectors`` one block of ``side`` rows at a time, into one array.

    The whole matrix is never copied to float64 (``unit_rows`` works in float64 inside): a float32 matrix costs
    one float32 copy plus one block, where a single ``unit_rows`` call held about five float64 copies at once.

    Raises:
        ValueError: a row that is not finite (as ``unit_rows``).
    """
    arr = np.asarray(vectors)
    unit = np.empty(arr.shape, dtype=np.float32 if arr.dtype == np.float32 else np.float64)
    for start in range(0, arr.shape[0], side):
        unit[start : start + side] = unit_rows(arr[start : start + side])
    return unit


def bound_rows(unit: np.ndarray, keep: int, side: int) -> np.ndarray:
    """Each unit row as ``keep`` coordinates on the corpus's main directions plus the length of the rest, (n, keep + 1).

    For unit rows a, b and an orthonormal basis P: ``a . b = (P'a).(P'b) + r_a . r_b <= (P'a).(P'b) + |r_a| |r_b|``
    (Cauchy-Schwarz on the residuals), and that bound is the plain dot product of these rows.  Any orthonormal
    basis gives a true bound; the main directions of a sample of the rows make it tight, so few pairs pass.
    """
    n = unit.shape[0]
    sample = unit[:: max(1, n // BASIS_SAMPLE)].astype(np.float64)
    # The Gram matrix's eigenvectors are the sample's main directions (an SVD of the sample itself is 10x slower here).
    basis = np.linalg.eigh(sample.T @ sample)[1][:, ::-1][:, :keep]  # (d, keep), orthonormal columns
    out = np.empty((n, keep + 1), dtype=unit.dtype)
    for start in range(0, n, side):
        block = unit[start : start + side].astype(np.float64)
        coords = block @ basis
        out[start : start + side, :keep] = coords
        out[start : start + side, keep] = np.linalg.norm(block - coords @ basis.T, axis=1)
    return out


def close_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: Callable[[int, int], None] | None = None,
    keep_dims: int = KEEP_DIMS,
) -> ClosePairs:
    """Every pair of rows whose cosine is strictly above ``threshold`` (as :func:`core.stats.rates.failure_rate` counts).

    Exact, in two steps per tile when the vectors are wide (d > 2 ``keep_dims``): an upper bound of every
    cosine from ``keep_dims + 1`` numbers per row (:func:`bound_rows`, a third of the work at d = 384 and
    ``keep_dims`` 128), then the exact cosine (:func:`core.stats.similarity.pairwise_cos_sim`) of the few pairs whose
    bound reaches the threshold.  A tile where too many pairs pass (a low threshold) is computed whole instead.

    Args:
        vectors: (n, d) embeddings, n >= 2, finite.
        threshold: in [-1, 1].
        max_cells: cosines one tile may hold (memory bound).
        max_pairs: refuse to collect more pairs than this.
        progress: called with (rows done, n) after each row of tiles.
        keep_dims: main directions the bound keeps (0: no bound, every tile computed whole).

    Returns:
        The pairs, sorted by cosine, highest first (ties by i, then j).

    Raises:
        ValueError: fewer than two rows, a bad threshold or bound.
        TooManyPairs: more than ``max_pairs`` pairs above the threshold.
    """
    arr = np.asarray(vectors)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"need an (n, d) matrix with n >= 2, got shape {arr.shape}")
    if not np.isfinite(threshold) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    if max_cells < 1 or max_pairs < 0 or keep_dims < 0:
        raise ValueError("max_cells must be >= 1, max_pairs and keep_dims >= 0")
    n = arr.shape[0]
    side = tile_side(n, max_cells)
    unit = unit_float_rows(arr, side)  # normalised and checked once; float32 vectors stay float32
    bound = bound_rows(unit, keep_dims, side) if keep_dims > 0 and 2 * keep_dims < arr.shape[1] else None
    found_i, found_j, found_c = [], [], []
    total = 0
    for row in range(0, n, side):
        for col in range(row, n, side):
            local_i, local_j, cosines = _tile_pairs(unit, bound, row, col, side, threshold)
            total += local_i.size
            if total > max_pairs:
                raise TooManyPairs(f"more than {max_pairs:,} pairs score above {threshold:g}; raise the threshold")
            found_i.append(local_i + row)
            found_j.append(local_j + col)
            found_c.append(cosines)
        if progress is not None:
            progress(min(n, row + side), n)
    i = np.concatenate(found_i).astype(np.int64)
    j = np.concatenate(found_j).astype(np.int64)
    c = np.concatenate(found_c).astype(np.float64)
    order = np.lexsort((j, i, -c))
    return ClosePairs(i[order], j[order], c[order])


class ExactSearch:
    """The exact strategy (:class:`core.audit.search.NeighbourSearch`): every pair above the threshold, by :func:`close_pairs`."""

    def close_pairs(
        self, unit: np.ndarray, threshold: float, *, max_pairs: int = DEFAULT_MAX_PAIRS, progress: ProgressFn | None = None
    ) -> tuple[ClosePairs, SearchReport]:
        return close_pairs(unit, threshold, max_pairs=max_pairs, progress=progress), SearchReport("exact")


def _tile_pairs(
    unit: np.ndarray, bound: np.ndarray | None, row: int, col: int, side: int, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, cosine) of one tile's pairs above ``threshold``, indices local to the tile, i < j on the diagonal."""
    rows, cols = slice(row, row + side), slice(col, col + side)
    if bound is not None:
        # Float32 rounding of the bound is far below the margin: no pair above the threshold is ever dropped here.
        upper = bound[rows] @ bound[cols].T
        local_i, local_j = _above(upper, threshold - BOUND_MARGIN)
        if local_i.size <= upper.size * MAX_PASSING:
            if col == row:
                keep = local_j > local_i
                local_i, local_j = local_i[keep], local_j[keep]
            cosines = pairwise_cos_sim(unit[local_i + row], unit[local_j + col]) if local_i.size else np.zeros(0)
            above = cosines > threshold
            return local_i[above], local_j[above], cosines[above]
    sims = cos_sim_units(unit[rows], unit[cols])
    local_i, local_j = _above(sims, threshold)
    if col == row:  # the diagonal tile: keep i < j only
        keep = local_j > local_i
        local_i, local_j = local_i[keep], local_j[keep]
    return local_i, local_j, sims[local_i, local_j]


def _above(tile: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of the cells strictly above ``threshold``, in row-major order.

    Close pairs are rare, so each row's maximum (one fast reduction) picks the few rows worth searching
    cell by cell: ``np.nonzero`` over a whole tile cost more than the product that made it.
    """
    rows = np.flatnonzero(tile.max(axis=1) > threshold)
    local_i, local_j = np.nonzero(tile[rows] > threshold)
    return rows[local_i], local_j


def top_k(queries: np.ndarray, passages: np.ndarray, k: int, *, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[np.ndarray, np.ndarray]:
    """Each query's ``k`` most similar passages, best first (ties by passage index), in blocks of queries.

    Args:
        queries: (q, d) embeddings.
        passages: (n, d) embeddings, n >= 1.
        k: how many, >= 1 (capped at n).

    Returns:
        (indices, cosines), each (q, min(k, n)).

    Raises:
        ValueError: empty passages or k below 1.
    """
    q_arr, p_arr = np.asarray(queries), np.asarray(passages)
    if p_arr.ndim != 2 or p_arr.shape[0] < 1 or q_arr.ndim != 2:
        raise ValueError("need (q, d) queries and (n, d) passages with n >= 1")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    n = p_arr.shape[0]
    k = min(k, n)
    rows = block_rows(n, max_cells)
    out_i = np.zeros((q_arr.shape[0], k), dtype=np.int64)
    out_c = np.zeros((q_arr.shape[0], k), dtype=np.float64)
    for start in range(0, q_arr.shape[0], rows):
        sims = cos_sim(q_arr[start : start + rows], p_arr)
        for r, row in enumerate(sims):
            # A stable sort on the negated cosine: equal cosines keep passage order, so the result is exact and repeatable.
            best = np.argsort(-row, kind="stable")[:k]
            out_i[start + r], out_c[start + r] = best, row[best]
    return out_i, out_c
