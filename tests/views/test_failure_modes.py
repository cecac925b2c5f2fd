"""The Failure modes page, driven through the real app with MiniLM.

Relies on tests/conftest.py (MiniLM as the default model, a session cache
folder).  One AppTest session runs the suite once; the tests then move the sidebar
threshold, filter the worst cases and switch pages on that session, and
compare what the page shows with what ``core`` computes for the same suite
(``run_pairs`` + ``stats``, outside the page).
"""

from __future__ import annotations

import json

import pytest
from apptest_support import open_page, show_tab

from core import constants, lexicon, stats
from core.models.cache import EmbeddingCache
from core.papers.suites import load_suite
from core.scoring.runner import run_pairs

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
PAGE = "views/failure_modes.py"


@pytest.fixture(scope="module")
def core_results(at):
    """The suite scored by core directly (vectors from the cache the page filled, so no second encode)."""
    result = run_pairs(load_suite(constants.SUITE_FAILURE_MODES), [MINILM], cache=EmbeddingCache())
    assert not result.errors
    return result.results


@pytest.fixture(scope="module")
def at():
    app = open_page(PAGE)
    assert any("Run failure-mode suite" in i.value for i in app.info)  # nothing run yet
    next(b for b in app.button if b.label == "Run failure-mode suite").click().run()
    assert not app.exception
    return app


def _table(app, column: str):
    """The dataframe that has ``column``."""
    frames = [d.value for d in app.dataframe if column in d.value.columns]
    assert frames, f"no table with column {column!r}"
    return frames[0]


def _rate_table(app):
    show_tab(app, "fm_tab", "Summary")
    return _table(app, "MiniLM-L6 CI low").set_index(constants.COL_CATEGORY)


def _worst(app):
    if app.session_state["fm_tab"] != "Worst cases":
        show_tab(app, "fm_tab", "Worst cases")
    return _table(app, constants.COL_DOMAIN)


def _core_rates(core_results, threshold):
    return {
        mode: stats.failure_rate(
            core_results.loc[core_results[constants.COL_CATEGORY] == mode, constants.COL_COSINE].to_numpy(float), threshold
        )
        for mode in lexicon.FAILURE_MODES
    }


def _set_threshold(app, value):
    app.slider(key="threshold").set_value(value).run()
    assert not app.exception


def test_failure_rate_table_matches_core_and_follows_threshold(at, core_results):
    _set_threshold(at, 0.7)
    table = _rate_table(at)
    assert sorted(table.index) == sorted(lexicon.FAILURE_MODES)
    at_07 = _core_rates(core_results, 0.7)
    assert table.loc[constants.CAT_NEGATION, "MiniLM-L6"] == pytest.approx(at_07[constants.CAT_NEGATION], abs=1e-9)
    for mode, rate in at_07.items():
        assert table.loc[mode, "MiniLM-L6"] == pytest.approx(rate, abs=1e-9)
        assert table.loc[mode, "MiniLM-L6 CI low"] <= rate + 1e-9 <= table.loc[mode, "MiniLM-L6 CI high"] + 2e-9
    assert any(h.value == "Failure rate at threshold 0.70" for h in at.header)

    _set_threshold(at, 0.95)
    moved = _rate_table(at)
    at_095 = _core_rates(core_results, 0.95)
    for mode, rate in at_095.items():
        assert moved.loc[mode, "MiniLM-L6"] == pytest.approx(rate, abs=1e-9)
    assert at_095 != at_07  # the slider really changed the numbers shown
    assert any(moved.loc[m, "MiniLM-L6"] != table.loc[m, "MiniLM-L6"] for m in lexicon.FAILURE_MODES)
    assert any(h.value == "Failure rate at threshold 0.95" for h in at.header)

    # the curves' threshold marker is drawn at the slider value
    show_tab(at, "fm_tab", "Across thresholds")
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    curve = next(s for s in specs if s["layout"].get("shapes"))
    xs = {shape.get("x0") for shape in curve["layout"].get("shapes", [])}
    assert xs == {0.95}
    _set_threshold(at, 0.7)


