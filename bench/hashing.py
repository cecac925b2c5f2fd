"""What hashing the bundled weights and exact exports in full costs on every process start.

Each file is hashed with the project's own :func:`core.models.bundled.sha256_file`
(median of three, page cache warm, as on a second start) and set beside the
time the model takes to load on torch, which every process pays anyway.
"""

from __future__ import annotations

import statistics
import time

from bench.figures import PY, ROOT


def _hash_seconds(path, repeats: int) -> float:
    from core.models.bundled import sha256_file

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sha256_file(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _load_seconds(name: str) -> float:
    """Loading the model on torch in a fresh process (what a CLI start pays besides hashing)."""
    import subprocess

    code = (
        "import time; from core.models.loading import load_model; t=time.perf_counter(); "
        f"load_model({name!r}, backend='torch'); print(time.perf_counter()-t)"
    )
    out = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=600)
    return float(out.stdout.strip().splitlines()[-1])


def weights_hashing(repeats: int = 3) -> dict:
    """Seconds to sha256 each bundled weights file and each exact ONNX export, against a torch load."""
    from core.models.bundled import BUNDLES, bundle_path
    from core.models.onnx_export import export_folder, export_status
    from core.models.registry import MINILM_L6, MPNET, REGISTRY

    out: dict = {"repeats": repeats}
    for name in (MINILM_L6, MPNET):
        key = REGISTRY[name].bundle or ""
        weights = bundle_path(key) / BUNDLES[key].weights.rsplit("/", 1)[-1]
        files = {"weights": weights}
        export = export_folder(key) / "model.onnx"
        if export_status(key) == "verified":
            files["onnx_export"] = export
        entry: dict = {}
        for kind, path in files.items():
            seconds = _hash_seconds(path, repeats)
            size_mb = path.stat().st_size / 2**20
            entry[f"{kind}_mb"] = round(size_mb, 1)
            entry[f"{kind}_hash_seconds"] = round(seconds, 3)
            entry[f"{kind}_mb_per_s"] = round(size_mb / seconds, 0)
        entry["torch_load_seconds"] = round(_load_seconds(name), 2)
        entry["hash_share_of_load"] = round(entry["weights_hash_seconds"] / entry["torch_load_seconds"], 3)
        out[name] = entry
    out["minilm_hash_seconds"] = out[MINILM_L6]["weights_hash_seconds"]
    out["mpnet_hash_seconds"] = out[MPNET]["weights_hash_seconds"]
    return out
