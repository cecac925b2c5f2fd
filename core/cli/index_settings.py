"""``index-settings``: the suites and a user's pairs or triples scored with vectors as an index keeps them (``docs/index-settings.md``).

float32, float16, int8 (faiss SQ8, per-dimension or global calibration, float
query), binary (Hamming, or a Hamming shortlist rescored in float) and
truncated dimensions (:mod:`core.probes.index_settings`): a finding per model
first, then every failure rate, win rate and recall per setting with its
interval, and its change against float32.  Binary settings score on another
scale: their rates are at their own threshold, never at the cosine one, and
the output says so.  ``--out FILE`` writes the tidy long table as CSV.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

import pandas as pd

from core import constants
from core.cli.common import (
    EXIT_NO_MODEL,
    CliError,
    add_model_options,
    embedding_cache,
    models_arg,
    print_errors,
    print_progress,
    run_options,
)
from core.models import registry

if TYPE_CHECKING:
    from core.probes.index_settings import IndexSettingsResult

EXAMPLES = (
    "cosine-probe index-settings --models all-MiniLM-L6-v2 --suite failure-modes",
    "cosine-probe index-settings --suite failure-modes retrieval --settings float32,int8,binary-rescore,dims:128 --out settings.csv",
    "cosine-probe index-settings --pairs my_pairs.csv --triples my_triples.jsonl --json",
    "cosine-probe index-settings --store 'lancedb://kb.lance?table=passages' --models all-MiniLM-L6-v2 --queries q.txt",
)
PROBE_SUITES = (constants.SUITE_FAILURE_MODES, constants.SUITE_RETRIEVAL)


def _run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What every index-settings run takes from the command line: the cache, the encode options, progress, threshold, seed."""
    return {
        "cache": embedding_cache(args),
        "options": run_options(args),
        "progress": None if args.quiet else print_progress,
        "threshold": args.threshold,
        "seed": args.seed,
    }


