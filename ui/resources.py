"""The one place that holds Streamlit's cache wrappers.

Models and the embedding cache are process-wide resources shared by every
session (``st.cache_resource``); availability checks and data files are cached
values (``st.cache_data``).  Pages call these, never ``core`` loaders directly,
so a model is loaded once per server.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import pandas as pd
import streamlit as st

# Modules imported whole and called by full name, so each call reads the module's function at call time: a test that
# replaces ``core.audit.run.audit_corpus`` replaces what the page calls.
import core.audit.findings
import core.audit.risk
import core.audit.run
import core.files.beir
import core.files.triples
import core.models.loaders
import core.models.warm
import core.probes.explain
import core.probes.index_settings
import core.probes.retrieval.beir
import core.probes.retrieval.corpus
import core.probes.retrieval.reranker
import core.probes.retrieval.run
import core.probes.retrieval.specs
import core.probes.retrieval.suite
import core.probes.retrieval.suite_files
import core.probes.retrieval.triples
import core.probes.tune.estimate
import core.probes.vector_settings
from core import constants
from core.history import store as history_store
from core.history.diff import RunDiff, diff_runs
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.loading import Availability, LoadedModel, ModelUnavailable, availability, load_tokenizer
from core.models.options import EncodeOptions
from core.models.runs import load
from core.papers import failure_modes, oov, reference, reproduce, suites, versus
from core.probes import calibration, labels
from core.scoring import tables
from ui.endpoints import settings_key

if TYPE_CHECKING:
    from core.probes.retrieval.specs import MitigationSpec

P = ParamSpec("P")
R = TypeVar("R")


@st.cache_resource(show_spinner=False)
def embedding_cache() -> EmbeddingCache:
    """The shared two-layer embedding cache (memory + sqlite)."""
    return EmbeddingCache()


@st.cache_resource(show_spinner=False)
def _seen_notes() -> tuple[set[str], threading.Lock]:
    return set(), threading.Lock()


def first_sighting(notes: list[str]) -> list[str]:
    """The ``notes`` this server has not shown before, now marked seen: a one-off note is news once, not in every session."""
    seen, lock = _seen_notes()
    with lock:
        new = [note for note in dict.fromkeys(notes) if note not in seen]
        seen.update(new)
    return new


@st.cache_resource(show_spinner=False)
def model(name: str, options: EncodeOptions) -> LoadedModel:
    """A loaded model as ``options`` say (device, backend, remote code), shared by all sessions (raises ModelUnavailable).

    A model a server encodes (an endpoint) is refused before any load: its one shared instance would carry the first
    session's endpoint settings and key to every other session, and nothing here (explanations) can use it anyway.
    The refusal is raised, so it is never cached.
    """
    reason = core.probes.explain.not_explainable(name)
    if reason:
        raise ModelUnavailable(reason)
    return load(name, options)


@st.cache_data(ttl=60, show_spinner=False)
def model_availability(name: str, allow_remote_code: bool = False, settings_key: str = "") -> Availability:
    """Whether a model can load here; re-checked at most once a minute (``settings_key``: an endpoint's settings digest)."""
    return availability(name, allow_remote_code=allow_remote_code)


@st.cache_data(show_spinner=False)
def suite(name: str) -> pd.DataFrame:
    """A shipped suite, expanded as the runner expects."""
    return suites.load_suite(name)


@st.cache_data(show_spinner=False)
def suite_rows(name: str) -> pd.DataFrame:
    """A shipped suite file as written (one row per pair or OOV item)."""
    return suites.read_suite_file(name)


@st.cache_data(show_spinner="Comparing the two runs…", max_entries=32)
def history_diff(before: int, after: int, stamp: str, threshold: float | None = None) -> RunDiff:
    """Run ``after`` against run ``before`` (``core.history.diff``); ``threshold`` None = each run's own.

    Stored runs never change, so the diff is cached; ``stamp`` (the history
    file and both runs' times) keeps a re-created history from serving a stale one.
    """
    old, new = history_store.load_run(before), history_store.load_run(after)
    return diff_runs(
        old.results,
        new.results,
        old.thresholds() if threshold is None else threshold,
        new.thresholds() if threshold is None else threshold,
        by_content=old.comparable_with(new),
    )


@st.cache_data(show_spinner=False)
def published(paper: str | None = None) -> pd.DataFrame:
    """The papers' published figures (tidy long)."""
    return reference.load_reference(paper)


@st.cache_data(show_spinner=False)
def failure_examples() -> pd.DataFrame:
    """The failure paper's section 4.6 example pairs and published scores."""
    return reference.load_failure_examples()


@st.cache_data(show_spinner=False)
def oov_entities() -> pd.DataFrame:
    """OOV paper Table 2: entities, replacements and their published splits."""
    return reference.load_oov_entities()


@st.cache_resource(show_spinner=False)
def tokenizer(name: str):
    """A model's tokenizer, without its weights when possible (raises ModelUnavailable).

    A model with a ``tokenizer.json`` gets it under the ``tokenizers`` library
    (``core.models.warm.fast_tokenizer``, the pieces and counts a warm run uses): milliseconds,
    where transformers' AutoTokenizer imports transformers and torch (8-10 s on a busy 2-core
    machine) on a page's first view. Others load as before.
    """
    try:
        meta = registry.resolve(name)
        # A server's model has only an estimate for counting, no pieces to show: its loader says why (ModelUnavailable).
        fast = core.models.warm.fast_tokenizer(meta) if core.models.loaders.loader_for(meta).shows_pieces else None
    except ValueError:
        fast = None
    return fast if fast is not None else load_tokenizer(name)


# --- why a score (core.probes.explain): explanations cost many forward passes, so each is kept
@st.cache_data(show_spinner="Explaining the score…", max_entries=128)
def explanation(name: str, options: EncodeOptions, text_a: str, text_b: str, method: str, unit: str, steps: int, baseline: str):
    """``core.probes.explain.explain_pair`` for one model and pair: (Explanation, note or None); raises ModelUnavailable, ValueError."""
    return core.probes.explain.explain_pair(model(name, options), text_a, text_b, method=method, unit=unit, steps=steps, baseline=baseline)


@st.cache_data(show_spinner="Cosine layer by layer…", max_entries=128)
def layer_curve(name: str, options: EncodeOptions, text_a: str, text_b: str) -> pd.DataFrame:
    """The pair's mean-pooled cosine at every layer of a torch model (raises ModelUnavailable, ValueError)."""
    return core.probes.explain.layer_cosines(model(name, options), text_a, text_b)


@st.cache_data(show_spinner="Layer curves of the OOV suite…", max_entries=16)
def oov_layer_curves(name: str, options: EncodeOptions) -> pd.DataFrame:
    """Layer curves of the OOV suite and the baseline controls for one torch model (raises ModelUnavailable, ValueError)."""
    return core.probes.explain.oov_layer_curves(model(name, options))


@st.cache_data(show_spinner=False, max_entries=32)
def oov_layer_report(curves: pd.DataFrame, reading: str) -> dict[str, pd.DataFrame]:
    """``core.probes.explain.oov_layer_report`` (bootstrap intervals per layer) for curves and a reading."""
    return core.probes.explain.oov_layer_report(curves, reading)


# --- retrieval probes (core.probes.retrieval): a run ranks every passage for every query and bootstraps
# every rate, so each run is kept per inputs; the page warms the embedding cache first, with progress.
@st.cache_data(show_spinner=False)
def retrieval_suite():
    """The shipped retrieval suite as tidy passage and query tables (``RetrievalSuite``)."""
    return core.probes.retrieval.suite_files.load_retrieval_suite()


@st.cache_data(show_spinner=False, max_entries=16)
def retrieval_run(
    name: str,
    passages: pd.DataFrame,
    queries: pd.DataFrame,
    models: tuple[str, ...],
    options: EncodeOptions,
    mitigations: tuple[MitigationSpec, ...],
):
    """``run_retrieval`` of a suite (its two tables) with the mitigations the specs describe (``RetrievalResult``)."""
    return core.probes.retrieval.run.run_retrieval(
        core.probes.retrieval.suite.RetrievalSuite(name, passages, queries),
        list(models),
        cache=embedding_cache(),
        options=options,
        mitigations=core.probes.retrieval.specs.build_mitigations(mitigations),
    )


@st.cache_data(show_spinner=False, max_entries=16)
def corpus_run(
    corpus: tuple[str, ...],
    queries: tuple[str, ...],
    models: tuple[str, ...],
    options: EncodeOptions,
    mitigations: tuple[MitigationSpec, ...],
):
    """``run_corpus_probe`` of a corpus and its queries with the mitigations the specs describe (``CorpusResult``)."""
    return core.probes.retrieval.corpus.run_corpus_probe(
        list(corpus),
        list(queries),
        list(models),
        cache=embedding_cache(),
        options=options,
        mitigations=core.probes.retrieval.specs.build_mitigations(mitigations),
    )


@st.cache_data(show_spinner=False, max_entries=16)
def triples_run(
    name: str,
    frame: pd.DataFrame,
    mapping: tuple[tuple[str, object], ...],
    models: tuple[str, ...],
    options: EncodeOptions,
    mitigations: tuple[MitigationSpec, ...] = (),
):
    """``run_triples`` of a triples table with the mitigations the specs describe (``TriplesResult``).

    Cached per table, models and specs.
    """
    return core.probes.retrieval.triples.run_triples(
        core.files.triples.Triples(name, frame, dict(mapping)),  # type: ignore[arg-type]
        list(models),
        cache=embedding_cache(),
        options=options,
        mitigations=core.probes.retrieval.specs.build_mitigations(mitigations),
    )


@st.cache_data(show_spinner=False, max_entries=16)
def tune_counts(name: str, passages: pd.DataFrame, queries: pd.DataFrame, seed: int):
    """What a tune of this suite trains on and probes, for its estimate (``SuiteCounts``); kept per suite and seed."""
    suite = core.probes.retrieval.suite.RetrievalSuite(name, passages, queries)
    return core.probes.tune.estimate.suite_counts(suite, seed)


@st.cache_data(show_spinner=False, max_entries=8)
def beir_folder(folder: str, name: str, split: str, digest: str):
    """An unpacked BEIR upload's judged queries and qrels for a split (``BeirFolder``); ``digest`` (of the upload) keys the cache."""
    del digest
    return core.files.beir.read_unpacked(folder, name, split)


@st.cache_data(show_spinner=False, max_entries=8)
def beir_run(
    folder: str, split: str, digest: str, models: tuple[str, ...], options: EncodeOptions, mitigations: tuple[MitigationSpec, ...] = ()
):
    """``run_beir`` of an unpacked BEIR folder with the mitigations the specs describe (``BeirResult``).

    ``digest`` (of the upload) keys the cache.
    """
    del digest
    return core.probes.retrieval.beir.run_beir(
        core.files.beir.read_beir(folder, split),
        list(models),
        cache=embedding_cache(),
        options=options,
        mitigations=core.probes.retrieval.specs.build_mitigations(mitigations),
    )


@st.cache_data(ttl=60, show_spinner=False)
def reranker_availability(model_id: str) -> Availability:
    """Whether a cross-encoder can load here (bounded by the hub timeout); re-checked at most once a minute."""
    return core.probes.retrieval.reranker.reranker_availability(model_id)


# --- analyses of a results table (a slider move or a download must not recompute them).
# Streamlit hashes a table of 50,000+ rows by its shape and a sample, so an edited upload of the
# same size could be served the previous file's analyses.  Each analysis therefore hashes a table by a digest of
# every row (``hash_funcs``; computed once per table object) and is a typed wrapper of one core function.
_DIGESTS: dict[int, tuple[weakref.ref, str]] = {}
_DIGESTS_LOCK = threading.Lock()


def results_digest(results: pd.DataFrame) -> str:
    """A digest of every row, column name and dtype of a results table (32 hex characters).

    Computed once per table object (a stored result is never edited in
    place; a new upload or run is a new object) and remembered while the
    table lives.
    """
    key = id(results)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
        if known is not None and known[0]() is results:
            return known[1]
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr([(str(c), str(t)) for c, t in results.dtypes.items()]).encode("utf-8", "surrogatepass"))
    try:
        rows = pd.util.hash_pandas_object(results, index=True).to_numpy()
    except TypeError:  # unhashable cells (lists, dicts): their text stands for them
        rows = pd.util.hash_pandas_object(results.astype(str), index=True).to_numpy()
    digest.update(rows.tobytes())
    value = digest.hexdigest()
    with _DIGESTS_LOCK:

        def forget(_ref: object, k: int = key) -> None:
            _DIGESTS.pop(k, None)

        _DIGESTS[key] = (weakref.ref(results, forget), value)
    return value


