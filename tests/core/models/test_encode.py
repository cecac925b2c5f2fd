"""Encoding: vectors equal the reference implementations, prompts, dedup and truncation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.models.bundled import bundle_path
from core.models.encode import embedding_matrix, encode_texts
from core.models.loading import LoadedModel, load_model
from core.models.protocols import BackendDefaults
from core.models.registry import MINILM_L3_ONNX, MINILM_L6, MINILM_L6_INT8, MPNET
from core.scoring.runner import run_pairs, score_pairs

TEXTS = [
    "Google acquired YouTube",
    "YouTube acquired Google",
    "The patient has diabetes",
    "The patient does not have diabetes",
    "a",
    "Take 5mg of the drug twice daily with food, but never on an empty stomach.",
    "Ünïcödé façade — naïve café",
    "A much longer sentence about the weather in the mountains during the long and snowy winter months of the year.",
]

PAIRS = [
    ("Google acquired YouTube", "YouTube acquired Google"),
    ("The cat sat on the mat", "A dog lay on the rug"),
    ("He paid $5 for lunch", "He paid $50 for lunch"),
    ("Aspirin reduces fever", "Aspirin does not reduce fever"),
    ("Rain is expected tomorrow", "It rained yesterday"),
    ("All patients recovered", "Some patients recovered"),
    ("The meeting starts at noon", "The meeting begins at midday"),
    ("She sold the car", "The car was sold by her"),
    ("Stocks fell sharply today", "The market dropped a lot today"),
    ("I love pizza", "Quantum chromodynamics describes quarks"),
]


def _encode(model: LoadedModel, texts: list[str]) -> np.ndarray:
    vectors, _ = encode_texts(model, texts, cache=None)
    return embedding_matrix(vectors, texts)


@pytest.mark.parametrize(("name", "bundle"), [(MINILM_L6, "minilm_l6"), (MPNET, "mpnet")])
def test_torch_models_equal_sentence_transformers(name, bundle):
    from sentence_transformers import SentenceTransformer

    model = load_model(name)
    direct = SentenceTransformer(str(bundle_path(bundle)), device="cpu").encode(TEXTS, normalize_embeddings=True)
    ours = _encode(model, TEXTS)
    assert ours.dtype == np.float32
    assert ours.shape == (len(TEXTS), model.meta.dimension)
    np.testing.assert_allclose(ours, direct, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def _pair_cosines(model: LoadedModel) -> np.ndarray:
    a = _encode(model, [p[0] for p in PAIRS])
    b = _encode(model, [p[1] for p in PAIRS])
    return np.einsum("ij,ij->i", a, b)


def test_int8_onnx_is_close_to_minilm(minilm):
    int8 = load_model(MINILM_L6_INT8)
    assert int8.meta.dimension == int8.backend.dimension == 384
    full, quantized = _pair_cosines(minilm), _pair_cosines(int8)
    assert np.max(np.abs(full - quantized)) < 0.01


def test_l3_onnx_equals_its_graphs_pooled_output():
    model = load_model(MINILM_L3_ONNX)
    backend = model.backend
    assert backend.dimension == 384
    # One padded batch of texts of different lengths: the mask must be honoured.
    enc = backend.tokenizer(TEXTS, padding=True, truncation=True, max_length=backend.max_seq_length, return_tensors="np")
    feed = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask")}
    (pooled,) = backend.session.run(["461"], feed)
    expected = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(_encode(model, TEXTS), expected, atol=1e-5)


def test_prompt_is_prepended(minilm, fresh_cache):
    prompted = dataclasses.replace(minilm, meta=dataclasses.replace(minilm.meta, prompt="search_query: "))
    assert prompted.meta.cache_key != minilm.meta.cache_key
    text = "what is the capital of France"

    # Unprompted first, through the same cache: the prompted model must not be served its vector.
    plain, _ = encode_texts(minilm, [text], fresh_cache)
    with_prompt, report = encode_texts(prompted, [text], fresh_cache)
    reference, _ = encode_texts(minilm, ["search_query: " + text], None)

    assert report.n_encoded == 1
    np.testing.assert_allclose(with_prompt[text], reference["search_query: " + text], atol=1e-6)
    assert float(with_prompt[text] @ plain[text]) < 0.999
    # Token counts include the prompt; truncation reports the text as given.
    assert report.token_counts[text] == len(minilm.tokenizer("search_query: " + text)["input_ids"])


class _SpyBackend(BackendDefaults):
    """Forwards to a real backend and records what it was asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.tokenizer = inner.tokenizer
        self.max_seq_length = inner.max_seq_length
        self.dimension = inner.dimension
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def test_duplicates_are_encoded_once(minilm):
    spy = _SpyBackend(minilm.backend)
    model = LoadedModel(meta=minilm.meta, backend=spy, load_seconds=0.0)
    vectors, report = encode_texts(model, ["a", "b", "a"], cache=None)
    assert sorted(t for call in spy.calls for t in call) == ["a", "b"]
    assert report.n_unique == 2 and report.n_encoded == 2 and report.n_cached == 0
    assert set(vectors) == {"a", "b"}
    matrix = embedding_matrix(vectors, ["a", "b", "a"])
    np.testing.assert_array_equal(matrix[0], matrix[2])


