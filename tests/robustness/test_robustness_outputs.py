"""Output files that cannot be written fail up front, not after the run (one line, exit 2).

The tests run as root on CI boxes, where permission bits do not stop a write;
a file name longer than the file system allows (ENAMETOOLONG) cannot be
written by anyone, so it stands in for every unwritable path.
"""

from __future__ import annotations

import errno
import os

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.models.registry import MINILM_L6

PAIRS = (
    "text_a,text_b,category\n"
    "The gate dog barks,The gate dog does not bark,negation\n"
    "A gate cat,A gate dog,negative\n"
    "A gate car,A gate automobile,positive\n"
)


def _no_run(*args, **kwargs):
    raise AssertionError("the run must not start when its report cannot be written")


def _one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def gate(tmp_path, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    (tmp_path / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    config = tmp_path / "gate.toml"
    config.write_text(
        f'models = ["{MINILM_L6}"]\nfiles = ["pairs.csv"]\nthreshold = 0.6\n[budgets.max_failure_rate]\nnegation = 1.0\n', encoding="utf-8"
    )
    return config


@pytest.mark.parametrize("flag", ["--junit", "--summary"])
def test_check_refuses_an_unwritable_report_before_the_run(gate, tmp_path, capsys, monkeypatch, flag):
    monkeypatch.setattr("core.cli.check.run_check", _no_run)
    unwritable = tmp_path / ("x" * 300 + ".out")
    assert cli.main(["check", "--config", str(gate), flag, str(unwritable), "--quiet"]) == 2
    line = _one_error(capsys)
    assert line.startswith(f"error: {flag}: cannot write") and "name too long" in line


def test_a_gate_prints_its_outcomes_when_the_report_fails_after_the_run(gate, tmp_path, capsys, monkeypatch, minilm):
    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("core.gate.junit.write_junit", disk_full)
    code = cli.main(["check", "--config", str(gate), "--junit", str(tmp_path / "gate.xml"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert "max_failure_rate[negation]" in out and "check passed" in out  # the outcomes, before the error
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: --junit: cannot write {tmp_path / 'gate.xml'} (No space left on device); the outcomes are above"
    ]


def test_explain_refuses_an_unwritable_csv_before_loading_a_model(tmp_path, capsys, monkeypatch):
    from core.cli import explain

    monkeypatch.setattr(explain, "_explain_one", _no_run)
    code = cli.main(["explain", "a cat", "a dog", "--csv", str(tmp_path / ("y" * 300 + ".csv")), "--models", MINILM_L6])
    assert code == 2
    assert _one_error(capsys).startswith("error: --csv: cannot write")


def test_retrieval_refuses_an_existing_file_as_its_out_folder_before_the_run(tmp_path, capsys, monkeypatch):
    from core.probes.retrieval import run as retrieval_run

    monkeypatch.setattr(retrieval_run, "run_retrieval", _no_run)
    existing = tmp_path / "results"
    existing.write_text("keep me", encoding="utf-8")
    assert cli.main(["retrieval", "--models", MINILM_L6, "--out", str(existing), "--quiet"]) == 2
    assert _one_error(capsys) == f"error: --out: {existing} is a file, not a folder; give a folder name"
    assert existing.read_text(encoding="utf-8") == "keep me"


def test_a_second_run_into_the_same_out_is_refused_and_the_first_keeps_its_files(tmp_path, capsys, monkeypatch):
    from core.cli import run as run_cli
    from core.cli.outputs import exclusive_folder

    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    monkeypatch.setattr(run_cli, "_stage", _no_run)
    with exclusive_folder(out, "--out", "run"):  # the first run, still writing
        (out / ".parts-first").mkdir()
        code = cli.main(["run", "--suite", str(tmp_path / "pairs.csv"), "--models", MINILM_L6, "--out", str(out), "--quiet"])
        assert (out / ".parts-first").is_dir()
    assert code == 2
    line = _one_error(capsys)
    assert line.startswith(f"error: --out: another `run` (pid {os.getpid()}) is writing into {out}") and "give another --out" in line


def test_staging_names_belong_to_one_run(tmp_path):
    from core.scoring import chunked

    staged = tmp_path / "in.parquet"
    chunked.stage_pairs([pd.DataFrame({constants.COL_TEXT_A: ["a"], constants.COL_TEXT_B: ["b"]})], staged)
    other = tmp_path / "out" / ".parts"
    other.mkdir(parents=True)
    (other / "part-0.parquet").write_bytes(b"another run's part")
    result = chunked.score_staged(staged, ["no-such-model-folder-xyz"], tmp_path / "out", cache=None)  # type: ignore[arg-type]
    assert result.errors and (other / "part-0.parquet").read_bytes() == b"another run's part"


@pytest.mark.parametrize("value, said", [("1e23", "got 1e+23"), ("100000000000000000000000", "got 1e+23"), ("0", "got 0")])
def test_an_absurd_chunk_size_is_one_clear_line(tmp_path, capsys, value, said):
    (tmp_path / "pairs.csv").write_text(PAIRS, encoding="utf-8")
    code = cli.main(["run", "--suite", str(tmp_path / "pairs.csv"), "--out", str(tmp_path / "out"), "--chunk-rows", value, "--quiet"])
    assert code == 2
    line = _one_error(capsys)
    assert line.startswith("error: --chunk-rows must be from 1 to 10,000,000") and line.endswith(said)
