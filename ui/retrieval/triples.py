"""The Retrieval page's triples file: its columns mapped with pickers as on Your data; does a negative outrank its
positive, and how does the whole file rank?"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import constants
from core.files.triples import Triples
from core.models.options import EncodeOptions
from core.probes.retrieval.specs import MitigationSpec
from core.probes.retrieval.triples import TriplesResult
from core.scoring import findings
from ui import history, resources, widgets
from ui import triples as upload_triples
from ui.retrieval import upload_box
from ui.retrieval.common import Ran, RunFn, Source, by_source, percent, shown, user_before_after
from ui.retrieval_charts import TRIPLES_PANELS

KIND = "triples"


def _run(triples: Triples) -> RunFn:
    def run(models: tuple[str, ...], options: EncodeOptions, specs: tuple[MitigationSpec, ...]) -> Ran:
        result = resources.triples_run(triples.name, triples.frame, tuple(triples.mapping.items()), models, options, specs)
        return Ran(result, partial(draw, result))

    return run


def inputs() -> Source | None:
    """A triples upload, its columns mapped with pickers as on Your data (guessed from the names)."""
    label = "Upload a triples file (CSV, TSV, JSON or JSONL)"
    found = upload_box.uploader(KIND, label, ["csv", "tsv", "jsonl", "json"], upload_triples.HELP)
    if found is None:
        st.info("Upload a triples file to start.")
        return None
    name, data, digest = found.name, found.data, found.digest
    triples = upload_triples.mapped_triples(name, data, f"rt_tr_{digest[:10]}")
    if triples is None:
        return None
    # The history keys a file by its bytes' SHA-256, as the CLI does, so a page run and a CLI run of one file diff.
    recorded = (triples.name, history.upload_source(name, data), {"mode": "triples", "columns": triples.plain_mapping()})
    return Source((KIND, digest, *triples.mapping.values()), name, _run(triples), recorded)


def draw(result: TriplesResult) -> None:
    """The finding, each mitigation before and after, the win rate, the in-corpus ranking, each triple worst first."""
    summary = result.summary()
    st.markdown(" ".join(widgets.md_escape(s) for s in findings.triples_findings(summary)))  # The finding first
    user_before_after(
        summary,
        TRIPLES_PANELS,
        "retrieval-triples",
        "Each mitigation rescored every anchor's positives and negatives, and the whole file for the ranking. **ties**: a negative "
        "scored exactly as its positive (no win, and no fix); **fixed** / **broken**: negatives whose positive is strictly first "
        "after the mitigation and was not before / was before and is not after; **recall gained** / **recall lost**: anchors "
        "whose top passage became / stopped being a positive.",
    )
    st.header("Does a negative outrank its positive?")
    st.caption(
        "Win rate: the share of (anchor, positive, negative) triples whose negative the model ranks above the positive. **Lower is "
        "better**; "
        "an exact tie is counted apart (ties), never as a win. 95% bootstrap intervals, anchors resampled."
    )
    rates = [constants.COL_WIN_RATE, constants.COL_TIE_RATE, constants.COL_CI_LOW, constants.COL_CI_HIGH]
    widgets.table(shown(result.win_rates), "retrieval-triples-win-rates", column_config=percent(rates))
    by_source(result.by_source)
    _ranking(result)
    _worst(result)


def _ranking(result: TriplesResult) -> None:
    st.header("In-corpus ranking")
    st.caption(
        "Every anchor ranks every positive and negative of the file (one passage per row, even when two rows hold the same text). "
        "recall@k: anchors with a positive in the top k; MRR@10 and nDCG@10; **top1 negative**: anchors whose top passage is one of their "
        "negatives. "
        "Exact ties between different texts are broken as trec_eval breaks them (the later passage of the file first); "
        "**tied queries**: anchors whose figures that rule decided."
    )
    widgets.table(
        shown(result.ranking),
        "retrieval-triples-ranking",
        column_config=percent([*constants.COL_IR_RECALL_AT.values(), constants.COL_TOP1_NEGATIVE]),
    )


def _worst(result: TriplesResult) -> None:
    st.header("Per triple, worst first")
    st.caption("Sorted by margin, the negative's cosine minus its positive's: the first rows are the negatives most above their positive.")
    # The negative ran off the table's edge; the worst triple (or the selected one) is shown below in full, the
    # words that differ between its positive and its negative marked.
    widgets.results_table(
        shown(result.scores.sort_values("margin", ascending=False, kind="stable")),
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
