"""Budgets evaluated on tidy results: one :class:`Outcome` per budget per model.

A budget holds when the measured value is within it (``<=`` for a maximum,
``>=`` for a minimum).  A budget that cannot be measured for a model (the
model did not run, the category is not in the data, no controls to
calibrate on) is an *error* outcome, and fails the gate like a breach: a
gate that silently skips what it was asked to check would pass by accident.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import constants
from core.gate.config import (
    BUDGET_CONTROL_AUC,
    BUDGET_FAILURE_RATE,
    BUDGET_LABEL_AUC,
    BUDGET_PAIRED_ACCURACY,
    BUDGET_RECALL_AT_K,
    BUDGET_TRIPLES_WIN_RATE,
    BUDGET_TWIN_SHARE,
    BUDGET_WIN_RATE,
    Budgets,
)
from core.probes import calibration
from core.stats.rates import failure_rate

STATUS_PASS = "pass"
STATUS_FAIL = "fail"
STATUS_ERROR = "error"
EXIT_PASS = 0
EXIT_BREACH = 1

# Budgets are stated to a few decimals; a measured rate that equals one up to float noise holds.
_TOLERANCE = 1e-9

_WHAT = {
    BUDGET_FAILURE_RATE: "failure rate",
    BUDGET_CONTROL_AUC: "control AUC",
    BUDGET_WIN_RATE: "adversarial win rate",
    BUDGET_PAIRED_ACCURACY: "paired accuracy",
    BUDGET_TRIPLES_WIN_RATE: "triples win rate",
    BUDGET_RECALL_AT_K: "recall",
    BUDGET_LABEL_AUC: "label AUC",
    BUDGET_TWIN_SHARE: "twin share",
}


@dataclass(frozen=True)
class Outcome:
    """One budget for one model, measured.

    Attributes:
        model: the model's name.
        budget: the budget kind (``max_failure_rate``, ...).
        key: the category or mode the budget is for; empty for a per-model budget.
        measured: the measured value; NaN when it could not be measured.
        limit: the budget.
        n: how many pairs, groups or controls the value rests on.
        detail: how it was measured (threshold, counts).
        error: why it could not be measured, or None.
    """

    model: str
    budget: str
    key: str
    measured: float
    limit: float
    n: int = 0
    detail: str = ""
    error: str | None = None

    @property
    def is_max(self) -> bool:
        return self.budget.startswith("max_")

    @property
    def name(self) -> str:
        """``max_failure_rate[negation]``, or the budget kind alone."""
        return f"{self.budget}[{self.key}]" if self.key else self.budget

    @property
    def status(self) -> str:
        if self.error is not None or not math.isfinite(self.measured):
            return STATUS_ERROR
        held = self.measured <= self.limit + _TOLERANCE if self.is_max else self.measured >= self.limit - _TOLERANCE
        return STATUS_PASS if held else STATUS_FAIL

    @property
    def passed(self) -> bool:
        return self.status == STATUS_PASS

    @property
    def message(self) -> str:
        """One line with the measured value and the budget."""
        what = f"{self.key} {_WHAT[self.budget]}" if self.key else _WHAT[self.budget]
        bound = "max" if self.is_max else "min"
        if self.status == STATUS_ERROR:
            return f"{what}: not measured ({self.error or 'no value'}); budget {bound} {self.limit:.3f}"
        verdict = {STATUS_PASS: "within", STATUS_FAIL: "BREACHES"}[self.status]
        tail = f" ({self.detail})" if self.detail else ""
        return f"{what} {self.measured:.3f} {verdict} budget {bound} {self.limit:.3f}{tail}"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready fields, the status and message included."""
        return {
            "model": self.model,
            "budget": self.budget,
            "key": self.key,
            "name": self.name,
            "status": self.status,
            "measured": None if not math.isfinite(self.measured) else self.measured,
            "limit": self.limit,
            "n": self.n,
            "detail": self.detail,
            "error": self.error,
            "message": self.message,
        }


def exit_code(outcomes: Iterable[Outcome]) -> int:
    """0 when every budget holds, 1 when one is breached or could not be measured."""
    return EXIT_PASS if all(o.passed for o in outcomes) else EXIT_BREACH


