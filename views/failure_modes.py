"""Failure modes: reproduce "When Cosine Similarity Lies" on the selected models.

Runs the shipped failure-mode suite (the adversarial pairs of every failure
mode in ``core.lexicon.MODE_RECORDS``: the paper's six and ours beyond it,
plus the controls) and shows the paper's Tables 1-5 and Appendix A, a
failure-rate curve per mode with the sidebar threshold marked, the worst
pairs (searchable), and the published figures next to ours.  Every number
comes from ``core.scoring.tables``; this page only lays it out.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import constants, lexicon
from core.papers import reference, reproduce
from core.probes import calibration
from core.scoring import findings, tables
from ui import calibration_controls, charts, history, progress, resources, state, widgets

RUN_KEY = "failure_modes"
SEARCH_KEY = "fm_search"
DOMAINS_KEY = "fm_domains"
MODES_KEY = "fm_modes"
# The failure paper's tables published at a threshold (Table 2 at 0.7, Appendix B at 0.8), from their records.
PUBLISHED_THRESHOLDS = {
    t.name: t.threshold for t in reproduce.PAPER_TABLES if t.paper == reference.PAPER_FAILURE and t.threshold is not None
}
TAB_KEY = "fm_tab"
TABS = [
    "Summary",
    "Across thresholds",
    "Each model's own threshold",
    "Severity and effect size",
    "Model vs model",
    "Worst cases",
    "Published vs ours",
]


# ------------------------------------------------- widget values that survive page switches
# Streamlit forgets a widget's state when another page is shown; each widget
# here copies its value to widgets.saved_key(key) on change and is drawn from it.


def _model_columns(wide: pd.DataFrame) -> pd.DataFrame:
    """Model-id columns in the sidebar's order, renamed to their short chart names."""
    wide = wide[state.sidebar_order(list(wide.columns))]
    return wide.rename(columns={m: state.short(m) for m in wide.columns}).rename_axis(columns=None)


def _mode_rows(wide: pd.DataFrame) -> pd.DataFrame:
    """Failure modes in the paper's order, labelled, as a first column."""
    wide = wide.reindex([m for m in charts.ordered_categories(wide.index) if m in wide.index])
    out = wide.reset_index()
    out.insert(0, "failure mode", out[constants.COL_CATEGORY].map(charts.category_label))
    return out


@st.fragment
def _worst_cases(results: pd.DataFrame) -> None:
    """The worst adversarial pairs, filtered and searched; a filter reruns only this section."""
    st.header("Worst cases")
    st.caption(
        "Adversarial pairs sorted by cosine, highest first: the higher the score, the worse the failure. "
        "Filter by domain or failure mode, or search the sentences."
    )
    worst = results[results[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES)]
    domains = sorted(worst[constants.COL_DOMAIN].dropna().unique()) if constants.COL_DOMAIN in worst.columns else []
    mode_options = [m for m in lexicon.FAILURE_MODES if m in set(worst[constants.COL_CATEGORY])]
    c1, c2, c3 = st.columns([2, 2, 3])
    chosen_domains = c1.multiselect(
        "Domains",
        domains,
        default=[d for d in widgets.saved(DOMAINS_KEY, []) if d in domains],
        key=DOMAINS_KEY,
        on_change=widgets.persist,
        args=(DOMAINS_KEY,),
        placeholder="All domains",
        help="Empty = all domains.",
    )
    chosen_modes = c2.multiselect(
        "Failure modes",
        mode_options,
        default=[m for m in widgets.saved(MODES_KEY, []) if m in mode_options],
        format_func=charts.category_label,
        key=MODES_KEY,
        on_change=widgets.persist,
        args=(MODES_KEY,),
        placeholder="All failure modes",
        help="Empty = all failure modes.",
    )
    query = c3.text_input(
        "Search pairs",
        value=widgets.saved(SEARCH_KEY, ""),
        key=SEARCH_KEY,
        on_change=widgets.persist,
        args=(SEARCH_KEY,),
        placeholder="e.g. insulin, acquired, before",
        help="Case-insensitive; matches either sentence.",
    )
    if chosen_domains:
        worst = worst[worst[constants.COL_DOMAIN].isin(chosen_domains)]
    if chosen_modes:
        worst = worst[worst[constants.COL_CATEGORY].isin(chosen_modes)]
    if query.strip():
        needle = query.strip()
        hit = worst[constants.COL_TEXT_A].str.contains(needle, case=False, regex=False) | worst[constants.COL_TEXT_B].str.contains(
            needle, case=False, regex=False
        )
        worst = worst[hit]
    cols = [
        c
        for c in (
            constants.COL_COSINE,
            constants.COL_MODEL,
            constants.COL_CATEGORY,
            constants.COL_DOMAIN,
            constants.COL_TEXT_A,
            constants.COL_TEXT_B,
            constants.COL_PAIR_ID,
        )
        if c in worst.columns
    ]
    worst_out = tables.with_verdicts(
        worst.sort_values(constants.COL_COSINE, ascending=False)[cols].reset_index(drop=True), state.current().threshold
    )
    worst_out.insert(0, "failure mode", worst_out[constants.COL_CATEGORY].map(charts.category_label))
    full_ids = worst_out[constants.COL_MODEL].copy()
    worst_out[constants.COL_MODEL] = worst_out[constants.COL_MODEL].map(state.short)
    st.caption(f"{len(worst_out)} pair score(s) match.")
    if not worst_out.empty:  # Click a point, read the pair in full with its scores
        strip = worst_out.assign(**{constants.COL_MODEL: full_ids})  # the chart colours by model id
        widgets.pair_chart(
            charts.pair_strip_figure(strip, state.current().threshold),
            worst_out,
            "failure-modes-worst-points",
            [constants.COL_MODEL, "failure mode", constants.COL_COSINE, "verdict", constants.COL_TEXT_A, constants.COL_TEXT_B],
        )
    widgets.results_table(
        worst_out,
        "failure-modes-worst-cases",
        lead=(*widgets.LEAD, "failure mode", constants.COL_TEXT_A, constants.COL_TEXT_B),
        hide=(constants.COL_CATEGORY,),
        pair=(constants.COL_TEXT_A, constants.COL_TEXT_B),
    )


