"""The command line: acceptance command, JSON outputs, run outputs, one-line user errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.models import sources
from core.models.defaults import DEFAULT_MODELS_ENV
from core.models.registry import BUNDLED, DEFAULT_BUNDLED, MINILM_L6, MINILM_L6_INT8, NOMIC, REGISTRY
from core.paths import PROJECT_ROOT

REFUSING_HUB = "http://127.0.0.1:9"


def _popen(args: list[str], env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, "HF_ENDPOINT": REFUSING_HUB, **(env_extra or {})}
    env.pop("COSINE_PROBE_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "core", *args],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


@pytest.fixture(scope="module")
def small_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "small.tsv"
    path.write_text(
        "pair_id\ttext_a\ttext_b\tcategory\n"
        "p1\tThe CLI test cat sat on the mat\tThe CLI test cat sat on the rug\tpositive\n"
        "p2\tThe CLI test patient has diabetes\tThe CLI test patient does not have diabetes\tnegation\n"
        'p3\t=HYPERLINK("http://x")\tA CLI test formula-looking cell\tnegative\n',
        encoding="utf-8",
    )
    return path


# ----------------------------------------------------------------- user errors

USER_ERRORS = {
    "empty text": (["compare", "", "some text"], "TEXT_A is empty"),
    "blank text": (["compare", "some text", "   "], "TEXT_B holds only whitespace"),
    "empty token text": (["tokens", ""], "TEXT is empty"),
    "unknown suite": (["run", "--suite", "no-such-suite", "--out", "{tmp}/out", "--models", MINILM_L6], "no suite named"),
    "threshold out of range": (["compare", "a", "b", "--threshold", "5"], "--threshold must be between -1 and 1"),
    "unwritable output": (["run", "--suite", "{tsv}", "--out", "{tmp}/a-file/out", "--models", MINILM_L6], "cannot write into"),
    "binary pairs file": (["run", "--suite", "{tmp}/binary.csv", "--out", "{tmp}/out2", "--models", MINILM_L6], "binary"),
    "unknown suite to validate": (["validate", "no-such-suite"], "no suite named"),
}


@pytest.fixture(scope="module")
def user_error_runs(tmp_path_factory, small_tsv):
    """Run every user-error case at once (they are independent processes)."""
    tmp = tmp_path_factory.mktemp("cli-errors")
    (tmp / "a-file").write_text("a file where a folder should be")
    (tmp / "binary.csv").write_bytes(bytes(range(256)) * 64)
    procs = {case: _popen([a.format(tmp=tmp, tsv=small_tsv) for a in args]) for case, (args, _) in USER_ERRORS.items()}
    return {case: _finish(proc) for case, proc in procs.items()}


@pytest.mark.parametrize("case", list(USER_ERRORS))
def test_user_error_is_one_line(user_error_runs, case):
    code, out, err = user_error_runs[case]
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == cli.EXIT_USAGE, (code, err)
    assert "Traceback" not in err and "Traceback" not in out
    assert len(lines) == 1, err
    assert lines[0].startswith("error:")
    assert USER_ERRORS[case][1] in lines[0]


def test_unknown_model_only_exits_3_with_reason(small_tsv, tmp_path):
    procs = {
        "compare": _popen(["compare", "a", "b", "--models", "no-such-org/x"]),
        "run": _popen(["run", "--suite", str(small_tsv), "--out", str(tmp_path / "out"), "--models", "no-such-org/x", "--quiet"]),
        "tokens": _popen(["tokens", "hello", "--models", "no-such-org/x"]),
    }
    for name, proc in procs.items():
        code, out, err = _finish(proc)
        assert code == cli.EXIT_NO_MODEL, (name, code, err)
        assert "Traceback" not in err
        assert re.search(r"^error: no-such-org/x: .+", err, re.M), (name, err)
    assert not (tmp_path / "out" / "pairs.csv").exists()


# --------------------------------------------------------------- acceptance


@pytest.mark.slow
def test_compare_acceptance_prints_four_cosines(monkeypatch):
    monkeypatch.delenv(DEFAULT_MODELS_ENV)  # the bundled defaults, not the tests' MiniLM-only choice
    code, out, err = _finish(_popen(["compare", "Google acquired YouTube", "YouTube acquired Google"]))
    assert code == 0, err
    assert "Traceback" not in err
    lines = out.strip().splitlines()
    assert len(lines) == 4, out
    seen = {}
    for line in lines:
        match = re.fullmatch(r"(-?\d\.\d{4})  (above|below) 0\.7  (\S+)", line)
        assert match, line
        seen[match.group(3)] = float(match.group(1))
    assert set(seen) == set(DEFAULT_BUNDLED)
    # The entity swap fools every bundled model (the reason the tool exists).
    assert all(0.7 < c <= 1.0 for c in seen.values()), seen


# ------------------------------------------------------------ in-process JSON


@pytest.mark.slow
def test_compare_json_lists_every_bundled_model(capsys, monkeypatch):
    monkeypatch.delenv(DEFAULT_MODELS_ENV)
    assert cli.main(["compare", "Google acquired YouTube", "YouTube acquired Google", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows] == list(DEFAULT_BUNDLED)
    for row in rows:
        assert -1.0 <= row["cosine"] <= 1.0
        assert row["above_threshold"] == (row["cosine"] > constants.DEFAULT_THRESHOLD)
        assert row["n_tokens_a"] == row["n_tokens_b"] and not row["truncated"]


def test_compare_threshold_flag(capsys, minilm):
    assert (
        cli.main(["compare", "Google acquired YouTube", "YouTube acquired Google", "--models", MINILM_L6, "--threshold", "0.999", "--json"])
        == 0
    )
    (row,) = json.loads(capsys.readouterr().out)
    assert row["cosine"] < 0.999 and row["above_threshold"] is False


def test_tokens_json(capsys):
    assert cli.main(["tokens", "Xylophrix acquired Quarbitone", "🦄", "--models", MINILM_L6, MINILM_L6_INT8, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4
    for row in rows:
        assert {"model", "text", "tokens"} <= set(row)
    first = rows[0]
    assert first["model"] == MINILM_L6 and first["text"] == "Xylophrix acquired Quarbitone"
    assert first["tokens"] == ["x", "##yl", "##op", "##hri", "##x", "acquired", "qu", "##ar", "##bit", "##one"]
    assert first["n_with_special"] == 12 and first["n_past_max"] == 0
    assert first["words"][0] == {"word": "Xylophrix", "pieces": ["x", "##yl", "##op", "##hri", "##x"], "in_vocab": False, "n_unk": 0}
    # int8 MiniLM shares fp32 MiniLM's WordPiece vocabulary, so every split is the same
    assert all(row["identical_across_models"] for row in rows)
    assert rows[1]["tokens"] == ["[UNK]"] and rows[1]["n_unk"] == 1


def test_tokens_default_models_and_plain_output(capsys, monkeypatch):
    monkeypatch.delenv(DEFAULT_MODELS_ENV)
    assert cli.main(["tokens", "Google acquired YouTube"]) == 0
    out = capsys.readouterr().out
    assert "identical splits across 4 models" in out


def test_cli_and_app_share_one_default_model_list(monkeypatch):
    """$COSINE_PROBE_DEFAULT_MODELS chose the app's models but the CLI scored every bundled one."""
    from core.cli.common import default_models as cli_defaults
    from ui.state import default_models as app_defaults

    monkeypatch.setenv(DEFAULT_MODELS_ENV, f"{MINILM_L6}, {MINILM_L6_INT8}")
    assert cli_defaults() == app_defaults() == [MINILM_L6, MINILM_L6_INT8]
    monkeypatch.delenv(DEFAULT_MODELS_ENV)
    assert cli_defaults() == app_defaults() == list(DEFAULT_BUNDLED)  # every bundled model is installed here


