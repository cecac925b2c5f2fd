"""A corpus audited: every passage encoded once per model, its close pairs found exactly and classified.

:func:`audit_corpus` goes through :func:`core.models.runs.model_runs` (the
embedding cache, progress naming each model, one-line errors per model),
collects every pair above ``floor`` with :func:`core.audit.neighbours.close_pairs`,
and classifies each with :func:`core.audit.kinds.pair_kind`.  With queries it
also keeps each query's top 5 passages, so :mod:`core.audit.risk` can say how
often a query meets a passage and its twin together.  Pairs are kept from
``floor`` up, so any threshold at or above it (the page's slider) is a filter
of this one result, never a second encoding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.audit import kinds
from core.audit.approximate import APPROX_FROM, DEFAULT_K, HnswSearch
from core.audit.kind_cache import KIND_CACHE_FILE, KindCache, pair_key
from core.audit.neighbours import DEFAULT_MAX_PAIRS, ExactSearch, top_k
from core.audit.projection import project_2d
from core.audit.search import NeighbourSearch, SearchReport, check_threshold
from core.files.vectors import PassageVectors
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, ProgressFn, model_runs
from core.scoring.result import HistoryRecord, backends
from core.words import passage_key

TOP_K = 5
COL_ID_A, COL_ID_B = "id_a", "id_b"
COL_INDEX_A, COL_INDEX_B = "index_a", "index_b"
COL_KIND, COL_MODE, COL_MODES = "kind", "mode", "modes"
COL_CHANGED_A, COL_CHANGED_B = "changed_a", "changed_b"
PAIR_COLUMNS = [
    constants.COL_MODEL,
    COL_ID_A,
    COL_ID_B,
    constants.COL_TEXT_A,
    constants.COL_TEXT_B,
    constants.COL_COSINE,
    COL_KIND,
    COL_MODE,
    COL_MODES,
    COL_CHANGED_A,
    COL_CHANGED_B,
    COL_INDEX_A,
    COL_INDEX_B,
]
MIN_PASSAGES = 2


@dataclass
class AuditResult:
    """What the audit found, for every model that ran.

    Attributes:
        passages: the corpus, distinct texts in file order (n).
        ids: one id per passage (n).
        queries: the queries (q, may be 0).
        floor: pairs were collected strictly above this cosine.
        pairs: one row per model and close pair (``PAIR_COLUMNS``), highest cosine first.
        top: model -> (q, 5) indices of each query's best passages, best first.
        coords: model -> (n, 2) map of the passages (:func:`core.audit.projection.project_2d`).
        qrels: query index -> indices of its relevant passages (a BEIR folder's judgements), or None.
        errors: model -> one-line reason, for models that failed.
        reports: model -> its encoding report.
        seconds: wall time of the run.
        search: model -> how its close pairs were found (exact, or approximate with recall against exact on a sample).
        timings: model -> seconds spent encoding, searching close pairs, classifying them, projecting (where the time goes).
    """

    passages: list[str]
    ids: list[str]
    queries: list[str]
    floor: float
    pairs: pd.DataFrame
    top: dict[str, np.ndarray] = field(default_factory=dict)
    coords: dict[str, np.ndarray] = field(default_factory=dict)
    qrels: dict[int, set[int]] | None = None
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    search: dict[str, SearchReport] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        """The models that produced a result, in run order."""
        return [m for m in self.reports if m not in self.errors]

    def summary(self) -> pd.DataFrame:
        """Close pairs above the floor per model and kind (``model, kind, n``); the risk with its intervals at a chosen
        threshold is :func:`core.audit.risk.risk_summary`."""
        counts = self.pairs.groupby([constants.COL_MODEL, COL_KIND], sort=False).size() if not self.pairs.empty else None
        if counts is None:
            return pd.DataFrame({constants.COL_MODEL: pd.Series(dtype=str), COL_KIND: pd.Series(dtype=str), "n": pd.Series(dtype=int)})
        return counts.rename("n").reset_index()

    def history_record(self, name: str) -> HistoryRecord:
        """Its close pairs as pairs (:func:`audit_pairs`) and the backends; the caller adds the findings it printed
        (:func:`core.audit.findings.history_settings`); an audit without close pairs is stored too (a clean corpus is a
        finding). A page passes the result with the pairs above its threshold (:func:`core.audit.risk.pairs_at`), what its reader saw."""
        return HistoryRecord(audit_pairs(self.pairs, name), {"backends": backends(self.reports)}, nothing=None)


def audit_pairs(pairs: pd.DataFrame, name: str) -> pd.DataFrame:
    """An audit's close pairs (:data:`PAIR_COLUMNS`) as tidy pair results for the history.

    ``category`` is a twin's mode, else its kind (``near-duplicate``, ``other``); ``pair_id`` joins the two passage ids.

    Raises:
        ValueError: ``pairs`` lacks a needed column.
    """
    needed = [constants.COL_MODEL, "id_a", "id_b", constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE, "kind", "mode"]
    missing = [c for c in needed if c not in pairs.columns]
    if missing:
        raise ValueError(f"the audit's pairs lack columns {missing}")
    category = pairs["mode"].where(pairs["kind"] == "twin", pairs["kind"]).astype(str)
    return pd.DataFrame(
        {
            constants.COL_MODEL: pairs[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: category,
            constants.COL_PAIR_ID: pairs["id_a"].astype(str) + "~" + pairs["id_b"].astype(str),
            constants.COL_TEXT_A: pairs[constants.COL_TEXT_A],
            constants.COL_TEXT_B: pairs[constants.COL_TEXT_B],
            constants.COL_COSINE: pairs[constants.COL_COSINE].astype(float),
            "kind": pairs["kind"],
        }
    )


def check_corpus(passages: Sequence[str]) -> list[str]:
    """The corpus as the audit reads it: distinct non-empty texts, in order.

    Raises:
        ValueError: fewer than two distinct passages (one line saying how many).
    """
    if isinstance(passages, str):
        raise ValueError("give the corpus as a list of passages, not one string")  # noqa: TRY004
    texts = [passage_key(p) for p in passages if isinstance(p, str)]
    distinct = list(dict.fromkeys(t for t in texts if t))
    if len(distinct) < MIN_PASSAGES:
        what = "no passage" if not distinct else "one distinct passage"
        raise ValueError(f"the corpus holds {what}; an audit compares passages, so it needs at least {MIN_PASSAGES}")
    return distinct


def pair_rows(model: str, passages: list[str], ids: list[str], found, store: KindCache | None = None) -> pd.DataFrame:
    """Close pairs (``found``: a :class:`ClosePairs` over ``passages``) as the audit's pair rows, each classified once
    (``store``: kinds already known, read and filled; the Ray audit classifies per cell without one)."""
    i_list, j_list = found.i.tolist(), found.j.tolist()
    keys = [pair_key(passages[i], passages[j]) for i, j in zip(i_list, j_list, strict=True)] if store is not None else []
    stored = store.get_many(keys) if store is not None else {}
    rows, new = [], []
    for n, (i, j, cosine) in enumerate(zip(i_list, j_list, found.cosine.tolist(), strict=True)):
        a, b = passages[i], passages[j]
        known = stored.get(keys[n]) if keys else None
        if known is None:
            kind = kinds.pair_kind(a, b)
            # The marked words matter where one edit separates the texts; an "other" pair differs too much to mark.
            changed = kinds.changed_words(a, b) if kind.kind != kinds.KIND_OTHER else ("", "")
            known = (kind.kind, kind.mode, ";".join(kind.modes), *changed)
            if keys:
                new.append((keys[n], known))
        rows.append((model, ids[i], ids[j], a, b, cosine, *known, i, j))
    if store is not None and new:
        store.put_many(new)
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def audit_corpus(
    passages: Sequence[str],
    models: Sequence[str],
    floor: float = constants.DEFAULT_THRESHOLD,
    *,
    ids: Sequence[str] | None = None,
    queries: Sequence[str] = (),
    qrels: Mapping[int, set[int]] | None = None,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    project: bool = False,
    approximate: bool | None = None,
    k: int = DEFAULT_K,
    search: NeighbourSearch | None = None,
) -> AuditResult:
    """Encode every passage once per model, find every pair above ``floor``, classify each.

    Args:
        passages: the corpus (n >= 2 distinct texts; repeats and blanks are dropped).
        models: model names, aliases, ids or folders.
        floor: keep pairs whose cosine is strictly above this, in [-1, 1].
        ids: one id per passage of ``passages`` as given (default: 1-based row numbers).
        queries: optional queries; each keeps its top 5 passages.
        qrels: query index -> relevant passage indices, when the queries are judged.
        cache: the embedding cache, or None.
        options: how models load and encode; with the Ray engine (:class:`core.models.engines.RayEngine`) the texts
            the cache lacks are encoded on Ray's actors into the cache (the caller's, else one in memory for the
            run) and searched here as a local run's are, so a second run, local or Ray, encodes nothing again.
        progress: (fraction, message) callback; messages name the model.
        max_pairs: refuse a threshold that lets more pairs through than this, per model.
        project: also map the passages in 2-D per model (``coords``; the page's map).
        approximate: find close pairs with the approximate index (True), exactly (False), or by size (None: from
            ``core.audit.approximate.APPROX_FROM`` passages); the approximate path measures its recall on a sample.
        k: neighbours per passage the approximate index returns.
        search: how close pairs are found (:class:`core.audit.search.NeighbourSearch`); None: by ``approximate``
            (:func:`default_search`).

    Returns:
        An :class:`AuditResult`; a model that fails is in ``errors``, the others still run.

    Raises:
        ValueError: no model, too few passages, ids that do not match, or a floor out of range.
        core.audit.neighbours.TooManyPairs: more than ``max_pairs`` close pairs.
        core.cluster.session.RayUnavailable: the Ray engine, and the cluster at ``$RAY_ADDRESS`` cannot be joined.
    """
    start = time.perf_counter()
    if not models:
        raise ValueError("give at least one model")
    _check_floor(floor)
    given = list(passages)
    if ids is not None and len(ids) != len(given):
        raise ValueError(f"got {len(ids)} ids for {len(given)} passages")
    texts = check_corpus(given)
    passage_ids = _passage_ids(given, texts, ids)
    query_texts = [q for q in (passage_key(q) for q in queries) if q]
    errors: dict[str, str] = {}
    reports: dict[str, EncodeReport] = {}
    audited: dict[str, tuple[VectorsAudit, dict[str, float]]] = {}
    wanted = list(dict.fromkeys([*texts, *query_texts]))
    # Pair kinds are kept beside the embedding cache's file (never with --no-cache): a second run classifies nothing.
    kind_store = KindCache(cache.path.parent / KIND_CACHE_FILE) if cache is not None and cache.on_disk and cache.path else None
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = _encode_run(run, wanted, texts, query_texts, cache)
        if encoded is None:
            continue
        matrix, query_matrix, reports[run.label], encode_seconds = encoded
        found = audit_vectors(
            run.label,
            texts,
            passage_ids,
            matrix,
            floor,
            search=search or default_search(len(texts), approximate, k),
            query_matrix=query_matrix,
            kind_store=kind_store,
            max_pairs=max_pairs,
            project=project,
            note=_search_note(run),
        )
        audited[run.label] = (found, {"encode": encode_seconds})
    if kind_store is not None:
        kind_store.close()
    result = AuditResult(texts, passage_ids, query_texts, float(floor), pd.DataFrame(columns=PAIR_COLUMNS))
    return _collect(result, audited, qrels, errors, reports, start)


def _passage_ids(given: list[str], texts: list[str], ids: Sequence[str] | None) -> list[str]:
    """Name each distinct passage by its first row, so a repeated text keeps the id the user sees first."""
    first_id: dict[str, str] = {}
    for row, text in enumerate(given):
        if isinstance(text, str):
            first_id.setdefault(passage_key(text), str(ids[row]) if ids is not None else str(row + 1))
    return [first_id[t] for t in texts]


def _encode_run(
    run: ModelRun,
    wanted: list[str],
    texts: list[str],
    query_texts: list[str],
    cache: EmbeddingCache | None,
) -> tuple[np.ndarray, np.ndarray | None, EncodeReport, float] | None:
    """Encode one model's passages and queries into matrices, so the per-text vectors are freed before the search.

    Returns:
        The (n, d) passage matrix, the (q, d) query matrix or None, the encoding report and the seconds spent;
        None when the model failed (its error is recorded by ``run``).
    """
    clock = time.perf_counter()
    encoded = run.encode(wanted, share=0.7)
    if encoded is None:
        return None
    seconds = time.perf_counter() - clock
    vectors, report = encoded
    matrix = embedding_matrix(vectors, texts)
    query_matrix = embedding_matrix(vectors, query_texts) if query_texts else None
    del vectors
    if cache is not None and cache.on_disk:
        # The matrix holds every vector now; the disk layer keeps them for the next run (as the chunked runner does per chunk).
        cache.clear_memory()
    return matrix, query_matrix, report, seconds


def _search_note(run: ModelRun) -> Callable[[float, str], None]:
    """Report the search's progress as 70-90% of the model's share, after its encoding's 70%."""

    def noted(share: float, message: str) -> None:
        run.note(0.7 + 0.2 * share, message)

    return noted


def _collect(
    result: AuditResult,
    audited: Mapping[str, tuple[VectorsAudit, dict[str, float]]],
    qrels: Mapping[int, set[int]] | None,
    errors: dict[str, str],
    reports: dict[str, EncodeReport],
    start: float,
) -> AuditResult:
    """Gather each model's audit into the one result, so the pages filter one table rather than one per model.

    Args:
        result: the corpus part (passages, ids, queries, floor); its other fields are filled here.
        audited: model -> its audit and the seconds it spent encoding, in run order.
        start: the run's :func:`time.perf_counter` at its start (the wall time counts this gathering too).
    """
    frames = [found.pairs for found, _ in audited.values()]
    result.pairs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PAIR_COLUMNS)
    for label, (found, spent) in audited.items():
        result.search[label] = found.search
        if found.top is not None:
            result.top[label] = found.top
        if found.coords is not None:
            result.coords[label] = found.coords
        result.timings[label] = {k: round(v, 3) for k, v in {**spent, **found.timings}.items()}
    result.qrels = dict(qrels) if qrels is not None else None
    result.errors, result.reports, result.seconds = errors, reports, time.perf_counter() - start
    return result


