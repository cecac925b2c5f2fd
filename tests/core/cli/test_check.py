"""``cosine-probe check``: exit 0 / 1 / 2, JUnit parsed back, one JSON document, history recorded, the installed command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.history import store
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT

PAIRS = (
    "text_a,text_b,category\n"
    "The check patient has diabetes,The check patient does not have diabetes,negation\n"
    "The check contract was signed,The check contract was not signed,negation\n"
    "The check dog chased the cat,The check cat chased the dog,entity_swap\n"
    "The check meeting is at noon,The check meeting takes place at midday,positive\n"
    "The check stock rose sharply,A check recipe for lemon cake,negative\n"
)


def _config(folder: Path, negation: float, swap: float = 1.0, name: str = "gate.toml") -> Path:
    (folder / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    path = folder / name
    path.write_text(
        f'models = ["{MINILM_L6}"]\nfiles = ["pairs.csv"]\nthreshold = 0.6\n'
        f"[budgets]\nmin_control_auc = 0.5\n[budgets.max_failure_rate]\nnegation = {negation}\nentity_swap = {swap}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def measured(minilm, tmp_path_factory) -> pd.DataFrame:
    """MiniLM's cosines on the pairs, computed by the runner directly (the gate's reference)."""
    from core.files.reader import read_pairs_file
    from core.scoring.runner import run_pairs

    folder = tmp_path_factory.mktemp("measured")
    (folder / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    pairs, _ = read_pairs_file(folder / "pairs.csv")
    return run_pairs(pairs, [MINILM_L6]).results


@pytest.fixture
def history_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    return path


def _negation_rate(measured: pd.DataFrame) -> float:
    cos = measured.loc[measured.category == "negation", "cosine"].to_numpy()
    return float(np.mean(cos > 0.6))


def test_budgets_that_hold_exit_0_with_junit_and_summary(tmp_path, measured, history_file, capsys):
    config = _config(tmp_path, negation=1.0)
    junit, summary = tmp_path / "check.xml", tmp_path / "check.md"
    code = cli.main(["check", "--config", str(config), "--junit", str(junit), "--summary", str(summary), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "check passed: all 3 budget(s) held" in out
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "0", "0")
    case = root.find("testsuite/testcase[@name='max_failure_rate[negation]']")
    assert f"{_negation_rate(measured):.3f}" in case.findtext("system-out") and "max 1.000" in case.findtext("system-out")
    assert summary.read_text(encoding="utf-8").startswith("## cosine-probe check (gate.toml): passed")
    [run] = store.list_runs(history_file).to_dict("records")
    assert run["command"] == "check" and run["origin"] == constants.ORIGIN_CLI


def test_a_budget_below_what_the_model_reaches_exits_1(tmp_path, measured, history_file, capsys):
    rate = _negation_rate(measured)
    assert rate > 0, "the fixture pairs must put some negation above 0.6 for this test to mean anything"
    config = _config(tmp_path, negation=round(rate / 2, 3))
    junit = tmp_path / "check.xml"
    code = cli.main(["check", "--config", str(config), "--junit", str(junit), "--json"])
    out = capsys.readouterr().out
    doc = json.loads(out)  # stdout is exactly one JSON document
    assert code == 1 and doc["exit_code"] == 1 and doc["passed"] is False
    breached = [o for o in doc["outcomes"] if o["status"] == "fail"]
    assert [o["name"] for o in breached] == ["max_failure_rate[negation]"]
    assert breached[0]["measured"] == pytest.approx(rate)
    failure = ET.parse(junit).getroot().find("testsuite/testcase[@name='max_failure_rate[negation]']/failure")
    assert failure is not None and f"{rate:.3f}" in failure.get("message") and f"max {round(rate / 2, 3):.3f}" in failure.get("message")
    assert doc["history_run_id"] == 1 and store.load_run(1, history_file).settings["exit_code"] == 1


BAD = {
    "unknown category": ("[budgets.max_failure_rate]\nnegaton = 0.5\n", "error: budgets.max_failure_rate.negaton: no such category"),
    "threshold type": ('threshold = "0.7"\n[budgets]\nmin_control_auc = 0.9\n', "error: threshold: expected a number"),
    "not toml": ("[budgets\n", "not valid TOML"),
    "nested arrays too deep": ("models = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply for the TOML parser"),
    "nested tables too deep": ("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n", "nested too deeply for the TOML parser"),
}


@pytest.mark.parametrize("text, message", list(BAD.values()), ids=list(BAD))
def test_bad_config_exits_2_with_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    code = cli.main(["check", "--config", str(path)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], captured.err


def test_missing_config_and_output_folder_exit_2(tmp_path, capsys):
    assert cli.main(["check", "--config", str(tmp_path / "absent.toml")]) == 2
    assert "cannot read the config" in capsys.readouterr().err
    config = _config(tmp_path, negation=1.0)
    assert cli.main(["check", "--config", str(config), "--junit", str(tmp_path / "no" / "such" / "x.xml")]) == 2
    assert "error: --junit: no folder" in capsys.readouterr().err


def test_a_history_that_cannot_be_written_is_one_warning(tmp_path, minilm, monkeypatch, capsys):
    folder = tmp_path / "a-folder-not-a-file"
    folder.mkdir()
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(folder))
    code = cli.main(["check", "--config", str(_config(tmp_path, negation=1.0)), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "run history not written" in warnings[0]


def test_the_installed_command_gates(tmp_path, measured):
    """``cosine-probe`` from the venv (make setup installs it) and ``python -m core`` agree on exit 1 for a tightened budget."""
    script = Path(sys.executable).with_name("cosine-probe")
    if not script.exists():
        script = shutil.which("cosine-probe")
    assert script, "the cosine-probe console script is not installed: run `make setup`"
    config = _config(tmp_path, negation=round(_negation_rate(measured) / 2, 3))
    env = {**os.environ, constants.HISTORY_ENV_VAR: "off"}
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=env, timeout=120)
    assert version.returncode == 0 and version.stdout.strip().startswith("cosine-probe ")
    gate = subprocess.run(
        [str(script), "check", "--config", str(config), "--quiet"], capture_output=True, text=True, env=env, cwd=PROJECT_ROOT, timeout=300
    )
    assert gate.returncode == 1, gate.stderr
    assert "BREACH" in gate.stdout and "max_failure_rate[negation]" in gate.stdout
