"""``python -m core explain``: one JSON document naming every token, the ONNX fallback, layers, CSV, one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli_main
from core.constants import BACKEND_AUTO
from core.models.encode import encode_texts
from core.models.loading import load_model
from core.models.registry import MINILM_L6, MINILM_L6_INT8

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


def _cos(name: str) -> float:
    vectors, _ = encode_texts(load_model(name, backend=None if name == MINILM_L6 else BACKEND_AUTO), [A, B], None)
    return float(vectors[A] @ vectors[B])


# The int8 model exists only as ONNX: "--backend auto" whatever the session's default backend is.
ONNX = ("--models", MINILM_L6_INT8, "--backend", "auto")


@pytest.mark.parametrize("models", [("--models", MINILM_L6), ONNX], ids=["torch", "onnx"])
def test_json_names_not_with_its_attribution(cli, models, session_cache_dir):
    code, out, _ = cli("explain", A, B, *models, "--json")
    assert code == 0
    doc = json.loads(out)  # stdout is exactly one JSON document
    assert [m["model"] for m in doc["models"]] == [models[1]] and doc["errors"] == {}
    for entry in doc["models"]:
        nots = [r for r in entry["attributions"] if r["token"] == "not"]
        assert len(nots) == 1 and nots[0]["side"] == constants.SIDE_B and nots[0]["word"] == "not"
        # B without "not" is A: removing it lifts the cosine to 1.
        assert nots[0]["attribution"] == pytest.approx(_cos(entry["model"]) - 1.0, abs=1e-5)
        assert entry["cosine"] == pytest.approx(_cos(entry["model"]), abs=1e-5)
        assert len(entry["top"]) == constants.EXPLAIN_TOP_TOKENS
        assert entry["completeness"] is None and entry["layers"] is None


def test_ig_falls_back_to_occlusion_for_onnx_and_reports_completeness(cli, session_cache_dir):
    code, out, err = cli("explain", A, B, *ONNX, "--method", "ig", "--layers", "--json")
    assert code == 0
    (onnx_entry,) = json.loads(out)["models"]
    assert onnx_entry["method"] == constants.METHOD_OCCLUSION and onnx_entry["layers"] is None and onnx_entry["completeness"] is None
    assert "explained by occlusion instead" in err and "no layer-wise view" in err
    code, out, err = cli("explain", A, B, "--models", MINILM_L6, "--method", "ig", "--steps", "16", "--layers", "--json")
    assert code == 0
    (torch_entry,) = json.loads(out)["models"]
    assert torch_entry["method"] == constants.METHOD_IG
    check = torch_entry["completeness"]
    total = sum(r["attribution"] for r in torch_entry["attributions"])
    assert check["attribution_sum"] == pytest.approx(total, abs=1e-6)
    assert check["miss"] == pytest.approx(total - (check["cosine"] - check["baseline_cosine"]), abs=1e-6)
    assert [r["layer"] for r in torch_entry["layers"]] == list(range(7))
    assert torch_entry["layers"][-1]["cosine"] == pytest.approx(_cos(MINILM_L6), abs=1e-5)


def test_text_output_and_csv(cli, tmp_path, session_cache_dir):
    path = tmp_path / "why.csv"
    code, out, err = cli("explain", "=cmd", "The =cmd pair", "--models", MINILM_L6, "--unit", "word", "--csv", str(path))
    assert code == 0 and "MiniLM-L6" in out and f"wrote {path}" in err
    frame = pd.read_csv(path)
    assert list(frame.columns[:5]) == [
        constants.COL_MODEL,
        constants.COL_SIDE,
        constants.COL_POSITION,
        constants.COL_TOKEN,
        constants.COL_WORD,
    ]
    assert set(frame[constants.COL_UNIT]) == {constants.UNIT_WORD}
    # Formula-looking cells are neutralized for spreadsheets.
    assert not frame[constants.COL_WORD].astype(str).str.startswith("=").any()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["", B], "TEXT_A"),
        ([A, B, "--top", "0"], "--top"),
        ([A, B, "--steps", "0"], "--steps"),
        ([A, B, "--csv", "/no/such/folder/x.csv"], "--csv"),
    ],
)
def test_user_errors_are_one_line(cli, args, message, session_cache_dir):
    code, out, err = cli("explain", *args, "--models", MINILM_L6)
    assert code == cli_main.EXIT_USAGE and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]