def _check_floor(floor: float) -> None:
    try:
        check_threshold(floor)
    except ValueError:
        raise ValueError(f"the threshold must be between -1 and 1, got {floor}") from None


def default_search(n: int, approximate: bool | None = None, k: int = DEFAULT_K) -> NeighbourSearch:
    """The search an audit of ``n`` passages uses unless told: faiss HNSW when asked (True, ``--approximate``); with None,
    the k-means cells (:class:`core.audit.ivf.IvfSearch`, faster and smaller than HNSW by measurement) from
    :data:`core.audit.approximate.APPROX_FROM` passages; exact blocked products otherwise."""
    if approximate:
        return HnswSearch(k)
    if approximate is None and n >= APPROX_FROM:
        from core.audit.ivf import IvfSearch

        return IvfSearch()
    return ExactSearch()


@dataclass
class VectorsAudit:
    """One model's (or one set of vectors') audit: its classified close pairs, its queries' top 5, its map, how it searched."""

    pairs: pd.DataFrame
    search: SearchReport
    top: np.ndarray | None = None
    coords: np.ndarray | None = None
    timings: dict[str, float] = field(default_factory=dict)


def audit_vectors(
    label: str,
    passages: list[str],
    ids: list[str],
    unit: np.ndarray,
    floor: float,
    *,
    search: NeighbourSearch,
    query_matrix: np.ndarray | None = None,
    kind_store: KindCache | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    project: bool = False,
    note: Callable[[float, str], None] | None = None,
) -> VectorsAudit:
    """The audit of given vectors, whatever made them (a model now, a store, a file): close pairs by ``search``, classified.

    Args:
        label: the model (or vectors) named in every row.
        passages, ids: n distinct passages and their ids.
        unit: (n, d) their vectors, rows of unit length.
        floor: keep pairs strictly above this cosine.
        search: the strategy (:class:`core.audit.search.NeighbourSearch`).
        query_matrix: (q, d) query vectors, or None: each query's top 5 by exact search.
        kind_store: the pair-kind cache, or None.
        max_pairs: refuse more close pairs.
        project: also map the passages in 2-D.
        note: (share of the search done, message) as it goes.

    Raises:
        TooManyPairs: more than ``max_pairs`` pairs; ValueError: a bad floor.
    """
    _check_floor(floor)
    method = getattr(search, "method", "exact")

    def searched(done: int, total: int) -> None:
        if note is not None:
            note(done / max(total, 1), f"{label}: searched {done:,}/{total:,} passages for their close pairs")

    clock = time.perf_counter()
    if note is not None and method != "exact":
        note(0.0, f"{label}: {method} neighbours of {len(passages):,} passages")
    found, report = search.close_pairs(unit, floor, max_pairs=max_pairs, progress=searched)
    if note is not None:
        note(1.0, f"{label}: classifying {found.i.size:,} close pairs")
    spent = {"search": time.perf_counter() - clock}
    clock = time.perf_counter()
    pairs = pair_rows(label, passages, ids, found, kind_store)
    spent["classify"], clock = time.perf_counter() - clock, time.perf_counter()
    top = None
    if query_matrix is not None:
        top, _ = top_k(query_matrix, unit, TOP_K)
        spent["queries"], clock = time.perf_counter() - clock, time.perf_counter()
    coords = None
    if project:
        coords = project_2d(unit)
        spent["project"] = time.perf_counter() - clock
    return VectorsAudit(pairs, report, top, coords, spent)


