"""A million passages audited on this machine from their vectors: the held-out measurement of the IVF search.

The file (:func:`write_vectors`) is ``n`` synthetic 384-d float32 unit
vectors with an id and a text each, written as Parquet (``id``, ``text``,
``vector`` as ``fixed_size_list<float32>[384]``, as pipelines and LanceDB
write them), built to look like a corpus's embeddings where it matters to a
search: topics, sub-topics inside them (sibling sub-topics at cosine 0.75),
rows spread around their sub-topic at cosines 0.3-0.9 and a third of them
lying between two sibling sub-topics, so close pairs straddle the k-means
cells.  Texts are three WordNet definitions joined (all distinct).  Into it go
the planted corpus's *held-out* twin pairs (:func:`core.audit.planted.planted_corpus`:
real sentences one failure-mode edit apart, never looked at while writing the
rules), each twin's vector placed at a cosine of 0.75-0.98 to its base's.

The audit (:func:`audit_file`, run in a new process so its peak RSS is its own)
reads the file in batches with pyarrow into one float32 matrix, finds the
close pairs with :func:`core.audit.ivf.ivf_close_pairs`, classifies them with
the audit's one rule (:func:`core.audit.run.pair_rows`) and writes them to
Parquet.  The figure then checks what the held-out measurement asks: every
planted pair found and tagged with its mode, no pair at or below the
threshold, sampled recall >= 0.99; and the seconds and peak memory against
15 minutes and 4 GB.  :func:`methods` compares the candidate searches on the
first 100,000 rows of the same file.
"""

from __future__ import annotations

import csv
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GLOSSES = ROOT / "data" / "corpora" / "wordnet-adjectives.csv"
N = 1_000_000
DIM = 384
THRESHOLD = 0.7  # the audit's default (core.constants.DEFAULT_THRESHOLD)
TOPICS, SUBTOPICS_PER_TOPIC = 512, 16
SIBLING_COSINE = 0.75
BETWEEN_SHARE = 0.3
BATCH = 50_000
TARGETS = {"seconds": "< 900", "peak_rss_mb": "< 4096", "recall": ">= 0.99", "planted_found": "all", "below_threshold": "0"}


def _texts(n: int, seed: int) -> list[str]:
    with GLOSSES.open(encoding="utf-8") as fh:
        glosses = [row["text"] for row in csv.DictReader(fh)]
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault("; ".join(rng.sample(glosses, 3)).capitalize() + ".", None)
    return list(seen)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _orthogonal_mix(rng: np.random.Generator, anchor: np.ndarray, cosine: np.ndarray) -> np.ndarray:
    """Unit rows at exactly ``cosine`` to each anchor row (a random direction orthogonal to it for the rest)."""
    noise = rng.standard_normal(anchor.shape).astype(np.float32)
    noise -= (noise * anchor).sum(axis=1, keepdims=True) * anchor
    noise = _unit(noise)
    c = cosine[:, None].astype(np.float32)
    return _unit(c * anchor + np.sqrt(1 - c * c) * noise)


