"""Retrieval: does a retriever rank the contradiction above the truth, and which fix stops it.

A retriever does not threshold one pair, it ranks passages.  This page runs
the retrieval probes of ``core.probes.retrieval`` on the models selected in
the sidebar: the adversarial win rate (an anchor's variant outranks its
paraphrase), NevIR's paired accuracy against the 25% of random ranking, the
in-corpus ranking (recall@k, MRR, top-1 contradictions), and each ticked
mitigation before and after, with its cost.  Inputs: the shipped suite (or
its first N groups), an uploaded pairs file, a corpus plus queries, a
triples file (columns mapped as on Your data) or a BEIR folder as a zip.

State: uploaded bytes live in ``rt_<kind>_bytes``/``rt_<kind>_name`` (kinds
``pairs``, ``corpus``, ``queries``) and the last file that parsed in
``rt_<kind>_parsed``, so both survive page switches; a file that does not
parse shows an error and leaves the parsed one and the results in place.
Runs go through ``ui.resources.retrieval_run``/``corpus_run`` (cached per
inputs), after the embedding cache is warmed with a progress bar.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.files.beir import CORPUS_FILE, QRELS_FOLDER, QUERIES_FILE
from core.files.errors import PairsFileError
from core.files.texts import TEXT_COLUMNS, parse_texts
from core.files.triples import Triples
from core.models.runs import model_runs
from core.probes.retrieval.beir import BeirResult
from core.probes.retrieval.corpus import CorpusResult
from core.probes.retrieval.run import RetrievalResult
from core.probes.retrieval.specs import MitigationSpec
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.retrieval.suite_files import suite_from_bytes
from core.probes.retrieval.triples import TriplesResult
from core.probes.retrieval.worst import worst_corpus_pairs, worst_variants
from core.scoring import findings
from ui import beir_upload, calibration_controls, history, progress, resources, state, uploads, widgets
from ui import stores as stores_ui
from ui import triples as upload_triples
from ui.retrieval_charts import (
    BEIR_PANELS,
    TRIPLES_PANELS,
    before_after_figure,
    mitigation_label,
    mode_label,
    ranking_figure,
    rates_by_mode_figure,
)

SOURCE_SUITE, SOURCE_PAIRS, SOURCE_CORPUS = "suite", "pairs", "corpus"
SOURCE_TRIPLES, SOURCE_BEIR = "triples", "beir"
# Inputs whose texts are known before the run (Source.texts), so their expected time can be said first.
ESTIMATED_SOURCES = (SOURCE_SUITE, SOURCE_PAIRS, SOURCE_CORPUS)
SOURCES = {
    SOURCE_SUITE: "The retrieval suite",
    SOURCE_PAIRS: "A pairs file",
    SOURCE_CORPUS: "A corpus and its queries",
    SOURCE_TRIPLES: "A triples file",
    SOURCE_BEIR: "A BEIR folder (zip)",
}
KEY_BEIR_SPLIT = "rt_beir_split"
KEY_SOURCE = "rt_source"
KEY_GROUPS = "rt_groups"
KEY_RRF, KEY_WEIGHTED, KEY_WEIGHT = "rt_m_rrf", "rt_m_weighted", "rt_m_weight"
KEY_GUARD, KEY_CALIBRATED, KEY_RERANKER = "rt_m_guard", "rt_m_calibrated", "rt_m_reranker"
KEY_SHOWN = "rt_shown_mitigation"
KEY_GROUP_MODEL, KEY_GROUP_MODES, KEY_GROUP_SEARCH = "rt_group_model", "rt_group_modes", "rt_group_search"
KEY_RESULT = "rt_result"  # StoredRun of the last run that produced something
KEY_RUN_ERRORS = "rt_run_errors"  # errors of the last run when it produced nothing
RUN_LABEL = "Run retrieval probes"
FULL_LABEL = "Run the full suite"
TOP_PASSAGE = "top passage"  # a BEIR query's top1 column, as the page names it
RELEVANT_PASSAGE = "relevant passage"  # the judged-relevant passage ranked highest, beside the top one
KEY_RUN_FULL = "rt_run_full_now"  # set by the full-suite button's callback: the next rerun runs all groups
DEFAULT_WEIGHT = 0.3
UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "json"]
PERCENT = "percent"


@dataclass(frozen=True)
class Source:
    """What the next run scores: a suite, or a corpus with queries."""

    key: tuple  # identifies the inputs: ("suite", n), ("pairs", digest) or ("corpus", digest, digest)
    label: str
    suite: RetrievalSuite | None = None
    corpus: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    triples: Triples | None = None
    beir: tuple[str, str, str] | None = None  # (unpacked folder, split, upload digest)
    recorded: tuple[Any, ...] = ()  # the run history's (name, sources, settings) for a triples file or a BEIR folder

    def texts(self) -> list[str]:
        """Every text the run encodes up front (corpus mode's variants are made later)."""
        if self.suite is not None:
            return list(dict.fromkeys([*self.suite.passages[constants.COL_TEXT], *self.suite.queries[constants.COL_TEXT]]))
        return list(dict.fromkeys([*self.corpus, *self.queries]))


@dataclass(frozen=True)
class StoredRun:
    """A run's result and the inputs it was computed from."""

    inputs: tuple
    label: str
    result: RetrievalResult | CorpusResult | TriplesResult | BeirResult
    seconds: float = 0.0  # wall time of the whole action (loading and encoding included), not the cached run's own


ss = st.session_state


# ------------------------------------------------------------------ uploads


def _keys(kind: str) -> dict[str, str]:
    return {k: f"rt_{kind}_{k}" for k in ("tried", "parsed", "digest", "error")}


def _uploader(kind: str, label: str, types: list[str], help_text: str) -> uploads.Upload | None:
    """``kind``'s uploader and its kept file (``ui/uploads.py``); a new file is read even when its bytes match an earlier one."""
    upload, new = uploads.uploader(label, f"rt_{kind}_uploader", f"rt_{kind}", types, help=help_text)
    if new:
        ss[_keys(kind)["tried"]] = None
    return upload


def _ingest(kind: str) -> None:
    """Parse ``kind``'s bytes when new; a file that does not parse leaves the last good one in place."""
    k = _keys(kind)
    upload = uploads.kept(f"rt_{kind}", f"{kind}.csv")
    if upload is None:
        return
    data, name, digest = upload.data, upload.name, upload.digest
    if digest == ss.get(k["tried"]):
        return
    # The digest is stored once the bytes parsed or were refused, so a crash is retried, never skipped as seen.
    try:
        parsed = suite_from_bytes(data, name) if kind == SOURCE_PAIRS else parse_texts(data, name, TEXT_COLUMNS[kind], what=kind)
    except ValueError as exc:  # RetrievalSuiteError and PairsFileError are ValueErrors
        ss[k["tried"]] = digest
        ss[k["error"]] = (name, str(exc))
        return
    ss[k["tried"]] = digest
    ss[k["parsed"]] = (name, parsed)
    ss[k["digest"]] = digest
    ss[k["error"]] = None


def _upload_box(kind: str, label: str, help_text: str) -> None:
    """An uploader for ``kind``, what it holds, and any error (the previous file is kept)."""
    _uploader(kind, label, UPLOAD_TYPES, help_text)
    _ingest(kind)
    k = _keys(kind)
    parsed = ss.get(k["parsed"])
    if ss.get(k["error"]):
        bad, message = ss[k["error"]]
        kept = f" {widgets.md_escape(parsed[0])} is kept." if parsed is not None else ""
        st.error(f"Could not use {widgets.md_escape(bad)}: {widgets.md_escape(message.rstrip('.'))}.{kept}", icon="⛔")
    if parsed is None:
        return
    name, content = parsed
    if isinstance(content, RetrievalSuite):
        groups, queries = len(content.group_ids), content.queries[constants.COL_WHICH].eq(constants.COL_Q1).sum()
        st.caption(
            f"{widgets.md_escape(name)}: {groups} anchor group(s), {len(content.passages)} passages"
            + (f", {queries} query pair(s)" if queries else "")
        )
    else:  # a TextList
        st.caption(f"{widgets.md_escape(name)}: {len(content.texts)} {'passages' if kind == SOURCE_CORPUS else 'queries'}")
    for note in content.notes:
        st.info(widgets.md_escape(note), icon="ℹ️")


def _triples_source() -> Source | None:
    """A triples upload, its columns mapped with pickers as on Your data (guessed from the names)."""
    found = _uploader(
        SOURCE_TRIPLES, "Upload a triples file (CSV, TSV, JSON or JSONL)", ["csv", "tsv", "jsonl", "json"], upload_triples.HELP
    )
    if found is None:
        st.info("Upload a triples file to start.")
        return None
    name, data, digest = found.name, found.data, found.digest
    triples = upload_triples.mapped_triples(name, data, f"rt_tr_{digest[:10]}")
    if triples is None:
        return None
    # The history keys a file by its bytes' SHA-256, as the CLI does, so a page run and a CLI run of one file diff.
    recorded = (triples.name, history.upload_source(name, data), {"mode": "triples", "columns": triples.plain_mapping()})
    return Source((SOURCE_TRIPLES, digest, *triples.mapping.values()), name, triples=triples, recorded=recorded)


def _beir_source() -> Source | None:
    """A zip of a BEIR folder, unpacked once per upload into the session's one folder (``ui/beir_upload.py``)."""
    uploaded = st.file_uploader(
        "Upload a BEIR folder as a zip",
        type=["zip"],
        key=f"rt_{SOURCE_BEIR}_uploader",
        max_upload_size=constants.MAX_UPLOAD_MB,
        help="A zip of the folder holding corpus.jsonl, queries.jsonl and qrels/<split>.tsv (BEIR's format), at its top "
        "or inside one folder. Larger corpora run from the command line: cosine-probe retrieval --beir DIR.",
    )
    unpacked = beir_upload.receive(uploaded)
    refused = beir_upload.error()
    if refused is not None:
        kept = f" {widgets.md_escape(unpacked.name)} is kept." if unpacked is not None else ""
        st.error(f"Could not use {widgets.md_escape(refused[0])}: {widgets.md_escape(refused[1].rstrip('.'))}.{kept}", icon="⛔")
    if unpacked is None:
        st.info("Upload a zip of a BEIR folder to start.")
        return None
    # A split is one of the qrels files the zip holds, picked, never typed: it is never a path.
    split = widgets.saved_selectbox(
        "qrels split", unpacked.splits, KEY_BEIR_SPLIT, help="The file under qrels/ to judge by (test, dev, train)."
    )
    name, digest = unpacked.name, unpacked.digest
    try:
        folder = resources.beir_folder(str(unpacked.folder), name, split, digest)
    except PairsFileError as exc:
        upload_triples.refused(name, exc)
        return None
    n = len(folder.queries)
    st.caption(f"{widgets.md_escape(name)}: {n} judged quer{'y' if n == 1 else 'ies'} of split {widgets.md_escape(split)}")
    for note in folder.notes:
        st.info(widgets.md_escape(note), icon="ℹ️")
    # Each unpacked file by its SHA-256, as the CLI records a BEIR folder, so a page run and a CLI run of one folder diff.
    files = [folder.folder / CORPUS_FILE, folder.folder / QUERIES_FILE, folder.folder / QRELS_FOLDER / f"{split}.tsv"]
    sources = history.archive_sources(name, digest, folder.folder, files)  # named by the zip in the History
    recorded = (Path(name).stem, sources, {"mode": "beir", "split": split, "variants": False})
    return Source((SOURCE_BEIR, digest, split), name, beir=(str(folder.folder), split, digest), recorded=recorded)


def _source(choice: str) -> Source | None:
    """The inputs the source radio points at, or None (with a hint) while they are missing."""
    if choice == SOURCE_SUITE:
        suite = resources.retrieval_suite()
        total = len(suite.group_ids)
        n = int(
            st.number_input(
                "Anchor groups to run",
                min_value=1,
                max_value=total,
                step=10,
                key=KEY_GROUPS,
                on_change=widgets.persist,
                args=(KEY_GROUPS,),
                value=min(int(widgets.saved(KEY_GROUPS, constants.RETRIEVAL_QUICK_GROUPS)), total),
                help=f"The suite has {total} anchor groups over {len(lexicon.FAILURE_MODES)} failure modes and six domains; "
                "fewer give a quick look at a sample "
                "spread evenly over them (the same groups every time).",
            )
        )
        if n >= total:
            return Source((SOURCE_SUITE, n), f"the retrieval suite ({total} groups)", suite=suite)
        # The default is a quick run on a sample, said as such; the full suite is one click away (below the Run button).
        st.caption(
            f"**A quick run on a sample**: {n} of the suite's {total} anchor groups, spread evenly over the failure modes and "
            f"domains (the same groups every time). Its intervals are wider than the full suite's: **{FULL_LABEL}** runs all {total}."
        )
        return Source((SOURCE_SUITE, n), f"a sample of {n} of the retrieval suite's {total} groups", suite=suite.sample(n))
    if choice == SOURCE_TRIPLES:
        return _triples_source()
    if choice == SOURCE_BEIR:
        return _beir_source()
    if choice == SOURCE_PAIRS:
        _upload_box(
            SOURCE_PAIRS,
            "Upload a pairs file (CSV, TSV or JSONL)",
            "text_a: the query or anchor; text_b: a passage; category: paraphrase (or positive) for the passage that should rank "
            f"first, a failure mode ({lexicon.modes_in_words(codes=True)}) for the others. "
            "A file in the retrieval suite's own format (data/README.md) is read as such.",
        )
        parsed = ss.get(_keys(SOURCE_PAIRS)["parsed"])
        if parsed is None:
            st.info("Upload a pairs file to start.")
            return None
        return Source((SOURCE_PAIRS, ss[_keys(SOURCE_PAIRS)["digest"]]), parsed[0], suite=parsed[1])
    left, right = st.columns(2)
    with left:
        _upload_box(
            SOURCE_CORPUS,
            "Upload a corpus (one passage per row)",
            "A .txt file (one passage per line), a CSV/TSV with a text column, or JSONL.",
        )
    with right:
        _upload_box(
            "queries", "Upload the queries (one per row)", "A .txt file (one query per line), a CSV/TSV with a query column, or JSONL."
        )
    corpus, queries = ss.get(_keys(SOURCE_CORPUS)["parsed"]), ss.get(_keys("queries")["parsed"])
    if corpus is None or queries is None:
        st.info("Upload both a corpus and its queries to start.")
        return None
    key = (SOURCE_CORPUS, ss[_keys(SOURCE_CORPUS)["digest"]], ss[_keys("queries")["digest"]])
    return Source(key, f"{corpus[0]} with {queries[0]}", corpus=tuple(corpus[1].texts), queries=tuple(queries[1].texts))


# ------------------------------------------------------------------ mitigations


def _saved_checkbox(label: str, key: str, help_text: str) -> bool:
    return st.checkbox(label, value=bool(widgets.saved(key, False)), key=key, on_change=widgets.persist, args=(key,), help=help_text)


def _mitigations(selection: state.Selection) -> tuple[MitigationSpec, ...]:
    """The ticked mitigations as specs (``calibrated`` once its thresholds are at hand, a reranker once it can load)."""
    specs: list[MitigationSpec] = []
    c1, c2, c3 = st.columns(3)
    with c1:
        if _saved_checkbox(
            "BM25 + dense, reciprocal rank fusion",
            KEY_RRF,
            "BM25 (bm25s) over the passages, fused with the cosine ranking by 1 / (60 + rank).",
        ):
            specs.append(MitigationSpec(constants.MITIGATION_BM25_RRF))
        weighted = _saved_checkbox(
            "BM25 + dense, weighted sum", KEY_WEIGHTED, "w × BM25 + (1 − w) × cosine, each rescaled to [0, 1] per query."
        )
        weight = st.slider(
            "BM25 weight w",
            0.0,
            1.0,
            step=constants.BM25_WEIGHT_STEP,
            key=KEY_WEIGHT,
            disabled=not weighted,
            value=float(widgets.saved(KEY_WEIGHT, DEFAULT_WEIGHT)),
            on_change=widgets.persist,
            args=(KEY_WEIGHT,),
            help="0 keeps the dense order, 1 is BM25 alone.",
        )
        if weighted:
            specs.append(MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=weight))
    with c2:
        if _saved_checkbox(
            "Contradiction guard",
            KEY_GUARD,
            "The perturbation rules in reverse: a near-top passage that differs from the query and from a rival "
            f"passage by one of the failure modes ({lexicon.modes_in_words()}) is demoted.",
        ):
            specs.append(MitigationSpec(constants.MITIGATION_GUARD))
        if _saved_checkbox(
            "Each model's calibrated threshold as a filter",
            KEY_CALIBRATED,
            "Passages scoring at or below the model's calibrated threshold (from the control pairs) are dropped.",
        ):
            cal_settings = calibration_controls.negatives_widget()
            found = calibration_controls.thresholds(selection, cal_settings, button_key="rt_calibrate")
            if found:
                specs.append(MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds=tuple(found.items())))
                against = "unrelated pairs and near-misses" if constants.CAT_NEAR_MISS in cal_settings.negatives else "unrelated pairs"
                st.caption(
                    "Thresholds: "
                    + ", ".join(f"{widgets.md_escape(state.short(m))} {t:.2f}" for m, t in found.items())
                    + f" (negatives: {against})"
                )
    with c3:
        reranker = st.text_input(
            "Reranker: a cross-encoder's Hugging Face id or folder",
            value=str(widgets.saved(KEY_RERANKER, "")),
            key=KEY_RERANKER,
            on_change=widgets.persist,
            args=(KEY_RERANKER,),
            placeholder="cross-encoder/ms-marco-MiniLM-L6-v2",
            help="Rescores each query's best passages with a cross-encoder or NLI model, where you have it.",
        ).strip()
        if reranker:
            found_reranker = resources.reranker_availability(reranker)
            if found_reranker.available:
                specs.append(MitigationSpec(constants.MITIGATION_RERANKER, model_id=reranker))
                st.caption(f"{widgets.md_escape(reranker)}: {widgets.md_escape(found_reranker.status)}")
            else:
                st.warning(f"Reranker unavailable: {widgets.md_escape(found_reranker.reason)}. It is left out of the run.", icon="⚠️")
    return tuple(specs)


