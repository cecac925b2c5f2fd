"""``models``: every registered model, whether it loads here, its ONNX export (``--export-onnx`` makes them now);
``--warm`` fills the embedding cache with what a new user will certainly ask for."""

from __future__ import annotations

import argparse
import json

import pandas as pd

from core.models import registry


def cmd_warm(args) -> int:
    """``models --warm``: encode the shipped suites' and the pages' first texts with the default models, into the cache.

    Idempotent: a model whose every text is cached loads no weights and encodes nothing.
    """
    import sys

    from core.cli.common import EXIT_NO_MODEL, CliError, default_models, embedding_cache, print_progress, run_options
    from core.probes.warmup import warm_cache

    models = list(args.warm_models or default_models())
    if not models:
        raise CliError("no model given and no bundled model is installed; run `make setup`")
    report = warm_cache(
        models, cache=embedding_cache(args), options=run_options(args), progress=print_progress if sys.stderr.isatty() else None
    )  # a log (make setup, CI) gets the summary only
    if sys.stderr.isatty():
        print(file=sys.stderr)
    for m in report.models:
        if m.error:
            print(f"error: {m.error}", file=sys.stderr)
        else:
            how = "weights loaded" if m.loaded else "no weights loaded"
            print(
                f"{registry.short_name(m.model) if m.model in registry.REGISTRY else m.model}: {m.n_texts} texts, "
                f"{m.n_encoded} encoded, {m.n_cached} already cached, {m.seconds:.1f} s ({how})"
            )
    print(f"warm: {report.n_encoded} texts encoded in {report.seconds:.1f} s")
    return EXIT_NO_MODEL if report.failed and len(report.failed) == len(report.models) else 0


def cmd_models(args) -> int:
    from core.cli.onnx_exports import export_all, export_status_of
    from core.models.loading import availability

    if getattr(args, "warm", False):
        return cmd_warm(args)

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


def register(subparsers) -> None:
    """Add the ``models`` command."""
    p = subparsers.add_parser("models", help="list registered models and whether they can be loaded here")
    p.add_argument("extra", nargs="*", help="more ids or folders to check")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--export-onnx",
        action="store_true",
        help="make and verify the exact fp32 ONNX exports of the bundled torch models now (else at first use)",
    )
    p.add_argument(
        "--warm",
        action="store_true",
        help="encode the shipped suites and the pages' examples with the default models into the "
        "embedding cache now (what `make setup` does), so a first click is answered from the cache; quick when already warm",
    )
    p.add_argument("--warm-models", nargs="+", metavar="M", help="with --warm: these models instead of the bundled defaults")
    p.add_argument("--no-cache", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_models)
