"""Command line: ``python -m core {models,compare,tokens,run,validate}``.

User errors print one line to stderr and exit 2; a model that fails prints
its reason and the others still report.  No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core import constants as C
from core import registry
from core.export import safe_frame

EXIT_USAGE = 2
EXIT_NO_MODEL = 3


class CliError(Exception):
    """A user error: one line, exit code 2."""


def _default_models() -> list[str]:
    from core.models import availability

    return [m for m in registry.BUNDLED if availability(m).available]


def _models_arg(values: Sequence[str] | None) -> list[str]:
    models = list(values) if values else _default_models()
    if not models:
        raise CliError("no model given and no bundled model is installed; run `make setup`")
    return models


def _progress(fraction: float, message: str) -> None:
    print(f"\r[{fraction:6.1%}] {message[:90]:<90}", end="", file=sys.stderr, flush=True)


def _print_errors(errors: dict[str, str]) -> None:
    for name, reason in errors.items():
        print(f"error: {reason if reason.startswith(name) else f'{name}: {reason}'}", file=sys.stderr)


def _cache(args):
    from core.cache import EmbeddingCache

    return EmbeddingCache(False if args.no_cache else None)


# ------------------------------------------------------------------ commands


def cmd_models(args) -> int:
    from core.models import availability

    rows = []
    names = list(registry.REGISTRY) + [n for n in (args.extra or []) if n not in registry.REGISTRY]
    for name in names:
        meta = registry.resolve(name)
        avail = availability(name, allow_remote_code=name in (args.trust_remote_code or []))
        rows.append(
            {
                "model": meta.name,
                "short_name": meta.short_name,
                "source": meta.source,
                "backend": meta.backend,
                "dimension": meta.dimension,
                "max_seq_length": meta.max_seq_length,
                "pooling": meta.pooling,
                "prompt": meta.prompt,
                "revision": meta.revision,
                "trust_remote_code": meta.trust_remote_code,
                "available": avail.available,
                "status": avail.status,
                "reason": avail.reason,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        frame = pd.DataFrame(rows)[["model", "source", "backend", "dimension", "status", "reason"]]
        print(frame.to_string(index=False))
    return 0


def _require_text(label: str, text: str) -> str:
    if not text or not text.strip():
        raise CliError(f"{label} is empty; give a non-empty sentence")
    return text


def cmd_compare(args) -> int:
    from core.runner import run_pairs

    a, b = _require_text("TEXT_A", args.text_a), _require_text("TEXT_B", args.text_b)
    models = _models_arg(args.models)
    pairs = pd.DataFrame({C.COL_TEXT_A: [a], C.COL_TEXT_B: [b], C.COL_SUITE: ["compare"], C.COL_CATEGORY: ["typed"], C.COL_PAIR_ID: ["typed-1"]})
    result = run_pairs(pairs, models, cache=_cache(args), allow_remote_code=args.trust_remote_code or [])
    _print_errors(result.errors)
    rows = [
        {
            "model": r[C.COL_MODEL],
            "cosine": round(float(r[C.COL_COSINE]), 6),
            "above_threshold": bool(r[C.COL_COSINE] > args.threshold),
            "n_tokens_a": int(r[C.COL_TOKENS_A]),
            "n_tokens_b": int(r[C.COL_TOKENS_B]),
            "truncated": bool(r[C.COL_TRUNCATED]),
        }
        for r in result.results.to_dict("records")
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            flag = "above" if row["above_threshold"] else "below"
            cut = "  (truncated)" if row["truncated"] else ""
            print(f"{row['cosine']:.4f}  {flag} {args.threshold:g}  {row['model']}{cut}")
    return 0 if rows else EXIT_NO_MODEL


def cmd_tokens(args) -> int:
    from core.models import ModelUnavailable, load_tokenizer, max_seq_length
    from core.tokens import identical_splits, tokenize

    texts = [_require_text("TEXT", t) for t in args.texts]
    models = _models_arg(args.models)
    rows, errors = [], {}
    for name in models:
        try:
            tok = load_tokenizer(name)
        except (ModelUnavailable, ValueError) as exc:
            errors[name] = str(exc)
            continue
        limit = max_seq_length(name)
        for text in texts:
            t = tokenize(tok, text, limit)
            rows.append(
                {
                    "model": registry.resolve(name).name,
                    "text": text,
                    "tokens": list(t.tokens),
                    "n_tokens": t.n_tokens,
                    "n_with_special": t.n_with_special,
                    "max_tokens": t.max_tokens,
                    "n_past_max": t.n_past_max,
                    "n_unk": t.n_unk,
                    "words": [{"word": w.word, "pieces": list(w.pieces), "in_vocab": w.in_vocab} for w in t.words],
                }
            )
    _print_errors(errors)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for text in texts:
            mine = [r for r in rows if r["text"] == text]
            same = identical_splits({r["model"]: r["tokens"] for r in mine})
            print(f"{text!r}  ({'identical' if same else 'different'} splits across {len(mine)} models)")
            for r in mine:
                print(f"  {registry.short_name(r['model']):<24} {r['n_tokens']:>4}  {' '.join(r['tokens'])}")
    return 0 if rows else EXIT_NO_MODEL


def cmd_run(args) -> int:
    from core.analysis import summarize
    from core.runner import run_pairs
    from core.suites import SuiteError, load_suite

    try:
        pairs = load_suite(args.suite)
    except SuiteError as exc:
        raise CliError(str(exc)) from exc
    models = _models_arg(args.models)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create output folder {out}: {exc.strerror or exc}") from exc
    print(f"{len(pairs)} pairs × {len(models)} models", file=sys.stderr)
    result = run_pairs(pairs, models, cache=_cache(args), allow_remote_code=args.trust_remote_code or [], progress=None if args.quiet else _progress)
    if not args.quiet:
        print(file=sys.stderr)
    _print_errors(result.errors)
    if result.results.empty:
        print("error: no model produced results", file=sys.stderr)
        return EXIT_NO_MODEL
    safe_frame(result.results).to_csv(out / "pairs.csv", index=False)
    tables = summarize(result.results, args.threshold)
    summary = {
        "threshold": args.threshold,
        "suite": args.suite,
        "models": result.models,
        "errors": result.errors,
        "seconds": round(result.seconds, 3),
        "encoding": {m: {"unique_texts": r.n_unique, "encoded": r.n_encoded, "from_cache": r.n_cached, "truncated": len(r.truncated)} for m, r in result.reports.items()},
        "tables": {name: json.loads(t.to_json(orient="records")) for name, t in tables.items()},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    with pd.option_context("display.width", 160, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        for name, table in tables.items():
            if name.startswith("oov_deltas"):
                continue
            print(f"\n== {name} ==")
            print(table.to_string(index=False) if not table.empty else "(empty)")
    print(f"\nwrote {out / 'pairs.csv'} and {out / 'summary.json'}")
    return 0


def cmd_validate(args) -> int:
    from core.suites import SuiteError, load_suite, read_suite_file
    from core.validators import validate_pairs

    name = args.suite
    try:
        frame = read_suite_file(name) if name in C.SUITE_COUNTS else load_suite(name)
    except SuiteError as exc:
        raise CliError(str(exc)) from exc
    expected = C.SUITE_COUNTS.get(name)
    problems = [] if name == C.SUITE_OOV else validate_pairs(frame, expected)
    for p in problems:
        print(p)
    print(f"{len(frame)} rows, {len(problems)} problem(s)")
    return 1 if problems else 0


# ------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Where sentence-embedding cosine similarity lies.")
    sub = parser.add_subparsers(dest="command", required=True)

    def model_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument("--models", nargs="+", metavar="M", help="registry names, Hugging Face ids or folders (default: every installed bundled model)")
        p.add_argument("--trust-remote-code", nargs="+", metavar="M", help="opt in to running repository code for these models (runs downloaded Python code on your machine)")
        p.add_argument("--threshold", type=float, default=C.DEFAULT_THRESHOLD, help="retrieval threshold (default %(default)s)")
        p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
        p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("models", help="list registered models and whether they can be loaded here")
    p.add_argument("extra", nargs="*", help="more ids or folders to check")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("compare", help="cosine of two sentences under every model")
    p.add_argument("text_a")
    p.add_argument("text_b")
    model_opts(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("tokens", help="subword splits of texts under every model")
    p.add_argument("texts", nargs="+")
    model_opts(p)
    p.set_defaults(func=cmd_tokens)

    p = sub.add_parser("run", help="run a suite (oov, baseline, failure-modes, all) or a pairs file")
    p.add_argument("--suite", required=True, help="suite name or path to a CSV/TSV/JSONL pairs file")
    p.add_argument("--out", required=True, help="output folder for pairs.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    model_opts(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check a suite against its category rules and counts")
    p.add_argument("suite", help="suite name or pairs file")
    p.set_defaults(func=cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    threshold = getattr(args, "threshold", None)
    if threshold is not None and not -1.0 <= threshold <= 1.0:
        print("error: --threshold must be between -1 and 1", file=sys.stderr)
        return EXIT_USAGE
    warnings.filterwarnings("ignore", category=FutureWarning)
    try:
        return args.func(args)
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if os.environ.get("COSINE_PROBE_DEBUG"):
            raise
        print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} (set COSINE_PROBE_DEBUG=1 for details)", file=sys.stderr)
        return 1