# ------------------------------------------------------------------ running


def _warm(source: Source, selection: state.Selection, bar, live: progress.LiveRun | None) -> None:
    """Encode every text once per model into the shared embedding cache, with progress (the cached run after it shows none).

    A model whose every text is already cached loads no weights (core.models.runs). Models go fastest
    first, and a suite's answer for each model (its win rate) is shown the moment that model is encoded.
    """
    if source.triples is not None or source.beir is not None or live is None:
        bar.progress(1.0, text="encoding through the embedding cache")
        return
    texts = source.texts()

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


def _run(source: Source, selection: state.Selection, inputs: tuple, specs: tuple[MitigationSpec, ...]) -> None:
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
    est = progress.estimate(models, source.texts(), selection.options) if source.triples is None and source.beir is None else None
    live = progress.LiveRun(est, selection.threshold) if est is not None else None
    expected = f" · {progress.about(est.seconds)} expected" if est is not None else ""
    with st.status(f"Retrieval probes: {widgets.md_escape(source.label)} × {len(models)} model(s){expected}", expanded=True) as status:
        _warm(source, selection, st.progress(0.0), live)
        status.update(label="Ranking, rescoring with each mitigation and bootstrapping the intervals…")
        result: RetrievalResult | CorpusResult | TriplesResult | BeirResult
        if source.triples is not None:
            t = source.triples
            result = resources.triples_run(t.name, t.frame, tuple(t.mapping.items()), models, selection.options, specs)
        elif source.beir is not None:
            result = resources.beir_run(*source.beir, models, selection.options, specs)
        elif source.suite is not None:
            result = resources.retrieval_run(
                source.suite.name, source.suite.passages, source.suite.queries, models, selection.options, specs
            )
        else:
            result = resources.corpus_run(source.corpus, source.queries, models, selection.options, specs)
        ok = bool(result.models)
        status.update(
            label=f"Retrieval probes: done in {state.wall_time(time.perf_counter() - start)}"
            if ok
            else "Retrieval probes: no model produced results",
            state="complete" if ok else "error",
            expanded=False,
        )
    if live is not None:
        live.clear()  # the page draws the whole result now
    ss[KEY_RUN_ERRORS] = {} if ok else dict(result.errors)
    if ok:
        ss[KEY_RESULT] = StoredRun(inputs, source.label, result, time.perf_counter() - start)
        if source.recorded:
            name, sources, settings = source.recorded
            history.record_retrieval("retrieval", result, selection, name, sources, specs, **settings)
        else:
            name = source.suite.name if source.suite is not None else "corpus"
            history.record_retrieval(
                "retrieval",
                result,
                selection,
                name,
                [{"suite": source.label}],
                specs,
                mode="suite" if source.suite is not None else "corpus",
            )


