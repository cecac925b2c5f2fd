"""``audit``: a corpus's close pairs, its confusable twins and their risk (``docs/audit.md``).

Every passage is encoded once per model (the embedding cache: a second run
encodes nothing), every pair above ``--threshold`` is found exactly and
classified (twin with its failure mode, near-duplicate, several differences,
other difference),
and the risk is printed per model and mode with bootstrap intervals, then the
findings, worst pairs first.  ``--out DIR`` gets ``close-pairs.parquet``,
``close-pairs.csv`` and ``summary.json``; the run goes into the history.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
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
    print_notes,
    print_progress,
    run_options,
)
from core.cli.outputs import output_file, output_folder, remember_written
from core.cli.ray_run import add_engine_options
from core.cli.store_source import STORE_EXAMPLES, add_store_options, check_store_flags, cmd_audit_store
from core.cli.vectors_source import VECTORS_EXAMPLE, VECTORS_HELP
from core.models import registry
from core.words import passage_key, passage_keys

if TYPE_CHECKING:
    from core.audit.run import AuditResult

EXPORT_DROP = ("index_a", "index_b")
DEDUP_REMOVALS = "dedup-removals.csv"
DEDUP_OUTPUTS = ("keep.csv", DEDUP_REMOVALS)
WORST_SHOWN = 8  # removals printed per worst cluster
# A corpus for the audit may be larger than an upload (the page's limit); the file's size still bounds it.
MAX_CORPUS_ROWS = 2_000_000
MAX_CORPUS_MB = 1024.0
SHOWN = [
    "model",
    "mode",
    "twin_pairs",
    "passages_with_twin",
    "twin_share",
    "twin_share_ci_low",
    "twin_share_ci_high",
    "query_twin_top5",
    "twin_first",
]

AUDIT_OUTPUTS = ("close-pairs.parquet", "close-pairs.csv", "summary.json")
"""What ``audit --out DIR`` writes: replaced only where the tool wrote them (``core.cli.outputs``)."""


def register(subparsers) -> None:
    """Add the ``audit`` command."""
    p = subparsers.add_parser("audit", help="your corpus: the passages a retriever cannot tell apart (confusable twins), with their risk")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", metavar="FILE", help="passages, one per line (.txt) or a text column (CSV, TSV, JSON, JSONL)")
    source.add_argument("--beir", metavar="DIR", help="a BEIR folder: its corpus, and its judged queries (twin_first then uses the qrels)")
    source.add_argument(
        "--planted",
        choices=("dev", "heldout"),
        help="the shipped corpus with planted twins (docs/audit.md): also prints the twin finder's recall and precision per mode",
    )
    source.add_argument("--vectors", metavar="FILE", help=VECTORS_HELP)
    p.add_argument(
        "--queries", metavar="FILE", help="queries (one per line or a query column): how often a top 5 holds a passage and its twin"
    )
    p.add_argument("--split", default=None, help="--beir: the qrels split (default: test)")
    p.add_argument("--out", metavar="DIR", help="write close-pairs.parquet, close-pairs.csv and summary.json here")
    p.add_argument(
        "--judge",
        metavar="MODEL",
        help="an NLI cross-encoder (Hugging Face id or folder) reads every twin pair: how many it calls "
        "contradictions (the audit runs without it, saying so, where it cannot load)",
    )
    p.add_argument(
        "--judge-decides",
        action="store_true",
        help="with --judge: a twin the judge does not read as a contradiction is counted 'other' "
        "(the rules decide where the judge cannot load)",
    )
    p.add_argument(
        "--approximate",
        action="store_true",
        help="find close pairs with an approximate index (faiss HNSW) and print its recall "
        "against exact search on a sample (default: exact below 200,000 passages, approximate from there)",
    )
    p.add_argument(
        "--max-pairs",
        type=int,
        default=2_000_000,
        metavar="N",
        help="refuse a threshold that lets more close pairs through per model (default %(default)s)",
    )
    p.add_argument(
        "--dedup",
        metavar="DEDUP",
        help="--corpus: a dedup run's decisions (CSV or Parquet of id,cluster_id or id,duplicate_of; the corpus needs an id column): "
        "what the run deletes that is not a copy, and keep.csv with one passage per meaning (into --out, else here)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_store_options(p, source)
    add_engine_options(p)
    add_model_options(p)
    p.epilog = (
        "examples:\n  cosine-probe audit --corpus data/corpora/wordnet-adjectives.csv --threshold 0.8 --out audit/\n"
        "  cosine-probe audit --corpus kb.txt --queries questions.txt --models all-MiniLM-L6-v2 --json\n"
        "  cosine-probe audit --planted heldout --models all-MiniLM-L6-v2\n"
        "  cosine-probe audit --corpus data/corpora/wordnet-adjectives.csv --dedup data/corpora/wordnet-adjectives-dedup.csv --out audit/\n"
        f"  {STORE_EXAMPLES[1]}\n"
        f"  {VECTORS_EXAMPLE}\n"
        "  RAY_ADDRESS=head:6379 cosine-probe audit --corpus kb.txt --engine ray   # encode on a Ray cluster"
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.set_defaults(func=cmd_audit)


def _read(path: str, kind: str) -> list[str]:
    from core.files.errors import PairsFileError
    from core.files.texts import TEXT_COLUMNS, read_texts

    try:
        found = read_texts(path, TEXT_COLUMNS[kind], what=kind, max_rows=MAX_CORPUS_ROWS, max_mb=MAX_CORPUS_MB)
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    print_notes(found.notes)
    return found.texts


def _beir(args) -> tuple[list[str], list[str], list[str], dict[int, set[int]], list[str]]:
    """Passages, their ids, the judged queries, qrels as indices, and the files read."""
    from core.files.beir import CORPUS_FILE, DEFAULT_SPLIT, QRELS_FOLDER, QUERIES_FILE, read_beir
    from core.files.errors import PairsFileError

    split = args.split or DEFAULT_SPLIT
    try:
        folder = read_beir(args.beir, split)
        texts, ids = [], []
        for chunk in folder.corpus_chunks():
            texts += chunk.texts
            ids += chunk.ids
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    print_notes(folder.notes)
    # Repeated texts are one passage (the audit's rule); a qrel names the passage its text became.
    first: dict[str, int] = {}
    for text in texts:
        first.setdefault(passage_key(text), len(first))
    index_of = {pid: first[passage_key(t)] for pid, t in zip(ids, texts, strict=True) if passage_key(t)}
    query_ids = list(folder.queries)
    qrels = {q: {index_of[p] for p in folder.qrels.get(qid, {}) if p in index_of} for q, qid in enumerate(query_ids)}
    beir = Path(folder.folder)
    sources = [str(beir / CORPUS_FILE), str(beir / QUERIES_FILE), str(beir / QRELS_FOLDER / f"{split}.tsv")]
    return texts, ids, [folder.queries[q] for q in query_ids], qrels, sources


def _write(out: Path, pairs: pd.DataFrame, doc: dict[str, Any]) -> None:
    from core.files.export import safe_frame

    exported = pairs.drop(columns=list(EXPORT_DROP))
    try:
        exported.to_parquet(out / "close-pairs.parquet", index=False)
        safe_frame(exported).to_csv(out / "close-pairs.csv", index=False)
        (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from exc
    remember_written("audit", *(out / name for name in AUDIT_OUTPUTS))


def _print(summary: pd.DataFrame, said) -> None:
    """The findings as a person reads them (lead sentence, the table of every model, notes, worst pairs), then the per-mode numbers."""
    from core.audit.findings import SHARE_COLUMNS, mode_words, summary_words

    print(said.lead)
    print()
    print(said.words_table().to_string(index=False))
    for line in (*said.notes, *said.worst):
        print(line)
    shown = summary[[c for c in SHOWN if c in summary.columns]]
    shown = shown.assign(model=shown[constants.COL_MODEL].map(registry.short_name), mode=shown["mode"].map(mode_words))
    if summary["n_queries"].fillna(0).eq(0).all():
        shown = shown.drop(columns=["query_twin_top5", "twin_first"])
    shown = shown.assign(**{c: shown[c].map(lambda x: "—" if x != x else f"{100 * x:.1f}%") for c in shown.columns if c in SHARE_COLUMNS})
    print()
    print("Per model and failure mode (share of passages with a twin, 95% bootstrap CI):")
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(shown.rename(columns=summary_words(said.judged)).to_string(index=False))


def _planted_lines(scores: pd.DataFrame, split: str) -> list[str]:
    """The twin finder on the planted corpus, one line per model and mode."""
    lines = [
        f"Planted twins ({split} split): recall = planted pairs found as twins of their mode above the threshold; "
        "precision = pairs flagged with a mode that are planted pairs."
    ]
    for row in scores.to_dict(orient="records"):
        lines.append(
            f"  {registry.short_name(str(row['model']))} {row['mode']}: recall {row['found']}/{row['planted']} = {row['recall']:.3f}, "
            f"precision {row['correct']}/{row['flagged']} = {row['precision']:.3f}"
        )
    return lines


def _dedup_inputs(args, out: Path | None):
    """The corpus with its ids and the dedup run, both checked before any model runs; and keep.csv's path."""
    from core.audit.dedup import KEEP_FILE, read_dedup, read_id_corpus
    from core.files.errors import PairsFileError

    keep = (out or Path.cwd()) / KEEP_FILE
    if out is None:  # keep.csv lands here: the one rule of every output (only the tool's own file is replaced)
        output_file(str(keep), "keep.csv", "audit")
    try:
        corpus = read_id_corpus(args.corpus, max_rows=MAX_CORPUS_ROWS, max_mb=MAX_CORPUS_MB)
        run = read_dedup(args.dedup, corpus.ids, max_rows=MAX_CORPUS_ROWS, max_mb=MAX_CORPUS_MB)
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    print_notes([*corpus.notes, *run.notes])
    return corpus, run, keep


