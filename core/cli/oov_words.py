"""``oov-words``: invented out-of-vocabulary words for an entity, or (``--run``) the OOV measurement with k of them per entity."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from core import constants
from core.cli.common import EXIT_NO_MODEL, CliError, models_arg, print_errors, score_pairs
from core.cli.outputs import output_folder, remember_written
from core.files.export import safe_frame
from core.models import registry

# --reading's values; its default is core's one OOV reading (the pages' too), so CLI and app print the same deltas.
READING_CHOICES = {"b": constants.VARIANT_REPLACED_B, "both": constants.VARIANT_REPLACED_BOTH}

OOV_RUN_OUTPUTS = ("pairs.csv", "summary.json")


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
    # Before any model loads: an unwritable report costs nothing.
    out = output_folder(args.out, "--out", "oov-words", OOV_RUN_OUTPUTS) if args.run else None
    toks, errors = load_tokenizers(models_arg(args.models))
    print_errors(errors)
    if not toks:
        return EXIT_NO_MODEL
    return _oov_words_run(args, kinds, toks, out) if args.run else _oov_words_list(args, kinds, toks)


def _oov_words_list(args, kinds: list[str], toks: Sequence[tuple[str, object]]) -> int:
    from core.models.tokens import word_pieces
    from core.probes.invented import generate_words

    entity = args.word.strip()
    ref_name, ref = toks[0]
    words: list = []
    try:
        for kind in kinds:
            words += generate_words(
                ref,
                args.n,
                kind=kind,
                pieces=args.pieces,
                length=tuple(args.length),
                seed=args.seed,
                capitalize=entity[:1].isupper(),
                entity=entity,
                exclude=[w.word for w in words],
                other_tokenizers=[t for _, t in toks[1:]],
            )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    entity_pieces = word_pieces(ref, entity)
    if args.json:
        doc = {
            "entity": entity,
            "entity_pieces": entity_pieces,
            "model": ref_name,
            "checked_models": [n for n, _ in toks],
            "words": [w.as_dict() for w in words],
        }
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


def _oov_words_run(args, kinds: list[str], toks: Sequence[tuple[str, object]], out: Path | None) -> int:
    from core.papers.suites import read_suite_file
    from core.probes.invented import oov_replacements, oov_replicate_summary

    items = read_suite_file(constants.SUITE_OOV)
    if args.entities:
        known = dict(zip(items[constants.COL_ENTITY].str.casefold(), items[constants.COL_ENTITY], strict=True))
        unknown = [e for e in args.entities if e.casefold() not in known]
        if unknown:
            raise CliError(f"no OOV entity {', '.join(map(repr, unknown))}; entities: {', '.join(items[constants.COL_ENTITY])}")
        items = items[items[constants.COL_ENTITY].isin([known[e.casefold()] for e in args.entities])]
    reading = READING_CHOICES[args.reading]
    try:
        pairs = oov_replacements(
            items,
            toks[0][1],
            args.k,
            kinds=kinds,
            readings=[reading],
            pieces=args.pieces,
            length=tuple(args.length),
            seed=args.seed,
            other_tokenizers=[t for _, t in toks[1:]],
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    models = [n for n, _ in toks]
    print(f"{len(items)} entities × {len(kinds)} kinds × k={args.k} ({len(pairs)} pairs) × {len(models)} models", file=sys.stderr)
    result = score_pairs(args, pairs, models)
    if result is None:
        return EXIT_NO_MODEL
    tables = oov_replicate_summary(result.results)
    doc = {
        "k": args.k,
        "kinds": kinds,
        "reading": reading,
        "pieces": args.pieces,
        "length": list(args.length),
        "seed": args.seed,
        "word_model": models[0],
        "models": result.models,
        "errors": result.errors,
        "tables": {name: json.loads(t.to_json(orient="records")) for name, t in tables.items()},
    }
    if out is not None:
        safe_frame(result.results).to_csv(out / "pairs.csv", index=False)
        (out / "summary.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False))
        remember_written("oov-words", *(out / name for name in OOV_RUN_OUTPUTS))
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
        return 0
    titles = {
        "by_model": "mean delta per model and kind (CI over entities)",
        "plausible_vs_random": "plausible vs random (paired over entities)",
        "by_entity": f"mean delta per entity and kind (CI over the k={args.k} words)",
    }
    with pd.option_context(
        "display.width", 200, "display.max_columns", 20, "display.max_colwidth", 60, "display.float_format", "{:.4f}".format
    ):
        for name in ("by_model", "plausible_vs_random", "by_entity"):
            table = tables[name].assign(model=lambda t: t[constants.COL_MODEL].map(registry.short_name))
            print(f"\n== {titles[name]} ==")
            print(table.to_string(index=False) if not table.empty else "(empty)")
    if out is not None:
        print(f"\nwrote {out / 'pairs.csv'} and {out / 'summary.json'}")
    return 0


def register(subparsers) -> None:
    """Add the ``oov-words`` command."""
    p = subparsers.add_parser(
        "oov-words", help="invented out-of-vocabulary words for an entity, or the OOV measurement with k of them per entity"
    )
    p.add_argument("word", nargs="?", metavar="ENTITY_OR_WORD", help="the word to replace (its case sets the words' case)")
    p.add_argument("--run", action="store_true", help="run the OOV suite with k invented words per entity and kind, and summarize")
    p.add_argument("--n", type=int, default=10, help="words per kind to list (default %(default)s)")
    p.add_argument("--k", type=int, default=constants.OOV_REPLICATES, help="with --run: words per entity and kind (default %(default)s)")
    p.add_argument(
        "--kind",
        choices=[*constants.WORD_KINDS, "both"],
        default="both",
        help="plausible (English-like), random (letters) or both (default)",
    )
    p.add_argument("--pieces", type=int, help="exact subword pieces per word under the first model's tokenizer (>= 2; default: any)")
    p.add_argument(
        "--length",
        type=int,
        nargs=2,
        default=list(constants.INVENTED_LENGTH),
        metavar=("MIN", "MAX"),
        help="letters per word (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed; the same seed gives the same words (default %(default)s)")
    p.add_argument(
        "--models",
        "--model",
        nargs="+",
        metavar="M",
        help=(
            "pieces count under the first; words are out of every one's vocabulary "
            "(default: the installed bundled models but the approximate 4-bit e5)"
        ),
    )
    p.add_argument("--entities", nargs="+", metavar="E", help="with --run: only these OOV-suite entities")
    p.add_argument(
        "--reading",
        choices=list(READING_CHOICES),
        default=next(flag for flag, reading in READING_CHOICES.items() if reading == constants.OOV_DEFAULT_READING),
        help="with --run: replace the entity only in the second sentence (b, as the paper's figures and the pages) "
        "or in both (default %(default)s)",
    )
    p.add_argument("--out", help="with --run: folder for pairs.csv and summary.json")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_oov_words)