# ------------------------------------------------------------------ drawing results


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as the page shows it: short model names, mode and mitigation labels instead of codes."""
    out = frame.copy()
    for column, label in (
        (constants.COL_MODEL, state.short),
        ("model_a", state.short),
        ("model_b", state.short),
        (constants.COL_MODE, mode_label),
        (constants.COL_QUERY_MODE, mode_label),
        (constants.COL_MITIGATION, mitigation_label),
    ):
        if column in out.columns:
            out[column] = out[column].map(label)
    return out.rename(columns={constants.COL_MODE: "failure mode", constants.COL_QUERY_MODE: "query mode"})


def _percent(columns) -> dict:
    return {c: st.column_config.NumberColumn(c, format=PERCENT) for c in columns}


RATE_COLUMNS = (
    constants.COL_WIN_RATE,
    constants.COL_PAIRED_ACCURACY,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
    constants.COL_RANDOM,
    "rate",
    "win_ci_low",
    "win_ci_high",
    "paired_ci_low",
    "paired_ci_high",
    constants.COL_TOP1_CONTRADICTION,
    *constants.COL_RECALL_AT.values(),
    "win_rate_a",
    "win_rate_b",
    "difference",
    constants.COL_TIE_RATE,
    constants.COL_TOP1_NEGATIVE,
    *constants.COL_IR_RECALL_AT.values(),
)


def _table(frame: pd.DataFrame, name: str) -> None:
    shown = _shown(frame)
    widgets.table(shown, name, column_config=_percent([c for c in RATE_COLUMNS if c in shown.columns]))


def _mitigation_picker(mitigations: list[str]) -> str:
    return widgets.saved_selectbox(
        "Mitigation shown in the charts and the per-group table",
        mitigations,
        key=KEY_SHOWN,
        format_func=mitigation_label,
        help="Tick mitigations above the Run button; each one's rows appear here after the run.",
    )


def _suite_results(result: RetrievalResult) -> None:
    summary = result.summary()
    # The finding first: one sentence, then every model and fix in one table ("lower is better" said once).
    lead, headline = findings.retrieval_headline(result.win_rates, summary)
    widgets.finding([lead])
    widgets.table(
        headline.assign(**{constants.COL_MODEL: headline[constants.COL_MODEL].map(state.short)}),
        "retrieval-headline",
        column_config={
            constants.COL_WIN_RATE: st.column_config.NumberColumn(
                "contradiction ranked above the restatement", format=PERCENT, help="Share of variants; lower is better."
            ),
            constants.COL_FIXED: st.column_config.NumberColumn("fixed", format="%d"),
            constants.COL_BROKEN: st.column_config.NumberColumn("broken", format="%d"),
            constants.COL_TIES: st.column_config.NumberColumn("ties", format="%d"),
        },
    )
    shown = _mitigation_picker(result.mitigations)
    win = result.win_rates[result.win_rates[constants.COL_MITIGATION] == shown]

    st.header("Adversarial win rate")
    st.caption(
        "For each anchor, its paraphrase and its adversarial variants are ranked by similarity to the anchor. A variant **wins** "
        "when it outranks the paraphrase: the retriever would return the contradiction before the restatement. "
        "**Lower is better**; bars are 95% bootstrap intervals (groups resampled)."
    )
    fig = rates_by_mode_figure(
        win,
        constants.COL_WIN_RATE,
        f"Adversarial win rate by failure mode · {mitigation_label(shown)}",
        "variants that outrank the paraphrase",
    )
    widgets.chart(fig, win, "retrieval-win-rate")
    _table(result.win_rates, "retrieval-win-rates-all")

    st.header("Paired accuracy (NevIR)")
    if result.paired.empty:
        st.info(
            "These inputs have no query pairs (q1/q2), so there is no paired accuracy: the shipped suite has them, a pairs file does not."
        )
    else:
        st.caption(
            "NevIR's test (arXiv 2305.07614): q1 is answered by the anchor, q2 by its variant. A group counts only when q1 ranks the "
            "anchor first **and** q2 ranks the variant first. Random ranking gets both right a quarter of the time (dashed line); "
            "the paper's bi-encoders scored 6.8–11.1%, below it. **Higher is better.**"
        )
        paired = result.paired[result.paired[constants.COL_MITIGATION] == shown]
        fig = rates_by_mode_figure(
            paired,
            constants.COL_PAIRED_ACCURACY,
            f"Paired accuracy by failure mode · {mitigation_label(shown)}",
            "groups with both queries right",
            baseline=constants.PAIRED_RANDOM_BASELINE,
        )
        widgets.chart(fig, paired, "retrieval-paired-accuracy")
        _table(result.paired, "retrieval-paired-accuracy-all")

    st.header("In-corpus ranking")
    if result.ranking.empty:
        st.info("These inputs have no queries, so there is no in-corpus ranking.")
    else:
        st.caption(
            "Every passage of the inputs is a distractor for every query. **recall@k**: the right passage is in the top k; **MRR**: mean "
            "reciprocal rank of the right passage; **top-1 is a contradiction**: the first passage returned says the opposite."
        )
        ranking = result.ranking[result.ranking[constants.COL_MITIGATION] == shown]
        widgets.chart(ranking_figure(ranking), ranking, "retrieval-ranking")
        _table(result.ranking, "retrieval-ranking-all")

    _before_after_section(result, summary)

    if not result.comparisons.empty:
        st.header("Model vs model")
        st.caption(
            "On the same variants: the difference in win rate (model A − model B) with a paired bootstrap interval, and McNemar's "
            "exact test on the variants only one of the two models lets win."
        )
        _table(result.comparisons, "retrieval-model-vs-model")

    _group_table(result, shown)


def _before_after_section(result: RetrievalResult, summary: pd.DataFrame) -> None:
    """Draw what each mitigation fixed, broke and cost beside the plain cosine, so no fix is shown without its price."""
    st.header("Mitigations: before and after")
    _by_source(result.by_source)
    if len(result.mitigations) < 2:
        st.info(
            "Tick a mitigation above (BM25 fusion, the contradiction guard, a calibrated threshold or a reranker) to see what it changes."
        )
    else:
        st.caption(
            "Both kinds of variant pooled. Each mitigation rescored the same probes. Costs: **paraphrases_lost**: groups whose "
            "paraphrase ranked first before and "
            "not after; **correct_lost**: queries whose right passage was first before and not after; **ms_per_query**: the "
            "mitigation's own time per query."
        )
        widgets.chart(before_after_figure(summary), summary, "retrieval-before-after")
        # The key figures with what they flipped and their costs first; the intervals after them; figures these inputs cannot give left out.
        st.caption(
            "**ties**: variants scored exactly as their paraphrase (no win, and no fix); **fixed** / **broken**: variants whose paraphrase "
            "is strictly first after the mitigation and was not before / was before and is not after; likewise **paired_fixed** / "
            "**paired_broken** for NevIR groups and **correct_gained** / **correct_lost** for queries."
        )
        first = [
            constants.COL_MODEL,
            constants.COL_MITIGATION,
            constants.COL_WIN_RATE,
            constants.COL_TIES,
            constants.COL_FIXED,
            constants.COL_BROKEN,
            constants.COL_PAIRED_ACCURACY,
            "paired_fixed",
            "paired_broken",
            constants.COL_RECALL_AT[1],
            "correct_gained",
            constants.COL_CORRECT_LOST,
            constants.COL_TOP1_CONTRADICTION,
            constants.COL_PARAPHRASES_LOST,
            constants.COL_MS_PER_QUERY,
        ]
        measured = summary.dropna(axis=1, how="all")
        _table(
            measured[[*(c for c in first if c in measured.columns), *(c for c in measured.columns if c not in first)]],
            "retrieval-before-after-table",
        )


def _by_source(by_source: pd.DataFrame) -> None:
    """Every mitigation's win rate on hand-written variants (held out from the rules) first, then on rule-made ones."""
    if by_source.empty:
        return
    st.subheader("Held out first: hand-written variants, then rule-made")
    st.caption(
        "**Hand-written** variants are the held-out split: no perturbation rule writes them. **Rule-made** variants are exactly what "
        "the perturbation rules write, and the contradiction guard is those rules run in reverse, so its figure there is measured on "
        "what it was built from. **ties**: variant and paraphrase scored alike (e.g. both filtered); a tie is no win and no fix."
    )
    _table(by_source.rename(columns={constants.COL_VARIANT_SOURCE: "variants"}), "retrieval-win-rate-by-source")


