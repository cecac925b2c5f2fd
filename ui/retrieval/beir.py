"""The Retrieval page's BEIR folder: a zip unpacked once per upload (``ui/beir_upload.py``), a qrels split picked;
the ranking by the user's own relevance judgements."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import streamlit as st

from core import constants
from core.files.beir import CORPUS_FILE, QRELS_FOLDER, QUERIES_FILE
from core.files.errors import PairsFileError
from core.models.options import EncodeOptions
from core.probes.retrieval.beir import BeirResult
from core.probes.retrieval.specs import MitigationSpec
from core.scoring import findings
from ui import beir_upload, history, resources, widgets
from ui import triples as upload_triples
from ui.retrieval.common import Ran, RunFn, Source, percent, shown, user_before_after
from ui.retrieval_charts import BEIR_PANELS

KIND = "beir"
KEY_BEIR_SPLIT = "rt_beir_split"
TOP_PASSAGE = "top passage"  # a BEIR query's top1 column, as the page names it
RELEVANT_PASSAGE = "relevant passage"  # the judged-relevant passage ranked highest, beside the top one


def _run(folder: str, split: str, digest: str) -> RunFn:
    def run(models: tuple[str, ...], options: EncodeOptions, specs: tuple[MitigationSpec, ...]) -> Ran:
        result = resources.beir_run(folder, split, digest, models, options, specs)
        return Ran(result, partial(draw, result))

    return run


def inputs() -> Source | None:
    """A zip of a BEIR folder, unpacked once per upload into the session's one folder (``ui/beir_upload.py``)."""
    uploaded = st.file_uploader(
        "Upload a BEIR folder as a zip",
        type=["zip"],
        key=f"rt_{KIND}_uploader",
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
    return Source((KIND, digest, split), name, _run(str(folder.folder), split, digest), recorded)


def draw(result: BeirResult) -> None:
    """The finding, each mitigation before and after, the ranking, what a mitigation demoted, each query worst first."""
    summary = result.summary()
    st.markdown(" ".join(widgets.md_escape(s) for s in findings.beir_findings(summary)))  # The finding first
    user_before_after(
        summary,
        BEIR_PANELS,
        "retrieval-beir",
        "Each mitigation rescored the whole corpus for every judged query. **recall gained** / **recall lost**: queries whose "
        "top passage became / stopped being relevant.",
    )
    st.header("Ranking by your relevance judgements")
    st.caption(
        "recall@k: the share of each query's relevant passages in its top k (trec_eval's recall); MRR@10 and nDCG@10 with graded "
        "relevance. Exact ties (a passage text held twice) are broken by passage id as trec_eval breaks them, so every figure "
        "equals pytrec_eval's; **tied queries**: queries whose figures that rule decided."
    )
    widgets.table(shown(result.ranking), "retrieval-beir-ranking", column_config=percent(list(constants.COL_IR_RECALL_AT.values())))
    n_queries = dict(zip(result.ranking[constants.COL_MODEL], result.ranking[constants.COL_N_QUERIES], strict=True))
    for mitigation in (m for m in result.mitigations if m != constants.MITIGATION_NONE):
        for sentence in findings.demoted_findings(result.demoted(mitigation), n_queries, mitigation):
            st.warning(widgets.md_escape(sentence), icon="⚠️")
    _worst(result)


def _worst(result: BeirResult) -> None:
    st.header("Per query, worst first")
    st.caption(
        "Sorted by nDCG@10, lowest first: the first rows are the queries your judgements say were answered worst. Below the table, "
        "the selected query's top passage beside the passage you judged relevant, the words that differ between them marked."
    )
    # The query shares few words with either passage, so marking its changes said nothing: what the reader needs is what
    # separates the wrong top passage from the relevant one.
    widgets.results_table(
        shown(result.ranks.sort_values(constants.COL_NDCG_AT, kind="stable")),
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
