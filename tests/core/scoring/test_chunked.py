"""Chunked scoring: the same rows as the in-memory runner, resumable after an interruption, warm chunks without weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.models import loading
from core.models.cache import EmbeddingCache
from core.models.registry import MINILM_L3_ONNX
from core.scoring.chunked import read_results, score_staged, stage_pairs
from core.scoring.runner import run_pairs

N = 30
CHUNK = 7
PAIRS = pd.DataFrame(
    {
        constants.COL_TEXT_A: [f"The river {i} flows past the old mill." for i in range(N)],
        constants.COL_TEXT_B: [f"A boat {i} drifts under the bridge." for i in range(N)],
        constants.COL_CATEGORY: ["c1" if i % 3 else "c2" for i in range(N)],
        constants.COL_PAIR_ID: [f"p{i}" for i in range(N)],
    }
)


@pytest.fixture(autouse=True)
def any_backend(monkeypatch):
    """The bundled L3 model exists only as ONNX: let each model take its own backend."""
    monkeypatch.setenv(getattr(constants, "BACKEND_ENV_VAR", "COSINE_PROBE_BACKEND"), getattr(constants, "BACKEND_AUTO", "auto"))


class Interrupt:
    """Progress that stops the run once ``after`` pairs are scored."""

    def __init__(self, after: int) -> None:
        self.after = after

    def start(self, model, total):
        pass

    def advance(self, model, done):
        if done >= self.after:
            raise KeyboardInterrupt

    def finish(self, model):
        pass


@pytest.fixture
def staged(tmp_path):
    path = tmp_path / "staged.parquet"
    # Two chunks in, one chunk out: staging fits later chunks to the first's columns.
    assert stage_pairs([PAIRS.iloc[:10], PAIRS.iloc[10:]], path) == N
    return path


def test_chunked_rows_equal_the_in_memory_runner(tmp_path, staged):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    out = tmp_path / "out"
    out.mkdir()
    result = score_staged(staged, [MINILM_L3_ONNX], out, cache=cache, chunk_rows=CHUNK)
    assert result.models == [MINILM_L3_ONNX] and result.n_rows == N, result.errors
    got = read_results(result.parquet)
    want = run_pairs(PAIRS, [MINILM_L3_ONNX], cache=EmbeddingCache(False)).results
    assert list(got[constants.COL_PAIR_ID]) == list(want[constants.COL_PAIR_ID])
    np.testing.assert_allclose(got[constants.COL_COSINE], want[constants.COL_COSINE], atol=1e-6)
    for col in (
        constants.COL_TOKENS_A,
        constants.COL_TOKENS_B,
        constants.COL_TOKEN_JACCARD,
        constants.COL_WORD_JACCARD,
        constants.COL_TRUNCATED,
    ):
        assert list(got[col]) == list(want[col]), col
    csv = pd.read_csv(result.csv)
    assert len(csv) == N
    np.testing.assert_allclose(csv[constants.COL_COSINE], got[constants.COL_COSINE], atol=1e-12)
    # Every text was new: 60 encoded; the tally sums the five chunks.
    assert (result.tallies[MINILM_L3_ONNX].encoded, result.tallies[MINILM_L3_ONNX].from_cache) == (2 * N, 0)
    assert not (out / ".parts").exists()


def test_an_interrupted_run_rerun_encodes_only_what_the_cache_lacks(tmp_path, staged):
    cache_file = tmp_path / "c.sqlite"
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(KeyboardInterrupt):
        score_staged(staged, [MINILM_L3_ONNX], out, cache=EmbeddingCache(cache_file), chunk_rows=CHUNK, progress=Interrupt(2 * CHUNK))
    # Two chunks of 7 pairs, two distinct texts a pair, reached the disk before the interruption.
    rerun = score_staged(staged, [MINILM_L3_ONNX], out, cache=EmbeddingCache(cache_file), chunk_rows=CHUNK)
    tally = rerun.tallies[MINILM_L3_ONNX]
    assert (tally.from_cache, tally.encoded) == (2 * 2 * CHUNK, 2 * N - 2 * 2 * CHUNK)
    assert len(read_results(rerun.parquet)) == N


def test_a_fully_cached_run_loads_no_weights(tmp_path, staged, monkeypatch):
    cache_file = tmp_path / "c.sqlite"
    out = tmp_path / "out"
    out.mkdir()
    cold = score_staged(staged, [MINILM_L3_ONNX], out, cache=EmbeddingCache(cache_file), chunk_rows=CHUNK)
    cold_rows = read_results(cold.parquet)
    # As in a new process: no model in memory (one in memory would be used as it is, weights and all).
    monkeypatch.setattr(loading, "_LOADED", {})
    warm = score_staged(staged, [MINILM_L3_ONNX], out, cache=EmbeddingCache(cache_file), chunk_rows=CHUNK)
    assert cold.tallies[MINILM_L3_ONNX].weights_loaded is True
    assert warm.tallies[MINILM_L3_ONNX].weights_loaded is False
    assert warm.tallies[MINILM_L3_ONNX].encoded == 0
    pd.testing.assert_frame_equal(read_results(warm.parquet), cold_rows)


def test_a_failing_model_is_reported_and_the_others_are_written(tmp_path, staged):
    out = tmp_path / "out"
    out.mkdir()
    result = score_staged(staged, [str(tmp_path / "no-such-model"), MINILM_L3_ONNX], out, cache=EmbeddingCache(False), chunk_rows=CHUNK)
    assert result.models == [MINILM_L3_ONNX] and list(result.errors) == [str(tmp_path / "no-such-model")]
    assert set(read_results(result.parquet, [constants.COL_MODEL])[constants.COL_MODEL]) == {MINILM_L3_ONNX}


def test_bad_arguments(tmp_path, staged):
    with pytest.raises(ValueError, match="no pair to score"):
        stage_pairs([PAIRS.iloc[:0]], tmp_path / "empty.parquet")
    with pytest.raises(ValueError, match="chunk_rows must be at least 1"):
        score_staged(staged, [MINILM_L3_ONNX], tmp_path, cache=EmbeddingCache(False), chunk_rows=0)