@st.fragment  # A model pick, a mode filter or a search reruns this table alone, not the page
def _group_table(result: RetrievalResult, mitigation: str) -> None:
    st.header("Per group")
    st.caption(
        "Each anchor's paraphrase and variant with their cosines and ranks among the group's passages (1 = returned first). "
        "Sorted worst first: the variant most above its paraphrase. Filter by model and failure mode, or search the texts."
    )
    models = result.models
    modes = [m for m in lexicon.ADVERSARIAL_CATEGORIES if m in set(result.scores[constants.COL_MODE])]
    c1, c2, c3 = st.columns([2, 2, 3])
    with c1:
        model = widgets.saved_selectbox("Model", models, key=KEY_GROUP_MODEL, format_func=state.short)
    chosen = c2.multiselect(
        "Failure modes",
        modes,
        default=[m for m in widgets.saved(KEY_GROUP_MODES, []) if m in modes],
        format_func=mode_label,
        key=KEY_GROUP_MODES,
        on_change=widgets.persist,
        args=(KEY_GROUP_MODES,),
        placeholder="All failure modes",
    )
    search = c3.text_input(
        "Search the texts",
        value=str(widgets.saved(KEY_GROUP_SEARCH, "")),
        key=KEY_GROUP_SEARCH,
        on_change=widgets.persist,
        args=(KEY_GROUP_SEARCH,),
        placeholder="e.g. penicillin, acquired, before",
    )
    rows = worst_variants(result.scores, model, mitigation, chosen, search)
    wins = int(rows[constants.COL_WIN].sum()) if not rows.empty else 0
    st.caption(f"{len(rows)} variant(s) shown; {wins} outrank their paraphrase.")
    columns = [
        constants.COL_GROUP_ID,
        constants.COL_DOMAIN,
        constants.COL_MODE,
        constants.COL_ANCHOR,
        constants.COL_PARAPHRASE,
        constants.COL_VARIANT,
        "cosine_paraphrase",
        "cosine_variant",
        "margin",
        "rank_paraphrase",
        "rank_variant",
        constants.COL_WIN,
    ]
    if mitigation != constants.MITIGATION_NONE:
        columns[8:8] = [constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT]
    fmt = {
        c: st.column_config.NumberColumn(c, format="%.4f")
        for c in ("cosine_paraphrase", "cosine_variant", "margin", constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT)
    }
    # Texts wrapped, and a selected row shows the anchor, paraphrase and variant in full
    widgets.results_table(
        _shown(rows[[c for c in columns if c in rows.columns]]),
        "retrieval-per-group",
        column_config=fmt,
        lead=("failure mode", constants.COL_ANCHOR, constants.COL_PARAPHRASE, constants.COL_VARIANT),
        details=(*widgets.DETAILS, constants.COL_GROUP_ID, constants.COL_DOMAIN),
        pair=(constants.COL_ANCHOR, constants.COL_VARIANT),
    )


