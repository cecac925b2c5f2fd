"""How close pairs are found: the neighbour search the audit takes as a strategy, and what each search is measured by.

A search is any object with :meth:`NeighbourSearch.close_pairs`: given the
passages' unit vectors, a float32 ``(n, d)`` matrix, and a threshold, it
returns every pair it finds above the threshold (:class:`ClosePairs`, each
cosine computed from the vectors) and a :class:`SearchReport` saying how.
The strategies: exact blocked products (:class:`core.audit.neighbours.ExactSearch`),
faiss HNSW (:class:`core.audit.approximate.HnswSearch`), a vector store's own
index (:class:`core.stores.audit.StoreSearch`); the audit
(:func:`core.audit.run.audit_vectors`) runs the same way on any of them.

A search that asks for each passage's ``k`` nearest neighbours misses pairs
for two reasons the report keeps apart: its **neighbour cap** (a passage
with more than ``k`` neighbours above the threshold loses the rest even to an
exact flat scan) and its **index's approximation** (a neighbour within the
``k`` nearest that the index does not return).  :func:`compare_with_exact`
measures both against exact search over the same vectors; its recall carries
a Wilson 95% interval when it is measured on a sample.

Shared by every search: :func:`pairs_from_neighbours` (neighbour lists to
close pairs, the one way); a ranking's top k against exact top k is
:func:`core.stats.overlap.top_k_overlap`, the one way, below every probe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from core import constants
from core.messages import counted
from core.stats.overlap import top_k_overlap

__all__ = ["ClosePairs", "NeighbourSearch", "SearchReport", "TooManyPairs", "compare_with_exact", "pairs_from_neighbours", "top_k_overlap"]

ProgressFn = Callable[[int, int], None]


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


def _nan(value: float) -> float | None:
    return None if value != value else value


@dataclass(frozen=True)
class SearchReport:
    """How close pairs were found, and what was lost against exact search (on the whole corpus or on a sample).

    Attributes:
        method: ``exact``, or the search in words.
        k: neighbours per passage the search returned (0: no cap).
        recall: share of exact search's close pairs this search found (NaN: not measured, or none to find).
        sample: passages of the sample recall was measured on (0: the whole corpus).
        exact_pairs_in_sample: exact close pairs measured against (touching the sample, or all).
        recall_low, recall_high: Wilson 95% interval of ``recall`` when measured on a sample (NaN otherwise).
        within_cap: of those exact pairs, how many are among the ``k`` nearest of one of their passages (-1: not measured).
        crowded: passages with more than ``k`` neighbours above the threshold (of the sample, or of all; -1: not measured).
        index_recall: share of the pairs within the cap the search found: the index's own approximation, apart from the cap.
        interval: how ``recall_low``/``recall_high`` were computed (Wilson, or Clopper-Pearson for the cells' sample).
    """

    method: str
    k: int = 0
    recall: float = float("nan")
    sample: int = 0
    exact_pairs_in_sample: int = 0
    recall_low: float = float("nan")
    recall_high: float = float("nan")
    within_cap: int = -1
    crowded: int = -1
    index_recall: float = float("nan")
    interval: str = "Wilson"

    @property
    def exact(self) -> bool:
        return self.method == "exact"

    def as_dict(self) -> dict:
        out = {
            "method": self.method,
            "k": self.k,
            "recall": _nan(self.recall),
            "sample": self.sample,
            "exact_pairs_in_sample": self.exact_pairs_in_sample,
        }
        if self.recall_low == self.recall_low:
            out["recall_ci"] = [self.recall_low, self.recall_high]
        if self.within_cap >= 0:
            out.update(
                {"exact_pairs_within_cap": self.within_cap, "crowded_passages": self.crowded, "index_recall": _nan(self.index_recall)}
            )
        return out

    def cap_words(self) -> str:
        """The neighbour cap and the index apart, in words ("" when not measured)."""
        if self.within_cap < 0 or not self.k:
            return ""
        beyond = self.exact_pairs_in_sample - self.within_cap
        which = counted(self.crowded, "sampled passage" if self.sample else "passage")
        line = (
            f"the neighbour cap (each passage's {self.k} nearest) leaves {beyond:,} of the {self.exact_pairs_in_sample:,} exact pairs "
            f"out of reach of any {self.k}-neighbour search, exact or not ({which} with more than {self.k} "
            "neighbours above the threshold)"
        )
        if self.within_cap:
            line += f"; the index found {self.index_recall:.1%} of the {self.within_cap:,} within the cap"
        return line

    def sentence(self) -> str:
        """The report in words, for the findings: recall against exact (with its interval when sampled), the cap and the index apart."""
        if self.exact:
            return "close pairs by exact search"
        where = f"on a sample of {self.sample:,} passages" if self.sample else "over every passage"
        if self.recall != self.recall:
            found = "no close pair touched the sample" if self.sample else "no exact close pair to find"
        else:
            found = f"{self.recall:.1%}"  # a percentage, as every share the findings say
            if self.recall_low == self.recall_low:
                found += f" (95% {self.interval} interval {self.recall_low:.1%} to {self.recall_high:.1%})"
        line = f"close pairs by {self.method}; recall against exact search {where} ({self.exact_pairs_in_sample:,} exact pairs): {found}"
        cap = self.cap_words()
        return f"{line}; {cap}" if cap else line


class NeighbourSearch(Protocol):
    """A way of finding close pairs, the audit's strategy (exact products, faiss, a store's own index, ...)."""

    def close_pairs(
        self, unit: np.ndarray, threshold: float, *, max_pairs: int, progress: ProgressFn | None = None
    ) -> tuple[ClosePairs, SearchReport]:
        """Every pair it finds strictly above ``threshold`` among the rows of ``unit``, and how it searched.

        Args:
            unit: (n, d) float32 rows of unit length, n >= 2.
            threshold: in [-1, 1].
            max_pairs: refuse (``TooManyPairs``) to return more pairs.
            progress: called with (rows done, n) as it goes, where it can say.

        Returns:
            The pairs (i < j, cosine from ``unit``, highest first, ties by i then j) and a :class:`SearchReport`.
        """
        ...


def check_threshold(threshold: float) -> None:
    """Raises ValueError for a threshold outside [-1, 1] (or not finite)."""
    if not np.isfinite(threshold) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")


def sorted_pairs(i: np.ndarray, j: np.ndarray, cosine: np.ndarray, threshold: float, max_pairs: int) -> ClosePairs:
    """Pairs as :class:`ClosePairs`: highest cosine first, ties by i then j; more than ``max_pairs`` refused."""
    if i.size > max_pairs:
        raise TooManyPairs(f"more than {max_pairs:,} pairs score above {threshold:g}; raise the threshold")
    order = np.lexsort((j, i, -cosine))
    return ClosePairs(i[order], j[order], cosine[order])


def pairs_from_neighbours(
    unit: np.ndarray, neighbours: np.ndarray | Sequence[Sequence[int]], threshold: float, max_pairs: int
) -> ClosePairs:
    """Each row's neighbours (as returned by an index: any length, -1 for none) as the close pairs among them.

    A pair found from both ends is one pair; a row is never its own neighbour.  Each cosine is computed from
    ``unit`` (as exact search does), never taken from the index's distance, and kept when strictly above ``threshold``.

    Args:
        unit: (n, d) unit rows.
        neighbours: (n, k) row indices, or n lists of them.

    Raises:
        TooManyPairs: more than ``max_pairs`` pairs.
    """
    if isinstance(neighbours, np.ndarray):
        rows = np.repeat(np.arange(neighbours.shape[0]), neighbours.shape[1])
        cols = neighbours.reshape(-1)
    else:
        rows = np.repeat(np.arange(len(neighbours)), [len(r) for r in neighbours])
        cols = np.fromiter((c for r in neighbours for c in r), dtype=np.int64, count=int(rows.size))
    keep = (cols >= 0) & (cols != rows)
    low, high = np.minimum(rows[keep], cols[keep]), np.maximum(rows[keep], cols[keep])
    pairs = np.unique(np.stack([low, high], axis=1), axis=0) if low.size else np.zeros((0, 2), dtype=np.int64)
    cosine = np.clip(np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]]), -1.0, 1.0) if len(pairs) else np.zeros(0)
    above = cosine > threshold
    i, j, c = pairs[above, 0].astype(np.int64), pairs[above, 1].astype(np.int64), cosine[above].astype(np.float64)
    return sorted_pairs(i, j, c, threshold, max_pairs)


def wilson_interval(found: int, total: int, confidence: float = constants.CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of ``found / total`` (NaN, NaN for no trial): the recall measured on a sample."""
    if total <= 0:
        return float("nan"), float("nan")
    from scipy.stats import binomtest

    ci = binomtest(int(found), int(total)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def kth_cosines(pairs: ClosePairs, n: int, k: int) -> np.ndarray:
    """Each row's ``k``-th highest cosine among its close pairs, -inf where it has ``k`` or fewer, shape (n,)."""
    ends = np.concatenate([pairs.i, pairs.j])
    cos = np.concatenate([pairs.cosine, pairs.cosine])
    out = np.full(n, -np.inf)
    if not ends.size:
        return out
    order = np.lexsort((-cos, ends))
    ends, cos = ends[order], cos[order]
    first = np.searchsorted(ends, np.arange(n))
    degree = np.bincount(ends, minlength=n)
    crowded = np.flatnonzero(degree > k)
    out[crowded] = cos[first[crowded] + k - 1]
    return out


def compare_with_exact(report: SearchReport, found: ClosePairs, exact: ClosePairs, n: int) -> SearchReport:
    """``report`` with its recall against exact search over every passage, the neighbour cap and the index apart.

    A pair is within the cap when it is among the ``report.k`` nearest above the threshold of one of its
    passages (its cosine at least that passage's k-th): a k-neighbour search can return it at all.
    """
    want = set(zip(exact.i.tolist(), exact.j.tolist(), strict=True))
    got = set(zip(found.i.tolist(), found.j.tolist(), strict=True))
    recall = len(want & got) / len(want) if want else float("nan")
    if not report.k:
        return replace(report, recall=recall, exact_pairs_in_sample=len(want))
    kth = kth_cosines(exact, n, report.k)
    inside = (exact.cosine >= kth[exact.i]) | (exact.cosine >= kth[exact.j])
    reach = {p for p, ok in zip(zip(exact.i.tolist(), exact.j.tolist(), strict=True), inside.tolist(), strict=True) if ok}
    return replace(
        report,
        recall=recall,
        exact_pairs_in_sample=len(want),
        within_cap=len(reach),
        crowded=int(np.sum(np.isfinite(kth))),
        index_recall=len(reach & got) / len(reach) if reach else float("nan"),
    )
