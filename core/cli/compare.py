"""``compare TEXT_A TEXT_B``: the cosine of two sentences under every model."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pandas as pd

from core import constants
from core.cli.common import (
    EXIT_NO_MODEL,
    add_model_options,
    devices_line,
    embedding_cache,
    models_arg,
    print_errors,
    print_notes,
    require_text,
    run_options,
)
from core.cli.endpoints import announce_tokens

if TYPE_CHECKING:
    from core.scoring.runner import RunResult


def cmd_compare(args) -> int:
    from core.scoring.runner import run_pairs

    a, b = require_text("TEXT_A", args.text_a), require_text("TEXT_B", args.text_b)
    models = models_arg(args.models)
    pairs = pd.DataFrame(
        {
            constants.COL_TEXT_A: [a],
            constants.COL_TEXT_B: [b],
            constants.COL_SUITE: ["compare"],
            constants.COL_CATEGORY: ["typed"],
            constants.COL_PAIR_ID: ["typed-1"],
        }
    )
    cache = embedding_cache(args)
    announce_tokens(models, [a, b], cache, args.price_per_million_tokens)
    result = run_pairs(pairs, models, cache=cache, options=run_options(args))
    print_errors(result.errors)
    print_notes(result.notes)
    if not result.results.empty:
        from core.cli.history import record_history

        record_history(
            "compare",
            result.results,
            {"threshold": args.threshold, "device": args.device, "devices": result.devices, "backends": result.backends},
            result.errors,
        )
    rows = [
        {
            "model": r[constants.COL_MODEL],
            "cosine": round(float(r[constants.COL_COSINE]), 6),
            "above_threshold": bool(r[constants.COL_COSINE] > args.threshold),
            "n_tokens_a": int(r[constants.COL_TOKENS_A]),
            "n_tokens_b": int(r[constants.COL_TOKENS_B]),
            "truncated": bool(r[constants.COL_TRUNCATED]),
            "device": result.devices.get(r[constants.COL_MODEL], ""),
            **_api_tokens(result, r[constants.COL_MODEL]),
        }
        for r in result.results.to_dict("records")
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        if rows:
            print(f"device: {devices_line(result.devices)}", file=sys.stderr)
        for row in rows:
            flag = "above" if row["above_threshold"] else "below"
            cut = "  (truncated)" if row["truncated"] else ""
            print(f"{row['cosine']:.4f}  {flag} {args.threshold:g}  {row['model']}{cut}")
    return 0 if rows else EXIT_NO_MODEL


def _api_tokens(result: RunResult, model: str) -> dict:
    """``{"api_tokens": n}`` for an endpoint model (tokens its server reported for this run), else nothing."""
    report = result.reports.get(model)
    return {"api_tokens": report.api_tokens} if report is not None and report.api_tokens is not None else {}


def register(subparsers) -> None:
    """Add the ``compare`` command."""
    p = subparsers.add_parser("compare", help="cosine of two sentences under every model")
    p.add_argument("text_a")
    p.add_argument("text_b")
    add_model_options(p)
    p.set_defaults(func=cmd_compare)