def outcomes_frame(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """The outcomes as a table, one row each."""
    columns = ["model", "budget", "key", "name", "status", "measured", "limit", "n", "detail", "error", "message"]
    return pd.DataFrame([o.as_dict() for o in outcomes], columns=columns)


# ------------------------------------------------------------------ pair budgets


def failure_rate_outcomes(results: pd.DataFrame, limits: Mapping[str, float], thresholds: Mapping[str, float], how: str) -> list[Outcome]:
    """``max_failure_rate``: per model and category, the share of pairs strictly above the model's threshold.

    Args:
        results: tidy results with ``model``, ``category``, ``cosine``.
        limits: category -> largest allowed rate.
        thresholds: model -> threshold (a model missing here gets an error outcome).
        how: how the thresholds were chosen (``global`` or ``calibrated (youden)``), for the message.

    Returns:
        One outcome per model in ``results`` and category in ``limits``.
    """
    _check_results(results)
    out = []
    for key, rows in results.groupby(constants.COL_MODEL, sort=False):
        model = str(key)
        threshold = thresholds.get(model)
        for category, limit in limits.items():
            cos = rows.loc[rows[constants.COL_CATEGORY] == category, constants.COL_COSINE].dropna().to_numpy(float)
            if threshold is None or not math.isfinite(threshold):
                out.append(
                    Outcome(
                        model,
                        BUDGET_FAILURE_RATE,
                        category,
                        math.nan,
                        limit,
                        cos.size,
                        error="no threshold: the controls could not calibrate one",
                    )
                )
            elif cos.size == 0:
                out.append(Outcome(model, BUDGET_FAILURE_RATE, category, math.nan, limit, error=f"no {category!r} pairs in the data"))
            else:
                rate = failure_rate(cos, threshold)
                detail = f"{int(np.sum(cos > threshold))}/{cos.size} pairs above {how} threshold {threshold:.3f}"
                out.append(Outcome(model, BUDGET_FAILURE_RATE, category, rate, limit, cos.size, detail))
    return out


def control_auc_outcomes(results: pd.DataFrame, limit: float, negatives: Sequence[str]) -> list[Outcome]:
    """``min_control_auc``: per model, the ROC AUC of cosine separating positive from negative controls.

    Args:
        results: tidy results with ``model``, ``category``, ``cosine``.
        limit: smallest allowed AUC.
        negatives: control categories counted as negatives.
    """
    _check_results(results)
    out = []
    for key, rows in results.groupby(constants.COL_MODEL, sort=False):
        model = str(key)
        pos = rows.loc[rows[constants.COL_CATEGORY] == constants.CAT_POSITIVE, constants.COL_COSINE].dropna().to_numpy(float)
        neg = rows.loc[rows[constants.COL_CATEGORY].isin(negatives), constants.COL_COSINE].dropna().to_numpy(float)
        if pos.size == 0 or neg.size == 0:
            out.append(
                Outcome(
                    model,
                    BUDGET_CONTROL_AUC,
                    "",
                    math.nan,
                    limit,
                    pos.size + neg.size,
                    error=f"needs positive and {' or '.join(negatives)} controls",
                )
            )
            continue
        value = calibration.auc(pos, neg)
        out.append(
            Outcome(
                model, BUDGET_CONTROL_AUC, "", value, limit, pos.size + neg.size, f"{pos.size} positive vs {neg.size} {'+'.join(negatives)}"
            )
        )
    return out


def label_auc_outcomes(results: pd.DataFrame, limit: float, match_label: str | None = None) -> list[Outcome]:
    """``min_label_auc``: per model, the ROC AUC of cosine as a classifier of the files' own labels
    (``core.probes.labels.label_report``; rows without a label, such as added controls, are left out).

    Args:
        results: tidy results with ``model``, ``category``, ``cosine`` and the files' ``label``.
        limit: smallest allowed AUC.
        match_label: the label value that means "same meaning" (None: 1/true/paraphrase/entailment).
    """
    from core.probes.labels import KIND_BINARY, label_report

    _check_results(results)
    models = [str(m) for m in dict.fromkeys(results[constants.COL_MODEL])]
    if constants.COL_LABEL not in results.columns:
        return [Outcome(m, BUDGET_LABEL_AUC, "", math.nan, limit, error="the files have no label column") for m in models]
    labelled = results[results[constants.COL_LABEL].fillna("").astype(str).str.strip() != ""]
    if labelled.empty:
        return [Outcome(m, BUDGET_LABEL_AUC, "", math.nan, limit, error="no pair has a label") for m in models]
    report = label_report(labelled, constants.DEFAULT_THRESHOLD, match_label)
    head = report["kind"].iloc[0]
    if head["kind"] != KIND_BINARY or head["no_classifier"]:
        why = (
            head["no_classifier"]
            if head["kind"] == KIND_BINARY
            else f"the labels are {head['kind']}, not match / no match: name the value that means 'same meaning' ([labels] match = ...)"
        )
        return [Outcome(m, BUDGET_LABEL_AUC, "", math.nan, limit, error=why) for m in models]
    rows = {str(r[constants.COL_MODEL]): r for r in report["classifier"].to_dict("records")}
    out = []
    for model in models:
        row = rows.get(model)
        if row is None:
            out.append(Outcome(model, BUDGET_LABEL_AUC, "", math.nan, limit, error="no labelled pair scored"))
            continue
        n_match, n_no = int(row["n_match"]), int(row["n_no_match"])
        out.append(
            Outcome(
                model,
                BUDGET_LABEL_AUC,
                "",
                float(row["auc"]),
                limit,
                n_match + n_no,
                f"{n_match} match ({head['match']}) vs {n_no} no match ({head['no_match']})",
            )
        )
    return out


def _check_results(results: pd.DataFrame) -> None:
    missing = {constants.COL_MODEL, constants.COL_CATEGORY, constants.COL_COSINE} - set(results.columns)
    if missing:
        raise ValueError(f"results lack columns {sorted(missing)}")


# ------------------------------------------------------------------ retrieval budgets


def _table_outcomes(
    table: pd.DataFrame, limits: Mapping[str, float], budget: str, value_column: str, models: Sequence[str], unit: str
) -> list[Outcome]:
    """Outcomes from a retrieval table (model, mitigation, mode, n, value): the dense scores, mitigation ``none``."""
    needed = {constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_MODE, constants.COL_N, value_column}
    missing = needed - set(table.columns)
    if missing:
        raise ValueError(f"the retrieval table lacks columns {sorted(missing)}")
    dense = table[table[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    out = []
    for model in models:
        mine = dense[dense[constants.COL_MODEL] == model].set_index(constants.COL_MODE)
        for mode, limit in limits.items():
            if mode not in mine.index:
                out.append(Outcome(model, budget, mode, math.nan, limit, error=f"no {mode!r} groups in the retrieval suite"))
                continue
            row = mine[mine.index == mode].iloc[0]
            detail = (
                f"{int(row[constants.COL_N])} {unit}, 95% CI {row[constants.COL_CI_LOW]:.3f}-{row[constants.COL_CI_HIGH]:.3f}"
                if constants.COL_CI_LOW in mine.columns
                else ""
            )
            out.append(Outcome(model, budget, mode, float(row[value_column]), limit, int(row[constants.COL_N]), detail))
    return out


def win_rate_outcomes(win_rates: pd.DataFrame, limits: Mapping[str, float], models: Sequence[str]) -> list[Outcome]:
    """``max_adversarial_win_rate``: per model and mode, from ``RetrievalResult.win_rates`` (no mitigation)."""
    return _table_outcomes(win_rates, limits, BUDGET_WIN_RATE, constants.COL_WIN_RATE, models, "variants")


def paired_accuracy_outcomes(paired: pd.DataFrame, limits: Mapping[str, float], models: Sequence[str]) -> list[Outcome]:
    """``min_paired_accuracy``: per model and query mode, from ``RetrievalResult.paired`` (no mitigation)."""
    return _table_outcomes(paired, limits, BUDGET_PAIRED_ACCURACY, constants.COL_PAIRED_ACCURACY, models, "query pairs")


# ------------------------------------------------------------------ the user's triples and BEIR folder


def triples_win_rate_outcomes(win_rates: pd.DataFrame, limit: float, models: Sequence[str]) -> list[Outcome]:
    """``max_win_rate``: per model, the share of triples whose negative outranks the positive (``TriplesResult.win_rates``)."""
    rows = win_rates.set_index(constants.COL_MODEL) if not win_rates.empty else pd.DataFrame()
    out = []
    for model in models:
        if model not in rows.index:
            out.append(Outcome(model, BUDGET_TRIPLES_WIN_RATE, "", math.nan, limit, error="the triples were not ranked"))
            continue
        row = rows.loc[model].to_dict()
        detail = (
            f"{int(row[constants.COL_WINS])}/{int(row[constants.COL_N])} negatives above the positive, {int(row[constants.COL_TIES])} "
            "tie(s) apart, "
            f"95% CI {row[constants.COL_CI_LOW]:.3f}-{row[constants.COL_CI_HIGH]:.3f}"
        )
        out.append(
            Outcome(model, BUDGET_TRIPLES_WIN_RATE, "", float(row[constants.COL_WIN_RATE]), limit, int(row[constants.COL_N]), detail)
        )
    return out


def recall_outcomes(rankings: Mapping[str, pd.DataFrame], limits: Mapping[int, float], models: Sequence[str]) -> list[Outcome]:
    """``min_recall_at_k``: per model, input (``triples``, ``beir``) and k, from each input's ranking table."""
    out = []
    for source, ranking in rankings.items():
        rows = ranking.set_index(constants.COL_MODEL) if not ranking.empty else pd.DataFrame()
        for model in models:
            for k, limit in limits.items():
                key = f"{source}@{k}"
                if model not in rows.index:
                    out.append(Outcome(model, BUDGET_RECALL_AT_K, key, math.nan, limit, error=f"the {source} input was not ranked"))
                    continue
                row = rows.loc[model].to_dict()
                detail = f"{int(row[constants.COL_N_QUERIES])} queries over {int(row[constants.COL_N_PASSAGES])} passages"
                out.append(
                    Outcome(
                        model,
                        BUDGET_RECALL_AT_K,
                        key,
                        float(row[constants.COL_IR_RECALL_AT[k]]),
                        limit,
                        int(row[constants.COL_N_QUERIES]),
                        detail,
                    )
                )
    return out


# ------------------------------------------------------------------ the audited corpus


def twin_share_outcomes(summary: pd.DataFrame, limits: Mapping[str, float], models: Sequence[str]) -> list[Outcome]:
    """``max_twin_share``: per model and mode (or ``all``), the share of passages with a confusable twin.

    The shares are those of ``core.audit.risk.risk_summary``.
    """
    out = []
    for model in models:
        mine = summary[summary[constants.COL_MODEL] == model].set_index("mode") if not summary.empty else pd.DataFrame()
        for mode, limit in limits.items():
            if mode not in mine.index:
                out.append(Outcome(model, BUDGET_TWIN_SHARE, mode, math.nan, limit, error="the corpus was not audited"))
                continue
            row = mine.loc[mode].to_dict()
            detail = (
                f"{int(row['passages_with_twin'])}/{int(row['n_passages'])} passages, {int(row['twin_pairs'])} twin pairs above "
                f"{row['threshold']:.2f}, "
                f"95% CI {row['twin_share_ci_low']:.3f}-{row['twin_share_ci_high']:.3f}"
            )
            out.append(Outcome(model, BUDGET_TWIN_SHARE, mode, float(row["twin_share"]), limit, int(row["n_passages"]), detail))
    return out


# ------------------------------------------------------------------ a model that did not run


def unmeasured_outcomes(model: str, budgets: Budgets, reason: str, *, pairs: bool = True, retrieval: bool = True) -> list[Outcome]:
    """An error outcome for each of a model's budgets, when the model (or a whole probe) could not run."""
    out: list[Outcome] = []
    if pairs:
        out += [Outcome(model, BUDGET_FAILURE_RATE, c, math.nan, lim, error=reason) for c, lim in budgets.max_failure_rate.items()]
        if budgets.min_control_auc is not None:
            out.append(Outcome(model, BUDGET_CONTROL_AUC, "", math.nan, budgets.min_control_auc, error=reason))
        if budgets.min_label_auc is not None:
            out.append(Outcome(model, BUDGET_LABEL_AUC, "", math.nan, budgets.min_label_auc, error=reason))
    if retrieval:
        out += [Outcome(model, BUDGET_WIN_RATE, m, math.nan, lim, error=reason) for m, lim in budgets.max_adversarial_win_rate.items()]
        out += [Outcome(model, BUDGET_PAIRED_ACCURACY, m, math.nan, lim, error=reason) for m, lim in budgets.min_paired_accuracy.items()]
        if budgets.max_win_rate is not None:
            out.append(Outcome(model, BUDGET_TRIPLES_WIN_RATE, "", math.nan, budgets.max_win_rate, error=reason))
        out += [Outcome(model, BUDGET_RECALL_AT_K, f"@{k}", math.nan, lim, error=reason) for k, lim in budgets.min_recall_at_k.items()]
    return out
