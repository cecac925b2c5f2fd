"""The Retrieval page's corpus mode: a corpus and its queries uploaded; does a rule-made variant of each query's top
passage outrank it?"""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import constants
from core.models.options import EncodeOptions
from core.probes.retrieval.corpus import CorpusResult
from core.probes.retrieval.specs import MitigationSpec
from core.probes.retrieval.worst import worst_corpus_pairs
from ui import resources, state, widgets
from ui.retrieval import upload_box
from ui.retrieval.common import KEY_GROUP_MODEL, Ran, RunFn, Source, mitigation_picker, search_box, shown, table
from ui.retrieval_charts import mitigation_label, rates_by_mode_figure

KIND, QUERIES = "corpus", "queries"
PAIR_COLUMNS = (
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
)


def _run(corpus: tuple[str, ...], queries: tuple[str, ...]) -> RunFn:
    def run(models: tuple[str, ...], options: EncodeOptions, specs: tuple[MitigationSpec, ...]) -> Ran:
        result = resources.corpus_run(corpus, queries, models, options, specs)
        return Ran(result, partial(draw, result))

    return run


def inputs() -> Source | None:
    """The corpus's and the queries' uploaders side by side; both once each parsed."""
    left, right = st.columns(2)
    with left:
        upload_box.texts_box(
            KIND,
            "Upload a corpus (one passage per row)",
            "A .txt file (one passage per line), a CSV/TSV with a text column, or JSONL.",
            "passages",
        )
    with right:
        upload_box.texts_box(
            QUERIES,
            "Upload the queries (one per row)",
            "A .txt file (one query per line), a CSV/TSV with a query column, or JSONL.",
            "queries",
        )
    corpus, queries = upload_box.parsed(KIND), upload_box.parsed(QUERIES)
    if corpus is None or queries is None:
        st.info("Upload both a corpus and its queries to start.")
        return None
    key = (KIND, upload_box.digest(KIND), upload_box.digest(QUERIES))
    label = f"{corpus[0]} with {queries[0]}"
    passages, asked = tuple(corpus[1].texts), tuple(queries[1].texts)
    recorded = ("corpus", [{"suite": label}], {"mode": "corpus"})
    return Source(key, label, _run(passages, asked), recorded, texts=tuple(dict.fromkeys([*passages, *asked])))


def draw(result: CorpusResult) -> None:
    """The outrank rate by mode (chart and table), then each query's variants, worst first."""
    if result.rates.empty:
        st.info(
            "No perturbation rule applies to any query's top passage, so no variant could compete with it. Try longer, declarative "
            "passages."
        )
        return
    mitigation = mitigation_picker(list(dict.fromkeys(result.rates[constants.COL_MITIGATION])))
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
    rates = result.rates[result.rates[constants.COL_MITIGATION] == mitigation]
    widgets.chart(
        rates_by_mode_figure(
            rates, "rate", f"Variants that outrank the original · {mitigation_label(mitigation)}", "variants ranked above the original"
        ),
        rates,
        "retrieval-corpus-rates",
    )
    table(result.rates, "retrieval-corpus-rates-all")
    _per_query(result, mitigation)


def _per_query(result: CorpusResult, mitigation: str) -> None:
    st.header("Per query")
    c1, c2 = st.columns([2, 3])
    with c1:
        model = widgets.saved_selectbox("Model", result.models, key=KEY_GROUP_MODEL, format_func=state.short)
    with c2:
        search = search_box("a word from a query or passage")
    rows = worst_corpus_pairs(result.pairs, model, mitigation, search)
    st.caption(f"{len(rows)} variant(s), worst first: the variant most above the original.")
    widgets.table(shown(rows[[c for c in PAIR_COLUMNS if c in rows.columns]]), "retrieval-corpus-pairs")
