"""Tidy tables over a runner results table: per-category summaries, verdicts, labels.

Every function takes the tidy long results (one row per pair per model, see
:mod:`core.scoring.runner`) and returns a tidy table.  Formulas live in
:mod:`core.stats`; here is only which rows go into which statistic.  The
papers' own analyses build on these in :mod:`core.papers`.

Conventions:
    * A failure is a pair scored strictly above the threshold.
    * A verdict compares each row's cosine with one global threshold or with
      each model's own calibrated threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core import constants, stats


def rows_of_suite(results: pd.DataFrame, suite: str | None) -> pd.DataFrame:
    """The rows of one suite (every row when ``suite`` is None)."""
    if results.empty or suite is None:
        return results
    return results[results[constants.COL_SUITE] == suite]


def models_in(results: pd.DataFrame) -> list[str]:
    """The models of a results table, in their first-seen order."""
    return list(dict.fromkeys(results[constants.COL_MODEL])) if not results.empty else []


def category_summary(results: pd.DataFrame, threshold: float = constants.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Mean ± SD cosine, 95% bootstrap CI and failure rate per model and category, of every row given.

    Like every analysis here it takes exactly the rows it scores: the caller
    subsets (:func:`rows_of_suite` for one suite), as scikit-learn metrics do.

    Returns:
        Columns model, suite, category, n, mean, sd, ci_low, ci_high,
        failure_rate, fr_ci_low, fr_ci_high (failure rate = share of pairs
        with cosine > threshold).  OOV rows are left out (see
        :func:`oov_deltas`).
    """
    data = results
    if data.empty:
        return pd.DataFrame(
            columns=["model", "suite", "category", "n", "mean", "sd", "ci_low", "ci_high", "failure_rate", "fr_ci_low", "fr_ci_high"]
        )
    if constants.COL_VARIANT in data.columns:
        data = data[data[constants.COL_VARIANT].isna() | (data[constants.COL_VARIANT] == "")]
    rows = []
    for (model, suite_name, cat), group in data.groupby([constants.COL_MODEL, constants.COL_SUITE, constants.COL_CATEGORY], sort=False):
        cos = group[constants.COL_COSINE].to_numpy(float)
        mean, sd = stats.mean_sd(cos)
        lo, hi = stats.interval_or_nan(stats.bootstrap_ci, cos)
        flo, fhi = stats.interval_or_nan(stats.failure_rate_ci, cos, threshold)
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_SUITE: suite_name,
                constants.COL_CATEGORY: cat,
                "n": len(cos),
                "mean": mean,
                "sd": sd,
                "ci_low": lo,
                "ci_high": hi,
                "failure_rate": stats.failure_rate(cos, threshold),
                "fr_ci_low": flo,
                "fr_ci_high": fhi,
            }
        )
    return pd.DataFrame(rows)


def failure_rate_curves(results: pd.DataFrame, thresholds: Sequence[float] | None = None) -> pd.DataFrame:
    """Failure rate over a threshold grid, per model and category (long), of every row given."""
    grid = np.asarray(thresholds if thresholds is not None else stats.threshold_grid(), dtype=float)
    data = results
    frames = []
    for (model, cat), group in data.groupby([constants.COL_MODEL, constants.COL_CATEGORY], sort=False):
        rates = stats.failure_rate_curve(group[constants.COL_COSINE].to_numpy(float), grid)
        frames.append(pd.DataFrame({constants.COL_MODEL: model, constants.COL_CATEGORY: cat, "threshold": grid, "failure_rate": rates}))
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=[constants.COL_MODEL, constants.COL_CATEGORY, "threshold", "failure_rate"])
    )


ABOVE_THRESHOLD = "above threshold"


BELOW_THRESHOLD = "below threshold"


NO_THRESHOLD = "no calibrated threshold"


COMPARE_TABLE_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_COSINE,
    constants.COL_THRESHOLD,
    "verdict",
    constants.COL_TOKENS_A,
    constants.COL_TOKENS_B,
    constants.COL_TRUNCATED,
    "published",
    "note",
]


def thresholds_for(results: pd.DataFrame, threshold: float | Mapping[str, float]) -> np.ndarray:
    """Each row's threshold: one global value, or each model's own (NaN for a model without one).

    Returns:
        Shape (n_rows,), aligned with ``results``.
    """
    if isinstance(threshold, Mapping):
        return results[constants.COL_MODEL].map(lambda m: threshold.get(m, math.nan)).to_numpy(float)
    return np.full(len(results), float(threshold))


