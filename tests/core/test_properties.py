"""Properties that hold for any input, checked with hypothesis.

* any bytes given to the pair reader give pairs or the reader's own error;
* any text gets a cosine in [-1, 1] from the real MiniLM, or a clear refusal;
* any damage to a cached row is caught, and the text is encoded again.

Example counts come from the hypothesis profile (tests/conftest.py): small
by default so ``make test`` stays fast, large with HYPOTHESIS_PROFILE=nightly.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core import constants
from core.files.reader import PairsFileError, apply_mapping, guess_mapping, parse_pairs
from core.files.text_checks import check_text
from core.models.cache import EmbeddingCache, row_checksum, text_hash
from core.models.encode import encode_texts
from core.models.registry import MINILM_L6
from core.scoring.runner import run_pairs

# Properties that run the real model take half the profile's examples (at least 10): each example encodes.
# Their fixtures are module- or session-scoped and never reset between examples, as hypothesis needs.
MODEL_EXAMPLES = settings(
    max_examples=max(10, settings.default.max_examples // 2),
    suppress_health_check=[*settings.default.suppress_health_check, HealthCheck.function_scoped_fixture],
)
NAMES = st.sampled_from(["pairs.csv", "pairs.tsv", "pairs.txt", "pairs.json", "pairs.jsonl", "pairs", "PAIRS.CSV"])
# Bytes near the formats the reader knows, so examples reach past the first check.
STRUCTURE = st.sampled_from(
    [
        b",",
        b"\t",
        b";",
        b"|",
        b"\n",
        b"\r\n",
        b'"',
        b"{",
        b"}",
        b"[",
        b"]",
        b":",
        b"\\u",
        b"\\ud800",
        b"text_a",
        b"text_b",
        b"category",
        b"label",
        b'"text_a": ',
        b"\xff",
        b"\xfe",
        b"\x00",
        b"\xc3\xa9",
        b"\xe2\x80\x8b",
        b"\xef\xbb\xbf",
        b"PK\x03\x04",
        b"a",
        b"1",
        b"-1",
        b" ",
    ]
)
FILE_BYTES = st.one_of(st.binary(max_size=600), st.lists(STRUCTURE, max_size=80).map(b"".join))


def _read(data: bytes, name: str) -> pd.DataFrame | None:
    """The pairs of a file, or None when the reader refused it with its own error."""
    try:
        parsed = parse_pairs(data, name)
        frame, _notes = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)))
    except PairsFileError as exc:
        assert str(exc).strip(), "a refusal says why"
        return None
    return frame


@given(data=FILE_BYTES, name=NAMES)
def test_any_bytes_give_pairs_or_the_readers_error(data, name):
    frame = _read(data, name)
    if frame is not None:
        assert len(frame) >= 1
        for column in (constants.COL_TEXT_A, constants.COL_TEXT_B):
            for text in frame[column]:
                assert isinstance(text, str) and text.strip()
                text.encode("utf-8")  # nothing a tokenizer cannot take (no lone surrogates)


@given(data=st.binary(max_size=300), encoding=st.sampled_from(["utf-8", "latin-1", "cp1252", "utf-16", "ascii", "no-such-codec"]))
def test_any_bytes_under_a_chosen_encoding_give_pairs_or_the_readers_error(data, encoding):
    try:
        parse_pairs(data, "pairs.csv", encoding=encoding)
    except PairsFileError as exc:
        assert str(exc).strip()


# Every code point, lone surrogates included (hypothesis leaves those out unless asked).
ANY_TEXT = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=30),
    st.text(alphabet=st.sampled_from(["\u200b", "\u200d", "\x00", "\x07", "\ufeff", " ", "\n", "\t", "\ud800", "a", "é"]), max_size=20),
)


@MODEL_EXAMPLES
@given(a=ANY_TEXT, b=ANY_TEXT)
def test_any_text_gets_a_cosine_in_range_or_a_clear_refusal(minilm, a, b):
    checks = [check_text(a, "Sentence A"), check_text(b, "Sentence B")]
    refused = [c.problem for c in checks if c.problem]
    if refused:
        assert all(p.startswith(("Sentence A ", "Sentence B ")) and p.endswith(".") for p in refused)
        return
    pairs = pd.DataFrame({constants.COL_TEXT_A: [checks[0].cleaned], constants.COL_TEXT_B: [checks[1].cleaned]})
    result = run_pairs(pairs, [MINILM_L6], cache=None)
    assert result.errors == {}
    (cosine,) = result.results[constants.COL_COSINE]
    assert np.isfinite(cosine) and -1.0 <= cosine <= 1.0


# ------------------------------------------------------------------ the cache

TEXT = "The patient is allergic to penicillin"


@pytest.fixture(scope="module")
def true_vector(minilm) -> np.ndarray:
    vectors, _ = encode_texts(minilm, [TEXT], None)
    return vectors[TEXT]


@pytest.fixture(scope="module")
def cached_bytes(minilm, tmp_path_factory) -> bytes:
    """A cache file holding MiniLM's vector of TEXT (closed, so its write-ahead log is folded in)."""
    path = tmp_path_factory.mktemp("cached") / "embeddings.sqlite"
    cache = EmbeddingCache(path)
    encode_texts(minilm, [TEXT], cache)
    cache.close()
    return path.read_bytes()


