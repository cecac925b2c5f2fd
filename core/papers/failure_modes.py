"""The failure-mode paper's analyses: per-mode table, severity, Kruskal-Wallis, vulnerability ranking.

Conventions:
    * Failure mode vs positive controls is ``cohens_d(positive, failure)``,
      so a negative d means failures score higher than paraphrases (failure
      paper, Table 5).
    * A failure is a pair scored strictly above the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from core import constants, lexicon, stats
from core.scoring.tables import category_summary, models_in


def failure_mode_table(results: pd.DataFrame, threshold: float = constants.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Failure-paper Tables 1, 2, 3 and 5 in one long table, of every row given (the caller picks them, e.g. one suite's).

    Returns:
        Per model and failure mode: n, mean, sd, failure_rate at the
        threshold, severity_ratio (mean failure / mean positive) and cohens_d
        (positive vs failure; negative = failures score above paraphrases).
    """
    data = results
    rows = []
    for model in models_in(data):
        mine = data[data[constants.COL_MODEL] == model]
        positive = mine.loc[mine[constants.COL_CATEGORY] == constants.CAT_POSITIVE, constants.COL_COSINE].to_numpy(float)
        # A user's file may hold contradictions of no named mode; the shipped suites never do.
        for mode in lexicon.ADVERSARIAL_CATEGORIES:
            cos = mine.loc[mine[constants.COL_CATEGORY] == mode, constants.COL_COSINE].to_numpy(float)
            if cos.size == 0:
                continue
            mean, sd = stats.mean_sd(cos)
            rows.append(
                {
                    constants.COL_MODEL: model,
                    constants.COL_CATEGORY: mode,
                    "n": int(cos.size),
                    "mean": mean,
                    "sd": sd,
                    "failure_rate": stats.failure_rate(cos, threshold),
                    "severity_ratio": stats.stat_or_nan(stats.severity_ratio, cos, positive) if positive.size else math.nan,
                    "cohens_d": stats.stat_or_nan(stats.cohens_d, positive, cos) if positive.size >= 2 else math.nan,
                }
            )
    return pd.DataFrame(
        rows, columns=[constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean", "sd", "failure_rate", "severity_ratio", "cohens_d"]
    )


def severity_ranking(results: pd.DataFrame) -> pd.DataFrame:
    """Failure-paper Table 3: modes ranked by mean cosine averaged over models, of every row given.

    The severity ratio is the models' average failure-mode mean over their
    average positive-control mean (the reading that reproduces Table 3).
    """
    table = category_summary(results)
    if table.empty:
        return pd.DataFrame(columns=[constants.COL_CATEGORY, "avg_similarity", "severity_ratio", "rank"])
    avg = table.groupby(constants.COL_CATEGORY)["mean"].mean()
    pos = avg.get(constants.CAT_POSITIVE, math.nan)
    # The paper's six modes only: a mode beyond the papers would move every rank the paper prints.
    out = pd.DataFrame({"avg_similarity": avg.reindex([m for m in lexicon.PAPER_MODES if m in avg.index])})
    out["severity_ratio"] = out["avg_similarity"] / pos
    out = out.sort_values("avg_similarity", ascending=False)
    out["rank"] = range(1, len(out) + 1)
    return out.rename_axis(constants.COL_CATEGORY).reset_index()


def kruskal_by_category(results: pd.DataFrame, categories: Sequence[str] = lexicon.PAPER_MODES) -> pd.DataFrame:
    """Kruskal-Wallis H and p across models, per category (needs ≥ 2 models), of every row given."""
    data = results
    rows = []
    if len(models_in(data)) >= 2:
        for cat in categories:
            sub = data[data[constants.COL_CATEGORY] == cat]
            if sub.empty:
                continue
            groups = {str(m): g[constants.COL_COSINE].to_numpy(float) for m, g in sub.groupby(constants.COL_MODEL, sort=False)}
            res = stats.kruskal_wallis(groups)
            rows.append({constants.COL_CATEGORY: cat, "h": res.h, "p": res.p, "n_models": res.n_groups})
    return pd.DataFrame(rows, columns=[constants.COL_CATEGORY, "h", "p", "n_models"])


VULNERABILITY_COLUMNS = [
    constants.COL_MODEL,
    "score",
    "rank",
    "modes_ranked_first",
    "score_ci_low",
    "score_ci_high",
    "rank_ci_low",
    "rank_ci_high",
    "tied_with",
]


def vulnerability_ranking(results: pd.DataFrame) -> pd.DataFrame:
    """Failure-paper Table 4 by the documented rank-sum rule, with bootstrap intervals and ties (see ``stats.ranking``), of every row given.

    Pairs are resampled within each failure mode; a pair some model has no
    cosine for is left out, so every model is ranked on the same pairs.

    Returns:
        :data:`VULNERABILITY_COLUMNS`, one row per model; empty with fewer than two models.
    """
    # The paper's six modes only: a mode beyond the papers (direction) would change the rank sums Table 4 prints.
    data = results[results[constants.COL_CATEGORY].isin(lexicon.PAPER_MODES)] if not results.empty else results
    models = models_in(data)
    if len(models) < 2:  # ranking needs two models
        return pd.DataFrame(columns=VULNERABILITY_COLUMNS)
    cosines = {}
    for mode in lexicon.PAPER_MODES:
        wide = data[data[constants.COL_CATEGORY] == mode].pivot_table(
            index=constants.COL_PAIR_ID, columns=constants.COL_MODEL, values=constants.COL_COSINE, sort=False
        )
        wide = wide.reindex(columns=models).dropna()
        if not wide.empty:
            cosines[mode] = wide.to_numpy(float)
    if not cosines:
        return pd.DataFrame(columns=VULNERABILITY_COLUMNS)
    return stats.vulnerability_bootstrap(cosines, models)[VULNERABILITY_COLUMNS]
