"""Running the Retrieval page's probes: the embedding cache warmed with progress, then the source's cached run, kept and
recorded in the history when some model produced a result."""

from __future__ import annotations

import time

import streamlit as st

from core.models.runs import model_runs
from core.probes.retrieval.specs import MitigationSpec
from core.scoring import findings
from ui import history, progress, resources, state, widgets
from ui.retrieval.common import KEY_RESULT, KEY_RUN_ERRORS, Source, StoredRun

ss = st.session_state


def _warm(source: Source, selection: state.Selection, bar, live: progress.LiveRun | None) -> None:
    """Encode every text once per model into the shared embedding cache, with progress (the cached run after it shows none).

    A model whose every text is already cached loads no weights (core.models.runs). Models go fastest
    first, and a suite's answer for each model (its win rate) is shown the moment that model is encoded.
    Inputs whose texts are not known up front (a triples file, a BEIR folder) are encoded by the run itself.
    """
    if not source.texts or live is None:
        bar.progress(1.0, text="encoding through the embedding cache")
        return
    texts = list(source.texts)

    def note(fraction: float, message: str) -> None:
        bar.progress(fraction, text=f"{widgets.md_escape(message)} · {live.elapsed()}")  # messages name the models, which users type

    # Failures are left to the run itself, which reports every model that fails with the reason.
    for run in model_runs(live.est.fastest_first(), selection.options, cache=resources.embedding_cache(), errors={}, progress=note):
        if run.encode(texts) is None or source.suite is None:
            continue
        suite = source.suite
        alone = resources.retrieval_run(suite.name, suite.passages, suite.queries, (run.name,), selection.options, ())
        live.answer(run.label, " ".join(findings.retrieval_findings(alone.win_rates)) or "no result")
    bar.progress(1.0, text="encoded")


def run(source: Source, selection: state.Selection, inputs: tuple, specs: tuple[MitigationSpec, ...]) -> None:
    """Run the probes (through the cache) and keep the result when some model produced one."""
    if not selection.models:
        st.warning("Select at least one model in the sidebar.")
        return
    problem = state.device_problem(selection.device)
    if problem:
        st.error(f"{widgets.md_escape(problem)}. Pick auto or cpu as the device in the sidebar.", icon="⛔")
        return
    models = tuple(selection.models)
    start = time.perf_counter()  # the whole action: loading, encoding and the probes
    est = progress.estimate(models, list(source.texts), selection.options) if source.texts else None
    live = progress.LiveRun(est, selection.threshold) if est is not None else None
    expected = f" · {progress.about(est.seconds)} expected" if est is not None else ""
    with st.status(f"Retrieval probes: {widgets.md_escape(source.label)} × {len(models)} model(s){expected}", expanded=True) as status:
        _warm(source, selection, st.progress(0.0), live)
        status.update(label="Ranking, rescoring with each mitigation and bootstrapping the intervals…")
        ran = source.run(models, selection.options, specs)
        ok = bool(ran.result.models)
        status.update(
            label=f"Retrieval probes: done in {widgets.wall_time(time.perf_counter() - start)}"
            if ok
            else "Retrieval probes: no model produced results",
            state="complete" if ok else "error",
            expanded=False,
        )
    if live is not None:
        live.clear()  # the page draws the whole result now
    ss[KEY_RUN_ERRORS] = {} if ok else dict(ran.result.errors)
    if ok:
        ss[KEY_RESULT] = StoredRun(inputs, source.label, ran, time.perf_counter() - start)
        name, sources, settings = source.recorded
        history.record_retrieval("retrieval", ran.result, selection, name, sources, specs, **settings)
