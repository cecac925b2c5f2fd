"""The audit through a store: its stored vectors checked against the named model, then searched exactly and with the store's own search.

:func:`audit_store` reads nothing but the collection (passages and stored
vectors) and encodes only a sample of 20 passages (the model check) and the
queries.  It returns two :class:`core.audit.run.AuditResult` of the same
passages: ``exact`` (every pair above the floor, by the blocked products of
:mod:`core.audit.neighbours` over the stored vectors) and ``store`` (each
passage's ``k`` nearest rows by the store's own search, its index and its
distance, kept above the floor; each kept pair's cosine computed from the
stored vectors, as the exact path does), with the store's recall against
exact for close pairs and for each query's top 5.  Where the store searches
exactly, the two are equal.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.audit.approximate import DEFAULT_K, SearchReport
from core.audit.neighbours import DEFAULT_MAX_PAIRS, ClosePairs, TooManyPairs, close_pairs, top_k
from core.audit.run import PAIR_COLUMNS, TOP_K, AuditResult, pair_rows
from core.messages import first_line
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, ProgressFn, model_runs
from core.stats.similarity import unit_rows
from core.stores.base import StoredCollection, StoreError, StoreHandle, filter_words

CHECK_SAMPLE = 20
SIDE_BY_SIDE = ["twin_pairs", "twin_share", "query_twin_top5", "twin_first"]
# The same model through another backend (torch vs ONNX, another batch size) agrees to 1e-4; another model is far below.
MIN_CHECK_COSINE = 0.99


@dataclass(frozen=True)
class ModelCheck:
    """The named model re-encoding a seeded sample of stored passages: cosine of each fresh vector with its stored one."""

    model: str
    cosines: tuple[float, ...]

    @property
    def passed(self) -> bool:
        return bool(self.cosines) and min(self.cosines) >= MIN_CHECK_COSINE

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "sample": len(self.cosines),
            "min_cosine": min(self.cosines),
            "mean_cosine": float(np.mean(self.cosines)),
        }


@dataclass
class StoreAudit:
    """The audit of one stored collection, exact and through the store, side by side."""

    store: str
    method: str
    model: str
    check: ModelCheck
    exact: AuditResult
    through_store: AuditResult
    pair_recall: float
    exact_pairs: int
    store_pairs: int
    query_recall: float = float("nan")
    notes: list[str] = field(default_factory=list)
    filters: dict[str, str] = field(default_factory=dict)

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
            f"query_top{TOP_K}_recall": None if nan else self.query_recall,
        }


def check_sample(n: int, size: int = CHECK_SAMPLE, seed: int = 0) -> np.ndarray:
    """A seeded sample of passage indices (all of them when there are fewer), sorted."""
    return np.sort(np.random.default_rng(seed).choice(n, size=min(size, n), replace=False))


def check_model(model: str, stored: np.ndarray, fresh: np.ndarray) -> ModelCheck:
    """Compare the model's fresh vectors of the sample with the stored ones.

    Raises:
        StoreError: other dimensions, or a cosine below ``MIN_CHECK_COSINE`` (one line: another model made the vectors).
    """
    from core.models import registry

    name = registry.short_name(model)
    if stored.shape[1] != fresh.shape[1]:
        raise StoreError(
            f"the stored vectors have {stored.shape[1]} dimensions and {name} makes {fresh.shape[1]}: "
            "name the model that made them with --models"
        )
    cosines = np.einsum("ij,ij->i", unit_rows(stored.astype(np.float64)), unit_rows(fresh.astype(np.float64)))
    check = ModelCheck(model, tuple(round(float(c), 6) for c in cosines))
    if not check.passed:
        raise StoreError(
            f"the stored vectors were not made by {name}: re-encoding {len(cosines)} stored passages gives cosines "
            f"{min(cosines):.3f} to {max(cosines):.3f} with their stored vectors (the same model gives >= {MIN_CHECK_COSINE}); "
            "name the model that made them with --models"
        )
    return check


@dataclass
class Checked:
    """The named model, checked on a sample of the collection, and its vectors of the texts it was asked for."""

    label: str
    vectors: dict[str, np.ndarray]
    report: EncodeReport
    check: ModelCheck
    run: ModelRun


def encode_checked(
    collection: StoredCollection,
    model: str,
    texts: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
) -> Checked:
    """Encode a seeded sample of 20 stored passages and ``texts`` with ``model``; refuse when the sample's vectors do not match.

    Raises:
        StoreError: the model failed to load or encode, or it did not make the stored vectors (:func:`check_model`).
    """
    sample = check_sample(len(collection.passages))
    sample_texts = [collection.passages[i] for i in sample]
    errors: dict[str, str] = {}
    for run in model_runs([model], options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(list(dict.fromkeys([*sample_texts, *texts])), share=0.3)
        if encoded is None:
            break
        vectors, report = encoded
        check = check_model(run.label, collection.vectors[sample], embedding_matrix(vectors, sample_texts))
        return Checked(run.label, vectors, report, check, run)
    raise StoreError(next(iter(errors.values()), f"{model} did not load"))


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


def searched(handle: StoreHandle, vectors: np.ndarray, k: int) -> list[list[str]]:
    """The store's own search, its failures one :class:`StoreError` line."""
    try:
        return handle.search(vectors, k)
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; the user gets one line
        raise StoreError(f"the store's search failed: {first_line(exc)}") from exc


