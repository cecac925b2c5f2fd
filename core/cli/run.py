"""``run``: a shipped suite or a pairs file of any size, scored in chunks with a progress bar per model.

The pairs are checked (:mod:`core.files.chunks`, the one validation path,
chunk by chunk for a large file), staged in Parquet, and scored chunk by
chunk into ``pairs.parquet`` and ``pairs.csv`` (:mod:`core.scoring.chunked`);
the summary tables are computed from the written results, read back without
the text columns, never from a table held during scoring.  Progress goes to
stderr only (``--quiet`` silences it); with ``--json`` stdout holds one JSON
document.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from core import constants
from core.cli.common import (
    EXIT_NO_MODEL,
    CliError,
    add_model_options,
    count_arg,
    devices_line,
    embedding_cache,
    models_arg,
    print_errors,
    print_notes,
    run_options,
)
from core.cli.endpoints import announce_tokens
from core.cli.pairs_files import COLUMN_FLAGS, PairsArgError, add_pairs_file_options, is_shipped, refuse_file_options_for_suite
from core.cli.ray_run import add_engine_options
from core.files.errors import PairsFileError
from core.models import endpoint

if TYPE_CHECKING:
    from core.scoring.chunked import ChunkedResult

_TEXT_COLUMNS = (constants.COL_TEXT_A, constants.COL_TEXT_B)


class BarProgress:
    """One tqdm bar per model on stderr, in pairs, with pairs/s and the time left."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self._bar = None

    def start(self, model: str, total: int) -> None:
        from tqdm import tqdm

        from core.models.registry import short_name

        self._bar = tqdm(
            total=total,
            desc=short_name(model),
            unit="pair",
            file=sys.stderr,
            disable=self.quiet,
            dynamic_ncols=True,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} pairs [{elapsed}<{remaining}, {rate_fmt}]",
        )

    def advance(self, model: str, done: int) -> None:
        if self._bar is not None and done > self._bar.n:
            self._bar.update(done - self._bar.n)

    def finish(self, model: str) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _run_pairs(args) -> tuple[pd.DataFrame, dict]:
    """The pairs ``run`` scores (a shipped suite with its companions, or a checked file) and what was found; notes to stderr."""
    from core.cli.pairs_files import PairsArgError, is_shipped, keep_or_drop_hint, read_checked_file, refuse_file_options_for_suite
    from core.papers.suites import COMPANION_SUITES, SuiteError, load_suite

    source = args.suite
    try:
        if is_shipped(source):
            refuse_file_options_for_suite(args, source)
            pairs = load_suite(source)
            for extra in COMPANION_SUITES.get(source, ()):
                companion = load_suite(extra)
                print(
                    f"note: {source}: also running the {extra} suite ({len(companion)} pairs): its dynamic range normalizes the OOV deltas",
                    file=sys.stderr,
                )
                pairs = pd.concat([pairs, companion], ignore_index=True)
            return pairs, {}
        checked = read_checked_file(args, source)
    except (SuiteError, PairsArgError) as exc:
        raise CliError(str(exc)) from exc
    hint = keep_or_drop_hint(checked, args)
    rules = (
        f"{len(checked.violations)} pair(s) break the category rules (first: {checked.violations[0]}); `python -m core validate` lists them"
        if checked.violations
        else None
    )
    for note in [*checked.notes, *filter(None, [hint, rules])]:
        print(f"note: {source}: {note}", file=sys.stderr)
    found = {
        "notes": list(checked.notes),
        "identical": list(checked.identical),
        "mirrored": [list(m) for m in checked.mirrored],
        "dropped": list(checked.dropped),
        "rule_problems": [str(v) for v in checked.violations],
    }
    return checked.pairs, found


def _file_chunks(args, source: str, totals):
    from core.files.chunks import iter_checked_chunks

    columns = {
        role: v
        for role in (constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY, constants.COL_LABEL)
        if (v := getattr(args, f"col_{role}", None))
    }
    return iter_checked_chunks(
        Path(source).expanduser(),
        args.chunk_rows,
        columns=columns,
        header=not args.no_header,
        flags=COLUMN_FLAGS,
        encoding=getattr(args, "encoding", None),
        drop_identical=args.drop_identical,
        drop_mirrored=args.drop_mirrored,
        totals=totals,
    )