def audit_source(
    label: str,
    source: PassageVectors,
    floor: float,
    *,
    search: NeighbourSearch,
    queries: Sequence[str] = (),
    query_matrix: np.ndarray | None = None,
    report: EncodeReport | None = None,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    project: bool = False,
    progress: ProgressFn | None = None,
    start: float | None = None,
) -> AuditResult:
    """:func:`audit_vectors` of a source's passages and vectors (a store, a vectors file) as one :class:`AuditResult`.

    Args:
        label: the model that made the vectors, or a name for them when none was given.
        source: the passages, ids and unit vectors (:class:`core.files.vectors.PassageVectors`).
        queries, query_matrix: the queries and their (q, d) vectors (none without a model to encode them).
        report: the encoding report of the model checked on the source, when there is one.
        progress: (fraction, message) as the search goes.
        start: ``time.perf_counter()`` when the run began (its seconds count from there).

    Raises:
        TooManyPairs: more than ``max_pairs`` pairs; ValueError: a bad floor.
    """
    begun = time.perf_counter() if start is None else start
    note = (lambda share, message: progress(0.7 + 0.2 * share, message)) if progress is not None else None
    found = audit_vectors(
        label,
        source.passages,
        source.ids,
        source.vectors,
        floor,
        search=search,
        query_matrix=query_matrix,
        max_pairs=max_pairs,
        project=project,
        note=note,
    )
    return AuditResult(
        list(source.passages),
        list(source.ids),
        list(queries),
        float(floor),
        found.pairs[PAIR_COLUMNS],
        {label: found.top} if found.top is not None else {},
        {label: found.coords} if found.coords is not None else {},
        reports={label: report} if report is not None else {label: EncodeReport(label)},
        seconds=time.perf_counter() - begun,
        timings={label: {k: round(v, 3) for k, v in found.timings.items()}},
        search={label: found.search},
    )