def test_heatmap_and_published_columns_match_core(at, core_results):
    neg = core_results.loc[core_results[constants.COL_CATEGORY] == constants.CAT_NEGATION, constants.COL_COSINE].to_numpy(float)
    mean, sd = stats.mean_sd(neg)
    published = _table(show_tab(at, "fm_tab", "Published vs ours"), "published mean").set_index(constants.COL_CATEGORY)
    assert published.loc[constants.CAT_NEGATION, "published mean"] == pytest.approx(0.898)  # failure paper, Table 1
    assert published.loc[constants.CAT_NEGATION, "our mean"] == pytest.approx(mean, abs=1e-6)
    assert published.loc[constants.CAT_NEGATION, "our rate > 0.7"] == pytest.approx(stats.failure_rate(neg, 0.7), abs=1e-9)
    show_tab(at, "fm_tab", "Summary")
    heat = next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if json.loads(el.proto.spec)["data"][0]["type"] == "heatmap")
    text = [cell for row in heat["data"][0]["text"] for cell in row]
    assert f"{mean:.3f} ± {sd:.3f}" in text
    # Cohen's d sign convention is explained, single-model tests say why they are missing
    assert any(
        "negative d means the failure pairs score higher" in c.value for c in show_tab(at, "fm_tab", "Severity and effect size").caption
    )
    assert sum("at least two models" in i.value for i in show_tab(at, "fm_tab", "Model vs model").info) == 2


