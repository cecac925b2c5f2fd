"""What changed between two runs.

Per model and category: the change in mean cosine and failure rate, and the pairs that crossed the threshold.

Pairs are matched across the runs by model, suite, pair id, variant and both
texts (and their order among equal keys), so a suite whose sentences were
edited between the runs does not pretend to compare like with like.  Two runs
that scored the same pairs (the same ``pairs_digest``, ``core.history.store``)
are matched by content alone (``by_content``: model and both texts, in order),
so a CLI run of a file and a page run of it compare although one calls the
suite by the file's name and the other ``uploaded``.
Differences are *after − before* (run B − run A) over the matched pairs,
with paired percentile-bootstrap intervals (``core.stats.intervals.bootstrap_diff_ci``):
the same pair in both runs is one unit.  A failure is a cosine strictly
above the threshold, each run at its own threshold for that model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.models.registry import short_name
from core.stats.guards import interval_or_nan
from core.stats.intervals import bootstrap_diff_ci

_KEY = [constants.COL_MODEL, constants.COL_SUITE, constants.COL_PAIR_ID, constants.COL_VARIANT, constants.COL_TEXT_A, constants.COL_TEXT_B]
_CONTENT_KEY = [constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B]
_NAMES = [constants.COL_SUITE, constants.COL_PAIR_ID, constants.COL_VARIANT]
_OCCURRENCE = "_occurrence"
CROSSED_UP = "now above"
CROSSED_DOWN = "now below"

CATEGORY_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_CATEGORY,
    "n",
    "mean_before",
    "mean_after",
    "mean_change",
    "mean_ci_low",
    "mean_ci_high",
    "threshold_before",
    "threshold_after",
    "rate_before",
    "rate_after",
    "rate_change",
    "rate_ci_low",
    "rate_ci_high",
    "n_now_above",
    "n_now_below",
]
CROSSED_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_CATEGORY,
    constants.COL_SUITE,
    constants.COL_PAIR_ID,
    constants.COL_VARIANT,
    constants.COL_TEXT_A,
    constants.COL_TEXT_B,
    "cosine_before",
    "cosine_after",
    "threshold_before",
    "threshold_after",
    "direction",
]


@dataclass(frozen=True)
class RunDiff:
    """Run B against run A.

    Attributes:
        categories: one row per model and category (columns :data:`CATEGORY_COLUMNS`).
        crossed: the matched pairs on different sides of the threshold in the two runs (:data:`CROSSED_COLUMNS`).
        n_matched: pairs found in both runs (over all models).
        n_only_before: rows of run A without a match in run B.
        n_only_after: rows of run B without a match in run A.
        models_only_before: models only run A scored.
        models_only_after: models only run B scored.
    """

    categories: pd.DataFrame
    crossed: pd.DataFrame
    n_matched: int
    n_only_before: int
    n_only_after: int
    models_only_before: tuple[str, ...]
    models_only_after: tuple[str, ...]


def _keyed(results: pd.DataFrame, name: str, key: list[str]) -> pd.DataFrame:
    missing = {constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE} - set(results.columns)
    if missing:
        raise ValueError(f"{name} lacks columns {sorted(missing)}")
    out = results.copy()
    for col in (*_KEY, constants.COL_CATEGORY):
        out[col] = out[col].fillna("").astype(str) if col in out.columns else ""
    out[constants.COL_COSINE] = pd.to_numeric(out[constants.COL_COSINE], errors="coerce")
    out = out.dropna(subset=[constants.COL_COSINE])
    out[_OCCURRENCE] = out.groupby(key, sort=False).cumcount()
    return out[[*key, _OCCURRENCE, *(c for c in _KEY if c not in key), constants.COL_CATEGORY, constants.COL_COSINE]]


def _thresholds(value: float | Mapping[str, float], models: pd.Series) -> np.ndarray:
    if isinstance(value, Mapping):
        return models.map(lambda m: float(value.get(m, constants.DEFAULT_THRESHOLD))).to_numpy(float)
    return np.full(len(models), float(value))


def _category_changes(merged: pd.DataFrame, boot: dict[str, Any]) -> pd.DataFrame:
    """Score each model and category's change, so :func:`diff_runs` reads as match, score, list.

    Args:
        merged: the matched pairs with both runs' cosines, thresholds and above flags.
        boot: the bootstrap settings (``n_resamples``, ``confidence``, ``seed``).

    Returns:
        One row per model and category, columns :data:`CATEGORY_COLUMNS`.
    """
    rows = []
    for (model, category), g in merged.groupby([constants.COL_MODEL, constants.COL_CATEGORY], sort=False):
        cos_a, cos_b = g[f"{constants.COL_COSINE}_before"].to_numpy(float), g[f"{constants.COL_COSINE}_after"].to_numpy(float)
        ind_a, ind_b = g["above_before"].to_numpy(float), g["above_after"].to_numpy(float)
        mean_ci = interval_or_nan(bootstrap_diff_ci, cos_b, cos_a, **boot)
        rate_ci = interval_or_nan(bootstrap_diff_ci, ind_b, ind_a, **boot)
        rows.append(
            (
                model,
                category,
                len(g),
                cos_a.mean(),
                cos_b.mean(),
                cos_b.mean() - cos_a.mean(),
                *mean_ci,
                float(g["threshold_before"].iloc[0]),
                float(g["threshold_after"].iloc[0]),
                ind_a.mean(),
                ind_b.mean(),
                ind_b.mean() - ind_a.mean(),
                *rate_ci,
                int((~g["above_before"] & g["above_after"]).sum()),
                int((g["above_before"] & ~g["above_after"]).sum()),
            )
        )
    return pd.DataFrame(rows, columns=CATEGORY_COLUMNS)


def _crossed_pairs(merged: pd.DataFrame) -> pd.DataFrame:
    """List the pairs whose side of the threshold changed, for the reader to inspect one by one.

    Args:
        merged: the matched pairs with both runs' cosines, thresholds and above flags.

    Returns:
        One row per crossed pair, columns :data:`CROSSED_COLUMNS`.
    """
    changed = merged[merged["above_before"] != merged["above_after"]]
    return pd.DataFrame(
        {
            **{
                c: changed[c]
                for c in (
                    constants.COL_MODEL,
                    constants.COL_CATEGORY,
                    constants.COL_SUITE,
                    constants.COL_PAIR_ID,
                    constants.COL_VARIANT,
                    constants.COL_TEXT_A,
                    constants.COL_TEXT_B,
                )
            },
            "cosine_before": changed[f"{constants.COL_COSINE}_before"],
            "cosine_after": changed[f"{constants.COL_COSINE}_after"],
            "threshold_before": changed["threshold_before"],
            "threshold_after": changed["threshold_after"],
            "direction": np.where(changed["above_after"], CROSSED_UP, CROSSED_DOWN),
        },
        columns=CROSSED_COLUMNS,
    ).reset_index(drop=True)


def diff_runs(
    before: pd.DataFrame,
    after: pd.DataFrame,
    threshold_before: float | Mapping[str, float] = constants.DEFAULT_THRESHOLD,
    threshold_after: float | Mapping[str, float] = constants.DEFAULT_THRESHOLD,
    *,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
    by_content: bool = False,
) -> RunDiff:
    """Compare two runs' tidy results.

    Args:
        before: run A's results (``model``, ``text_a``, ``text_b``, ``cosine``; ``suite``,
            ``category``, ``pair_id``, ``variant`` when present).
        after: run B's results, same columns.
        threshold_before: run A's threshold, one for all models or per model.
        threshold_after: run B's threshold, likewise.
        n_resamples, confidence, seed: of the bootstrap intervals (n_resamples None:
            the current setting, :func:`core.settings.bootstrap_resamples`).
        by_content: match pairs by model and both texts only (for two runs that scored the same pairs
            under different names); suite, pair id and variant are then run B's.

    Returns:
        A :class:`RunDiff`; categories and crossed pairs are empty when the runs share no pair.

    Raises:
        ValueError: a table lacks the needed columns.
    """
    key = _CONTENT_KEY if by_content else _KEY
    a, b = _keyed(before, "the first run's results", key), _keyed(after, "the second run's results", key)
    keys = [*key, _OCCURRENCE]
    merged = a.merge(b, on=keys, how="inner", suffixes=("_before", "_after"))
    merged[constants.COL_CATEGORY] = merged[f"{constants.COL_CATEGORY}_after"]
    for col in (c for c in _NAMES if c not in key):
        merged[col] = merged[f"{col}_after"]
    merged["threshold_before"] = _thresholds(threshold_before, merged[constants.COL_MODEL])
    merged["threshold_after"] = _thresholds(threshold_after, merged[constants.COL_MODEL])
    merged["above_before"] = merged[f"{constants.COL_COSINE}_before"] > merged["threshold_before"]
    merged["above_after"] = merged[f"{constants.COL_COSINE}_after"] > merged["threshold_after"]
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    categories = _category_changes(merged, boot)
    crossed = _crossed_pairs(merged)
    models_a, models_b = set(a[constants.COL_MODEL]), set(b[constants.COL_MODEL])
    return RunDiff(
        categories=categories,
        crossed=crossed,
        n_matched=len(merged),
        n_only_before=len(a) - len(merged),
        n_only_after=len(b) - len(merged),
        models_only_before=tuple(sorted(models_a - models_b)),
        models_only_after=tuple(sorted(models_b - models_a)),
    )


def run_overview(results: pd.DataFrame, thresholds: Mapping[str, float]) -> pd.DataFrame:
    """One stored run at a glance: per model and category, the pairs, mean cosine and share above the model's threshold.

    Args:
        results: tidy results (``model``, ``category``, ``cosine``).
        thresholds: model -> threshold (missing models use the default).

    Returns:
        Columns ``model``, ``category``, ``n``, ``mean_cosine``, ``threshold``, ``share_above``; empty for no results.
    """
    columns = [constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean_cosine", constants.COL_THRESHOLD, "share_above"]
    if results.empty:
        return pd.DataFrame(columns=columns)
    missing = {constants.COL_MODEL, constants.COL_COSINE} - set(results.columns)
    if missing:
        raise ValueError(f"results lack columns {sorted(missing)}")
    frame = results.assign(**{constants.COL_CATEGORY: results.get(constants.COL_CATEGORY, pd.Series("", index=results.index)).fillna("")})
    frame = frame.dropna(subset=[constants.COL_COSINE])
    frame[constants.COL_THRESHOLD] = frame[constants.COL_MODEL].map(lambda m: float(thresholds.get(m, constants.DEFAULT_THRESHOLD)))
    frame["above"] = frame[constants.COL_COSINE] > frame[constants.COL_THRESHOLD]
    out = (
        frame.groupby([constants.COL_MODEL, constants.COL_CATEGORY], sort=False)
        .agg(
            n=(constants.COL_COSINE, "size"),
            mean_cosine=(constants.COL_COSINE, "mean"),
            threshold=(constants.COL_THRESHOLD, "first"),
            share_above=("above", "mean"),
        )
        .reset_index()
    )
    return out[columns]


def diff_findings(diff: RunDiff, before: int, after: int) -> list[str]:
    """What changed between two runs in two sentences: the largest move in mean cosine, and the pairs that crossed (History).

    Args:
        diff: :func:`diff_runs` of run ``after`` against run ``before``.
        before: run A's id, as the page names it.
        after: run B's id.

    Returns:
        Up to two sentences; empty when the runs share no pair.
    """
    cats = diff.categories.dropna(subset=["mean_change"])
    if cats.empty:
        return []
    up = int((diff.crossed["direction"] == CROSSED_UP).sum()) if not diff.crossed.empty else 0
    down = len(diff.crossed) - up
    crossed = (
        f"{len(diff.crossed)} pair score{'' if len(diff.crossed) == 1 else 's'} crossed the threshold: {up} now above, {down} now below."
        if len(diff.crossed)
        else "No pair crossed the threshold."
    )
    big = cats.iloc[int(cats["mean_change"].abs().to_numpy(float).argmax())]
    if float(big["mean_change"]) == 0.0:
        return [f"Run #{after} scores the {diff.n_matched} pairs it shares with run #{before} as run #{before} did.", crossed]
    code = str(big[constants.COL_CATEGORY])
    # our labels read lower-case mid-sentence; a user's own category stays as they wrote it
    category = lexicon.CATEGORY_LABELS[code].lower() if code in lexicon.CATEGORY_LABELS else code or "uncategorised"
    ci = (
        f" (95% CI {big['mean_ci_low']:+.4f} to {big['mean_ci_high']:+.4f})"
        if pd.notna(big["mean_ci_low"]) and pd.notna(big["mean_ci_high"])
        else ""
    )
    return [
        f"From run #{before} to run #{after}, the largest change is {short_name(str(big[constants.COL_MODEL]))} on {category} pairs: "
        f"mean cosine {big['mean_change']:+.4f}{ci}.",
        crossed,
    ]