def test_models_json_has_every_registry_entry(capsys, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", REFUSING_HUB)
    monkeypatch.setattr(sources, "_HUB_STATE", {})
    assert cli.main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in rows] == list(REGISTRY)
    by_name = {r["model"]: r for r in rows}
    for row in rows:
        assert isinstance(row["available"], bool)
        assert row["status"] and row["reason"]
    for name in BUNDLED:
        assert (by_name[name]["available"], by_name[name]["status"]) == (True, "bundled")
    assert by_name[NOMIC]["status"] == "needs-opt-in"
    assert all(not by_name[n]["available"] for n in REGISTRY if n not in BUNDLED)

    assert cli.main(["models"]) == 0
    plain = capsys.readouterr().out
    assert all(name in plain for name in REGISTRY)


def test_run_writes_pairs_and_summary(small_tsv, tmp_path, capsys, minilm):
    out = tmp_path / "results"
    assert cli.main(["run", "--suite", str(small_tsv), "--models", MINILM_L6, "--out", str(out), "--quiet"]) == 0
    assert f"wrote {out / 'pairs.csv'}" in capsys.readouterr().out

    pairs = pd.read_csv(out / "pairs.csv", dtype=str, keep_default_na=False)
    assert set(constants.RESULT_COLUMNS) <= set(pairs.columns)
    assert list(pairs.columns[:1]) == [constants.COL_MODEL]
    assert len(pairs) == 3
    assert set(pairs[constants.COL_MODEL]) == {MINILM_L6}
    assert set(pairs[constants.COL_SUITE]) == {"small"}
    assert pairs[constants.COL_PAIR_ID].tolist() == ["p1", "p2", "p3"]
    assert pairs[constants.COL_CATEGORY].tolist() == ["positive", "negation", "negative"]
    assert all(-1.0 <= float(c) <= 1.0 for c in pairs[constants.COL_COSINE])
    # Spreadsheet formula injection is neutralized in the written CSV.
    assert pairs[constants.COL_TEXT_A].iloc[2] == '\'=HYPERLINK("http://x")'

    summary = json.loads((out / "summary.json").read_text())
    assert summary["models"] == [MINILM_L6]
    assert summary["errors"] == {}
    assert summary["threshold"] == constants.DEFAULT_THRESHOLD
    assert summary["encoding"][MINILM_L6]["unique_texts"] == 6
    assert "categories" in summary["tables"]
    assert {r["category"] for r in summary["tables"]["categories"]} == {"positive", "negation", "negative"}


def test_parser_rejects_missing_arguments(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["compare", "only one"])
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err
