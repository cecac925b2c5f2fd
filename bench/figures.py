"""The six performance figures of issue 5, each a function returning a dict.

Comparisons are ratios measured in the same run, because the machines are
shared and noisy.  Nothing here asserts: ``bench/__main__.py`` writes the
figures and the targets to ``bench/results.json`` and prints a table.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def _bundled_models():
    from core.models import registry
    from core.models.loading import load_model

    return [load_model(name) for name in registry.BUNDLED]


def typed_pair_warm(n_pairs: int = 40) -> dict:
    """Figure 1: one typed pair through every bundled model, models loaded, cache cold.

    Ours is :func:`core.runner.run_pairs` (cache, token counts, Jaccard);
    the bare figure is the backends' own ``embed`` on the same two texts.
    """
    import pandas as pd

    from core.models.cache import EmbeddingCache
    from core.papers.suites import load_suite
    from core.scoring.runner import run_pairs

    models = _bundled_models()
    names = [m.name for m in models]
    pairs = load_suite("failure-modes").sample(n=n_pairs * 2, random_state=1).drop_duplicates("text_a").head(n_pairs)
    # Warm-up so one-off costs (lazy imports, first kernel call) stay out of both sides.
    run_pairs(pairs.head(2), names, cache=EmbeddingCache(False))
    ours, bare = [], []
    for row in pairs.itertuples():
        one = pd.DataFrame({"text_a": [row.text_a], "text_b": [row.text_b]})
        start = time.perf_counter()
        run_pairs(one, names, cache=EmbeddingCache(False))
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        for m in models:
            m.backend.embed([m.meta.prompt + row.text_a, m.meta.prompt + row.text_b])
        bare.append(time.perf_counter() - start)
    p50, p95, bare_p50 = _percentile(ours, 50) * 1e3, _percentile(ours, 95) * 1e3, _percentile(bare, 50) * 1e3
    return {
        "pairs": len(ours),
        "models": names,
        "p50_ms": round(p50, 1),
        "p95_ms": round(p95, 1),
        "bare_encode_p50_ms": round(bare_p50, 1),
        "ratio_to_bare": round(p50 / bare_p50, 3),
        "targets": {"ratio_to_bare": "<= 1.3", "p50_ms": "<= 150"},
        "met": bool(p50 / bare_p50 <= 1.3 and p50 <= 150),
    }


def full_suites_cold() -> dict:
    """Figure 2: every suite × bundled model, empty disk cache, models loaded.

    The baseline is the failure-mode paper's runner: ``model.encode([a, b])``
    once per pair and model, no deduplication, no cache.
    """
    from core.models.cache import EmbeddingCache
    from core.papers.suites import load_suite
    from core.scoring.runner import run_pairs

    models = _bundled_models()
    pairs = load_suite("all")
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "embeddings.sqlite")
        start = time.perf_counter()
        result = run_pairs(pairs, [m.name for m in models], cache=cache)
        ours = time.perf_counter() - start
    per_model = {name: {"unique_texts": r.n_unique, "seconds": round(r.seconds, 2), "texts_per_s": round(r.n_unique / r.seconds, 1)} for name, r in result.reports.items()}
    start = time.perf_counter()
    for m in models:
        for a, b in zip(pairs["text_a"], pairs["text_b"], strict=True):
            m.backend.embed([m.meta.prompt + a, m.meta.prompt + b])
    baseline = time.perf_counter() - start
    return {
        "pairs": len(pairs),
        "models": len(models),
        "seconds": round(ours, 2),
        "baseline_seconds": round(baseline, 2),
        "speedup_vs_baseline": round(baseline / ours, 2),
        "per_model": per_model,
        "targets": {"speedup_vs_baseline": ">= 3"},
        "met": bool(baseline / ours >= 3),
    }


_WARM_SCRIPT = """
import json, sys, time
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.loading import load_model
from core.scoring.runner import run_pairs
from core.papers.suites import load_suite
names = list(registry.BUNDLED)
for n in names: load_model(n)
pairs = load_suite("all")
cache = EmbeddingCache()
t = time.perf_counter(); r = run_pairs(pairs, names, cache=cache); s = time.perf_counter() - t
print(json.dumps({"seconds": s, "encoded": sum(x.n_encoded for x in r.reports.values())}))
"""


def full_suites_warm_vs_cold() -> dict:
    """Figure 3: the same full run in two fresh processes sharing a disk cache."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COSINE_PROBE_CACHE_DIR": tmp}
        runs = []
        for _ in range(2):
            out = subprocess.run([PY, "-c", _WARM_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    return {
        "cold_seconds": round(cold["seconds"], 2),
        "warm_seconds": round(warm["seconds"], 3),
        "warm_texts_encoded": warm["encoded"],
        "speedup": round(cold["seconds"] / warm["seconds"], 1),
        "targets": {"speedup": ">= 20"},
        "met": bool(cold["seconds"] / warm["seconds"] >= 20),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_start() -> dict:
    """Figure 4: from `streamlit run` to the home page rendered in Chromium."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COSINE_PROBE_CACHE_DIR": tmp}
        start = time.perf_counter()
        server = subprocess.Popen(
            [str(Path(PY).parent / "streamlit"), "run", "app.py", "--server.port", str(port), "--server.headless", "true"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium",
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
                )
                page = browser.new_page()
                deadline = time.time() + 60
                while True:
                    try:
                        page.goto(f"http://127.0.0.1:{port}/", timeout=2000)
                        break
                    except Exception:  # noqa: BLE001 - server not up yet
                        if time.time() > deadline:
                            raise
                        time.sleep(0.1)
                page.get_by_role("heading", name="cosine-probe").first.wait_for(timeout=60000)
                seconds = time.perf_counter() - start
                browser.close()
        finally:
            server.terminate()
            server.wait(10)
    return {"seconds": round(seconds, 2), "targets": {"seconds": "< 5"}, "met": bool(seconds < 5)}


_MEM_SCRIPT = """
import json, resource
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.loading import load_model
from core.scoring.runner import run_pairs
from core.papers.suites import load_suite
names = list(registry.BUNDLED)
for n in names: load_model(n)
run_pairs(load_suite("all"), names, cache=EmbeddingCache(False))
print(json.dumps({"max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def peak_memory() -> dict:
    """Figure 5: peak RSS of a process that loads every bundled model and runs the suites."""
    out = subprocess.run([PY, "-c", _MEM_SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    mb = json.loads(out.stdout.strip().splitlines()[-1])["max_rss_kb"] / 1024
    return {"peak_rss_mb": round(mb, 1), "targets": {"peak_rss_mb": "< 2560"}, "met": bool(mb < 2560)}


def backends() -> dict:
    """Figure 6: MiniLM-L6 as torch fp32 vs ONNX int8 on the suites' texts."""
    from core.models.loading import load_model
    from core.models.registry import MINILM_L3_ONNX, MINILM_L6, MINILM_L6_INT8
    from core.papers.suites import load_suite

    pairs = load_suite("all")
    texts = list(dict.fromkeys([*pairs["text_a"], *pairs["text_b"]]))
    out: dict = {"texts": len(texts)}
    vecs = {}
    for name in (MINILM_L6, MINILM_L6_INT8, MINILM_L3_ONNX):
        m = load_model(name)
        m.backend.embed(texts[:8])
        start = time.perf_counter()
        vecs[name] = m.backend.embed(texts)
        out[name] = {"seconds": round(time.perf_counter() - start, 3), "texts_per_s": round(len(texts) / (time.perf_counter() - start), 1)}
    a_idx = [texts.index(t) for t in pairs["text_a"]]
    b_idx = [texts.index(t) for t in pairs["text_b"]]

    def pair_cos(v):
        return np.einsum("ij,ij->i", v[a_idx], v[b_idx])

    out["int8_vs_fp32_throughput"] = round(out[MINILM_L6_INT8]["texts_per_s"] / out[MINILM_L6]["texts_per_s"], 2)
    out["int8_vs_fp32_max_cosine_diff"] = round(float(np.abs(pair_cos(vecs[MINILM_L6_INT8]) - pair_cos(vecs[MINILM_L6])).max()), 4)
    out["note"] = "ONNX fp32 of MiniLM-L6 is not bundled; the int8 export is the ONNX comparison."
    return out


_LONG_TEXT_SCRIPT = """
import json, resource, sys, time
import pandas as pd
from core.models.loading import load_model
from core.models.registry import MINILM_L6
m = load_model(MINILM_L6)
m.backend.embed(["warm up"])
words = "the patient was given a dose of penicillin and observed for an allergic reaction overnight".split()
text = " ".join(words[i % len(words)] for i in range(int(sys.argv[2]) // 5))[: int(sys.argv[2])]
short = "The patient is allergic to penicillin"
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if sys.argv[1] == "whole":
    # What the code did before issue 18: count, encode and Jaccard-tokenize the whole text.
    from core.models.tokens import token_counts
    token_counts(m.tokenizer, [text, short]); m.backend.embed([text, short]); m.tokenizer.tokenize(text)
else:
    from core.scoring.runner import run_pairs
    run_pairs(pd.DataFrame({"text_a": [text], "text_b": [short]}), [MINILM_L6], cache=None)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "extra_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}))
"""


def long_text() -> dict:
    """Issue 18, point 10: one pair with a 4 MB cell, scored by MiniLM, whole text vs cut before tokenizing."""
    n_chars = 4_000_000
    out: dict = {"chars": n_chars}
    for mode in ("whole", "bounded"):
        run = subprocess.run([PY, "-c", _LONG_TEXT_SCRIPT, mode, str(n_chars)], cwd=ROOT, capture_output=True, text=True, check=True)
        fig = json.loads(run.stdout.strip().splitlines()[-1])
        out[f"{mode}_extra_peak_mb"] = round(fig["extra_kb"] / 1024, 1)
        out[f"{mode}_seconds"] = round(fig["seconds"], 2)
    out["targets"] = {"bounded_extra_peak_mb": "< 256"}
    out["met"] = bool(out["bounded_extra_peak_mb"] < 256)
    return out
