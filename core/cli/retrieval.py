"""``python -m core retrieval``: does the retriever rank the contradiction above the truth, and which fix stops it.

Runs the retrieval suite (or a user's pairs file) and, with ``--corpus`` and
``--queries``, corpus mode; ``--mitigate`` adds a before/after table per
mitigation.  ``--json`` prints one JSON document and nothing else on stdout;
``--out DIR`` writes every table as CSV plus ``summary.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from core import constants, lexicon
from core.cli.common import (
    EXIT_NO_MODEL,
    CliError,
    add_model_options,
    calibrated_thresholds,
    check_device,
    embedding_cache,
    models_arg,
    print_errors,
    print_progress,
    run_options,
)
from core.cli.outputs import output_folder, remember_written
from core.cli.ray_run import add_engine_options
from core.cli.store_source import STORE_EXAMPLES, add_store_options, check_store_flags, cmd_retrieval_store, read_queries
from core.files.export import safe_frame
from core.models import registry

if TYPE_CHECKING:
    from core.probes.retrieval.beir import BeirResult
    from core.probes.retrieval.corpus import CorpusResult
    from core.probes.retrieval.run import RetrievalResult
    from core.probes.retrieval.triples import TriplesResult
    from core.scoring.result import ProbeResult

EXAMPLES = (
    "python -m core retrieval --suite retrieval",
    "python -m core retrieval --suite retrieval --mitigate bm25,guard --json",
    "python -m core retrieval --corpus passages.txt --queries questions.txt --models all-MiniLM-L6-v2",
    "python -m core retrieval --triples nli-triples.csv --query premise --positive entailed --negative contradicted",
    "python -m core retrieval --beir scifact/ --split test --out results/",
    STORE_EXAMPLES[2],
)

# Tables are named at run time (one CSV each), so every CSV in the folder is checked, with the summary.
RETRIEVAL_OUTPUTS = ("*.csv", "summary.json")


def register(subparsers) -> None:
    """Add the ``retrieval`` command."""
    p = subparsers.add_parser(
        "retrieval",
        help="retrieval probes: adversarial win rate, NevIR paired accuracy, in-corpus ranking, mitigations before/after",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--suite",
        help="'retrieval' (the shipped suite), a file in its format, or a pairs file (text_a = query or anchor, "
        "text_b = passage, category = paraphrase or a failure mode); default: retrieval, unless --corpus is given",
    )
    p.add_argument("--corpus", metavar="FILE", help="corpus mode: passages, one per row (.txt line, CSV/TSV column 'text', JSONL)")
    p.add_argument("--queries", metavar="FILE", help="corpus mode: queries, one per row")
    p.add_argument(
        "--vectors",
        metavar="FILE",
        help="corpus mode over vectors a pipeline made, instead of --corpus (Parquet or Arrow with a text and a vector column, "
        "or .npy with FILE.txt beside it): --models names the one model that made them (checked on 20 passages; it encodes "
        "the queries and the variants)",
    )
    p.add_argument(
        "--triples",
        metavar="FILE",
        help="a triples file (CSV, TSV, JSON, JSONL): anchor, positive and one or more negatives per row "
        "(anchor/query/premise, positive/entailed/entailment, negative/contradicted/contradiction/"
        "hard_negative, or negative_1, negative_2, ...): win rate and in-corpus ranking",
    )
    p.add_argument("--query", metavar="COL", help="--triples: the anchor (query) column")
    p.add_argument("--positive", metavar="COL", help="--triples: the positive column")
    p.add_argument("--negative", metavar="COLS", help="--triples: the negative column, or a comma list of them (wide format)")
    p.add_argument(
        "--beir",
        metavar="DIR",
        help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): recall@1/5/10, MRR@10, "
        "nDCG@10 from its relevance judgements; the corpus is streamed in chunks through the embedding cache",
    )
    p.add_argument("--split", default=None, help="--beir: the qrels split (default: test)")
    p.add_argument(
        "--beir-variants",
        action="store_true",
        help="--beir: also make contradicting variants of each relevant passage with the "
        "perturbation rules and report how often one outranks it",
    )
    p.add_argument(
        "--mitigate",
        metavar="LIST",
        help="comma list: bm25, bm25-weighted:W, guard, calibrated, reranker:ID; on the suite, a pairs "
        "file, corpus mode, --triples and --beir (a corpus of up to 50,000 passages)",
    )
    p.add_argument("--out", metavar="DIR", help="write every table as CSV and summary.json here")
    p.add_argument("--seed", type=int, default=constants.BOOTSTRAP_SEED, help="seed of the bootstrap intervals (default %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_store_options(p)
    add_engine_options(p)
    add_model_options(p)
    p.set_defaults(func=cmd_retrieval)


# ------------------------------------------------------------------ inputs


def _check_args(args) -> None:
    column_flags = [f for f, v in (("--query", args.query), ("--positive", args.positive), ("--negative", args.negative)) if v]
    if column_flags and args.triples is None:
        raise CliError(f"{', '.join(column_flags)} name(s) the columns of a --triples FILE; give one")
    if (args.split is not None or args.beir_variants) and args.beir is None:
        raise CliError(f"{'--split' if args.split is not None else '--beir-variants'} needs a --beir DIR; give one")
    for flag, value in (("--triples", args.triples), ("--beir", args.beir)):
        if value is None:
            continue
        # A triples file and a BEIR folder take --mitigate (every mitigation measured on the user's data).
        others = [
            f
            for f, v in (
                ("--suite", args.suite),
                ("--corpus", args.corpus),
                ("--vectors", args.vectors),
                ("--queries", args.queries),
                ("--triples", args.triples),
                ("--beir", args.beir),
            )
            if v and f != flag
        ]
        if others:
            raise CliError(f"{flag} runs on its own: leave out {', '.join(others)}")
    if args.corpus is not None and args.vectors is not None:
        raise CliError("corpus mode reads --corpus FILE or --vectors FILE, not both")
    if (args.corpus is None and args.vectors is None) != (args.queries is None):
        raise CliError("corpus mode needs both --corpus FILE and --queries FILE (or --vectors FILE and --queries FILE)")
    if args.seed < 0:
        raise CliError(f"--seed must be 0 or more, got {args.seed}")
    if args.mitigate is not None and not args.mitigate.strip(" ,"):
        raise CliError("--mitigate is empty; give e.g. bm25,guard")


def load_suite(name: str):
    """A retrieval suite by name or file (``retrieval``, ``tune``); its notes go to stderr, its problems are a :class:`CliError`."""
    from core.probes.retrieval.suite import RetrievalSuiteError
    from core.probes.retrieval.suite_files import load_retrieval_suite

    try:
        suite = load_retrieval_suite(name)
    except RetrievalSuiteError as exc:
        raise CliError(str(exc)) from exc
    for note in suite.notes:
        print(f"note: {name}: {note}", file=sys.stderr)
    return suite


def _load_corpus(args) -> tuple[list[str], list[str]]:
    from core.files.errors import PairsFileError
    from core.files.texts import TEXT_COLUMNS, read_texts

    try:
        corpus, queries = (
            read_texts(path, TEXT_COLUMNS[kind], what=kind) for path, kind in ((args.corpus, "corpus"), (args.queries, "queries"))
        )
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    for note in (*corpus.notes, *queries.notes):
        print(f"note: {note}", file=sys.stderr)
    return corpus.texts, queries.texts


def _load_triples(args):
    from core.files.errors import PairsFileError
    from core.files.triples import TRIPLE_FLAGS, read_triples

    columns = {constants.COL_ANCHOR: args.query, constants.COL_POSITIVE: args.positive, constants.COL_NEGATIVE: args.negative}
    try:
        triples = read_triples(args.triples, columns, flags=TRIPLE_FLAGS)
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    for note in triples.notes:  # what reading dropped or changed is said even with --quiet, as `run --quiet` says it
        print(f"note: {note}", file=sys.stderr)
    return triples


def _mitigations(args, models: list[str]) -> list:
    """The ``--mitigate`` objects; ``calibrated`` first calibrates each model on the control pairs."""
    if not args.mitigate:
        return []
    try:
        from core.probes.retrieval.specs import build_mitigations, parse_mitigation_specs, with_thresholds
    except ImportError as exc:
        raise CliError(f"--mitigate is not available: the mitigations cannot be imported ({exc})") from exc
    # Parsed before any model is loaded, so a typo fails at once.
    try:
        specs = parse_mitigation_specs(args.mitigate)
    except ValueError as exc:
        raise CliError(f"--mitigate: {exc}") from exc
    thresholds: dict[str, float] = {}
    if any(s.kind == constants.MITIGATION_CALIBRATED for s in specs):
        if not args.quiet:
            print("calibrating each model's threshold on the control pairs", file=sys.stderr)
        thresholds = calibrated_thresholds(args, models)
    try:  # only calibrated can fail here: no model gave a threshold
        return build_mitigations(with_thresholds(specs, thresholds))
    except ValueError as exc:
        raise CliError(f"--mitigate calibrated: {exc}") from exc


def _run_kwargs(args) -> dict[str, Any]:
    check_device(args)
    return {
        "cache": embedding_cache(args),
        "options": run_options(args),
        "progress": None if args.quiet else print_progress,
        "seed": args.seed,
    }


# ------------------------------------------------------------------ output


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    # to_json writes NaN and ±inf as null, which is what a JSON reader expects.
    return json.loads(frame.to_json(orient="records")) if not frame.empty else []


def _suite_doc(suite_name: str, result: RetrievalResult) -> dict[str, Any]:
    doc = {
        "suite": suite_name,
        "models": result.models,
        "mitigations": result.mitigations,
        "win_rates": _records(result.win_rates),
        "win_rates_by_source": _records(result.by_source),
        "paired_accuracy": _records(result.paired),
        "ranking": _records(result.ranking),
        "comparisons": _records(result.comparisons),
        "costs": _records(result.costs),
        "seconds": round(result.seconds, 3),
    }
    if len(result.mitigations) > 1:
        doc["before_after"] = _records(result.summary())
    return doc


def _corpus_doc(args, corpus: list[str], queries: list[str], result: CorpusResult) -> dict[str, Any]:
    return {
        "corpus": str(args.corpus),
        "queries": str(args.queries),
        "n_passages": len(corpus),
        "n_queries": len(queries),
        "models": result.models,
        "no_variant": result.no_variant,
        "rates": _records(result.rates),
        "pairs": _records(result.pairs),
    }


def _cell(rate: float, low: float, high: float) -> str:
    if pd.isna(rate):
        return "n/a"
    return f"{rate:.3f} [{low:.3f}, {high:.3f}]" if not pd.isna(low) else f"{rate:.3f}"


def _by_mode(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """Modes down, models across, 'rate [low, high]' cells, for the ``none`` rows."""
    rows = table[table[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    cells = rows.assign(
        cell=[
            _cell(r, lo, hi) + f"  n={n}"
            for r, lo, hi, n in zip(
                rows[value], rows[constants.COL_CI_LOW], rows[constants.COL_CI_HIGH], rows[constants.COL_N], strict=True
            )
        ],
        model=rows[constants.COL_MODEL].map(registry.short_name),
    )
    wide = cells.pivot(index=constants.COL_MODE, columns="model", values="cell")
    order = [m for m in dict.fromkeys(cells[constants.COL_MODE])]
    return wide.loc[order, list(dict.fromkeys(cells["model"]))]


def _print_suite(result: RetrievalResult) -> None:
    with pd.option_context(
        "display.width", 220, "display.max_columns", 30, "display.max_colwidth", 40, "display.float_format", "{:.3f}".format
    ):
        print("== adversarial win rate: share of variants the anchor ranks above its paraphrase (lower is better) ==")
        print(_by_mode(result.win_rates, constants.COL_WIN_RATE).to_string())
        if not result.paired.empty:
            print(
                "\n== NevIR paired accuracy: q1 ranks the anchor first AND q2 the variant (higher is better; random = "
                f"{constants.PAIRED_RANDOM_BASELINE}) =="
            )
            print(_by_mode(result.paired, constants.COL_PAIRED_ACCURACY).to_string())
        if not result.ranking.empty:
            print("\n== in-corpus ranking: every passage of the suite is a distractor for every query ==")
            shown = result.ranking[result.ranking[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
            print(
                shown.assign(model=shown[constants.COL_MODEL].map(registry.short_name))
                .drop(columns=[constants.COL_MITIGATION])
                .to_string(index=False)
            )
        overall = (
            result.comparisons[result.comparisons[constants.COL_MODE] == constants.MODE_ALL]
            if not result.comparisons.empty
            else result.comparisons
        )
        overall = overall[overall[constants.COL_MITIGATION] == constants.MITIGATION_NONE] if not overall.empty else overall
        if not overall.empty:
            print("\n== model vs model: win-rate difference (paired bootstrap) and McNemar's exact test, all modes ==")
            print(
                overall.assign(model_a=overall["model_a"].map(registry.short_name), model_b=overall["model_b"].map(registry.short_name))
                .drop(columns=[constants.COL_MITIGATION, constants.COL_MODE])
                .to_string(index=False)
            )
        if not result.by_source.empty:
            print(
                "\n== win rate on hand-written variants (held out from the perturbation rules) first, then rule-made; ties counted apart =="
            )
            shown = result.by_source.assign(model=result.by_source[constants.COL_MODEL].map(registry.short_name))
            print(shown.to_string(index=False))
        if len(result.mitigations) > 1:
            _print_before_after(result.summary(), "win rate with its ties, fixed and broken variants; each net figure with what it flipped")


def _print_corpus(result: CorpusResult) -> None:
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print("\n== corpus mode: how often a variant of a query's top passage outranks it ==")
        rates = result.rates
        if rates.empty:
            print(
                f"no variant could be made: no perturbation rule ({', '.join(lexicon.FAILURE_MODES)}) applies to any query's top passage "
                "(no negatable verb, number, named entity, time word, quantifier or hedge was found); try longer, declarative passages"
            )
        else:
            print(rates.assign(model=rates[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        for model, n in result.no_variant.items():
            if n:
                whose = "query's top passage" if n == 1 else "queries' top passages"
                print(f"{registry.short_name(model)}: {n} {whose} gave no rule a handle (no variant)")


def _print_before_after(summary: pd.DataFrame, what: str) -> None:
    """The before/after table without the columns these inputs cannot fill (a pairs file has no query pairs), named in one line."""
    empty = [c for c in summary.columns if summary[c].isna().all()]
    print(f"\n== before / after each mitigation: {what} ==")
    if empty:
        print(f"(not measured on these inputs, so left out: {', '.join(empty)})")
    shown = summary.drop(columns=empty)
    print(shown.assign(model=shown[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))


def _triples_doc(args, triples, result: TriplesResult) -> dict[str, Any]:
    doc = {
        "triples": str(args.triples),
        "columns": triples.plain_mapping(),
        "n_rows": triples.n_rows,
        "n_triples": len(triples.frame),
        "models": result.models,
        "mitigations": result.mitigations,
        "win_rates": _records(result.win_rates),
        "ranking": _records(result.ranking),
        "seconds": round(result.seconds, 3),
    }
    if len(result.mitigations) > 1:
        doc["before_after"] = _records(result.summary())
        doc["win_rates_by_source"] = _records(result.by_source)
    return doc


def _print_triples(result: TriplesResult) -> None:
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4f}".format):
        plain = constants.MITIGATION_NONE
        wr = result.win_rates[result.win_rates[constants.COL_MITIGATION] == plain].drop(columns=[constants.COL_MITIGATION])
        print(
            "== win rate: share of (anchor, positive, negative) triples whose negative outranks the positive (lower is better; ties "
            "apart) =="
        )
        print(wr.assign(model=wr[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        rk = result.ranking[result.ranking[constants.COL_MITIGATION] == plain].drop(columns=[constants.COL_MITIGATION])
        print(
            "\n== in-corpus ranking: every anchor against every positive and negative of the file (one passage per row; "
            "tied_queries: anchors whose figures trec_eval's tie rule decided) =="
        )
        print(rk.assign(model=rk[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        if not result.by_source.empty:
            print(
                "\n== win rate on hand-written negatives (held out from the perturbation rules the guard reverses) first, "
                "then rule-made; ties counted apart =="
            )
            print(result.by_source.assign(model=result.by_source[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        if len(result.mitigations) > 1:
            _print_before_after(
                result.summary(),
                "win rate with its ties and the negatives each mitigation fixed and broke; recall@1 with the anchors it gained and lost",
            )


def _write_out(out: Path, frames: dict[str, pd.DataFrame], doc: dict[str, Any]) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in frames.items():
            safe_frame(frame).to_csv(out / f"{name}.csv", index=False)
        (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    except OSError as exc:
        raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from exc
    remember_written("retrieval", *(out / f"{name}.csv" for name in frames), out / "summary.json")


# ------------------------------------------------------------------ command


def cmd_retrieval(args) -> int:
    """Run the suite and/or corpus mode; print tables or one JSON document."""
    from core.probes.retrieval.corpus import run_corpus_probe
    from core.probes.retrieval.run import run_retrieval

    if args.store is not None:
        return cmd_retrieval_store(args)
    check_store_flags(args)
    _check_args(args)

    # Before the run: a report that cannot be written must not cost it first.
    output_folder(args.out, "--out", "retrieval", RETRIEVAL_OUTPUTS)
    if args.triples is not None:
        return _cmd_triples(args)
    if args.beir is not None:
        return _cmd_beir(args)
    run_suite = args.suite is not None or (args.corpus is None and args.vectors is None)
    suite_name = args.suite or constants.SUITE_RETRIEVAL
    suite = load_suite(suite_name) if run_suite else None
    corpus, queries = _load_corpus(args) if args.corpus is not None else ([], [])
    if args.vectors is not None:
        from core.cli.vectors_source import one_model

        one_model(args, "corpus mode")
        queries = read_queries(args)
    models = models_arg(args.models)
    mitigations = _mitigations(args, models)
    kwargs = _run_kwargs(args)
    doc: dict[str, Any] = {"seed": args.seed, "errors": {}}
    frames: dict[str, pd.DataFrame] = {}
    result = corpus_result = None
    if suite is not None:
        result = run_retrieval(suite, models, mitigations=mitigations, **kwargs)
        doc.update(_suite_doc(suite.name, result))
        doc["errors"].update(result.errors)
        frames.update(result.frames())
    if args.corpus is not None:
        corpus_result = run_corpus_probe(corpus, queries, models, mitigations=mitigations, **kwargs)
        doc["corpus"] = _corpus_doc(args, corpus, queries, corpus_result)
        doc["errors"].update(corpus_result.errors)
        frames.update({"corpus_pairs": corpus_result.pairs, "corpus_rates": corpus_result.rates})
    if args.vectors is not None:
        corpus_result, corpus = _corpus_on_vectors(args, queries, mitigations)
        doc["corpus"] = {**_corpus_doc(args, corpus, queries, corpus_result), "corpus": None, "vectors": str(args.vectors)}
        doc["errors"].update(corpus_result.errors)
        frames.update({"corpus_pairs": corpus_result.pairs, "corpus_rates": corpus_result.rates})
    if not args.quiet:
        print(file=sys.stderr)
    print_errors(doc["errors"])
    if not any(r is not None and r.models for r in (result, corpus_result)):
        print("error: no model produced results", file=sys.stderr)
        return EXIT_NO_MODEL
    from core.cli.history import record_retrieval_history
    from core.history.sources import mitigation_settings

    ran = {"mitigations": mitigation_settings(mitigations), "seed": args.seed}
    if result is not None and result.models:
        record_retrieval_history(suite_name, result, {**ran, "mode": "suite"})
    if corpus_result is not None and corpus_result.models:
        corpus_source = str(args.corpus if args.vectors is None else args.vectors)
        record_retrieval_history("corpus", corpus_result, {**ran, "mode": "corpus"}, sources=[corpus_source, str(args.queries)])
    if args.out:
        _write_out(Path(args.out), frames, doc)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        if result is not None and result.models:
            _print_suite(result)
        if corpus_result is not None:
            _print_corpus(corpus_result)
    if args.out:
        print(f"wrote {len(frames)} tables and summary.json to {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _corpus_on_vectors(args, queries: list[str], mitigations):
    """Corpus mode over ``--vectors FILE``'s passages and vectors: the one model checked on 20 of them, then the one corpus mode."""
    from core.cli.vectors_source import check_line, checked_model, read_vectors_arg
    from core.probes.retrieval.corpus import corpus_probe_on_vectors

    source = read_vectors_arg(args)
    checked = checked_model(args, source, args.models[0], queries)
    if not args.json:
        print(check_line(checked.check, Path(args.vectors).name))
    try:
        found = corpus_probe_on_vectors(source, queries, checked, mitigations=mitigations, seed=args.seed)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    return found, source.passages


