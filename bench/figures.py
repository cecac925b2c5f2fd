"""The six performance figures, each a function returning a dict.

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

    Ours is :func:`core.scoring.runner.run_pairs` (cache, token counts, Jaccard);
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


def _seed_models(models):
    """The models as the seed ran them: the bundled torch models on torch (the exact ONNX exports came later)."""
    from core.models.loading import load_model

    # Only an exact export has a `kind`; the bundled ONNX-only models ran on ONNX in the seed too.
    return [load_model(m.name, backend="torch") if getattr(m.backend, "kind", "") == "onnx" else m for m in models]


def full_suites_cold() -> dict:
    """Figure 2: every suite × bundled model, empty disk cache, models loaded.

    Ours runs each model on its default backend (the bundled torch models on
    their verified exact ONNX export).  The baseline is the seed,
    the failure-mode paper's runner: ``model.encode([a, b])`` once per pair
    and model on torch, no deduplication, no cache.
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
    per_model = {
        name: {
            "unique_texts": r.n_unique,
            "seconds": round(r.seconds, 2),
            "texts_per_s": round(r.n_unique / r.seconds, 1),
            "backend": r.backend,
        }
        for name, r in result.reports.items()
    }
    start = time.perf_counter()
    for m in _seed_models(models):
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
        "load_average_1min": round(os.getloadavg()[0], 2),
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
    """Figure 4: from `make run`'s command (`python -m ui.serve`: the pages' imports, then `streamlit run app.py`) to the home
    page rendered in Chromium."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COSINE_PROBE_CACHE_DIR": tmp}
        start = time.perf_counter()
        server = subprocess.Popen(
            [PY, "-m", "ui.serve", "--server.port", str(port), "--server.headless", "true"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
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
    # What the code did before the change: count, encode and Jaccard-tokenize the whole text.
    from core.models.tokens import token_counts
    token_counts(m.tokenizer, [text, short]); m.backend.embed([text, short]); m.tokenizer.tokenize(text)
else:
    from core.scoring.runner import run_pairs
    run_pairs(pd.DataFrame({"text_a": [text], "text_b": [short]}), [MINILM_L6], cache=None)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "extra_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before}))
"""


def long_text() -> dict:
    """One pair with a 4 MB cell, scored by MiniLM, whole text vs cut before tokenizing."""
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


def _suite_texts_and_pairs():
    from core.papers.suites import load_suite

    pairs = load_suite("all")
    texts = list(dict.fromkeys([*pairs["text_a"], *pairs["text_b"]]))
    index = {t: i for i, t in enumerate(texts)}
    return texts, [index[t] for t in pairs["text_a"]], [index[t] for t in pairs["text_b"]]


def onnx_fp32_vs_torch(repeats: int = 3) -> dict:
    """Each bundled torch model on torch and on its exact fp32 ONNX export, the suites' texts, one process.

    Runs alternate (torch, ONNX, torch, ONNX, …) so background load hits both
    alike; the figure is the ratio of the medians.  The export's one-off cost
    (export and verification, from its record) is reported beside it.
    """
    from core.models.loading import load_model
    from core.models.onnx_export import read_verification
    from core.models.registry import MINILM_L6, MPNET

    texts, a_idx, b_idx = _suite_texts_and_pairs()
    out: dict = {"texts": len(texts), "repeats": repeats}
    for name in (MINILM_L6, MPNET):
        pair = {"torch": load_model(name, device="cpu", backend="torch"), "onnx": load_model(name, device="cpu", backend="onnx")}
        seconds: dict[str, list[float]] = {"torch": [], "onnx": []}
        vecs = {}
        for m in pair.values():
            m.backend.embed(texts[:8])  # warm-up: first-call allocations stay out of the timing
        for _ in range(repeats):
            for kind, m in pair.items():
                start = time.perf_counter()
                vecs[kind] = m.backend.embed(texts)
                seconds[kind].append(time.perf_counter() - start)
        cos = {k: np.einsum("ij,ij->i", v[a_idx].astype(np.float64), v[b_idx].astype(np.float64)) for k, v in vecs.items()}
        med = {k: float(np.median(v)) for k, v in seconds.items()}
        record = read_verification(pair["onnx"].meta.bundle or "") or {}
        out[name] = {
            "torch_texts_per_s": round(len(texts) / med["torch"], 1),
            "onnx_texts_per_s": round(len(texts) / med["onnx"], 1),
            "onnx_speedup": round(med["torch"] / med["onnx"], 2),
            "best_run_speedup": round(min(seconds["torch"]) / min(seconds["onnx"]), 2),
            "max_cosine_diff": float(np.abs(cos["onnx"] - cos["torch"]).max()),
            "export_seconds": record.get("export_seconds"),
            "export_and_verify_seconds": record.get("seconds"),
        }
    out["speedup_minilm"], out["speedup_mpnet"] = out[MINILM_L6]["onnx_speedup"], out[MPNET]["onnx_speedup"]
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    out["targets"] = {"max_cosine_diff": "<= 1e-5 (exact)"}
    out["met"] = bool(all(out[n]["max_cosine_diff"] <= 1e-5 for n in (MINILM_L6, MPNET)))
    return out


