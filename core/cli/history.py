"""``cosine-probe history list|show|diff|export|name|pin|unpin|delete``: the runs the CLI and the app stored, what changed
between two, and keeping the history tidy (a name, a pin that keeps a run from deletion and makes it the baseline).

Also :func:`record_history`, which the scoring commands call after a run: a
history that cannot be written costs one ``warning:`` line, never the run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from core import constants
from core.cli.common import CliError
from core.messages import first_line
from core.models import registry

if TYPE_CHECKING:
    from core.scoring.result import ProbeResult

CROSSED_SHOWN = 20  # crossed pairs `history diff` prints unless --limit says otherwise

EXAMPLES = {
    "list": ("cosine-probe history list", "cosine-probe history list --limit 5 --json"),
    "show": ("cosine-probe history show 12", "cosine-probe history show 12 --json"),
    "diff": ("cosine-probe history diff 11 12", "cosine-probe history diff 11 12 --threshold 0.8 --json"),
    "export": ("cosine-probe history export 12 --out run12.parquet",),
    "name": ('cosine-probe history name 12 "before the upgrade"', 'cosine-probe history name 12 ""'),
    "pin": ("cosine-probe history pin 12",),
    "unpin": ("cosine-probe history unpin 12",),
    "delete": ("cosine-probe history delete 13",),
}


def record_history(command: str, results: pd.DataFrame, settings: Mapping[str, Any], errors: Mapping[str, str] | None = None) -> int | None:
    """Store a CLI run in the history; its id, or None when recording is off or failed (after one warning on stderr)."""
    from core.history import store

    try:
        if store.history_path() is None:
            return None
        run_id = store.record_run(results, command=command, origin=constants.ORIGIN_CLI, settings=settings, errors=errors)
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        print(f"warning: run history not written: {first_line(exc)}", file=sys.stderr)
        return None
    print(f"note: stored as run {run_id} (cosine-probe history show {run_id})", file=sys.stderr)
    return run_id


def record_result_history(command: str, name: str, result: ProbeResult, settings: Mapping[str, Any]) -> int | None:
    """Store any probe's result (:class:`core.scoring.result.ProbeResult`): its history record's pairs and own settings
    under the command's ``settings`` (a key there wins), its errors; one warning if that fails.

    A record with nothing to compare (corpus mode on passages no rule can vary) is a finding, not a failure: one note says so.

    Args:
        command: the command that ran (``retrieval``, ``tune``, ``audit``, …).
        name: what it scored (the pairs' ``suite``).
        result: the run's result.
        settings: how it ran (sources, mitigations, seed, mode).
    """
    try:
        record = result.history_record(name)
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        print(f"warning: run history not written: {first_line(exc)}", file=sys.stderr)
        return None
    if not record.storable:
        print(f"note: not stored in the history: {record.nothing}", file=sys.stderr)
        return None
    return record_history(command, record.pairs, {**record.settings, **settings}, result.errors)


def record_retrieval_history(name: str, result: ProbeResult, settings: Mapping[str, Any], sources: list[str] | None = None) -> int | None:
    """Store any retrieval run (suite, pairs file, corpus mode, triples, BEIR, a store) through :func:`record_result_history`,
    each file or suite it read by its SHA-256 (``sources``, default ``name``)."""
    from core.history.sources import suite_source

    found = [suite_source(s) for s in (sources or [name])]
    return record_result_history("retrieval", name, result, {"sources": found, **settings})


def _store_call(fn, *args, **kwargs):
    """A history read; its failures are user-facing one-liners."""
    from core.history.store import HistoryError

    try:
        return fn(*args, **kwargs)
    except (HistoryError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def _records(frame: pd.DataFrame) -> list[dict[Any, Any]]:
    """JSON-ready rows: timestamps as ISO text, NaN as null."""
    out = []
    for row in frame.to_dict("records"):
        out.append(
            {
                k: (v.isoformat() if hasattr(v, "isoformat") else None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in row.items()
            }
        )
    return out


def _short_models(text: str) -> str:
    return ", ".join(registry.short_name(m) for m in text.split(", ")) if text else ""


def cmd_list(args) -> int:
    from core.history.store import list_runs

    runs = _store_call(list_runs)
    if args.limit is not None:
        runs = runs.head(args.limit)
    if args.json:
        print(json.dumps(_records(runs), indent=1, default=str))
        return 0
    if runs.empty:
        print("no runs stored yet; `cosine-probe run`, `check` and `compare`, and the app's suite pages store theirs")
        return 0
    shown = runs.assign(
        models=runs["models"].map(_short_models),
        created_at=runs["created_at"].dt.strftime("%Y-%m-%d %H:%M:%S"),
        threshold=runs["threshold"].map(lambda v: "none" if pd.isna(v) else f"{v:g}"),  # retrieval ranks: no threshold, never NaN
        name=runs["name"].fillna("").astype(str) + runs["pinned"].map(lambda p: " (pinned)" if p else ""),
        pairs=runs["pairs_digest"].map(lambda d: str(d)[:8] if isinstance(d, str) else ""),
    )
    with pd.option_context("display.width", 220, "display.max_colwidth", 60):
        print(
            shown[
                ["run_id", "created_at", "origin", "command", "name", "source", "pairs", "threshold", "n_pairs", "models", "errors"]
            ].to_string(index=False)
        )
    print("\nruns with the same `pairs` scored the same pairs and diff pair by pair (`cosine-probe history diff A B`)")
    return 0


def cmd_show(args) -> int:
    from core.history.diff import run_overview
    from core.history.store import load_run

    run = _store_call(load_run, args.run_id)
    overview = run_overview(run.results, run.thresholds())
    if args.json:
        doc = {
            "run_id": run.run_id,
            "created_at": run.created_at.isoformat(),
            "origin": run.origin,
            "command": run.command,
            "threshold": run.threshold,
            "source": run.source,
            "name": run.name,
            "pinned": run.pinned,
            "pairs_digest": run.pairs_digest,
            "settings": run.settings,
            "models": _records(run.models),
            "categories": _records(overview),
        }
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
        return 0
    print(f"run {run.run_id}: {run.command} ({run.origin}) at {run.created_at:%Y-%m-%d %H:%M:%S} UTC")
    print(
        f"source: {run.source or '(typed text)'} · threshold: {run.threshold if run.threshold is not None else 'none'}"
        + (f" · name: {run.name}" if run.name else "")
        + (" · pinned" if run.pinned else "")
    )
    for key, value in sorted(run.settings.items()):
        if key not in ("sources", "threshold"):
            print(f"  {key}: {json.dumps(value, default=str, ensure_ascii=False)}")
    for m in run.models.to_dict("records"):
        state = f"{m['n_results']} results" if m["status"] == "ok" else f"error: {m['error']}"
        print(f"  model {m['model']}  revision {m['revision'] or 'unpinned'}  backend {m['backend'] or '?'}  ({state})")
    if not overview.empty:
        shown = overview.assign(model=overview[constants.COL_MODEL].map(registry.short_name))
        with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
            print()
            print(shown.to_string(index=False))
    return 0


def cmd_diff(args) -> int:
    from core.history.diff import diff_runs
    from core.history.store import load_run

    if args.threshold is not None and not -1.0 <= args.threshold <= 1.0:
        raise CliError("--threshold must be between -1 and 1")
    before, after = _store_call(load_run, args.before), _store_call(load_run, args.after)
    t_before = args.threshold if args.threshold is not None else before.thresholds()
    t_after = args.threshold if args.threshold is not None else after.thresholds()
    result = diff_runs(before.results, after.results, t_before, t_after, by_content=before.comparable_with(after))
    crossed = _biggest_first(result.crossed)
    limit = args.limit if args.limit is not None else (None if args.json else CROSSED_SHOWN)
    shown = crossed if limit is None else crossed.head(limit)
    if args.json:
        doc = {
            "before": before.run_id,
            "after": after.run_id,
            "n_matched": result.n_matched,
            "n_only_before": result.n_only_before,
            "n_only_after": result.n_only_after,
            "models_only_before": list(result.models_only_before),
            "models_only_after": list(result.models_only_after),
            "categories": _records(result.categories),
            "n_crossed": len(crossed),
            "crossed": _records(shown),
        }
        print(json.dumps(doc, indent=1, default=str, ensure_ascii=False))
        return 0
    print(
        f"run {after.run_id} ({after.command}) against run {before.run_id} ({before.command}): {result.n_matched} matched pair scores, "
        f"{result.n_only_before} only in {before.run_id}, {result.n_only_after} only in {after.run_id}"
    )
    for label, models in (
        (f"only in run {before.run_id}", result.models_only_before),
        (f"only in run {after.run_id}", result.models_only_after),
    ):
        if models:
            print(f"models {label}: {', '.join(models)}")
    if result.categories.empty:
        print("no pair is in both runs: nothing to compare (same suite and model in both?)")
        return 0
    cats = result.categories.assign(model=result.categories[constants.COL_MODEL].map(registry.short_name))
    columns = [
        "model",
        "category",
        "n",
        "mean_change",
        "mean_ci_low",
        "mean_ci_high",
        "rate_before",
        "rate_after",
        "rate_change",
        "rate_ci_low",
        "rate_ci_high",
        "n_now_above",
        "n_now_below",
    ]
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.float_format", "{:+.3f}".format):
        print("\nchange per model and category (after − before, 95% paired bootstrap CI)")
        print(cats[columns].to_string(index=False))
    print(
        f"\n{len(crossed)} pair score(s) crossed the threshold"
        + (f"; the {len(shown)} biggest changes:" if len(shown) < len(crossed) and len(shown) else "")
    )
    for r in shown.to_dict("records"):
        print(
            f"  {r['direction']:<9} {r['cosine_before']:.4f} -> {r['cosine_after']:.4f}  {registry.short_name(r['model'])}  "
            f"[{r['category']}] {r['text_a']!r} / {r['text_b']!r}"
        )
    if len(shown) < len(crossed):
        print(f"  … {len(crossed) - len(shown)} more (--limit N prints more, --json lists them all)")
    return 0


def _biggest_first(crossed: pd.DataFrame) -> pd.DataFrame:
    """Crossed pairs ordered by the size of their change, largest first (ties keep the run's order)."""
    if crossed.empty:
        return crossed
    change = (crossed["cosine_after"] - crossed["cosine_before"]).abs()
    return crossed.loc[change.sort_values(ascending=False, kind="stable").index].reset_index(drop=True)


def cmd_export(args) -> int:
    from core.cli.outputs import output_file, remember_written
    from core.history.store import export_run

    # The history, the cache, a folder, a file the tool did not write: refused before the run is read.
    output_file(args.out, "--out", "history export")
    out = _store_call(export_run, args.run_id, args.out)
    remember_written("history export", Path(out))
    print(f"wrote {out}")
    return 0


def cmd_name(args) -> int:
    from core.history.store import name_run

    _store_call(name_run, args.run_id, args.name)
    print(f"run {args.run_id} named {args.name.strip()!r}" if args.name.strip() else f"run {args.run_id}: name removed")
    return 0


def cmd_pin(args) -> int:
    from core.history.store import pin_run

    _store_call(pin_run, args.run_id, args.pin)
    print(
        f"run {args.run_id} pinned: kept from deletion, and the History page's baseline for runs of the same pairs"
        if args.pin
        else f"run {args.run_id} unpinned"
    )
    return 0


def cmd_delete(args) -> int:
    from core.history.store import delete_run

    _store_call(delete_run, args.run_id)
    print(f"deleted run {args.run_id}")
    return 0


def _whole_number(lowest: int, what: str, hint: str = ""):
    """An argparse type: a whole number from ``lowest``, refused with a message saying what the number is."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = lowest - 1
        if value < lowest:
            raise argparse.ArgumentTypeError(f"{what} a whole number from {lowest}{hint}, got {text!r}")
        return value

    return parse


_positive_id = _whole_number(1, "a run id is", " (see `history list`)")
_list_limit = _whole_number(1, "--limit is how many of the newest runs to list:")
_crossed_limit = _whole_number(0, "--limit is how many crossed pairs to print:")


def _epilog(name: str) -> str:
    return "\n".join(["examples:", *(f"  {line}" for line in EXAMPLES[name])])


def register(subparsers) -> None:
    """Add ``history`` and its subcommands."""
    p = subparsers.add_parser(
        "history", help="runs stored by the CLI and the app: list, show, diff two, export to Parquet, name, pin, delete"
    )
    sub = p.add_subparsers(dest="history_command", required=True, metavar="{list,show,diff,export,name,pin,unpin,delete}")
    kw = {"formatter_class": argparse.RawDescriptionHelpFormatter}

    q = sub.add_parser("list", help="every stored run, newest first", epilog=_epilog("list"), **kw)
    q.add_argument("--limit", type=_list_limit, metavar="N", help="only the newest N")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_list)

    q = sub.add_parser(
        "show", help="one run: settings, models (revision, backend), per-category mean and failure rate", epilog=_epilog("show"), **kw
    )
    q.add_argument("run_id", type=_positive_id, metavar="ID")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_show)

    q = sub.add_parser(
        "diff",
        help="what changed from run ID_BEFORE to run ID_AFTER, per model and category, and the pairs that crossed the threshold",
        epilog=_epilog("diff"),
        **kw,
    )
    q.add_argument("before", type=_positive_id, metavar="ID_BEFORE")
    q.add_argument("after", type=_positive_id, metavar="ID_AFTER")
    q.add_argument("--threshold", type=float, help="one threshold for both runs (default: each run's own)")
    q.add_argument(
        "--limit",
        type=_crossed_limit,
        metavar="N",
        help=f"print at most N of the pairs that crossed the threshold, biggest change first (default {CROSSED_SHOWN}; "
        "with --json: all unless given)",
    )
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_diff)

    q = sub.add_parser("export", help="a run's per-pair results as a Parquet file", epilog=_epilog("export"), **kw)
    q.add_argument("run_id", type=_positive_id, metavar="ID")
    q.add_argument("--out", required=True, metavar="FILE.parquet", help="the file to write")
    q.set_defaults(func=cmd_export)

    q = sub.add_parser("name", help='give a run a name ("" removes it)', epilog=_epilog("name"), **kw)
    q.add_argument("run_id", type=_positive_id, metavar="ID")
    q.add_argument("name", metavar="NAME")
    q.set_defaults(func=cmd_name)

    for command, pin, text in (
        ("pin", True, "pin a run: kept from deletion, and the baseline runs of the same pairs are compared with"),
        ("unpin", False, "unpin a run"),
    ):
        q = sub.add_parser(command, help=text, epilog=_epilog(command), **kw)
        q.add_argument("run_id", type=_positive_id, metavar="ID")
        q.set_defaults(func=cmd_pin, pin=pin)

    q = sub.add_parser(
        "delete", help="delete a run with its results (a pinned run is kept: unpin it first)", epilog=_epilog("delete"), **kw
    )
    q.add_argument("run_id", type=_positive_id, metavar="ID")
    q.set_defaults(func=cmd_delete)
