"""Every table and chart a page draws has CSV and JSON downloads (README): drawn through ``ui.widgets`` (``table``,
``results_table``, ``chart``, ``vega_chart``, ``pair_chart``), or, where a page draws one itself, with ``widgets.downloads`` beside it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRAWS = re.compile(r"\bst\.(dataframe|plotly_chart|altair_chart)\(")
# Where a page or helper calls Streamlit's own table or chart, and why its downloads are still there.
OWN_DRAWING = {
    "views/papers.py": "a styled table (pandas Styler): widgets.downloads(comp) follows it",
    "views/your_data.py": "the 20-row preview of the mapped pairs: widgets.downloads of every mapped pair follows it",
    "ui/audit.py": "the clickable corpus map: downloads of its points follow it",
}


def _drawing_files() -> dict[str, int]:
    files = [*sorted((ROOT / "views").rglob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]
    counts = {str(p.relative_to(ROOT)): len(DRAWS.findall(p.read_text(encoding="utf-8"))) for p in files}
    return {name: n for name, n in counts.items() if n and name != "ui/widgets.py"}


def test_pages_draw_tables_and_charts_with_their_downloads():
    drawn = _drawing_files()
    assert drawn.keys() == OWN_DRAWING.keys(), (
        "draw tables and charts with ui.widgets.table/results_table/chart (they carry CSV and JSON downloads), or add "
        f"widgets.downloads beside Streamlit's own and say so in OWN_DRAWING: {drawn}"
    )
    for name in OWN_DRAWING:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert drawn[name] == 1 and re.search(r"\bdownloads\(", text), name
