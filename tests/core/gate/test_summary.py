"""The Markdown summary: verdict, counts, one row per outcome, cells that cannot break the table."""

from __future__ import annotations

import math

from core.gate.budgets import Outcome
from core.gate.summary import summary_markdown


def test_summary_lists_every_outcome_with_its_verdict():
    outcomes = [
        Outcome("m1", "max_failure_rate", "negation", 0.25, 0.5, 4, "1/4 pairs above global threshold 0.800"),
        Outcome("m1", "min_control_auc", "", 0.75, 0.9),
        Outcome("m|2", "min_control_auc", "", math.nan, 0.9, error="needs controls"),
    ]
    text = summary_markdown(outcomes, thresholds={"m1": 0.8}, notes=["added controls"])
    lines = text.splitlines()
    assert lines[0] == "## cosine-probe check: FAILED"
    assert "3 budget(s): 1 held, 1 breached, 1 not measured." in text
    assert "Thresholds (global): m1 0.800." in text
    rows = [line for line in lines if line.startswith("| m") and not line.startswith("| model")]
    assert len(rows) == 3
    assert "| 0.250 | ≤ 0.500 | ✅ pass |" in rows[0]
    assert "| 0.750 | ≥ 0.900 | ❌ breach |" in rows[1]
    assert rows[2].startswith("| m\\|2 |") and "n/a" in rows[2] and "needs controls" in rows[2]
    # Every row has the header's cell count: an escaped pipe does not open a cell.
    assert all(row.replace("\\|", "").count("|") == 7 for row in rows)
    assert lines[-1] == "- added controls"


def test_all_held_says_passed():
    text = summary_markdown([Outcome("m", "min_control_auc", "", 1.0, 0.9)], title="gate")
    assert text.startswith("## gate: passed")
