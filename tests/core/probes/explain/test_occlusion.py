"""Occlusion on hand-built cases: a token removed and restored, a model blind to all but the first word, word removal as text."""

from __future__ import annotations

import numpy as np
import pytest

from core import constants
from core.constants import BACKEND_AUTO
from core.models.encode import encode_texts
from core.models.loading import LoadedModel, load_model
from core.models.protocols import BackendDefaults
from core.models.registry import MINILM_L6, MINILM_L6_INT8
from core.probes.explain import occlusion

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


def _cos(model, a: str, b: str) -> float:
    """The cosine the app reports for a pair (texts encoded the normal way, no cache)."""
    vectors, _ = encode_texts(model, [a, b], None)
    return float(vectors[a] @ vectors[b])


@pytest.fixture(scope="module", params=[MINILM_L6, MINILM_L6_INT8], ids=["torch", "onnx"])
def model(request, session_cache_dir):
    # The int8 model exists only as ONNX: ask for "auto", whatever the session's default backend is.
    return load_model(request.param, backend=None if request.param == MINILM_L6 else BACKEND_AUTO)


@pytest.fixture(scope="module")
def explained(model):
    return occlusion(model, A, B)


def test_pair_cosine_is_the_models_own(model, explained):
    assert explained.cosine == pytest.approx(_cos(model, A, B), abs=1e-5)


def test_removing_not_restores_the_first_sentence(model, explained):
    """B without "not" is A token for token, so its cosine with A is 1: the attribution is cos(A, B) - 1."""
    table = explained.table
    row = table[(table[constants.COL_SIDE] == constants.SIDE_B) & (table[constants.COL_TOKEN] == "not")]
    assert len(row) == 1
    assert row[constants.COL_WORD].iloc[0] == "not"
    assert row[constants.COL_ATTRIBUTION].iloc[0] == pytest.approx(_cos(model, A, B) - 1.0, abs=1e-5)


def test_one_row_per_token_of_each_side(explained, model):
    table = explained.table
    for side, text in ((constants.SIDE_A, A), (constants.SIDE_B, B)):
        rows = table[table[constants.COL_SIDE] == side]
        assert list(rows[constants.COL_TOKEN]) == model.tokenizer.tokenize(text)
        assert list(rows[constants.COL_POSITION]) == list(range(len(rows)))
    pen = table[(table[constants.COL_SIDE] == constants.SIDE_A) & (table[constants.COL_WORD] == "penicillin")]
    assert list(pen[constants.COL_TOKEN]) == ["pen", "##ici", "##llin"]


def test_word_removal_equals_reencoding_the_shorter_text(model):
    """Each word's attribution is cos(A, B) minus the cosine of A with that word deleted from B's text."""
    explained = occlusion(model, A, B, unit=constants.UNIT_WORD)
    rows = explained.table[explained.table[constants.COL_SIDE] == constants.SIDE_B]
    words = B.split()
    assert list(rows[constants.COL_WORD]) == words
    full = _cos(model, A, B)
    for i, value in enumerate(rows[constants.COL_ATTRIBUTION]):
        shorter = " ".join(words[:i] + words[i + 1 :])
        assert value == pytest.approx(full - _cos(model, A, shorter), abs=1e-5), words[i]


class FirstWordBackend(BackendDefaults):
    """A model that embeds only a text's first word: a fixed random unit vector per word."""

    dimension = 16

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.max_seq_length = 128
        self.vectors: dict[str, np.ndarray] = {}

    def vector(self, word: str) -> np.ndarray:
        if word not in self.vectors:
            v = np.random.default_rng(len(self.vectors) + 1).normal(size=self.dimension)
            self.vectors[word] = (v / np.linalg.norm(v)).astype(np.float32)
        return self.vectors[word]

    def embed(self, texts, batch_size=None):
        return np.stack([self.vector(t.split()[0].lower()) for t in texts])


def test_a_model_blind_to_a_token_gives_it_zero(session_cache_dir):
    minilm = load_model(MINILM_L6)
    backend = FirstWordBackend(minilm.tokenizer)
    fake = LoadedModel(meta=minilm.meta, backend=backend, load_seconds=0.0)
    explained = occlusion(fake, "cats chase mice", "cats fear dogs")
    table = explained.table
    # Both sentences start with "cats": identical vectors.
    assert explained.cosine == pytest.approx(1.0, abs=1e-6)
    blind = table[table[constants.COL_POSITION] > 0]
    assert len(blind) == 4 and (blind[constants.COL_ATTRIBUTION] == 0.0).all()
    # Removing "cats" makes the first word "chase" (A) or "fear" (B): 1 - cos(v(cats), v(chase)).
    first = table[table[constants.COL_POSITION] == 0].set_index(constants.COL_SIDE)[constants.COL_ATTRIBUTION]
    cats = backend.vector("cats")
    assert first[constants.SIDE_A] == pytest.approx(1.0 - float(backend.vector("chase") @ cats), abs=1e-6)
    assert first[constants.SIDE_B] == pytest.approx(1.0 - float(backend.vector("fear") @ cats), abs=1e-6)


def test_bad_input_is_refused(session_cache_dir):
    minilm = load_model(MINILM_L6)
    with pytest.raises(ValueError, match="unit"):
        occlusion(minilm, A, B, unit="letter")
    with pytest.raises(ValueError, match="empty"):
        occlusion(minilm, A, "   ")