def _stage(args, staged: Path) -> tuple[int, dict]:
    """Check the pairs and write them to ``staged``; (pairs, what the file check found). Notes go to stderr."""
    from core.files.chunks import ChunkTotals
    from core.scoring.chunked import stage_pairs

    source = args.suite
    if is_shipped(source):
        try:
            refuse_file_options_for_suite(args, source)
        except PairsArgError as exc:
            raise CliError(str(exc)) from exc
        pairs, found = _run_pairs(args)
        return stage_pairs([pairs], staged), found
    totals = ChunkTotals()
    try:
        n = stage_pairs(_file_chunks(args, source, totals), staged)
    except PairsFileError as exc:
        raise CliError(f"{source}: {exc}") from exc
    flags = [
        flag
        for flag, found, dropping in (
            ("--drop-identical", totals.identical, args.drop_identical),
            ("--drop-mirrored", totals.mirrored, args.drop_mirrored),
        )
        if found and not dropping
    ]
    rules = (
        f"{len(totals.violations)} pair(s) break the category rules (first: {totals.violations[0]}); `python -m core validate` lists them"
        if totals.violations
        else None
    )
    for note in [*totals.notes, *filter(None, [f"{' or '.join(flags)} leave(s) them out" if flags else None, rules])]:
        print(f"note: {source}: {note}", file=sys.stderr)
    found = {
        "notes": totals.notes,
        "identical": totals.identical,
        "mirrored": [list(m) for m in totals.mirrored],
        "dropped": totals.dropped,
        "rule_problems": totals.violations,
        "rows_read": totals.rows_read,
    }
    return n, found


