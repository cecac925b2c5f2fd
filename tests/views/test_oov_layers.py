"""OOV robustness's layer-wise section (AppTest, real MiniLM): the gap chart and divergence table are core's, for either reading."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from apptest_support import MINILM, open_page, show_tab

from core import constants
from core.models.loading import load_model
from core.probes.explain import oov_layer_curves, oov_layer_report


def _array(value) -> np.ndarray:
    """A Plotly JSON array: a plain list, or Plotly 6's typed {dtype, bdata}."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).astype(float)
    return np.asarray(value, dtype=float)


@pytest.fixture(scope="module")
def at():
    app = open_page("views/oov.py", timeout=300)
    app.button(key="oov_run").click().run()
    assert not app.exception
    show_tab(app, "oov_tab", "Layer by layer")
    assert any("Where in the network" in h.value for h in app.subheader)
    app.toggle(key="oov_layers_on").set_value(True).run()
    assert not app.exception and not app.error
    return app


@pytest.fixture(scope="module")
def curves(at):
    return oov_layer_curves(load_model(MINILM))


def _gap_trace(at) -> dict:
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    found = [s for s in specs if "Mean gap over" in str(s["layout"].get("title", {}).get("text", ""))]
    assert len(found) == 1
    (trace,) = found[0]["data"]
    return trace


def _divergence(at):
    frames = [d.value for d in at.dataframe if {"onset_layer", "peak_layer"} <= set(d.value.columns)]
    assert len(frames) == 1
    return frames[0]


@pytest.mark.parametrize("reading", [constants.VARIANT_REPLACED_BOTH, constants.VARIANT_REPLACED_B])
def test_gap_chart_and_divergence_are_cores(at, curves, reading):
    at.radio(key="oov_reading").set_value(reading).run()
    assert not at.exception
    want = oov_layer_report(curves, reading)
    trace = _gap_trace(at)
    # The default scale is the share of each layer's dynamic range.
    assert _array(trace["x"]).tolist() == list(range(7))
    assert _array(trace["y"]) == pytest.approx(want["summary"]["normalized_gap"].to_numpy(), abs=1e-9)
    shown = _divergence(at)
    assert list(shown[constants.COL_ENTITY]) == list(want["divergence"][constants.COL_ENTITY])
    assert shown["onset_layer"].to_numpy() == pytest.approx(want["divergence"]["onset_layer"].to_numpy(), nan_ok=True)
    assert shown["final_gap"].to_numpy() == pytest.approx(want["divergence"]["final_gap"].to_numpy(), abs=1e-9)


def test_raw_scale_shows_the_cosine_gap(at, curves):
    at.radio(key="oov_layers_scale").set_value("raw cosine gap").run()
    want = oov_layer_report(curves, at.radio(key="oov_reading").value)["summary"]
    assert _array(_gap_trace(at)["y"]) == pytest.approx(want["mean_gap"].to_numpy(), abs=1e-9)
