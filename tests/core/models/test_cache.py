"""Embedding cache: exact hit/miss counts, reuse across runs and processes, damage control."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.models.cache import CacheWarning, EmbeddingCache, text_hash
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from core.scoring.runner import run_pairs

KEY = "test-model@rev|"
RNG = np.random.default_rng(7)


def _vectors(n: int, dim: int = 8) -> np.ndarray:
    v = RNG.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def no_cache_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        yield


def test_hit_and_miss_counts_are_exact(tmp_path, no_cache_warnings):
    path = tmp_path / "emb.sqlite"
    texts = ["alpha", "beta", "gamma", "delta"]
    vecs = _vectors(len(texts))

    cache = EmbeddingCache(path)
    assert cache.on_disk and cache.warning is None
    assert cache.get_many(KEY, texts) == {}
    assert (cache.stats.misses, cache.stats.memory_hits, cache.stats.disk_hits) == (4, 0, 0)

    cache.put_many(KEY, texts, vecs)
    assert cache.stats.writes == 4
    got = cache.get_many(KEY, texts)
    assert (cache.stats.misses, cache.stats.memory_hits, cache.stats.disk_hits) == (4, 4, 0)
    for t, v in zip(texts, vecs, strict=True):
        np.testing.assert_array_equal(got[t], v)

    # Another key is another model: all misses.
    assert cache.get_many("other-model@rev|", texts) == {}
    assert cache.stats.misses == 8
    cache.close()

    again = EmbeddingCache(path)
    got = again.get_many(KEY, [*texts, "epsilon"])
    assert (again.stats.misses, again.stats.memory_hits, again.stats.disk_hits) == (1, 0, 4)
    for t, v in zip(texts, vecs, strict=True):
        np.testing.assert_array_equal(got[t], v)
    # Disk hits were promoted to memory.
    again.get_many(KEY, texts)
    assert (again.stats.memory_hits, again.stats.disk_hits) == (4, 4)
    again.stats.reset()
    assert (again.stats.misses, again.stats.memory_hits, again.stats.disk_hits, again.stats.writes) == (0, 0, 0, 0)
    again.close()


def test_clear_memory_keeps_disk(fresh_cache):
    fresh_cache.put_many(KEY, ["x"], _vectors(1))
    fresh_cache.clear_memory()
    assert set(fresh_cache.get_many(KEY, ["x"])) == {"x"}
    assert fresh_cache.stats.disk_hits == 1


def test_memory_only_cache():
    cache = EmbeddingCache(False)
    assert not cache.on_disk and cache.path is None
    cache.put_many(KEY, ["x"], _vectors(1))
    assert set(cache.get_many(KEY, ["x"])) == {"x"}


def test_put_many_rejects_mismatched_lengths(fresh_cache):
    with pytest.raises(ValueError, match="2 texts but 1 vectors"):
        fresh_cache.put_many(KEY, ["a", "b"], _vectors(1))


def test_text_hash_is_sha256_of_utf8():
    import hashlib

    assert text_hash("café") == hashlib.sha256("café".encode()).hexdigest()
    assert text_hash("a") != text_hash("a ")


def test_second_run_encodes_nothing(fresh_cache):
    pairs = pd.DataFrame(
        {
            constants.COL_TEXT_A: ["The cache test cat sat", "A cache test about rain", "Cache test three"],
            constants.COL_TEXT_B: ["The cache test cat stood", "Cache test weather is wet", "The cache test cat sat"],
        }
    )
    first = run_pairs(pairs, [MINILM_L6], cache=fresh_cache)
    assert first.reports[MINILM_L6].n_unique == 5
    assert first.reports[MINILM_L6].n_encoded == 5

    second = run_pairs(pairs, [MINILM_L6], cache=fresh_cache)
    assert second.reports[MINILM_L6].n_encoded == 0
    assert second.reports[MINILM_L6].n_cached == 5
    np.testing.assert_array_equal(first.results[constants.COL_COSINE], second.results[constants.COL_COSINE])

    # A new cache object on the same file (as after a restart) serves from disk.
    reopened = EmbeddingCache(fresh_cache.path)
    third = run_pairs(pairs, [MINILM_L6], cache=reopened)
    assert third.reports[MINILM_L6].n_encoded == 0
    assert reopened.stats.disk_hits == 5
    np.testing.assert_allclose(first.results[constants.COL_COSINE], third.results[constants.COL_COSINE], atol=1e-7)
    reopened.close()


def test_cache_survives_a_new_process(tmp_path):
    suite = tmp_path / "small.tsv"
    suite.write_text(
        "text_a\ttext_b\tcategory\n"
        "A process test about rivers\tA process test about streams\tpositive\n"
        "Process test: the bank is closed\tProcess test: the bank is open\tnegation\n",
        encoding="utf-8",
    )
    env = {**os.environ, constants.CACHE_ENV_VAR: str(tmp_path / "cache")}
    encoded = []
    for run in ("first", "second"):
        out = tmp_path / run
        proc = subprocess.run(
            [sys.executable, "-m", "core", "run", "--suite", str(suite), "--models", MINILM_L6, "--out", str(out), "--quiet"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        summary = json.loads((out / "summary.json").read_text())
        encoded.append(summary["encoding"][MINILM_L6]["encoded"])
        assert summary["encoding"][MINILM_L6]["unique_texts"] == 4
    assert encoded[0] == 4
    assert encoded[1] == 0
    assert (tmp_path / "cache" / "embeddings.sqlite").is_file()


def test_corrupt_database_is_moved_aside(tmp_path):
    path = tmp_path / "emb.sqlite"
    garbage = b"this is not a sqlite database \x00\xff" * 200
    path.write_bytes(garbage)

    with pytest.warns(CacheWarning, match="unreadable"):
        cache = EmbeddingCache(path)
    assert cache.on_disk
    assert cache.warning and "moved it aside" in cache.warning
    moved = list(tmp_path.glob("emb.sqlite.corrupt-*"))
    assert len(moved) == 1
    assert moved[0].read_bytes() == garbage

    vec = _vectors(1)
    cache.put_many(KEY, ["round trip"], vec)
    cache.close()
    reopened = EmbeddingCache(path)
    np.testing.assert_array_equal(reopened.get_many(KEY, ["round trip"])["round trip"], vec[0])
    assert reopened.stats.disk_hits == 1
    reopened.close()


def _assert_memory_fallback(cache: EmbeddingCache) -> None:
    assert not cache.on_disk
    assert cache.warning and "memory only" in cache.warning
    vec = _vectors(2)
    cache.put_many(KEY, ["m1", "m2"], vec)
    got = cache.get_many(KEY, ["m1", "m2", "m3"])
    np.testing.assert_array_equal(got["m1"], vec[0])
    assert (cache.stats.memory_hits, cache.stats.misses) == (2, 1)


def test_unusable_folder_degrades_to_memory(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.warns(CacheWarning, match="memory only"):
        cache = EmbeddingCache(blocker / "sub" / "emb.sqlite")
    _assert_memory_fallback(cache)


def test_read_only_folder_degrades_to_memory(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("permissions are not enforced for this user (root); covered by test_unusable_folder_degrades_to_memory")
        with pytest.warns(CacheWarning, match="memory only"):
            cache = EmbeddingCache(folder / "emb.sqlite")
        _assert_memory_fallback(cache)
    finally:
        folder.chmod(0o700)


_WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    from core.models.cache import EmbeddingCache

    cache = EmbeddingCache(sys.argv[1])
    batch = 50
    i = 0
    while True:
        texts = [f"text {i} {j}" for j in range(batch)]
        cache.put_many("writer@rev|", texts, np.full((batch, 384), i + 1, dtype=np.float32))  # never zeros: those are not stored
        i += 1
        if i == 5:
            print("writing", flush=True)
    """
)


def test_killed_writer_leaves_a_readable_database(tmp_path, no_cache_warnings):
    path = tmp_path / "emb.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), str(PROJECT_ROOT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "writing", proc.stderr.read()
        time.sleep(0.3)  # well inside the write loop
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        (rows,) = conn.execute("SELECT count(*) FROM embeddings").fetchone()
    # Each put_many is one transaction: whole batches only.
    assert rows >= 250 and rows % 50 == 0

    cache = EmbeddingCache(path)
    assert cache.on_disk and cache.warning is None
    texts = [f"text {i} {j}" for i in range(5) for j in range(50)]
    got = cache.get_many("writer@rev|", texts)
    assert len(got) == 250
    assert float(got["text 4 49"][0]) == 5.0
    cache.put_many("writer@rev|", ["after the crash"], _vectors(1, 384))
    cache.close()
