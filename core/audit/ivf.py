"""Close pairs of a million passages on one machine: k-means cells (an inverted file), each row compared only with the rows
of the few cells nearest it, by blocked matrix products; recall against exact search measured on a sample.

Exact search (:mod:`core.audit.neighbours`) is quadratic: 5 x 10^11 cosines
at a million rows.  Here a sample of the rows trains
``cells`` k-means centroids (faiss's k-means), every row gets a *home* (its
nearest centroid) and a *probe* list (its ``probe`` nearest centroids, home
first), and a pair (x, y) is a candidate when y's home is on x's probe list
or x's home on y's: faiss's IVF search with ``nprobe``, made symmetric.  The
work is grouped by cell (:func:`cell_pairs`): the rows at home in a cell
against each other (upper triangle) and against the *visitors* (rows that
probe the cell from elsewhere), one float32 matrix product per block, so the
time is the BLAS's.  A pair that both rows' probes reach is seen twice and
kept once, by a rule each cell decides alone (:func:`_keep_once`); that is
what lets a cluster run the cells on many machines (:mod:`core.audit.ray_audit`)
and still return each pair exactly once.  Each candidate near the threshold
has its cosine recomputed in float64 (:func:`core.stats.similarity.pairwise_cos_sim`),
so no pair at or below the threshold is listed.

A pair whose rows' probes both miss each other's home is lost: recall is
below 1 by construction, so :func:`sampled_recall` finds, for a seeded
sample of rows, every pair above the threshold exactly (one product of the
sample with every row, block by block) and reports the share found, with a
Clopper-Pearson interval.  ``docs/performance.md`` gives the measured time,
memory and recall at a million rows and why this beat faiss's own
``range_search`` and HNSW here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from core.audit.neighbours import ClosePairs, TooManyPairs
from core.audit.search import SearchReport
from core.stats.similarity import pairwise_cos_sim

ProgressFn = Callable[[float, str], None]

DEFAULT_PROBE = 8
RECALL_SAMPLE = 2_000
MIN_TRAIN_PER_CELL = 40  # faiss's k-means warns below 39 training rows per centroid
TRAIN_PER_CELL = 40  # enough for faiss (it warns below 39); k-means on more rows cost as much as the search at a million
KMEANS_ITERATIONS = 10
# Candidates within this of the threshold in float32 get their cosine again in float64 (float32 error is ~1e-6).
RECHECK_MARGIN = 1e-4
_BLOCK_ROWS = 4_096  # rows of one side of a product: a block of cosines stays under 64 MB
_SEED = 0


def default_cells(n: int) -> int:
    """Cells for ``n`` rows: about 2 sqrt(n) (2,000 at a million), balancing assignment against comparison.

    Assigning rows costs n x cells products and comparing n x probe x n / cells; with ``probe`` about 8 the sum
    is least near sqrt(8 n); fewer, larger cells keep the products big enough for the BLAS to run at full speed.
    """
    return max(1, min(n // MIN_TRAIN_PER_CELL, round(2 * math.sqrt(n))))


@dataclass(frozen=True)
class Partition:
    """Each row's home cell and probe list, and the rows by cell.

    Attributes:
        centroids: (cells, d) float32 unit centroids.
        home: (n,) int32, each row's nearest centroid.
        probe: (n, p) int32, each row's p nearest centroids, nearest (its home) first.
        home_order: (n,) int64, rows sorted by home cell; cell c's rows are ``home_order[home_starts[c]:home_starts[c+1]]``.
        home_starts: (cells + 1,) int64.
        visit_order: (v,) int64, rows that probe a cell they are not at home in, sorted by that cell.
        visit_starts: (cells + 1,) int64, as ``home_starts`` for ``visit_order``.
    """

    centroids: np.ndarray
    home: np.ndarray
    probe: np.ndarray
    home_order: np.ndarray
    home_starts: np.ndarray
    visit_order: np.ndarray
    visit_starts: np.ndarray

    @property
    def cells(self) -> int:
        return int(self.centroids.shape[0])

    def at_home(self, cell: int) -> np.ndarray:
        """Rows whose home is ``cell``, ascending."""
        return self.home_order[self.home_starts[cell] : self.home_starts[cell + 1]]

    def visiting(self, cell: int) -> np.ndarray:
        """Rows that probe ``cell`` from another home, ascending."""
        return self.visit_order[self.visit_starts[cell] : self.visit_starts[cell + 1]]

    def work(self) -> np.ndarray:
        """(cells,) float64: cosines each cell computes (home x home / 2 + home x visitors), for progress and scheduling."""
        homes = np.diff(self.home_starts).astype(np.float64)
        visits = np.diff(self.visit_starts).astype(np.float64)
        return homes * (homes / 2 + visits)


@dataclass(frozen=True)
class Recall:
    """Recall of found pairs against exact search on a sample of rows.

    Attributes:
        recall: share of the exact pairs touching a sampled row that were found (NaN when there are none).
        low: lower end of its 95% Clopper-Pearson interval.
        high: upper end.
        sample: rows sampled.
        exact_pairs: pairs above the threshold touching a sampled row (the denominator).
    """

    recall: float
    low: float
    high: float
    sample: int
    exact_pairs: int

    def as_dict(self) -> dict:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 5)

        return {
            "recall": clean(self.recall),
            "recall_low": clean(self.low),
            "recall_high": clean(self.high),
            "sample": self.sample,
            "exact_pairs_in_sample": self.exact_pairs,
        }


@dataclass(frozen=True)
class IvfReport:
    """How the cells searched: their number, the probe, the rows compared, the time of each step, and recall.

    Attributes:
        method: a short label, e.g. ``ivf (2000 cells, probe 8)``.
        cells: k-means cells.
        probe: cells each row is compared with.
        comparisons: cosines computed in the search (the exact search computes n (n - 1) / 2).
        candidates_rechecked: pairs near the threshold recomputed in float64.
        seconds: step -> wall seconds (``partition``: train and assign, ``search``, ``recall``).
        recall: the sampled recall, or None when not measured.
        cpu_seconds: step -> CPU seconds of the process (all threads): the cost whatever else shares the cores.
    """

    method: str
    cells: int
    probe: int
    comparisons: int
    candidates_rechecked: int
    seconds: dict[str, float]
    recall: Recall | None = None
    cpu_seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "method": self.method,
            "cells": self.cells,
            "probe": self.probe,
            "comparisons": self.comparisons,
            "candidates_rechecked": self.candidates_rechecked,
            "seconds": {k: round(v, 2) for k, v in self.seconds.items()},
            "cpu_seconds": {k: round(v, 2) for k, v in self.cpu_seconds.items()},
            **(self.recall.as_dict() if self.recall is not None else {}),
        }


def check_unit(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as C-contiguous float32 unit rows, normalised in place block by block when they are float32 already.

    Never a float64 copy of the whole matrix: a million 384-d rows are 1.5 GB in float32.

    Raises:
        ValueError: not a 2-D matrix of at least two rows, or a row that is zero or not finite.
    """
    arr = np.asarray(vectors)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(f"need an (n, d) matrix with n >= 2, got shape {arr.shape}")
    unit = np.ascontiguousarray(arr, dtype=np.float32)
    if not unit.flags.writeable:  # Arrow's buffers, for one: normalised in a copy
        unit = unit.copy()
    for start in range(0, unit.shape[0], 65_536):
        block = unit[start : start + 65_536]
        norms = np.linalg.norm(block.astype(np.float64), axis=1)
        bad = ~np.isfinite(norms) | (norms == 0)
        if bad.any():
            raise ValueError(f"row {start + int(np.flatnonzero(bad)[0])} is zero or not finite: it has no direction")
        block /= norms[:, None].astype(np.float32)
    return unit


