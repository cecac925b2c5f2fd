"""Per-model thresholds calibrated on control pairs: ROC, AUC, Youden J, a chosen FPR.

A fixed retrieval threshold of 0.7 means different things to a model whose
unrelated pairs score 0.0 and one whose unrelated pairs score 0.7.  Here each
model gets its own threshold from the suite's controls: positive pairs
(paraphrases) should be "the same", negative pairs (and, if chosen,
near-misses) should not.

A pair counts as "the same" when its cosine is **strictly above** the
threshold, as everywhere else in cosine-probe (``core.stats.failure_rate``).
The ROC curve comes from scikit-learn, whose cut points are scores taken with
``>=``; each chosen cut is turned into a strict threshold halfway between it
and the next lower observed score, so that the rates reported for a
threshold are exactly the rates ``failure_rate`` gives at it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core import constants, lexicon
from core.papers.suites import check_negative_controls
from core.stats._validation import _as_1d
from core.stats.rates import failure_rate

METHOD_YOUDEN = "youden"
METHOD_FPR = "fpr"
METHODS = (METHOD_YOUDEN, METHOD_FPR)
DEFAULT_MAX_FPR = 0.05


@dataclass(frozen=True)
class Cut:
    """One threshold and what it does to the controls.

    Attributes:
        threshold: Pairs with cosine strictly above it are "the same".
        tpr: Share of positive pairs above it.
        fpr: Share of negative pairs above it.
    """

    threshold: float
    tpr: float
    fpr: float

    @property
    def youden_j(self) -> float:
        """``tpr - fpr``."""
        return self.tpr - self.fpr


def _scores_labels(positive: ArrayLike, negative: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    pos = _as_1d(positive, "positive")
    neg = _as_1d(negative, "negative")
    scores = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(pos.size, dtype=int), np.zeros(neg.size, dtype=int)])
    return scores, labels


def _strict(cut: float, scores: np.ndarray) -> float:
    """The strict threshold equivalent to ``score >= cut``: halfway down to the next lower score."""
    if not np.isfinite(cut):
        return float(scores.max())  # nothing is strictly above the maximum
    lower = scores[scores < cut]
    return float((cut + lower.max()) / 2) if lower.size else float(cut - 1e-6)


def rates_at(positive: ArrayLike, negative: ArrayLike, threshold: float) -> Cut:
    """True- and false-positive rates at a threshold (cosine strictly above it).

    Args:
        positive: Cosines of pairs that should match, shape (n_pos,).
        negative: Cosines of pairs that should not, shape (n_neg,).
        threshold: The retrieval threshold.
    """
    pos = _as_1d(positive, "positive")
    neg = _as_1d(negative, "negative")
    return Cut(float(threshold), failure_rate(pos, threshold), failure_rate(neg, threshold))


def roc_curve(positive: ArrayLike, negative: ArrayLike) -> pd.DataFrame:
    """The ROC curve of cosine as a same/different classifier.

    Args:
        positive: Cosines of pairs that should match, shape (n_pos,).
        negative: Cosines of pairs that should not, shape (n_neg,).

    Returns:
        Columns ``threshold`` (strict), ``fpr`` and ``tpr``, from (0, 0) to
        (1, 1), one row per distinct cut.
    """
    from sklearn.metrics import roc_curve as _sk_roc

    scores, labels = _scores_labels(positive, negative)
    fpr, tpr, cuts = _sk_roc(labels, scores, drop_intermediate=False)
    return pd.DataFrame({"threshold": [_strict(c, scores) for c in cuts], "fpr": fpr, "tpr": tpr})


def auc(positive: ArrayLike, negative: ArrayLike) -> float:
    """Area under the ROC curve: the chance a random positive pair outscores a random negative one (ties count half).

    Args:
        positive: Cosines of pairs that should match, shape (n_pos,).
        negative: Cosines of pairs that should not, shape (n_neg,).
    """
    from sklearn.metrics import roc_auc_score

    scores, labels = _scores_labels(positive, negative)
    return float(roc_auc_score(labels, scores))


def youden_threshold(positive: ArrayLike, negative: ArrayLike) -> Cut:
    """The threshold with the largest Youden J = TPR − FPR.

    Ties go to the highest threshold, the more conservative retrieval
    setting.

    Args:
        positive: Cosines of pairs that should match, shape (n_pos,).
        negative: Cosines of pairs that should not, shape (n_neg,).
    """
    roc = roc_curve(positive, negative)
    j = (roc["tpr"] - roc["fpr"]).to_numpy()
    best = int(np.flatnonzero(np.isclose(j, j.max(), rtol=0, atol=1e-12))[0])  # roc runs by falling threshold
    row = roc.iloc[best]
    return Cut(float(row["threshold"]), float(row["tpr"]), float(row["fpr"]))


def threshold_at_fpr(positive: ArrayLike, negative: ArrayLike, max_fpr: float = DEFAULT_MAX_FPR) -> Cut:
    """The lowest threshold whose false-positive rate is at most ``max_fpr``.

    Lowest, because among thresholds that keep FPR within budget it finds the
    most positives.

    Args:
        positive: Cosines of pairs that should match, shape (n_pos,).
        negative: Cosines of pairs that should not, shape (n_neg,).
        max_fpr: Largest tolerated share of negative pairs above the threshold, in [0, 1].

    Raises:
        ValueError: If ``max_fpr`` is outside [0, 1].
    """
    if not 0.0 <= float(max_fpr) <= 1.0 or not np.isfinite(max_fpr):
        raise ValueError(f"max_fpr must be between 0 and 1, got {max_fpr}")
    roc = roc_curve(positive, negative)
    ok = roc[roc["fpr"] <= max_fpr + 1e-12]
    row = ok.iloc[-1]  # the curve rises as the threshold falls
    return Cut(float(row["threshold"]), float(row["tpr"]), float(row["fpr"]))


# ------------------------------------------------------------------ over a results table


def _controls(results: pd.DataFrame, model: str, negatives: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    rows = results[results[constants.COL_MODEL] == model]
    pos = rows.loc[rows[constants.COL_CATEGORY] == constants.CAT_POSITIVE, constants.COL_COSINE].dropna().to_numpy(float)
    neg = rows.loc[rows[constants.COL_CATEGORY].isin(negatives), constants.COL_COSINE].dropna().to_numpy(float)
    return pos, neg


def _check_negatives(negatives: Sequence[str]) -> tuple[str, ...]:
    return check_negative_controls(negatives)


def calibrate(
    results: pd.DataFrame,
    negatives: Sequence[str] = (constants.CAT_NEGATIVE,),
    max_fpr: float = DEFAULT_MAX_FPR,
    global_threshold: float = constants.DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """Each model's calibrated thresholds from the control pairs in ``results``.

    Args:
        results: Long results with ``model``, ``category`` and ``cosine``;
            controls are ``positive`` rows against the ``negatives`` rows.
        negatives: Which controls count as "should not match": ``negative``
            and optionally ``near_miss``.
        max_fpr: Target false-positive rate for the FPR threshold.
        global_threshold: The fixed threshold, reported alongside for contrast.

    Returns:
        One row per model with ``n_positive``, ``n_negative``, ``auc``,
        ``youden_threshold``/``youden_tpr``/``youden_fpr``/``youden_j``,
        ``fpr_threshold``/``fpr_tpr``/``fpr_fpr``, ``max_fpr`` and
        ``global_threshold``/``global_tpr``/``global_fpr``.  A model without
        both kinds of control is left out.
    """
    negatives = _check_negatives(negatives)
    rows = []
    for model in pd.unique(results[constants.COL_MODEL]):
        pos, neg = _controls(results, model, negatives)
        if pos.size == 0 or neg.size == 0:
            continue
        youden = youden_threshold(pos, neg)
        at_fpr = threshold_at_fpr(pos, neg, max_fpr)
        fixed = rates_at(pos, neg, global_threshold)
        rows.append(
            {
                constants.COL_MODEL: model,
                "n_positive": int(pos.size),
                "n_negative": int(neg.size),
                "auc": auc(pos, neg),
                "youden_threshold": youden.threshold,
                "youden_tpr": youden.tpr,
                "youden_fpr": youden.fpr,
                "youden_j": youden.youden_j,
                "fpr_threshold": at_fpr.threshold,
                "fpr_tpr": at_fpr.tpr,
                "fpr_fpr": at_fpr.fpr,
                "max_fpr": float(max_fpr),
                "global_threshold": float(global_threshold),
                "global_tpr": fixed.tpr,
                "global_fpr": fixed.fpr,
            }
        )
    return pd.DataFrame(rows)


def roc_table(results: pd.DataFrame, negatives: Sequence[str] = (constants.CAT_NEGATIVE,)) -> pd.DataFrame:
    """Every model's ROC curve, long: ``model``, ``threshold``, ``fpr``, ``tpr``."""
    negatives = _check_negatives(negatives)
    frames = []
    for model in pd.unique(results[constants.COL_MODEL]):
        pos, neg = _controls(results, model, negatives)
        if pos.size and neg.size:
            frames.append(roc_curve(pos, neg).assign(**{constants.COL_MODEL: model}))
    columns = [constants.COL_MODEL, "threshold", "fpr", "tpr"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def thresholds_by_model(calibration: pd.DataFrame, method: str = METHOD_YOUDEN) -> dict[str, float]:
    """``{model: threshold}`` for one calibration method (``youden`` or ``fpr``)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    column = f"{method}_threshold"
    return dict(zip(calibration[constants.COL_MODEL], calibration[column].astype(float), strict=True))


def failure_rates(
    results: pd.DataFrame,
    thresholds: dict[str, float],
    global_threshold: float = constants.DEFAULT_THRESHOLD,
    categories: Sequence[str] = lexicon.FAILURE_MODES,
) -> pd.DataFrame:
    """Failure rate per model and category at the global threshold and at each model's own.

    Args:
        results: Long results with ``model``, ``category`` and ``cosine``.
        thresholds: Each model's calibrated threshold; models missing here get NaN.
        global_threshold: The one fixed threshold.
        categories: Which categories to report.

    Returns:
        Long: ``model``, ``category``, ``n``, ``global_threshold``,
        ``failure_rate_global``, ``calibrated_threshold``,
        ``failure_rate_calibrated`` and ``change`` (calibrated − global).
    """
    rows = []
    subset = results[results[constants.COL_CATEGORY].isin(categories)].dropna(subset=[constants.COL_COSINE])
    for (model, category), group in subset.groupby([constants.COL_MODEL, constants.COL_CATEGORY], sort=False):
        cos = group[constants.COL_COSINE].to_numpy(float)
        own = thresholds.get(str(model), np.nan)
        at_global = failure_rate(cos, global_threshold)
        at_own = failure_rate(cos, own) if np.isfinite(own) else np.nan
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_CATEGORY: category,
                "n": int(cos.size),
                "global_threshold": float(global_threshold),
                "failure_rate_global": at_global,
                "calibrated_threshold": float(own),
                "failure_rate_calibrated": at_own,
                "change": at_own - at_global,
            }
        )
    return pd.DataFrame(rows)


def calibration_findings(rates: pd.DataFrame, negatives: Sequence[str], short: Callable[[str], str] = str) -> list[str]:
    """What the calibrated thresholds do to the failure rates, in sentences; above all when they make every rate 100%.

    A threshold calibrated on paraphrases against unrelated pairs lands low
    (0.26-0.31 for MiniLM-L6): every failure-mode pair, which shares almost
    every word, scores above it. That is a finding, not a glitch, and the
    remedy is to count the near-miss controls as negatives.

    Args:
        rates: :func:`failure_rates` output (``model``, ``category``, ``calibrated_threshold``, ``failure_rate_calibrated``).
        negatives: The control categories the thresholds were calibrated against.
        short: A model's display name.

    Returns:
        One sentence per model whose calibrated threshold makes some failure
        mode 100%, then one on the negatives; empty when none does.

    Raises:
        ValueError: If ``rates`` lacks a needed column.
    """
    needed = {constants.COL_MODEL, constants.COL_CATEGORY, "calibrated_threshold", "failure_rate_calibrated"}
    if missing := needed - set(rates.columns):
        raise ValueError(f"rates lacks columns {sorted(missing)}")
    negatives = _check_negatives(negatives)
    sentences, everywhere = [], []
    for model, group in rates.dropna(subset=["failure_rate_calibrated"]).groupby(constants.COL_MODEL, sort=False):
        full = int((group["failure_rate_calibrated"] >= 1.0).sum())
        if not full:
            continue
        threshold = float(group["calibrated_threshold"].iloc[0])
        if full == len(group):
            everywhere.append((short(str(model)), threshold))
            continue
        which = f"{full} of {len(group)} failure modes"
        rates_said = "their failure rates are 100%" if full > 1 else "its failure rate is 100%"
        sentences.append(
            f"{short(str(model))}'s calibrated threshold ({threshold:.2f}) lies below every pair of {which}: at it, {rates_said}."
        )
    if len(everywhere) == 1:
        (name, threshold), *_ = everywhere
        sentences.insert(
            0,
            f"{name}'s calibrated threshold ({threshold:.2f}) lies below every pair of every failure mode: "
            "at it, every failure rate is 100%.",
        )
    elif everywhere:  # one sentence for the models it holds for, not the same sentence once per model
        names = [f"{name} ({threshold:.2f})" for name, threshold in everywhere]
        sentences.insert(
            0,
            f"The calibrated thresholds of {', '.join(names[:-1])} and {names[-1]} lie below every pair of every failure mode: "
            "at them, every failure rate is 100%.",
        )
    if not sentences:
        return []
    if constants.CAT_NEAR_MISS in negatives:
        sentences.append("The thresholds already count the near-miss controls as negatives; the failure pairs still score above them.")
    else:
        sentences.append(
            "The thresholds separate paraphrases from unrelated pairs, which score far lower than any pair sharing its words; "
            "count the near-miss controls as negatives to calibrate against pairs that look alike."
        )
    return sentences