def _finish(args, result: ProbeResult, frames: dict[str, pd.DataFrame], doc: dict[str, Any], printer) -> int:
    """Errors, then the tables (or the JSON document), then the output folder; exit 3 when no model ran."""
    if not args.quiet:
        print(file=sys.stderr)
    print_errors(doc["errors"])
    if not result.models:
        print("error: no model produced results", file=sys.stderr)
        return EXIT_NO_MODEL
    if args.out:
        _write_out(Path(args.out), frames, doc)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        printer(result)
    if args.out:
        print(f"wrote {len(frames)} tables and summary.json to {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _cmd_triples(args) -> int:
    from core.history.sources import mitigation_settings
    from core.probes.retrieval.triples import run_triples

    triples = _load_triples(args)
    models = models_arg(args.models)
    mitigations = _mitigations(args, models)
    result = run_triples(triples, models, mitigations=mitigations, **_run_kwargs(args))
    doc: dict[str, Any] = {"seed": args.seed, "errors": dict(result.errors), **_triples_doc(args, triples, result)}
    if result.models:
        _record(
            args,
            triples.name,
            result,
            {"mode": "triples", "columns": doc["columns"], "mitigations": mitigation_settings(mitigations)},
            [str(args.triples)],
        )
    return _finish(args, result, result.frames(), doc, _print_triples)


def _record(args, name: str, result: ProbeResult, settings: dict[str, Any], sources: list[str]) -> None:
    """Store a triples or BEIR run in the history: its sources by path and SHA-256, ``settings``, the seed."""
    from core.cli.history import record_retrieval_history

    record_retrieval_history(name, result, {**settings, "seed": args.seed}, sources=sources)


def _print_beir(result: BeirResult) -> None:
    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.float_format", "{:.4f}".format):
        rk = result.ranking[result.ranking[constants.COL_MITIGATION] == constants.MITIGATION_NONE].drop(columns=[constants.COL_MITIGATION])
        print(
            "== BEIR ranking: recall@k (share of each query's relevant passages in its top k), MRR@10, nDCG@10 from the qrels; "
            "exact ties broken by passage id as trec_eval does, tied_queries: queries whose figures that decided =="
        )
        print(rk.assign(model=rk[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        if not result.variant_pairs.empty:
            vr = result.variant_rates.drop(columns=[constants.COL_MITIGATION])
            print(
                "\n== contradicting variants of each relevant passage: how often one outranks it (lower is better; the plain cosine's) =="
            )
            print(vr.assign(model=vr[constants.COL_MODEL].map(registry.short_name)).to_string(index=False))
        if len(result.mitigations) > 1:
            _print_before_after(result.summary(), "each mitigation rescored the whole corpus; recall@1 with the queries it gained and lost")


def _cmd_beir(args) -> int:
    from core.files.beir import CORPUS_FILE, DEFAULT_SPLIT, QRELS_FOLDER, QUERIES_FILE, read_beir
    from core.files.errors import PairsFileError
    from core.history.sources import mitigation_settings
    from core.probes.retrieval.beir import run_beir

    split = args.split or DEFAULT_SPLIT
    try:
        folder = read_beir(args.beir, split)
        for note in folder.notes:  # --quiet silences progress, never what reading dropped
            print(f"note: {note}", file=sys.stderr)
        models = models_arg(args.models)
        mitigations = _mitigations(args, models)
        result = run_beir(folder, models, variants=args.beir_variants, mitigations=mitigations, **_run_kwargs(args))
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    doc: dict[str, Any] = {
        "seed": args.seed,
        "errors": dict(result.errors),
        "beir": str(args.beir),
        "split": split,
        "n_queries": len(folder.queries),
        "models": result.models,
        "mitigations": result.mitigations,
        "ranking": _records(result.ranking),
        "seconds": round(result.seconds, 3),
    }
    if len(result.mitigations) > 1:
        doc["before_after"] = _records(result.summary())
    if args.beir_variants:
        doc["variant_rates"] = _records(result.variant_rates)
    if result.models:
        beir = Path(folder.folder)
        _record(
            args,
            beir.name or str(beir),
            result,
            {"mode": "beir", "split": split, "variants": bool(args.beir_variants), "mitigations": mitigation_settings(mitigations)},
            [str(beir / CORPUS_FILE), str(beir / QUERIES_FILE), str(beir / QRELS_FOLDER / f"{split}.tsv")],
        )
    return _finish(args, result, result.frames(), doc, _print_beir)


def is_retrieval_suite(name: str) -> bool:
    """True for ``retrieval`` and for a file in the wide retrieval format (``validate`` uses it)."""
    from core.probes.retrieval.suite_files import is_wide_retrieval_file

    return name == constants.SUITE_RETRIEVAL or (Path(name).is_file() and is_wide_retrieval_file(name))


def cmd_validate_retrieval(args) -> int:
    """``python -m core validate retrieval``: the retrieval suite's rules; exit 1 on any violation."""
    from core.probes.retrieval.suite import RetrievalSuiteError
    from core.probes.retrieval.suite_checks import validate_retrieval_suite
    from core.probes.retrieval.suite_files import RETRIEVAL_FILE, read_retrieval_file

    path = RETRIEVAL_FILE if args.suite == constants.SUITE_RETRIEVAL else Path(args.suite)
    try:
        wide = read_retrieval_file(path)
    except RetrievalSuiteError as exc:
        raise CliError(str(exc)) from exc
    problems = validate_retrieval_suite(wide)
    for p in problems:
        print(p)
    print(f"{len(wide)} anchor groups, {len(problems)} problem(s)")
    return 1 if problems else 0
