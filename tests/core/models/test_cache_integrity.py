"""A cached row read back from disk is checked, and a bad one is dropped and re-encoded.

Each test caches the penicillin pair with the real MiniLM, damages one row in
the sqlite file directly, and encodes again through a new cache object (so
the in-process layer is empty, as after a restart).  The damaged row must be
counted in one warning, encoded again, and give the cosine a run without any
cache gives.  "Consistent" damage recomputes the row's checksum, so the row
checks (length, dimension, finiteness, norm) are exercised on their own; a
different unit vector of the right size passes every row check, and only
the checksum catches it.
"""

from __future__ import annotations

import sqlite3
import warnings

import numpy as np
import pytest

from core.models.cache import CacheWarning, EmbeddingCache, row_checksum, row_problem, text_hash
from core.models.encode import encode_texts

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
RNG = np.random.default_rng(18)


def _unit(dim: int) -> np.ndarray:
    v = RNG.normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture(scope="module")
def expected(minilm) -> float:
    """The pair's cosine with no cache at all."""
    vectors, _ = encode_texts(minilm, [A, B], None)
    return float(np.dot(vectors[A], vectors[B]))


@pytest.fixture
def cached(minilm, tmp_path):
    """A sqlite cache holding MiniLM's vectors of A and B; returns its path."""
    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path)
    encode_texts(minilm, [A, B], cache)
    cache.close()
    return path


def _row(path, key: str, text: str) -> tuple[int, bytes]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT dim, vector FROM embeddings WHERE model_key=? AND text_hash=?", (key, text_hash(text))).fetchone()


def _rewrite(path, key: str, text: str, dim: int, blob: bytes, *, consistent: bool) -> None:
    """Overwrite a row; ``consistent`` recomputes its checksum as a careful writer would."""
    h = text_hash(text)
    with sqlite3.connect(path) as conn:
        if consistent:
            conn.execute(
                "UPDATE embeddings SET dim=?, vector=?, checksum=? WHERE model_key=? AND text_hash=?",
                (dim, blob, row_checksum(key, h, blob), key, h),
            )
        else:
            conn.execute("UPDATE embeddings SET dim=?, vector=? WHERE model_key=? AND text_hash=?", (dim, blob, key, h))


def _damage(kind: str, dim: int, blob: bytes) -> tuple[int, bytes, bool]:
    """(dim column, vector bytes, checksum recomputed) for each kind of damage the issue lists."""
    vec = np.frombuffer(blob, dtype=np.float32)
    if kind == "ten dimensions":
        return 10, _unit(10).tobytes(), True
    if kind == "scaled x7":
        return dim, (vec * 7).astype(np.float32).tobytes(), True
    if kind == "NaN":
        return dim, np.full(dim, np.nan, dtype=np.float32).tobytes(), True
    if kind == "one byte short":
        return dim, blob[:-1], True
    if kind == "random unit vector":
        return dim, _unit(dim).tobytes(), False
    raise AssertionError(kind)


REASONS = {
    "ten dimensions": "of the wrong dimension",
    "scaled x7": "not of unit length",
    "NaN": "with NaN or infinite values",
    "one byte short": "of the wrong length",
    "random unit vector": "failing the checksum",
}


@pytest.mark.parametrize("kind", list(REASONS))
def test_damaged_row_is_dropped_counted_and_reencoded(minilm, cached, expected, kind):
    key = minilm.cache_key
    dim, blob = _row(cached, key, A)
    assert dim == minilm.backend.dimension == 384
    _rewrite(cached, key, A, *_damage(kind, dim, blob)[:2], consistent=_damage(kind, dim, blob)[2])

    cache = EmbeddingCache(cached)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vectors, report = encode_texts(minilm, [A, B], cache)
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1, messages
    assert f"1 stored vector(s) of {minilm.name} failed their checks (1 {REASONS[kind]})" in messages[0]
    assert cache.stats.damaged == 1 and cache.warning == messages[0]
    assert (report.n_encoded, report.n_cached) == (1, 1)
    assert float(np.dot(vectors[A], vectors[B])) == pytest.approx(expected, abs=1e-6)
    cache.close()

    # The re-encoded row replaced the damaged one: the next process reads both intact.
    again = EmbeddingCache(cached)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        vectors, report = encode_texts(minilm, [A, B], again)
    assert report.n_encoded == 0
    assert float(np.dot(vectors[A], vectors[B])) == pytest.approx(expected, abs=1e-6)
    again.close()