def test_worst_cases_search_and_domain_filter(at):
    full = _worst(at)
    assert len(full) == sum(r.suite_count for r in lexicon.MODE_RECORDS)  # every adversarial pair, one model
    assert list(full[constants.COL_COSINE]) == sorted(full[constants.COL_COSINE], reverse=True)

    at.text_input(key="fm_search").input("insulin").run()
    found = _worst(at)
    assert 0 < len(found) < len(full)
    assert all("insulin" in (a + b).lower() for a, b in zip(found[constants.COL_TEXT_A], found[constants.COL_TEXT_B], strict=True))

    at.multiselect(key="fm_domains").set_value(["legal"]).run()
    assert len(_worst(at)) == 0 or set(_worst(at)[constants.COL_DOMAIN]) == {"legal"}
    at.text_input(key="fm_search").input("").run()
    legal = _worst(at)
    assert 0 < len(legal) < len(full) and set(legal[constants.COL_DOMAIN]) == {"legal"}

    # the filter and the results survive a trip to another page
    at.switch_page("views/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.multiselect(key="fm_domains").value == ["legal"]
    assert len(_worst(at)) == len(legal)
    at.multiselect(key="fm_domains").set_value([]).run()
    assert len(_worst(at)) == len(full)


# ---------------------------------------------------------------- calibrated thresholds


def test_calibration_section_matches_core(at, core_results):
    from core.probes import calibration

    table = _table(show_tab(at, "fm_tab", "Each model's own threshold"), "youden_threshold").set_index(constants.COL_MODEL)
    expected = calibration.calibrate(core_results).set_index(constants.COL_MODEL)
    assert table.loc["MiniLM-L6", "youden_threshold"] == pytest.approx(expected.loc[MINILM, "youden_threshold"])
    assert table.loc["MiniLM-L6", "auc"] == pytest.approx(expected.loc[MINILM, "auc"])
    rates = _table(at, "failure_rate_calibrated")
    assert set(rates[constants.COL_MODEL]) == {"MiniLM-L6"}
    rates = rates.set_index(constants.COL_CATEGORY)
    own = expected.loc[MINILM, "youden_threshold"]
    negation = core_results[core_results[constants.COL_CATEGORY] == constants.CAT_NEGATION][constants.COL_COSINE]
    assert rates.loc[constants.CAT_NEGATION, "failure_rate_calibrated"] == pytest.approx((negation > own).mean())
    assert rates.loc[constants.CAT_NEGATION, "failure_rate_global"] == pytest.approx((negation > 0.7).mean())
    # A calibrated threshold that makes failure rates 100% is said in a sentence, above the chart
    full = calibration.failure_rates(core_results, calibration.thresholds_by_model(expected.reset_index()), 0.7)
    said = calibration.calibration_findings(full, (constants.CAT_NEGATIVE,), lambda m: "MiniLM-L6")
    assert said and "100%" in said[0]  # MiniLM-L6 on the unrelated controls: the walk's 0.26-0.31
    from ui.widgets import md_escape

    assert " ".join(md_escape(s) for s in said) in [m.value for m in at.main.markdown]


def test_calibration_settings_change_the_threshold_and_survive_a_page_switch(at, core_results):
    from core.probes import calibration

    show_tab(at, "fm_tab", "Each model's own threshold")
    at.checkbox(key="cal_near_miss").check().run()
    assert not at.exception
    table = _table(at, "youden_threshold").set_index(constants.COL_MODEL)
    with_near_miss = calibration.calibrate(core_results, negatives=(constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS)).set_index(
        constants.COL_MODEL
    )
    assert table.loc["MiniLM-L6", "n_negative"] == 50
    assert table.loc["MiniLM-L6", "youden_threshold"] == pytest.approx(with_near_miss.loc[MINILM, "youden_threshold"])
    at.radio(key="cal_method").set_value("fpr").run()
    at.switch_page("views/home.py").run()
    at.switch_page(PAGE).run()
    assert at.checkbox(key="cal_near_miss").value is True
    assert at.radio(key="cal_method").value == "fpr"
    at.checkbox(key="cal_near_miss").uncheck().run()
    at.radio(key="cal_method").set_value("youden").run()
    assert not at.exception


def test_vulnerability_ranking_shows_intervals_and_ties(monkeypatch):
    """fp32 and int8 MiniLM differ by noise: the page calls them tied, as core does."""
    from core.models.registry import MINILM_L6_INT8, short_name
    from core.papers.failure_modes import vulnerability_ranking

    monkeypatch.setenv("COSINE_PROBE_DEFAULT_MODELS", f"{MINILM},{MINILM_L6_INT8}")
    app = open_page(PAGE)
    next(b for b in app.button if b.label == "Run failure-mode suite").click().run()
    assert not app.exception
    shown = _table(show_tab(app, "fm_tab", "Model vs model"), "tied_with").set_index(constants.COL_MODEL)
    results = run_pairs(load_suite(constants.SUITE_FAILURE_MODES), [MINILM, MINILM_L6_INT8], cache=EmbeddingCache()).results
    expected = vulnerability_ranking(results).set_index(constants.COL_MODEL)
    for model in (MINILM, MINILM_L6_INT8):
        row = shown.loc[short_name(model)]
        for column in ("score", "rank", "score_ci_low", "score_ci_high", "rank_ci_low", "rank_ci_high"):
            assert row[column] == pytest.approx(expected.loc[model, column]), column
        other = short_name(MINILM_L6_INT8 if model == MINILM else MINILM)
        assert expected.loc[model, "tied_with"]  # the noise-level difference is a tie
        assert row["tied_with"] == f"tied with {other}"


# ---------------------------------------------------------------- What a user meets


def _shown_columns(app, column: str) -> list[str]:
    """The columns a table with ``column`` shows, in their on-screen order."""
    proto = next(d.proto for d in app.dataframe if column in d.value.columns)
    return list(proto.column_order)


def test_page_is_in_tabs_summary_first(at):
    labels = [t.label for t in at.tabs]
    assert labels[0] == "Summary" and "Worst cases" in labels and labels[-1] == "Published vs ours"


def test_worst_cases_lead_with_model_cosine_verdict_and_hide_codes(at):
    show_tab(at, "fm_tab", "Worst cases")
    shown = _shown_columns(at, constants.COL_DOMAIN)
    assert shown[:4] == ["model", "cosine", "threshold", "verdict"]
    assert shown.index(constants.COL_TEXT_B) < shown.index(constants.COL_PAIR_ID) == len(shown) - 1
    assert constants.COL_CATEGORY not in shown and "failure mode" in shown
    # The contradicting sentence was off-screen; the words that differ sit before the texts, and the worst
    # pair is shown below in full with them marked in both sentences
    assert shown.index("changed words") < shown.index(constants.COL_TEXT_A)
    first = _worst(at).iloc[0]
    from core.words import change_summary

    assert first["changed words"] == change_summary(first[constants.COL_TEXT_A], first[constants.COL_TEXT_B]) != "(no change)"
    marked = [m.value for m in at.main.markdown if ":orange-background[" in m.value]
    assert len(marked) == 2 and marked[0].startswith("**text a**") and marked[1].startswith("**text b**")
    worst = _worst(at)
    threshold = at.slider(key="threshold").value
    assert all((v == "above threshold") == (c > threshold) for v, c in zip(worst["verdict"], worst[constants.COL_COSINE], strict=True))


def test_a_revisited_threshold_recomputes_no_statistic(at, monkeypatch):
    from core.scoring import tables

    calls = []
    real = tables.category_summary
    monkeypatch.setattr(
        tables, "category_summary", lambda *a, **k: calls.append(a[1] if len(a) > 1 else k.get("threshold")) or real(*a, **k)
    )
    at.slider(key="threshold").set_value(0.73).run()
    at.slider(key="threshold").set_value(0.74).run()
    calls.clear()
    at.slider(key="threshold").set_value(0.73).run()  # seen before: served from the cache
    assert not at.exception and 0.73 not in calls
    at.slider(key="threshold").set_value(0.7).run()


def _open_tab(app, key: str) -> int:
    """The index of the tab ``st.tabs(key=key)`` opens on in this run."""

    def walk(node):
        proto = getattr(node, "proto", None)
        if getattr(node, "type", "") == "tab_container" and proto is not None and proto.tab_container.id.endswith(f"-{key}"):
            return proto.tab_container.default_tab_index
        for child in getattr(node, "children", {}).values():
            found = walk(child)
            if found is not None:
                return found
        return None

    found = walk(app._tree)
    assert found is not None, f"no tabs with key {key!r}"
    return found


def test_across_thresholds_tab_survives_a_threshold_move_and_leads_with_a_finding(at):
    """The tab built around the slider stays open when the slider moves; the page says its finding first."""
    from core.scoring.findings import failure_mode_findings
    from core.scoring.tables import category_summary, rows_of_suite

    at.session_state["fm_tab"] = "Across thresholds"  # what a click on the tab sets
    at.run()
    at.slider(key="threshold").set_value(0.75).run()
    assert not at.exception
    assert _open_tab(at, "fm_tab") == 1 and at.session_state["fm_tab"] == "Across thresholds"
    results = at.session_state["results"]["failure_modes"].results
    sentences = failure_mode_findings(category_summary(rows_of_suite(results, constants.SUITE_FAILURE_MODES), 0.75), 0.75)
    assert sentences and sentences[0].startswith("At threshold 0.75, MiniLM-L6 scores")
    from ui.widgets import md_escape

    assert " ".join(md_escape(sentence) for sentence in sentences) in [m.value for m in at.markdown]
    # the one-click HTML report of the run on screen
    assert any(b.proto.label == "⬇ HTML report" for b in at.get("download_button"))
    at.slider(key="threshold").set_value(0.7).run()


# ---------------------------------------------------------------- Interactions that do not recompute


def _spy_core(monkeypatch) -> list[str]:
    """Every call to a scoring or analysis function the page could repeat, by name (wrappers on the core modules)."""
    from core.papers import failure_modes
    from core.probes import calibration
    from core.scoring import tables
    from ui import resources, state

    calls: list[str] = []

    def spy(module, name):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: calls.append(name) or real(*a, **k))

    for name in ("category_summary", "failure_rate_curves"):
        spy(tables, name)
    for name in ("failure_mode_table", "severity_ranking", "kruskal_by_category", "vulnerability_ranking"):
        spy(failure_modes, name)
    for name in ("calibrate", "roc_table", "failure_rates"):
        spy(calibration, name)
    spy(state, "run_pairs")
    cache = resources.embedding_cache()
    real_get = cache.get_many
    monkeypatch.setattr(cache, "get_many", lambda *a, **k: calls.append("embedding_cache.get_many") or real_get(*a, **k))
    return calls


