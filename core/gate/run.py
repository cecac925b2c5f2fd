"""Run a gate: score the config's pairs (and the retrieval suite when a budget needs it), then every budget.

:func:`evaluate` is pure (tidy tables in, outcomes out); :func:`run_check`
loads the pairs, runs the models through ``core.scoring.runner`` and
``core.probes.retrieval``, picks each model's threshold and evaluates.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core import constants
from core.gate.budgets import (
    Outcome,
    control_auc_outcomes,
    exit_code,
    failure_rate_outcomes,
    label_auc_outcomes,
    paired_accuracy_outcomes,
    recall_outcomes,
    triples_win_rate_outcomes,
    twin_share_outcomes,
    unmeasured_outcomes,
    win_rate_outcomes,
)
from core.gate.config import (
    BUDGET_PAIRED_ACCURACY,
    BUDGET_RECALL_AT_K,
    BUDGET_TRIPLES_WIN_RATE,
    BUDGET_TWIN_SHARE,
    BUDGET_WIN_RATE,
    CheckConfig,
    ConfigError,
)
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn
from core.papers.suites import SuiteError, control_pairs, load_suite_with_notes
from core.probes import calibration
from core.probes.labels import labels_as_categories


@dataclass
class GateRun:
    """Everything one gate run produced.

    Attributes:
        config: the config it ran.
        results: tidy pair results (one row per pair per model that ran).
        thresholds: model -> the threshold its failure rates used.
        calibration: ``core.probes.calibration.calibrate`` on the controls (empty when not needed).
        retrieval: the ``RetrievalResult`` when a retrieval budget ran, else None.
        user_retrieval: ``triples`` -> ``TriplesResult`` and ``beir`` -> ``BeirResult``, for the inputs of ``[retrieval]`` that ran.
        outcomes: one per budget per model.
        errors: model -> why it did not run.
        notes: what the run changed or added (controls appended, file notes).
        seconds: wall time.
    """

    config: CheckConfig
    results: pd.DataFrame
    thresholds: dict[str, float]
    calibration: pd.DataFrame
    retrieval: Any | None
    outcomes: list[Outcome]
    errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    user_retrieval: dict[str, Any] = field(default_factory=dict)
    backends: dict[str, str] = field(default_factory=dict)  # model -> the backend that encoded it (torch or onnx)

    @property
    def exit_code(self) -> int:
        return exit_code(self.outcomes)


def gather_pairs(config: CheckConfig) -> tuple[pd.DataFrame, list[str]]:
    """The config's suites and files as one pairs table, plus the controls its budgets need.

    Controls (positive and the chosen negatives from the failure-mode suite)
    are appended when a calibrated threshold or an AUC budget needs them and
    the pairs have none.

    Raises:
        ConfigError: a suite or file that cannot be read (keyed ``suites`` / ``files``).
    """
    frames, notes = [], []
    for key, sources in (("suites", config.suites), ("files", tuple(map(str, config.files)))):
        for i, source in enumerate(sources):
            options = {"columns": {constants.COL_LABEL: config.label_column}} if key == "files" and config.label_column else {}
            try:
                frame, file_notes = load_suite_with_notes(source, **options)
            except SuiteError as exc:
                raise ConfigError(f"{key}[{i}]", str(exc)) from exc
            if key == "files" and labels_as_categories(frame) is not frame:
                # A file's labels name its pairs' groups (as on Your data), so budgets can name them; never "uncategorized".
                frame = labels_as_categories(frame)
                file_notes = [*file_notes, "no category column: each pair's label is used as its category"]
            frames.append(frame)
            notes += [f"{source}: {n}" for n in file_notes]
    pairs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    wants_controls = config.calibrated or config.budgets.min_control_auc is not None
    categories = set(pairs[constants.COL_CATEGORY]) if not pairs.empty else set()
    if wants_controls and not (constants.CAT_POSITIVE in categories and categories & set(config.calibration.negatives)):
        pairs = pd.concat([pairs, control_pairs(config.calibration.negatives)], ignore_index=True)
        notes.append(f"the pairs carry no positive and {'/'.join(config.calibration.negatives)} controls: added the failure-mode suite's")
    return pairs, notes


def choose_thresholds(config: CheckConfig, results: pd.DataFrame) -> tuple[dict[str, float], pd.DataFrame]:
    """Each model's threshold (the global one, or its calibrated one) and the calibration table.

    A model the controls cannot calibrate is left out of the thresholds, so
    its failure-rate budgets become error outcomes.
    """
    models = list(dict.fromkeys(results[constants.COL_MODEL])) if not results.empty else []
    needs_calibration = config.calibrated or config.budgets.min_control_auc is not None
    table = (
        calibration.calibrate(results, config.calibration.negatives, config.calibration.max_fpr, config.threshold)
        if needs_calibration and models
        else pd.DataFrame()
    )
    if not config.calibrated:
        return {m: config.threshold for m in models}, table
    return (calibration.thresholds_by_model(table, config.calibration.method) if not table.empty else {}), table


def threshold_label(config: CheckConfig) -> str:
    """How the thresholds were chosen, for messages."""
    return f"calibrated ({config.calibration.method})" if config.calibrated else "global"


def evaluate(
    config: CheckConfig,
    results: pd.DataFrame,
    thresholds: Mapping[str, float],
    retrieval_tables: Mapping[str, pd.DataFrame] | None = None,
    errors: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Every budget of ``config`` for every model, from tidy tables.

    Args:
        config: the gate.
        results: tidy pair results (may be empty when only retrieval budgets are set).
        thresholds: model -> threshold for the failure rates.
        retrieval_tables: ``win_rates`` and ``paired`` of a retrieval run, when retrieval budgets are set.
        errors: model -> reason it did not run; each of its budgets becomes an error outcome.

    Returns:
        Outcomes, models in run order, budgets in config order.
    """
    budgets = config.budgets
    out: list[Outcome] = []
    if budgets.needs_pairs and not results.empty:
        if budgets.max_failure_rate:
            out += failure_rate_outcomes(results, budgets.max_failure_rate, thresholds, threshold_label(config))
        if budgets.min_control_auc is not None:
            out += control_auc_outcomes(results, budgets.min_control_auc, config.calibration.negatives)
        if budgets.min_label_auc is not None:
            out += label_auc_outcomes(results, budgets.min_label_auc, config.match_label)
    if budgets.needs_retrieval and retrieval_tables is not None:
        # Models the retrieval run scored; one it could not run is in ``errors``.
        models = list(dict.fromkeys(m for name in ("win_rates", "paired") for m in retrieval_tables[name].get(constants.COL_MODEL, [])))
        if budgets.max_adversarial_win_rate:
            out += win_rate_outcomes(retrieval_tables["win_rates"], budgets.max_adversarial_win_rate, models)
        if budgets.min_paired_accuracy:
            out += paired_accuracy_outcomes(retrieval_tables["paired"], budgets.min_paired_accuracy, models)
    for model, reason in (errors or {}).items():
        out += unmeasured_outcomes(model, budgets, reason)
    return out


