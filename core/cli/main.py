"""Command line: ``python -m core {models,compare,tokens,run,validate,perturb,calibrate,oov-words}``.

User errors print one line to stderr and exit 2; a model that fails prints
its reason and the others still report.  No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import warnings
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import pandas as pd

from core import constants
from core.cli import about
from core.cli.endpoints import EndpointArgError, add_endpoint_options, announce_tokens, configure_endpoints
from core.cli.pairs_files import add_pairs_file_options
from core.files.export import safe_frame
from core.models import registry
from core.papers.suites import control_pairs

EXIT_USAGE = 2
EXIT_NO_MODEL = 3
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe


class CliError(Exception):
    """A user error: one line, exit code 2."""


def count_arg(text: str) -> int:
    """A whole number from the command line; ``1e5`` is read as 100000 (the range is checked by the command)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def _default_models() -> list[str]:
    from core.models.loading import availability

    # Approximate bundled models (the 4-bit e5) are scored when named, never by default.
    return [m for m in registry.DEFAULT_BUNDLED if availability(m).available]


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


def _print_notes(notes: Sequence[str]) -> None:
    """A run's encode notes (e.g. a model's weights changed since they were cached), one ``note:`` line each."""
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _cache(args):
    from core.models.cache import EmbeddingCache

    return EmbeddingCache(False if args.no_cache else None)


def _score(args, pairs: pd.DataFrame, models: list[str]):
    """Run pairs with progress on stderr; None (after saying so) when no model produced results."""
    from core.scoring.runner import run_pairs

    quiet = getattr(args, "quiet", True)
    result = run_pairs(pairs, models, cache=_cache(args), allow_remote_code=getattr(args, "trust_remote_code", None) or [], progress=None if quiet else _progress, **_run_options(args))
    if not quiet:
        print(file=sys.stderr)
    _print_errors(result.errors)
    _print_notes(result.notes)
    if result.results.empty:
        print("error: no model produced results", file=sys.stderr)
        return None
    return result


# ------------------------------------------------------------------ commands


def cmd_models(args) -> int:
    from core.cli.onnx_exports import export_all, export_status_of
    from core.models.loading import availability

    failed = export_all() if getattr(args, "export_onnx", False) else 0
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
                "onnx_export": export_status_of(name),
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
        frame = pd.DataFrame(rows)[["model", "source", "backend", "onnx_export", "dimension", "status", "reason"]]
        print(frame.to_string(index=False))
    return failed


def _require_text(label: str, text: str) -> str:
    """The text to score, after ``core.files.text_checks``: a problem is a user error, notes go to stderr."""
    from core.files.text_checks import check_text

    check = check_text(text, label)
    if check.problem:
        raise CliError(check.problem)
    for note in check.notes:
        print(f"note: {note}", file=sys.stderr)
    return check.cleaned


def cmd_compare(args) -> int:
    from core.scoring.runner import run_pairs

    a, b = _require_text("TEXT_A", args.text_a), _require_text("TEXT_B", args.text_b)
    models = _models_arg(args.models)
    pairs = pd.DataFrame({constants.COL_TEXT_A: [a], constants.COL_TEXT_B: [b], constants.COL_SUITE: ["compare"], constants.COL_CATEGORY: ["typed"], constants.COL_PAIR_ID: ["typed-1"]})
    cache = _cache(args)
    announce_tokens(models, [a, b], cache, args.price_per_million_tokens)
    result = run_pairs(pairs, models, cache=cache, allow_remote_code=args.trust_remote_code or [], **_run_options(args))
    _print_errors(result.errors)
    _print_notes(result.notes)
    if not result.results.empty:
        from core.cli.history import record_history

        record_history("compare", result.results, {"threshold": args.threshold, "device": args.device, "devices": result.devices, "backends": result.backends}, result.errors)
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
            print(f"device: {_devices_line(result.devices)}", file=sys.stderr)
        for row in rows:
            flag = "above" if row["above_threshold"] else "below"
            cut = "  (truncated)" if row["truncated"] else ""
            print(f"{row['cosine']:.4f}  {flag} {args.threshold:g}  {row['model']}{cut}")
    return 0 if rows else EXIT_NO_MODEL


def _api_tokens(result, model: str) -> dict:
    """``{"api_tokens": n}`` for an endpoint model (tokens its server reported for this run), else nothing."""
    report = result.reports.get(model)
    return {"api_tokens": report.api_tokens} if report is not None and report.api_tokens is not None else {}