def test_a_tab_click_draws_one_tab_and_scores_nothing(at, monkeypatch):
    """A tab click cost a full rerun of every tab (8-20 s); now only the open tab is drawn, and a tab seen
    before, at a threshold seen before, calls no scoring or analysis function at all."""
    for label in TABS_SEEN:
        show_tab(at, "fm_tab", label)  # each tab drawn once: its analyses are cached
    calls = _spy_core(monkeypatch)
    for label in TABS_SEEN:
        show_tab(at, "fm_tab", label)
        headers = [h.value for h in at.header]
        assert headers and all(h in OWN_HEADERS[label] for h in headers), (label, headers)  # one tab's content, no other
    assert calls == []


def test_a_threshold_move_recomputes_only_what_the_threshold_changes(at, monkeypatch):
    """A threshold move (15.8 s) scored nothing again, but recomputed every tab's figures; now it computes
    the threshold's own statistics for the open tab only, and never encodes or scores a pair."""
    show_tab(at, "fm_tab", "Across thresholds")
    calls = _spy_core(monkeypatch)
    _set_threshold(at, 0.77)
    assert "run_pairs" not in calls and "embedding_cache.get_many" not in calls
    assert set(calls) <= {"category_summary"}  # the finding above the tabs; the curves do not depend on the threshold
    calls.clear()
    show_tab(at, "fm_tab", "Summary")  # the summary at 0.77 is the one the finding used
    assert calls == []
    _set_threshold(at, 0.7)


TABS_SEEN = [
    "Summary",
    "Across thresholds",
    "Each model's own threshold",
    "Severity and effect size",
    "Model vs model",
    "Worst cases",
    "Published vs ours",
]
OWN_HEADERS = {
    "Summary": {"Failure rate at threshold 0.70", "Mean cosine by category"},
    "Across thresholds": {"Share above each threshold"},
    "Each model's own threshold": {"Each model's own threshold"},
    "Severity and effect size": {"Severity", "Effect size against paraphrases (Cohen's d)"},
    "Model vs model": {"Do the models differ? (Kruskal-Wallis)", "Vulnerability ranking"},
    "Worst cases": {"Worst cases"},
    "Published vs ours": {"Published figures vs this run"},
}
