"""Compare page (AppTest, real MiniLM): cosines, examples, empty input, heatmap, persistence."""

from __future__ import annotations

import base64
import json
import os
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from core.papers.suites import control_pairs

os.environ["COSINE_PROBE_DEFAULT_MODELS"] = "sentence-transformers/all-MiniLM-L6-v2"
os.environ.setdefault("COSINE_PROBE_CACHE_DIR", tempfile.mkdtemp(prefix="cosine-probe-test-"))

from apptest_support import compare_table, expected_cosine, minilm_row, open_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from core.models.loading import load_model  # noqa: E402
from core.scoring.runner import similarity_matrix  # noqa: E402

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_A = "The patient is allergic to penicillin"
DEFAULT_B = "The patient is not allergic to penicillin"


def as_array(value) -> np.ndarray:
    """A Plotly JSON array: a plain list, or Plotly 6's typed {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(float)
    return np.asarray(value, dtype=float)


def heatmaps(at: AppTest) -> list[dict]:
    specs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return [s for s in specs if s["data"] and s["data"][0].get("type") == "heatmap"]


def bar_chart(at: AppTest) -> tuple[dict, list[pd.DataFrame]]:
    """Compare's cosine chart (Vega-Lite): its spec, and each layer's data in layer order."""
    proto = next(el.proto for el in at.get("vega_lite_chart") if '"bar"' in el.proto.spec)
    spec = json.loads(proto.spec)
    datasets = {d.name: pa.ipc.open_stream(d.data.data).read_pandas() for d in proto.datasets}
    return spec, [datasets[layer["data"]["name"]] for layer in spec["layer"]]


def layer(spec: dict, mark: str) -> int:
    """The position of the chart's layer drawn with ``mark``."""
    return next(i for i, one in enumerate(spec["layer"]) if one["mark"]["type"] == mark)


@pytest.fixture(scope="module")
def at() -> AppTest:
    return open_page("views/compare.py", timeout=120)


def test_default_pair_is_scored_on_first_load(at):
    row = minilm_row(at)
    assert row["cosine"] == pytest.approx(expected_cosine(DEFAULT_A, DEFAULT_B), abs=1e-4)
    assert row["verdict"] == ("above threshold" if row["cosine"] > 0.7 else "below threshold")
    assert row["published"] == pytest.approx(0.92)  # the paper's section 4.6 figure for this pair
    assert row["tokens A"] == 10 and row["tokens B"] == 11 and not row["truncated"]
    assert any(DEFAULT_A in t.value and DEFAULT_B in t.value for t in at.text)
    # bar chart (a bar per model, along the cosine axis) + token splits in the per-model expander
    spec, data = bar_chart(at)
    bars = spec["layer"][layer(spec, "bar")]
    assert bars["encoding"]["x"]["field"] == "cosine" and bars["encoding"]["y"]["field"] == "label"
    assert data[layer(spec, "bar")]["cosine"].tolist() == pytest.approx([row["cosine"]])
    texts = [t.value for t in at.text]
    assert "the patient is allergic to pen ##ici ##llin" in texts
    assert "the patient is not allergic to pen ##ici ##llin" in texts
    assert not at.code  # plain text: Streamlit's code highlighter (1.5 MB of JavaScript) held the first view


def test_threshold_changes_verdict(at):
    # The router draws the sidebar, so the real threshold slider drives the page.
    at.slider(key="threshold").set_value(0.99).run()
    assert minilm_row(at)["verdict"] == "below threshold"
    at.slider(key="threshold").set_value(0.7).run()
    assert minilm_row(at)["verdict"] == "above threshold"


def test_typed_pair_changes_value(at):
    before = minilm_row(at)["cosine"]
    a, b = "The cat sat on the mat", "Stock prices fell sharply in March"
    at.text_area(key="cmp_text_a").input(a)
    at.text_area(key="cmp_text_b").input(b)
    at.button(key="cmp_compare").click().run()
    assert not at.exception
    after = minilm_row(at)["cosine"]
    assert after == pytest.approx(expected_cosine(a, b), abs=1e-4)
    assert abs(after - before) > 0.3
    assert np.isnan(minilm_row(at)["published"])


def test_example_fills_text_areas_and_shows_published(at):
    at.pills(key="cmp_example").set_value("ex-swap-1").run()
    assert not at.exception
    assert at.text_area(key="cmp_text_a").value == "Google acquired YouTube"
    assert at.text_area(key="cmp_text_b").value == "YouTube acquired Google"
    row = minilm_row(at)
    assert row["cosine"] == pytest.approx(expected_cosine("Google acquired YouTube", "YouTube acquired Google"), abs=1e-4)
    assert row["published"] == pytest.approx(0.99)
    # quantifier and hedging come from the suite's paper-sourced pairs
    at.pills(key="cmp_example").set_value("hedge-001").run()
    assert at.text_area(key="cmp_text_a").value == "The drug cures cancer"
    assert at.text_area(key="cmp_text_b").value == "The drug may help with some cancer symptoms"