_BY_EVERY_ROW: dict[str | type[Any], Callable[[Any], Any]] = {pd.DataFrame: results_digest}


def _analysis(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` cached per inputs, a results table keyed by :func:`results_digest` (every row), not Streamlit's sample."""
    return st.cache_data(show_spinner=False, max_entries=64, hash_funcs=_BY_EVERY_ROW)(func)


# Each wrapper takes exactly the rows it scores, as its core function does: a page subsets (one suite's rows,
# ``core.scoring.tables.rows_of_suite``) before it calls.  Streamlit hands each caller its own copy of a cached table.
@_analysis
def category_summary(results: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """``core.scoring.tables.category_summary``."""
    return tables.category_summary(results, threshold)


@_analysis
def failure_rate_curves(results: pd.DataFrame) -> pd.DataFrame:
    """``core.scoring.tables.failure_rate_curves`` over the default grid."""
    return tables.failure_rate_curves(results)


@_analysis
def failure_mode_table(results: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """``core.papers.failure_modes.failure_mode_table``."""
    return failure_modes.failure_mode_table(results, threshold)


@_analysis
def severity_ranking(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.failure_modes.severity_ranking``."""
    return failure_modes.severity_ranking(results)


@_analysis
def kruskal_by_category(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.failure_modes.kruskal_by_category``."""
    return failure_modes.kruskal_by_category(results)


@_analysis
def vulnerability_ranking(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.failure_modes.vulnerability_ranking``."""
    return failure_modes.vulnerability_ranking(results)


@_analysis
def calibrate(results: pd.DataFrame, negatives: tuple[str, ...], max_fpr: float, threshold: float) -> pd.DataFrame:
    """``core.probes.calibration.calibrate``."""
    return calibration.calibrate(results, negatives, max_fpr, threshold)


@_analysis
def roc_table(results: pd.DataFrame, negatives: tuple[str, ...]) -> pd.DataFrame:
    """``core.probes.calibration.roc_table``."""
    return calibration.roc_table(results, negatives)


@_analysis
def calibrated_failure_rates(
    results: pd.DataFrame, negatives: tuple[str, ...], max_fpr: float, method: str, threshold: float
) -> pd.DataFrame:
    """``core.probes.calibration.failure_rates`` at each model's threshold calibrated by ``method``."""
    cal = calibration.calibrate(results, negatives, max_fpr, threshold)
    return calibration.failure_rates(results, calibration.thresholds_by_model(cal, method), threshold)


@_analysis
def dynamic_ranges(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.oov.dynamic_ranges``."""
    return oov.dynamic_ranges(results)


@_analysis
def label_report(results: pd.DataFrame, threshold: float, match_label: str | None = None) -> dict[str, pd.DataFrame]:
    """``core.probes.labels.label_report``."""
    return labels.label_report(results, threshold, match_label)


@_analysis
def label_correlation(results: pd.DataFrame) -> pd.DataFrame:
    """``core.scoring.tables.label_correlation``."""
    return tables.label_correlation(results)


@_analysis
def oov_tables(results: pd.DataFrame, reading: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The OOV paper's dynamic ranges (baseline suite), deltas at ``reading`` and their summary (``core.papers.oov``)."""
    dynamic = oov.baseline_ranges(results)
    deltas = oov.oov_deltas(results, reading, dynamic)
    return dynamic, deltas, oov.oov_summary(deltas, dynamic)


@_analysis
def oov_readings(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.oov.oov_readings`` (both readings side by side)."""
    return oov.oov_readings(results)


@_analysis
def jaccard_correlation(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.oov.jaccard_correlation``."""
    return oov.jaccard_correlation(results)


@_analysis
def entity_swap_check(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.oov.entity_swap_check``."""
    return oov.entity_swap_check(results)


@_analysis
def compare_to_published(results: pd.DataFrame, paper: str, table: str, reading: str) -> pd.DataFrame:
    """``core.papers.reproduce.compare_to_published`` at the default tolerance."""
    return reproduce.compare_to_published(results, paper, table, reading=reading)


@_analysis
def published_vs_ours(results: pd.DataFrame) -> pd.DataFrame:
    """``core.papers.versus.published_vs_ours``: the failure paper's Table 1, Table 2 and Appendix B beside ``results``."""
    return versus.published_vs_ours(results)


# --- the corpus audit (core.audit): one run per corpus content, models and options, kept for the server's sessions;
# a threshold at or above the audit's floor filters its pairs (``audit_risk``), so the slider never encodes again.
_AUDITS_LOCK = threading.Lock()
_AUDITS_KEPT = 8


@st.cache_resource(show_spinner=False)
def _audit_store() -> dict[tuple, Any]:
    return {}


def audit_key(digest: str, models: tuple[str, ...], options: EncodeOptions, floor: float) -> tuple:
    """What one audit is kept under: the content digest of the corpus and queries, the models, how they run, the floor.

    An endpoint model is keyed by its settings' digest too: two sessions naming one ``openai:`` model at two URLs
    (or with two keys) never share an audit.
    """
    return (digest, tuple((m, settings_key(m)) for m in models), options, floor)


def stored_audit(key: tuple):
    """The audit kept under ``key`` (``AuditResult``), or None."""
    with _AUDITS_LOCK:
        return _audit_store().get(key)


def audit_run(key: tuple, passages: list[str], queries: list[str], progress: Callable[[float, str], None] | None = None):
    """``audit_corpus`` of ``passages`` (and ``queries``) at the key's floor, run once per key (``AuditResult``).

    The progress callback names each model; a kept result returns at once without calling it.

    Raises:
        ValueError: as ``core.audit.run.audit_corpus`` (too few passages, too many pairs).
    """
    found = stored_audit(key)
    if found is not None:
        return found
    _digest, keyed_models, options, floor = key
    result = core.audit.run.audit_corpus(
        passages,
        [name for name, _settings in keyed_models],
        floor,
        queries=queries,
        cache=embedding_cache(),
        options=options,
        progress=progress,
        project=True,
    )
    with _AUDITS_LOCK:
        store = _audit_store()
        store[key] = result
        while len(store) > _AUDITS_KEPT:
            store.pop(next(iter(store)))
    return result


@st.cache_data(show_spinner=False, max_entries=64)
def audit_risk(key: tuple, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """The kept audit at ``threshold``: (risk summary, pairs above it, ``core.audit.findings.AuditFindings``), cached per
    audit and threshold."""
    result = stored_audit(key)
    if result is None:
        raise ValueError("the audit is no longer kept; run it again")
    summary = core.audit.risk.risk_summary(result, threshold)
    return summary, core.audit.risk.pairs_at(result, threshold), core.audit.findings.audit_findings(result, summary, threshold)


@st.cache_data(show_spinner=False, max_entries=64)
def audit_cards(key: tuple, threshold: float, kind: str) -> pd.DataFrame:
    """The kept audit's close pairs of ``kind`` above ``threshold``, each once with every model's cosine
    (``core.audit.findings.pair_cards``)."""
    result = stored_audit(key)
    if result is None:
        raise ValueError("the audit is no longer kept; run it again")
    return core.audit.findings.pair_cards(result, threshold, kind)


@st.cache_data(show_spinner=False, max_entries=16)
def audit_curve(key: tuple) -> pd.DataFrame:
    """The kept audit's twin-share curve (``core.audit.risk.twin_curve``)."""
    result = stored_audit(key)
    if result is None:
        raise ValueError("the audit is no longer kept; run it again")
    return core.audit.risk.twin_curve(result)


@st.cache_data(show_spinner=False, max_entries=8)
def index_settings_run(
    probe: str,
    models: tuple[str, ...],
    options: EncodeOptions,
    settings: tuple[str, ...],
    threshold: float,
    pairs: pd.DataFrame | None = None,
    corpus: tuple[str, ...] | None = None,
    queries: tuple[str, ...] = (),
):
    """``run_index_settings`` of a shipped suite, of ``pairs`` or of a ``corpus`` (and its ``queries``) named ``probe``
    (``IndexSettingsResult``).

    The shipped suites are ``failure-modes`` and ``retrieval``.
    """
    if corpus is not None:
        return core.probes.vector_settings.corpus_index_settings(
            list(models),
            corpus,
            name=probe,
            settings=core.probes.index_settings.parse_settings(settings),
            queries=queries,
            cache=embedding_cache(),
            options=options,
        )
    if pairs is None and probe == constants.SUITE_FAILURE_MODES:
        pairs = suites.load_suite(probe)
    return core.probes.index_settings.run_index_settings(
        list(models),
        settings=core.probes.index_settings.parse_settings(settings),
        pairs={probe: pairs} if pairs is not None else None,
        retrieval=retrieval_suite() if probe == constants.SUITE_RETRIEVAL else None,
        cache=embedding_cache(),
        options=options,
        threshold=threshold,
    )
