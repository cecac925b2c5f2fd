"""The scale figures: pairs/s and peak RSS at 1k/10k/100k pairs, the warm whole-process ratio, a 50k upload.

Each run is a new process (``python -m core run`` through a small wrapper
that reports ``ru_maxrss``), on synthetic pairs of 4-9 words from a fixed
vocabulary (distinct pairs, so none is dropped as a duplicate), with its own
empty cache folder.  Nothing here asserts: ``bench/__main__.py`` writes the
figures to ``bench/results.json``.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
VOCAB = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "house",
    "car",
    "blue",
    "red",
    "small",
    "big",
    "quickly",
    "slowly",
    "not",
    "never",
    "man",
    "woman",
    "child",
    "tree",
    "river",
    "city",
    "old",
    "new",
]
SIZES = (1_000, 10_000, 100_000)

_RUN_SCRIPT = """
import json, resource, sys, time
start = time.perf_counter()
from core.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "seconds": time.perf_counter() - start, "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "torch": "torch" in sys.modules}))
"""


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(4, 9))).capitalize() + "."


def write_pairs(path: Path, n: int, seed: int = 0) -> Path:
    """A TSV of ``n`` distinct pairs (premise, hypothesis, label), like the CANNOT files."""
    rng = random.Random(seed)
    seen: set[tuple[str, str]] = set()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("premise\thypothesis\tlabel\n")
        while len(seen) < n:
            pair = (_sentence(rng), _sentence(rng))
            if pair not in seen:
                seen.add(pair)
                fh.write(f"{pair[0]}\t{pair[1]}\t{len(seen) % 2}\n")
    return path


def _run(args: list[str], cache: str, command: str = "run") -> dict:
    env = {**os.environ, "COSINE_PROBE_CACHE_DIR": cache, "COSINE_PROBE_HISTORY": "off"}
    out = subprocess.run([PY, "-c", _RUN_SCRIPT, command, *args, "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def scale_runs(sizes: tuple[int, ...] = SIZES) -> dict:
    """pairs/s and peak RSS of ``run --suite FILE`` with the bundled L3 ONNX model, cold cache, per size."""
    from core.models.registry import MINILM_L3_ONNX

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            pairs = write_pairs(Path(tmp) / f"pairs-{n}.tsv", n)
            got = _run(["--suite", str(pairs), "--out", str(Path(tmp) / f"out-{n}"), "--models", MINILM_L3_ONNX], tempfile.mkdtemp(dir=tmp))
            rows[str(n)] = {
                "seconds": round(got["seconds"], 1),
                "pairs_per_s": round(n / got["seconds"], 1),
                "peak_rss_mb": round(got["max_rss_kb"] / 1024, 1),
            }
    out: dict = {"model": MINILM_L3_ONNX, "runs": rows}
    if "100000" in rows and "10000" in rows:
        ratio = rows["100000"]["peak_rss_mb"] / rows["10000"]["peak_rss_mb"]
        out["rss_100k_vs_10k"] = round(ratio, 3)
        out["targets"] = {"rss_100k_vs_10k": "<= 1.3"}
        out["met"] = bool(ratio <= 1.3)
    return out


def warm_whole_process() -> dict:
    """``run --suite all`` with every bundled model as a new process: cold cache, then warm (same cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--suite", "all", "--out", str(Path(tmp) / "out")]
        # Untimed: one-off set-up in the fresh cache folder (mpnet unpacked, exact ONNX exports made), no vector stored.
        _run([*args, "--no-cache"], tmp)
        cold = _run(args, tmp)
        warm = _run(args, tmp)
    ratio = cold["seconds"] / warm["seconds"]
    return {
        "cold_seconds": round(cold["seconds"], 2),
        "warm_seconds": round(warm["seconds"], 2),
        "warm_imported_torch": warm["torch"],
        "speedup": round(ratio, 1),
        "targets": {"speedup": ">= 10"},
        "met": bool(ratio >= 10),
    }


def retrieval_warm() -> dict:
    """``retrieval --suite retrieval --mitigate bm25,guard`` with the default models as a new process: cold cache, then warm.

    Retrieval took no warm path, so a fully cached run still loaded every model's weights
    (4.3 s and 690 MB warm against 17.7 s cold).  Now every runner goes through ``core.models.runs``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--suite", "retrieval", "--mitigate", "bm25,guard", "--json"]
        _run([*args, "--no-cache"], tmp, "retrieval")  # untimed: one-off set-up (mpnet unpacked, exact ONNX exports made)
        cold = _run(args, tmp, "retrieval")
        warm = _run(args, tmp, "retrieval")
    return {
        "cold_seconds": round(cold["seconds"], 2),
        "warm_seconds": round(warm["seconds"], 2),
        "cold_peak_rss_mb": round(cold["max_rss_kb"] / 1024, 1),
        "warm_peak_rss_mb": round(warm["max_rss_kb"] / 1024, 1),
        "warm_imported_torch": warm["torch"],
        "speedup": round(cold["seconds"] / warm["seconds"], 1),
        "targets": {"warm_imported_torch": "false (no weights loaded)"},
        "met": not warm["torch"],
    }


_UPLOAD_SCRIPT = """
import json, resource, sys, time
from pathlib import Path
from streamlit.testing.v1 import AppTest
sys.path.insert(0, "tests")
from apptest_support import open_page
data = Path(sys.argv[1]).read_bytes()
at = open_page("views/your_data.py", timeout=3600)
start = time.perf_counter()
at.session_state["yd_upload_bytes"] = data
at.session_state["yd_upload_name"] = "pairs.tsv"
at.run(timeout=3600)
parsed = time.perf_counter() - start
next(b for b in at.button if b.label == "Run on selected models").click().run(timeout=3600)
print(json.dumps({"seconds": time.perf_counter() - start, "parse_seconds": parsed,
                  "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "errors": [e.value for e in at.error][:3], "exceptions": [str(e.value)[:200] for e in at.exception][:3]}))
"""


def upload(n: int = 50_000) -> dict:
    """A ``n``-row upload scored by MiniLM on the Your data page (AppTest, one process): time and peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        pairs = write_pairs(Path(tmp) / "pairs.tsv", n, seed=3)
        env = {
            **os.environ,
            "COSINE_PROBE_CACHE_DIR": tmp,
            "COSINE_PROBE_DEFAULT_MODELS": "sentence-transformers/all-MiniLM-L6-v2",
            "COSINE_PROBE_HISTORY": "off",
        }
        start = time.perf_counter()
        out = subprocess.run([PY, "-c", _UPLOAD_SCRIPT, str(pairs)], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
    return {
        "rows": n,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "seconds": round(got["seconds"], 1),
        "parse_seconds": round(got["parse_seconds"], 1),
        "process_seconds": round(time.perf_counter() - start, 1),
        "peak_rss_mb": round(got["max_rss_kb"] / 1024, 1),
        "page_errors": got["errors"],
        "page_exceptions": got["exceptions"],
    }
