"""``calibrate``: each model's threshold from the control pairs (Youden J, a target FPR, ROC AUC)."""

from __future__ import annotations

import json

import pandas as pd

from core import constants
from core.cli.common import EXIT_NO_MODEL, CliError, add_model_options, models_arg, score_pairs
from core.models import registry
from core.papers.suites import control_pairs


def cmd_calibrate(args) -> int:
    from core.papers.suites import load_suite
    from core.probes.calibration import calibrate, failure_rates, thresholds_by_model

    if not 0.0 <= args.max_fpr <= 1.0:
        raise CliError(f"--max-fpr must be between 0 and 1, got {args.max_fpr}")
    negatives = (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS) if args.near_miss else (constants.CAT_NEGATIVE,)
    models = models_arg(args.models)
    pairs = load_suite(constants.SUITE_FAILURE_MODES) if args.failure_rates else control_pairs(negatives)
    result = score_pairs(args, pairs, models)
    if result is None:
        return EXIT_NO_MODEL
    table = calibrate(result.results, negatives, args.max_fpr, args.threshold)
    rates = failure_rates(result.results, thresholds_by_model(table, args.method), args.threshold) if args.failure_rates else pd.DataFrame()
    if args.json:
        doc = {"negatives": list(negatives), "method": args.method, "calibration": json.loads(table.to_json(orient="records"))}
        if args.failure_rates:
            doc["failure_rates"] = json.loads(rates.to_json(orient="records"))
        print(json.dumps(doc, indent=2))
        return 0
    shown = table.assign(model=table[constants.COL_MODEL].map(registry.short_name))
    columns = [
        "model",
        "auc",
        "youden_threshold",
        "youden_tpr",
        "youden_fpr",
        "fpr_threshold",
        "fpr_tpr",
        "fpr_fpr",
        "global_tpr",
        "global_fpr",
    ]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(f"controls: positive vs {' + '.join(negatives)}; FPR target {args.max_fpr:g}; global threshold {args.threshold:g}")
        print(shown[columns].to_string(index=False))
        if args.failure_rates:
            rates = rates.assign(model=rates[constants.COL_MODEL].map(registry.short_name))
            print(f"\nfailure rate at the global threshold vs each model's own ({args.method})")
            print(
                rates[["model", "category", "failure_rate_global", "calibrated_threshold", "failure_rate_calibrated", "change"]].to_string(
                    index=False
                )
            )
    return 0


def register(subparsers) -> None:
    """Add the ``calibrate`` command."""
    p = subparsers.add_parser("calibrate", help="each model's threshold from the control pairs: Youden J, a target FPR, ROC AUC")
    p.add_argument("--near-miss", action="store_true", help="count near-miss controls as negatives too")
    p.add_argument("--max-fpr", type=float, default=0.05, help="false-positive rate for the FPR threshold (default %(default)s)")
    p.add_argument(
        "--failure-rates", action="store_true", help="also run the failure modes and compare rates at the global and calibrated thresholds"
    )
    p.add_argument(
        "--method",
        choices=["youden", "fpr"],
        default="youden",
        help="which calibrated threshold --failure-rates uses (default %(default)s)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(p)
    p.set_defaults(func=cmd_calibrate)