def user_retrieval_outcomes(config: CheckConfig, results: Mapping[str, Any], models: Sequence[str]) -> list[Outcome]:
    """``max_win_rate`` and ``min_recall_at_k`` on the ``[retrieval]`` triples file and BEIR folder that ran."""
    budgets, out = config.budgets, []
    if budgets.max_win_rate is not None and "triples" in results:
        out += triples_win_rate_outcomes(results["triples"].win_rates, budgets.max_win_rate, models)
    if budgets.min_recall_at_k:
        out += recall_outcomes({name: result.ranking for name, result in results.items()}, budgets.min_recall_at_k, models)
    return out


def _user_inputs(config: CheckConfig) -> dict[str, Any]:
    """The triples file and BEIR folder read before any model loads; a bad one is a ConfigError naming its key."""
    from core.files.beir import read_beir
    from core.files.errors import PairsFileError
    from core.files.triples import read_triples

    out: dict[str, Any] = {}
    try:
        if config.triples is not None:
            out["triples"] = read_triples(config.triples, dict(config.triples_columns))
    except PairsFileError as exc:
        raise ConfigError("retrieval.triples", str(exc)) from exc
    try:
        if config.beir is not None and config.budgets.min_recall_at_k:
            out["beir"] = read_beir(config.beir, config.split)
    except PairsFileError as exc:
        raise ConfigError("retrieval.beir", str(exc)) from exc
    return out


