"""Tokenizer page (AppTest, real MiniLM tokenizers): splits, vocabulary, [UNK], agreement, Table 2."""

from __future__ import annotations

import os
import tempfile

import pytest
from apptest_support import assert_leads_with, open_page

os.environ["COSINE_PROBE_DEFAULT_MODELS"] = "sentence-transformers/all-MiniLM-L6-v2"
os.environ.setdefault("COSINE_PROBE_CACHE_DIR", tempfile.mkdtemp(prefix="cosine-probe-test-"))

from streamlit.testing.v1 import AppTest  # noqa: E402

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
INT8 = "all-MiniLM-L6-v2-int8"


def token_table(at: AppTest):
    frames = [df.value for df in at.dataframe if "identical_across_models" in df.value.columns]
    assert len(frames) == 1
    return frames[0]


def word_tables(at: AppTest):
    return [df.value for df in at.dataframe if "in vocabulary" in df.value.columns]


@pytest.fixture()
def at() -> AppTest:
    return open_page("views/tokenizer.py", timeout=60)


def test_default_invented_words(at):
    table = token_table(at)
    row = table[table["text"] == "Xylophrix"].iloc[0]
    assert row["tokens"] == "x ##yl ##op ##hri ##x"
    assert row["n_tokens"] == 5 and row["n_unk"] == 0 and row["n_past_max"] == "0"
    assert row["published_split"] == "x ##yl ##op ##hri ##x" and row["matches_published"] == True  # noqa: E712
    words = word_tables(at)[0]
    xy = words[words["word"] == "Xylophrix"].iloc[0]
    assert xy["pieces"] == "x ##yl ##op ##hri ##x" and xy["in vocabulary"] == "no"
    assert "x ##yl ##op ##hri ##x" in [c.value for c in at.code]
    assert any("published" in t.value and "✅ match" in t.value for t in at.text)
    # the real sentence is no Table 2 word; "patient" is one vocabulary entry
    sentence = table[table["text"].str.startswith("The patient")].iloc[0]
    assert sentence["published_split"] is None or sentence["published_split"] != sentence["published_split"]
    last = word_tables(at)[-1]
    assert last.loc[last["word"] == "patient", "in vocabulary"].iloc[0] == "yes"
    assert len(at.download_button) >= 2  # token table downloads
    # The page leads with the word that splits most (one model: no agreement to report)
    import pandas as pd

    words = pd.concat(word_tables(at), ignore_index=True)
    n_pieces = words["pieces"].str.split().map(len)
    most = words.loc[n_pieces.idxmax()]
    assert_leads_with(at, [f"“{most['word']}” splits most: {n_pieces.max()} pieces under MiniLM-L6."])


def test_emoji_gives_unk(at):
    at.text_area(key="tok_text").input("I love it 😀").run()
    assert not at.exception
    row = token_table(at).iloc[0]
    assert row["n_unk"] > 0 and "[UNK]" in row["tokens"]
    words = word_tables(at)[0]
    assert words.loc[words["word"] == "😀", "[UNK]"].iloc[0] > 0


def test_identical_splits_banner_with_two_models(at):
    # AppTest runs the page without the router's sidebar; set the key its multiselect writes.
    at.session_state["selected_models"] = [MINILM, INT8]
    at.run()
    assert not at.exception
    table = token_table(at)
    assert len(table) == 5 and set(table["model_id"]) == {f"{MINILM}, {INT8}"}  # one row per line, naming both models
    assert table["identical_across_models"].all()
    banners = [s.value for s in at.success]
    assert len(banners) == 5 and all("All selected models split this line identically" in b for b in banners)
    assert_leads_with(
        at,
        ["All 2 models split all 5 lines the same way.", "“flobnaxitol” splits most: 6 pieces under MiniLM-L6 and MiniLM-L6 int8 (ONNX)."],
    )


def test_long_line_past_max_and_empty_input(at):
    at.text_area(key="tok_text").input("word " * 300).run()
    row = token_table(at).iloc[0]
    assert row["max_tokens"] == "256" and row["n_past_max"] == str(302 - 256)
    assert any("past the maximum" in w.value for w in at.warning)
    at.text_area(key="tok_text").input("  \n ").run()
    assert not at.exception
    assert any("Type a word or sentence" in w.value for w in at.warning)


