"""``cosine-probe report RUN_ID --out FILE`` never writes over a file it did not write and checks
its output before the work: one ``error:`` line, exit 2, the file left as it was."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd
import pytest

from core import constants
from core.history import store
from core.history.report import REPORT_MARKER, is_report

L6 = "sentence-transformers/all-MiniLM-L6-v2"


def _results() -> pd.DataFrame:
    rows = [(constants.CAT_NEGATION, "It rains", "It does not rain", 0.88), (constants.CAT_POSITIVE, "A cat sat", "A feline sat", 0.90)]
    return pd.DataFrame(
        [
            {
                constants.COL_MODEL: L6,
                constants.COL_SUITE: "s",
                constants.COL_CATEGORY: c,
                constants.COL_PAIR_ID: f"p{i}",
                constants.COL_TEXT_A: a,
                constants.COL_TEXT_B: b,
                constants.COL_COSINE: cos,
            }
            for i, (c, a, b, cos) in enumerate(rows)
        ]
    )


@pytest.fixture
def history(tmp_path, monkeypatch) -> tuple[Path, int]:
    path = tmp_path / "hist" / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    run_id = store.record_run(_results(), command="failure-modes", origin=constants.ORIGIN_CLI, settings={"threshold": 0.7})
    return path, run_id


def _one_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _no_report(*args, **kwargs):
    raise AssertionError("the run must not be read when its report cannot be written")


def test_report_over_the_history_is_refused_and_every_run_survives(cli, history, tmp_path):
    path, run_id = history
    before = path.read_bytes()
    for given in (path, tmp_path / "hist" / ".." / "hist" / "history.duckdb"):
        code, _, err = cli("report", str(run_id), "--out", str(given))
        assert code == 2
        assert "is the run history itself; writing there would destroy every stored run" in _one_error(err)
    assert path.read_bytes() == before
    code, out, _ = cli("history", "list")
    assert code == 0 and "failure-modes" in out


def test_report_through_a_symbolic_link_to_the_history_is_refused(cli, history, tmp_path):
    path, run_id = history
    link = tmp_path / "innocent.html"
    link.symlink_to(path)
    before = path.read_bytes()
    code, _, err = cli("report", str(run_id), "--out", str(link))
    assert code == 2 and "the run history" in _one_error(err)
    assert path.read_bytes() == before and link.is_symlink()


def test_report_over_the_embedding_cache_is_refused(cli, history, tmp_path, monkeypatch):
    _, run_id = history
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    cache = tmp_path / "cache" / constants.EMBEDDING_CACHE_FILE
    cache.parent.mkdir()
    cache.write_bytes(b"SQLite format 3\x00 vectors")
    code, _, err = cli("report", str(run_id), "--out", str(cache))
    assert code == 2 and "is the embedding cache itself" in _one_error(err)
    assert cache.read_bytes() == b"SQLite format 3\x00 vectors"


def test_history_export_is_refused_over_the_cache_too(cli, history, tmp_path, monkeypatch):
    _, run_id = history
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    cache = tmp_path / "cache" / constants.EMBEDDING_CACHE_FILE
    cache.parent.mkdir()
    cache.write_bytes(b"vectors")
    code, _, err = cli("history", "export", str(run_id), "--out", str(cache))
    assert code == 2 and "is the embedding cache itself" in _one_error(err)
    assert cache.read_bytes() == b"vectors"


def test_report_never_replaces_a_file_that_is_not_an_earlier_report(cli, history, tmp_path):
    _, run_id = history
    export = tmp_path / "run.parquet"
    assert cli("history", "export", str(run_id), "--out", str(export))[0] == 0
    notes = tmp_path / "notes.html"
    notes.write_text("<!doctype html><p>my own page</p>", encoding="utf-8")
    for victim in (export, notes):
        before = victim.read_bytes()
        code, _, err = cli("report", str(run_id), "--out", str(victim))
        assert code == 2
        assert _one_error(err) == (
            f"error: --out: {victim} exists and is not a cosine-probe report; writing there would replace it. Name another file, or "
            "delete it first"
        )
        assert victim.read_bytes() == before


def test_report_replaces_an_earlier_report(cli, history, tmp_path):
    _, run_id = history
    out = tmp_path / "report.html"
    assert cli("report", str(run_id), "--out", str(out))[0] == 0
    assert is_report(out) and REPORT_MARKER in out.read_text(encoding="utf-8")
    out.write_text(out.read_text(encoding="utf-8").replace("Findings", "Old findings"), encoding="utf-8")
    assert cli("report", str(run_id), "--out", str(out))[0] == 0
    assert "Old findings" not in out.read_text(encoding="utf-8")


def test_a_report_written_before_the_marker_is_recognised(tmp_path):
    old = tmp_path / "old.html"
    old.write_text(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>t</title></head><body><h1>t</h1>"
        "<p class='meta'>2026-01-01 10:00 UTC · threshold 0.70 · made by cosine-probe</p>",
        encoding="utf-8",
    )
    assert is_report(old)
    assert not is_report(tmp_path / "missing.html")


@pytest.mark.parametrize("case", ["folder", "no folder", "name too long"])
def test_report_checks_its_output_before_reading_the_run(cli, history, tmp_path, monkeypatch, case):
    _, run_id = history
    monkeypatch.setattr("core.history.report.run_report", _no_report)
    given = {"folder": tmp_path, "no folder": tmp_path / "missing" / "r.html", "name too long": tmp_path / ("x" * 300 + ".html")}[case]
    code, _, err = cli("report", str(run_id), "--out", str(given))
    assert code == 2
    line = _one_error(err)
    said = {"folder": "is a folder; give a file name", "no folder": "no folder", "name too long": "name too long"}[case]
    assert line.startswith("error: --out: ") and said in line


def test_a_full_disk_is_one_line_and_the_earlier_report_survives(cli, history, tmp_path, monkeypatch):
    _, run_id = history
    out = tmp_path / "report.html"
    assert cli("report", str(run_id), "--out", str(out))[0] == 0
    before = out.read_bytes()

    def full(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", full)
    code, _, err = cli("report", str(run_id), "--out", str(out))
    assert code == 2
    assert _one_error(err) == f"error: --out: cannot write {out} (No space left on device)"
    monkeypatch.undo()
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_a_name_at_the_length_limit_is_written(cli, history, tmp_path):
    _, run_id = history
    out = tmp_path / ("r" * 250 + ".html")  # 255 bytes: the longest name the file system takes
    code, _, err = cli("report", str(run_id), "--out", str(out))
    assert code == 0, err
    assert is_report(out)
