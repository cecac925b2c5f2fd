"""Peak memory of reading a vector store: 100,000 passages x 384 dimensions from LanceDB, pgvector and Chroma.

Usage: python -m bench store_read   (or ``python -m bench.store_read [N]`` to print the figure alone)

Each store is built once in a temporary folder (random unit vectors, short
distinct texts; pgvector on the private server of ``tests/store_support.py``),
then read by ``open_store(uri).read()`` in a new process that reports the
peak resident size during the read above the resident size it started from
(the high-water mark reset once the store is open, ``/proc/self/clear_refs``;
``VmRSS`` before, ``VmHWM`` after): the memory the read itself costs, against
the 146.5 MiB the vectors take as float32.  Nothing here asserts: ``bench/__main__.py`` writes
the figure to ``bench/results.json``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N, DIM = 100_000, 384

_READ_SCRIPT = """
import gc, json, resource, sys, time
from core.stores.kinds import open_store
handle = open_store(sys.argv[1], exact=True)
gc.collect()
# The peak so far (imports, opening) would hide the read's own: the kernel's high-water mark is reset first where it can
# be (Linux clear_refs 5), and the read's extra memory is its peak above the resident size it started from.
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
except OSError:
    pass
def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key))
before = status("VmRSS:")
start = time.perf_counter()
collection = handle.read()
seconds = time.perf_counter() - start
after = status("VmHWM:")
print(json.dumps({"seconds": seconds, "before_kb": before, "after_kb": after, "passages": len(collection.passages),
                  "vectors_mb": collection.vectors.nbytes / 2**20, "dtype": str(collection.vectors.dtype)}))
handle.close()
"""


def _data(n: int) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [f"passage number {i} of the benchmark corpus" for i in range(n)], vectors


def _read(uri: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _READ_SCRIPT, uri], capture_output=True, text=True, cwd=ROOT, check=False, timeout=1800)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "read_seconds": round(got["seconds"], 2),
        "read_peak_extra_mb": round((got["after_kb"] - got["before_kb"]) / 1024, 1),
        "rss_before_read_mb": round(got["before_kb"] / 1024, 1),
        "read_peak_rss_mb": round(got["after_kb"] / 1024, 1),
        "passages": got["passages"],
        "vectors_dtype": got["dtype"],
    }


def _chroma(folder: Path, texts: list[str], vectors: np.ndarray) -> str:
    """A Chroma collection of the rows, added in batches (its client refuses more than about 5,000 rows per call)."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    col = client.create_collection("passages", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    for start in range(0, len(texts), 5_000):
        stop = start + 5_000
        col.add(ids=[f"p{i}" for i in range(start, min(stop, len(texts)))], documents=texts[start:stop], embeddings=vectors[start:stop])
    del col, client
    return f"chroma://{folder}?collection=passages"


def store_read(n: int = N) -> dict:
    """Peak memory and seconds of one store read of ``n`` x 384 vectors, per store kind."""
    sys.path.insert(0, str(ROOT / "tests"))
    from store_support import CANARY, build_lance, build_pg, start_pg

    texts, vectors = _data(n)
    figure: dict = {"n": n, "dim": DIM, "float32_vectors_mb": round(vectors.nbytes / 2**20, 1)}
    tmp = Path(tempfile.mkdtemp(prefix="cosine-probe-bench-store-"))
    server = None
    try:
        figure["lancedb"] = _read(build_lance(tmp / "kb.lance", texts, vectors))
        server = start_pg(CANARY)
        figure["pgvector"] = _read(build_pg(server, "kb_bench", texts, vectors))
        figure["chroma"] = _read(_chroma(tmp / "chroma", texts, vectors))
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(server.data.parent, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    peaks = [figure[k]["read_peak_extra_mb"] for k in ("lancedb", "pgvector", "chroma") if "read_peak_extra_mb" in figure[k]]
    figure["worst_read_vs_vectors"] = round(max(peaks) / figure["float32_vectors_mb"], 2) if peaks else None
    return figure


if __name__ == "__main__":
    print(json.dumps(store_read(int(sys.argv[1]) if len(sys.argv) > 1 else N), indent=1))