def _summary_tab(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """Table 2 (failure rate at the threshold) and Table 1 (mean ± SD)."""
    # ---- Table 2: failure rate at the threshold, with bootstrap CI
    st.header(f"Failure rate at threshold {threshold:.2f}")
    st.caption(
        "Failure paper Table 2 (published at 0.70; Appendix B at 0.80): share of adversarial pairs scoring above the "
        "threshold, with a 95% bootstrap confidence interval."
    )
    fr = summary[summary[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES)]
    fr_table = pd.DataFrame(
        index=pd.Index([m for m in lexicon.FAILURE_MODES if m in set(fr[constants.COL_CATEGORY])], name=constants.COL_CATEGORY)
    )
    percent = {}
    for model in models:
        mine = fr[fr[constants.COL_MODEL] == model].set_index(constants.COL_CATEGORY)
        name = state.short(model)
        fr_table[name] = mine["failure_rate"]
        fr_table[f"{name} CI low"] = mine["fr_ci_low"]
        fr_table[f"{name} CI high"] = mine["fr_ci_high"]
        for col in (name, f"{name} CI low", f"{name} CI high"):
            percent[col] = st.column_config.NumberColumn(col, format="percent")
    fr_out = _mode_rows(fr_table)
    widgets.results_table(fr_out, "failure-modes-failure-rate", column_config=percent)

    # ---- Table 1: mean ± SD heatmap
    st.header("Mean cosine by category")
    st.caption(
        "Failure paper Table 1. Each cell: mean cosine ± SD over the category's pairs. "
        "Failure-mode pairs that score like the positive controls (paraphrases) are the problem."
    )
    fig, frame = charts.category_heatmap(summary, title="Mean cosine ± SD by category and model")
    widgets.chart(fig, frame, "failure-modes-mean-cosine")


def _curves_tab(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """The share above every threshold, one panel per failure mode."""
    # ---- failure-rate curves
    st.header("Share above each threshold")
    st.caption(
        "Share of pairs scoring above each threshold, one panel per failure mode, where it is the failure rate, and "
        "one for the paraphrases (positive controls), where it is the share a search finds and high is what you want. "
        "The dashed line is the sidebar threshold; move the slider to move it."
    )
    curves = resources.failure_rate_curves(results)
    curves = curves[curves[constants.COL_CATEGORY].isin([*lexicon.FAILURE_MODES, constants.CAT_POSITIVE])]
    widgets.chart(charts.failure_rate_curves_figure(curves, threshold), curves, "failure-modes-rate-curves")


def _own_threshold_tab(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """Each model's own threshold from the controls, and the failure rates at it."""
    # ---- calibrated thresholds (beyond the paper)
    st.header("Each model's own threshold")
    st.caption(
        "One fixed threshold means different things to a model whose unrelated pairs score 0.0 and one whose unrelated "
        "pairs score 0.7. Here each model gets its own threshold from this run's control pairs (paraphrases should pass, "
        "unrelated pairs should not), and the failure rates are recomputed at it. The ROC curve shows every threshold's "
        "trade-off; the star marks the calibrated one."
    )
    cal_settings = calibration_controls.settings_widgets()
    cal_table = resources.calibrate(results, cal_settings.negatives, cal_settings.max_fpr, threshold)
    if cal_table.empty:
        st.info("This run has no positive and negative controls to calibrate on.")
    else:
        rates = resources.calibrated_failure_rates(results, cal_settings.negatives, cal_settings.max_fpr, cal_settings.method, threshold)
        # A threshold calibrated against unrelated pairs made every failure rate 100% without a word.
        widgets.finding(calibration.calibration_findings(rates, cal_settings.negatives, state.short))
        roc = resources.roc_table(results, cal_settings.negatives)
        widgets.chart(charts.roc_figure(roc, cal_table, cal_settings.method), roc, "failure-modes-roc")
        shown_cal = cal_table.assign(model=cal_table[constants.COL_MODEL].map(state.short))
        widgets.results_table(
            shown_cal,
            "failure-modes-calibration",
            column_config={c: st.column_config.NumberColumn(format="%.3f") for c in cal_table.columns if cal_table[c].dtype.kind == "f"},
        )
        st.plotly_chart(charts.calibrated_rates_figure(rates), width="stretch", key="chart-failure-modes-calibrated-rates")
        percent = {c: st.column_config.NumberColumn(format="percent") for c in ("failure_rate_global", "failure_rate_calibrated", "change")}
        shown_rates = rates.assign(model=rates[constants.COL_MODEL].map(state.short))
        shown_rates.insert(1, "failure mode", shown_rates[constants.COL_CATEGORY].map(charts.category_label))
        widgets.results_table(shown_rates, "failure-modes-calibrated-rates", column_config=percent)


def _severity_tab(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """Tables 3 and 5: severity ratio and Cohen's d against the paraphrases."""
    modes = resources.failure_mode_table(results, threshold)
    # ---- Table 3: severity
    st.header("Severity")
    st.caption(
        "Failure paper Table 3. Severity ratio = mean cosine of the failure mode ÷ mean cosine of the positive controls "
        "(paraphrases). A ratio ≥ 1.0 means the model scores these pairs as **more similar than real paraphrases**. "
        "The ranking averages over the models in this run."
    )
    left, right = st.columns(2)
    with left:
        ranking = resources.severity_ranking(results)
        ranking.insert(0, "failure mode", ranking[constants.COL_CATEGORY].map(charts.category_label))
        ranking = ranking[["rank", "failure mode", "avg_similarity", "severity_ratio", constants.COL_CATEGORY]]
        widgets.results_table(ranking, "failure-modes-severity-ranking")
    with right:
        sev = _mode_rows(_model_columns(modes.pivot(index=constants.COL_CATEGORY, columns=constants.COL_MODEL, values="severity_ratio")))
        st.caption("Severity ratio per model")
        widgets.results_table(sev, "failure-modes-severity-per-model")

    # ---- Table 5: Cohen's d
    st.header("Effect size against paraphrases (Cohen's d)")
    st.caption(
        "Failure paper Table 5: Cohen's d of the positive controls vs the failure mode. "
        "**A negative d means the failure pairs score higher than true paraphrases**; the larger |d|, the clearer the gap."
    )
    d_table = _mode_rows(_model_columns(modes.pivot(index=constants.COL_CATEGORY, columns=constants.COL_MODEL, values="cohens_d")))
    widgets.results_table(d_table, "failure-modes-cohens-d")


def _models_tab(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """Appendix A and Table 4: do the models differ, and which is most fooled."""
    # ---- Appendix A: Kruskal-Wallis (this and Table 4 compare models, so both open with the same two-model guard)
    st.header("Do the models differ? (Kruskal-Wallis)")
    if len(models) < 2:
        st.info("The Kruskal-Wallis test compares models: select at least two models in the sidebar and run the suite again.")
    else:
        st.caption(
            "Failure paper Appendix A: Kruskal-Wallis H-test across models, per failure mode. "
            "A small p means at least one model scores this mode differently from the others."
        )
        kw = resources.kruskal_by_category(results)
        kw.insert(0, "failure mode", kw[constants.COL_CATEGORY].map(charts.category_label))
        widgets.results_table(kw, "failure-modes-kruskal-wallis")

    # ---- Table 4: vulnerability ranking
    st.header("Vulnerability ranking")
    if len(models) < 2:
        st.info("The vulnerability ranking orders models against each other: select at least two models and run again.")
    else:
        st.caption(
            "Failure paper Table 4. The paper gives the scores but not the rule; this one reproduces its Table 4 "
            "exactly from its Table 1: for each failure mode, rank the models by mean cosine (1 = highest = most fooled); "
            "a model's score is the sum over modes of (rank − 1). **Lower score = more vulnerable** (0 = most fooled in every mode)."
        )
        st.caption(
            "The brackets are 95% bootstrap intervals of each model's score and rank (pairs resampled within each failure mode). "
            "Models whose score intervals overlap are **tied**: their order could be noise."
        )
        vuln = resources.vulnerability_ranking(results)
        vuln[constants.COL_MODEL] = vuln[constants.COL_MODEL].map(state.short)
        vuln["tied_with"] = vuln["tied_with"].map(
            lambda text: f"tied with {', '.join(state.short(m) for m in text.split(', '))}" if text else ""
        )
        vuln["modes_ranked_first"] = vuln["modes_ranked_first"].map(
            lambda text: ", ".join(charts.category_label(m) for m in text.split(", ")) if text else ""
        )
        widgets.results_table(vuln, "failure-modes-vulnerability")


def _published_tab(results: pd.DataFrame) -> None:
    """The paper's Tables 1, 2 and Appendix B next to this run (the page's body before a run)."""
    st.header("Published figures vs this run")
    st.caption(
        "Failure paper Table 1 (mean ± SD), Table 2 (failure rate at 0.70) and Appendix B (at 0.80), next to what this run "
        "computes for the same model. Published failure rates are at fixed thresholds, so ours are shown at those same "
        "thresholds, not at the sidebar's. The paper's suite and ours are not the same pairs, so expect differences."
    )
    published = resources.published("failure")
    ran_models = set(results[constants.COL_MODEL]) if not results.empty else set()
    published_models = [m for m in dict.fromkeys(published.loc[published["table"] == "Table 1", "model"]) if m]
    shown = [m for m in published_models if m in ran_models] or [published_models[0]]
    ours_summary = resources.category_summary(results, constants.DEFAULT_THRESHOLD) if ran_models else pd.DataFrame()
    ours_rates = {table: resources.failure_mode_table(results, thr) for table, thr in PUBLISHED_THRESHOLDS.items()} if ran_models else {}
    for model in shown:
        pub = published[published["model"] == model]
        t1 = pub[pub["table"] == "Table 1"].pivot(index=constants.COL_CATEGORY, columns="metric", values="value")
        compare = pd.DataFrame(index=pd.Index(charts.ordered_categories(t1.index), name=constants.COL_CATEGORY))
        compare["published mean"] = t1["mean_cosine"]
        compare["published SD"] = t1["sd_cosine"]
        if model in ran_models:
            mine = ours_summary[ours_summary[constants.COL_MODEL] == model].set_index(constants.COL_CATEGORY)
            compare["our mean"] = mine["mean"]
            compare["our SD"] = mine["sd"]
        for table, thr in PUBLISHED_THRESHOLDS.items():
            rows = pub[(pub["table"] == table) & (pub["metric"] == "failure_rate")].set_index(constants.COL_CATEGORY)
            compare[f"published rate > {thr:.1f}"] = rows["value"]
            if model in ran_models:
                mine = ours_rates[table]
                compare[f"our rate > {thr:.1f}"] = mine[mine[constants.COL_MODEL] == model].set_index(constants.COL_CATEGORY)[
                    "failure_rate"
                ]
        compare = compare.reset_index()
        compare.insert(0, "category label", compare[constants.COL_CATEGORY].map(charts.category_label))
        st.subheader(state.short(model))
        if model not in ran_models:
            st.caption("Not in this run: run the suite with this model selected to see our figures next to these.")
        formats = {
            c: st.column_config.NumberColumn(c, format="percent" if "rate" in c else "%.3f")
            for c in compare.columns
            if "rate" in c or "mean" in c or "SD" in c
        }
        widgets.results_table(compare, f"failure-modes-published-{state.short(model)}", column_config=formats)


SECTIONS = {
    "Summary": _summary_tab,
    "Across thresholds": _curves_tab,
    "Each model's own threshold": _own_threshold_tab,
    "Severity and effect size": _severity_tab,
    "Model vs model": _models_tab,
}


@st.fragment
def _results_tabs(results: pd.DataFrame, models: list[str], threshold: float, summary: pd.DataFrame) -> None:
    """The results in tabs; only the open tab is drawn.

    A tab click reruns this fragment alone, not the page, and computes and
    sends one tab, not seven: a click used to rerun every section of every
    tab (8-20 s on a busy machine).
    """
    for label, tab in zip(TABS, widgets.saved_tabs(TABS, TAB_KEY), strict=True):
        if not tab.open:
            continue
        with tab:
            if label == "Worst cases":
                _worst_cases(results)
            elif label == "Published vs ours":
                _published_tab(results)
            else:
                SECTIONS[label](results, models, threshold, summary)


# --------------------------------------------------------------------------- page

st.title("🚨 Failure modes")
st.markdown(
    f"Reproduces *When Cosine Similarity Lies*: {len(lexicon.PAPER_MODES)} kinds of sentence pairs whose meanings differ sharply "
    f"({lexicon.modes_in_words(lexicon.PAPER_MODES)}) and the controls they are measured against, "
    f"plus {lexicon.modes_in_words(lexicon.EXTENSION_MODES)}: ours, not the paper's, so never compared with its figures. "
    "A **failure** is a pair that scores **above the retrieval threshold** set in the sidebar: a search system "
    "would return it as a match."
)

selection = state.current()
threshold = selection.threshold
suite_pairs = resources.suite(constants.SUITE_FAILURE_MODES)
st.caption(
    f"Suite: {len(suite_pairs)} pairs ({sum(suite_pairs[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES))} adversarial, "
    f"{sum(suite_pairs[constants.COL_CATEGORY].isin(constants.CONTROLS))} controls) across {suite_pairs[constants.COL_DOMAIN].nunique()} "
    "domains."
)

clicked = st.button(
    "Run failure-mode suite", type="primary", help="Scores every pair of the suite with the models selected in the sidebar."
)
if not clicked:  # A long run says how long before it starts
    progress.expected_caption(selection.models, progress.pair_texts(suite_pairs), selection.options)
if clicked and (ran := state.run(suite_pairs, selection, key=RUN_KEY, label="Scoring the failure-mode suite")) is not None:
    history.record("failure-modes", ran, selection, history.suite_sources(constants.SUITE_FAILURE_MODES))
state.show_errors(RUN_KEY, notes=False)

stored = state.stored(RUN_KEY)
if stored is None:
    st.info("Press **Run failure-mode suite** to score the suite with the models selected in the sidebar.")
    results = pd.DataFrame()
else:
    results = stored.results
    models = stored.models
    st.success(
        f"Results for {len(models)} model(s): {widgets.md_escape(', '.join(state.short(m) for m in models))} · threshold {threshold:.2f}"
    )
    if set(models) != set(selection.models):
        st.caption("The sidebar selection changed since this run; press the button again to score the new selection.")
    state.show_notes(RUN_KEY)  # one collapsed line; new notes as a toast
    widgets.report_download(
        results,
        threshold,
        "cosine-probe failure modes",
        {"threshold": threshold, "models": list(models), "suite": constants.SUITE_FAILURE_MODES},
        RUN_KEY,
    )

if stored is not None and not results.empty:
    # Cached by inputs (ui/resources.py; every row is the failure-mode suite's, the run scored nothing else):
    # a slider move back to a threshold seen before, a search or a download recomputes no statistic.
    summary = resources.category_summary(results, threshold)
    st.markdown(" ".join(widgets.md_escape(sentence) for sentence in findings.failure_mode_findings(summary, threshold)))
    _results_tabs(results, list(stored.models), threshold, summary)
else:
    _published_tab(results)