def write_vectors(path: Path, n: int = N, seed: int = 0) -> dict:
    """Write the file; what was planted in it (row numbers, texts and modes of the held-out twin pairs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.audit.planted import planted_corpus

    rng = np.random.default_rng(seed)
    topics = _unit(rng.standard_normal((TOPICS, DIM)).astype(np.float32))
    # Each sub-topic at cosine sqrt(0.75) to its topic, so two siblings are at about 0.75 to each other.
    subtopics = _orthogonal_mix(
        rng, np.repeat(topics, SUBTOPICS_PER_TOPIC, axis=0), np.full(TOPICS * SUBTOPICS_PER_TOPIC, SIBLING_COSINE**0.5)
    )
    planted = planted_corpus("heldout").planted
    texts_a, texts_b, modes = planted["text_a"].tolist(), planted["text_b"].tolist(), planted["mode"].tolist()
    n_planted = len(modes)
    texts = _texts(n - 2 * n_planted, seed)
    slots = rng.choice(n, size=2 * n_planted, replace=False)
    base_rows, twin_rows = slots[:n_planted], slots[n_planted:]
    twin_cosine = rng.uniform(0.75, 0.98, n_planted)
    special = {int(r): ("base", k) for k, r in enumerate(base_rows)} | {int(r): ("twin", k) for k, r in enumerate(twin_rows)}
    base_vectors: dict[int, np.ndarray] = {}
    writer = None
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("vector", pa.list_(pa.float32(), DIM))])
    next_text = 0
    # Twins are written where their base already is: bases go first in a two-pass order of batches.
    pending: list[tuple[int, np.ndarray, list[str]]] = []
    for start in range(0, n, BATCH):
        m = min(BATCH, n - start)
        sub = rng.integers(0, len(subtopics), m)
        sibling = (sub // SUBTOPICS_PER_TOPIC) * SUBTOPICS_PER_TOPIC + rng.integers(0, SUBTOPICS_PER_TOPIC, m)
        weight = np.where(rng.random(m) < BETWEEN_SHARE, rng.random(m), 1.0).astype(np.float32)[:, None]
        anchor = _unit(weight * subtopics[sub] + (1 - weight) * subtopics[sibling])
        spread = 0.3 + 0.6 * rng.random(m) ** 2
        vectors = _orthogonal_mix(rng, anchor, spread)
        batch_texts = []
        for row in range(start, start + m):
            kind = special.get(row)
            if kind is None:
                batch_texts.append(texts[next_text])
                next_text += 1
            elif kind[0] == "base":
                batch_texts.append(texts_a[kind[1]])
                base_vectors[kind[1]] = vectors[row - start]
            else:
                batch_texts.append(texts_b[kind[1]])
        pending.append((start, vectors, batch_texts))
    # The twins' vectors, now that every base's is known.
    twins = _orthogonal_mix(rng, np.stack([base_vectors[k] for k in range(n_planted)]), twin_cosine)
    for k, row in enumerate(twin_rows.tolist()):
        start = (row // BATCH) * BATCH
        pending[row // BATCH][1][row - start] = twins[k]
    for start, vectors, batch_texts in pending:
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), pa.float32())
        table = pa.Table.from_arrays(
            [
                pa.array([f"p{r}" for r in range(start, start + len(batch_texts))]),
                pa.array(batch_texts),
                pa.FixedSizeListArray.from_arrays(flat, DIM),
            ],
            schema=schema,
        )
        writer = writer or pq.ParquetWriter(path, schema)
        writer.write_table(table)
    if writer is not None:
        writer.close()
    return {
        "rows": n,
        "planted": [
            {"id_a": f"p{a}", "id_b": f"p{b}", "mode": m, "cosine": float(c)}
            for a, b, m, c in zip(base_rows.tolist(), twin_rows.tolist(), modes, twin_cosine.tolist(), strict=True)
        ],
    }


def read_vectors(path: Path, limit: int | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """(ids, texts, (n, d) float32 matrix) from a vectors Parquet file, in batches: never a pandas copy of the vectors.

    The vectors are read first, one column, straight into the one float32 matrix; the file is read, not memory-mapped
    (mapped pages count in the process's resident memory), and Arrow's buffers come from the system allocator, which
    gives freed batches back (mimalloc, Arrow's default here, kept about 2 GB of them at a million rows).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    pa.set_memory_pool(pa.system_memory_pool())
    file = pq.ParquetFile(path, memory_map=False, pre_buffer=False)
    n = file.metadata.num_rows if limit is None else min(limit, file.metadata.num_rows)
    dim = file.schema_arrow.field("vector").type.list_size
    matrix = np.empty((n, dim), dtype=np.float32)
    ids: list[str] = []
    texts: list[str] = []
    done = 0
    for batch in file.iter_batches(batch_size=65_536, columns=["vector"], use_threads=False):
        take = min(batch.num_rows, n - done)
        matrix[done : done + take] = batch.column(0).slice(0, take).flatten().to_numpy(zero_copy_only=False).reshape(take, dim)
        done += take
        if done >= n:
            break
    for batch in file.iter_batches(batch_size=65_536, columns=["id", "text"], use_threads=False):
        take = min(batch.num_rows, n - len(ids))
        ids += batch.column(0).slice(0, take).to_pylist()
        texts += batch.column(1).slice(0, take).to_pylist()
        if len(ids) >= n:
            break
    return ids, texts, matrix


def audit_file(path: Path, out: Path, threshold: float = THRESHOLD, probe: int | None = None) -> dict:
    """The audit of a vectors file, timed step by step: read, search (with recall), classify, write."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.audit.ivf import DEFAULT_PROBE, ivf_close_pairs
    from core.audit.run import pair_rows

    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    clock, tick = time.perf_counter(), time.process_time()
    ids, texts, matrix = read_vectors(path)
    seconds["read"], cpu["read"] = time.perf_counter() - clock, time.process_time() - tick
    last = [0.0]

    def progress(fraction: float, message: str) -> None:
        if time.perf_counter() - last[0] > 20 or fraction >= 1.0:
            last[0] = time.perf_counter()
            print(f"  {fraction:4.0%} {message}", file=sys.stderr, flush=True)

    clock, tick = time.perf_counter(), time.process_time()
    found, report = ivf_close_pairs(matrix, threshold, probe=probe or DEFAULT_PROBE, progress=progress)
    seconds["search"], cpu["search"] = time.perf_counter() - clock, time.process_time() - tick
    clock, tick = time.perf_counter(), time.process_time()
    rows = pair_rows("vectors", texts, ids, found)
    seconds["classify"], cpu["classify"] = time.perf_counter() - clock, time.process_time() - tick
    clock, tick = time.perf_counter(), time.process_time()
    pq.write_table(pa.Table.from_pandas(rows, preserve_index=False), out)
    seconds["write"], cpu["write"] = time.perf_counter() - clock, time.process_time() - tick
    return {
        "rows": len(ids),
        "pairs": int(found.i.size),
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        # CPU seconds (all threads): what the steps cost whatever else shares the cores.
        "cpu_seconds": {k: round(v, 1) for k, v in cpu.items()},
        "search": report.as_dict(),
        "kinds": rows["kind"].value_counts().to_dict(),
        "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def _checks(pairs_file: Path, planted: list[dict], threshold: float) -> dict:
    import pyarrow.parquet as pq

    table = pq.read_table(pairs_file, columns=["id_a", "id_b", "cosine", "kind", "modes"]).to_pandas()
    found = {frozenset((a, b)): (k, m) for a, b, k, m in table[["id_a", "id_b", "kind", "modes"]].itertuples(index=False)}
    missed = [p for p in planted if frozenset((p["id_a"], p["id_b"])) not in found]
    untagged = [
        p
        for p in planted
        if frozenset((p["id_a"], p["id_b"])) in found
        and (
            found[frozenset((p["id_a"], p["id_b"]))][0] != "twin" or p["mode"] not in found[frozenset((p["id_a"], p["id_b"]))][1].split(";")
        )
    ]
    return {
        "planted": len(planted),
        "planted_found": len(planted) - len(missed),
        "planted_tagged_with_mode": len(planted) - len(missed) - len(untagged),
        "untagged": [{**p, "found_as": found[frozenset((p["id_a"], p["id_b"]))]} for p in untagged][:5],
        "below_threshold": int((table["cosine"] <= threshold).sum()),
        "min_cosine": float(table["cosine"].min()) if len(table) else None,
    }


def audit_1m(n: int = N) -> dict:
    """The held-out measurement: write the file, audit it in a new process, check what it found."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.parquet"
        clock = time.perf_counter()
        made = write_vectors(path, n)
        written = time.perf_counter() - clock
        out = Path(tmp) / "pairs.parquet"
        load = os.getloadavg()[0]
        clock = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "bench.audit_1m", str(path), str(out)], cwd=ROOT, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - clock
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "the audit failed")
        run = json.loads(done.stdout.strip().splitlines()[-1])
        checks = _checks(out, made["planted"], THRESHOLD)
        size_mb = path.stat().st_size / 2**20
    recall = run["search"].get("recall")
    figure = {
        "rows": run["rows"],
        "dim": DIM,
        "threshold": THRESHOLD,
        "file_mb": round(size_mb, 1),
        "write_file_seconds": round(written, 1),
        "seconds": round(wall, 1),
        "peak_rss_mb": round(run["max_rss_kb"] / 1024, 1),
        "steps_seconds": run["seconds"],
        "steps_cpu_seconds": run["cpu_seconds"],
        "cpu_seconds": round(sum(run["cpu_seconds"].values()), 1),
        "search": run["search"],
        "pairs": run["pairs"],
        "kinds": run["kinds"],
        "recall": recall,
        **checks,
        "load_average_1min_before": round(load, 2),
        "load_average_1min_after": round(os.getloadavg()[0], 2),
        "progress_tail": done.stderr.strip().splitlines()[-4:],
        "targets": TARGETS,
    }
    figure["met"] = bool(
        wall < 900
        and figure["peak_rss_mb"] < 4096
        and recall is not None
        and recall >= 0.99
        and checks["planted_found"] == checks["planted"]
        and checks["below_threshold"] == 0
    )
    return figure


