"""``python -m core explain TEXT_A TEXT_B``: which tokens carry a pair's cosine, per model, and the cosine layer by layer.

Occlusion works for every model; ``--method ig`` runs integrated gradients on
torch models and falls back to occlusion (with a note on stderr) for ONNX
ones.  ``--layers`` adds the mean-pooled cosine at every layer (torch models).
With ``--json`` stdout is one JSON document; notes and warnings go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from core import constants
from core.cli.common import EXIT_NO_MODEL, CliError, add_model_options, models_arg, print_errors, require_text, run_options
from core.cli.outputs import output_file, remember_written
from core.messages import redact
from core.models import registry

EXAMPLES = (
    'python -m core explain "The patient is allergic to penicillin" "The patient is not allergic to penicillin"',
    'python -m core explain "A" "B" --method ig --steps 200 --layers --json',
)
_SHOWN_COLUMNS = [constants.COL_SIDE, constants.COL_POSITION, constants.COL_TOKEN, constants.COL_WORD, constants.COL_ATTRIBUTION]


def register(subparsers) -> None:
    """Add the ``explain`` command."""
    p = subparsers.add_parser(
        "explain",
        help="why a pair scores what it does: token attributions (occlusion or integrated gradients) and the layer-wise cosine",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("text_a", metavar="TEXT_A")
    p.add_argument("text_b", metavar="TEXT_B")
    p.add_argument(
        "--method",
        choices=constants.EXPLAIN_METHODS,
        default=constants.METHOD_OCCLUSION,
        help="occlusion (remove each token, every model) or ig (integrated gradients, torch models) (default %(default)s)",
    )
    p.add_argument(
        "--unit",
        choices=constants.EXPLAIN_UNITS,
        default=constants.UNIT_TOKEN,
        help="occlusion removes one token or one whole word (default %(default)s)",
    )
    p.add_argument("--steps", type=int, default=constants.IG_STEPS, help="integration steps for ig (default %(default)s)")
    p.add_argument(
        "--baseline",
        choices=constants.IG_BASELINES,
        default=constants.IG_BASELINE,
        help="ig baseline: every token's embedding set to [MASK] or [PAD] (default %(default)s)",
    )
    p.add_argument("--layers", action="store_true", help="also the cosine of the mean-pooled hidden states at every layer (torch models)")
    p.add_argument("--top", type=int, default=constants.EXPLAIN_TOP_TOKENS, help="tokens listed as the top ones (default %(default)s)")
    p.add_argument("--csv", metavar="FILE", help="write every model's attribution table to this CSV (spreadsheet-safe)")
    add_model_options(p)
    p.set_defaults(func=cmd_explain)


def _check(args) -> Path | None:
    if args.top < 1:
        raise CliError(f"--top must be at least 1, got {args.top}")
    if not 1 <= args.steps <= 2000:
        raise CliError(f"--steps must be from 1 to 2000, got {args.steps}")
    return output_file(args.csv, "--csv", "explain")


def _records(frame: pd.DataFrame) -> list[dict]:
    return json.loads(frame.to_json(orient="records", force_ascii=False))


def _explain_one(args, name: str, a: str, b: str) -> tuple[dict, pd.DataFrame]:
    """One model's JSON entry and its attribution table (raises ModelUnavailable or ValueError)."""
    from core.models.loading import ModelUnavailable
    from core.models.runs import load
    from core.probes.explain import explain_pair, layer_cosines, not_explainable, top_units
    from core.probes.explain.forward import is_torch

    reason = not_explainable(name)
    if reason:  # said before any request: loading an endpoint model would ask its server for nothing
        raise ModelUnavailable(reason)
    model = load(name, run_options(args))
    explanation, note = explain_pair(model, a, b, method=args.method, unit=args.unit, steps=args.steps, baseline=args.baseline)
    notes = [note] if note else []
    for side in explanation.truncated:
        notes.append(
            f"sentence {side} is longer than the {model.max_seq_length} tokens {model.name} keeps; the rest was cut and is not explained"
        )
    check = explanation.completeness
    if check is not None and not check.ok:
        notes.append(
            f"integrated gradients miss completeness by {check.relative_miss:.1%} (more than {constants.IG_MAX_RELATIVE_MISS:.0%}): "
            f"rerun with --steps {check.more_steps}"
        )
    layers = None
    if args.layers:
        if is_torch(model):
            layers = _records(layer_cosines(model, a, b)[[constants.COL_LAYER, constants.COL_DEPTH, constants.COL_COSINE]])
        else:
            notes.append(f"{model.name} runs on {model.meta.backend}: no hidden states here, so no layer-wise view")
    table = explanation.table
    entry = {
        "model": model.name,
        "backend": model.meta.backend,
        "method": explanation.method,
        "unit": explanation.unit,
        "cosine": explanation.cosine,
        "top": _records(top_units(table, args.top)[_SHOWN_COLUMNS]) if not table.empty else [],
        "attributions": _records(table[_SHOWN_COLUMNS]),
        "completeness": check.as_dict() if check is not None else None,
        "layers": layers,
        "notes": notes,
    }
    return entry, table