def _corpus_results(result: CorpusResult) -> None:
    if result.rates.empty:
        st.info(
            "No perturbation rule applies to any query's top passage, so no variant could compete with it. Try longer, declarative "
            "passages."
        )
        return
    shown = _mitigation_picker(list(dict.fromkeys(result.rates[constants.COL_MITIGATION])))
    for model, n in result.no_variant.items():
        if n:
            st.caption(
                f"{widgets.md_escape(state.short(model))}: {n} quer{'y' if n == 1 else 'ies'} whose top passage no perturbation rule "
                "applies to (no variant)."
            )
    st.header("Does a variant of the top passage outrank it?")
    st.caption(
        "For each query, the passage ranked first; the perturbation rules made its adversarial variants, which were added to the corpus. "
        "The rate is the share of variants that then rank above the original. **Lower is better**; 95% bootstrap intervals (queries "
        "resampled)."
    )
    rates = result.rates[result.rates[constants.COL_MITIGATION] == shown]
    widgets.chart(
        rates_by_mode_figure(
            rates, "rate", f"Variants that outrank the original · {mitigation_label(shown)}", "variants ranked above the original"
        ),
        rates,
        "retrieval-corpus-rates",
    )
    _table(result.rates, "retrieval-corpus-rates-all")
    st.header("Per query")
    c1, c2 = st.columns([2, 3])
    with c1:
        model = widgets.saved_selectbox("Model", result.models, key=KEY_GROUP_MODEL, format_func=state.short)
    search = c2.text_input(
        "Search the texts",
        value=str(widgets.saved(KEY_GROUP_SEARCH, "")),
        key=KEY_GROUP_SEARCH,
        on_change=widgets.persist,
        args=(KEY_GROUP_SEARCH,),
        placeholder="a word from a query or passage",
    )
    rows = worst_corpus_pairs(result.pairs, model, shown, search)
    st.caption(f"{len(rows)} variant(s), worst first: the variant most above the original.")
    keep = [
        constants.COL_QUERY,
        "original",
        constants.COL_MODE,
        constants.COL_RULE,
        constants.COL_VARIANT,
        "score_original",
        "score_variant",
        "margin",
        constants.COL_OUTRANKS,
        "rank_original",
    ]
    widgets.table(_shown(rows[[c for c in keep if c in rows.columns]]), "retrieval-corpus-pairs")