def test_empty_input_warns_and_keeps_previous_table(at):
    before = minilm_row(at)["cosine"]
    at.text_area(key="cmp_text_a").input("   ")
    at.button(key="cmp_compare").click().run()
    assert not at.exception
    assert [w.value for w in at.warning] == ["Sentence A holds only whitespace: type a sentence to compare."]
    assert minilm_row(at)["cosine"] == pytest.approx(before, abs=1e-9)
    assert at.text_area(key="cmp_text_b").value == "The drug may help with some cancer symptoms"


def test_heatmap_for_three_sentences(at):
    sentences = ["The cat sat on the mat", "A feline rested on the rug", "Stock prices fell sharply in March"]
    at.text_area(key="cmp_heat_text").input("\n".join(sentences) + "\n\n")
    at.button(key="cmp_build_heatmap").click().run()
    assert not at.exception
    maps = heatmaps(at)
    assert len(maps) == 1
    z = as_array(maps[0]["data"][0]["z"])
    expected = similarity_matrix(load_model(MINILM), sentences, None)
    assert z.shape == (3, 3)
    np.testing.assert_allclose(z, expected, atol=1e-5)
    legend = [df.value for df in at.dataframe if list(df.value.columns) == ["label", "sentence"]]
    assert legend and list(legend[0]["sentence"]) == sentences


def test_too_many_heatmap_lines_warn(at):
    at.text_area(key="cmp_heat_text").input("\n".join(f"sentence number {i}" for i in range(14)))
    at.button(key="cmp_build_heatmap").click().run()
    assert any("uses the first 12" in w.value for w in at.warning)
    z = as_array(heatmaps(at)[0]["data"][0]["z"])
    assert z.shape == (12, 12)


def test_text_survives_page_switch(at):
    at.text_area(key="cmp_text_a").input("Remember me")
    at.run()
    at.switch_page("views/tokenizer.py").run()
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert at.text_area(key="cmp_text_a").value == "Remember me"
    assert at.text_area(key="cmp_text_b").value == "The drug may help with some cancer symptoms"
    assert len(heatmaps(at)) == 1  # results persist across pages
    assert len(compare_table(at)) == 1


def test_marker_switches_to_each_models_calibrated_threshold(at):
    from core.models.cache import EmbeddingCache
    from core.probes.calibration import calibrate, thresholds_by_model
    from core.scoring.runner import run_pairs

    assert minilm_row(at)["threshold"] == pytest.approx(at.slider(key="threshold").value)  # global before
    # The radio is the first click: it calibrates at once, no second button.
    at.radio(key="cmp_marker").set_value("calibrated").run()
    assert not at.exception
    assert not any("Calibrate on the control pairs" in i.value for i in at.info)
    own = thresholds_by_model(calibrate(run_pairs(control_pairs(), [MINILM], cache=EmbeddingCache()).results))[MINILM]
    # Calibrated against unrelated pairs alone, MiniLM's threshold lands near 0.3, below every failure-mode pair: said in words.
    assert own < 0.35
    warned = " ".join(w.value for w in at.warning).replace("\\", "")
    assert f"calibrated threshold ({own:.2f}) lies below every pair of every failure mode" in warned, warned
    assert "every failure rate is 100%" in warned and "near-miss controls as negatives" in warned
    row = minilm_row(at)
    assert row["threshold"] == pytest.approx(own)
    assert row["verdict"] == ("above threshold" if row["cosine"] > own else "below threshold")
    spec, data = bar_chart(at)
    ticks = data[layer(spec, "tick")]
    assert ticks["what"].tolist() == ["model's calibrated threshold"] and ticks["threshold"].iloc[0] == pytest.approx(own)
    assert "model's calibrated threshold" in spec["layer"][layer(spec, "tick")]["encoding"]["color"]["scale"]["domain"]
    at.radio(key="cmp_marker").set_value("global").run()
    assert minilm_row(at)["threshold"] == pytest.approx(at.slider(key="threshold").value)


# ---------------------------------------------------------------- Key numbers, plain words, charts that explain themselves