def indices_of(collection: StoredCollection, found: list[list[str]], what: str) -> list[list[int]]:
    """Each search result's rows as passage indices (by text); a query the store found nothing for is an error."""
    index = {text: i for i, text in enumerate(collection.passages)}
    out = []
    for row in found:
        hits = [index[t] for t in (" ".join(str(x).split()) for x in row) if t in index]
        if not hits:
            raise StoreError(f"the store's search returned no passage it holds for {what}")
        out.append(hits)
    return out


def store_pairs(handle: StoreHandle, collection: StoredCollection, floor: float, k: int, max_pairs: int) -> ClosePairs:
    """Each passage's ``k`` nearest rows by the store's own search, kept above ``floor``; cosines from the stored vectors."""
    neighbours = indices_of(collection, searched(handle, collection.vectors, k + 1), "a stored passage")
    unit = unit_rows(collection.vectors)
    found: set[tuple[int, int]] = set()
    for i, row in enumerate(neighbours):
        found.update((min(i, j), max(i, j)) for j in row if j != i)
    pairs = np.array(sorted(found), dtype=np.int64).reshape(-1, 2)
    cosine = np.clip(np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]]), -1.0, 1.0) if len(pairs) else np.zeros(0)
    above = cosine > floor
    i, j, c = pairs[above, 0], pairs[above, 1], cosine[above].astype(np.float64)
    if i.size > max_pairs:
        raise TooManyPairs(f"more than {max_pairs:,} pairs score above {floor:g}; raise the threshold")
    order = np.lexsort((j, i, -c))
    return ClosePairs(i[order], j[order], c[order])


def _recall(got: ClosePairs, exact: ClosePairs) -> float:
    want = set(zip(exact.i.tolist(), exact.j.tolist(), strict=True))
    if not want:
        return float("nan")
    return len(want & set(zip(got.i.tolist(), got.j.tolist(), strict=True))) / len(want)


def audit_store(
    handle: StoreHandle,
    model: str,
    floor: float = constants.DEFAULT_THRESHOLD,
    *,
    queries: Sequence[str] = (),
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    k: int = DEFAULT_K,
    max_pairs: int = DEFAULT_MAX_PAIRS,
) -> StoreAudit:
    """Read the collection, check the model on a sample, audit it exactly and through the store's own search.

    Args:
        handle: an open store (:func:`core.stores.kinds.open_store`).
        model: the model that made the stored vectors (it encodes the check sample and the queries).
        floor: keep pairs strictly above this cosine.
        queries: optional queries: each one's top 5, exact and by the store.
        cache, options, progress: as for :func:`core.audit.run.audit_corpus`.
        k: neighbours per passage the store's search is asked for.
        max_pairs: refuse a floor that lets more pairs through.

    Raises:
        StoreError: the model does not match the stored vectors, or the store cannot be read or searched.
        ValueError: a bad floor or k; TooManyPairs: more than ``max_pairs`` pairs.
    """
    start = time.perf_counter()
    if not np.isfinite(floor) or not -1.0 <= floor <= 1.0:
        raise ValueError(f"the threshold must be between -1 and 1, got {floor}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    collection = read_collection(handle)
    query_texts = list(dict.fromkeys(q for q in (" ".join(str(q).split()) for q in queries) if q))
    checked = encode_checked(collection, model, query_texts, cache=cache, options=options, progress=progress)
    label, vectors, report, check = checked.label, checked.vectors, checked.report, checked.check
    exact_found = close_pairs(collection.vectors, floor, max_pairs=max_pairs)
    store_found = store_pairs(handle, collection, floor, k, max_pairs)
    method = handle.search_method()  # after a search: pgvector's says whether the planner used the index
    results = {}
    top: dict[str, np.ndarray] = {}
    query_recall = float("nan")
    if query_texts:
        query_matrix = embedding_matrix(vectors, query_texts)
        top["exact"], _ = top_k(query_matrix, collection.vectors, TOP_K)
        rows = indices_of(collection, searched(handle, query_matrix, TOP_K), "a query")
        width = top["exact"].shape[1]
        # A search that returns fewer than 5 rows repeats its first: the top-5 sets and the first passage stay what it returned.
        top["store"] = np.array([(r + [r[0]] * width)[:width] for r in rows], dtype=np.int64)
        query_recall = float(
            np.mean([len(set(s) & set(e)) / len(set(e)) for s, e in zip(top["store"].tolist(), top["exact"].tolist(), strict=True)])
        )
    for way, found, search in (
        ("exact", exact_found, SearchReport("exact")),
        ("store", store_found, SearchReport(f"store: {method}", k, _recall(store_found, exact_found))),
    ):
        pairs = pair_rows(label, collection.passages, collection.ids, found)
        results[way] = AuditResult(
            collection.passages,
            collection.ids,
            query_texts,
            float(floor),
            pairs[PAIR_COLUMNS],
            {label: top[way]} if way in top else {},
            reports={label: report},
            seconds=time.perf_counter() - start,
            search={label: search},
        )
    return StoreAudit(
        handle.uri.display,
        method,
        label,
        check,
        results["exact"],
        results["store"],
        _recall(store_found, exact_found),
        int(exact_found.i.size),
        int(store_found.i.size),
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
