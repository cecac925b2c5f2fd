"""``--store URI`` on ``audit`` and ``retrieval`` (``docs/stores.md``): a vector store's passages and stored vectors as the source.

The named model (``--models``, exactly one: the model that made the stored
vectors) is checked on a sample of 20 passages before anything else; the
audit and the queries are then measured twice, exactly and with the store's
own search, and printed side by side.  The URI is shown, written and
recorded only as :attr:`core.stores.base.StoreURI.display` (no user-info),
and its password is registered with the one redaction before the store is
opened, so no message can carry it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from core.cli.common import CliError, embedding_cache, print_notes, print_progress, run_options
from core.cli.outputs import output_folder, remember_written

if TYPE_CHECKING:
    from core.stores.audit import StoreAudit

T = TypeVar("T")

STORE_EXAMPLES = (
    "cosine-probe audit --store 'lancedb://kb.lance?table=passages' --models all-MiniLM-L6-v2",
    "PGPASSWORD=... cosine-probe audit --store 'postgresql://me@localhost:5432/kb?table=chunks' --models all-MiniLM-L6-v2 --queries q.txt",
    "cosine-probe retrieval --store 'chroma://chroma-folder?collection=kb' --queries q.txt --models all-MiniLM-L6-v2",
)
# A model id longer than this that names no folder here is cut when echoed: it is no name (a Hugging Face id has at most 96).
MAX_SHOWN_MODEL = 120
STORE_AUDIT_OUTPUTS = ("close-pairs.parquet", "close-pairs.csv", "store-close-pairs.parquet", "store-close-pairs.csv", "summary.json")
STORE_RETRIEVAL_OUTPUTS = ("store_rates.csv", "store_pairs.csv", "summary.json")


def _is_folder(name: str) -> bool:
    try:
        return Path(name).expanduser().is_dir()
    except OSError:  # a name longer than a path may be
        return False


def _names(kinds) -> str:
    return ", ".join(kind.name for kind in kinds)


def store_help() -> dict[str, str]:
    """The store flags' help, built from the store kinds' records (their URIs, searches, filters, where a password goes)."""
    from core.stores.kinds import STORE_KINDS, kinds_that

    kinds = list(STORE_KINDS.values())
    hints = "; ".join(f"{kind.name}: {kind.password_hint}" for kind in kinds if kind.password_hint)
    only_index = [kind.name for kind in kinds if not kind.exact_search]
    fixed = [kind.name for kind in kinds if not kind.columns]
    return {
        "store": "read passages and their stored vectors from a vector store: "
        + ", ".join(kind.uri_form for kind in kinds)
        + f" (read-only; --models names the one model that made the vectors; {hints}; docs/stores.md)",
        "columns": f" ({_names(kinds_that('columns'))}; {', '.join(fixed) or 'none'}: fixed)" if fixed else "",
        "search": "--store: rank with the store's index as it is searched in production (default), or its exact scan "
        f"({_names(kinds_that('exact_search'))}"
        + (f"; {', '.join(only_index)}: only its index" if only_index else "")
        + f"), or a binary quantization computed at query time ({_names(kinds_that('binary_search'))}): Hamming distance of the sign "
        "bits (binary), its 2 x k shortlist rescored by the stored vectors (binary-rescore)",
        "filter": "--store: read and search only the rows whose COLUMN equals VALUE (read as the column's type: text, a number, "
        "true/false; repeat for AND), through the store's own filter ("
        + ", ".join(f"{kind.name}: {kind.filter_by}" for kind in kinds)
        + ")",
    }


def add_store_options(p, source=None) -> None:
    """``--store URI`` (in ``source``, a mutually exclusive group, when given) and the column and search flags."""
    helps = store_help()
    (source or p).add_argument("--store", metavar="URI", help=helps["store"])
    p.add_argument(
        "--text-column",
        metavar="COL",
        help="--store: the column holding the passages (default: found by type and name; an id-like column only when named)"
        + helps["columns"],
    )
    p.add_argument(
        "--vector-column",
        metavar="COL",
        help="--store: the column holding the vectors (default: found by type and name)" + helps["columns"],
    )
    p.add_argument("--store-search", choices=("index", "exact", "binary", "binary-rescore"), default="index", help=helps["search"])
    p.add_argument("--store-filter", metavar="COLUMN=VALUE", action="append", help=helps["filter"])


def check_store_flags(args) -> None:
    """Column flags and ``--store-search exact`` only mean something with ``--store``."""
    if args.store is None:
        columns = [f for f, v in (("--text-column", args.text_column), ("--vector-column", args.vector_column)) if v is not None]
        # The column flags name a vectors file's columns too.
        given = [] if getattr(args, "vectors", None) is not None else columns
        if args.store_search != "index":
            given.append("--store-search")
        if args.store_filter:
            given.append("--store-filter")
        if given:
            raise CliError(f"{', '.join(given)} go(es) with --store URI; give one")


def open_store_arg(args):
    """The store ``--store`` names, opened read-only; ``--models`` must name its one model."""
    from core.stores.base import StoreError, parse_filters
    from core.stores.kinds import open_store

    if not args.models or len(args.models) != 1:
        raise CliError("--store needs --models NAME: the one model that made the stored vectors (it is checked on 20 passages)")
    model = args.models[0]
    if len(model) > MAX_SHOWN_MODEL and not _is_folder(model):
        raise CliError(
            f"--models: {model[:40]!r}... ({len(model):,} characters) is no registered model, Hugging Face id (at most 96 "
            "characters) or folder here"
        )
    search = getattr(args, "store_search", "index")  # index-settings reads the vectors only: no search flag
    try:
        return open_store(
            args.store,
            text_column=args.text_column,
            vector_column=args.vector_column,
            exact=search == "exact",
            binary=search if search.startswith("binary") else "",
            filters=parse_filters(getattr(args, "store_filter", None)),
        )
    except StoreError as exc:
        raise CliError(str(exc)) from exc


def read_queries(args) -> list[str]:
    """``--queries FILE``'s texts (none without it), its notes printed."""
    if args.queries is None:
        return []
    from core.files.errors import PairsFileError
    from core.files.texts import TEXT_COLUMNS, read_texts

    try:
        found = read_texts(args.queries, TEXT_COLUMNS["queries"], what="queries")
    except PairsFileError as exc:
        raise CliError(str(exc)) from exc
    print_notes(found.notes)
    return found.texts


