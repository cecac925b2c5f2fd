"""The risk of a corpus in numbers: twin pairs, share of passages with a twin, queries that meet a twin; the curve.

Every number is computed from an :class:`core.audit.run.AuditResult` at a
threshold at or above the one its pairs were collected at, so moving the
threshold filters pairs and never encodes again.  A threshold may be one
number or one per model (a model's calibrated threshold).

Per model and per mode (``all`` pools every mode):

* ``twin_pairs``: close pairs classified ``twin`` (of that mode: its first mode);
* ``twin_share``: the share of passages with at least one such twin, with a
  percentile-bootstrap interval over passages (:func:`core.stats.intervals.bootstrap_ci`);
* with queries, ``query_twin_top5``: the share of queries whose top 5 holds
  a passage and its twin together, and ``twin_first``: the share of queries
  whose first passage has its twin in the same top 5 (the retriever's first
  answer is a coin-flip away from its contradiction); with judged queries
  (a BEIR folder), ``twin_first`` is instead the share of queries whose first
  passage is not relevant but a twin of a relevant one.  Intervals resample
  queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.audit import kinds
from core.audit.run import COL_INDEX_A, COL_INDEX_B, COL_KIND, COL_MODE, AuditResult
from core.stats.guards import interval_or_nan
from core.stats.intervals import bootstrap_ci
from core.stats.rates import threshold_grid

ALL_MODES = "all"
SUMMARY_COLUMNS = [
    constants.COL_MODEL,
    COL_MODE,
    "threshold",
    "n_passages",
    "twin_pairs",
    "near_duplicate_pairs",
    "several_differences_pairs",
    "other_pairs",
    "passages_with_twin",
    "twin_share",
    "twin_share_ci_low",
    "twin_share_ci_high",
    "n_queries",
    "query_twin_top5",
    "query_twin_top5_ci_low",
    "query_twin_top5_ci_high",
    "twin_first",
    "twin_first_ci_low",
    "twin_first_ci_high",
]

Threshold = float | Mapping[str, float]


def threshold_for(threshold: Threshold, model: str) -> float:
    """The threshold that applies to ``model``: the one number, or its own from a mapping (else the default)."""
    if isinstance(threshold, Mapping):
        return float(threshold.get(model, constants.DEFAULT_THRESHOLD))
    return float(threshold)


def pairs_at(result: AuditResult, threshold: Threshold) -> pd.DataFrame:
    """The close pairs strictly above the threshold (each model its own), highest cosine first.

    Raises:
        ValueError: a threshold below the one the pairs were collected at (those pairs were never kept).
    """
    frame = result.pairs
    keep = np.zeros(len(frame), dtype=bool)
    for model in frame[constants.COL_MODEL].unique():
        t = threshold_for(threshold, model)
        if t < result.floor - 1e-12:
            raise ValueError(f"threshold {t:g} is below {result.floor:g}, the one the audit collected pairs at; run it again lower")
        rows = (frame[constants.COL_MODEL] == model).to_numpy()
        keep |= rows & (frame[constants.COL_COSINE].to_numpy() > t)
    return frame[keep].sort_values(constants.COL_COSINE, ascending=False, kind="stable").reset_index(drop=True)


def _ci(indicators: np.ndarray, n_resamples: int | None) -> tuple[float, float]:
    if indicators.size == 0:
        return float("nan"), float("nan")
    return interval_or_nan(bootstrap_ci, indicators.astype(float), n_resamples=n_resamples)


def _partners(twins: pd.DataFrame, n: int) -> list[set[int]]:
    partners: list[set[int]] = [set() for _ in range(n)]
    for a, b in zip(twins[COL_INDEX_A].tolist(), twins[COL_INDEX_B].tolist(), strict=True):
        partners[a].add(b)
        partners[b].add(a)
    return partners


def _query_indicators(top: np.ndarray, partners: list[set[int]], qrels: Mapping[int, set[int]] | None) -> tuple[np.ndarray, np.ndarray]:
    together = np.zeros(top.shape[0], dtype=bool)
    first = np.zeros(top.shape[0], dtype=bool)
    for q, row in enumerate(top.tolist()):
        shown = set(row)
        together[q] = any(partners[p] & shown for p in row)
        if qrels is None:
            first[q] = bool(partners[row[0]] & shown)
        else:
            relevant = qrels.get(q, set())
            first[q] = row[0] not in relevant and bool(partners[row[0]] & relevant)
    return together, first


def risk_summary(result: AuditResult, threshold: Threshold, *, n_resamples: int | None = None) -> pd.DataFrame:
    """Per model, and per mode within it (``all`` first), the numbers of the module docstring.

    Returns:
        One row per model and mode (``SUMMARY_COLUMNS``); query columns are NaN without queries.
    """
    rows = []
    n = len(result.passages)
    at = pairs_at(result, threshold)
    for model in result.models:
        t = threshold_for(threshold, model)
        mine = at[at[constants.COL_MODEL] == model]
        twins = mine[mine[COL_KIND] == kinds.KIND_TWIN]
        for mode in (ALL_MODES, *lexicon.FAILURE_MODES):
            chosen = twins if mode == ALL_MODES else twins[twins[COL_MODE] == mode]
            has = np.zeros(n, dtype=bool)
            has[chosen[COL_INDEX_A].to_numpy(dtype=int)] = True
            has[chosen[COL_INDEX_B].to_numpy(dtype=int)] = True
            low, high = _ci(has, n_resamples)
            row = {
                constants.COL_MODEL: model,
                COL_MODE: mode,
                "threshold": t,
                "n_passages": n,
                "twin_pairs": len(chosen),
                "near_duplicate_pairs": int((mine[COL_KIND] == kinds.KIND_DUPLICATE).sum()) if mode == ALL_MODES else np.nan,
                "several_differences_pairs": int((mine[COL_KIND] == kinds.KIND_SEVERAL).sum()) if mode == ALL_MODES else np.nan,
                "other_pairs": int((mine[COL_KIND] == kinds.KIND_OTHER).sum()) if mode == ALL_MODES else np.nan,
                "passages_with_twin": int(has.sum()),
                "twin_share": float(has.mean()),
                "twin_share_ci_low": low,
                "twin_share_ci_high": high,
                "n_queries": len(result.queries),
            }
            top = result.top.get(model)
            if top is not None and top.shape[0]:
                together, first = _query_indicators(top, _partners(chosen, n), result.qrels)
                row.update({"query_twin_top5": float(together.mean()), "twin_first": float(first.mean())})
                row["query_twin_top5_ci_low"], row["query_twin_top5_ci_high"] = _ci(together, n_resamples)
                row["twin_first_ci_low"], row["twin_first_ci_high"] = _ci(first, n_resamples)
            rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def twin_curve(result: AuditResult, step: float = 0.01) -> pd.DataFrame:
    """The share of passages with at least one twin at each threshold from the audit's floor to 1, per model.

    Returns:
        model, threshold, twin_share, twin_pairs: one row per model and threshold.
    """
    grid = threshold_grid(step, low=max(result.floor, -1.0), high=1.0)
    n = len(result.passages)
    rows = []
    for model in result.models:
        mine = result.pairs[(result.pairs[constants.COL_MODEL] == model) & (result.pairs[COL_KIND] == kinds.KIND_TWIN)]
        cos = mine[constants.COL_COSINE].to_numpy()
        a, b = mine[COL_INDEX_A].to_numpy(dtype=int), mine[COL_INDEX_B].to_numpy(dtype=int)
        # A passage keeps a twin up to the best cosine among its twins: one pass, then a count per threshold.
        best = np.full(n, -np.inf)
        np.maximum.at(best, a, cos)
        np.maximum.at(best, b, cos)
        for t in grid:
            rows.append((model, float(t), float(np.mean(best > t)), int(np.sum(cos > t))))
    return pd.DataFrame(rows, columns=[constants.COL_MODEL, "threshold", "twin_share", "twin_pairs"])


def summary_doc(result: AuditResult, summary: pd.DataFrame, findings: Sequence[str], table: pd.DataFrame | None = None) -> dict:
    """The ``summary.json`` of an audit: settings, per-model and per-mode numbers, findings (and their table), errors."""
    records = _records(summary)
    return {
        "command": "audit",
        "n_passages": len(result.passages),
        "n_queries": len(result.queries),
        "floor": result.floor,
        "models": result.models,
        "summary": records,
        "findings": list(findings),
        "findings_table": _records(table) if table is not None else [],
        "errors": dict(result.errors),
        "seconds": round(result.seconds, 3),
        "timings": result.timings,
        "search": {model: report.as_dict() for model, report in result.search.items()},
    }


def _records(frame: pd.DataFrame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
