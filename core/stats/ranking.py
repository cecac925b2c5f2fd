"""The failure paper's cross-model vulnerability ranking (Table 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd


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
    first = {
        model: ", ".join(str(mode) for mode in ranks.index[ranks[model] == 1])
        for model in ranks.columns
    }
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
