"""Warm runs: the tokenizers-only tokenizer matches the model's, the predicted cache key is the loaded model's."""

from __future__ import annotations

from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.encode import encode_texts
from core.models.warm import WeightsNotLoaded, cached_model, fast_tokenizer

TEXTS = [
    "The cat sat on the mat.",
    "Bitcoin xylophrix naïve café — ok?",
    "  spaced   out  ",
    "Über-résumé 123,456 e-mail",
    "word " * 400,  # past every model's limit: the bundled tokenizer.json would cut it at 128
]


def test_fast_tokenizer_counts_and_splits_as_the_models_own(minilm):
    fast = fast_tokenizer(registry.resolve(registry.MINILM_L6))
    assert fast is not None
    want = minilm.tokenizer(TEXTS, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    assert fast(TEXTS)["input_ids"] == want
    assert len(want[-1]) == 402  # 400 words + [CLS] + [SEP]: neither padded nor truncated to 128
    assert [fast.tokenize(t) for t in TEXTS] == [minilm.tokenizer.tokenize(t) for t in TEXTS]


def test_cached_model_predicts_the_loaded_key_and_needs_every_text(minilm, tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    assert cached_model(registry.MINILM_L6, TEXTS[:2], cache) is None  # nothing cached yet
    encode_texts(minilm, TEXTS[:2], cache)
    warm = cached_model(registry.MINILM_L6, TEXTS[:2], cache)
    assert warm is not None and warm.cache_key == minilm.cache_key
    assert cached_model(registry.MINILM_L6, TEXTS[:3], cache) is None  # one text missing: load the model
    vectors, report = encode_texts(warm, TEXTS[:2], cache)
    assert report.n_encoded == 0 and report.token_counts == encode_texts(minilm, TEXTS[:2], cache)[1].token_counts
    try:
        warm.backend.embed(["x"])
    except WeightsNotLoaded:
        pass
    else:
        raise AssertionError("a cached model must refuse to encode")


def test_no_cache_or_unknown_model_gives_none(tmp_path):
    assert cached_model(registry.MINILM_L6, TEXTS, None) is None
    assert cached_model(str(tmp_path / "nope"), TEXTS, EmbeddingCache(False)) is None
