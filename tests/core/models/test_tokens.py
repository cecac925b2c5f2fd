"""Tokenization: the OOV paper's Table 2 splits, vocabulary checks, [UNK], cut-off."""

from __future__ import annotations

import pandas as pd
import pytest

from core.models.loading import ModelUnavailable, load_tokenizer, max_seq_length
from core.models.registry import MINILM_L6, MINILM_L6_INT8
from core.models.tokens import (
    identical_splits,
    is_vocab_entry,
    load_tokenizers,
    split_word,
    token_counts,
    token_rows,
    tokenize,
    word_pieces,
)
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


def test_load_tokenizers_keeps_order_and_reasons(tok):
    def loader(name):
        if name == "broken":
            raise ModelUnavailable("broken: no tokenizer here")
        return tok

    loaded, errors = load_tokenizers(["MiniLM-L6", "broken", "", MINILM_L6_INT8], loader=loader)
    # the alias resolves to its registry name; the empty name is refused by the registry
    assert [name for name, _ in loaded] == [MINILM_L6, MINILM_L6_INT8]
    assert all(t is tok for _, t in loaded)
    assert errors["broken"] == "broken: no tokenizer here" and "empty" in errors[""]


class _Letters:
    """A toy tokenizer: one piece per letter, so it never cuts like WordPiece."""

    unk_token = "[UNK]"

    def tokenize(self, text):
        return [c for c in text if not c.isspace()]

    def __call__(self, texts, **_kw):
        return {"input_ids": [[0, *range(len(self.tokenize(t))), 0] for t in texts]}


def test_token_rows(tok):
    rows = token_rows([(MINILM_L6, tok), ("letters", _Letters())], ["Xylophrix", "go", "Xylophrix"], max_tokens=lambda _m: 4)
    assert [(r["model"], r["text"]) for r in rows] == [
        (MINILM_L6, "Xylophrix"),
        (MINILM_L6, "go"),
        (MINILM_L6, "Xylophrix"),
        ("letters", "Xylophrix"),
        ("letters", "go"),
        ("letters", "Xylophrix"),
    ]
    first = rows[0]
    assert first["tokens"] == ["x", "##yl", "##op", "##hri", "##x"]  # OOV paper, Table 2
    assert (first["n_tokens"], first["n_with_special"], first["max_tokens"], first["n_past_max"], first["n_unk"]) == (5, 7, 4, 3, 0)
    assert first["words"] == [{"word": "Xylophrix", "pieces": ["x", "##yl", "##op", "##hri", "##x"], "in_vocab": False, "n_unk": 0}]
    # "go" is one WordPiece entry and, under the toy tokenizer, "g" "o": different cuts;
    # "Xylophrix" is x|yl|op|hri|x vs X|y|l|o|p|h|r|i|x: different too.
    assert not any(r["identical_across_models"] for r in rows)
    letters_go = rows[4]
    assert letters_go["tokens"] == ["g", "o"] and letters_go["n_with_special"] == 4 and letters_go["n_past_max"] == 0


def test_token_rows_one_model_is_identical_to_itself(tok):
    (row,) = token_rows([(MINILM_L6, tok)], ["Google acquired YouTube"])
    assert row["identical_across_models"] and row["max_tokens"] == max_seq_length(MINILM_L6)


# ------------------------------------------- an ONNX model's tokenizer: the file for counting, transformers only when asked more


def test_fast_first_tokenizer_counts_from_the_file_and_asks_transformers_only_for_more():
    from transformers import AutoTokenizer

    from core.models.bundled import tokenizer_path
    from core.models.fast_tokenizer import FastFirstTokenizer

    folder = tokenizer_path("minilm_l6", verify_weights=False)
    built = []

    def hub():
        built.append(1)
        return AutoTokenizer.from_pretrained(str(folder))

    tok = FastFirstTokenizer(folder / "tokenizer.json", hub)
    texts = ["The patient is not allergic to penicillin", "zorbixal"]
    counted = tok(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    pieces = tok.tokenize("zorbixal")
    assert not built and tok.unk_token == "[UNK]" and tok.pad_id == 0  # what scoring asks needs no transformers
    reference = AutoTokenizer.from_pretrained(str(folder))
    assert counted == reference(texts, add_special_tokens=True, truncation=False)["input_ids"]
    assert pieces == reference.tokenize("zorbixal")
    # Anything more (offsets, padding, ids to pieces) is the Hugging Face tokenizer's, built once.
    assert tok(texts[0], truncation=True, max_length=4)["input_ids"] == reference(texts[0], truncation=True, max_length=4)["input_ids"]
    assert tok.is_fast and tok.convert_ids_to_tokens([101]) == ["[CLS]"] and len(built) == 1


def test_an_onnx_model_loads_and_encodes_without_importing_transformers_or_torch():
    """transformers and torch (about 2 s of CPU holding the GIL) were imported by every ONNX load, for its tokenizer alone."""
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from core.models.loading import load_model\n"
        "model = load_model('sentence-transformers/paraphrase-MiniLM-L3-v2')\n"
        "from core.models.encode import encode_texts\n"
        "encode_texts(model, ['The patient is allergic to penicillin'], None)\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy(), timeout=300, check=True)
    assert done.stdout.split() == ["False", "False"], done.stderr[-2000:]
