"""The failure paper's cross-model vulnerability ranking (Table 4), and how sure it is.

A ranking computed from mean cosines can turn on differences far smaller
than the noise of a few dozen pairs (an int8 MiniLM "above" the fp32 one by
0.0005).  :func:`vulnerability_bootstrap` resamples the pairs of each
failure mode (the same pairs for every model, so the comparison stays
paired), recomputes every model's score and rank per resample, and calls
models whose score intervals overlap tied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.constants import BOOTSTRAP_SEED, CONFIDENCE
from core.stats._validation import _check_confidence, _check_resamples


def vulnerability_scores(mean_cosine: pd.DataFrame) -> pd.DataFrame:
    """Rank models by vulnerability across failure modes (failure paper, Table 4).

    The paper gives the scores but not the rule; this one reproduces its
    Table 4 exactly from its Table 1 (Nomic 1, MiniLM 9, BGE 12, MxBAI 14):

    1. For each failure mode (row), rank the models by mean cosine,
       descending: rank 1 = highest cosine = most fooled. Ties share the
       lowest rank (``method="min"``).
    2. ``score(model) = sum over modes of (rank - 1)``, so a model that is
       the most fooled in every mode scores 0. Lower score = more vulnerable.
    3. ``rank`` orders models by score ascending (1 = most vulnerable; tied
       scores share the lowest rank).

    Every row is treated as a failure mode, so pass only failure-mode rows
    (no control categories).

    Args:
        mean_cosine: Wide table, index = failure mode, columns = model,
            values = mean cosine of that model on that mode; shape
            ``(n_modes, n_models)`` with ``n_models >= 2``.

    Returns:
        DataFrame with columns ``model``, ``score`` (int), ``rank`` (int) and
        ``modes_ranked_first`` (failure modes where the model ranked 1,
        joined by ", " in row order; "" if none), sorted by rank then model.

    Raises:
        TypeError: If ``mean_cosine`` is not a DataFrame.
        ValueError: If the table is empty, has fewer than two models,
            duplicate model names, or NaN/non-numeric cells.
    """
    if not isinstance(mean_cosine, pd.DataFrame):
        raise TypeError("mean_cosine must be a pandas DataFrame")
    if mean_cosine.empty:
        raise ValueError("mean_cosine is empty")
    if mean_cosine.shape[1] < 2:
        raise ValueError("mean_cosine needs at least 2 model columns to rank")
    if mean_cosine.columns.has_duplicates:
        raise ValueError("mean_cosine has duplicate model columns")
    try:
        values = mean_cosine.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("mean_cosine must contain only numbers") from exc
    if not np.all(np.isfinite(values.to_numpy())):
        raise ValueError("mean_cosine contains NaN or infinite values")

    ranks = values.rank(axis=1, ascending=False, method="min").astype(int)
    scores = (ranks - 1).sum(axis=0)
    first = {model: ", ".join(str(mode) for mode in ranks.index[ranks[model] == 1]) for model in ranks.columns}
    table = pd.DataFrame(
        {
            "model": list(scores.index),
            "score": scores.to_numpy(dtype=int),
            "modes_ranked_first": [first[model] for model in scores.index],
        }
    )
    table["rank"] = table["score"].rank(method="min").astype(int)
    table = table.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)
    return table[["model", "score", "rank", "modes_ranked_first"]]


def _scores_and_ranks(means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores and ranks of :func:`vulnerability_scores` for a stack of mean tables.

    ``means`` has shape ``(..., n_modes, n_models)``; returns scores and
    ranks of shape ``(..., n_models)``.
    """
    from scipy.stats import rankdata  # imported here: scipy.stats costs 0.6-2 s, and every page imports core.stats at start

    per_mode = rankdata(-means, method="min", axis=-1)
    scores = (per_mode - 1).sum(axis=-2)
    return scores, rankdata(scores, method="min", axis=-1)


def vulnerability_bootstrap(
    cosines: Mapping[str, ArrayLike],
    models: Sequence[str],
    n_resamples: int | None = None,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """The vulnerability ranking with percentile-bootstrap intervals for each model's score and rank.

    Each resample draws, for every failure mode independently, as many pairs
    as the mode has, with replacement (a stratified bootstrap: modes keep
    their sizes); a drawn pair brings every model's cosine on it, so models
    are compared on the same pairs.  Scores and ranks follow
    :func:`vulnerability_scores` on the resampled means.

    Args:
        cosines: failure mode -> cosines of shape ``(n_pairs_mode, n_models)``,
            row ``i`` the same pair for every model, columns in ``models`` order.
        models: model names, length ``n_models >= 2``, distinct.
        n_resamples: bootstrap resamples (>= 1); None for the current setting
            (:func:`core.settings.bootstrap_resamples`).
        confidence: level of the intervals, in ``(0, 1)``.
        seed: seed of the numpy generator; the same seed gives the same table.

    Returns:
        One row per model, sorted as :func:`vulnerability_scores`: ``model``,
        ``score``, ``rank``, ``modes_ranked_first``, ``score_ci_low``,
        ``score_ci_high``, ``rank_ci_low``, ``rank_ci_high`` and ``tied_with``
        (the models whose score interval overlaps this one's, joined by
        ", " in table order; "" when none).

    Raises:
        ValueError: no mode, fewer than two or duplicate models, a mode
            whose matrix is not ``(n >= 1, n_models)`` or holds NaN, or an
            invalid ``n_resamples`` / ``confidence``.
    """
    models = list(models)
    if len(models) < 2 or len(set(models)) != len(models):
        raise ValueError(f"models must be at least 2 distinct names, got {models}")
    if not cosines:
        raise ValueError("cosines has no failure mode")
    n_resamples = _check_resamples(n_resamples)
    confidence = _check_confidence(confidence)
    matrices = {mode: _mode_matrix(values, mode, len(models)) for mode, values in cosines.items()}
    point = vulnerability_scores(
        pd.DataFrame({m: [x[:, j].mean() for x in matrices.values()] for j, m in enumerate(models)}, index=list(matrices))
    )
    rng = np.random.default_rng(seed)
    # (n_resamples, n_modes, n_models): each mode's means over its own resampled pairs.
    means = np.stack([x[rng.integers(0, len(x), size=(n_resamples, len(x)))].mean(axis=1) for x in matrices.values()], axis=1)
    scores, ranks = _scores_and_ranks(means)
    tail = (1.0 - confidence) / 2.0
    bounds = {
        "score_ci_low": np.quantile(scores, tail, axis=0),
        "score_ci_high": np.quantile(scores, 1.0 - tail, axis=0),
        "rank_ci_low": np.quantile(ranks, tail, axis=0),
        "rank_ci_high": np.quantile(ranks, 1.0 - tail, axis=0),
    }
    order = [models.index(m) for m in point["model"]]
    for column, values in bounds.items():
        point[column] = values[order]
    point["tied_with"] = [_overlapping(point, i) for i in range(len(point))]
    return point


def _mode_matrix(values: ArrayLike, mode: str, n_models: int) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cosines[{mode!r}] must be numeric") from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] != n_models:
        raise ValueError(f"cosines[{mode!r}] must have shape (n_pairs >= 1, {n_models}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"cosines[{mode!r}] contains NaN or infinite values")
    return arr


def _overlapping(table: pd.DataFrame, i: int) -> str:
    lows = table["score_ci_low"].to_numpy(dtype=float)
    highs = table["score_ci_high"].to_numpy(dtype=float)
    models = table["model"].astype(str).tolist()
    others = [models[j] for j in range(len(table)) if j != i and lows[j] <= highs[i] and lows[i] <= highs[j]]
    return ", ".join(others)
