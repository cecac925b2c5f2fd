"""`make bench`: measure the performance figures, write bench/results.json, print a table.

Usage: python -m bench [FIGURE ...]   (default: all)
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
import time
from pathlib import Path

from bench import audit, audit_1m, browser, figures, hashing, page_rerun, perturb, scale, store_read, tune

FIGURES = {
    "typed_pair_warm": figures.typed_pair_warm,
    "full_suites_cold": figures.full_suites_cold,
    "full_suites_warm": figures.full_suites_warm_vs_cold,
    "app_start": figures.app_start,
    "peak_memory": figures.peak_memory,
    "backends": figures.backends,
    "long_text": figures.long_text,
    "onnx_fp32_vs_torch": figures.onnx_fp32_vs_torch,
    "local_vs_ray": figures.local_vs_ray,
    "failure_modes_rerun": page_rerun.failure_modes_rerun,
    # Any size in chunks, warm runs without weights, the app's upload limit
    "scale_runs": scale.scale_runs,
    "warm_whole_process": scale.warm_whole_process,
    # A warm retrieval run loads no weights
    "retrieval_warm": scale.retrieval_warm,
    "upload_50k": scale.upload,
    # Every weights file and export hashed in full once per process
    "weights_hashing": hashing.weights_hashing,
    # A default `cosine-probe tune` of MiniLM-L6
    "tune_default": tune.tune_default,
    # What a tune's estimate is made of: MiniLM-L6's seconds per text trained and encoded (core/probes/tune/estimate.py)
    "tune_rates": tune.tune_rates,
    # Perturb on the page's longest text of numbers, bounded
    "perturb_long_text": perturb.perturb_long_text,
    # What a new user waits for in Chromium, warm cache, bundled models
    "browser": browser.browser,
    # The corpus audit at 100,000 passages, cold and warm
    "audit_100k": audit.audit_scale,
    # Audit --engine ray on a two-node Ray cluster, a worker node killed mid-run (too slow for make test)
    "audit_ray_cluster": audit.ray_cluster,
    # a store read within bounds: peak memory of reading 100,000 x 384 from LanceDB, pgvector and Chroma
    "store_read": store_read.store_read,
    # a million passages from their vectors on this machine (IVF cells), and the searches compared at 100,000
    "audit_1m": audit_1m.audit_1m,
    "audit_1m_methods": audit_1m.methods,
    # the whole audit (partition, verify, classify) on a three-node Ray cluster, a worker node killed mid-run
    "audit_ray_partitions": functools.partial(audit.ray_cluster, "tests/core/audit/test_ray_audit_cluster.py"),
    # eight browser sessions at once on one server (make test runs the same test with three)
    "concurrency_8": functools.partial(
        audit.ray_cluster, "tests/e2e/test_concurrency.py::test_concurrent_sessions", COSINE_PROBE_CONCURRENCY_SESSIONS="8"
    ),
}
RESULTS = Path(__file__).parent / "results.json"


def _machine() -> dict:
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "memory_gb": round(mem_gb, 1), "platform": platform.platform()}


def _merge_figure(name: str, figure: dict) -> dict:
    """Write one figure into results.json under a lock, re-reading the file first.

    Two benchmarks run side by side (``python -m bench a`` and ``python -m
    bench b``) each hold the file from their start; writing that copy back
    would drop the figure the other one wrote meanwhile.
    """
    import fcntl

    with open(RESULTS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        results["machine"] = _machine()
        results.setdefault("figures", {})[name] = figure
        tmp = RESULTS.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1))
        tmp.replace(RESULTS)
    return results


def _headline(name: str, fig: dict) -> str:
    keys = {
        "typed_pair_warm": ("p50_ms", "p95_ms", "ratio_to_bare"),
        "full_suites_cold": ("seconds", "baseline_seconds", "speedup_vs_baseline"),
        "full_suites_warm": ("cold_seconds", "warm_seconds", "speedup"),
        "app_start": ("seconds",),
        "peak_memory": ("peak_rss_mb",),
        "backends": ("int8_vs_fp32_throughput", "int8_vs_fp32_max_cosine_diff"),
        "long_text": ("whole_extra_peak_mb", "bounded_extra_peak_mb", "whole_seconds", "bounded_seconds"),
        "onnx_fp32_vs_torch": ("speedup_minilm", "speedup_mpnet", "load_average_1min"),
        "local_vs_ray": ("pairs", "ray_vs_local_throughput", "max_cosine_diff"),
        "failure_modes_rerun": ("threshold_new_value_median_s", "threshold_revisited_median_s", "search_median_s", "met"),
        "scale_runs": ("runs", "rss_100k_vs_10k"),
        "warm_whole_process": ("cold_seconds", "warm_seconds", "speedup", "warm_imported_torch"),
        "retrieval_warm": ("cold_seconds", "warm_seconds", "warm_peak_rss_mb", "warm_imported_torch"),
        "upload_50k": ("seconds", "peak_rss_mb"),
        "weights_hashing": ("minilm_hash_seconds", "mpnet_hash_seconds"),
        "tune_default": ("seconds", "peak_rss_mb", "held_out_negation_drop", "met"),
        "tune_rates": ("train_seconds_per_text", "eval_seconds_per_text", "failing_share", "load_average_1min"),
        "perturb_long_text": ("slowest_seconds", "slowest_unbounded_seconds", "met"),
        "audit_100k": ("cold_seconds", "cold_peak_rss_mb", "warm_seconds", "met"),
        "audit_ray_cluster": ("passed", "seconds", "load_average_1min_before"),
        "store_read": ("float32_vectors_mb", "worst_read_vs_vectors"),
        "audit_1m": ("seconds", "cpu_seconds", "peak_rss_mb", "recall", "planted_found", "below_threshold", "load_average_1min_before"),
        "audit_1m_methods": ("rows", "load_average_1min_after"),
        "audit_ray_partitions": ("passed", "seconds", "load_average_1min_before"),
        "concurrency_8": ("passed", "seconds", "load_average_1min_before"),
        "browser": (
            "home_idle_s",
            "first_cosine_s",
            "compare_idle_s",
            "first_typed_pair_s",
            "tab_first_click_s",
            "tab_click_median_s",
            "threshold_move_median_s",
            "example_pill_median_s",
            "retrieval_default_s",
        ),
    }.get(name, ())
    return ", ".join(f"{k}={fig.get(k)}" for k in keys)


def main(argv: list[str]) -> int:
    wanted = argv or list(FIGURES)
    unknown = [w for w in wanted if w not in FIGURES]
    if unknown:
        print(f"error: unknown figure(s) {unknown}; choose from {list(FIGURES)}", file=sys.stderr)
        return 2
    results: dict = {}
    for name in wanted:
        print(f"measuring {name} …", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            figure = {**FIGURES[name](), "measured_at": time.strftime("%Y-%m-%d %H:%M:%S")}
        except Exception as exc:  # noqa: BLE001 - one failed figure must not lose the others
            figure = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"  done in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        results = _merge_figure(name, figure)
    print(f"\n{'figure':<20} {'met':<6} headline")
    for name, fig in results["figures"].items():
        met = fig.get("met", "-") if "error" not in fig else "ERROR"
        print(f"{name:<20} {str(met):<6} {fig.get('error') or _headline(name, fig)}")
    print(f"\nwrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
