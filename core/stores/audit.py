"""A store read and searched for the probes: its collection, its own search as the audit's strategy, its top k per query.

The probes themselves run once for any source of vectors: the audit
(:func:`core.audit.run.audit_source`), corpus retrieval
(:func:`core.probes.retrieval.corpus.corpus_on_vectors`) and index settings
(:func:`core.probes.vector_settings.vectors_index_settings`).  What is the
store's own is here: reading it (:func:`read_collection`, one line for any
client's failure), searching it (:class:`StoreSearch`, the
:class:`core.audit.search.NeighbourSearch` of the store's index, and
:func:`store_top` for queries, always asked for :data:`QUERY_DEPTH` rows),
and :func:`audit_store`, which runs the one audit twice on the same stored
vectors: with exact search and with the store's search, side by side.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.audit.approximate import DEFAULT_K
from core.audit.neighbours import DEFAULT_MAX_PAIRS, ExactSearch
from core.audit.run import TOP_K, AuditResult, audit_source
from core.audit.search import ClosePairs, ProgressFn, SearchReport, compare_with_exact, pairs_from_neighbours, top_k_overlap
from core.messages import first_line
from core.models.cache import EmbeddingCache
from core.models.check import Checked, ModelCheck, encode_checked
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn as RunProgressFn
from core.stores.base import StoredCollection, StoreError, StoreHandle, filter_words
from core.words import passage_key, passage_keys

SIDE_BY_SIDE = ["twin_pairs", "twin_share", "query_twin_top5", "twin_first"]
# Every query is asked of a store for this many rows, whatever is measured of them (the audit's top 5, retrieval's
# recall@1/5/10): an index answers a deeper query differently (a wider candidate list), so one depth for every
# command keeps one store's top 5 one thing.
QUERY_DEPTH = constants.IR_CUTOFF

__all__ = ["ModelCheck", "QUERY_DEPTH", "StoreAudit", "StoreSearch", "audit_store", "check_store_model", "read_collection", "side_by_side"]


@dataclass
class StoreAudit:
    """The audit of one stored collection, exact and through the store, side by side."""

    store: str
    method: str
    model: str
    check: ModelCheck
    exact: AuditResult
    through_store: AuditResult
    search: SearchReport
    query_recall: float = float("nan")
    notes: list[str] = field(default_factory=list)
    filters: dict[str, str] = field(default_factory=dict)

    @property
    def pair_recall(self) -> float:
        """The store's share of exact search's close pairs (neighbour cap and index together)."""
        return self.search.recall

    @property
    def exact_pairs(self) -> int:
        return len(self.exact.pairs)

    @property
    def store_pairs(self) -> int:
        return len(self.through_store.pairs)

    def as_dict(self) -> dict:
        nan = self.query_recall != self.query_recall
        return {
            "store": self.store,
            "search": self.method,
            "filters": dict(self.filters),
            "model_check": self.check.as_dict(),
            "close_pairs_exact": self.exact_pairs,
            "close_pairs_store": self.store_pairs,
            "pair_recall": None if self.pair_recall != self.pair_recall else self.pair_recall,
            "store_search": self.search.as_dict(),
            "query_depth": QUERY_DEPTH,
            f"query_top{TOP_K}_recall": None if nan else self.query_recall,
        }


def read_collection(handle: StoreHandle) -> StoredCollection:
    """The whole collection, its client's failures one :class:`StoreError` line (a table this user may not read, a damaged folder)."""
    try:
        collection = handle.read()
    except StoreError as exc:
        if handle.filters and "an audit needs at least 2" in str(exc):
            raise StoreError(f"{exc} (after the store filter {filter_words(handle.filters)})") from exc
        raise
    except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; the user gets one line
        raise StoreError(f"cannot read {handle.uri.display}: {first_line(exc)}") from exc
    if handle.filters:
        collection.notes.insert(0, f"store filter {filter_words(handle.filters)}: {collection.rows:,} row(s) read")
    return collection


def check_store_model(
    collection: StoredCollection,
    model: str,
    texts: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: RunProgressFn | None = None,
) -> Checked:
    """The named model checked on 20 stored passages (:func:`core.models.check.encode_checked`), and ``texts`` encoded by it."""
    return encode_checked(collection.passages, collection.vectors, model, texts, cache=cache, options=options, progress=progress)


def searched(handle: StoreHandle, vectors: np.ndarray, k: int) -> list[list[str]]:
    """The store's own search, its failures one :class:`StoreError` line."""
    try:
        return handle.search(vectors, k)
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; the user gets one line
        raise StoreError(f"the store's search failed: {first_line(exc)}") from exc


def indices_of(collection: StoredCollection, found: list[list[str]], what: str) -> list[list[int]]:
    """Each search result's rows as passage indices (by :func:`core.words.passage_key`); a query the store found nothing for is an error."""
    index = {text: i for i, text in enumerate(collection.passages)}
    out = []
    for row in found:
        hits = [index[t] for t in (passage_key(x) for x in row) if t in index]
        if not hits:
            raise StoreError(f"the store's search returned no passage it holds for {what}")
        out.append(hits)
    return out


