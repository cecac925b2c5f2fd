"""The shareable HTML report of a run (core.history.report) and ``cosine-probe report`` (issue 26)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from core import constants
from core.cli.main import main
from core.history import store
from core.history.report import report_html
from core.models.registry import model_color

L6 = "sentence-transformers/all-MiniLM-L6-v2"
LONG_A = "The patient who was admitted on Tuesday with a severe rash is allergic to penicillin and to every drug of that family <b>"


def _results() -> pd.DataFrame:
    rows = [
        (constants.CAT_NEGATION, LONG_A, "The patient is not allergic to penicillin", 0.95),
        (constants.CAT_NEGATION, "It rains", "It does not rain", 0.88),
        (constants.CAT_NUMERICAL, "Take 5 mg", "Take 500 mg", 0.60),
        (constants.CAT_POSITIVE, "A cat sat", "A feline sat", 0.90),
    ]
    return pd.DataFrame([{constants.COL_MODEL: L6, constants.COL_SUITE: "s", constants.COL_CATEGORY: c, constants.COL_PAIR_ID: f"p{i}",
                          constants.COL_TEXT_A: a, constants.COL_TEXT_B: b, constants.COL_COSINE: cos} for i, (c, a, b, cos) in enumerate(rows)])


def test_report_has_findings_inlined_plotly_full_worst_cases_and_settings():
    text = report_html(_results(), 0.7, "Run 1: failure-modes", {"threshold": 0.7, "note": "<script>x</script>"})
    # findings in sentences: negation 2 of 2 above 0.70 is the worst mode
    assert "At threshold 0.70, MiniLM-L6 scores 100% of the negation pairs above the threshold" in text
    # plotly.js inlined once (no CDN), three interactive charts in the model's colour
    assert text.count("Plotly.newPlot") == 3 and not re.search(r"<script[^>]*\bsrc=", text) and text.count("window.PlotlyConfig") == 1
    assert len(text) > 3_000_000 and model_color(L6) in text
    # the worst case is readable in full (escaped), first in its table
    worst = text[text.index("Worst cases"):]
    assert worst.index("The patient who was admitted") < worst.index("It rains")
    assert LONG_A.replace("<b>", "&lt;b&gt;") in worst and "<script>x</script>" not in text
    assert "Versions" in text and "plotly" in text


def test_report_rejects_empty_results_and_bad_thresholds():
    with pytest.raises(ValueError, match="scored pairs"):
        report_html(pd.DataFrame(), 0.7, "x")
    with pytest.raises(ValueError, match="between -1 and 1"):
        report_html(_results(), 2.0, "x")


def test_cli_report_writes_a_stored_run_and_says_one_line_for_an_unknown_id(tmp_path, monkeypatch, capsys):
    history = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history))
    run_id = store.record_run(_results(), command="failure-modes", origin=constants.ORIGIN_CLI, settings={"threshold": 0.7})
    out = tmp_path / "report.html"
    assert main(["report", str(run_id), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert f"cosine-probe run {run_id}: failure-modes" in text and "Plotly.newPlot" in text
    capsys.readouterr()
    assert main(["report", "999", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
    assert main(["report", str(run_id), "--out", str(tmp_path / "missing" / "r.html")]) == 2