def training_rows(n: int, cells: int, seed: int = _SEED) -> np.ndarray:
    """The rows (ascending) whose vectors train the centroids: a seeded sample of ``TRAIN_PER_CELL`` per cell."""
    return np.sort(np.random.default_rng(seed).choice(n, size=min(n, cells * TRAIN_PER_CELL), replace=False))


def train_centroids(sample: np.ndarray, cells: int, seed: int = _SEED) -> np.ndarray:
    """(cells, d) float32 unit centroids: spherical k-means (faiss) of the sample's unit rows."""
    import faiss

    kmeans = faiss.Kmeans(sample.shape[1], cells, niter=KMEANS_ITERATIONS, spherical=True, seed=seed, verbose=False)
    kmeans.train(np.ascontiguousarray(sample, dtype=np.float32))
    return np.ascontiguousarray(kmeans.centroids, dtype=np.float32)


def assign(unit: np.ndarray, centroids: np.ndarray, probe: int) -> np.ndarray:
    """(m, probe) int32: each unit row's ``probe`` nearest centroids, nearest first (its home).

    faiss's exact k-nearest search (BLAS products and a heap per row), 3.5 times numpy's ``argpartition`` here.
    """
    import faiss

    _, top = faiss.knn(np.ascontiguousarray(unit, dtype=np.float32), centroids, probe, metric=faiss.METRIC_INNER_PRODUCT)
    return top.astype(np.int32)