def test_identical_splits_are_shown_once(monkeypatch):
    """MiniLM and its int8 copy share a tokenizer, so each line's split is shown once for both."""
    monkeypatch.setenv("COSINE_PROBE_DEFAULT_MODELS", f"{MINILM},{INT8}")
    app = open_page("views/tokenizer.py", timeout=120)
    assert not app.exception
    texts = [t.value for t in app.text]
    assert "all 2 models: 5 tokens, 0 [UNK]" in texts
    assert [c.value for c in app.code].count("x ##yl ##op ##hri ##x") == 1
    assert not any(t.startswith("MiniLM-L6:") for t in texts)


def test_the_sentencepiece_model_splits_differently_and_an_endpoint_says_why_it_cannot(at):
    """The bundled e5 (XLM-RoBERTa SentencePiece) cuts words elsewhere than WordPiece, so agreement is no longer always green."""
    e5 = "multilingual-e5-small-q4"
    at.session_state["selected_models"] = [MINILM, e5, "openai:text-embedding-3-small"]
    at.run()
    assert not at.exception
    table = token_table(at)
    assert set(table["model_id"]) == {MINILM, e5}
    xylo = table[(table["text"] == "Xylophrix") & (table["model_id"] == e5)].iloc[0]
    assert xylo["tokens"] == "▁X y lo ph rix"
    assert not table["identical_across_models"].all()
    differ = table.drop_duplicates("text")["identical_across_models"].map(lambda same: not same).sum()
    said = next(m.value for m in at.markdown if "lines differently" in m.value)
    assert said.startswith(f"The models split {differ} of 5 lines differently\\. ")
    assert any("split this line differently" in w.value for w in at.warning)
    assert any("pieces cannot be shown" in i.value for i in at.info)
    assert not at.error


def test_identical_splits_are_shown_once_with_the_models_that_make_them(at):
    """MiniLM and its int8 twin split every word alike, yet each split was printed once per model; now each
    distinct split is shown once, naming its models, and the word tables have one row per word and split."""
    e5 = "multilingual-e5-small-q4"
    at.session_state["selected_models"] = [MINILM, INT8, e5]
    at.run()
    assert not at.exception
    shown = [t.value for t in at.text]
    # line 1 (Xylophrix): the two WordPiece twins share one split, e5 has its own: two entries, not three
    first = shown[
        shown.index(next(t for t in shown if t.startswith("Line 1:"))) + 1 : shown.index(next(t for t in shown if t.startswith("Line 2:")))
    ]
    splits = [t for t in first if " tokens, " in t and "[UNK]" in t]
    assert len(splits) == 2, first
    assert any("MiniLM-L6" in t and "," in t.split(":")[0] for t in splits), splits  # both twins named on one line
    words = word_tables(at)[0]
    assert len(words) == len(words[["word", "pieces"]].drop_duplicates())  # one row per word and split
    assert any(", " in m for m in words["models"])


def test_the_all_lines_table_has_one_row_per_line_and_split(at):
    """The "All lines" table kept one row per model even where the models split a line identically; now models
    that cut a line alike share its row, and what each keeps is said per model where they differ (MiniLM-L3 keeps 128)."""
    l3, e5 = "sentence-transformers/paraphrase-MiniLM-L3-v2", "multilingual-e5-small-q4"
    at.session_state["selected_models"] = [MINILM, INT8, l3, e5]
    at.run()
    assert not at.exception
    table = token_table(at)
    first = table[table["line"] == 1]
    assert len(first) == 2, first  # the three WordPiece models' split, and e5's
    wordpiece = first[first["tokens"] == "x ##yl ##op ##hri ##x"].iloc[0]
    assert wordpiece["models"] == "MiniLM-L6, MiniLM-L6 int8 (ONNX), MiniLM-L3 (ONNX)"
    assert wordpiece["max_tokens"] == "256: MiniLM-L6, MiniLM-L6 int8 (ONNX) · 128: MiniLM-L3 (ONNX)"
    assert len(table) == len(table[["line", "tokens"]].drop_duplicates()) < 4 * 5  # one row per line and split
