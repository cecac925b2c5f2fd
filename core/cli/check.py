"""``cosine-probe check --config FILE.toml``: a CI gate on an embedding model's failure modes.

Exit codes: 0 every budget holds; 1 a budget is breached or could not be
measured (a model that did not load, a category missing from the data);
2 a bad config or command line (one ``error:`` line naming the key).
The schema is in ``core.gate.config``; ``docs/check-example.toml`` is an example.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from core.cli.common import CliError, default_models, embedding_cache, print_errors, print_progress, run_options
from core.cli.outputs import output_file, remember_written
from core.gate.budgets import STATUS_ERROR, STATUS_FAIL, STATUS_PASS
from core.gate.config import CheckConfig, ConfigError, load_config
from core.gate.run import GateRun, run_check, threshold_label
from core.models import registry

_LABEL = {STATUS_PASS: "PASS ", STATUS_FAIL: "BREACH", STATUS_ERROR: "ERROR"}


def _settings(config: CheckConfig, run: GateRun) -> dict[str, Any]:
    """What the history keeps about a gate run."""
    from core.history.sources import file_sha256, suite_source

    budgets = config.budgets
    return {
        "threshold": config.threshold,
        "threshold_mode": config.threshold_mode,
        "thresholds": run.thresholds,
        "calibration": {
            "method": config.calibration.method,
            "negatives": list(config.calibration.negatives),
            "max_fpr": config.calibration.max_fpr,
        },
        "sources": [suite_source(s) for s in config.suites] + [suite_source(str(f)) for f in config.files],
        "config": {"file": str(config.path), "sha256": file_sha256(config.path)},
        "budgets": {
            "max_failure_rate": dict(budgets.max_failure_rate),
            "min_control_auc": budgets.min_control_auc,
            "max_adversarial_win_rate": dict(budgets.max_adversarial_win_rate),
            "min_paired_accuracy": dict(budgets.min_paired_accuracy),
            "min_label_auc": budgets.min_label_auc,
        },
        "match_label": config.match_label,
        "backends": run.backends,
        "exit_code": run.exit_code,
        "outcomes": {s: sum(o.status == s for o in run.outcomes) for s in (STATUS_PASS, STATUS_FAIL, STATUS_ERROR)},
    }


def _print_outcomes(run: GateRun) -> None:
    for o in run.outcomes:
        print(f"{_LABEL[o.status]}  {registry.short_name(o.model):<22} {o.name:<40} {o.message}")
    statuses = [o.status for o in run.outcomes]
    held, breached, unmeasured = (statuses.count(s) for s in (STATUS_PASS, STATUS_FAIL, STATUS_ERROR))
    if run.exit_code == 0:
        print(f"\ncheck passed: all {held} budget(s) held")
    else:
        print(f"\ncheck FAILED: {breached} breached, {unmeasured} not measured, {held} held (of {len(statuses)})")


def cmd_check(args) -> int:
    from core.gate.junit import write_junit
    from core.gate.summary import summary_markdown

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    junit_path, summary_path = output_file(args.junit, "--junit", "check"), output_file(args.summary, "--summary", "check")
    models = list(config.models) or default_models()
    if not models:
        raise CliError("models: none given and no bundled model is installed; run `make setup`")
    quiet = args.quiet or args.json
    print(f"check {config.path.name}: {len(models)} model(s), thresholds {threshold_label(config)}", file=sys.stderr)
    try:
        run = run_check(config, models, cache=embedding_cache(args), options=run_options(args), progress=None if quiet else print_progress)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc
    if not quiet:
        print(file=sys.stderr)
    print_errors(run.errors)
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    run_id = None
    if not run.results.empty:
        from core.cli.history import record_history

        run_id = record_history("check", run.results, _settings(config, run), run.errors)
    # The outcomes are printed before any report is written: a report that cannot be written
    # (checked before the run; a disk may fill since) must not hide what the gate found.
    if args.json:
        doc = {
            "config": str(config.path),
            "exit_code": run.exit_code,
            "passed": run.exit_code == 0,
            "threshold_mode": config.threshold_mode,
            "thresholds": run.thresholds,
            "models": list(dict.fromkeys([*run.thresholds, *run.errors])),
            "errors": run.errors,
            "notes": run.notes,
            "history_run_id": run_id,
            "seconds": round(run.seconds, 3),
            "outcomes": [o.as_dict() for o in run.outcomes],
        }
        print(json.dumps(doc, indent=1))
    else:
        _print_outcomes(run)
    sys.stdout.flush()
    summary = None
    if summary_path is not None:
        summary = summary_markdown(
            run.outcomes,
            title=f"cosine-probe check ({config.path.name})",
            thresholds=run.thresholds,
            threshold_mode=threshold_label(config),
            notes=[*run.notes, *run.errors.values()],
        )
    writers = (
        ("junit", "--junit", junit_path, lambda p: write_junit(run.outcomes, p, run.seconds)),
        ("summary", "--summary", summary_path, lambda p: p.write_text(summary or "", encoding="utf-8")),
    )
    for label, flag, path, write in writers:
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:
            raise CliError(f"{flag}: cannot write {path} ({exc.strerror or type(exc).__name__}); the outcomes are above") from exc
        remember_written("check", path)
        print(f"wrote {label} {path}", file=sys.stderr)
    return run.exit_code


def register(subparsers) -> None:
    """Add ``check``."""
    p = subparsers.add_parser(
        "check",
        help="CI gate: run the config's models on its suites and check every budget (exit 0 held, 1 breached, 2 bad config)",
        description="Runs the models and pairs a TOML config names and checks its budgets: maximum failure rate per category, "
        "minimum AUC on the controls, maximum adversarial win rate per mode and minimum paired accuracy (retrieval probes). "
        "Exit 0 when every budget holds, 1 when one is breached or cannot be measured, 2 for a bad config.",
    )
    p.add_argument("--config", required=True, metavar="FILE.toml", help="the gate's config (schema: docs/check-example.toml)")
    p.add_argument("--junit", metavar="FILE.xml", help="write JUnit XML: one test case per budget per model")
    p.add_argument("--summary", metavar="FILE.md", help="write a Markdown summary (e.g. for $GITHUB_STEP_SUMMARY)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
    p.add_argument("--json", action="store_true", help="print the outcomes as one JSON document")
    p.set_defaults(func=cmd_check)
