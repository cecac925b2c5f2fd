"""Compare's "Why this score" section (AppTest, real MiniLM): shading, top tokens and layer curve equal core's; typed markup stays text."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from apptest_support import MINILM, open_page
from markup_guard import assert_never_rendered

from core import constants
from core.probes.explain import integrated_gradients, layer_cosines, occlusion

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


def as_array(value) -> np.ndarray:
    """A Plotly JSON array: a plain list (None for gaps), or Plotly 6's typed {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return flat.reshape([int(n) for n in str(value.get("shape", len(flat))).split(",")]).astype(float)
    return np.asarray(value, dtype=float)


def _specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _token_heatmap(at) -> dict:
    found = [d for s in _specs(at) for d in s["data"] if d.get("type") == "heatmap" and d.get("y") == ["Sentence A", "Sentence B"]]
    assert len(found) == 1, "one token heatmap for one model"
    return found[0]


def _top_table(at):
    frames = [d.value for d in at.dataframe if {constants.COL_TOKEN, constants.COL_ATTRIBUTION} <= set(d.value.columns)]
    assert len(frames) == 1
    return frames[0]


@pytest.fixture(scope="module")
def at():
    app = open_page("views/compare.py", timeout=240)
    assert not _specs(app) or all(
        d.get("y") != ["Sentence A", "Sentence B"] for s in _specs(app) for d in s["data"]
    )  # off until switched on
    app.toggle(key="why_on").set_value(True).run()
    assert not app.exception
    return app


def test_section_is_an_expander_per_model(at):
    labels = [e.label for e in at.expander]
    assert any(label.startswith("Why this score") and "MiniLM" in label for label in labels)


def test_shading_and_top_tokens_are_cores_occlusion(at, minilm):
    want = occlusion(minilm, A, B).table
    heat = _token_heatmap(at)
    z = as_array(heat["z"])
    for row, side in enumerate((constants.SIDE_A, constants.SIDE_B)):
        mine = want[want[constants.COL_SIDE] == side]
        np.testing.assert_allclose(z[row, : len(mine)], mine[constants.COL_ATTRIBUTION].to_numpy(), atol=1e-5)
        assert heat["text"][row][: len(mine)] == list(mine[constants.COL_TOKEN])
    top = _top_table(at)
    order = want[constants.COL_ATTRIBUTION].abs().sort_values(ascending=False).index[: constants.EXPLAIN_TOP_TOKENS]
    assert list(top[constants.COL_TOKEN]) == list(want.loc[order, constants.COL_TOKEN])
    assert top[constants.COL_ATTRIBUTION].to_numpy() == pytest.approx(want.loc[order, constants.COL_ATTRIBUTION].to_numpy(), abs=1e-5)


def test_layer_curve_ends_at_the_models_cosine(at, minilm):
    want = layer_cosines(minilm, A, B)
    lines = [d for s in _specs(at) for d in s["data"] if d.get("type") == "scatter" and d.get("name") == "cosine"]
    assert len(lines) == 1
    assert as_array(lines[0]["y"]) == pytest.approx(want[constants.COL_COSINE].to_numpy(), abs=1e-5)


def test_integrated_gradients_show_their_completeness(at, minilm):
    at.radio(key="why_method").set_value(constants.METHOD_IG).run()
    assert not at.exception
    check = integrated_gradients(minilm, A, B).completeness
    captions = [c.value for c in at.caption if "Completeness" in c.value]
    assert len(captions) == 1 and f"{check.attribution_sum:+.4f}" in captions[0] and "within 5%" in captions[0]
    at.radio(key="why_method").set_value(constants.METHOD_OCCLUSION).run()


def test_a_missed_completeness_offers_more_steps(at, minilm):
    """One Gauss-Legendre step misses by more than 5% on this pair; the page says by how much and reruns with four times the steps."""
    coarse = integrated_gradients(minilm, A, B, steps=1).completeness
    assert not coarse.ok
    at.session_state["why_steps"] = {MINILM: 1}
    at.radio(key="why_method").set_value(constants.METHOD_IG).run()
    warnings = [w.value for w in at.warning if "Completeness" in w.value]
    assert len(warnings) == 1 and f"miss by {coarse.relative_miss:.1%}" in warnings[0]
    at.button(key="why-steps-sentence-transformers-all-minilm-l6-v2").click().run()
    assert not at.exception
    finer = integrated_gradients(minilm, A, B, steps=4).completeness
    captions = [c.value for c in at.caption if "Completeness" in c.value]
    assert len(captions) == 1 and "(4 steps" in captions[0] and f"Miss {finer.relative_miss:.2%}" in captions[0]
    at.session_state["why_steps"] = {}
    at.radio(key="why_method").set_value(constants.METHOD_OCCLUSION).run()


def test_typed_markup_stays_text(at):
    a, b = "<b>bold</b> **strong** <img src=x onerror=alert(1)>", "plain <a href='javascript:x'>link</a>"
    at.text_area(key="cmp_text_a").input(a)
    at.text_area(key="cmp_text_b").input(b)
    at.button(key="cmp_compare").click().run()
    assert not at.exception
    assert_never_rendered(at, "<img", "**strong**", "<a href")
    heat = _token_heatmap(at)
    shown = [t for row in heat["text"] for t in row if t]
    assert "&lt;" in shown and not any("<" in t or ">" in t for t in shown)