def partition(
    unit: np.ndarray, cells: int | None = None, probe: int = DEFAULT_PROBE, *, seed: int = _SEED, progress: ProgressFn | None = None
) -> Partition:
    """Train ``cells`` k-means centroids on a seeded sample of ``unit`` and give every row its home and probe list.

    Args:
        unit: (n, d) float32 unit rows (:func:`check_unit`).
        cells: k-means cells (None: :func:`default_cells`).
        probe: cells each row probes, its home included, 1 <= probe <= cells.
        seed: the training sample's and k-means's seed.
        progress: (fraction of this step, message) as rows are assigned.

    Raises:
        ValueError: cells or probe out of range.
    """
    n = unit.shape[0]
    cells = default_cells(n) if cells is None else cells
    if not 1 <= cells <= n:
        raise ValueError(f"cells must be between 1 and the number of rows ({n}), got {cells}")
    if not 1 <= probe <= cells:
        raise ValueError(f"probe must be between 1 and cells ({cells}), got {probe}")
    centroids = train_centroids(unit[training_rows(n, cells, seed)], cells, seed)
    probes = np.empty((n, probe), dtype=np.int32)
    step = max(1, _BLOCK_ROWS * 16 // max(1, cells // 256))
    eta = Eta(n)
    for start in range(0, n, step):
        probes[start : start + step] = assign(unit[start : start + step], centroids, probe)
        if progress is not None:
            done = min(n, start + step)
            progress(done / n, f"assigned {done:,}/{n:,} rows to {cells:,} cells; {eta.left(done)}")
    home = probes[:, 0].copy()
    home_order = np.argsort(home, kind="stable").astype(np.int64)
    home_starts = np.searchsorted(home[home_order], np.arange(cells + 1)).astype(np.int64)
    visitors = np.repeat(np.arange(n, dtype=np.int64), probe - 1)
    visited = probes[:, 1:].reshape(-1)
    order = np.argsort(visited, kind="stable")  # stable: each cell's visitors stay in ascending row order
    visit_order = visitors[order]
    visit_starts = np.searchsorted(visited[order], np.arange(cells + 1)).astype(np.int64)
    return Partition(centroids, home, probes, home_order, home_starts, visit_order, visit_starts)


@dataclass(frozen=True)
class CellPairs:
    """One cell's close pairs as positions in what the cell was handed.

    Attributes:
        home: (k,) position of each pair's home row among the cell's home rows.
        other: (k,) position of its other row, among the home rows or the visitors.
        visitor: (k,) bool, whether ``other`` is a visitor's position.
        cosine: (k,) float64 cosines, all above the threshold.
        rechecked: candidates near the threshold recomputed in float64.
    """

    home: np.ndarray
    other: np.ndarray
    visitor: np.ndarray
    cosine: np.ndarray
    rechecked: int

    def keys(self, home_keys: np.ndarray, visitor_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(key of each pair's home row, key of its other row), from the keys the cell was handed."""
        other = np.empty(self.other.size, dtype=np.result_type(home_keys, visitor_keys))
        other[self.visitor] = visitor_keys[self.other[self.visitor]]
        other[~self.visitor] = home_keys[self.other[~self.visitor]]
        return home_keys[self.home], other


def cell_pairs(
    home_vectors: np.ndarray,
    home_rows: np.ndarray,
    home_probe: np.ndarray,
    visitor_vectors: np.ndarray,
    visitor_rows: np.ndarray,
    visitor_home: np.ndarray,
    threshold: float,
) -> CellPairs:
    """One cell's close pairs: its home rows against each other and against its visitors, each pair kept once overall.

    A pure function of what it is handed (a Ray task runs it as is).  A visitor x and a home row y are the same
    pair as y visiting x's home when x's home is on y's probe list; :func:`_keep_once` keeps exactly one of the two.

    Args:
        home_vectors: (a, d) float32 unit rows at home in the cell.
        home_rows: (a,) their keys: global row numbers, or any unique, ordered keys (a file's ids).
        home_probe: (a, p) their probe lists (global cell numbers).
        visitor_vectors: (v, d) float32 unit rows probing the cell from another home.
        visitor_rows: (v,) their keys.
        visitor_home: (v,) their home cells.
        threshold: keep pairs strictly above this cosine.

    Returns:
        The pairs as positions in the arrays given (:class:`CellPairs`).
    """
    out_i, out_j, out_v, out_c = [], [], [], []  # local row, local column, column is a visitor, float32 cosine
    low = threshold - RECHECK_MARGIN
    a = home_vectors.shape[0]
    for r0 in range(0, a, _BLOCK_ROWS):
        rows = slice(r0, r0 + _BLOCK_ROWS)
        # Home against home: the upper triangle, columns from this block's first row on.
        for c0 in range(r0, a, _BLOCK_ROWS):
            sims = home_vectors[rows] @ home_vectors[c0 : c0 + _BLOCK_ROWS].T
            li, lj = _above(sims, low)
            keep = (lj + c0) > (li + r0)
            li, lj = li[keep], lj[keep]
            out_i.append(li + r0)
            out_j.append(lj + c0)
            out_v.append(np.zeros(li.size, dtype=bool))
            out_c.append(sims[li, lj])
        for c0 in range(0, visitor_vectors.shape[0], _BLOCK_ROWS):
            sims = home_vectors[rows] @ visitor_vectors[c0 : c0 + _BLOCK_ROWS].T
            li, lj = _above(sims, low)
            keep = _keep_once(home_rows[li + r0], home_probe[li + r0], visitor_rows[lj + c0], visitor_home[lj + c0])
            li, lj = li[keep], lj[keep]
            out_i.append(li + r0)
            out_j.append(lj + c0)
            out_v.append(np.ones(li.size, dtype=bool))
            out_c.append(sims[li, lj])
    if not out_i:
        return CellPairs(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0), 0)
    li, lj, lv = np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_v)
    c = np.concatenate(out_c).astype(np.float64)
    near = np.flatnonzero(c <= threshold + RECHECK_MARGIN)
    if near.size:
        visits, cols = lv[near], lj[near]
        other = np.empty((near.size, home_vectors.shape[1]), dtype=np.float64)
        other[visits] = visitor_vectors[cols[visits]]
        other[~visits] = home_vectors[cols[~visits]]
        c[near] = pairwise_cos_sim(home_vectors[li[near]].astype(np.float64), other)
    above = c > threshold
    return CellPairs(li[above], lj[above], lv[above], c[above], int(near.size))


def _keep_once(home_row: np.ndarray, home_probe: np.ndarray, visitor_row: np.ndarray, visitor_home: np.ndarray) -> np.ndarray:
    """Whether this cell keeps each (home row y, visitor x) pair: always when y does not probe x's home (the
    pair is seen only here), else only when x < y (the other sighting, in x's home, has y < x the other way)."""
    seen_twice = (home_probe == visitor_home[:, None]).any(axis=1)
    return ~seen_twice | (visitor_row < home_row)


def _above(tile: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of the cells strictly above ``threshold``; each row's maximum first, as close pairs are rare."""
    rows = np.flatnonzero(tile.max(axis=1) > threshold) if tile.size else np.zeros(0, np.int64)
    li, lj = np.nonzero(tile[rows] > threshold)
    return rows[li], lj


CellInput = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def cell_tasks(part: Partition, unit: np.ndarray, cells: np.ndarray) -> Iterator[CellInput]:
    """The arguments of :func:`cell_pairs` for each cell of ``cells`` (everything a worker needs, gathered)."""
    for cell in cells.tolist():
        home_rows, visitor_rows = part.at_home(cell), part.visiting(cell)
        yield (unit[home_rows], home_rows, part.probe[home_rows], unit[visitor_rows], visitor_rows, part.home[visitor_rows])


def ivf_close_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    cells: int | None = None,
    probe: int = DEFAULT_PROBE,
    max_pairs: int = 2_000_000,
    recall_sample: int = RECALL_SAMPLE,
    seed: int = _SEED,
    progress: ProgressFn | None = None,
) -> tuple[ClosePairs, IvfReport]:
    """Every pair of rows above ``threshold`` that the cells reach, highest cosine first, and how the search went.

    Args:
        vectors: (n, d) rows, n >= 2 (float32 unit rows are used in place, without a copy).
        threshold: keep pairs strictly above this cosine, in [-1, 1].
        cells: k-means cells (None: :func:`default_cells`).
        probe: cells each row is compared with (more: higher recall, more time).
        max_pairs: refuse to collect more pairs than this.
        recall_sample: rows whose exact pairs measure recall (0: not measured).
        seed: the training sample's, k-means's and the recall sample's seed.
        progress: (fraction, message) with the time left, as cells are searched.

    Returns:
        (pairs, report).

    Raises:
        ValueError: bad shape, threshold, cells or probe; a zero or non-finite row.
        TooManyPairs: more than ``max_pairs`` pairs above the threshold.
    """
    if not np.isfinite(threshold) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    clock, tick = time.perf_counter(), time.process_time()
    unit = check_unit(vectors)
    say = progress or (lambda _f, _m: None)
    part = partition(unit, cells, probe, seed=seed, progress=lambda f, m: say(0.1 * f, m))
    seconds["partition"], cpu["partition"] = time.perf_counter() - clock, time.process_time() - tick
    clock, tick = time.perf_counter(), time.process_time()
    work = part.work()
    total, done = float(work.sum()) or 1.0, 0.0
    eta = Eta(total)
    found_i, found_j, found_c = [], [], []
    count = rechecked = 0
    for cell, args in zip(range(part.cells), cell_tasks(part, unit, np.arange(part.cells)), strict=True):
        got = cell_pairs(*args, threshold)
        a, b = got.keys(args[1], args[4])
        i, j, c = np.minimum(a, b), np.maximum(a, b), got.cosine
        count += i.size
        rechecked += got.rechecked
        if count > max_pairs:
            raise TooManyPairs(f"more than {max_pairs:,} pairs score above {threshold:g}; raise the threshold")
        found_i.append(i)
        found_j.append(j)
        found_c.append(c)
        done += float(work[cell])
        if cell % 50 == 0 or cell == part.cells - 1:
            say(0.1 + 0.8 * done / total, f"searched {cell + 1:,}/{part.cells:,} cells, {count:,} pairs; {eta.left(done)}")
    seconds["search"], cpu["search"] = time.perf_counter() - clock, time.process_time() - tick
    pairs = sorted_pairs(np.concatenate(found_i), np.concatenate(found_j), np.concatenate(found_c))
    recall = None
    if recall_sample > 0:
        clock, tick = time.perf_counter(), time.process_time()
        say(0.9, f"measuring recall against exact search on {min(recall_sample, unit.shape[0]):,} sampled rows")
        recall = sampled_recall(unit, pairs, threshold, sample=recall_sample, seed=seed)
        seconds["recall"], cpu["recall"] = time.perf_counter() - clock, time.process_time() - tick
    label = f"ivf ({part.cells} cells, probe {probe})"
    report = IvfReport(label, part.cells, probe, int(work.sum()), rechecked, seconds, recall, cpu)
    say(1.0, f"{pairs.i.size:,} close pairs")
    return pairs, report


def sorted_pairs(i: np.ndarray, j: np.ndarray, c: np.ndarray) -> ClosePairs:
    """Pairs as the audit lists them: highest cosine first, ties by i then j."""
    order = np.lexsort((j, i, -c))
    return ClosePairs(i[order].astype(np.int64), j[order].astype(np.int64), c[order].astype(np.float64))


def sampled_recall(unit: np.ndarray, found: ClosePairs, threshold: float, *, sample: int = RECALL_SAMPLE, seed: int = _SEED) -> Recall:
    """Recall of ``found`` against exact search on a seeded sample of rows, with its 95% Clopper-Pearson interval.

    Every pair above the threshold that touches a sampled row is found exactly: the sample's product with every row,
    a block of rows at a time in float32, candidates near the threshold recomputed in float64 (as the search does).
    The pairs touching one row are not independent of each other, so the interval is a guide, not a guarantee.

    Args:
        unit: (n, d) float32 unit rows.
        found: the pairs to check (i < j).
        threshold: as the search's.
        sample: rows to sample (capped at n).
        seed: the sample's seed.
    """
    from scipy.stats import binomtest

    n = unit.shape[0]
    rows = np.sort(np.random.default_rng(seed + 1).choice(n, size=min(sample, n), replace=False))
    low = threshold - RECHECK_MARGIN
    keys = []
    for start in range(0, n, 65_536):
        sims = unit[rows] @ unit[start : start + 65_536].T
        r, cols = _above(sims, low)
        a, b = rows[r], cols + start
        keep = a != b
        a, b = a[keep], b[keep]
        if a.size:
            exact = pairwise_cos_sim(unit[a].astype(np.float64), unit[b].astype(np.float64)) > threshold
            keys.append(np.minimum(a, b)[exact] * n + np.maximum(a, b)[exact])
    exact_keys = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    if exact_keys.size == 0:
        return Recall(float("nan"), float("nan"), float("nan"), int(rows.size), 0)
    hit = int(np.isin(exact_keys, found.i * n + found.j).sum())
    interval = binomtest(hit, int(exact_keys.size)).proportion_ci(confidence_level=0.95, method="exact")
    return Recall(hit / exact_keys.size, float(interval.low), float(interval.high), int(rows.size), int(exact_keys.size))


class Eta:
    """A time-left estimate from the share of the work done so far (``about 3 min left``)."""

    def __init__(self, total: float) -> None:
        self.total = total
        self.start = time.perf_counter()

    def left(self, done: float) -> str:
        elapsed = time.perf_counter() - self.start
        if done <= 0 or elapsed < 1.0:
            return "estimating time left"
        seconds = elapsed * (self.total - done) / done
        return f"about {seconds / 60:.0f} min left" if seconds >= 90 else f"about {seconds:.0f} s left"


class IvfSearch:
    """The cells as the audit's strategy (:class:`core.audit.search.NeighbourSearch`): the default from
    :data:`core.audit.approximate.APPROX_FROM` passages, chosen by measurement (at 100,000 passages 14.8 CPU-s and
    1.47 GB against HNSW's 117 CPU-s and 9.2 GB, the same pairs; ``make bench audit_1m_methods``).

    It has no neighbour cap: every row is compared with every row of its ``probe`` nearest cells, so the only loss
    is a pair whose two rows share none of them, which the sampled recall (Clopper-Pearson interval) measures.
    """

    def __init__(self, probe: int = DEFAULT_PROBE, sample: int = RECALL_SAMPLE, seed: int = _SEED) -> None:
        self.probe, self.sample, self.seed = probe, sample, seed

    def close_pairs(
        self, unit: np.ndarray, threshold: float, *, max_pairs: int = 2_000_000, progress: Callable[[int, int], None] | None = None
    ) -> tuple[ClosePairs, SearchReport]:
        n = unit.shape[0]
        rows = None if progress is None else (lambda fraction, _message: progress(int(fraction * n), n))
        pairs, report = ivf_close_pairs(
            unit, threshold, probe=self.probe, max_pairs=max_pairs, recall_sample=min(self.sample, n), seed=self.seed, progress=rows
        )
        measured = report.recall
        search = SearchReport(report.method)
        if measured is not None:
            search = SearchReport(
                report.method,
                recall=measured.recall,
                sample=measured.sample if measured.sample < n else 0,
                exact_pairs_in_sample=measured.exact_pairs,
                recall_low=measured.low,
                recall_high=measured.high,
                interval="Clopper-Pearson",
            )
        return pairs, search
