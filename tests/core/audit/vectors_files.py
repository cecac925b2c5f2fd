"""A small vectors file for the IVF and Ray audit tests: clustered unit vectors with real planted twin pairs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

_WORDS = np.array(
    [
        "river",
        "stone",
        "garden",
        "letter",
        "window",
        "market",
        "silver",
        "doctor",
        "engine",
        "harbour",
        "violin",
        "pepper",
        "ladder",
        "candle",
        "meadow",
        "thunder",
        "pocket",
        "saddle",
        "marble",
        "lantern",
        "orchard",
        "compass",
        "feather",
        "blanket",
        "kettle",
        "tunnel",
        "velvet",
        "anchor",
    ]
)


def clustered(n: int, dim: int = 32, centres: int = 40, seed: int = 0) -> np.ndarray:
    """(n, dim) float32 unit rows around ``centres`` directions, at cosines 0.3-0.95 to theirs: close pairs in and across cells."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centres, dim))
    middle /= np.linalg.norm(middle, axis=1, keepdims=True)
    anchor = middle[rng.integers(0, centres, n)]
    noise = rng.standard_normal((n, dim))
    noise -= (noise * anchor).sum(axis=1, keepdims=True) * anchor
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    c = (0.3 + 0.65 * rng.random(n) ** 0.5)[:, None]
    return (c * anchor + np.sqrt(1 - c * c) * noise).astype(np.float32)


def write_vectors_file(path: Path, n: int, dim: int = 32, twins: int = 30, seed: int = 0) -> tuple[np.ndarray, list[str], list[str]]:
    """Write ``id``, ``text``, ``vector`` (fixed-size list<float32>) Parquet; (matrix, ids, texts) as written.

    The first ``2 * twins`` rows are the planted dev split's pairs (base, twin) at cosine 0.9; the rest numbered passages.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from core.audit.planted import planted_corpus

    matrix = clustered(n, dim, seed=seed)
    planted = planted_corpus("dev").planted.head(twins)
    texts = [t for a, b in zip(planted["text_a"], planted["text_b"], strict=True) for t in (a, b)]
    rng = np.random.default_rng(seed + 1)
    texts += [" ".join(rng.choice(_WORDS, size=8)).capitalize() + "." for _ in range(len(texts), n)]
    for k in range(len(planted)):
        base = matrix[2 * k].astype(np.float64)
        other = rng.standard_normal(dim)
        other -= other @ base * base
        other /= np.linalg.norm(other)
        matrix[2 * k + 1] = (0.9 * base + np.sqrt(1 - 0.81) * other).astype(np.float32)
    ids = [f"doc-{k:05d}" for k in range(n)]
    flat = pa.array(matrix.reshape(-1), pa.float32())
    table = pa.table({"id": ids, "text": texts, "vector": pa.FixedSizeListArray.from_arrays(flat, dim)})
    pq.write_table(table, path, row_group_size=max(1, n // 4))
    return matrix, ids, texts