def _user_before_after(summary: pd.DataFrame, panels: tuple, name: str, caption: str) -> None:
    """A triples or BEIR result's chart (each mitigation beside the plain cosine) and, with mitigations, its before/after table."""
    widgets.chart(before_after_figure(summary, panels, "Plain cosine and each ticked mitigation"), summary, f"{name}-chart")
    if summary[constants.COL_MITIGATION].nunique() > 1:
        st.subheader("Mitigations: before and after")
        st.caption(caption)
        _table(summary, f"{name}-before-after")


def _triples_results(result: TriplesResult) -> None:
    summary = result.summary()
    st.markdown(" ".join(widgets.md_escape(s) for s in findings.triples_findings(summary)))  # The finding first
    _user_before_after(
        summary,
        TRIPLES_PANELS,
        "retrieval-triples",
        "Each mitigation rescored every anchor's positives and negatives, and the whole file for the ranking. **ties**: a negative "
        "scored exactly as its positive (no win, and no fix); **fixed** / **broken**: negatives whose positive is strictly first "
        "after the mitigation and was not before / was before and is not after; **recall_gained** / **recall_lost**: anchors "
        "whose top passage became / stopped being a positive.",
    )
    st.header("Does a negative outrank its positive?")
    st.caption(
        "Win rate: the share of (anchor, positive, negative) triples whose negative the model ranks above the positive. **Lower is "
        "better**; "
        "an exact tie is counted apart (ties), never as a win. 95% bootstrap intervals, anchors resampled."
    )
    rates = [constants.COL_WIN_RATE, constants.COL_TIE_RATE, constants.COL_CI_LOW, constants.COL_CI_HIGH]
    widgets.table(_shown(result.win_rates), "retrieval-triples-win-rates", column_config=_percent(rates))
    _by_source(result.by_source)
    st.header("In-corpus ranking")
    st.caption(
        "Every anchor ranks every positive and negative of the file (one passage per row, even when two rows hold the same text). "
        "recall@k: anchors with a positive in the top k; MRR@10 and nDCG@10; top1_negative: anchors whose top passage is one of their "
        "negatives. "
        "Exact ties between different texts are broken as trec_eval breaks them (the later passage of the file first); "
        "**tied_queries**: anchors whose figures that rule decided."
    )
    widgets.table(
        _shown(result.ranking),
        "retrieval-triples-ranking",
        column_config=_percent([*constants.COL_IR_RECALL_AT.values(), constants.COL_TOP1_NEGATIVE]),
    )
    st.header("Per triple, worst first")
    st.caption("Sorted by margin, the negative's cosine minus its positive's: the first rows are the negatives most above their positive.")
    # The negative ran off the table's edge; the worst triple (or the selected one) is shown below in full, the
    # words that differ between its positive and its negative marked.
    widgets.results_table(
        _shown(result.scores.sort_values("margin", ascending=False, kind="stable")),
        "retrieval-triples-scores",
        lead=(
            constants.COL_MODEL,
            constants.COL_MITIGATION,
            "margin",
            constants.COL_WIN,
            constants.COL_NEGATIVE,  # the text that ran off the edge first, after the words it changes
            constants.COL_POSITIVE,
            constants.COL_ANCHOR,
        ),
        column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in ("margin", "cosine_positive", "cosine_negative")},
        pair=(constants.COL_POSITIVE, constants.COL_NEGATIVE),
    )