def _verdicts(cosines: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    verdict = np.where(cosines > thresholds, ABOVE_THRESHOLD, BELOW_THRESHOLD).astype(object)
    verdict[np.isnan(thresholds)] = NO_THRESHOLD
    return verdict


def with_verdicts(results: pd.DataFrame, threshold: float | Mapping[str, float] = constants.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """The results with each row's threshold and verdict (``above threshold`` when cosine > threshold).

    Args:
        results: runner output (or any table with model and cosine columns), shape (n, k).
        threshold: one global threshold, or each model's own.

    Returns:
        A copy, shape (n, k + 2), with ``threshold`` and ``verdict`` columns.
    """
    missing = {constants.COL_MODEL, constants.COL_COSINE} - set(results.columns)
    if missing:
        raise ValueError(f"results need columns {sorted(missing)}")
    out = results.copy()
    out[constants.COL_THRESHOLD] = thresholds_for(out, threshold)
    out["verdict"] = _verdicts(out[constants.COL_COSINE].to_numpy(float), out[constants.COL_THRESHOLD].to_numpy(float))
    return out


def compare_table(
    results: pd.DataFrame, threshold: float | Mapping[str, float] = constants.DEFAULT_THRESHOLD, published: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per model for typed pairs: cosine, verdict, token counts, published cosine.

    Args:
        results: runner output (any number of pairs; usually one).
        threshold: a cosine strictly above it is "above threshold" (the
            failure-paper rule: such a pair would be retrieved as the same).
            A mapping gives each model its own (calibrated) threshold.
        published: the failure paper's example table
            (:func:`core.papers.reference.load_failure_examples`: text_a, text_b,
            model, published_cosine, note) or None.  A row gets the published
            cosine when its model and both texts match an example exactly;
            NaN otherwise.

    Returns:
        Columns model, cosine, threshold, verdict, n_tokens_a, n_tokens_b,
        truncated, published, note (plus text_a, text_b, pair_id), in result order.
    """
    cols = [*COMPARE_TABLE_COLUMNS, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_PAIR_ID]
    if results.empty:
        return pd.DataFrame(columns=cols)
    out = results[
        [
            constants.COL_MODEL,
            constants.COL_PAIR_ID,
            constants.COL_TEXT_A,
            constants.COL_TEXT_B,
            constants.COL_COSINE,
            constants.COL_TOKENS_A,
            constants.COL_TOKENS_B,
            constants.COL_TRUNCATED,
        ]
    ].copy()
    out[constants.COL_THRESHOLD] = thresholds_for(out, threshold)
    out["verdict"] = _verdicts(out[constants.COL_COSINE].to_numpy(float), out[constants.COL_THRESHOLD].to_numpy(float))
    if published is not None and not published.empty:
        keys = [constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B]
        ref = published[[*keys, "published_cosine", "note"]].drop_duplicates(keys).rename(columns={"published_cosine": "published"})
        out = out.merge(ref, on=keys, how="left")
        out["note"] = out["note"].fillna("")
    else:
        out["published"] = math.nan
        out["note"] = ""
    out["published"] = out["published"].astype(float)
    return out[cols].reset_index(drop=True)


def _numeric_labels(results: pd.DataFrame, column: str) -> pd.Series:
    """The labels as floats: NaN where a label is empty or not a finite number."""
    if column not in results.columns:
        return pd.Series(np.nan, index=results.index, dtype=float)
    text = results[column].astype("string").str.strip().fillna("")
    values = pd.to_numeric(text.where(text != ""), errors="coerce").astype(float)
    return values.where(np.isfinite(values))


def label_correlation(results: pd.DataFrame, column: str = constants.COL_LABEL) -> pd.DataFrame:
    """Pearson and Spearman correlation of a numeric gold label with cosine, per model.

    Only rows whose label is a finite number count; a model with fewer than
    3 such rows is left out.  A constant label or cosine gives NaN
    correlations (see :func:`core.stats.correlation`).

    Returns:
        Columns model, pearson_r, pearson_p, spearman_rho, spearman_p, n.
    """
    cols = [constants.COL_MODEL, "pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n"]
    if results.empty or column not in results.columns:
        return pd.DataFrame(columns=cols)
    labels = _numeric_labels(results, column)
    data = results.assign(_label=labels)[labels.notna()]
    rows = []
    for model, group in data.groupby(constants.COL_MODEL, sort=False):
        if len(group) < 3:
            continue
        res = stats.correlation(group["_label"].to_numpy(float), group[constants.COL_COSINE].to_numpy(float))
        rows.append({constants.COL_MODEL: model, **res._asdict()})
    return pd.DataFrame(rows, columns=cols)


def perturbation_table(results: pd.DataFrame, threshold: float | Mapping[str, float] = constants.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Scored perturbations (``core.probes.perturb``): one row per variant per model with its verdict.

    Args:
        results: runner output for ``PerturbationReport.to_frame()`` pairs.
        threshold: one global threshold, or each model's own.

    Returns:
        Columns pair_id, category, rule, change, text_b, model, cosine,
        threshold, verdict, in the report's variant order.
    """
    cols = [
        constants.COL_PAIR_ID,
        constants.COL_CATEGORY,
        constants.COL_RULE,
        constants.COL_CHANGE,
        constants.COL_TEXT_B,
        constants.COL_MODEL,
        constants.COL_COSINE,
        constants.COL_THRESHOLD,
        "verdict",
    ]
    if results.empty:
        return pd.DataFrame(columns=cols)
    out = results.copy()
    out[constants.COL_THRESHOLD] = thresholds_for(out, threshold)
    out["verdict"] = _verdicts(out[constants.COL_COSINE].to_numpy(float), out[constants.COL_THRESHOLD].to_numpy(float))
    return out.sort_values([constants.COL_PAIR_ID], kind="stable")[cols].reset_index(drop=True)