def _run_user_inputs(inputs: Mapping[str, Any], models: Sequence[str], **kwargs: Any) -> dict[str, Any]:
    from core.probes.retrieval.beir import run_beir
    from core.probes.retrieval.triples import run_triples

    runners: dict[str, Callable[..., Any]] = {"triples": run_triples, "beir": run_beir}
    return {name: runners[name](data, models, **kwargs) for name, data in inputs.items()}


def retrieval_runner() -> tuple[Callable[..., Any], Callable[[str], Any]]:
    """``(run_retrieval, load_retrieval_suite)`` from ``core.probes.retrieval``.

    Raises:
        ConfigError: the retrieval probes are not part of this installation.
    """
    try:
        from core.probes.retrieval.run import run_retrieval
        from core.probes.retrieval.suite_files import load_retrieval_suite
    except ImportError as exc:
        raise ConfigError(
            f"budgets.{BUDGET_WIN_RATE} / {BUDGET_PAIRED_ACCURACY}", f"the retrieval probes are not available here ({exc})"
        ) from exc
    return run_retrieval, load_retrieval_suite


def _canonical(name: str) -> str:
    try:
        return registry.resolve(name).name
    except ValueError:
        return name


def _audit_corpus(config: CheckConfig) -> list[str]:
    """The ``[audit]`` corpus's passages, read before any model loads.

    Raises:
        ConfigError: the file cannot be read as a corpus, or holds fewer than two passages.
    """
    from core.audit.run import check_corpus
    from core.files.errors import PairsFileError
    from core.files.texts import TEXT_COLUMNS, read_texts

    try:
        return check_corpus(read_texts(str(config.audit_corpus), TEXT_COLUMNS["corpus"], what="corpus").texts)
    except (PairsFileError, ValueError) as exc:
        raise ConfigError("audit.corpus", str(exc)) from exc


def _audit_outcomes(
    config: CheckConfig, passages: list[str], models: Sequence[str], errors: dict[str, str], thresholds: Mapping[str, float], **kwargs: Any
) -> list[Outcome]:
    """``max_twin_share`` on the ``[audit]`` corpus, at each model's threshold (its calibrated one, or the global one)."""
    from core.audit.risk import risk_summary
    from core.audit.run import audit_corpus

    limits = config.budgets.max_twin_share
    remaining = [m for m in models if m not in errors]
    out = [
        Outcome(_canonical(m), BUDGET_TWIN_SHARE, mode, math.nan, lim, error=errors[m])
        for m in models
        if m in errors
        for mode, lim in limits.items()
    ]
    if not remaining:
        return out
    # Calibrated thresholds are keyed by the registry names the results carry, as the audit's models are.
    floor = min([*thresholds.values(), config.threshold]) if config.calibrated else config.threshold
    result = audit_corpus(passages, remaining, floor, **kwargs)
    for model, reason in result.errors.items():
        errors.setdefault(model, reason)
        out += [Outcome(_canonical(model), BUDGET_TWIN_SHARE, mode, math.nan, lim, error=reason) for mode, lim in limits.items()]
    chosen = {m: thresholds.get(m, config.threshold) for m in result.models} if config.calibrated else config.threshold
    summary = risk_summary(result, chosen)
    summary = summary.assign(**{constants.COL_MODEL: summary[constants.COL_MODEL].map(_canonical)})
    return out + twin_share_outcomes(summary, limits, [_canonical(m) for m in result.models])