def run_command(args) -> int:
    """The ``run`` command (see the module docstring); exit 0, or 3 when no model produced results."""
    from core.cli.outputs import exclusive_folder, output_folder, remember_written
    from core.scoring.chunked import STAGED_PAIRS, score_staged

    if not 1 <= args.chunk_rows <= constants.RUN_MAX_CHUNK_PAIRS:
        raise CliError(
            f"--chunk-rows must be from 1 to {constants.RUN_MAX_CHUNK_PAIRS:,} (pairs held in memory at a time), got {args.chunk_rows:.3g}"
        )
    if getattr(args, "match_label", None) is not None and not args.match_label.strip():
        raise CliError("--match-label is empty; name the label value that means 'same meaning' (e.g. 1 or entailment)")
    models = models_arg(args.models)
    options = run_options(args)  # a bad --ray-actors is refused before the file is read
    if not is_shipped(args.suite) and not os.path.lexists(Path(args.suite).expanduser()):
        raise CliError(f"no suite named {args.suite!r} and no such file; suites: {', '.join(constants.SUITES)}, {constants.SUITE_ALL}")
    out = output_folder(args.out, "--out", "run", (constants.RESULTS_CSV, constants.RESULTS_PARQUET, "summary.json"))
    assert out is not None  # --out is required
    with exclusive_folder(out, "--out", "run"):
        staged = out / f".{os.getpid()}.{STAGED_PAIRS}"  # per run: a second run never touches this one's input
        try:
            n_pairs, found = _stage(args, staged)
            _check_match_label(args, staged)
            print(f"{n_pairs} pairs × {len(models)} models", file=sys.stderr)
            cache = embedding_cache(args)
            if any(endpoint.is_endpoint(m) for m in models):
                texts = pd.read_parquet(staged, columns=list(_TEXT_COLUMNS))
                announce_tokens(models, [*texts[constants.COL_TEXT_A], *texts[constants.COL_TEXT_B]], cache, args.price_per_million_tokens)
            # --engine ray is in the options: each chunk's missing texts are encoded on Ray into the cache first.
            result = score_staged(
                staged, models, out, cache=cache, chunk_rows=args.chunk_rows, options=options, progress=BarProgress(args.quiet)
            )
        finally:
            staged.unlink(missing_ok=True)
        print_errors(result.errors)
        print_notes(result.notes)
        if not result.models:
            print("error: no model produced results", file=sys.stderr)
            return EXIT_NO_MODEL
        summary, tables, suites = _summary(args, result, found)
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        remember_written("run", out / constants.RESULTS_CSV, out / constants.RESULTS_PARQUET, out / "summary.json")
        _record(args, result, out, suites)
        written = f"{out / constants.RESULTS_CSV}, {out / constants.RESULTS_PARQUET} and {out / 'summary.json'}"
        if args.json:
            print(json.dumps(summary, indent=1))
            print(f"wrote {written}", file=sys.stderr)
        else:
            with pd.option_context("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
                for name, table in tables.items():
                    if name.startswith("oov_deltas"):
                        continue
                    print(f"\n== {name} ==")
                    print(table.to_string(index=False) if not table.empty else "(empty)")
            for finding in summary.get("labels", {}).get("findings", []):
                print(f"\n{finding}")
            print(f"\nwrote {written}")
        print(f"device: {devices_line(result.devices)}", file=sys.stderr)
    return 0


def _check_match_label(args, staged: Path) -> None:
    """``--match-label`` needs a label column; say so before any model loads."""
    import pyarrow.parquet as pq

    if getattr(args, "match_label", None) is not None and constants.COL_LABEL not in pq.ParquetFile(staged).schema_arrow.names:
        raise CliError(f"--match-label {args.match_label!r}: {args.suite} has no label column (map one with --label COL)")


def _labels(args, frame: pd.DataFrame) -> tuple[dict | None, dict[str, pd.DataFrame]]:
    """The label report (``core.probes.labels``) as summary.json's ``labels`` and as CLI tables; (None, {}) without labels."""
    from core.models.registry import short_name
    from core.probes.labels import KIND_GRADED, KIND_NONE, label_report, label_summary

    if constants.COL_LABEL not in frame.columns:
        return None, {}
    report = label_report(frame, args.threshold, getattr(args, "match_label", None))
    kind = report["kind"].iloc[0]["kind"]
    if kind == KIND_NONE:
        return None, {}
    if kind == KIND_GRADED:
        # A gold score per pair: its correlation with cosine, not one row per distinct score.
        from core.scoring.tables import label_correlation

        correlation = label_correlation(frame)
        return {"kind": kind, "correlation": json.loads(correlation.to_json(orient="records"))}, {
            "labels: correlation with cosine": correlation
        }
    tables = {"labels: cosine by label": report["by_label"]}
    if not report["classifier"].empty:
        tables["labels: cosine as a classifier of the label"] = report["classifier"]
    return label_summary(report, short_name), tables


def _summary(args, result: ChunkedResult, found: dict) -> tuple[dict, dict[str, pd.DataFrame], list[str]]:
    """summary.json's document, the summary tables and the suites, from the written results (texts not read back)."""
    import pyarrow.parquet as pq

    from core.papers.summary import summarize
    from core.scoring.chunked import read_results

    names = [c for c in pq.ParquetFile(result.parquet).schema_arrow.names if c not in _TEXT_COLUMNS]
    frame = read_results(result.parquet, names)
    tables = summarize(frame, args.threshold)
    label_doc, label_tables = _labels(args, frame)
    tables.update(label_tables)
    suites = sorted(set(read_results(result.parquet, [constants.COL_SUITE])[constants.COL_SUITE]))
    summary = {
        "threshold": args.threshold,
        "suite": args.suite,
        "suites": suites,
        "file_check": found,
        "models": result.models,
        "errors": result.errors,
        "seconds": round(result.seconds, 3),
        "pairs": result.n_pairs,
        "rows": result.n_rows,
        "results": {"parquet": str(result.parquet), "csv": str(result.csv)},
        "encoding": {
            m: {
                "unique_texts": t.unique_texts,
                "encoded": t.encoded,
                "from_cache": t.from_cache,
                "truncated": t.truncated,
                "device": t.device,
                "backend": t.backend,
                "batch_size": t.batch_size,
                "notes": t.notes,
                "weights_loaded": t.weights_loaded,
                **({"api_tokens": t.api_tokens} if t.api_tokens is not None else {}),
            }
            for m, t in result.tallies.items()
            if m in result.models
        },
        "tables": {name: json.loads(t.to_json(orient="records")) for name, t in tables.items()},
    }
    if label_doc is not None:
        summary["labels"] = label_doc
    return summary, tables, suites


def _record(args, result: ChunkedResult, out: Path, suites: list[str]) -> None:
    """Store the run in the history when it is small enough to hold in memory; say so when it is not
    (:meth:`core.scoring.chunked.ChunkedResult.history_record`)."""
    from core.cli.history import record_result_history
    from core.history.sources import suite_source

    # A file is kept by path and hash; a shipped suite (with any companion it brought) by name and hash.
    names = (args.suite,) if Path(args.suite).expanduser().is_file() else suites
    settings = {
        "threshold": args.threshold,
        "sources": [suite_source(n) for n in names],
        "out": str(out),
        "device": args.device,
        **({"match_label": args.match_label} if getattr(args, "match_label", None) is not None else {}),
    }
    record_result_history("run", args.suite, result, settings)


def register(subparsers) -> None:
    """Add the ``run`` command."""
    p = subparsers.add_parser("run", help="run a suite (oov, baseline, failure-modes, all) or a pairs file")
    p.add_argument("--suite", required=True, help="suite name or path to a CSV/TSV/JSONL/JSON/Parquet pairs file of any size")
    p.add_argument("--out", required=True, help="output folder for pairs.parquet, pairs.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--chunk-rows",
        type=count_arg,
        default=constants.RUN_CHUNK_PAIRS,
        metavar="N",
        help="pairs read, encoded, scored and written at a time: memory stays bounded whatever the file's size (default %(default)s)",
    )
    add_model_options(p)
    add_pairs_file_options(p)
    p.add_argument(
        "--match-label",
        metavar="VALUE",
        help="with --label: the label value that means 'same meaning' (every other label is then no match); "
        "default: 1, true, yes, paraphrase, entailment, … match and 0, false, no, contradiction, neutral, … do not",
    )
    add_engine_options(p)
    p.set_defaults(func=run_command)