def test_progress_and_batches(minilm):
    spy = _SpyBackend(minilm.backend)
    model = LoadedModel(meta=minilm.meta, backend=spy, load_seconds=0.0)
    seen = []
    texts = [f"sentence number {i}" for i in range(7)]
    _, report = encode_texts(model, texts, cache=None, batch_size=3, progress=lambda done, total: seen.append((done, total)))
    assert [len(c) for c in spy.calls] == [3, 3, 1]
    assert seen == [(3, 7), (6, 7), (7, 7)]
    assert report.n_encoded == 7


def test_empty_input(minilm):
    vectors, report = encode_texts(minilm, [], cache=None)
    assert vectors == {} and report.n_unique == 0 and report.n_encoded == 0
    assert embedding_matrix(vectors, []).shape == (0, 0)


def test_long_text_is_reported_truncated(minilm):
    long_text = ("word " * 4000)[:20000]
    assert len(long_text) == 20000
    _, report = encode_texts(minilm, [long_text, "short"], cache=None)
    assert [t.text for t in report.truncated] == [long_text]
    cut = report.truncated[0]
    assert cut.max_tokens == minilm.max_seq_length == 256
    assert cut.n_tokens > cut.max_tokens

    pairs = pd.DataFrame({constants.COL_TEXT_A: [long_text, "short"], constants.COL_TEXT_B: ["short", "shorter"]})
    result = run_pairs(pairs, [MINILM_L6])
    assert result.errors == {}
    rows = result.results
    assert rows[constants.COL_TRUNCATED].tolist() == [True, False]
    assert rows[constants.COL_TOKENS_A].iloc[0] > 256
    truncations = result.truncations()
    assert truncations["text"].tolist() == [long_text]
    assert (truncations["n_tokens"] > truncations["max_tokens"]).all()


def test_a_local_backend_giving_a_zero_vector_is_refused_naming_the_text_and_nothing_is_cached(fresh_cache, minilm):
    """The one safe normalisation refuses a row with no direction; encode_texts names its text and caches nothing of the batch."""
    from core.models import backends

    class ZeroForOne(BackendDefaults):
        tokenizer, max_seq_length, dimension, batch_size = minilm.tokenizer, 256, 2, 8

        def embed(self, texts, batch_size=None):
            return backends._l2_normalize(np.array([[0.0, 0.0] if t.endswith("nothing") else [3.0, 4.0] for t in texts]))

    model = dataclasses.replace(minilm, backend=ZeroForOne(), fingerprint="test:zero-for-one")
    with pytest.raises(ValueError, match=r"all zeros or not finite.*refused, nothing cached: 'says nothing'"):
        encode_texts(model, ["says something", "says nothing"], fresh_cache)
    assert fresh_cache.get_many(model.cache_key, ["says something", "says nothing"]) == {}
    vectors, _ = encode_texts(model, ["says something"], fresh_cache)
    np.testing.assert_allclose(vectors["says something"], [0.6, 0.8], rtol=1e-6)


# ------------------------------------------------------------- fresh vectors' norm


class _Unnormalized(BackendDefaults):
    """A real model's vectors scaled by 3 and 0.5 in turn: a backend that forgets to normalise."""

    def __init__(self, inner):
        self.inner, self.tokenizer, self.max_seq_length, self.dimension = inner, inner.tokenizer, inner.max_seq_length, inner.dimension

    def embed(self, texts, batch_size=None):
        rows = self.inner.embed(texts)
        return rows * np.where(np.arange(len(rows)) % 2 == 0, 3.0, 0.5)[:, None].astype(np.float32)


def test_a_backend_returning_unnormalized_vectors_is_caught_normalised_and_noted(fresh_cache, minilm):
    """Its scores are cosines, equal to the normalising model's, not dot products; the run says so once; the cache holds unit rows."""
    texts = ["The patient is allergic to penicillin", "The patient is not allergic to penicillin"]
    model = dataclasses.replace(minilm, backend=_Unnormalized(minilm.backend), fingerprint="test:unnormalized")
    vectors, report = encode_texts(model, texts, fresh_cache)
    want, _ = encode_texts(minilm, texts, None)
    for t in texts:
        assert np.linalg.norm(vectors[t]) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(vectors[t], want[t], atol=1e-6)
    (note,) = [n for n in report.notes if "not of unit length" in n]
    assert "norms 0.5 to 3" in note and "cosines, not dot products" in note
    cached = fresh_cache.get_many(model.cache_key, texts, unit_norm=True)
    assert set(cached) == set(texts)
    pairs = pd.DataFrame({"text_a": [texts[0]], "text_b": [texts[1]]})
    result = run_pairs(pairs, [MINILM_L6])
    scored, _ = score_pairs(model, pairs, None)
    assert scored[constants.COL_COSINE].iloc[0] == pytest.approx(result.results[constants.COL_COSINE].iloc[0], abs=1e-6)
    dot = float(3.0 * 0.5 * want[texts[0]] @ want[texts[1]])
    assert abs(scored[constants.COL_COSINE].iloc[0] - dot) > 0.1  # what the old einsum reported
