"""The one place that holds Streamlit's cache wrappers.

Models and the embedding cache are process-wide resources shared by every
session (``st.cache_resource``); availability checks and data files are cached
values (``st.cache_data``).  Pages call these, never ``core`` loaders directly,
so a model is loaded once per server.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.constants import DEVICE_AUTO
from core.history import store as history_store
from core.history.diff import RunDiff, diff_runs
from core.models.cache import EmbeddingCache
from core.models.loading import Availability, LoadedModel, availability, load_model, load_tokenizer
from core.papers import reference, suites


@st.cache_resource(show_spinner=False)
def embedding_cache() -> EmbeddingCache:
    """The shared two-layer embedding cache (memory + sqlite)."""
    return EmbeddingCache()


@st.cache_resource(show_spinner=False)  # the caller names the model and its one-off export (ui.state.run)
def model(name: str, allow_remote_code: bool = False, device: str = DEVICE_AUTO) -> LoadedModel:
    """A loaded model on a device (``auto``, ``cpu``, ``cuda``, ``mps``), shared by all sessions (raises ModelUnavailable)."""
    return load_model(name, allow_remote_code=allow_remote_code, device=device)


@st.cache_data(ttl=60, show_spinner=False)
def model_availability(name: str, allow_remote_code: bool = False) -> Availability:
    """Whether a model can load here; re-checked at most once a minute."""
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
    return diff_runs(old.results, new.results, old.thresholds() if threshold is None else threshold, new.thresholds() if threshold is None else threshold)


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
    """A model's tokenizer, without its weights when possible (raises ModelUnavailable)."""
    return load_tokenizer(name)


# --- why a score (core.probes.explain): explanations cost many forward passes, so each is kept
@st.cache_data(show_spinner="Explaining the score…", max_entries=128)
def explanation(name: str, allow_remote_code: bool, device: str, text_a: str, text_b: str, method: str, unit: str, steps: int, baseline: str):
    """``core.probes.explain.explain_pair`` for one model and pair: (Explanation, note or None); raises ModelUnavailable, ValueError."""
    from core.probes.explain import explain_pair

    return explain_pair(model(name, allow_remote_code, device), text_a, text_b, method=method, unit=unit, steps=steps, baseline=baseline)


@st.cache_data(show_spinner="Cosine layer by layer…", max_entries=128)
def layer_curve(name: str, allow_remote_code: bool, device: str, text_a: str, text_b: str) -> pd.DataFrame:
    """The pair's mean-pooled cosine at every layer of a torch model (raises ModelUnavailable, ValueError)."""
    from core.probes.explain import layer_cosines

    return layer_cosines(model(name, allow_remote_code, device), text_a, text_b)


@st.cache_data(show_spinner="Layer curves of the OOV suite…", max_entries=16)
def oov_layer_curves(name: str, allow_remote_code: bool, device: str) -> pd.DataFrame:
    """Layer curves of the OOV suite and the baseline controls for one torch model (raises ModelUnavailable, ValueError)."""
    from core.probes.explain import oov_layer_curves as curves

    return curves(model(name, allow_remote_code, device))


@st.cache_data(show_spinner=False, max_entries=32)
def oov_layer_report(curves: pd.DataFrame, reading: str) -> dict[str, pd.DataFrame]:
    """``core.probes.explain.oov_layer_report`` (bootstrap intervals per layer) for curves and a reading."""
    from core.probes.explain import oov_layer_report as report

    return report(curves, reading)


# --- retrieval probes (core.probes.retrieval): a run ranks every passage for every query and bootstraps
# every rate, so each run is kept per inputs; the page warms the embedding cache first, with progress.
@st.cache_data(show_spinner=False)
def retrieval_suite():
    """The shipped retrieval suite as tidy passage and query tables (``RetrievalSuite``)."""
    from core.probes.retrieval.suite import load_retrieval_suite

    return load_retrieval_suite()


@st.cache_data(show_spinner=False, max_entries=16)
def retrieval_run(name: str, passages: pd.DataFrame, queries: pd.DataFrame, models: tuple[str, ...], remote: tuple[str, ...], device: str,
                  mitigations: str, thresholds: tuple[tuple[str, float], ...]):
    """``run_retrieval`` of a suite (its two tables) with the ``--mitigate`` list ``mitigations`` (``RetrievalResult``)."""
    from core.probes.retrieval.mitigations import parse_mitigations
    from core.probes.retrieval.run import run_retrieval
    from core.probes.retrieval.suite import RetrievalSuite

    return run_retrieval(RetrievalSuite(name, passages, queries), list(models), cache=embedding_cache(), allow_remote_code=list(remote), device=device,
                         mitigations=parse_mitigations(mitigations, thresholds=dict(thresholds) or None))


@st.cache_data(show_spinner=False, max_entries=16)
def corpus_run(corpus: tuple[str, ...], queries: tuple[str, ...], models: tuple[str, ...], remote: tuple[str, ...], device: str,
               mitigations: str, thresholds: tuple[tuple[str, float], ...]):
    """``run_corpus_probe`` of a corpus and its queries with the ``--mitigate`` list ``mitigations`` (``CorpusResult``)."""
    from core.probes.retrieval.mitigations import parse_mitigations
    from core.probes.retrieval.run import run_corpus_probe

    return run_corpus_probe(list(corpus), list(queries), list(models), cache=embedding_cache(), allow_remote_code=list(remote), device=device,
                            mitigations=parse_mitigations(mitigations, thresholds=dict(thresholds) or None))


@st.cache_data(ttl=60, show_spinner=False)
def reranker_availability(model_id: str) -> Availability:
    """Whether a cross-encoder can load here (bounded by the hub timeout); re-checked at most once a minute."""
    from core.probes.retrieval.reranker import reranker_availability as check

    return check(model_id)


# --- analyses of a results table (issue 15: a slider move or a download must not recompute them).
# Keyed by the results table and the arguments, so a threshold seen before is served at once and a
# new one recomputes only what depends on it.
def _analyses() -> dict:
    from core.papers import failure_modes, oov
    from core.probes import calibration, labels
    from core.scoring import tables

    return {
        "category_summary": tables.category_summary,
        "failure_rate_curves": tables.failure_rate_curves,
        "failure_mode_table": failure_modes.failure_mode_table,
        "severity_ranking": failure_modes.severity_ranking,
        "kruskal_by_category": failure_modes.kruskal_by_category,
        "vulnerability_ranking": failure_modes.vulnerability_ranking,
        "calibrate": calibration.calibrate,
        "roc_table": calibration.roc_table,
        "calibrated_failure_rates": lambda results, negatives, max_fpr, method, threshold: calibration.failure_rates(
            results, calibration.thresholds_by_model(calibration.calibrate(results, negatives, max_fpr, threshold), method), threshold),
        "dynamic_ranges": oov.dynamic_ranges,
        "label_report": labels.label_report,
    }


ANALYSES = frozenset(("category_summary", "failure_rate_curves", "failure_mode_table", "severity_ranking", "kruskal_by_category", "vulnerability_ranking",
                      "calibrate", "roc_table", "calibrated_failure_rates", "dynamic_ranges", "label_report"))


@st.cache_data(show_spinner=False, max_entries=256)
def analysis(name: str, results: pd.DataFrame, *args):
    """``core`` analysis ``name`` (one of :data:`ANALYSES`) of a results table with ``args``, kept per inputs.

    Returns a copy-safe value: Streamlit hands each caller its own copy of a cached DataFrame.
    """
    if name not in ANALYSES:
        raise ValueError(f"unknown analysis {name!r}; choose from {sorted(ANALYSES)}")
    return _analyses()[name](results, *args)
