"""``run`` and ``validate`` on pairs files: JSON on stdout only, column flags, header-less files,
identical and mirrored pairs, one validation path, and the OOV suite's baseline."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT

REFUSING_HUB = "http://127.0.0.1:9"
PAIRS = (
    "pair_id,text_a,text_b,category\n"
    "p1,The pairs-file test cat sat on the mat.,A pairs-file test cat was sitting on the mat.,positive\n"
    "p2,A pairs-file test cat was sitting on the mat.,The pairs-file test cat sat on the mat.,positive\n"
    "p3,The pairs-file test sky is blue.,the pairs-file test sky is blue,positive\n"
    "p4,The pairs-file test patient has diabetes.,The pairs-file test patient does not have diabetes.,negation\n"
)


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pairs") / "mine.csv"
    path.write_text(PAIRS, encoding="utf-8")
    return path


def _subprocess(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_ENDPOINT": REFUSING_HUB}
    env.pop("COSINE_PROBE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def json_run(pairs_file, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("run-json")
    return _subprocess(["run", "--suite", str(pairs_file), "--out", str(out), "--models", MINILM_L6, "--json"]), out


def test_run_json_prints_one_json_document_and_nothing_else(json_run):
    proc, out = json_run
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the whole of stdout, or this raises
    assert doc == json.loads((out / "summary.json").read_text())
    assert doc["models"] == [MINILM_L6] and doc["tables"]["categories"]
    assert "wrote" in proc.stderr and "pairs × 1 models" in proc.stderr


def test_loading_weights_prints_no_progress_bars(json_run):
    proc, _ = json_run
    assert "Loading weights" not in proc.stdout + proc.stderr
    compared = _subprocess(["compare", "The cat sat.", "A cat was sitting.", "--models", MINILM_L6, "--no-cache"])
    assert compared.returncode == 0, compared.stderr
    assert "Loading weights" not in compared.stdout + compared.stderr


def test_run_reports_identical_and_mirrored_pairs(json_run):
    proc, out = json_run
    doc = json.loads(proc.stdout)
    check = doc["file_check"]
    assert check["identical"] == ["p3"] and check["mirrored"] == [["p2", "p1"]] and check["dropped"] == []
    assert "p3" in proc.stderr and "p2 mirrors p1" in proc.stderr and "--drop-identical or --drop-mirrored" in proc.stderr
    assert set(pd.read_csv(out / "pairs.csv")[constants.COL_PAIR_ID]) == {"p1", "p2", "p3", "p4"}  # kept by default


def test_run_drops_on_request_and_validate_agrees(pairs_file, tmp_path, capsys, minilm):
    assert (
        cli.main(
            [
                "run",
                "--suite",
                str(pairs_file),
                "--out",
                str(tmp_path),
                "--models",
                MINILM_L6,
                "--drop-identical",
                "--drop-mirrored",
                "--quiet",
                "--json",
            ]
        )
        == 0
    )
    ran = json.loads(capsys.readouterr().out)
    scored = sorted(set(pd.read_csv(tmp_path / "pairs.csv")[constants.COL_PAIR_ID]))
    assert scored == ["p1", "p4"] and sorted(ran["file_check"]["dropped"]) == ["p2", "p3"]
    assert cli.main(["validate", str(pairs_file), "--drop-identical", "--drop-mirrored"]) == 0
    validated = capsys.readouterr().out
    # validate counts what run scores, and names the same pairs in the same words
    assert validated.strip().endswith(f"{len(scored)} rows, 0 problem(s)")
    for note in ran["file_check"]["notes"]:
        assert f"note: {note}" in validated


def test_validate_names_identical_and_mirrored_pairs(pairs_file, capsys):
    assert cli.main(["validate", str(pairs_file)]) == 1
    out = capsys.readouterr().out
    assert "1 pair(s) have the same text on both sides (p3)" in out
    assert "1 pair(s) repeat an earlier pair with the sides swapped (p2 mirrors p1)" in out
    assert "--drop-identical or --drop-mirrored leave(s) them out" in out
    assert out.strip().endswith("4 rows, 2 problem(s)")


def test_unmapped_columns_name_the_flags(tmp_path, capsys):
    path = tmp_path / "odd.csv"
    path.write_text("question,answer,extra\nWhat is it?,A thing.,x\n", encoding="utf-8")
    assert cli.main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "below" not in out
    assert "map other columns with --text-a COL and --text-b COL" in out
    assert cli.main(["validate", str(path), "--text-a", "answer", "--text-b", "extra"]) == 0
    assert "--text-a" not in capsys.readouterr().out  # mapped: nothing guessed, nothing to say
    assert cli.main(["validate", str(path), "--label", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error:") and "'nope' (for label) is not in the file" in err


def test_header_less_file_is_detected_and_read_with_no_header(tmp_path, capsys):
    path = tmp_path / "bare.csv"
    path.write_text("The cat sat on the mat.,A cat was sitting on the mat.\nIt rained all day.,It did not rain at all.\n", encoding="utf-8")
    assert cli.main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the first row looks like data" in out and "pass --no-header" in out and out.strip().endswith("1 rows, 0 problem(s)")
    assert cli.main(["validate", str(path), "--no-header"]) == 0
    assert capsys.readouterr().out.strip().endswith("2 rows, 0 problem(s)")


def test_column_flags_are_refused_for_a_shipped_suite(capsys):
    assert cli.main(["validate", "baseline", "--text-a", "x"]) == 2
    assert "--text-a map(s) the columns of a pairs file; 'baseline' is a shipped suite" in capsys.readouterr().err


def test_run_oov_alone_runs_the_baseline_and_normalizes(tmp_path, capsys, minilm):
    assert cli.main(["run", "--suite", constants.SUITE_OOV, "--out", str(tmp_path), "--models", MINILM_L6, "--quiet", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert "also running the baseline suite" in captured.err
    assert doc["suites"] == sorted([constants.SUITE_BASELINE, constants.SUITE_OOV])
    rows = pd.read_csv(tmp_path / "pairs.csv")
    base = rows[rows[constants.COL_SUITE] == constants.SUITE_BASELINE]
    dyn = (
        base.loc[base[constants.COL_CATEGORY] == constants.CAT_POSITIVE, constants.COL_COSINE].mean()
        - base.loc[base[constants.COL_CATEGORY] == constants.CAT_NEGATIVE, constants.COL_COSINE].mean()
    )
    oov = rows[rows[constants.COL_SUITE] == constants.SUITE_OOV].pivot(
        index=constants.COL_PAIR_ID, columns=constants.COL_VARIANT, values=constants.COL_COSINE
    )
    for reading in constants.OOV_READINGS:
        (summary,) = doc["tables"][f"oov_summary_{reading}"]
        hand = (oov[constants.VARIANT_ORIGINAL] - oov[reading]).mean() / dyn
        assert not math.isnan(summary["normalized_mean"])
        assert summary["normalized_mean"] == pytest.approx(hand, rel=1e-5)
