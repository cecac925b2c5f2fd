"""Exact near neighbours above a threshold, by blocked matrix products (never the whole n x n at once).

The upper triangle of the cosine matrix is computed one square tile at a
time (rows ``[r, r + side)`` against columns ``[c, c + side)`` with ``c >= r``),
so every unordered pair is seen once and a tile holds at most ``max_cells``
cosines whatever the corpus size (a side of 4,000 rows by default).  Square
tiles keep every product the same size.  Rows are normalised once
(:func:`core.stats.similarity.unit_rows`) and each tile is one product
(:func:`core.stats.similarity.cos_sim_units`), the project's one cosine;
float32 model vectors stay float32 (half the time and memory of float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.stats.similarity import cos_sim, cos_sim_units, unit_rows

# Cosines one block may hold at once: 16M float64 cells is 128 MB.
DEFAULT_MAX_CELLS = 16_000_000
DEFAULT_MAX_PAIRS = 2_000_000


class TooManyPairs(ValueError):
    """More close pairs than the audit keeps: the threshold is too low for this corpus."""


@dataclass(frozen=True)
class ClosePairs:
    """Every unordered pair (i < j) whose cosine is above the threshold.

    Attributes:
        i: first row index of each pair, shape (k,).
        j: second row index, shape (k,), ``i < j``.
        cosine: their cosine, shape (k,).
    """

    i: np.ndarray
    j: np.ndarray
    cosine: np.ndarray


def block_rows(n: int, max_cells: int = DEFAULT_MAX_CELLS) -> int:
    """How many rows one block of queries takes so that block x n cosines stay within ``max_cells``."""
    return max(1, min(n, max_cells // max(n, 1)))


def tile_side(n: int, max_cells: int = DEFAULT_MAX_CELLS) -> int:
    """The side of a square tile of at most ``max_cells`` cosines (at most n)."""
    return max(1, min(n, math.isqrt(max_cells)))


def close_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    progress: Callable[[int, int], None] | None = None,
) -> ClosePairs:
    """Every pair of rows whose cosine is strictly above ``threshold`` (as :func:`core.stats.rates.failure_rate` counts).

    Args:
        vectors: (n, d) embeddings, n >= 2, finite.
        threshold: in [-1, 1].
        max_cells: cosines one tile may hold (memory bound).
        max_pairs: refuse to collect more pairs than this.
        progress: called with (rows done, n) after each row of tiles.

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
    if max_cells < 1 or max_pairs < 0:
        raise ValueError("max_cells must be >= 1 and max_pairs >= 0")
    n = arr.shape[0]
    side = tile_side(n, max_cells)
    unit = unit_rows(arr)  # normalised and checked once; each tile is then one product (float32 vectors stay float32)
    found_i, found_j, found_c = [], [], []
    total = 0
    for row in range(0, n, side):
        rows = unit[row : row + side]
        for col in range(row, n, side):
            sims = cos_sim_units(rows, unit[col : col + side])
            local_i, local_j = np.nonzero(sims > threshold)
            if col == row:  # the diagonal tile: keep i < j only
                keep = local_j > local_i
                local_i, local_j = local_i[keep], local_j[keep]
            total += local_i.size
            if total > max_pairs:
                raise TooManyPairs(f"more than {max_pairs:,} pairs score above {threshold:g}; raise the threshold")
            found_i.append(local_i + row)
            found_j.append(local_j + col)
            found_c.append(sims[local_i, local_j])
        if progress is not None:
            progress(min(n, row + side), n)
    i = np.concatenate(found_i).astype(np.int64)
    j = np.concatenate(found_j).astype(np.int64)
    c = np.concatenate(found_c).astype(np.float64)
    order = np.lexsort((j, i, -c))
    return ClosePairs(i[order], j[order], c[order])


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