def cmd_tokens(args) -> int:
    from core.models.tokens import load_tokenizers, token_rows

    texts = [_require_text("TEXT", t) for t in args.texts]
    loaded, errors = load_tokenizers(_models_arg(args.models))
    rows = token_rows(loaded, texts)
    _print_errors(errors)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for text in texts:
            mine = [r for r in rows if r["text"] == text]
            same = mine[0]["identical_across_models"] if mine else True
            print(f"{text!r}  ({'identical' if same else 'different'} splits across {len(mine)} models)")
            for r in mine:
                print(f"  {registry.short_name(r['model']):<24} {r['n_tokens']:>4}  {' '.join(r['tokens'])}")
    return 0 if rows else EXIT_NO_MODEL


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
                print(f"note: {source}: also running the {extra} suite ({len(companion)} pairs): its dynamic range normalizes the OOV deltas", file=sys.stderr)
                pairs = pd.concat([pairs, companion], ignore_index=True)
            return pairs, {}
        checked = read_checked_file(args, source)
    except (SuiteError, PairsArgError) as exc:
        raise CliError(str(exc)) from exc
    hint = keep_or_drop_hint(checked, args)
    rules = f"{len(checked.violations)} pair(s) break the category rules (first: {checked.violations[0]}); `python -m core validate` lists them" if checked.violations else None
    for note in [*checked.notes, *filter(None, [hint, rules])]:
        print(f"note: {source}: {note}", file=sys.stderr)
    found = {"notes": list(checked.notes), "identical": list(checked.identical), "mirrored": [list(m) for m in checked.mirrored],
             "dropped": list(checked.dropped), "rule_problems": [str(v) for v in checked.violations]}
    return checked.pairs, found


def cmd_run(args) -> int:
    """``run``: chunked, any size, a progress bar per model (core.cli.run)."""
    from core.cli.run import run_command

    return run_command(args)


def cmd_validate(args) -> int:
    from core.cli.pairs_files import PairsArgError, is_shipped, keep_or_drop_hint, read_checked_file, refuse_file_options_for_suite
    from core.files.intake import check_pairs
    from core.papers.suites import SuiteError, load_suite, read_suite_file

    name = args.suite
    from core.cli import retrieval as retrieval_cli  # the wide retrieval suite has its own rules

    if retrieval_cli.is_retrieval_suite(name):
        return retrieval_cli.cmd_validate_retrieval(args)
    try:
        if is_shipped(name):
            refuse_file_options_for_suite(args, name)
            frame = read_suite_file(name) if name in constants.SUITE_COUNTS else load_suite(name)
            # The OOV suite's rows are items expanded into variants that share an id: its rules are validators.validate_oov.
            checked = None if name == constants.SUITE_OOV else check_pairs(frame, expected_counts=constants.SUITE_COUNTS.get(name))
        else:
            checked = read_checked_file(args, name)
    except (SuiteError, PairsArgError) as exc:
        raise CliError(str(exc)) from exc
    if checked is None:
        print(f"{len(frame)} rows, 0 problem(s)")
        return 0
    hint = keep_or_drop_hint(checked, args) if not is_shipped(name) else None
    for note in [*checked.notes, *filter(None, [hint])]:
        print(f"note: {note}")
    for p in checked.violations:
        print(p)
    # The same count ``run`` scores: after empty rows, exact duplicates and any drop asked for.
    print(f"{len(checked.pairs)} rows, {len(checked.violations)} problem(s)")
    return 1 if checked.violations else 0


def _oov_words_list(args, kinds: list[str], toks: Sequence[tuple[str, object]]) -> int:
    from core.models.tokens import word_pieces
    from core.probes.invented import generate_words

    entity = args.word.strip()
    ref_name, ref = toks[0]
    words: list = []
    try:
        for kind in kinds:
            words += generate_words(
                ref, args.n, kind=kind, pieces=args.pieces, length=tuple(args.length), seed=args.seed,
                capitalize=entity[:1].isupper(), entity=entity, exclude=[w.word for w in words], other_tokenizers=[t for _, t in toks[1:]],
            )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    entity_pieces = word_pieces(ref, entity)
    if args.json:
        doc = {"entity": entity, "entity_pieces": entity_pieces, "model": ref_name, "checked_models": [n for n, _ in toks], "words": [w.as_dict() for w in words]}
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    short = registry.short_name(ref_name)
    print(f"{entity!r} under {short}: {len(entity_pieces)} piece{'s' if len(entity_pieces) != 1 else ''}: {' '.join(entity_pieces)}")
    checked = ", ".join(registry.short_name(n) for n, _ in toks)
    for kind in kinds:
        print(f"{kind} words (pieces under {short}; none is a vocabulary entry of {checked}):")
        width = max(len(w.word) for w in words)
        for w in (w for w in words if w.kind == kind):
            print(f"  {w.word:<{width}}  {w.n_pieces}  {' '.join(w.pieces)}")
    return 0