def test_several_damaged_rows_make_one_warning_that_counts_them(minilm, tmp_path, expected):
    path = tmp_path / "embeddings.sqlite"
    texts = [A, B, "A third sentence about rain", "A fourth about the sea"]
    cache = EmbeddingCache(path)
    encode_texts(minilm, texts, cache)
    cache.close()
    key = minilm.cache_key
    for text in texts[:3]:
        dim, blob = _row(path, key, text)
        _rewrite(path, key, text, dim, (np.frombuffer(blob, dtype=np.float32) * 7).tobytes(), consistent=text != B)

    cache = EmbeddingCache(path)
    with pytest.warns(CacheWarning) as record:
        vectors, report = encode_texts(minilm, texts, cache)
    assert len(record) == 1
    assert "3 stored vector(s)" in str(record[0].message)
    assert "1 failing the checksum, 2 not of unit length" in str(record[0].message)
    assert report.n_encoded == 3 and report.n_cached == 1
    assert float(np.dot(vectors[A], vectors[B])) == pytest.approx(expected, abs=1e-6)
    cache.close()


def test_a_cache_file_from_before_checksums_is_migrated_and_its_rows_reencoded(minilm, tmp_path, expected):
    path = tmp_path / "old.sqlite"
    vectors, _ = encode_texts(minilm, [A], None)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE embeddings (model_key TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
            "PRIMARY KEY (model_key, text_hash)) WITHOUT ROWID"
        )
        conn.execute("INSERT INTO embeddings VALUES (?,?,?,?)", (minilm.cache_key, text_hash(A), 384, vectors[A].tobytes()))

    cache = EmbeddingCache(path)
    assert cache.on_disk and cache.warning is None  # migrated, not moved aside
    with pytest.warns(CacheWarning, match="1 failing the checksum"):
        got, report = encode_texts(minilm, [A, B], cache)
    assert report.n_encoded == 2
    assert float(np.dot(got[A], got[B])) == pytest.approx(expected, abs=1e-6)
    cache.close()


def test_non_finite_vectors_are_never_stored(tmp_path):
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    good = _unit(8)
    cache.put_many("m@x|", ["nan", "good"], np.stack([np.full(8, np.nan, dtype=np.float32), good]))
    assert cache.stats.writes == 1
    cache.clear_memory()
    assert set(cache.get_many("m@x|", ["nan", "good"], dimension=8, unit_norm=True)) == {"good"}
    cache.close()


def test_row_problem_checks_against_the_models_dimension_not_the_rows_own():
    blob = _unit(10).tobytes()
    checksum = row_checksum("m@x|", "h", blob)
    assert row_problem("m@x|", "h", 10, blob, checksum) is None  # self-consistent
    assert row_problem("m@x|", "h", 10, blob, checksum, dimension=384) == "dimension"
    assert row_problem("m@x|", "h", 10, blob, checksum, dimension=10, unit_norm=True) is None
    assert row_problem("m@x|", "h", 11, blob, checksum) == "length"
    assert row_problem("other@x|", "h", 10, blob, checksum) == "checksum"  # a row moved to another model's key
    assert row_problem("m@x|", "h", 10, blob, None) == "checksum"


def test_get_many_refuses_a_nonsense_dimension(fresh_cache):
    with pytest.raises(ValueError, match="dimension must be positive"):
        fresh_cache.get_many("m@x|", ["a"], dimension=0)
