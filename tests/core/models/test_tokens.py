"""Tokenization: the OOV paper's Table 2 splits, vocabulary checks, [UNK], cut-off."""

from __future__ import annotations

import pandas as pd
import pytest

from core.models.loading import load_tokenizer, max_seq_length
from core.models.registry import MINILM_L6, MINILM_L6_INT8
from core.models.tokens import identical_splits, is_vocab_entry, split_word, split_words, token_counts, tokenize, word_pieces
from core.paths import REFERENCE_DIR

TABLE2 = pd.read_csv(REFERENCE_DIR / "oov_entities.csv", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def tok(session_cache_dir):
    return load_tokenizer(MINILM_L6)


def test_table2_has_twenty_entities():
    assert len(TABLE2) == 20
    assert {"entity", "replacement", "original_tokens", "replacement_tokens"} <= set(TABLE2.columns)


@pytest.mark.parametrize("row", TABLE2.to_dict("records"), ids=list(TABLE2["entity"]))
def test_table2_splits_match_minilm(tok, row):
    assert word_pieces(tok, row["entity"]) == row["original_tokens"].split()
    assert word_pieces(tok, row["replacement"]) == row["replacement_tokens"].split()
    assert len(row["original_tokens"].split()) == int(row["original_n_tokens"])
    assert len(row["replacement_tokens"].split()) == int(row["replacement_n_tokens"])


def test_replacements_are_not_vocabulary_entries(tok):
    for word in TABLE2["replacement"]:
        assert not is_vocab_entry(tok, word), word
        assert not split_word(tok, word).in_vocab
    assert is_vocab_entry(tok, "google")
    assert is_vocab_entry(tok, "Google")  # uncased tokenizer
    assert not is_vocab_entry(tok, "penicillin")  # pen ##ici ##llin


def test_emoji_is_unknown(tok):
    assert word_pieces(tok, "🦄") == [tok.unk_token] == ["[UNK]"]
    split = split_word(tok, "🦄")
    assert split.n_unk == 1 and not split.in_vocab
    assert not is_vocab_entry(tok, "🦄")
    t = tokenize(tok, "I love 🦄 so much", 256)
    assert t.n_unk == 1
    assert "[UNK]" in t.tokens


def test_tokenize_short_text(tok):
    t = tokenize(tok, "Google acquired YouTube.", 256)
    assert t.tokens == tuple(tok.tokenize("Google acquired YouTube."))
    assert t.n_tokens == len(t.tokens)
    assert t.n_with_special == t.n_tokens + 2  # [CLS] and [SEP]
    assert t.n_past_max == 0 and not t.truncated
    assert [w.word for w in t.words] == ["Google", "acquired", "YouTube", "."]
    assert t.words[0].pieces == ("google",) and t.words[0].in_vocab


def test_tokenize_long_text_reports_cut_off(tok):
    text = "the patient was stable " * 100  # 400 words
    limit = max_seq_length(MINILM_L6)
    assert limit == 256
    t = tokenize(tok, text, limit)
    assert t.n_with_special == 402
    assert t.n_past_max == 402 - 256 > 0
    assert t.truncated


def test_token_counts_include_specials(tok):
    assert token_counts(tok, []) == []
    assert token_counts(tok, ["", "hello", "hello world"]) == [2, 3, 4]


def test_split_words():
    assert split_words("Don't take 5mg, O'Brien!") == ["Don't", "take", "5mg", ",", "O'Brien", "!"]
    assert split_words("") == []


def test_identical_splits_minilm_and_int8(tok):
    int8 = load_tokenizer(MINILM_L6_INT8)
    for text in ("Xylophrix acquired Quarbitone", "The patient has diabetes", "🦄 and café"):
        assert identical_splits({MINILM_L6: tok.tokenize(text), MINILM_L6_INT8: int8.tokenize(text)})


def test_identical_splits_false_for_different_cuts(tok):
    real = tok.tokenize("Xylophrix")  # x ##yl ##op ##hri ##x
    fake = ["xy", "##lop", "##hri", "##x"]
    assert not identical_splits({"real": real, "fake": fake})
    assert not identical_splits({"a": ["google"], "b": ["goo", "##gle"]})


def test_identical_splits_ignores_spelling_of_word_starts():
    # WordPiece continuation vs SentencePiece / BPE word-start markers.
    assert identical_splits({"wordpiece": ["x", "##yl"], "sentencepiece": ["▁x", "yl"], "bpe": ["Ġx", "yl"]})
    assert identical_splits({})
    assert identical_splits({"only": ["a"]})
