"""The size figures: ``cosine-probe audit`` of 100,000 passages with MiniLM-L3 (ONNX), cold then warm.

The passages are made from the shipped WordNet definitions
(``data/corpora/wordnet-adjectives.csv``): each joins three definitions
drawn with a fixed seed, so all are distinct, read like short dictionary
passages and share definitions with others (close pairs exist but do not
swamp the run).  Each run is a new process with its own cache folder (cold:
empty; warm: every vector cached).  Nothing here asserts:
``bench/__main__.py`` writes the figures to ``bench/results.json``.
"""

from __future__ import annotations

import csv
import json
import random
import tempfile
from pathlib import Path

from bench.scale import _run

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "corpora" / "wordnet-adjectives.csv"
THRESHOLD = 0.8
TARGETS = {"cold_seconds": "< 900", "warm_seconds": "< 60", "cold_peak_rss_mb": "< 2048"}


def write_corpus(path: Path, n: int, seed: int = 0) -> Path:
    """``n`` distinct passages, each three WordNet definitions joined, one per line."""
    with SOURCE.open(encoding="utf-8") as fh:
        glosses = [row["text"] for row in csv.DictReader(fh)]
    rng = random.Random(seed)
    seen: set[str] = set()
    with path.open("w", encoding="utf-8") as out:
        while len(seen) < n:
            passage = "; ".join(rng.sample(glosses, 3)).capitalize() + "."
            if passage not in seen:
                seen.add(passage)
                out.write(passage + "\n")
    return path


def audit_scale(n: int = 100_000) -> dict:
    """Seconds, peak RSS and where the time goes for ``audit --corpus`` of ``n`` passages, cold and warm."""
    from core.models.registry import MINILM_L3_ONNX

    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "corpus.txt", n)
        cache = tempfile.mkdtemp(dir=tmp)
        out = Path(tmp) / "out"
        args = ["--corpus", str(corpus), "--models", MINILM_L3_ONNX, "--threshold", str(THRESHOLD), "--out", str(out)]
        cold = _run(args, cache, "audit")
        cold_doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        warm = _run(args, cache, "audit")
        warm_doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    overall = next(r for r in cold_doc["summary"] if r["mode"] == "all")
    figure = {
        "model": MINILM_L3_ONNX,
        "n_passages": cold_doc["n_passages"],
        "threshold": THRESHOLD,
        "close_pairs": int(
            overall["twin_pairs"] + overall["near_duplicate_pairs"] + overall.get("several_differences_pairs", 0) + overall["other_pairs"]
        ),
        "twin_pairs": int(overall["twin_pairs"]),
        "cold_seconds": round(cold["seconds"], 1),
        "cold_peak_rss_mb": round(cold["max_rss_kb"] / 1024, 1),
        "cold_timings": next(iter(cold_doc["timings"].values())),
        "warm_seconds": round(warm["seconds"], 1),
        "warm_peak_rss_mb": round(warm["max_rss_kb"] / 1024, 1),
        "warm_timings": next(iter(warm_doc["timings"].values())),
        "warm_imported_torch": warm["torch"],
        "targets": TARGETS,
    }
    figure["met"] = bool(figure["cold_seconds"] < 900 and figure["warm_seconds"] < 60 and figure["cold_peak_rss_mb"] < 2048)
    return figure


def ray_cluster(test: str = "tests/core/audit/test_ray.py", **env: str) -> dict:
    """``tests/core/audit/test_ray.py`` in full: the audit on a two-node Ray cluster, a worker node killed mid-run
    (or another such cluster test: ``tests/core/audit/test_ray_audit_cluster.py``, the whole audit on three nodes).

    Also any other test too slow for ``make test`` at full size, its size given by ``env`` (the eight-session
    concurrency test). Too slow for ``make test`` on 2 cores (two Ray nodes, the model loaded by two actors, the dead node's
    detection), so it runs here: whether it passed, and its seconds with the load average beside them.
    """
    import os
    import subprocess
    import sys
    import time

    env = {**os.environ, "COSINE_PROBE_RAY_CLUSTER_TEST": "1", "COSINE_PROBE_HISTORY": "off", **env}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return {
        "passed": done.returncode == 0,
        "seconds": round(time.perf_counter() - start, 1),
        "load_average_1min_before": round(load, 2),
        "last_line": (done.stdout.strip().splitlines() or [""])[-1],
        "met": done.returncode == 0,
    }
