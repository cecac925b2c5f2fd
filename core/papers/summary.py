"""Every summary table a results table allows, keyed by name (the CLI's ``run`` and exports)."""

from __future__ import annotations

import pandas as pd

from core import constants
from core.papers.failure_modes import failure_mode_table, kruskal_by_category, severity_ranking, vulnerability_ranking
from core.papers.oov import dynamic_ranges, jaccard_correlation, oov_deltas, oov_summary
from core.scoring.tables import category_summary, rows_of_suite


def summarize(results: pd.DataFrame, threshold: float = constants.DEFAULT_THRESHOLD) -> dict[str, pd.DataFrame]:
    """Every summary table the results allow, keyed by name."""
    out: dict[str, pd.DataFrame] = {"categories": category_summary(results, threshold)}
    suites = set(results[constants.COL_SUITE]) if not results.empty else set()
    # Each paper's analyses score exactly the rows of the suite the paper used.
    if constants.SUITE_FAILURE_MODES in suites:
        fm = rows_of_suite(results, constants.SUITE_FAILURE_MODES)
        out["failure_modes"] = failure_mode_table(fm, threshold)
        out["severity"] = severity_ranking(fm)
        out["kruskal_wallis"] = kruskal_by_category(fm)
        out["vulnerability"] = vulnerability_ranking(fm)
    if constants.SUITE_BASELINE in suites:
        baseline = rows_of_suite(results, constants.SUITE_BASELINE)
        out["dynamic_range"] = dynamic_ranges(baseline)
        out["jaccard_correlation"] = jaccard_correlation(baseline)
    if constants.SUITE_OOV in suites:
        dyn = out.get("dynamic_range")
        for reading in constants.OOV_READINGS:
            deltas = oov_deltas(results, reading, dyn)
            out[f"oov_deltas_{reading}"] = deltas
            out[f"oov_summary_{reading}"] = oov_summary(deltas, dyn)
    return out
