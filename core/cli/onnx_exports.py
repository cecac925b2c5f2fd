"""``models --export-onnx``: make and verify the exact ONNX exports of the bundled torch models now.

Without it the exports are made at first use; ``make setup`` runs it so that
the first real run does not pay for them.  Each line goes to stderr; stdout
keeps the model listing (one JSON document with ``--json``).
"""

from __future__ import annotations

import sys
import time

from core.constants import DEVICE_CPU
from core.models import registry
from core.models.onnx_export import STATUS_NOT_EXPORTABLE, export_status, is_exportable, read_verification


def export_status_of(name: str) -> str:
    """``verified``, ``not made yet``, ``damaged…`` for a bundled torch model; ``-`` for every other model."""
    meta = registry.resolve(name)
    return export_status(meta.bundle) if is_exportable(meta) and meta.bundle else STATUS_NOT_EXPORTABLE


def export_all() -> int:
    """Make (when missing or damaged) and verify every installed bundled torch model's export.

    Returns:
        0 when every export is verified, 1 when one could not be made (its line says why).
    """
    from core.models.loading import ModelUnavailable, availability, load_model

    failed = 0
    for name in registry.BUNDLED:
        meta = registry.resolve(name)
        if not is_exportable(meta) or not availability(name).available:
            continue
        start = time.perf_counter()
        try:
            load_model(name, device=DEVICE_CPU, backend=registry.BACKEND_ONNX)
        except ModelUnavailable as exc:
            print(f"error: exact ONNX export: {exc}", file=sys.stderr)
            failed = 1
            continue
        record = read_verification(meta.bundle or "") or {}
        print(
            f"exact ONNX export of {meta.short_name}: verified, max |cosine diff| against torch "
            f"{record.get('max_cosine_diff', float('nan')):.1e} "
            f"over {record.get('n_texts', 0)} texts ({time.perf_counter() - start:.1f} s)",
            file=sys.stderr,
        )
    return failed
