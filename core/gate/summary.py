"""A Markdown summary of a gate run, for a CI job page (e.g. GitHub's ``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from core.gate.budgets import STATUS_ERROR, STATUS_FAIL, STATUS_PASS, Outcome, exit_code

_ICON = {STATUS_PASS: "✅ pass", STATUS_FAIL: "❌ breach", STATUS_ERROR: "⚠️ not measured"}


def _cell(text: object) -> str:
    """A table cell: pipes and line breaks would end the cell or the row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _value(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "n/a"


def summary_markdown(
    outcomes: Sequence[Outcome],
    *,
    title: str = "cosine-probe check",
    thresholds: Mapping[str, float] | None = None,
    threshold_mode: str = "global",
    notes: Sequence[str] = (),
) -> str:
    """The gate's verdict, a counts line, one table row per budget per model, and the notes.

    Args:
        outcomes: one per budget per model.
        title: the heading.
        thresholds: model -> threshold used for failure rates.
        threshold_mode: how the thresholds were chosen.
        notes: lines to list under the table (controls added, models that failed).

    Returns:
        Markdown text ending in a newline.
    """
    statuses = [o.status for o in outcomes]
    verdict = "passed" if exit_code(outcomes) == 0 else "FAILED"
    lines = [
        f"## {_cell(title)}: {verdict}",
        "",
        f"{len(outcomes)} budget(s): {statuses.count(STATUS_PASS)} held, {statuses.count(STATUS_FAIL)} breached, "
        f"{statuses.count(STATUS_ERROR)} not measured.",
        "",
    ]
    if thresholds:
        shown = ", ".join(f"{_cell(m)} {t:.3f}" for m, t in thresholds.items())
        lines += [f"Thresholds ({_cell(threshold_mode)}): {shown}.", ""]
    lines += ["| model | budget | measured | limit | status | detail |", "|---|---|---:|---:|---|---|"]
    for o in outcomes:
        bound = "≤" if o.is_max else "≥"
        lines.append(
            f"| {_cell(o.model)} | `{_cell(o.name)}` | {_value(o.measured)} | {bound} {o.limit:.3f} | {_ICON[o.status]} | "
            f"{_cell(o.error or o.detail)} |"
        )
    if notes:
        lines += ["", *(f"- {_cell(n)}" for n in notes)]
    return "\n".join(lines) + "\n"