def _cached_file(folder: Path, data: bytes) -> Path:
    path = folder / "embeddings.sqlite"
    path.write_bytes(data)
    return path


def _stored(path: Path, key: str) -> tuple[int, bytes, bytes]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT dim, vector, checksum FROM embeddings WHERE model_key=? AND text_hash=?", (key, text_hash(TEXT))
        ).fetchone()


def _write(path: Path, key: str, dim: object, blob: object, checksum: object) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE embeddings SET dim=?, vector=?, checksum=? WHERE model_key=? AND text_hash=?",
            (dim, blob, checksum, key, text_hash(TEXT)),
        )


def _reencoded_right(path: Path, minilm, true_vector: np.ndarray) -> EmbeddingCache:
    cache = EmbeddingCache(path)
    vectors, _ = encode_texts(minilm, [TEXT], cache)
    np.testing.assert_allclose(vectors[TEXT], true_vector, atol=1e-6)
    cache.close()
    return cache


@st.composite
def accidental_damage(draw, dim: int, blob: bytes, checksum: bytes) -> tuple[object, object, object]:
    """Any change to a row's dim, bytes or checksum that nobody recomputed the checksum for."""
    kind = draw(st.sampled_from(["flip", "truncate", "extend", "replace", "dim", "checksum", "null"]))
    if kind == "flip":
        data = bytearray(blob)
        for pos in draw(st.lists(st.integers(0, len(data) - 1), min_size=1, max_size=8)):
            data[pos] ^= draw(st.integers(1, 255))
        return dim, bytes(data), checksum
    if kind == "truncate":
        return dim, blob[: draw(st.integers(0, len(blob) - 1))], checksum
    if kind == "extend":
        return dim, blob + draw(st.binary(min_size=1, max_size=64)), checksum
    if kind == "replace":
        return dim, draw(st.binary(max_size=2 * len(blob))), checksum
    if kind == "dim":
        return draw(st.one_of(st.integers(-(2**40), 2**40), st.floats(allow_nan=False), st.text(max_size=5))), blob, checksum
    if kind == "checksum":
        return dim, blob, draw(st.one_of(st.binary(max_size=32), st.none(), st.text(max_size=8)))
    return dim, None if draw(st.booleans()) else b"", checksum


@pytest.mark.filterwarnings("ignore::core.models.cache.CacheWarning")  # each example's one warning is expected
@MODEL_EXAMPLES
@given(data=st.data())
def test_any_accidental_damage_to_a_row_is_caught_and_reencoded(minilm, true_vector, cached_bytes, data):
    with tempfile.TemporaryDirectory() as tmp:
        path = _cached_file(Path(tmp), cached_bytes)
        key = minilm.cache_key
        dim, blob, checksum = _stored(path, key)
        damaged = data.draw(accidental_damage(dim, blob, checksum))
        assume(damaged != (dim, blob, checksum))
        try:
            _write(path, key, *damaged)
        except sqlite3.IntegrityError:
            assume(False)  # NOT NULL refused the write: nothing was damaged
        cache = _reencoded_right(path, minilm, true_vector)
        assert cache.stats.damaged == 1 and cache.stats.disk_hits == 0


@pytest.mark.filterwarnings("ignore::core.models.cache.CacheWarning")
@MODEL_EXAMPLES
@given(
    kind=st.sampled_from(["scale", "nan", "inf", "short", "dim"]),
    factor=st.floats(0.0, 100.0).filter(lambda f: abs(f - 1.0) > 0.01),
    cut=st.integers(1, 3),
    new_dim=st.integers(1, 2048).filter(lambda d: d != 384),
)
def test_damage_rewritten_with_a_fresh_checksum_is_still_caught(minilm, true_vector, cached_bytes, kind, factor, cut, new_dim):
    """A careful rewrite recomputes the checksum; the row checks (length, dimension, finiteness, norm) still hold."""
    with tempfile.TemporaryDirectory() as tmp:
        path = _cached_file(Path(tmp), cached_bytes)
        key, h = minilm.cache_key, text_hash(TEXT)
        dim, blob, _ = _stored(path, key)
        vec = np.frombuffer(blob, dtype=np.float32)
        new = {
            "scale": (dim, (vec * factor).astype(np.float32).tobytes()),
            "nan": (dim, np.where(np.arange(dim) == cut, np.nan, vec).astype(np.float32).tobytes()),
            "inf": (dim, np.where(np.arange(dim) == cut, np.inf, vec).astype(np.float32).tobytes()),
            "short": (dim, blob[:-cut]),
            "dim": (new_dim, np.resize(vec, new_dim).astype(np.float32).tobytes()),
        }[kind]
        _write(path, key, new[0], new[1], row_checksum(key, h, new[1]))
        cache = _reencoded_right(path, minilm, true_vector)
        assert cache.stats.damaged == 1