def methods(n: int = 100_000) -> dict:
    """Each candidate search on the first ``n`` rows of the file: seconds, peak memory and recall, in new processes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.parquet"
        write_vectors(path, n)
        rows = {}
        for method in ("exact", "hnsw", "faiss_ivf_range", "ivf"):
            done = subprocess.run(
                [sys.executable, "-m", "bench.audit_1m", "--method", method, str(path)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                rows[method] = {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
                continue
            rows[method] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"rows": n, "threshold": THRESHOLD, "methods": rows, "load_average_1min_after": round(os.getloadavg()[0], 2)}


def _one_method(method: str, path: Path) -> dict:
    """One search over the whole file: its seconds (search alone), pairs, recall on the same 2,000 sampled rows, peak RSS."""
    import faiss

    from core.audit.approximate import DEFAULT_K, approximate_pairs
    from core.audit.ivf import check_unit, default_cells, ivf_close_pairs, sampled_recall, sorted_pairs
    from core.audit.neighbours import close_pairs

    _ids, _texts, matrix = read_vectors(path)
    unit = check_unit(matrix)
    clock, tick = time.perf_counter(), time.process_time()
    if method == "exact":
        found = close_pairs(unit, THRESHOLD, max_pairs=10**8)
    elif method == "hnsw":
        found = approximate_pairs(unit, THRESHOLD, k=DEFAULT_K, max_pairs=10**8)
    elif method == "faiss_ivf_range":
        nlist = default_cells(unit.shape[0])
        quantizer = faiss.IndexFlatIP(unit.shape[1])
        index = faiss.IndexIVFFlat(quantizer, unit.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(unit[:: max(1, unit.shape[0] // (64 * nlist))])
        index.add(unit)
        index.nprobe = 8
        lims, dist, labels = index.range_search(unit, THRESHOLD)
        q = np.repeat(np.arange(unit.shape[0]), np.diff(lims).astype(np.int64))
        labels = labels.astype(np.int64)
        keep = labels > q
        found = sorted_pairs(q[keep], labels[keep], dist[keep].astype(np.float64))
    else:
        found, _report = ivf_close_pairs(unit, THRESHOLD, recall_sample=0)
    seconds, cpu = time.perf_counter() - clock, time.process_time() - tick
    recall = sampled_recall(unit, found, THRESHOLD)
    return {
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "pairs": int(found.i.size),
        **recall.as_dict(),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


if __name__ == "__main__":
    if sys.argv[1] == "--method":
        print(json.dumps(_one_method(sys.argv[2], Path(sys.argv[3]))))
    else:
        print(json.dumps(audit_file(Path(sys.argv[1]), Path(sys.argv[2]))))
