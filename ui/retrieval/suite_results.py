"""A retrieval suite's result on the Retrieval page (the shipped suite, or a pairs file read as one): the finding, the
adversarial win rate, NevIR's paired accuracy, the in-corpus ranking, each mitigation before and after, model vs
model, and the per-group table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.probes.retrieval.run import RetrievalResult
from core.probes.retrieval.worst import worst_variants
from core.scoring import findings
from ui import state, widgets
from ui.retrieval.common import (
    KEY_GROUP_MODEL,
    KEY_GROUP_MODES,
    PERCENT,
    by_source,
    mitigation_picker,
    search_box,
    shown,
    table,
)
from ui.retrieval_charts import before_after_figure, mitigation_label, mode_label, ranking_figure, rates_by_mode_figure


def draw(result: RetrievalResult) -> None:
    """The whole result, the finding first."""
    summary = result.summary()
    _headline(result, summary)
    mitigation = mitigation_picker(result.mitigations)
    _win_rate(result, mitigation)
    _paired(result, mitigation)
    _ranking(result, mitigation)
    _before_after(result, summary)
    if not result.comparisons.empty:
        st.header("Model vs model")
        st.caption(
            "On the same variants: the difference in win rate (model A − model B) with a paired bootstrap interval, and McNemar's "
            "exact test on the variants only one of the two models lets win."
        )
        table(result.comparisons, "retrieval-model-vs-model")
    _group_table(result, mitigation)


def _headline(result: RetrievalResult, summary: pd.DataFrame) -> None:
    """The finding first: one sentence, then every model and fix in one table ("lower is better" said once)."""
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


def _win_rate(result: RetrievalResult, mitigation: str) -> None:
    win = result.win_rates[result.win_rates[constants.COL_MITIGATION] == mitigation]
    st.header("Adversarial win rate")
    st.caption(
        "For each anchor, its paraphrase and its adversarial variants are ranked by similarity to the anchor. A variant **wins** "
        "when it outranks the paraphrase: the retriever would return the contradiction before the restatement. "
        "**Lower is better**; bars are 95% bootstrap intervals (groups resampled)."
    )
    fig = rates_by_mode_figure(
        win,
        constants.COL_WIN_RATE,
        f"Adversarial win rate by failure mode · {mitigation_label(mitigation)}",
        "variants that outrank the paraphrase",
    )
    widgets.chart(fig, win, "retrieval-win-rate")
    table(result.win_rates, "retrieval-win-rates-all")


def _paired(result: RetrievalResult, mitigation: str) -> None:
    st.header("Paired accuracy (NevIR)")
    if result.paired.empty:
        st.info(
            "These inputs have no query pairs (q1/q2), so there is no paired accuracy: the shipped suite has them, a pairs file does not."
        )
        return
    st.caption(
        "NevIR's test (arXiv 2305.07614): q1 is answered by the anchor, q2 by its variant. A group counts only when q1 ranks the "
        "anchor first **and** q2 ranks the variant first. Random ranking gets both right a quarter of the time (dashed line); "
        "the paper's bi-encoders scored 6.8–11.1%, below it. **Higher is better.**"
    )
    paired = result.paired[result.paired[constants.COL_MITIGATION] == mitigation]
    fig = rates_by_mode_figure(
        paired,
        constants.COL_PAIRED_ACCURACY,
        f"Paired accuracy by failure mode · {mitigation_label(mitigation)}",
        "groups with both queries right",
        baseline=constants.PAIRED_RANDOM_BASELINE,
    )
    widgets.chart(fig, paired, "retrieval-paired-accuracy")
    table(result.paired, "retrieval-paired-accuracy-all")


def _ranking(result: RetrievalResult, mitigation: str) -> None:
    st.header("In-corpus ranking")
    if result.ranking.empty:
        st.info("These inputs have no queries, so there is no in-corpus ranking.")
        return
    st.caption(
        "Every passage of the inputs is a distractor for every query. **recall@k**: the right passage is in the top k; **MRR**: mean "
        "reciprocal rank of the right passage; **top-1 is a contradiction**: the first passage returned says the opposite."
    )
    ranking = result.ranking[result.ranking[constants.COL_MITIGATION] == mitigation]
    widgets.chart(ranking_figure(ranking), ranking, "retrieval-ranking")
    table(result.ranking, "retrieval-ranking-all")


# The key figures with what they flipped and their costs first; the intervals after them.
BEFORE_AFTER_FIRST = (
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
)


def _before_after(result: RetrievalResult, summary: pd.DataFrame) -> None:
    """Draw what each mitigation fixed, broke and cost beside the plain cosine, so no fix is shown without its price."""
    st.header("Mitigations: before and after")
    by_source(result.by_source)
    if len(result.mitigations) < 2:
        st.info(
            "Tick a mitigation above (BM25 fusion, the contradiction guard, a calibrated threshold or a reranker) to see what it changes."
        )
        return
    st.caption(
        "Both kinds of variant pooled. Each mitigation rescored the same probes. Costs: **paraphrases lost**: groups whose "
        "paraphrase ranked first before and "
        "not after; **correct lost**: queries whose right passage was first before and not after; **ms per query**: the "
        "mitigation's own time per query."
    )
    widgets.chart(before_after_figure(summary), summary, "retrieval-before-after")
    st.caption(
        "**ties**: variants scored exactly as their paraphrase (no win, and no fix); **fixed** / **broken**: variants whose paraphrase "
        "is strictly first after the mitigation and was not before / was before and is not after; likewise **paired fixed** / "
        "**paired broken** for NevIR groups and **correct gained** / **correct lost** for queries."
    )
    # Figures these inputs cannot give are left out.
    measured = summary.dropna(axis=1, how="all")
    first = [c for c in BEFORE_AFTER_FIRST if c in measured.columns]
    table(measured[[*first, *(c for c in measured.columns if c not in first)]], "retrieval-before-after-table")


GROUP_COLUMNS = (
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
)
FOUR_PLACES = ("cosine_paraphrase", "cosine_variant", "margin", constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT)


@st.fragment  # A model pick, a mode filter or a search reruns this table alone, not the page
def _group_table(result: RetrievalResult, mitigation: str) -> None:
    st.header("Per group")
    st.caption(
        "Each anchor's paraphrase and variant with their cosines and ranks among the group's passages (1 = returned first). "
        "Sorted worst first: the variant most above its paraphrase. Filter by model and failure mode, or search the texts."
    )
    modes = [m for m in lexicon.ADVERSARIAL_CATEGORIES if m in set(result.scores[constants.COL_MODE])]
    c1, c2, c3 = st.columns([2, 2, 3])
    with c1:
        model = widgets.saved_selectbox("Model", result.models, key=KEY_GROUP_MODEL, format_func=state.short)
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
    with c3:
        search = search_box("e.g. penicillin, acquired, before")
    rows = worst_variants(result.scores, model, mitigation, chosen, search)
    wins = int(rows[constants.COL_WIN].sum()) if not rows.empty else 0
    st.caption(f"{len(rows)} variant(s) shown; {wins} outrank their paraphrase.")
    columns = list(GROUP_COLUMNS)
    if mitigation != constants.MITIGATION_NONE:
        columns[8:8] = [constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT]
    # Texts wrapped, and a selected row shows the anchor, paraphrase and variant in full
    widgets.results_table(
        shown(rows[[c for c in columns if c in rows.columns]]),
        "retrieval-per-group",
        column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in FOUR_PLACES},
        lead=("failure mode", constants.COL_ANCHOR, constants.COL_PARAPHRASE, constants.COL_VARIANT),
        details=(*widgets.DETAILS, constants.COL_GROUP_ID, constants.COL_DOMAIN),
        pair=(constants.COL_ANCHOR, constants.COL_VARIANT),
    )