def test_compare_table_leads_with_key_numbers_and_shows_a_dash_for_nothing_published():
    app = open_page("views/compare.py", timeout=120)
    app.pills(key="cmp_example").set_value("ex-neg-1").run()  # a paper pair whose note cites an internal file
    proto = next(d.proto for d in app.dataframe if {"cosine", "verdict"} <= set(d.value.columns))
    order = list(proto.column_order)
    assert order[:4] == ["model", "cosine", "threshold", "verdict"] and order[-1] == "model id"
    assert proto.placeholder == "—"  # a missing published value reads "—", never "None"
    notes = compare_table(app)["note"]
    assert not any("shared/notes" in n or ".md" in n for n in notes)
    spec, data = bar_chart(app)
    color = spec["layer"][layer(spec, "bar")]["encoding"]["color"]
    # colour means the verdict, even when every bar shares one: a legend names it
    assert color["legend"] is not None and set(data[layer(spec, "bar")]["verdict"]) <= set(color["scale"]["domain"])
    end = spec["layer"][layer(spec, "bar")]["encoding"]["x"]["scale"]["domain"][1]
    assert end > 1.0 and end > max(data[layer(spec, "bar")]["cosine"]) + 0.05  # room for a bar's value past its end


def test_heatmap_scale_is_fixed_and_cells_above_threshold_are_marked(at):
    at.text_area(key="cmp_heat_text").input("The cat sat on the mat\nStock prices fell sharply in March")
    at.button(key="cmp_build_heatmap").click().run()
    heat = heatmaps(at)[0]["data"][0]
    assert (heat["zmin"], heat["zmax"]) == (-1.0, 1.0) and "−1…1" in heat["colorbar"]["title"]["text"]
    z = as_array(heat["z"])
    threshold = at.slider(key="threshold").value
    for row_z, row_text in zip(z, heat["text"], strict=True):
        for value, text in zip(row_z, row_text, strict=True):
            assert text.startswith("▲") == (value > threshold)


def test_result_leads_with_its_finding_then_the_table_then_the_chart(at):
    """The key number in the first screen: the finding in words, the table, and only then the chart and notes."""
    from core.scoring.findings import compare_findings
    from ui.widgets import md_escape

    row = minilm_row(at)
    frame = compare_table(at).rename(columns={"model id": "model", "model": "short"})
    sentence = " ".join(md_escape(s) for s in compare_findings(frame))
    assert sentence.startswith("MiniLM\\-L6 scores this pair") and f"{row['cosine']:.3f}".replace(".", "\\.") in sentence
    kinds = [node.type for node in at.main]  # top-level elements in drawing order
    order = [k for k in kinds if k in ("markdown", "dataframe", "vega_lite_chart")]
    assert [m.value for m in at.markdown].count(sentence) == 1
    assert order.index("dataframe") < order.index("vega_lite_chart")
    assert not [i for i in at.info if "ONNX export" in i.value]  # one-off notes are never a box above the results


def test_bar_chart_zooms_to_the_scores_keeps_its_order_and_names_the_threshold_in_the_legend(monkeypatch):
    """On a 0-1 axis 0.96 and 0.98 looked equal, the bars re-sorted when a threshold move changed a verdict, and the
    threshold's label sat on its line. Two models whose cosines straddle the threshold after a move."""
    from core.models.registry import MINILM_L6_INT8

    monkeypatch.setenv("COSINE_PROBE_DEFAULT_MODELS", f"{MINILM},{MINILM_L6_INT8}")
    app = open_page("views/compare.py", timeout=120)

    table = compare_table(app)
    cosines = sorted(table["cosine"])
    spec, data = bar_chart(app)
    x = spec["layer"][layer(spec, "bar")]["encoding"]["x"]
    start, end = x["scale"]["domain"]
    assert 0 < start < cosines[0] and end > cosines[-1]  # zoomed to the scores, not 0-1
    assert f"starts at {start:.2f}" in x["title"]
    order = spec["layer"][layer(spec, "bar")]["encoding"]["y"]["sort"]
    assert sorted(order) == sorted(table["model"])  # the models, in a fixed order
    rule = layer(spec, "rule")
    assert data[rule]["what"].tolist() == ["threshold 0.70"] and data[rule]["at"].tolist() == [0.7]  # in the legend
    assert "threshold 0.70" in spec["layer"][rule]["encoding"]["color"]["scale"]["domain"]
    written = [one["encoding"]["text"]["field"] for one in spec["layer"] if one["mark"]["type"] == "text"]
    assert written == ["cosine"]  # the bars' values; no label written on the threshold's line
    app.slider(key="threshold").set_value(round((cosines[0] + cosines[1]) / 2, 2) if cosines[1] - cosines[0] > 0.02 else 0.1).run()
    spec, _ = bar_chart(app)
    assert spec["layer"][layer(spec, "bar")]["encoding"]["y"]["sort"] == order  # the same order whatever the verdicts
    # every table and chart has its downloads, each saying what it holds
    labels = [b.proto.label for b in app.get("download_button")]
    assert {"⬇ CSV · compare table", "⬇ CSV · compare cosines", "⬇ JSON · compare cosines"} <= set(labels), labels
    assert len(labels) == len(set(labels)) and all("·" in label for label in labels if "CSV" in label or "JSON" in label)
