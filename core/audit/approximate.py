"""Close pairs beyond a size: an approximate nearest-neighbour index (faiss HNSW), its recall against exact search measured.

Exact search (:mod:`core.audit.neighbours`) is bounded in memory but
quadratic in time.  From :data:`APPROX_FROM` passages (or when asked) the
audit asks a faiss HNSW index (inner product on unit rows, i.e. cosine) for
each passage's ``k`` nearest neighbours and keeps those above the threshold;
each kept pair's cosine is then computed exactly, as the exact path does.  A
passage with more than ``k`` neighbours above the threshold, or one the graph
search misses, loses pairs, so :func:`sample_against_exact` measures recall on
a seeded sample of passages (their exact neighbours above the threshold,
found by one product each against every passage), with a Wilson interval and
the neighbour cap apart from the index's misses, and the audit prints it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.audit.search import ClosePairs, ProgressFn, SearchReport, pairs_from_neighbours, wilson_interval
from core.stats.similarity import cos_sim_units, unit_rows

APPROX_FROM = 200_000
DEFAULT_K = 32
RECALL_SAMPLE = 1_000
_HNSW_LINKS = 32


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
    return pairs_from_neighbours(unit, neighbours, threshold, max_pairs)


def _neighbour_rows(unit: np.ndarray, rows: np.ndarray, threshold: float, k: int) -> tuple[set[tuple[int, int]], dict[int, float]]:
    """The exact close pairs touching ``rows`` (one product of each with every row) and each row's k-th neighbour cosine."""
    exact: set[tuple[int, int]] = set()
    kth: dict[int, float] = {}
    for start in range(0, rows.size, 256):
        block = rows[start : start + 256]
        sims = cos_sim_units(unit[block], unit)
        sims[np.arange(block.size), block] = -np.inf  # a row is not its own neighbour
        r, cols = np.nonzero(sims > threshold)
        for a, b in zip(block[r].tolist(), cols.tolist(), strict=True):
            exact.add((min(a, b), max(a, b)))
        if k:
            counts = np.sum(sims > threshold, axis=1)
            for pos in np.flatnonzero(counts > k):
                kth[int(block[pos])] = float(-np.partition(-sims[pos], k - 1)[k - 1])
    return exact, kth


def sample_against_exact(
    vectors: np.ndarray, found: ClosePairs, threshold: float, report: SearchReport, *, sample: int = RECALL_SAMPLE, seed: int = 0
) -> SearchReport:
    """``report`` with its recall against exact search on a seeded sample of rows, a Wilson interval, the cap apart.

    Every pair above the threshold that touches a sampled row is found exactly (one product of the sampled rows
    with every row); recall is the share of them in ``found``, with a Wilson 95% interval over those pairs.
    With ``report.k``, the pairs within the neighbour cap (among the k nearest of one of their ends: the other
    ends' neighbours are found the same way) and the index's recall of those are reported apart.
    """
    unit = unit_rows(np.asarray(vectors))
    n = unit.shape[0]
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    exact, kth = _neighbour_rows(unit, rows, threshold, report.k)
    if not exact:
        return replace(report, recall=float("nan"), sample=int(rows.size), exact_pairs_in_sample=0)
    got = set(zip(found.i.tolist(), found.j.tolist(), strict=True))
    hit = len(exact & got)
    low, high = wilson_interval(hit, len(exact))
    out = replace(
        report, recall=hit / len(exact), sample=int(rows.size), exact_pairs_in_sample=len(exact), recall_low=low, recall_high=high
    )
    if not report.k:
        return out
    sampled = set(rows.tolist())
    others = np.array(sorted({b if a in sampled else a for a, b in exact} - sampled), dtype=np.int64)
    kth.update(_neighbour_rows(unit, others, threshold, report.k)[1])
    cos = {p: float(unit[p[0]] @ unit[p[1]]) for p in exact}
    reach = {p for p in exact if cos[p] >= kth.get(p[0], -np.inf) or cos[p] >= kth.get(p[1], -np.inf)}
    crowded = sum(1 for r in rows.tolist() if r in kth)
    return replace(out, within_cap=len(reach), crowded=crowded, index_recall=len(reach & got) / len(reach) if reach else float("nan"))


class HnswSearch:
    """faiss HNSW as the audit's strategy (:class:`core.audit.search.NeighbourSearch`): each row's ``k`` nearest, kept above
    the threshold, measured against exact search on a seeded sample (:func:`sample_against_exact`)."""

    def __init__(self, k: int = DEFAULT_K, sample: int = RECALL_SAMPLE, seed: int = 0) -> None:
        self.k, self.sample, self.seed = k, sample, seed

    @property
    def method(self) -> str:
        return f"approximate (faiss HNSW, k={self.k})"

    def close_pairs(
        self, unit: np.ndarray, threshold: float, *, max_pairs: int = 2_000_000, progress: ProgressFn | None = None
    ) -> tuple[ClosePairs, SearchReport]:
        found = approximate_pairs(unit, threshold, k=self.k, max_pairs=max_pairs)
        report = sample_against_exact(unit, found, threshold, SearchReport(self.method, self.k), sample=self.sample, seed=self.seed)
        return found, report