def _oov_words_run(args, kinds: list[str], toks: Sequence[tuple[str, object]]) -> int:
    from core.papers.suites import read_suite_file
    from core.probes.invented import oov_replacements, oov_replicate_summary

    items = read_suite_file(constants.SUITE_OOV)
    if args.entities:
        known = dict(zip(items[constants.COL_ENTITY].str.casefold(), items[constants.COL_ENTITY], strict=True))
        unknown = [e for e in args.entities if e.casefold() not in known]
        if unknown:
            raise CliError(f"no OOV entity {', '.join(map(repr, unknown))}; entities: {', '.join(items[constants.COL_ENTITY])}")
        items = items[items[constants.COL_ENTITY].isin([known[e.casefold()] for e in args.entities])]
    reading = constants.VARIANT_REPLACED_BOTH if args.reading == "both" else constants.VARIANT_REPLACED_B
    out = Path(args.out) if args.out else None
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"cannot create output folder {out}: {exc.strerror or exc}") from exc
    try:
        pairs = oov_replacements(
            items, toks[0][1], args.k, kinds=kinds, readings=[reading], pieces=args.pieces, length=tuple(args.length),
            seed=args.seed, other_tokenizers=[t for _, t in toks[1:]],
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    models = [n for n, _ in toks]
    print(f"{len(items)} entities × {len(kinds)} kinds × k={args.k} ({len(pairs)} pairs) × {len(models)} models", file=sys.stderr)
    result = _score(args, pairs, models)
    if result is None:
        return EXIT_NO_MODEL
    tables = oov_replicate_summary(result.results)
    doc = {
        "k": args.k, "kinds": kinds, "reading": reading, "pieces": args.pieces, "length": list(args.length), "seed": args.seed,
        "word_model": models[0], "models": result.models, "errors": result.errors,
        "tables": {name: json.loads(t.to_json(orient="records")) for name, t in tables.items()},
    }
    if out is not None:
        safe_frame(result.results).to_csv(out / "pairs.csv", index=False)
        (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
        return 0
    titles = {"by_model": "mean delta per model and kind (CI over entities)", "plausible_vs_random": "plausible vs random (paired over entities)",
              "by_entity": f"mean delta per entity and kind (CI over the k={args.k} words)"}
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 60, "display.float_format", "{:.4f}".format):
        for name in ("by_model", "plausible_vs_random", "by_entity"):
            table = tables[name].assign(model=lambda t: t[constants.COL_MODEL].map(registry.short_name))
            print(f"\n== {titles[name]} ==")
            print(table.to_string(index=False) if not table.empty else "(empty)")
    if out is not None:
        print(f"\nwrote {out / 'pairs.csv'} and {out / 'summary.json'}")
    return 0


def cmd_oov_words(args) -> int:
    from core.models.tokens import load_tokenizers
    from core.probes.invented import validate_request

    if args.run and args.word is not None:
        raise CliError("give ENTITY_OR_WORD or --run, not both (use --entities to pick entities for --run)")
    if not args.run and (args.word is None or not args.word.strip()):
        raise CliError("ENTITY_OR_WORD is missing or empty; give the word to replace, or --run to measure OOV deltas")
    for flag, value in (("--n", args.n), ("--k", args.k)):
        if value < 1:
            raise CliError(f"{flag} must be at least 1, got {value}")
    kinds = list(constants.WORD_KINDS) if args.kind == "both" else [args.kind]
    try:
        for kind in kinds:
            validate_request(args.k if args.run else args.n, kind=kind, pieces=args.pieces, length=tuple(args.length))
    except (TypeError, ValueError) as exc:
        raise CliError(f"{exc}") from exc
    toks, errors = load_tokenizers(_models_arg(args.models))
    _print_errors(errors)
    if not toks:
        return EXIT_NO_MODEL
    return _oov_words_run(args, kinds, toks) if args.run else _oov_words_list(args, kinds, toks)


def _calibrated_thresholds(args, models: list[str]) -> dict[str, float]:
    """Each model's Youden-J threshold from the failure-mode suite's controls (``--calibrated``)."""
    from core.probes.calibration import calibrate, thresholds_by_model
    from core.scoring.runner import run_pairs

    result = run_pairs(control_pairs(), models, cache=_cache(args), allow_remote_code=args.trust_remote_code or [], **_run_options(args))
    return thresholds_by_model(calibrate(result.results)) if not result.results.empty else {}


def cmd_perturb(args) -> int:
    from core.probes.perturb import perturb
    from core.scoring.runner import run_pairs
    from core.scoring.tables import ABOVE_THRESHOLD, perturbation_table

    try:
        report = perturb(args.text)
    except ValueError as exc:
        raise CliError(f"TEXT: {exc}") from exc
    pairs = report.to_frame()
    doc = {
        "text": report.text,
        "variants": [{"mode": v.mode, "rule": v.rule, "change": v.change, "text": v.text} for v in report.variants],
        "not_applicable": report.not_applicable,
        "threshold": args.threshold,
        "scores": [],
    }
    errors: dict[str, str] = {}
    if report.variants and not args.no_score:
        models = _models_arg(args.models)
        calibrated = _calibrated_thresholds(args, models) if args.calibrated else {}
        result = run_pairs(pairs, models, cache=_cache(args), allow_remote_code=args.trust_remote_code or [], **_run_options(args))
        errors = result.errors
        # A model the controls could not calibrate keeps the global threshold.
        thresholds = {m: calibrated.get(m, args.threshold) for m in result.models}
        for r in perturbation_table(result.results, thresholds).to_dict("records"):
            doc["scores"].append(
                {"pair_id": r[constants.COL_PAIR_ID], "model": r[constants.COL_MODEL], "cosine": round(float(r[constants.COL_COSINE]), 6),
                 "threshold": round(float(r[constants.COL_THRESHOLD]), 6), "same": r["verdict"] == ABOVE_THRESHOLD}
            )
    _print_errors(errors)
    if args.json:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    print(f"{report.text!r}: {len(report.variants)} variant(s)")
    by_pair: dict[str, list[dict]] = {}
    for row in doc["scores"]:
        by_pair.setdefault(row["pair_id"], []).append(row)
    for v, pair_id in zip(report.variants, pairs[constants.COL_PAIR_ID], strict=True):
        print(f"\n[{constants.CATEGORY_LABELS.get(v.mode, v.mode)}] {v.rule}: {v.change}\n  {v.text}")
        for row in by_pair.get(pair_id, []):
            verdict = "SAME (above" if row["same"] else "different (below"
            print(f"    {row['cosine']:.4f}  {verdict} {row['threshold']:.3f})  {registry.short_name(row['model'])}")
    for mode, why in report.not_applicable.items():
        print(f"\n[{constants.CATEGORY_LABELS.get(mode, mode)}] not applicable: {why}")
    return 0


def cmd_calibrate(args) -> int:
    from core.papers.suites import load_suite
    from core.probes.calibration import calibrate, failure_rates, thresholds_by_model


    if not 0.0 <= args.max_fpr <= 1.0:
        raise CliError(f"--max-fpr must be between 0 and 1, got {args.max_fpr}")
    negatives = (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS) if args.near_miss else (constants.CAT_NEGATIVE,)
    models = _models_arg(args.models)
    pairs = load_suite(constants.SUITE_FAILURE_MODES) if args.failure_rates else control_pairs(negatives)
    result = _score(args, pairs, models)
    if result is None:
        return EXIT_NO_MODEL
    table = calibrate(result.results, negatives, args.max_fpr, args.threshold)
    rates = failure_rates(result.results, thresholds_by_model(table, args.method), args.threshold) if args.failure_rates else pd.DataFrame()
    if args.json:
        doc = {"negatives": list(negatives), "method": args.method, "calibration": json.loads(table.to_json(orient="records"))}
        if args.failure_rates:
            doc["failure_rates"] = json.loads(rates.to_json(orient="records"))
        print(json.dumps(doc, indent=2))
        return 0
    shown = table.assign(model=table[constants.COL_MODEL].map(registry.short_name))
    columns = ["model", "auc", "youden_threshold", "youden_tpr", "youden_fpr", "fpr_threshold", "fpr_tpr", "fpr_fpr", "global_tpr", "global_fpr"]
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(f"controls: positive vs {' + '.join(negatives)}; FPR target {args.max_fpr:g}; global threshold {args.threshold:g}")
        print(shown[columns].to_string(index=False))
        if args.failure_rates:
            rates = rates.assign(model=rates[constants.COL_MODEL].map(registry.short_name))
            print(f"\nfailure rate at the global threshold vs each model's own ({args.method})")
            print(rates[["model", "category", "failure_rate_global", "calibrated_threshold", "failure_rate_calibrated", "change"]].to_string(index=False))
    return 0


# ------------------------------------------------------------------- parser


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The options every scoring command shares: models, remote-code opt-in, threshold, cache, JSON."""
    p.add_argument("--models", nargs="+", metavar="M", help="registry names, Hugging Face ids or folders (default: every installed bundled model)")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M", help="opt in to running repository code for these models (runs downloaded Python code on your machine)")
    p.add_argument("--threshold", type=float, default=constants.DEFAULT_THRESHOLD, help="retrieval threshold (default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--device", choices=constants.DEVICE_CHOICES, default=constants.DEVICE_AUTO, help="where models encode: auto takes a CUDA GPU, then Apple MPS, then the CPU (default %(default)s)")
    p.add_argument("--batch-size", type=int, metavar="N", help="texts per forward pass (default: 32 on the CPU, 64 on MPS, 128 on CUDA)")
    p.add_argument("--backend", choices=constants.BACKEND_CHOICES, help="torch, or the verified exact fp32 ONNX export of a bundled torch model "
                   "(default auto: the export on the CPU, made once at first use; $COSINE_PROBE_BACKEND sets it too)")
    add_endpoint_options(p)


def _devices_line(devices: dict[str, str]) -> str:
    """``cpu`` when every model ran there, else each model's short name and device."""
    if len(set(devices.values())) == 1:
        return next(iter(devices.values()))
    return ", ".join(f"{registry.short_name(m)} {d}" for m, d in devices.items())


def _run_options(args) -> dict:
    """run_pairs keywords from ``--device`` and ``--batch-size`` (commands without them run on auto)."""
    return {"device": getattr(args, "device", None) or constants.DEVICE_AUTO, "batch_size": getattr(args, "batch_size", None)}


def _check_device(args) -> None:
    """Refuse a device this machine does not have, or a batch size below 1, before any work starts."""
    from core.models.device import choose_device

    if getattr(args, "batch_size", None) is not None and args.batch_size < 1:
        raise CliError(f"--batch-size must be at least 1, got {args.batch_size}")
    device = getattr(args, "device", None)
    if device and device != constants.DEVICE_AUTO:  # auto always resolves; checking it would import torch for nothing
        try:
            choose_device(device)
        except ValueError as exc:
            raise CliError(str(exc)) from exc


# Commands added after the first version live in their own module with a
# ``register(subparsers)`` function; list them here.
COMMAND_MODULES: tuple[str, ...] = ("core.cli.check", "core.cli.history", "core.cli.retrieval", "core.cli.explain", "core.cli.tune", "core.cli.report")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=about.prog(), description="Where sentence-embedding cosine similarity lies.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {about.version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    # Declarations read alike by design; options several commands share live in add_model_options / add_pairs_file_options.

    p = sub.add_parser("models", help="list registered models and whether they can be loaded here")
    p.add_argument("extra", nargs="*", help="more ids or folders to check")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M")
    p.add_argument("--json", action="store_true")
    p.add_argument("--export-onnx", action="store_true", help="make and verify the exact fp32 ONNX exports of the bundled torch models now (else at first use)")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("compare", help="cosine of two sentences under every model")
    p.add_argument("text_a")
    p.add_argument("text_b")
    add_model_options(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("tokens", help="subword splits of texts under every model")
    p.add_argument("texts", nargs="+")
    add_model_options(p)
    p.set_defaults(func=cmd_tokens)

    p = sub.add_parser("run", help="run a suite (oov, baseline, failure-modes, all) or a pairs file")
    p.add_argument("--suite", required=True, help="suite name or path to a CSV/TSV/JSONL/JSON/Parquet pairs file of any size")
    p.add_argument("--out", required=True, help="output folder for pairs.parquet, pairs.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--chunk-rows", type=count_arg, default=constants.RUN_CHUNK_PAIRS, metavar="N",
                   help="pairs read, encoded, scored and written at a time: memory stays bounded whatever the file's size (default %(default)s)")
    add_model_options(p)
    add_pairs_file_options(p)
    p.add_argument("--match-label", metavar="VALUE",
                   help="with --label: the label value that means 'same meaning' (every other label is then no match); "
                        "default: 1, true, yes, paraphrase, entailment, … match and 0, false, no, contradiction, neutral, … do not")
    from core.cli.ray_run import add_engine_options  # here, not at the top: ray_run imports this module

    add_engine_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("perturb", help="failure-mode variants of one sentence, scored by every model")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--no-score", action="store_true", help="only list the variants; load no model")
    p.add_argument("--calibrated", action="store_true", help="mark each model at its own Youden-J threshold from the controls, not --threshold")
    add_model_options(p)
    p.set_defaults(func=cmd_perturb)

    p = sub.add_parser("calibrate", help="each model's threshold from the control pairs: Youden J, a target FPR, ROC AUC")
    p.add_argument("--near-miss", action="store_true", help="count near-miss controls as negatives too")
    p.add_argument("--max-fpr", type=float, default=0.05, help="false-positive rate for the FPR threshold (default %(default)s)")
    p.add_argument("--failure-rates", action="store_true", help="also run the failure modes and compare rates at the global and calibrated thresholds")
    p.add_argument("--method", choices=["youden", "fpr"], default="youden", help="which calibrated threshold --failure-rates uses (default %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_model_options(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("validate", help="check a suite against its category rules and counts")
    p.add_argument("suite", help="suite name or pairs file")
    add_pairs_file_options(p)
    p.set_defaults(func=cmd_validate)
    p = sub.add_parser("oov-words", help="invented out-of-vocabulary words for an entity, or the OOV measurement with k of them per entity")
    p.add_argument("word", nargs="?", metavar="ENTITY_OR_WORD", help="the word to replace (its case sets the words' case)")
    p.add_argument("--run", action="store_true", help="run the OOV suite with k invented words per entity and kind, and summarize")
    p.add_argument("--n", type=int, default=10, help="words per kind to list (default %(default)s)")
    p.add_argument("--k", type=int, default=constants.OOV_REPLICATES, help="with --run: words per entity and kind (default %(default)s)")
    p.add_argument("--kind", choices=[*constants.WORD_KINDS, "both"], default="both", help="plausible (English-like), random (letters) or both (default)")
    p.add_argument("--pieces", type=int, help="exact subword pieces per word under the first model's tokenizer (>= 2; default: any)")
    p.add_argument("--length", type=int, nargs=2, default=list(constants.INVENTED_LENGTH), metavar=("MIN", "MAX"), help="letters per word (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed; the same seed gives the same words (default %(default)s)")
    p.add_argument("--models", "--model", nargs="+", metavar="M", help="pieces count under the first; words are out of every one's vocabulary (default: installed bundled models)")
    p.add_argument("--entities", nargs="+", metavar="E", help="with --run: only these OOV-suite entities")
    p.add_argument("--reading", choices=["both", "b"], default="both", help="with --run: replace the entity in both sentences or only the second (default both)")
    p.add_argument("--out", help="with --run: folder for pairs.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_oov_words)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    about.add_examples(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from core.cli.argv import undecodable_argument

    undecodable = undecodable_argument(sys.argv[1:] if argv is None else argv)
    if undecodable:
        print(f"error: {undecodable}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser()
    args = parser.parse_args(argv)
    threshold = getattr(args, "threshold", None)
    if threshold is not None and not -1.0 <= threshold <= 1.0:
        print("error: --threshold must be between -1 and 1", file=sys.stderr)
        return EXIT_USAGE
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        # One "warning:" line (e.g. the cache fell back to memory), not Python's two-line format.
        warnings.showwarning = lambda message, category, *_args, **_kw: print(f"warning: {message}", file=sys.stderr)
        return _run(args)


def _run(args) -> int:
    """Run the command; every failure becomes one stderr line and an exit code."""
    from core.models.loading import default_backend

    try:
        _check_device(args)
        configure_endpoints(args)
        with default_backend(getattr(args, "backend", None)):  # --backend reaches every model this command loads
            return args.func(args)
    except (CliError, EndpointArgError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly, as `yes | head` does, and keep the
        # interpreter's final flush from printing a second BrokenPipeError.
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if os.environ.get("COSINE_PROBE_DEBUG"):
            raise
        print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} (set COSINE_PROBE_DEBUG=1 for details)", file=sys.stderr)
        return 1