def _synthetic_pairs(n_pairs: int, seed: int = 0):
    """n pairs of 10-25 words drawn from the suites' vocabulary: real words, nonsense sentences, every text distinct."""
    import pandas as pd

    texts, _, _ = _suite_texts_and_pairs()
    vocab = sorted({w.strip(".,;:!?\"'()").lower() for t in texts for w in t.split()} - {""})
    rng = np.random.default_rng(seed)

    def sentence(i: int) -> str:
        return f"{i} " + " ".join(rng.choice(vocab, size=int(rng.integers(10, 26))))

    return pd.DataFrame(
        {
            "text_a": [sentence(i) for i in range(n_pairs)],
            "text_b": [sentence(i) for i in range(n_pairs)],
            "category": "synthetic",
            "suite": "bench",
        }
    )


def local_vs_ray(n_pairs: int = 100_000) -> dict:
    """The same staged file of synthetic pairs on the local engine and with the Ray encoder (local instance), L3 ONNX model.

    100k pairs: several minutes per engine on two cores, each from an empty
    cache.  Ray's time includes starting its local instance and, per chunk,
    its actors (a fixed cost of several seconds per chunk).
    """
    import pandas as pd

    from core.models.cache import EmbeddingCache
    from core.models.engines import RayEngine
    from core.models.options import EncodeOptions
    from core.models.registry import MINILM_L3_ONNX
    from core.scoring.chunked import score_staged, stage_pairs

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        staged = root / "pairs.parquet"
        stage_pairs([_synthetic_pairs(n_pairs)], staged)
        runs = {}
        for engine in ("local", "ray"):
            out = root / engine
            out.mkdir()
            start = time.perf_counter()
            options = EncodeOptions(engine=RayEngine(quiet=True)) if engine == "ray" else EncodeOptions()
            result = score_staged(staged, [MINILM_L3_ONNX], out, cache=EmbeddingCache(False), options=options, write_csv=False)
            seconds = time.perf_counter() - start
            if result.errors:
                raise RuntimeError(f"{engine}: {result.errors}")
            runs[engine] = {
                "seconds": round(seconds, 2),
                "pairs_per_s": round(n_pairs / seconds, 1),
                "cosine": pd.read_parquet(out / "pairs.parquet", columns=["cosine"])["cosine"].to_numpy(),
            }
    diff = float(np.abs(runs["local"].pop("cosine") - runs["ray"].pop("cosine")).max())
    return {
        "pairs": n_pairs,
        "model": MINILM_L3_ONNX,
        "local": runs["local"],
        "ray": runs["ray"],
        "ray_vs_local_throughput": round(runs["ray"]["pairs_per_s"] / runs["local"]["pairs_per_s"], 2),
        "max_cosine_diff": diff,
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "targets": {"max_cosine_diff": "<= 1e-6"},
        "met": bool(diff <= 1e-6),
    }
