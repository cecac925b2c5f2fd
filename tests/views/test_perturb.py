"""The Perturbations page through the real app with MiniLM (tests/conftest.py makes it the default model)."""

from __future__ import annotations

import pytest
from apptest_support import open_page, table_with

from core import constants, lexicon
from core.models.cache import EmbeddingCache
from core.papers.suites import control_pairs
from core.probes.calibration import calibrate, thresholds_by_model
from core.probes.perturb import perturb
from core.scoring import tables
from core.scoring.runner import run_pairs

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
PAGE = "views/perturb.py"


@pytest.fixture(scope="module")
def at():
    return open_page(PAGE)


def _frame(app, column):
    return table_with(app, column, last=True)


def _score(app):
    next(b for b in app.button if b.label == "Score variants").click().run()
    assert not app.exception


def test_variants_listed_as_typed_with_reasons_for_the_rest(at):
    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    listing = _frame(at, constants.COL_RULE)
    expected = perturb("Google acquired YouTube")
    assert list(listing["variant"]) == [v.text for v in expected.variants]
    why = _frame(at, "why")
    assert set(why["failure mode"]) == {lexicon.CATEGORY_LABELS[m] for m in expected.not_applicable}


def test_scores_match_core_at_global_threshold(at):
    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    _score(at)
    scores = _frame(at, "verdict")
    report = perturb("Google acquired YouTube")
    core = run_pairs(report.to_frame(), [MINILM], cache=EmbeddingCache()).results
    assert list(scores["variant"]) == list(core[constants.COL_TEXT_B])
    assert list(scores[constants.COL_COSINE]) == pytest.approx(list(core[constants.COL_COSINE]), abs=1e-6)
    swap = scores[scores["variant"] == "YouTube acquired Google"].iloc[0]
    assert swap["verdict"] == tables.ABOVE_THRESHOLD and swap[constants.COL_THRESHOLD] == pytest.approx(0.7)


def test_calibrated_marker_uses_each_models_threshold(at):
    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    at.radio(key="pt_marker").set_value("calibrated").run()  # calibrates on this first click
    assert not at.exception
    assert not any("Calibrate on the control pairs" in i.value for i in at.info)
    _score(at)
    expected = thresholds_by_model(calibrate(run_pairs(control_pairs(), [MINILM], cache=EmbeddingCache()).results))[MINILM]
    scores = _frame(at, "verdict")
    assert scores[constants.COL_THRESHOLD].tolist() == pytest.approx([expected] * len(scores))
    at.radio(key="pt_marker").set_value("global").run()


def test_changed_text_keeps_old_scores_and_says_so(at):
    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    _score(at)
    at.text_area(key="pt_text").set_value("The dog bit the man").run()
    assert any("changed since" in i.value for i in at.info)
    assert "YouTube acquired Google" in set(_frame(at, "verdict")["variant"])
    assert "The man bit the dog" in set(_frame(at, constants.COL_RULE)["variant"])


@pytest.mark.parametrize("bad", ["", "   \n  ", "?!"])
def test_no_words_is_a_message_not_an_error(at, bad):
    at.text_area(key="pt_text").set_value(bad).run()
    assert not at.exception
    assert any("at least one word" in w.value for w in at.warning)
    assert at.text_area(key="pt_text").value == bad


def test_markup_is_shown_as_text(at):
    text = "<script>alert(1)</script> **Google** acquired [YouTube](http://x)"
    at.text_area(key="pt_text").set_value(text).run()
    assert not at.exception
    listing = _frame(at, constants.COL_RULE)
    assert any("<script>alert(1)</script>" in v for v in listing["variant"])
    assert all("<script>" not in m.value for m in at.markdown)


def test_scores_lead_with_model_cosine_verdict_and_one_threshold_line(at):
    """The verdict is in view, and one global threshold is one line, not one legend entry per model."""
    import json

    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    _score(at)
    proto = next(d.proto for d in at.dataframe if "verdict" in d.value.columns)
    assert list(proto.column_order)[:5] == ["model", "cosine", "threshold", "verdict", "variant"]
    assert list(proto.column_order)[-1] == constants.COL_PAIR_ID
    fig = next(
        json.loads(el.proto.spec)
        for el in at.get("plotly_chart")
        if "variant with the original" in json.loads(el.proto.spec)["layout"]["title"]["text"]
    )
    # Per-model threshold ticks are "line-ns" markers; the fill legend's entries are not thresholds.
    shown_thresholds = [t for t in fig["data"] if t.get("marker", {}).get("symbol") == "line-ns" and t.get("visible", True) is not False]
    assert any(t.get("marker", {}).get("symbol") == "line-ns" for t in fig["data"])  # the ticks exist, hidden behind the one shared line
    assert not shown_thresholds
    # One mark: a line on the axis, or, when the threshold lies far left of the zoomed axis, its value named at the edge.
    threshold = at.slider(key="threshold").value
    lines = [s for s in fig["layout"].get("shapes", []) if s["type"] == "line"]
    named = [a for a in fig["layout"].get("annotations", []) if f"threshold {threshold:.2f}" in a["text"]]
    assert len(lines) + len(named) == 1 and all(line["x0"] == pytest.approx(threshold) for line in lines)


def test_scores_lead_with_their_finding_above_every_table(at):
    """The count of variants a retriever would still return, and the closest one, before the listing and the chart."""
    from apptest_support import assert_leads_with

    from core.scoring.findings import perturbation_findings

    at.text_area(key="pt_text").set_value("Google acquired YouTube").run()
    _score(at)
    shown = _frame(at, "verdict")
    above = int((shown["verdict"] == tables.ABOVE_THRESHOLD).sum())
    closest = shown.loc[shown[constants.COL_COSINE].idxmax()]
    sentences = perturbation_findings(
        tables.perturbation_table(at.session_state["results"]["perturb"].results, at.slider(key="threshold").value)
    )
    assert sentences == [
        f"MiniLM-L6 keeps {above} of {len(shown)} variants above its threshold: a retriever would return them as the same sentence.",
        f"It scores “{closest['variant']}” ({closest['category'].lower()}, {closest[constants.COL_COSINE]:.3f}) closest to the original.",
    ]
    assert_leads_with(at, sentences)