def _dedup_report(corpus, run, pairs: pd.DataFrame, keep: Path, out: Path | None, quiet: bool) -> tuple[dict[str, Any], list[str]]:
    """Guard the run and write keep.csv (and the removals into ``out``): its JSON, and its printed lines (table, findings,
    worst clusters side by side)."""
    from core.audit import dedup

    guard = dedup.guard_dedup(corpus, run, progress=None if quiet else print_progress)
    if not quiet:
        print(file=sys.stderr)
    findings = dedup.dedup_findings(guard)
    cosines = dedup.removal_cosines(guard.removals, pairs)
    worst = guard.worst()
    try:
        guard.keep_frame().to_csv(keep, index=False)
        if out is not None:
            from core.files.export import safe_frame

            safe_frame(guard.removals).to_csv(out / DEDUP_REMOVALS, index=False)
    except OSError as exc:
        raise CliError(f"cannot write to {keep.parent}: {exc.strerror or exc}") from exc
    remember_written("audit", keep, *([out / DEDUP_REMOVALS] if out is not None else []))
    with pd.option_context("display.width", 220, "display.float_format", "{:.3f}".format):
        table = guard.summary.to_string(index=False)
    lines = ["", f"== the dedup run's removals ({run.shape} file), by what each deletes against the passage it keeps ==", table, ""]
    lines += findings
    shown, listed = "", 0
    for row in worst.to_dict(orient="records"):
        cluster, removed = str(row[dedup.COL_CLUSTER]), str(row[dedup.COL_REMOVED_ID])
        lost = int((worst[dedup.COL_CLUSTER] == cluster).sum())
        if cluster != shown:
            shown, listed = cluster, 0
            lines.append(f"\ncluster {cluster}: the run keeps {row[dedup.COL_KEPT_ID]} and deletes {lost} other meaning(s)")
        listed += 1
        if listed > WORST_SHOWN:
            if listed == WORST_SHOWN + 1:
                lines.append(f"  ... and {lost - WORST_SHOWN} more ({DEDUP_REMOVALS} in --out lists every removal)")
            continue
        kept_text, removed_text = dedup.marked_pair(str(row[dedup.COL_KEPT_TEXT]), str(row[dedup.COL_REMOVED_TEXT]))
        mine = cosines[(cosines[dedup.COL_CLUSTER] == cluster) & (cosines[dedup.COL_REMOVED_ID] == removed)]
        near = "".join(f"; cosine {c:.3f} ({registry.short_name(str(m))})" for m, c in zip(mine["model"], mine["cosine"], strict=True))
        mode = str(row[dedup.COL_MODE]).replace("_", " ")
        what = f"{row[dedup.COL_KIND]}, {mode}" if mode else str(row[dedup.COL_KIND])
        lines.append(f"  keeps   {row[dedup.COL_KEPT_ID]}: {kept_text}")
        lines.append(f"  deletes {removed} ({what}{near}): {removed_text}")
    doc = {
        "shape": run.shape,
        "clusters": len(run.clusters),
        "removals": len(guard.removals),
        "run_keeps": guard.run_keeps,
        "guard_keeps": len(guard.keep),
        "keep_file": str(keep),
        "summary": json.loads(guard.summary.to_json(orient="records")),
        "worst": json.loads(worst.drop(columns=[dedup.COL_GUARD_KEEPS]).to_json(orient="records")),
        "findings": findings,
    }
    return doc, lines


