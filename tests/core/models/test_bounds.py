"""A very long text is cut to what the model can use before it is tokenized.

The cut must not change the vector (the model keeps the same first tokens),
must still report the text as truncated, and must keep what the tokenizer
sees bounded by the model's limit, not by the text's length.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.models.bounds import CHARS_PER_TOKEN, MARGIN_TOKENS, model_inputs
from core.models.encode import encode_texts
from core.models.tokens import token_counts

WORDS = [
    "the",
    "patient",
    "was",
    "given",
    "a",
    "dose",
    "of",
    "penicillin",
    "and",
    "observed",
    "for",
    "an",
    "allergic",
    "reaction",
    "overnight",
]


def _long(n_words: int, sep: str = " ") -> str:
    return sep.join(WORDS[i % len(WORDS)] for i in range(n_words))


class _SpyTokenizer:
    """Forwards to a real tokenizer and records the longest text it was asked to tokenize."""

    def __init__(self, inner):
        self.inner = inner
        self.longest = 0

    def __call__(self, texts, **kwargs):
        self.longest = max([self.longest, *(len(t) for t in texts)])
        return self.inner(texts, **kwargs)


def test_short_texts_are_counted_whole(minilm):
    texts = ["A short one.", _long(200)]
    inputs = model_inputs(minilm.tokenizer, texts, minilm.max_seq_length)
    assert [i.text for i in inputs] == texts and not any(i.cut for i in inputs)
    assert [i.n_tokens for i in inputs] == token_counts(minilm.tokenizer, texts)


def test_a_long_text_is_cut_at_a_word_and_keeps_the_same_vector(minilm):
    text = _long(6000)  # ~40,000 characters, ~6,000 tokens
    limit = minilm.max_seq_length
    (cut,) = model_inputs(minilm.tokenizer, [text], limit)
    assert cut.cut and text.startswith(cut.text) and text[len(cut.text)] == " "
    assert limit * CHARS_PER_TOKEN // 2 < len(cut.text) <= limit * CHARS_PER_TOKEN
    assert cut.n_tokens == token_counts(minilm.tokenizer, [cut.text])[0] >= limit + MARGIN_TOKENS
    whole, part = minilm.backend.embed([text, cut.text])
    assert float(np.dot(whole, part)) == pytest.approx(1.0, abs=1e-6)


def test_sparse_text_widens_the_window_until_it_holds_enough_tokens(minilm):
    limit = minilm.max_seq_length
    text = " " * (limit * CHARS_PER_TOKEN * 3) + _long(2000)  # the first windows hold no token at all
    (cut,) = model_inputs(minilm.tokenizer, [text], limit)
    assert cut.cut and cut.n_tokens >= limit + MARGIN_TOKENS
    whole, part = minilm.backend.embed([text, cut.text])
    assert float(np.dot(whole, part)) == pytest.approx(1.0, abs=1e-6)


def test_a_text_that_never_fills_the_model_is_kept_whole(minilm):
    text = "x" * 50_000  # one "word" of 50,000 letters: a single [UNK]
    (kept,) = model_inputs(minilm.tokenizer, [text], minilm.max_seq_length)
    assert kept.text == text and not kept.cut and kept.n_tokens == 3


def test_encode_reports_the_truncation_and_tokenizes_only_a_bounded_part(minilm):
    huge = _long(400_000)  # ~2.6 MB
    spy = _SpyTokenizer(minilm.tokenizer)
    from core.models import bounds

    limit = minilm.max_seq_length
    inputs = bounds.model_inputs(spy, [huge, "The patient is allergic to penicillin"], limit)
    assert spy.longest <= limit * CHARS_PER_TOKEN  # never the whole 2.6 MB
    assert inputs[0].cut

    vectors, report = encode_texts(minilm, [huge, "The patient is allergic to penicillin"], None)
    (trunc,) = report.truncated
    assert trunc.text == huge and trunc.counted_part and trunc.n_tokens > trunc.max_tokens == limit
    assert report.model_parts[huge] == inputs[0].text
    reference = minilm.backend.embed([inputs[0].text])[0]
    assert float(np.dot(vectors[huge], reference)) == pytest.approx(1.0, abs=1e-6)


def test_nonsense_limit_is_refused(minilm):
    with pytest.raises(ValueError, match="max_tokens must be positive"):
        model_inputs(minilm.tokenizer, ["x"], 0)


def test_a_text_with_no_spaces_is_bounded_by_characters(minilm):
    from core.models import bounds

    limit = minilm.max_seq_length
    largest = limit * CHARS_PER_TOKEN * bounds.MAX_WINDOW_FACTOR
    text = "a" * (largest * 8)  # ~1 MB, one word: WordPiece makes one [UNK] of it, so no window ever fills the model
    spy = _SpyTokenizer(minilm.tokenizer)
    (bounded,) = bounds.model_inputs(spy, [text], limit)
    assert spy.longest <= largest  # not the whole megabyte
    assert bounded.cut and bounded.text == text[:largest] and bounded.n_tokens == 3
