"""``run``'s label report: summary.json, the printed tables and findings, ``--match-label`` (checked against sklearn)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.models.registry import MINILM_L6

# A small negation set in the shape public ones use: 1 marks the *contradicting* pair.
NEGATION_SET = (
    "sentence,other,is_negated\n"
    "The cat sleeps on the mat.,The cat is sleeping on the mat.,0\n"
    "The cat sleeps on the mat.,The cat does not sleep on the mat.,1\n"
    "A man plays the guitar.,A man is playing a guitar.,0\n"
    "A man plays the guitar.,A man never plays the guitar.,1\n"
    "She bought three apples.,She purchased three apples.,0\n"
    "She bought three apples.,She did not buy any apples.,1\n"
    "The shop opens at nine.,The store opens at nine.,0\n"
    "The shop opens at nine.,The shop does not open at nine.,1\n"
)


@pytest.fixture
def negation_file(tmp_path, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    path = tmp_path / "negation.csv"
    path.write_text(NEGATION_SET, encoding="utf-8")
    return path


def _run(path, out, *extra) -> tuple[dict, pd.DataFrame]:
    argv = ["run", "--suite", str(path), "--out", str(out), "--models", MINILM_L6, "--quiet", "--label", "is_negated", *extra]
    assert cli.main(argv) == 0
    return json.loads((out / "summary.json").read_text()), pd.read_parquet(out / constants.RESULTS_PARQUET)


def test_run_reports_labels_equal_to_sklearn_and_match_label_flips_them(negation_file, minilm, tmp_path, capsys):
    from sklearn.metrics import f1_score, roc_auc_score, roc_curve

    default, results = _run(negation_file, tmp_path / "a")
    flipped, _ = _run(negation_file, tmp_path / "b", "--match-label", "0")
    out = capsys.readouterr().out
    cos = results[constants.COL_COSINE].to_numpy(float)
    label = results[constants.COL_LABEL].astype(str).to_numpy()
    for doc, match in ((default, "1"), (flipped, "0")):
        truth = (label == match).astype(int)
        [row] = doc["labels"]["classifier"]
        assert doc["labels"]["match"] == match and row["auc"] == pytest.approx(roc_auc_score(truth, cos), abs=1e-9)
        fpr, tpr, _ = roc_curve(truth, cos)
        assert row["best_tpr"] - row["best_fpr"] == pytest.approx((tpr - fpr).max(), abs=1e-9)
        assert row["best_f1"] == pytest.approx(f1_score(truth, cos > row["best_threshold"]), abs=1e-9)
        assert row["f1"] == pytest.approx(f1_score(truth, cos > constants.DEFAULT_THRESHOLD), abs=1e-9)
    # Read as written (1 = match) the contradictions are the "matches": the model ranks them lower, AUC < 0.5, said in words.
    assert default["labels"]["classifier"][0]["auc"] < 0.5 < flipped["labels"]["classifier"][0]["auc"]
    assert "ranks the non-matching pairs (label 0) above the matching ones (label 1)" in default["labels"]["findings"][0]
    assert "== labels: cosine as a classifier of the label ==" in out and "is below 0.5: the model ranks" in out


def test_match_label_without_labels_or_empty_is_one_error_line(negation_file, tmp_path, capsys):
    plain = tmp_path / "plain.csv"
    plain.write_text("text_a,text_b\nOne cat.,One dog.\n", encoding="utf-8")
    common = ["--out", str(tmp_path / "o"), "--models", MINILM_L6, "--quiet", "--match-label"]
    assert cli.main(["run", "--suite", str(plain), *common, "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --match-label '1'") and "no label column" in err[-1]
    assert cli.main(["run", "--suite", str(negation_file), "--label", "is_negated", *common, " "]) == 2
    assert "--match-label is empty" in capsys.readouterr().err


def test_graded_labels_give_their_correlation_not_a_row_per_score(tmp_path, minilm, monkeypatch):
    from scipy.stats import spearmanr

    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    path = tmp_path / "sts.csv"
    path.write_text(
        "text_a,text_b,score\nA cat sleeps.,A cat is sleeping.,4.8\nA cat sleeps.,A dog barks.,0.4\n"
        "A man cooks.,A man is cooking dinner.,4.1\nA man cooks.,The stock fell.,0.1\n",
        encoding="utf-8",
    )
    assert cli.main(["run", "--suite", str(path), "--out", str(tmp_path / "o"), "--models", MINILM_L6, "--quiet"]) == 0
    doc = json.loads((tmp_path / "o" / "summary.json").read_text())
    results = pd.read_parquet(tmp_path / "o" / constants.RESULTS_PARQUET)
    [row] = doc["labels"]["correlation"]
    assert doc["labels"]["kind"] == "graded" and "by_label" not in doc["labels"]
    assert row["spearman_rho"] == pytest.approx(spearmanr(results["label"].astype(float), results["cosine"]).statistic)