def _note_lines(scores: pd.DataFrame, split: str) -> list[str]:
    """The pair classifier on the templated notes (no model: the kinds alone), one line per mode, kind and decoy type."""
    lines = [
        f"Templated notes ({split} split; shipping notices and lab reports with one edit, several edits and decoys; "
        "the pair classifier alone, every pair of a note's group):"
    ]
    for row in scores.to_dict(orient="records"):
        if row["by"] == "decoy":
            lines.append(f"  decoy {row['name']}: {row['found']}/{row['n']} = {row['recall']:.3f} never called what it is not")
        else:
            lines.append(
                f"  {row['by']} {row['name']}: recall {row['found']}/{row['n']} = {row['recall']:.3f}, "
                f"precision {row['correct']}/{row['flagged']} = {row['precision']:.3f}"
            )
    return lines


def cmd_audit(args) -> int:
    """Audit the corpus; print the risk and findings (or one JSON document); write ``--out``."""
    from core.audit.neighbours import TooManyPairs
    from core.audit.run import audit_corpus
    from core.cluster.session import RayUnavailable

    if args.dedup is not None and args.corpus is None:
        raise CliError("--dedup goes with --corpus FILE (a corpus with an id column)")
    if args.store is not None:
        return cmd_audit_store(args)
    check_store_flags(args)
    if args.vectors is not None:
        return cmd_audit_vectors(args)
    if args.split is not None and args.beir is None:
        raise CliError("--split needs a --beir DIR; give one")
    if args.beir is not None and args.queries is not None:
        raise CliError("--queries goes with --corpus; a --beir folder brings its own queries")
    if args.max_pairs < 1:
        raise CliError(f"--max-pairs must be at least 1, got {args.max_pairs}")
    options = run_options(args)  # a bad --ray-actors is refused before anything is read
    if args.judge_decides and args.judge is None:
        raise CliError("--judge-decides needs --judge MODEL (an NLI cross-encoder)")
    # Before the run: a report that cannot be written must not cost it first.
    out = output_folder(args.out, "--out", "audit", AUDIT_OUTPUTS + (DEDUP_OUTPUTS if args.dedup is not None else ()))
    qrels = planted = guarded = None
    if args.dedup is not None:
        guarded = _dedup_inputs(args, out)
    if args.beir is not None:
        passages, ids, queries, qrels, sources = _beir(args)
    elif args.planted is not None:
        from core.audit.planted import planted_corpus

        if args.queries is not None:
            raise CliError("--queries goes with --corpus, not --planted")
        planted = planted_corpus(args.planted)
        passages, queries, ids, sources = planted.passages, [], None, []
    else:
        queries = _read(args.queries, "queries") if args.queries else []
        # With a dedup run the corpus's own ids name the passages, so the audit's pairs and the run's clusters agree.
        passages, ids = (guarded[0].texts, guarded[0].ids) if guarded is not None else (_read(args.corpus, "corpus"), None)
        sources = [args.corpus, *([args.queries] if args.queries else []), *([args.dedup] if args.dedup else [])]
    models = models_arg(args.models)
    try:
        result = audit_corpus(
            passages,
            models,
            args.threshold,
            ids=ids,
            queries=queries,
            qrels=qrels,
            cache=embedding_cache(args),
            options=options,
            progress=None if args.quiet else print_progress,
            max_pairs=args.max_pairs,
            approximate=True if args.approximate else None,
        )
    except (TooManyPairs, ValueError, RayUnavailable) as exc:
        if not args.quiet:
            print(file=sys.stderr)
        raise CliError(str(exc)) from exc
    if not args.quiet:
        print(file=sys.stderr)
    name = Path(args.beir or args.corpus).name if args.planted is None else f"planted-{args.planted}"
    return _report(args, result, out, sources, name, planted, guarded=guarded)


