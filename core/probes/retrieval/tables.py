"""Summary tables of a retrieval run, from its per-group and per-query rows.

Each builder takes the tidy rows :func:`core.probes.retrieval.run.run_retrieval`
produces and returns one tidy table, models and mitigations in the order they
ran (``none`` first), modes in failure-mode order followed by ``all``.  The
arithmetic is in :mod:`core.probes.retrieval.metrics`.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.probes.retrieval.metrics import flips, mcnemar_exact, ranking_summary, rate_difference_ci, rate_with_ci

_KEYS = [constants.COL_MODEL, constants.COL_MITIGATION]
WIN_RATE_COLUMNS = [
    *_KEYS,
    constants.COL_MODE,
    constants.COL_N,
    constants.COL_WINS,
    constants.COL_TIES,
    constants.COL_WIN_RATE,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
    "n_groups",  # the anchor groups the interval resamples: a bar from fewer than 5 is marked on the charts
]
SOURCE_COLUMNS = [
    *_KEYS,
    constants.COL_VARIANT_SOURCE,
    constants.COL_N,
    constants.COL_WINS,
    constants.COL_TIES,
    constants.COL_WIN_RATE,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
]
PAIRED_COLUMNS = [
    *_KEYS,
    constants.COL_MODE,
    constants.COL_N,
    constants.COL_PAIRED_CORRECT,
    constants.COL_PAIRED_ACCURACY,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
    constants.COL_RANDOM,
]
RANKING_COLUMNS = [*_KEYS, constants.COL_N_QUERIES, *constants.COL_RECALL_AT.values(), constants.COL_MRR, constants.COL_TOP1_CONTRADICTION]
CHURN_COLUMNS = [*_KEYS, constants.COL_TIES, constants.COL_FIXED, constants.COL_BROKEN, "paired_fixed", "paired_broken", "correct_gained"]
COMPARISON_COLUMNS = [
    constants.COL_MITIGATION,
    constants.COL_MODE,
    "model_a",
    "model_b",
    constants.COL_N,
    "win_rate_a",
    "win_rate_b",
    "difference",
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
    "a_only",
    "b_only",
    "mcnemar_p",
]


def _require(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} rows lack columns {missing}")


def _modes(frame: pd.DataFrame, column: str) -> list[str]:
    present = set(frame[column])
    return [m for m in lexicon.ADVERSARIAL_CATEGORIES if m in present] + sorted(present - set(lexicon.ADVERSARIAL_CATEGORIES))


def win_rate_table(scores: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """Adversarial win rate per model, mitigation and mode (and ``all``), with bootstrap intervals.

    Args:
        scores: per-variant rows with model, mitigation, group_id, mode, win.
        **bootstrap: ``n_resamples``, ``confidence``, ``seed`` for :func:`rate_with_ci`.

    Returns:
        Columns of :data:`WIN_RATE_COLUMNS`. The ``all`` row pools every
        variant and resamples whole groups (one group has several modes).
        ``ties`` counts variants scored exactly as the paraphrase (no win,
        and no fix either), when the rows hold both scores.
    """
    _require(scores, [*_KEYS, constants.COL_GROUP_ID, constants.COL_MODE, constants.COL_WIN], "score")
    ties = _ties(scores)
    rows = []
    for (model, mitigation), frame in scores.groupby(_KEYS, sort=False):
        parts = [(mode, frame[frame[constants.COL_MODE] == mode]) for mode in _modes(frame, constants.COL_MODE)] + [
            (constants.MODE_ALL, frame)
        ]
        for mode, part in parts:
            rate, low, high = rate_with_ci(part[constants.COL_WIN].to_numpy(bool), part[constants.COL_GROUP_ID].to_numpy(), **bootstrap)
            rows.append(
                (
                    model,
                    mitigation,
                    mode,
                    len(part),
                    int(part[constants.COL_WIN].sum()),
                    int(ties[part.index].sum()),
                    rate,
                    low,
                    high,
                    int(part[constants.COL_GROUP_ID].nunique()),
                )
            )
    return pd.DataFrame(rows, columns=WIN_RATE_COLUMNS)


def _ties(scores: pd.DataFrame) -> pd.Series:
    """Per variant row: scored exactly as its paraphrase (False where the rows hold no scores)."""
    if {constants.COL_SCORE_VARIANT, constants.COL_SCORE_PARAPHRASE} <= set(scores.columns):
        return scores[constants.COL_SCORE_VARIANT] == scores[constants.COL_SCORE_PARAPHRASE]
    return pd.Series(False, index=scores.index)


def _aligned(frame: pd.DataFrame, value: pd.Series) -> pd.DataFrame:
    """``value`` per unit, one column per mitigation; units are the n-th row of a model's mitigation.

    Every mitigation scores the units in one order, so the n-th rows line up.
    """
    nth = frame.groupby(_KEYS, sort=False).cumcount()
    wide = pd.DataFrame({"model": frame[constants.COL_MODEL], "m": frame[constants.COL_MITIGATION], "nth": nth, "v": value.astype(bool)})
    return wide.pivot_table(index=["model", "nth"], columns="m", values="v", aggfunc="first", sort=False)


def churn_table(scores: pd.DataFrame, paired_groups: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """What each mitigation fixed and broke against the plain cosine, beside its net figures.

    A net win rate that does not move can hide flips both ways, and a win
    turned into a tie is no fix.  Per model and mitigation:

    * ``ties``: variants scored exactly as their paraphrase;
    * ``fixed`` / ``broken``: variants whose paraphrase is strictly first
      after the mitigation and was not before / was before and is not after
      (a win that became a tie is neither; a loss that became a tie is broken);
    * ``paired_fixed`` / ``paired_broken``: NevIR groups that became right / wrong;
    * ``correct_gained``: queries whose right passage became first
      (``correct_lost`` in the costs is the reverse).

    Args:
        scores: per-variant rows (model, mitigation, score_paraphrase, score_variant, win).
        paired_groups: per-group rows with paired_correct (may be empty).
        ranks: per-query rows with rank_correct (may be empty).

    Returns:
        Columns of :data:`CHURN_COLUMNS`; ``none``'s flips are 0.
    """
    _require(scores, [*_KEYS, constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT], "score")
    strictly_first = _aligned(scores, scores[constants.COL_SCORE_PARAPHRASE] > scores[constants.COL_SCORE_VARIANT])
    ties = _ties(scores).groupby([scores[constants.COL_MODEL], scores[constants.COL_MITIGATION]], sort=False).sum()
    paired = _aligned(paired_groups, paired_groups[constants.COL_PAIRED_CORRECT]) if constants.COL_PAIRED_CORRECT in paired_groups else None
    top = _aligned(ranks, ranks[constants.COL_RANK_CORRECT] == 1) if constants.COL_RANK_CORRECT in ranks else None
    rows = []
    for model, mitigation in dict.fromkeys(zip(scores[constants.COL_MODEL], scores[constants.COL_MITIGATION], strict=True)):

        def flip(wide: pd.DataFrame | None, model=model, mitigation=mitigation) -> tuple[float, float]:
            if wide is None or mitigation not in wide.columns or constants.MITIGATION_NONE not in wide.columns or model not in wide.index:
                return (np.nan, np.nan)
            both = wide.loc[model][[constants.MITIGATION_NONE, mitigation]].dropna().astype(bool)
            return flips(both[constants.MITIGATION_NONE].to_numpy(), both[mitigation].to_numpy())

        fixed, broken = flip(strictly_first)
        paired_fixed, paired_broken = flip(paired)
        gained, _lost = flip(top)
        rows.append((model, mitigation, int(ties[(model, mitigation)]), fixed, broken, paired_fixed, paired_broken, gained))
    return pd.DataFrame(rows, columns=CHURN_COLUMNS)


def source_table(scores: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """Win rate per model, mitigation and variant source: hand-written (held out from the rules) first, then rule-made.

    A mitigation built from the perturbation rules (the guard) is measured on
    its own rules' output in the rule-made rows; the hand-written rows are
    the figure that holds elsewhere.  Ties (variant and paraphrase scored
    exactly alike, e.g. both filtered or fused to one rank) are no win and
    are counted apart in ``ties``, never as fixes.

    Args:
        scores: per-variant rows with model, mitigation, group_id, variant_source,
            win, score_paraphrase, score_variant.
        **bootstrap: ``n_resamples``, ``confidence``, ``seed`` for :func:`rate_with_ci`.

    Returns:
        Columns of :data:`SOURCE_COLUMNS`, clustered intervals by group.
    """
    _require(scores, [*_KEYS, constants.COL_GROUP_ID, constants.COL_VARIANT_SOURCE, constants.COL_WIN], "score")
    ties = scores[constants.COL_SCORE_VARIANT] == scores[constants.COL_SCORE_PARAPHRASE]
    rows = []
    for (model, mitigation), frame in scores.groupby(_KEYS, sort=False):
        for source in [s for s in constants.VARIANT_SOURCES if s in set(frame[constants.COL_VARIANT_SOURCE])]:
            part = frame[frame[constants.COL_VARIANT_SOURCE] == source]
            rate, low, high = rate_with_ci(part[constants.COL_WIN].to_numpy(bool), part[constants.COL_GROUP_ID].to_numpy(), **bootstrap)
            rows.append(
                (model, mitigation, source, len(part), int(part[constants.COL_WIN].sum()), int(ties[part.index].sum()), rate, low, high)
            )
    return pd.DataFrame(rows, columns=SOURCE_COLUMNS)


def paired_table(paired: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """NevIR paired accuracy per model, mitigation and query mode (and ``all``), with the 0.25 random line.

    Args:
        paired: per-group rows with model, mitigation, group_id, query_mode, paired_correct.
        **bootstrap: ``n_resamples``, ``confidence``, ``seed``.

    Returns:
        Columns of :data:`PAIRED_COLUMNS`; empty when no group has queries.
    """
    _require(paired, [*_KEYS, constants.COL_GROUP_ID, constants.COL_QUERY_MODE, constants.COL_PAIRED_CORRECT], "paired")
    rows = []
    for (model, mitigation), frame in paired.groupby(_KEYS, sort=False):
        parts = [(mode, frame[frame[constants.COL_QUERY_MODE] == mode]) for mode in _modes(frame, constants.COL_QUERY_MODE)] + [
            (constants.MODE_ALL, frame)
        ]
        for mode, part in parts:
            rate, low, high = rate_with_ci(part[constants.COL_PAIRED_CORRECT].to_numpy(bool), **bootstrap)
            rows.append(
                (
                    model,
                    mitigation,
                    mode,
                    len(part),
                    int(part[constants.COL_PAIRED_CORRECT].sum()),
                    rate,
                    low,
                    high,
                    constants.PAIRED_RANDOM_BASELINE,
                )
            )
    return pd.DataFrame(rows, columns=PAIRED_COLUMNS)


def ranking_table(ranks: pd.DataFrame) -> pd.DataFrame:
    """Recall@k, MRR and top-1-contradiction share per model and mitigation.

    Args:
        ranks: per-query rows with model, mitigation, rank_correct, rank_contradiction.

    Returns:
        Columns of :data:`RANKING_COLUMNS`; empty when there are no queries.
    """
    _require(ranks, [*_KEYS, constants.COL_RANK_CORRECT, constants.COL_RANK_CONTRADICTION], "rank")
    rows = []
    for (model, mitigation), frame in ranks.groupby(_KEYS, sort=False):
        s = ranking_summary(frame[constants.COL_RANK_CORRECT].to_numpy(float), frame[constants.COL_RANK_CONTRADICTION].to_numpy(float))
        rows.append((model, mitigation, s.n_queries, *(s.recall[k] for k in constants.RECALL_KS), s.mrr, s.top1_contradiction))
    return pd.DataFrame(rows, columns=RANKING_COLUMNS)


def comparison_table(scores: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """Model vs model on the same variants: difference in win rate (paired bootstrap) and McNemar's exact test.

    Args:
        scores: per-variant rows with model, mitigation, group_id, mode, win
            (and ``variant``, which tells two variants of one mode apart).
        **bootstrap: ``n_resamples``, ``confidence``, ``seed``.

    Returns:
        Columns of :data:`COMPARISON_COLUMNS`, one row per mitigation, mode
        (and ``all``) and pair of models in run order; ``difference`` is
        ``win_rate_a - win_rate_b`` over the variants both models scored.
        Empty with fewer than two models.
    """
    _require(scores, [*_KEYS, constants.COL_GROUP_ID, constants.COL_MODE, constants.COL_WIN], "score")
    unit = [constants.COL_GROUP_ID, constants.COL_MODE] + ([constants.COL_VARIANT] if constants.COL_VARIANT in scores.columns else [])
    rows = []
    for mitigation, frame in scores.groupby(constants.COL_MITIGATION, sort=False):
        wide = frame.pivot_table(index=unit, columns=constants.COL_MODEL, values=constants.COL_WIN, aggfunc="first", sort=False)
        models = list(dict.fromkeys(frame[constants.COL_MODEL]))
        for a, b in combinations(models, 2):
            both = wide[[a, b]].dropna()
            modes = both.index.get_level_values(constants.COL_MODE)
            for mode in [*_modes(pd.DataFrame({constants.COL_MODE: modes}), constants.COL_MODE), constants.MODE_ALL]:
                part = both if mode == constants.MODE_ALL else both[modes == mode]
                wa, wb = part[a].to_numpy(bool), part[b].to_numpy(bool)
                diff, low, high = rate_difference_ci(wa, wb, **bootstrap)
                test = mcnemar_exact(wa, wb)
                rate_a = float(wa.mean()) if wa.size else np.nan
                rate_b = float(wb.mean()) if wb.size else np.nan
                rows.append((mitigation, mode, a, b, len(part), rate_a, rate_b, diff, low, high, test.a_only, test.b_only, test.pvalue))
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def summary_table(
    win_rates: pd.DataFrame, paired: pd.DataFrame, ranking: pd.DataFrame, costs: pd.DataFrame, churn: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The before/after table: model × mitigation -> win rate, paired accuracy, recall@k, MRR, costs, with intervals.

    Args:
        win_rates: :func:`win_rate_table` output.
        paired: :func:`paired_table` output (may be empty).
        ranking: :func:`ranking_table` output (may be empty).
        costs: model, mitigation, paraphrases_lost, correct_lost, ms_per_query, ...
        churn: :func:`churn_table` output, or None: its ties, fixed and
            broken counts then sit beside each net figure.

    Returns:
        One row per model and mitigation, in run order; figures a suite
        cannot give (no queries) are NaN.
    """
    overall = win_rates[win_rates[constants.COL_MODE] == constants.MODE_ALL][
        [*_KEYS, constants.COL_WIN_RATE, constants.COL_CI_LOW, constants.COL_CI_HIGH]
    ]
    table = overall.rename(columns={constants.COL_CI_LOW: "win_ci_low", constants.COL_CI_HIGH: "win_ci_high"})
    if not paired.empty:
        pa = paired[paired[constants.COL_MODE] == constants.MODE_ALL][
            [*_KEYS, constants.COL_PAIRED_ACCURACY, constants.COL_CI_LOW, constants.COL_CI_HIGH]
        ]
        table = table.merge(
            pa.rename(columns={constants.COL_CI_LOW: "paired_ci_low", constants.COL_CI_HIGH: "paired_ci_high"}), on=_KEYS, how="left"
        )
    else:
        table = table.assign(**{constants.COL_PAIRED_ACCURACY: np.nan, "paired_ci_low": np.nan, "paired_ci_high": np.nan})
    if not ranking.empty:
        table = table.merge(ranking.drop(columns=[constants.COL_N_QUERIES]), on=_KEYS, how="left")
    else:
        table = table.assign(**{c: np.nan for c in RANKING_COLUMNS[3:]})
    table = table.merge(costs, on=_KEYS, how="left").reset_index(drop=True)
    if churn is None or churn.empty:
        return table
    table = table.merge(churn, on=_KEYS, how="left")
    # Each net figure with its churn beside it: win rate, ties, fixed, broken; paired accuracy, its flips; recall, gained and lost.
    after = {
        constants.COL_WIN_RATE: [constants.COL_TIES, constants.COL_FIXED, constants.COL_BROKEN],
        constants.COL_PAIRED_ACCURACY: ["paired_fixed", "paired_broken"],
        constants.COL_RECALL_AT[1]: ["correct_gained", constants.COL_CORRECT_LOST],
    }
    moved = {c for cs in after.values() for c in cs}
    order: list[str] = []
    for c in table.columns:
        if c in moved:
            continue
        order.append(c)
        order += [x for x in after.get(c, []) if x in table.columns]
    return table[order]