def _print_text(entry: dict) -> None:
    short = registry.short_name(entry["model"])
    print(f"\n{short}  cosine {entry['cosine']:.4f}  ({entry['method']}, per {entry['unit']})")
    print("  top: " + "   ".join(f"{r['side']}:{r['token']} {r['attribution']:+.4f}" for r in entry["top"]))
    for side in (constants.SIDE_A, constants.SIDE_B):
        rows = [r for r in entry["attributions"] if r["side"] == side]
        print(f"  {side}: " + "  ".join(f"{r['token']} {r['attribution']:+.3f}" for r in rows))
    check = entry["completeness"]
    if check is not None:
        miss = "n/a" if check["relative_miss"] is None else f"{check['relative_miss']:.2%}"
        print(
            f"  completeness: sum {check['attribution_sum']:+.4f} vs cos(pair) - cos(baseline) "
            f"{check['cosine'] - check['baseline_cosine']:+.4f} (miss {miss}, {check['steps']} steps, baseline {check['baseline']})"
        )
    if entry["layers"]:
        print("  layers: " + "  ".join(f"{r['layer']}:{r['cosine']:.4f}" for r in entry["layers"]))


def cmd_explain(args) -> int:
    from core.files.export import to_csv_bytes
    from core.models.loading import ModelUnavailable

    a, b = require_text("TEXT_A", args.text_a), require_text("TEXT_B", args.text_b)
    out = _check(args)
    models = models_arg(args.models)
    entries, tables, errors = [], [], {}
    # Not core.models.runs.model_runs: attributions need the weights, so a cached vector is no use here.
    for name in models:
        try:
            entry, table = _explain_one(args, name, a, b)
        except ModelUnavailable as exc:
            errors[name] = redact(exc)
            continue
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        for note in entry["notes"]:
            print(f"note: {registry.short_name(entry['model'])}: {note}", file=sys.stderr)
        entries.append(entry)
        tables.append(table)
    print_errors(errors)
    if out is not None and tables:
        try:
            out.write_bytes(to_csv_bytes(pd.concat(tables, ignore_index=True)))
        except OSError as exc:  # checked before the run; a disk that filled since is still one line
            raise CliError(f"--csv: cannot write {out} ({exc.strerror or type(exc).__name__})") from exc
        remember_written("explain", out)
        print(f"wrote {out}", file=sys.stderr)
    if args.json:
        doc = {"text_a": a, "text_b": b, "method": args.method, "unit": args.unit, "models": entries, "errors": errors}
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        print(f"A: {a}\nB: {b}")
        for entry in entries:
            _print_text(entry)
    return 0 if entries else EXIT_NO_MODEL
