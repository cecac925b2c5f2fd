"""Retrieval through a store: each query ranked by the store's own search and exactly, side by side.

:func:`retrieval_through_store` reads the collection, checks the named model
on a sample (:func:`core.stores.audit.encode_checked`), encodes the queries,
and ranks the stored vectors twice: exactly (cosine over every stored vector)
and with the store's search (its index, its distance).  It reports the
store's recall@k against exact top-k, how often both put the same passage
first, and corpus mode's failure rate measured both ways: rule-made variants
(:func:`core.probes.retrieval.corpus.variants_of`) of each query's first
passage (the exact one, then the store's), and how often a variant outranks
it.  Nothing is written to the store: the variants are scored in memory.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.audit.neighbours import top_k
from core.models.cache import EmbeddingCache
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn
from core.probes.retrieval.corpus import corpus_rates, corpus_rows, variants_of
from core.stats.similarity import cos_sim
from core.stores.audit import ModelCheck, encode_checked, indices_of, read_collection, searched
from core.stores.base import StoreHandle

KS = (1, 5, 10)
COL_SEARCH = "search"
SEARCH_EXACT, SEARCH_STORE = "exact", "store"


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
    ks: Sequence[int] = KS,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
) -> StoreRetrieval:
    """Rank the stored collection for each query exactly and with the store's search; compare.

    Raises:
        ValueError: no query or a k below 1.
        StoreError: the model did not make the stored vectors, or the store cannot be read or searched.
    """
    start = time.perf_counter()
    query_texts = list(dict.fromkeys(q for q in (" ".join(str(q).split()) for q in queries) if q))
    if not query_texts:
        raise ValueError("there is no query; give at least one")
    if not ks or min(ks) < 1:
        raise ValueError("every k must be at least 1")
    collection = read_collection(handle)
    checked = encode_checked(collection, model, query_texts, cache=cache, options=options, progress=progress)
    query_matrix = embedding_matrix(checked.vectors, query_texts)
    depth = min(max(ks), len(collection.passages))
    exact, _ = top_k(query_matrix, collection.vectors, depth)
    store = indices_of(collection, searched(handle, query_matrix, depth), "a query")
    recall = {
        k: float(np.mean([len(set(s[:k]) & set(e[:k])) / len(e[:k]) for s, e in zip(store, exact.tolist(), strict=True)]))
        for k in ks
        if k <= depth
    }
    first = {SEARCH_EXACT: exact[:, 0], SEARCH_STORE: np.array([s[0] for s in store], dtype=np.int64)}
    variants = variants_of([collection.passages[i] for way in first.values() for i in way])
    texts = list(dict.fromkeys(v for vs in variants.values() for _, _, v in vs if v not in set(collection.passages)))
    fresh = checked.run.encode(texts, share=0.8) if texts else ({}, checked.report)
    frames, rates = [], []
    if fresh is not None:
        extended = [*collection.passages, *texts]
        matrix = np.vstack([collection.vectors, embedding_matrix(fresh[0], texts)]) if texts else collection.vectors
        scores = np.clip(cos_sim(query_matrix, matrix), -1.0, 1.0)
        for way, top in first.items():
            keys = {constants.COL_MODEL: checked.label, constants.COL_MITIGATION: constants.MITIGATION_NONE}
            frame = pd.DataFrame(corpus_rows(query_texts, extended, top, variants, scores, keys))
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