def _beir_results(result: BeirResult) -> None:
    summary = result.summary()
    st.markdown(" ".join(widgets.md_escape(s) for s in findings.beir_findings(summary)))  # The finding first
    _user_before_after(
        summary,
        BEIR_PANELS,
        "retrieval-beir",
        "Each mitigation rescored the whole corpus for every judged query. **recall_gained** / **recall_lost**: queries whose "
        "top passage became / stopped being relevant.",
    )
    st.header("Ranking by your relevance judgements")
    st.caption(
        "recall@k: the share of each query's relevant passages in its top k (trec_eval's recall); MRR@10 and nDCG@10 with graded "
        "relevance. Exact ties (a passage text held twice) are broken by passage id as trec_eval breaks them, so every figure "
        "equals pytrec_eval's; **tied_queries**: queries whose figures that rule decided."
    )
    widgets.table(_shown(result.ranking), "retrieval-beir-ranking", column_config=_percent(list(constants.COL_IR_RECALL_AT.values())))
    n_queries = dict(zip(result.ranking[constants.COL_MODEL], result.ranking[constants.COL_N_QUERIES], strict=True))
    for mitigation in (m for m in result.mitigations if m != constants.MITIGATION_NONE):
        for sentence in findings.demoted_findings(result.demoted(mitigation), n_queries, mitigation):
            st.warning(widgets.md_escape(sentence), icon="⚠️")
    st.header("Per query, worst first")
    st.caption(
        "Sorted by nDCG@10, lowest first: the first rows are the queries your judgements say were answered worst. Below the table, "
        "the selected query's top passage beside the passage you judged relevant, the words that differ between them marked."
    )
    # The query shares few words with either passage, so marking its changes said nothing: what the reader needs is what
    # separates the wrong top passage from the relevant one.
    widgets.results_table(
        _shown(result.ranks.sort_values(constants.COL_NDCG_AT, kind="stable")),
        "retrieval-beir-queries",
        lead=(
            constants.COL_MODEL,
            constants.COL_MITIGATION,
            constants.COL_NDCG_AT,
            "relevant_rank",
            "top1",
            "relevant",
            constants.COL_QUERY,
        ),
        labels={
            "top1": TOP_PASSAGE,
            "top1_id": "top passage id",
            "relevant": RELEVANT_PASSAGE,
            "relevant_id": "relevant passage id",
            "relevant_rank": "relevant passage's rank",
        },
        column_config={
            "top1_score": st.column_config.NumberColumn("top passage's cosine", format="%.4f"),
            "relevant_rank": st.column_config.NumberColumn(
                "relevant passage's rank", format="%d", help="1 = returned first; empty: not among the top 20."
            ),
        },
        pair=("top1", "relevant"),
        beside=True,
    )