def _report(args, result: AuditResult, out, sources: list[str], name: str, planted=None, lines: tuple[str, ...] = (), guarded=None) -> int:
    """Print, record and write one audit's result (a corpus's, a vectors file's); ``lines`` lead the findings; ``guarded``
    is a dedup run's checked inputs (:func:`_dedup_inputs`), judged against the audit's pairs."""
    from core.audit.findings import audit_findings, history_settings
    from core.audit.risk import risk_summary, summary_doc
    from core.cli.history import record_result_history
    from core.history.sources import suite_source

    print_errors(result.errors)
    for model, report in result.reports.items():
        print_notes(report.notes)
        if report.truncated:
            # A passage past the model's window is judged by its first part only: a twin hiding in its tail goes unseen.
            keep = report.truncated[0].max_tokens
            print(
                f"note: {registry.short_name(model)}: {len(report.truncated):,} passage(s) are longer than the {keep} tokens it reads; "
                "each was compared by its first part only",
                file=sys.stderr,
            )
    if not result.models:
        print("error: no model produced results", file=sys.stderr)
        return EXIT_NO_MODEL
    judgement = None
    if args.judge is not None:
        from core.audit.judge import COL_JUDGE, judge_twins
        from core.audit.risk import pairs_at

        judgement = judge_twins(pairs_at(result, args.threshold), args.judge)
        if args.judge_decides and judgement.error is None:
            # Before the summary, so every count, share and finding is the judge's.
            result.pairs = judgement.decide(result.pairs).drop(columns=COL_JUDGE)
    summary = risk_summary(result, args.threshold)
    extra: list[str] = []
    planted_doc = judge_doc = None
    if planted is not None:
        from core.audit.planted import note_scores, planted_scores

        scores = planted_scores(result, planted, args.threshold)
        planted_doc = {"split": planted.split, "n_planted": len(planted.planted), "scores": json.loads(scores.to_json(orient="records"))}
        extra += _planted_lines(scores, planted.split)
        notes = note_scores(planted.split)
        planted_doc["notes"] = json.loads(notes.to_json(orient="records"))
        extra += _note_lines(notes, planted.split)
    pairs = result.pairs
    if judgement is not None:
        pairs = judgement.apply(pairs)
        decided = bool(args.judge_decides and judgement.error is None)
        judge_doc = {"model": judgement.model, "error": judgement.error, "decides": decided, "summary": judgement.summary(pairs)}
        extra.append(judgement.sentence(pairs))
        if decided:
            extra.append("The judge decided the kinds: a twin it did not read as a contradiction is counted 'other'.")
        if judgement.error is not None:
            print(f"note: {judgement.sentence(pairs)}", file=sys.stderr)
    # One assembly of the findings, the page's too: lead, table, the search's recall, the judge, the planted corpus, worst pairs.
    said = audit_findings(result, summary, args.threshold, extra=[*lines, *extra])
    findings = said.lines()
    doc = {
        **summary_doc(result, summary, findings, said.table),
        "threshold": args.threshold,
        "sources": [suite_source(s) for s in sources],
    }
    if planted_doc is not None:
        doc["planted"] = planted_doc
    if judge_doc is not None:
        doc["judge"] = judge_doc
    dedup_lines: list[str] = []
    if guarded is not None:
        id_corpus, dedup_run, keep_file = guarded
        doc["dedup"], dedup_lines = _dedup_report(id_corpus, dedup_run, result.pairs, keep_file, out, args.quiet)
        doc["findings"] = [*findings, *doc["dedup"]["findings"]]
    record_result_history("audit", name, result, {"sources": doc["sources"], **history_settings(said, args.threshold)})
    if out is not None:
        _write(out, pairs, doc)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        _print(summary, said)
        for line in dedup_lines:
            print(line)
    if guarded is not None:
        written = f"keep.csv and {DEDUP_REMOVALS}" if out is not None else "keep.csv"
        print(f"wrote {written} to {guarded[2].parent}", file=sys.stderr if args.json else sys.stdout)
    if out is not None:
        print(f"wrote close-pairs.parquet, close-pairs.csv and summary.json to {out}", file=sys.stderr if args.json else sys.stdout)
    return 0


