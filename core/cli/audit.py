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
from typing import Any

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
from core.cli.ray_run import add_engine_options
from core.cli.store_source import STORE_EXAMPLES, add_store_options, check_store_flags, cmd_audit_store
from core.models import registry

EXPORT_DROP = ("index_a", "index_b")
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
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_store_options(p, source)
    add_engine_options(p)
    add_model_options(p)
    p.epilog = (
        "examples:\n  cosine-probe audit --corpus data/corpora/wordnet-adjectives.csv --threshold 0.8 --out audit/\n"
        "  cosine-probe audit --corpus kb.txt --queries questions.txt --models all-MiniLM-L6-v2 --json\n"
        "  cosine-probe audit --planted heldout --models all-MiniLM-L6-v2\n"
        f"  {STORE_EXAMPLES[1]}\n"
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
        first.setdefault(" ".join(text.split()), len(first))
    index_of = {pid: first[" ".join(t.split())] for pid, t in zip(ids, texts, strict=True) if " ".join(t.split())}
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


def _print(summary: pd.DataFrame, findings: list[str]) -> None:
    shown = summary[[c for c in SHOWN if c in summary.columns]]
    shown = shown.assign(model=shown[constants.COL_MODEL].map(registry.short_name))
    if summary["n_queries"].fillna(0).eq(0).all():
        shown = shown.drop(columns=["query_twin_top5", "twin_first"])
    with pd.option_context("display.width", 220, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print("== confusable twins above the threshold, per model and mode (share of passages with a twin; 95% bootstrap CI) ==")
        print(shown.to_string(index=False))
    print()
    for line in findings:
        print(line)


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
    from core.audit.risk import audit_findings, risk_summary, summary_doc
    from core.audit.run import audit_corpus
    from core.cli.history import record_history
    from core.cli.outputs import output_folder
    from core.history.sources import audit_pairs, suite_source
    from core.scoring.ray_engine import RayUnavailable

    if args.store is not None:
        return cmd_audit_store(args)
    check_store_flags(args)
    if args.split is not None and args.beir is None:
        raise CliError("--split needs a --beir DIR; give one")
    if args.beir is not None and args.queries is not None:
        raise CliError("--queries goes with --corpus; a --beir folder brings its own queries")
    if args.max_pairs < 1:
        raise CliError(f"--max-pairs must be at least 1, got {args.max_pairs}")
    if args.ray_actors is not None and args.ray_actors < 1:
        raise CliError(f"--ray-actors must be at least 1, got {args.ray_actors}")
    if args.judge_decides and args.judge is None:
        raise CliError("--judge-decides needs --judge MODEL (an NLI cross-encoder)")
    out = output_folder(args.out, "--out")  # before the run: a report that cannot be written must not cost it first
    qrels = planted = None
    if args.beir is not None:
        passages, ids, queries, qrels, sources = _beir(args)
    elif args.planted is not None:
        from core.audit.planted import planted_corpus

        if args.queries is not None:
            raise CliError("--queries goes with --corpus, not --planted")
        planted = planted_corpus(args.planted)
        passages, queries, ids, sources = planted.passages, [], None, []
    else:
        passages, queries = _read(args.corpus, "corpus"), (_read(args.queries, "queries") if args.queries else [])
        ids, sources = None, [args.corpus, *([args.queries] if args.queries else [])]
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
            options=run_options(args),
            progress=None if args.quiet else print_progress,
            max_pairs=args.max_pairs,
            approximate=True if args.approximate else None,
            engine=args.engine,
            ray_actors=args.ray_actors,
        )
    except (TooManyPairs, ValueError, RayUnavailable) as exc:
        if not args.quiet:
            print(file=sys.stderr)
        raise CliError(str(exc)) from exc
    if not args.quiet:
        print(file=sys.stderr)
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
    findings = audit_findings(result, summary, args.threshold)
    doc = {**summary_doc(result, summary, findings), "threshold": args.threshold, "sources": [suite_source(s) for s in sources]}
    if planted is not None:
        from core.audit.planted import note_scores, planted_scores

        scores = planted_scores(result, planted, args.threshold)
        doc["planted"] = {"split": planted.split, "n_planted": len(planted.planted), "scores": json.loads(scores.to_json(orient="records"))}
        findings = [*findings, *_planted_lines(scores, planted.split)]
        notes = note_scores(planted.split)
        doc["planted"]["notes"] = json.loads(notes.to_json(orient="records"))
        findings = [*findings, *_note_lines(notes, planted.split)]
    pairs = result.pairs
    if judgement is not None:
        pairs = judgement.apply(pairs)
        decided = bool(args.judge_decides and judgement.error is None)
        doc["judge"] = {"model": judgement.model, "error": judgement.error, "decides": decided, "summary": judgement.summary(pairs)}
        findings = [*findings, judgement.sentence(pairs)]
        if decided:
            findings = [*findings, "The judge decided the kinds: a twin it did not read as a contradiction is counted 'other'."]
        if judgement.error is not None:
            print(f"note: {judgement.sentence(pairs)}", file=sys.stderr)
    # The approximate search's recall is a finding like the others: stored in the history, the report and the JSON too.
    for model, search in result.search.items():
        if search.method != "exact":
            recall = "no close pair touched the sample" if search.recall != search.recall else f"{search.recall:.4f}"
            findings = [
                *findings,
                f"{registry.short_name(model)}: close pairs by {search.method}; recall against exact search on a sample of "
                f"{search.sample:,} passages ({search.exact_pairs_in_sample:,} exact pairs): {recall}.",
            ]
    doc["findings"] = findings
    name = Path(args.beir or args.corpus).name if args.planted is None else f"planted-{args.planted}"
    record_history(
        "audit",
        audit_pairs(result.pairs, name),
        {"sources": doc["sources"], "threshold": args.threshold, "mode": "audit", "findings": findings},
        result.errors,
    )
    if out is not None:
        _write(out, pairs, doc)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        _print(summary, findings)
    if out is not None:
        print(f"wrote close-pairs.parquet, close-pairs.csv and summary.json to {out}", file=sys.stderr if args.json else sys.stdout)
    return 0
