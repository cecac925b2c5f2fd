"""Every model meets the one Backend and Tokenizer interface, checked the same way (scikit-learn's common tests, for models).

Each registered model is loaded for real: the bundled ones from their packages,
the papers' hub models as tiny stand-ins in a real Hugging Face cache
(``tests/hub_cache_support.py``), plus a sentence-transformers
``StaticEmbedding`` folder (``tests/static_embedding_support.py``).  Each goes
through the same checks: every declared member present, unit-norm vectors of the
record's dimension, tokens as the model counts them, a long text reported as
truncated at the model's limit, and a cache key under which a second encode is
served whole from the cache.  The test doubles the other tests build
(``BackendDefaults`` subclasses) and the cache-only stand-in of a warm run are
checked for the members too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hub_cache_support import StandIn, build_standin, forget, install, use_hf_home
from static_embedding_support import DIMENSION, build_static

from core.models import registry
from core.models.backends import STATIC_MAX_TOKENS
from core.models.cache import EmbeddingCache
from core.models.encode import encode_texts
from core.models.loading import LoadedModel, load_model
from core.models.protocols import Backend, BackendDefaults, Tokenizer
from core.models.tokens import token_counts
from core.models.warm import _NoWeights, predicted_cache_key

TEXTS = ["The patient is allergic to penicillin", "The patient is not allergic to penicillin", "Aspirin increases the risk of bleeding"]
MEMBERS = sorted(n for n in vars(Backend) if not n.startswith("_"))
STATIC = "static-embedding folder"


@pytest.fixture(scope="module")
def hub_home(tmp_path_factory):
    """One tiny stand-in installed under every hub-only registry id at its pinned revision."""
    root = tmp_path_factory.mktemp("conformance-hub")
    standin = build_standin(StandIn("stand-in", pooling="mean"), root / "standin")
    with pytest.MonkeyPatch.context() as mp:
        hub = use_hf_home(mp, root / "hf-home")
        for name in registry.HUB_ONLY_MODELS:
            install(hub, name, standin, registry.REGISTRY[name].revision or "main")
        yield hub
        forget(*registry.HUB_ONLY_MODELS)


@pytest.fixture(scope="module")
def static_folder(tmp_path_factory):
    return build_static(tmp_path_factory.mktemp("static") / "tiny-static")


def _load(name: str, request) -> LoadedModel:
    if name == STATIC:
        return load_model(str(request.getfixturevalue("static_folder")))
    if name in registry.HUB_ONLY_MODELS:
        request.getfixturevalue("hub_home")
        return load_model(name, allow_remote_code=True, backend="torch")
    return load_model(name)


def _check_members(backend: object) -> None:
    missing = [m for m in MEMBERS if not hasattr(backend, m)]
    assert not missing, f"{type(backend).__name__} lacks {missing} of the Backend protocol"
    assert isinstance(backend.tokenizer, Tokenizer)  # type: ignore[attr-defined]
    assert isinstance(backend.max_seq_length, int) and backend.max_seq_length > 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [*registry.BUNDLED, *registry.HUB_ONLY_MODELS, STATIC])
def test_every_model_conforms(name, request, session_cache_dir, tmp_path):
    model = _load(name, request)
    _check_members(model.backend)
    assert model.meta.loader == (registry.LOADER_STATIC if name == STATIC else registry.REGISTRY[name].loader)

    # Tokens: counted as the model receives them, pieces without specials.
    tok = model.tokenizer
    assert [len(p) > 0 for p in (tok.tokenize(t) for t in TEXTS)] == [True] * len(TEXTS)
    counts = token_counts(tok, [model.meta.prompt + t for t in TEXTS])

    # Vectors through the one encode path: unit norm, the record's dimension; tokens and truncation reported.
    limit = model.max_seq_length
    long_text = "penicillin allergy " * (limit // 2 + 8)
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    try:
        vectors, report = encode_texts(model, [*TEXTS, long_text], cache)
        assert [report.token_counts[t] for t in TEXTS] == counts
        for text, v in vectors.items():
            assert v.shape == (model.meta.dimension,) == (model.backend.dimension,), text[:40]
            assert abs(float(np.linalg.norm(v.astype(np.float64))) - 1.0) < 1e-5
        assert not [n for n in report.notes if "not of unit length" in n], "the backend should normalise its own vectors"
        (cut,) = report.truncated
        assert cut.text == long_text and cut.max_tokens == limit and cut.n_tokens > limit
        assert [t.text for t in report.truncated if t.text in TEXTS] == []

        # The cache key: the model's name and weights; a second encode is served whole, the same vectors.
        assert model.fingerprint and model.cache_key == f"{model.name}@{model.fingerprint}|{model.meta.prompt}"
        if name in registry.BUNDLED:  # a warm run predicts it without loading weights
            assert predicted_cache_key(name) == model.cache_key
        again, second = encode_texts(model, [*TEXTS, long_text], cache)
        assert (second.n_encoded, second.n_cached) == (0, len(TEXTS) + 1)
        for text in TEXTS:
            np.testing.assert_array_equal(again[text], vectors[text])
    finally:
        cache.close()


def test_a_static_model_keeps_its_tokenizers_truncation_or_the_cap(session_cache_dir, static_folder, tmp_path):
    """sentence-transformers says math.inf: the model keeps what its tokenizer.json cuts at, else STATIC_MAX_TOKENS.

    It receives no special tokens either.
    """
    from sentence_transformers import SentenceTransformer

    assert math.isinf(SentenceTransformer(str(static_folder), device="cpu").max_seq_length)
    uncut = load_model(str(static_folder))
    assert uncut.max_seq_length == STATIC_MAX_TOKENS and uncut.meta.dimension == DIMENSION
    assert uncut.meta.loader == registry.LOADER_STATIC
    assert token_counts(uncut.tokenizer, ["cats chase mice"]) == [3]  # no [CLS]/[SEP]: the model never sees them
    cut = load_model(str(build_static(tmp_path / "cut-at-8", truncate_at=8)))
    assert cut.max_seq_length == 8
    vectors, report = encode_texts(cut, ["one two three four five six seven eight nine ten", "one two three four five six seven eight"])
    (long,) = report.truncated
    assert long.n_tokens == 10 and long.max_tokens == 8
    # What is cut is what the model never saw: the first eight words alone give the same vector.
    np.testing.assert_allclose(vectors[long.text], vectors["one two three four five six seven eight"], atol=1e-6)


def test_the_test_doubles_and_the_cache_only_stand_in_declare_every_member(minilm):
    from apptest_support import CrashingBackend

    from core.models.endpoint import ApproxTokenizer

    doubles = [CrashingBackend(minilm.backend), _NoWeights(ApproxTokenizer(), 256, 384)]
    for backend in doubles:
        assert isinstance(backend, BackendDefaults)
        _check_members(backend)
