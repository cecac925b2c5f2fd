"""``models``: every registered model, whether it loads here, its ONNX export (``--export-onnx`` makes them now)."""

from __future__ import annotations

import json

import pandas as pd

from core.models import registry


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


def register(subparsers) -> None:
    """Add the ``models`` command."""
    p = subparsers.add_parser("models", help="list registered models and whether they can be loaded here")
    p.add_argument("extra", nargs="*", help="more ids or folders to check")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M")
    p.add_argument("--json", action="store_true")
    p.add_argument("--export-onnx", action="store_true", help="make and verify the exact fp32 ONNX exports of the bundled torch models now (else at first use)")
    p.set_defaults(func=cmd_models)