def _run_full_suite(total: int) -> None:
    """The full-suite button's callback: every group in the groups box, and a run on the next rerun."""
    ss[KEY_GROUPS] = total
    widgets.persist(KEY_GROUPS)
    ss[KEY_RUN_FULL] = True


def _full_suite_button(choice: str, source: Source, selection: state.Selection) -> None:
    """Below a quick run on a sample: the full suite in one click, with its expected time on the button."""
    if choice != SOURCE_SUITE or source.key[1] >= len(resources.retrieval_suite().group_ids):
        return
    full = resources.retrieval_suite()
    texts = list(dict.fromkeys([*full.passages[constants.COL_TEXT], *full.queries[constants.COL_TEXT]]))
    est = progress.estimate(selection.models, texts, selection.options) if selection.models else None
    when = f", {progress.about(est.seconds)}" if est is not None else ""
    st.button(
        f"{FULL_LABEL} ({len(full.group_ids)} groups{when})",
        key="rt_run_full",
        on_click=_run_full_suite,
        args=(len(full.group_ids),),
        help=(
            "All anchor groups of the suite: the figures the paper-sized intervals need. Cached per inputs, so going back to the sample "
            "is instant."
        ),
    )


# --------------------------------------------------------------------------- page

st.title("🎯 Retrieval")
st.markdown(
    "A retriever does not apply a threshold to one pair: it **ranks passages**. This page asks whether the models selected in the sidebar "
    "rank a contradiction (a negated, renumbered, role-swapped, re-timed, re-quantified or hedged passage) above the passage that says "
    "the same thing in other words, and which fix stops it."
)

selection = state.current()
choice = widgets.saved_radio("Inputs", list(SOURCES), key=KEY_SOURCE, format_func=SOURCES.get)
source = _source(choice)
stores_ui.connect_store("rt", "retrieval", selection)

# Every input gets the mitigations: a triples file on its win rate and ranking, a BEIR folder on its whole corpus.
st.subheader("Mitigations")
st.caption("Each ticked fix rescores the same probes after the dense cosine; its rows appear next to the plain cosine's (none).")
specs = _mitigations(selection)

inputs = (source.key if source else None, tuple(selection.models), tuple(sorted(selection.remote_code)), selection.device, specs)
stored: StoredRun | None = ss.get(KEY_RESULT)
clicked = source is not None and st.button(RUN_LABEL, type="primary", key="rt_run")
clicked = bool(ss.pop(KEY_RUN_FULL, False) and source is not None) or clicked
if source is not None and not clicked and choice in ESTIMATED_SOURCES:
    # A run longer than ~10 s says how long before it starts; the full suite is one click away, its time on the button.
    progress.expected_caption(selection.models, source.texts(), selection.options, always=True)  # its runs are the long ones: always said
    _full_suite_button(choice, source, selection)
# A ticked or unticked mitigation re-runs the same inputs at once (cached per inputs, so going back is instant).
toggled = source is not None and stored is not None and stored.inputs[:4] == inputs[:4] and stored.inputs[4:] != inputs[4:]
if (clicked or toggled) and source is not None:
    _run(source, selection, inputs, specs)
    stored = ss.get(KEY_RESULT)
for reason in ss.get(KEY_RUN_ERRORS, {}).values():
    st.error(widgets.md_escape(reason), icon="⛔")

if stored is None:
    st.info(f"Press **{RUN_LABEL}** to rank the passages with the models selected in the sidebar.")
else:
    result = stored.result
    st.success(
        f"Results for {len(result.models)} model(s): {widgets.md_escape(', '.join(state.short(m) for m in result.models))} · "
        f"{widgets.md_escape(stored.label)} · {state.wall_time(stored.seconds or result.seconds)}"
    )
    if stored.inputs[:4] != inputs[:4]:
        st.caption(f"The inputs or the sidebar's models changed since this run; press **{RUN_LABEL}** to update.")
    for reason in result.errors.values():
        st.error(widgets.md_escape(reason), icon="⛔")
    if isinstance(result, RetrievalResult):
        _suite_results(result)
    elif isinstance(result, TriplesResult):
        _triples_results(result)
    elif isinstance(result, BeirResult):
        _beir_results(result)
    else:
        _corpus_results(result)
