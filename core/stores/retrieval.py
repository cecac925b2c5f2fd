"""Retrieval through a store: each query ranked by the store's own search and exactly, side by side.

:func:`retrieval_through_store` reads the collection, checks the named model
on a sample (:func:`core.models.check.encode_checked`), encodes the queries,
and ranks the stored vectors twice: exactly (cosine over every stored vector)
and with the store's search (its index, its distance), asked for
:data:`core.stores.audit.QUERY_DEPTH` rows per query as the audit asks.  It
reports the store's recall@k against exact top-k
(:func:`core.audit.search.top_k_overlap`), how often both put the same
passage first, and corpus mode's failure rate measured both ways by the one
corpus mode over vectors (:func:`core.probes.retrieval.corpus.corpus_on_vectors`):
the first passage by exact search, then the store's.  Nothing is written to
the store: the variants are scored in memory.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.audit.findings import mode_words
from core.audit.neighbours import top_k
from core.audit.search import top_k_overlap
from core.models.cache import EmbeddingCache
from core.models.check import ModelCheck
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn
from core.probes.retrieval.corpus import SEARCH_EXACT, SEARCH_STORE, CorpusResult, corpus_on_vectors, corpus_rates
from core.stores.audit import QUERY_DEPTH, check_store_model, indices_of, read_collection, searched
from core.stores.base import StoreHandle
from core.words import passage_keys

COL_SEARCH = "search"
__all__ = ["COL_SEARCH", "SEARCH_EXACT", "SEARCH_STORE", "StoreRetrieval", "json_records", "rates_words", "retrieval_through_store"]


@dataclass
class StoreRetrieval:
    """Queries ranked exactly and by the store: recall@k, agreement on the first passage, corpus mode's rates both ways."""

    store: str
    method: str
    model: str
    check: ModelCheck
    n_passages: int
    n_queries: int
    recall: dict[int, float]
    same_first: float
    rates: pd.DataFrame
    pairs: pd.DataFrame
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    filters: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "store": self.store,
            "search": self.method,
            "filters": dict(self.filters),
            "model": self.model,
            "model_check": self.check.as_dict(),
            "n_passages": self.n_passages,
            "n_queries": self.n_queries,
            "recall_at_k": {str(k): v for k, v in self.recall.items()},
            "same_first": self.same_first,
            "rates": json_records(self.rates),
        }

    def through_store(self) -> CorpusResult:
        """Corpus mode as the store ranks it (each query's first passage by the store's own search): the run the history
        keeps, the exact side being in its settings."""

        def stores(frame: pd.DataFrame) -> pd.DataFrame:
            return frame if frame.empty else frame[frame[COL_SEARCH] == SEARCH_STORE].drop(columns=[COL_SEARCH])

        return CorpusResult(stores(self.pairs), stores(self.rates), seconds=self.seconds)


def json_records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def retrieval_through_store(
    handle: StoreHandle,
    model: str,
    queries: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    ks: Sequence[int] = constants.IR_RECALL_KS,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
) -> StoreRetrieval:
    """Rank the stored collection for each query exactly and with the store's search; compare.

    Raises:
        ValueError: no query or a k below 1.
        StoreError: the model did not make the stored vectors, or the store cannot be read or searched.
    """
    start = time.perf_counter()
    query_texts = passage_keys(list(queries))
    if not query_texts:
        raise ValueError("there is no query; give at least one")
    if not ks or min(ks) < 1:
        raise ValueError("every k must be at least 1")
    collection = read_collection(handle)
    checked = check_store_model(collection, model, query_texts, cache=cache, options=options, progress=progress)
    query_matrix = embedding_matrix(checked.vectors, query_texts)
    depth = min(max(QUERY_DEPTH, *ks), len(collection.passages))
    exact, _ = top_k(query_matrix, collection.vectors, depth)
    store = indices_of(collection, searched(handle, query_matrix, depth), "a query")
    recall = {k: float(np.mean(top_k_overlap(store, exact, k))) for k in ks if k <= depth}
    first = {SEARCH_EXACT: exact[:, 0], SEARCH_STORE: np.array([s[0] for s in store], dtype=np.int64)}

    def encode(texts: list[str]) -> np.ndarray | None:
        fresh = checked.run.encode(texts, share=0.8)
        return None if fresh is None else embedding_matrix(fresh[0], texts)

    found = corpus_on_vectors(checked.label, collection.passages, collection.vectors, query_texts, query_matrix, first, encode)
    frames, rates = [], []
    for way, rows in (found.rows if found is not None else {}).items():
        frame = pd.DataFrame(rows)
        if frame.empty:
            continue
        frames.append(frame.assign(**{COL_SEARCH: way}))
        rates.append(corpus_rates(frame, seed=seed, n_resamples=n_resamples).assign(**{COL_SEARCH: way}))
    return StoreRetrieval(
        handle.uri.display,
        handle.search_method(),
        checked.label,
        checked.check,
        len(collection.passages),
        len(query_texts),
        recall,
        float(np.mean(first[SEARCH_EXACT] == first[SEARCH_STORE])),
        pd.concat(rates, ignore_index=True) if rates else pd.DataFrame(),
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
        time.perf_counter() - start,
        list(collection.notes),
        dict(handle.filters),
    )


SEARCH_WORDS = {SEARCH_EXACT: "exact search", SEARCH_STORE: "the store's search"}


def rates_words(rates: pd.DataFrame) -> pd.DataFrame:
    """How often a variant outranks a query's first passage, as a person reads it: a row per failure mode, by label.

    Args:
        rates: ``StoreRetrieval.rates`` (model, mitigation, mode, rate, ..., search), one row per mode and search.

    Returns:
        ``failure mode`` ("Entity swap", "all modes") and one column per search ("exact search", "the store's
        search") holding the rate as a percentage ("12.5%"; "—" where a search had no such variant).
    """
    wide = rates.pivot_table(index=constants.COL_MODE, columns=COL_SEARCH, values="rate", sort=False)
    out = pd.DataFrame({"failure mode": [mode_words(str(mode)) for mode in wide.index]})
    for search in wide.columns:
        out[SEARCH_WORDS.get(str(search), str(search))] = ["—" if pd.isna(v) else f"{float(v):.1%}" for v in wide[search]]
    return out