def store_top(handle: StoreHandle, collection: StoredCollection, queries: np.ndarray) -> list[list[int]]:
    """Each query's :data:`QUERY_DEPTH` nearest stored passages by the store's own search, best first, as passage indices."""
    return indices_of(collection, searched(handle, queries, min(QUERY_DEPTH, len(collection.passages))), "a query")


class StoreSearch:
    """The store's own index as the audit's strategy (:class:`core.audit.search.NeighbourSearch`).

    Each passage's ``k`` nearest rows by the store's search (its index, its distance), kept above the threshold,
    each cosine computed from the vectors; with ``exact`` (the exact close pairs of the same vectors) its report
    says what the neighbour cap and the index each lost (:func:`core.audit.search.compare_with_exact`).
    """

    def __init__(self, handle: StoreHandle, collection: StoredCollection, k: int = DEFAULT_K, exact: ClosePairs | None = None) -> None:
        self.handle, self.collection, self.k, self.exact = handle, collection, k, exact

    @property
    def method(self) -> str:
        return f"store: {self.handle.search_method()}"

    def close_pairs(
        self, unit: np.ndarray, threshold: float, *, max_pairs: int = DEFAULT_MAX_PAIRS, progress: ProgressFn | None = None
    ) -> tuple[ClosePairs, SearchReport]:
        neighbours = indices_of(self.collection, searched(self.handle, self.collection.vectors, self.k + 1), "a stored passage")
        found = pairs_from_neighbours(unit, neighbours, threshold, max_pairs)
        report = SearchReport(self.method, self.k)  # after the search: pgvector's says whether the planner used the index
        if self.exact is not None:
            report = compare_with_exact(report, found, self.exact, unit.shape[0])
        return found, report


def _pairs_of(result: AuditResult) -> ClosePairs:
    pairs = result.pairs
    return ClosePairs(pairs["index_a"].to_numpy(np.int64), pairs["index_b"].to_numpy(np.int64), pairs[constants.COL_COSINE].to_numpy(float))


def audit_store(
    handle: StoreHandle,
    model: str,
    floor: float = constants.DEFAULT_THRESHOLD,
    *,
    queries: Sequence[str] = (),
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: RunProgressFn | None = None,
    k: int = DEFAULT_K,
    max_pairs: int = DEFAULT_MAX_PAIRS,
) -> StoreAudit:
    """Read the collection, check the model on a sample, audit it exactly and through the store's own search.

    Args:
        handle: an open store (:func:`core.stores.kinds.open_store`).
        model: the model that made the stored vectors (it encodes the check sample and the queries).
        floor: keep pairs strictly above this cosine.
        queries: optional queries: each one's top 5, exact and by the store (asked for :data:`QUERY_DEPTH` rows).
        cache, options, progress: as for :func:`core.audit.run.audit_corpus`.
        k: neighbours per passage the store's search is asked for.
        max_pairs: refuse a floor that lets more pairs through.

    Raises:
        StoreError: the store cannot be read or searched; ModelMismatch: the model does not match the stored vectors.
        ValueError: a bad floor or k; TooManyPairs: more than ``max_pairs`` pairs.
    """
    start = time.perf_counter()
    if not np.isfinite(floor) or not -1.0 <= floor <= 1.0:
        raise ValueError(f"the threshold must be between -1 and 1, got {floor}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    collection = read_collection(handle)
    query_texts = passage_keys(list(queries))
    checked = check_store_model(collection, model, query_texts, cache=cache, options=options, progress=progress)
    label = checked.label
    query_matrix = embedding_matrix(checked.vectors, query_texts) if query_texts else None
    common: dict[str, Any] = {
        "queries": query_texts,
        "query_matrix": query_matrix,
        "report": checked.report,
        "max_pairs": max_pairs,
        "start": start,
    }
    exact = audit_source(label, collection, floor, search=ExactSearch(), **common)
    store = audit_source(label, collection, floor, search=StoreSearch(handle, collection, k, _pairs_of(exact)), **common)
    query_recall = float("nan")
    if query_matrix is not None:
        width = exact.top[label].shape[1]
        rows = store_top(handle, collection, query_matrix)
        # A search that returns fewer than 5 rows repeats its first: the top-5 sets and the first passage stay what it returned.
        store.top[label] = np.array([(r[:width] + [r[0]] * width)[:width] for r in rows], dtype=np.int64)
        query_recall = float(np.mean(top_k_overlap(rows, exact.top[label], TOP_K)))
    report = store.search[label]
    return StoreAudit(
        handle.uri.display,
        report.method.removeprefix("store: "),
        label,
        checked.check,
        exact,
        store,
        report,
        query_recall,
        list(collection.notes),
        dict(handle.filters),
    )


def side_by_side(exact: pd.DataFrame, store: pd.DataFrame) -> pd.DataFrame:
    """Two :func:`core.audit.risk.risk_summary` tables (exact, through the store) as one: each number's two values in adjacent columns."""
    keys = [constants.COL_MODEL, "mode"]
    shown = [c for c in SIDE_BY_SIDE if c in exact.columns]
    merged = exact[keys + shown].merge(store[keys + shown], on=keys, how="outer", suffixes=("_exact", "_store"), sort=False)
    return merged[keys + [f"{c}_{way}" for c in shown for way in ("exact", "store")]]
