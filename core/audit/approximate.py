"""Close pairs beyond a size: an approximate nearest-neighbour index (faiss HNSW), its recall against exact search measured.

Exact search (:mod:`core.audit.neighbours`) is bounded in memory but
quadratic in time.  From :data:`APPROX_FROM` passages (or when asked) the
audit asks a faiss HNSW index (inner product on unit rows, i.e. cosine) for
each passage's ``k`` nearest neighbours and keeps those above the threshold;
each kept pair's cosine is then computed exactly, as the exact path does.  A
passage with more than ``k`` neighbours above the threshold, or one the graph
search misses, loses pairs, so :func:`recall_against_exact` measures recall on
a seeded sample of passages (their exact neighbours above the threshold,
found by one product each against every passage) and the audit prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.audit.neighbours import ClosePairs, TooManyPairs
from core.stats.similarity import cos_sim_units, unit_rows

APPROX_FROM = 200_000
DEFAULT_K = 32
RECALL_SAMPLE = 1_000
_HNSW_LINKS = 32


@dataclass(frozen=True)
class SearchReport:
    """How close pairs were found: ``exact``, or ``approximate`` with its recall against exact on a sample."""

    method: str
    k: int = 0
    recall: float = float("nan")
    sample: int = 0
    exact_pairs_in_sample: int = 0

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "k": self.k,
            "recall": None if np.isnan(self.recall) else self.recall,
            "sample": self.sample,
            "exact_pairs_in_sample": self.exact_pairs_in_sample,
        }


def approximate_pairs(vectors: np.ndarray, threshold: float, *, k: int = DEFAULT_K, max_pairs: int = 2_000_000) -> ClosePairs:
    """Pairs above ``threshold`` among each row's ``k`` approximate nearest neighbours (faiss HNSW), highest cosine first.

    The graph is built the same way every time (faiss's HNSW seeds its level generator itself).

    Raises:
        ValueError: fewer than two rows, k below 1, a threshold out of range.
        TooManyPairs: more than ``max_pairs`` pairs.
    """
    arr = np.asarray(vectors)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"need an (n, d) matrix with n >= 2, got shape {arr.shape}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not np.isfinite(threshold) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    import faiss

    unit = unit_rows(arr)
    index = faiss.IndexHNSWFlat(unit.shape[1], _HNSW_LINKS, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 80
    index.hnsw.efSearch = max(64, 2 * k)
    index.add(np.ascontiguousarray(unit, dtype=np.float32))
    _, neighbours = index.search(np.ascontiguousarray(unit, dtype=np.float32), min(k + 1, arr.shape[0]))
    rows = np.repeat(np.arange(arr.shape[0]), neighbours.shape[1])
    cols = neighbours.reshape(-1)
    keep = (cols >= 0) & (cols != rows)
    low, high = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs = np.unique(np.stack([low, high], axis=1), axis=0) if low.size else np.zeros((0, 2), dtype=np.int64)
    cosine = np.clip(np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]]), -1.0, 1.0) if len(pairs) else np.zeros(0)
    above = cosine > threshold
    i, j, c = pairs[above, 0].astype(np.int64), pairs[above, 1].astype(np.int64), cosine[above].astype(np.float64)
    if i.size > max_pairs:
        raise TooManyPairs(f"more than {max_pairs:,} pairs score above {threshold:g}; raise the threshold")
    order = np.lexsort((j, i, -c))
    return ClosePairs(i[order], j[order], c[order])


def recall_against_exact(
    vectors: np.ndarray, found: ClosePairs, threshold: float, *, sample: int = RECALL_SAMPLE, seed: int = 0
) -> tuple[float, int, int]:
    """Recall of ``found`` against exact search on a seeded sample of rows: (recall, rows sampled, exact pairs touching them).

    Every pair above the threshold that touches a sampled row is found exactly
    (one product of the sampled rows with every row); recall is the share of
    them in ``found``.  NaN when the sample touches no close pair.
    """
    unit = unit_rows(np.asarray(vectors))
    n = unit.shape[0]
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    exact: set[tuple[int, int]] = set()
    for start in range(0, rows.size, 256):
        block = rows[start : start + 256]
        sims = cos_sim_units(unit[block], unit)
        r, cols = np.nonzero(sims > threshold)
        for a, b in zip(block[r].tolist(), cols.tolist(), strict=True):
            if a != b:
                exact.add((min(a, b), max(a, b)))
    if not exact:
        return float("nan"), int(rows.size), 0
    got = set(zip(found.i.tolist(), found.j.tolist(), strict=True))
    return len(exact & got) / len(exact), int(rows.size), len(exact)
