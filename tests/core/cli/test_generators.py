"""The CLI commands of perturb and calibrate (oov-words is in tests/test_invented.py)."""

from __future__ import annotations

import json

import pytest

from core.cli import main as cli_main
from core.models.cache import EmbeddingCache
from core.models.registry import MINILM_L6
from core.papers.suites import control_pairs
from core.probes.calibration import calibrate, thresholds_by_model
from core.probes.perturb import perturb
from core.scoring.runner import run_pairs

TEXT = "Google acquired YouTube"


@pytest.fixture(scope="module")
def core_controls():
    return run_pairs(control_pairs(), [MINILM_L6], cache=EmbeddingCache(False)).results


def test_perturb_json_scores_every_variant_as_core_does(cli):
    code, out, err = cli("perturb", TEXT, "--models", MINILM_L6, "--json", "--no-cache")
    assert code == 0, err
    doc = json.loads(out)
    report = perturb(TEXT)
    assert [v["text"] for v in doc["variants"]] == [v.text for v in report.variants]
    assert set(doc["not_applicable"]) == set(report.not_applicable)
    want = run_pairs(report.to_frame(), [MINILM_L6], cache=EmbeddingCache(False)).results
    got = {s["pair_id"]: s for s in doc["scores"]}
    assert set(got) == set(want["pair_id"])
    for row in want.itertuples():
        assert got[row.pair_id]["cosine"] == pytest.approx(row.cosine, abs=1e-6)
        assert got[row.pair_id]["threshold"] == pytest.approx(0.7)
        assert got[row.pair_id]["same"] is bool(row.cosine > 0.7)


def test_perturb_calibrated_uses_each_models_threshold(cli, core_controls):
    code, out, err = cli("perturb", TEXT, "--models", MINILM_L6, "--json", "--calibrated", "--no-cache")
    assert code == 0, err
    own = thresholds_by_model(calibrate(core_controls))[MINILM_L6]
    scores = json.loads(out)["scores"]
    assert scores and all(s["threshold"] == pytest.approx(own, abs=1e-6) for s in scores)
    assert all(s["same"] is (s["cosine"] > own) for s in scores)


def test_perturb_text_output_and_no_score(cli):
    code, out, _ = cli("perturb", TEXT, "--no-score")
    assert code == 0
    assert "YouTube acquired Google" in out and "not applicable" in out
    assert "SAME" not in out and "different" not in out  # nothing scored, no model loaded


@pytest.mark.parametrize("text", ["", "   ", "?!"])
def test_perturb_without_words_is_one_line_error(cli, text):
    code, out, err = cli("perturb", text, "--no-score")
    assert code == cli_main.EXIT_USAGE and out == ""
    assert err.strip().splitlines() == ["error: TEXT: type a sentence with at least one word"]


def test_calibrate_json_matches_core(cli, core_controls):
    code, out, err = cli("calibrate", "--models", MINILM_L6, "--json", "--quiet", "--no-cache")
    assert code == 0, err
    row = json.loads(out)["calibration"][0]
    want = calibrate(core_controls).iloc[0]
    for column in ("auc", "youden_threshold", "fpr_threshold", "global_tpr"):
        assert row[column] == pytest.approx(float(want[column]), abs=1e-9)


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_calibrate_bad_fpr_is_one_line_error(cli, value):
    code, _, err = cli("calibrate", "--max-fpr", value, "--models", MINILM_L6)
    assert code == cli_main.EXIT_USAGE
    assert err.strip().splitlines() == [f"error: --max-fpr must be between 0 and 1, got {float(value)}"]