def cmd_audit_vectors(args) -> int:
    """``audit --vectors FILE``: the audit of vectors a pipeline made, no model needed (``--models`` checked when given)."""
    import time

    from core.audit.neighbours import TooManyPairs
    from core.audit.run import audit_source, default_search
    from core.cli.vectors_source import check_line, checked_model, one_model, read_vectors_arg, vectors_label
    from core.models.encode import embedding_matrix

    start = time.perf_counter()
    if args.split is not None:
        raise CliError("--split does not go with --vectors: the vectors are given, nothing is encoded")
    if args.engine == constants.ENGINE_RAY:
        return _audit_vectors_on_ray(args)
    if args.max_pairs < 1:
        raise CliError(f"--max-pairs must be at least 1, got {args.max_pairs}")
    out = output_folder(args.out, "--out", "audit", AUDIT_OUTPUTS)
    queries = passage_keys(_read(args.queries, "queries")) if args.queries else []
    model = one_model(args, "--queries" if queries else None)
    source = read_vectors_arg(args)
    label, report, query_matrix = vectors_label(args), None, None
    lines: tuple[str, ...] = ()
    if model is not None:
        checked = checked_model(args, source, model, queries)
        label, report = checked.label, checked.report
        query_matrix = embedding_matrix(checked.vectors, queries) if queries else None
        lines = (check_line(checked.check, Path(args.vectors).name),)
    try:
        result = audit_source(
            label,
            source,
            args.threshold,
            search=default_search(len(source.passages), True if args.approximate else None),
            queries=queries,
            query_matrix=query_matrix,
            report=report,
            max_pairs=args.max_pairs,
            progress=None if args.quiet else print_progress,
            start=start,
        )
    except (TooManyPairs, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if not args.quiet:
        print(file=sys.stderr)
    return _report(args, result, out, [args.vectors, *([args.queries] if args.queries else [])], Path(args.vectors).name, None, lines)


RAY_PAIRS_FILE = "close-pairs.parquet"


def _audit_vectors_on_ray(args) -> int:
    """``audit --vectors FILE.parquet --engine ray --out DIR``: the whole audit on Ray (partition, verify, classify), the pairs
    streamed to ``DIR/close-pairs.parquet``; nothing held whole on the driver, so only the file's summary is printed."""
    import pyarrow.parquet as pq

    from core.audit.ray_audit import ray_audit
    from core.cluster.session import RayUnavailable

    for flag, given in (("--queries", args.queries), ("--models", args.models), ("--judge", getattr(args, "judge", None))):
        if given:
            raise CliError(f"{flag} does not go with --vectors --engine ray: the pairs stream to Parquet, nothing else is scored")
    if args.out is None:
        raise CliError("--vectors --engine ray writes its pairs to a folder: give --out DIR")
    out = output_folder(args.out, "--out", "audit", (RAY_PAIRS_FILE,))
    assert out is not None
    path = Path(args.vectors)
    if path.suffix.lower() != ".parquet":
        raise CliError("--vectors --engine ray reads a Parquet file (id, text, vector): Ray Data reads it in blocks")
    try:
        result = ray_audit(path, out / RAY_PAIRS_FILE, args.threshold, label=f"vectors:{path.name}", quiet=args.quiet)
    except (ValueError, RayUnavailable, RuntimeError) as exc:
        raise CliError(str(exc)) from exc
    remember_written("audit", out / RAY_PAIRS_FILE)
    kinds = pq.read_table(out / RAY_PAIRS_FILE, columns=["kind"]).column("kind").to_pandas().value_counts()
    said = ", ".join(f"{n:,} {kind}" for kind, n in kinds.items()) or "none"
    seconds = ", ".join(f"{step} {value:.1f} s" for step, value in result.seconds.items())
    doc = {
        "rows": result.rows,
        "pairs": result.pairs,
        "kinds": {str(k): int(n) for k, n in kinds.items()},
        "cells": result.cells,
        "probe": result.probe,
        "nodes": result.nodes,
        "seconds": result.seconds,
        "threshold": args.threshold,
        "pairs_file": str(out / RAY_PAIRS_FILE),
    }
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(
            f"{result.pairs:,} close pairs above {args.threshold:g} among {result.rows:,} passages ({said}), found on Ray in "
            f"{result.cells:,} cells (each row against its {result.probe} nearest), verified on {len(result.nodes)} node(s); {seconds}"
        )
        print(f"wrote {out / RAY_PAIRS_FILE}")
    return 0
