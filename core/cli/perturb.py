"""``perturb TEXT``: failure-mode variants of one sentence, scored by every model."""

from __future__ import annotations

import json
import sys

from core import constants, lexicon
from core.cli.common import CliError, add_model_options, calibrated_thresholds, embedding_cache, models_arg, print_errors, run_options
from core.models import registry


def cmd_perturb(args) -> int:
    from core.probes.perturb import perturb
    from core.scoring.runner import run_pairs
    from core.scoring.tables import ABOVE_THRESHOLD, perturbation_table

    try:
        report = perturb(args.text)
    except ValueError as exc:
        raise CliError(f"TEXT: {exc}") from exc
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    pairs = report.to_frame()
    doc = {
        "text": report.text,
        "variants": [{"mode": v.mode, "rule": v.rule, "change": v.change, "text": v.text} for v in report.variants],
        "not_applicable": report.not_applicable,
        "notes": report.notes,
        "threshold": args.threshold,
        "scores": [],
    }
    errors: dict[str, str] = {}
    if report.variants and not args.no_score:
        models = models_arg(args.models)
        calibrated = calibrated_thresholds(args, models) if args.calibrated else {}
        result = run_pairs(pairs, models, cache=embedding_cache(args), options=run_options(args))
        errors = result.errors
        # A model the controls could not calibrate keeps the global threshold.
        thresholds = {m: calibrated.get(m, args.threshold) for m in result.models}
        for r in perturbation_table(result.results, thresholds).to_dict("records"):
            doc["scores"].append(
                {
                    "pair_id": r[constants.COL_PAIR_ID],
                    "model": r[constants.COL_MODEL],
                    "cosine": round(float(r[constants.COL_COSINE]), 6),
                    "threshold": round(float(r[constants.COL_THRESHOLD]), 6),
                    "same": r["verdict"] == ABOVE_THRESHOLD,
                }
            )
    print_errors(errors)
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    print(f"{report.text!r}: {len(report.variants)} variant(s)")
    by_pair: dict[str, list[dict]] = {}
    for row in doc["scores"]:
        by_pair.setdefault(row["pair_id"], []).append(row)
    for v, pair_id in zip(report.variants, pairs[constants.COL_PAIR_ID], strict=True):
        print(f"\n[{lexicon.CATEGORY_LABELS.get(v.mode, v.mode)}] {v.rule}: {v.change}\n  {v.text}")
        for row in by_pair.get(pair_id, []):
            verdict = "SAME (above" if row["same"] else "different (below"
            print(f"    {row['cosine']:.4f}  {verdict} {row['threshold']:.3f})  {registry.short_name(row['model'])}")
    for mode, why in report.not_applicable.items():
        print(f"\n[{lexicon.CATEGORY_LABELS.get(mode, mode)}] not applicable: {why}")
    return 0


def register(subparsers) -> None:
    """Add the ``perturb`` command."""
    p = subparsers.add_parser("perturb", help="failure-mode variants of one sentence, scored by every model")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--no-score", action="store_true", help="only list the variants; load no model")
    p.add_argument(
        "--calibrated", action="store_true", help="mark each model at its own Youden-J threshold from the controls, not --threshold"
    )
    add_model_options(p)
    p.set_defaults(func=cmd_perturb)