def register(subparsers) -> None:
    """Add the ``index-settings`` command."""
    from core.probes.index_settings import DEFAULT_SETTINGS, PRECISIONS

    p = subparsers.add_parser(
        "index-settings",
        help="what float16, int8, binary and truncated vectors do to every failure rate, win rate and recall",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--suite",
        nargs="+",
        choices=PROBE_SUITES,
        help="the shipped suites to score (default: failure-modes, unless --pairs or --triples is given)",
    )
    p.add_argument("--pairs", metavar="FILE", help="your pairs file (CSV, TSV, JSON, JSONL): its failure rate per category")
    p.add_argument("--triples", metavar="FILE", help="your triples file (anchor, positive, negatives): win rate and recall@1/5/10")
    p.add_argument(
        "--settings",
        metavar="LIST",
        default=",".join(DEFAULT_SETTINGS),
        help="comma list of "
        + "; ".join(f"{s.name} ({s.keeps}{'' if s.scale.cosine else ', ' + s.scale.name + ' scale'})" for s in PRECISIONS)
        + "; dims:D (the first D dimensions) (default: %(default)s)",
    )
    p.add_argument(
        "--out", metavar="FILE", help="write the tidy table (setting, model, probe, metric, mode, value, ci_low, ci_high, n, change) as CSV"
    )
    p.add_argument(
        "--store",
        metavar="URI",
        help="score with a vector store's stored vectors (read-only; docs/stores.md): --pairs FILE (texts the store holds take "
        "its vectors, the others the named model's) and --queries FILE (each query's top 10 over the stored passages, "
        "per setting against float32); --models names the one model that made the vectors",
    )
    p.add_argument(
        "--vectors",
        metavar="FILE",
        help="score with vectors a pipeline made (Parquet or Arrow with a text and a vector column, or .npy with FILE.txt beside "
        "it), as --store scores a store's: --pairs FILE and --queries FILE; --models names the one model that made them",
    )
    p.add_argument(
        "--queries",
        metavar="FILE",
        help="--store or --vectors: queries (one a line, or a CSV/JSONL with a query column) ranked over the stored passages",
    )
    p.add_argument("--text-column", metavar="COL", help="--store: the column holding the passages (default: found by type and name)")
    p.add_argument("--vector-column", metavar="COL", help="--store: the column holding the vectors (default: found by type and name)")
    p.add_argument("--seed", type=int, default=constants.BOOTSTRAP_SEED, help="seed of the bootstrap intervals (default %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(p)
    p.set_defaults(func=cmd_index_settings)


def _pairs(path: str) -> pd.DataFrame:
    from core.papers.suites import SuiteError, load_suite_with_notes

    try:
        frame, notes = load_suite_with_notes(path)
    except SuiteError as exc:
        raise CliError(str(exc)) from exc
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return frame


def _triples(path: str):
    from core.files.errors import PairsFileError
    from core.files.triples import TRIPLE_FLAGS, read_triples

    try:
        triples = read_triples(path, {}, flags=TRIPLE_FLAGS)
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    for note in triples.notes:
        print(f"note: {note}", file=sys.stderr)
    return triples


def _record(args, result: IndexSettingsResult, sources: list[str]) -> None:
    """The pairs probes' pairs (float32 cosine, each setting's score beside it) and the whole table in the run history."""
    from core.cli.history import record_result_history
    from core.history.sources import suite_source

    settings = {"threshold": args.threshold, "sources": [suite_source(s) for s in sources], "seed": args.seed}
    record_result_history("index-settings", sources[0] if sources else "index-settings", result, settings)


def cmd_index_settings(args) -> int:
    from core.cli.outputs import output_file, write_output
    from core.files.export import safe_frame
    from core.probes.index_settings import parse_settings, run_index_settings

    out = output_file(args.out, "--out", "index-settings")
    try:
        settings = parse_settings(args.settings.split(","))
    except ValueError as exc:
        raise CliError(f"--settings: {exc}") from exc
    if args.store is not None and args.vectors is not None:
        raise CliError("give --store URI or --vectors FILE, not both")
    if args.store is not None or args.vectors is not None:
        return _through_store(args, settings, out)
    given = [f for f, v in (("--queries", args.queries), ("--text-column", args.text_column), ("--vector-column", args.vector_column)) if v]
    if given:
        raise CliError(f"{', '.join(given)} go(es) with --store URI or --vectors FILE; give one")
    suites = list(args.suite or ([] if args.pairs or args.triples else [constants.SUITE_FAILURE_MODES]))
    pairs: dict[str, pd.DataFrame] = {}
    retrieval: Any = None
    if constants.SUITE_FAILURE_MODES in suites:
        pairs[constants.SUITE_FAILURE_MODES] = _pairs(constants.SUITE_FAILURE_MODES)
    if constants.SUITE_RETRIEVAL in suites:
        from core.probes.retrieval.suite_files import load_retrieval_suite

        retrieval = load_retrieval_suite()
    if args.pairs:
        pairs[args.pairs] = _pairs(args.pairs)
    triples = _triples(args.triples) if args.triples else None
    models = models_arg(args.models)
    result = run_index_settings(
        models,
        settings=settings,
        pairs=pairs,
        retrieval=retrieval,
        triples=triples,
        **_run_settings(args),
    )
    if not args.quiet:
        print(file=sys.stderr)
    print_errors(result.errors)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if result.table.empty:
        print("error: no model produced results", file=sys.stderr)
        return EXIT_NO_MODEL
    if out is not None:
        write_output(out, safe_frame(result.table).to_csv(index=False), "--out", "index-settings")
    _record(args, result, [*suites, *([args.pairs] if args.pairs else []), *([args.triples] if args.triples else [])])
    if args.json:
        doc = {"threshold": args.threshold, "settings": list(result.settings), **_said(result, settings)}
        doc["rows"] = json.loads(result.table.to_json(orient="records"))
        doc["errors"] = result.errors
        print(json.dumps(doc, indent=1))
        return 0
    _print_table(result, settings, f"threshold {args.threshold:g}; value [95% interval] per setting")
    if out is not None:
        print(f"note: wrote {out}", file=sys.stderr)
    return 0


def _said(result: IndexSettingsResult, settings) -> dict:
    """The findings and the binary scale's sentence, for ``--json`` (what the text output prints first)."""
    from core.probes.index_settings import findings, scale_matters, scale_note

    note = scale_note(settings) if scale_matters(result.table) else None
    return {"findings": findings(result.table, registry.short_name), "scale_note": note}


def _print_table(result: IndexSettingsResult, settings, heading: str) -> None:
    """The findings first, the scale of binary settings, then the wide table (what both the suites and a store print)."""
    from core.probes.index_settings import wide_table

    said = _said(result, settings)
    for line in [*said["findings"], *([said["scale_note"]] if said["scale_note"] else [])]:
        print(line)
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.max_rows", 2000, "display.max_colwidth", 40):
        print(heading)
        print(wide_table(result.table, registry.short_name).to_string(index=False))


def _through_store(args, settings, out) -> int:
    """``index-settings --store URI``: the user's pairs and queries scored with the store's vectors under each setting."""
    from core.cli.outputs import write_output
    from core.cli.store_source import check_line, read_queries, run_on_store
    from core.cli.vectors_source import check_line as vectors_check_line
    from core.files.export import safe_frame
    from core.stores.settings import store_index_settings

    flag = "--store" if args.store is not None else "--vectors"
    others = [f for f, v in (("--suite", args.suite), ("--triples", args.triples)) if v]
    if others:
        raise CliError(f"{flag} scores --pairs FILE and --queries FILE against its vectors: leave out {', '.join(others)}")
    if not args.pairs and not args.queries:
        what = "stored" if args.store is not None else "given"
        raise CliError(f"{flag} needs --pairs FILE or --queries FILE (or both): what to score with the {what} vectors")
    pairs = {args.pairs: _pairs(args.pairs)} if args.pairs else {}
    queries = read_queries(args)
    if args.vectors is not None:
        result, check, store = _on_vectors(args, settings, pairs, queries)
    else:
        result, check, store = run_on_store(
            args,
            lambda handle: (
                *store_index_settings(
                    handle,
                    args.models[0],
                    settings,
                    pairs=pairs,
                    queries=queries,
                    **_run_settings(args),
                ),
                handle.uri.display,
            ),
        )
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if out is not None:
        write_output(out, safe_frame(result.table).to_csv(index=False), "--out", "index-settings")
    if args.json:
        doc = {"store": store, "threshold": args.threshold, "settings": list(result.settings), **_said(result, settings)}
        doc["rows"] = json.loads(result.table.to_json(orient="records"))
        print(json.dumps(doc, indent=1))
        return 0
    print(check_line(check, store) if args.vectors is None else vectors_check_line(check, store))
    _print_table(result, settings, f"threshold {args.threshold:g}; value [95% interval] per setting; vectors from {store}")
    if out is not None:
        print(f"note: wrote {out}", file=sys.stderr)
    return 0


def _on_vectors(args, settings, pairs, queries):
    """``index-settings --vectors FILE``: the one index-settings run over given vectors, on a vectors file's."""
    from core.cli.vectors_source import one_model, read_vectors_arg
    from core.probes.vector_settings import vectors_file_index_settings

    model = one_model(args, "scoring")
    source = read_vectors_arg(args)
    try:
        result, check = vectors_file_index_settings(
            source,
            str(model),
            settings,
            pairs=pairs,
            queries=queries,
            **_run_settings(args),
        )
    except ValueError as exc:
        if not args.quiet:
            print(file=sys.stderr)
        raise CliError(str(exc)) from exc
    if not args.quiet:
        print(file=sys.stderr)
    from pathlib import Path

    return result, check, Path(args.vectors).name