def run_check(
    config: CheckConfig,
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
) -> GateRun:
    """Run the gate on ``models``, each loaded and encoding as ``options`` say.

    Raises:
        ConfigError: a suite or file that cannot be read, or retrieval budgets
            without the retrieval probes; raised before any model is loaded.
        ValueError: no model given.
    """
    from core.scoring.runner import run_pairs

    if not models:
        raise ValueError("no model to check")
    start = time.perf_counter()
    budgets = config.budgets
    runner = retrieval_runner() if budgets.needs_retrieval else None
    suite = None
    if runner is not None:
        try:
            suite = runner[1](config.retrieval_suite)
        except ValueError as exc:  # RetrievalSuiteError is a ValueError
            raise ConfigError("retrieval.suite", str(exc)) from exc
    user_inputs = _user_inputs(config) if budgets.needs_user_retrieval else {}
    passages = _audit_corpus(config) if budgets.needs_audit else []
    pairs, notes = gather_pairs(config) if budgets.needs_pairs else (pd.DataFrame(), [])
    errors: dict[str, str] = {}
    results = pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    backends: dict[str, str] = {}
    if budgets.needs_pairs:
        scored = run_pairs(pairs, models, cache=cache, options=options, progress=progress)
        results, errors, backends = scored.results, dict(scored.errors), scored.backends
    retrieval = None
    remaining = [m for m in models if m not in errors]  # a model that failed the pairs is not loaded again
    if runner is not None and remaining:
        retrieval = runner[0](suite, remaining, cache=cache, options=options, progress=progress)
    thresholds, table = choose_thresholds(config, results) if budgets.needs_pairs else ({}, pd.DataFrame())
    tables = {"win_rates": retrieval.win_rates, "paired": retrieval.paired} if retrieval is not None else None
    outcomes = evaluate(config, results, thresholds, tables, {_canonical(m): r for m, r in errors.items()})
    if retrieval is not None:
        # A model that ran the pairs but failed the retrieval probes keeps its measured pair budgets.
        for model, reason in retrieval.errors.items():
            outcomes += unmeasured_outcomes(_canonical(model), budgets, reason, pairs=False)
            errors.setdefault(model, reason)
    user_results: dict[str, Any] = {}
    remaining = [m for m in models if m not in errors]
    if user_inputs and remaining:
        user_results = _run_user_inputs(user_inputs, remaining, cache=cache, options=options, progress=progress)
        ran = list(dict.fromkeys(m for r in user_results.values() for m in r.models))
        outcomes += user_retrieval_outcomes(config, user_results, ran)
        for name, result in user_results.items():
            for model, reason in result.errors.items():
                if model in errors:
                    continue
                errors[model] = reason
                if name == "triples" and budgets.max_win_rate is not None:
                    outcomes.append(Outcome(_canonical(model), BUDGET_TRIPLES_WIN_RATE, "", math.nan, budgets.max_win_rate, error=reason))
                outcomes += [
                    Outcome(_canonical(model), BUDGET_RECALL_AT_K, f"{name}@{k}", math.nan, lim, error=reason)
                    for k, lim in budgets.min_recall_at_k.items()
                ]
    if budgets.needs_audit:
        outcomes += _audit_outcomes(config, passages, models, errors, thresholds, cache=cache, options=options, progress=progress)
    if retrieval is not None:
        backends = {**{m: r.backend for m, r in retrieval.reports.items() if r.backend}, **backends}
    return GateRun(
        config,
        results,
        thresholds,
        table,
        retrieval,
        outcomes,
        errors,
        notes,
        time.perf_counter() - start,
        user_retrieval=user_results,
        backends=backends,
    )