def check_line(check, store: str) -> str:
    """The model check in one line, how many of the store's passages it checked (``ModelCheck.sentence``, the page's words)."""
    return f"model check: {check.sentence(store)}"


def run_on_store(args, run: Callable[[Any], T], *, refused: tuple[type[Exception], ...] = ()) -> T:
    """``run(handle)`` on the store ``--store`` names: opened read-only, always closed, its errors one line.

    Args:
        args: the command's parsed arguments (``--store``, ``--models``, ``--quiet``...).
        run: what to do with the open store; its result is returned.
        refused: more exception types to turn into one ``error:`` line, beside ``StoreError`` and ``ValueError``.

    Raises:
        CliError: the store cannot be opened, or ``run`` raised one of those types.
    """
    from core.stores.base import StoreError

    caught: tuple[type[Exception], ...] = (StoreError, ValueError, *refused)
    handle = open_store_arg(args)
    try:
        result = run(handle)
    except caught as exc:
        if not args.quiet:
            print(file=sys.stderr)  # ends the progress line before the error
        raise CliError(str(exc)) from exc
    finally:
        handle.close()
    if not args.quiet:
        print(file=sys.stderr)
    return result


def cmd_audit_store(args) -> int:
    """``audit --store URI``: the audit over the stored vectors, exactly and through the store's search, side by side."""
    from core.audit.findings import audit_findings
    from core.audit.neighbours import TooManyPairs
    from core.audit.risk import risk_summary, summary_doc
    from core.cli.history import record_result_history
    from core.models import registry
    from core.stores.audit import QUERY_DEPTH, audit_store, side_by_side

    check_store_flags(args)
    out = output_folder(args.out, "--out", "audit", STORE_AUDIT_OUTPUTS)
    queries = read_queries(args)
    result = run_on_store(
        args,
        lambda handle: audit_store(
            handle,
            args.models[0],
            args.threshold,
            queries=queries,
            cache=embedding_cache(args),
            options=run_options(args),
            progress=None if args.quiet else print_progress,
            max_pairs=args.max_pairs,
        ),
        refused=(TooManyPairs,),
    )
    print_notes(result.notes)
    exact_summary = risk_summary(result.exact, args.threshold)
    store_summary = risk_summary(result.through_store, args.threshold)
    said = audit_findings(result.exact, exact_summary, args.threshold)
    findings = said.lines()
    search = result.search
    recall = ": no exact close pair to find" if result.pair_recall != result.pair_recall else f" {result.pair_recall:.1%}"
    queried = ""
    if result.query_recall == result.query_recall:
        queried = (
            f"; each query's top 5 recall {result.query_recall:.1%} (the store is asked for each query's {QUERY_DEPTH} nearest, "
            "by audit and retrieval alike, and its first 5 are compared with exact search's top 5)"
        )
    cap = search.cap_words()
    comparison = [
        check_line(result.check, result.store),
        f"{registry.short_name(result.model)} through the store ({result.method}, {args.threshold:g}; each passage's {search.k} "
        f"nearest asked for): {result.store_pairs:,} close pairs against {result.exact_pairs:,} by exact search; recall against exact"
        f"{recall}{queried}" + (f"; {cap}" if cap else "") + ".",
    ]
    findings = [*comparison, *findings]
    doc = summary_doc(result.exact, exact_summary, findings)
    doc.update(
        {
            "threshold": args.threshold,
            "sources": [{"store": result.store}],
            "store": {**result.as_dict(), "summary": summary_doc(result.through_store, store_summary, [])["summary"]},
        }
    )
    record_result_history(
        "audit",
        result.store,
        result.exact,
        {"sources": doc["sources"], "threshold": args.threshold, "mode": "audit", "store": result.as_dict(), "findings": findings},
    )
    if out is not None:
        _write(out, result, doc)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        table = side_by_side(exact_summary, store_summary).assign(model=lambda f: f["model"].map(registry.short_name))
        if not queries:
            table = table.drop(columns=[c for c in table.columns if c.startswith(("query_", "twin_first"))])
        with pd.option_context("display.width", 220, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
            print("== confusable twins above the threshold, exact search vs the store's own search ==")
            print(table.to_string(index=False))
        print()
        for line in findings:
            print(line)
    if out is not None:
        print(
            f"wrote close-pairs and store-close-pairs (.parquet, .csv) and summary.json to {out}",
            file=sys.stderr if args.json else sys.stdout,
        )
    return 0


def _write(out: Path, result: StoreAudit, doc: dict[str, Any]) -> None:
    from core.files.export import safe_frame

    try:
        for name, audit in (("close-pairs", result.exact), ("store-close-pairs", result.through_store)):
            exported = audit.pairs.drop(columns=["index_a", "index_b"])
            exported.to_parquet(out / f"{name}.parquet", index=False)
            safe_frame(exported).to_csv(out / f"{name}.csv", index=False)
        (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from exc
    remember_written("audit", *(out / name for name in STORE_AUDIT_OUTPUTS))


def cmd_retrieval_store(args) -> int:
    """``retrieval --store URI --queries FILE``: each query ranked exactly and by the store's search.

    Recall@k and corpus mode's rates are reported both ways.
    """
    from core.models import registry
    from core.stores.audit import QUERY_DEPTH
    from core.stores.retrieval import json_records, retrieval_through_store

    others = [f for f, v in (("--suite", args.suite), ("--corpus", args.corpus), ("--triples", args.triples), ("--beir", args.beir)) if v]
    if others:
        raise CliError(f"--store runs on its own: leave out {', '.join(others)}")
    if args.queries is None:
        raise CliError("--store needs --queries FILE: the queries to rank the stored passages for")
    if args.mitigate is not None:
        # Refused, not half done: every mitigation (BM25 fusion, the guard, a calibrated threshold) rescores the whole ranked
        # corpus by its text, so its figure would be of exact search over the stored vectors again, not of the store's top k.
        raise CliError(
            "--mitigate does not run with --store: the mitigations rescore the whole corpus by its text, not the store's top k, "
            "so they would measure exact search again; run them on the same passages with --corpus FILE --queries FILE"
        )
    check_store_flags(args)

    out = output_folder(args.out, "--out", "retrieval", STORE_RETRIEVAL_OUTPUTS)
    queries = read_queries(args)
    result = run_on_store(
        args,
        lambda handle: retrieval_through_store(
            handle,
            args.models[0],
            queries,
            cache=embedding_cache(args),
            options=run_options(args),
            progress=None if args.quiet else print_progress,
            seed=args.seed,
        ),
    )
    print_notes(result.notes)
    doc = {"command": "retrieval", "mode": "store", "seed": args.seed, **result.as_dict()}
    if not result.pairs.empty:
        from core.cli.history import record_retrieval_history

        # The store's side is the run recorded (corpus mode's rows with the store's first passage); the exact side is in settings.
        ran = result.through_store()
        settings = {"mode": "store", "seed": args.seed, "store": {k: v for k, v in doc.items() if k not in ("rates", "command")}}
        record_retrieval_history(result.store, ran, settings, sources=[result.store])
    if out is not None:
        try:
            result.rates.to_csv(out / "store_rates.csv", index=False)
            result.pairs.to_csv(out / "store_pairs.csv", index=False)
            (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot write to {out}: {exc.strerror or exc}") from exc
        remember_written("retrieval", *(out / name for name in STORE_RETRIEVAL_OUTPUTS))
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    else:
        print(check_line(result.check, result.store))
        recall = ", ".join(f"recall@{k} {v:.3f}" for k, v in result.recall.items())
        print(
            f"{registry.short_name(result.model)} through the store ({result.method}) against exact search over its "
            f"{result.n_passages:,} stored vectors, {result.n_queries:,} queries: {recall}; same first passage for {result.same_first:.1%} "
            f"(the store is asked for each query's {QUERY_DEPTH} nearest, by audit and retrieval alike)"
        )
        if not result.rates.empty:
            rates = pd.DataFrame(json_records(result.rates))
            wide = rates.pivot_table(index="mode", columns="search", values="rate", sort=False).reset_index()
            with pd.option_context("display.width", 220, "display.float_format", "{:.3f}".format):
                print(
                    "\n== corpus mode: how often a variant of a query's first passage outranks it, first passage by exact search vs by "
                    "the store =="
                )
                print(wide.to_string(index=False))
    if out is not None:
        print(f"wrote store_rates.csv, store_pairs.csv and summary.json to {out}", file=sys.stderr if args.json else sys.stdout)
    return 0
