"""The Invented words page through the real app with MiniLM (the default model in tests/conftest.py)."""

from __future__ import annotations

import re

import pytest
from apptest_support import assert_leads_with, open_page, table_with

from core import constants
from core.models.cache import EmbeddingCache
from core.models.loading import load_tokenizer
from core.models.tokens import is_vocab_entry, word_pieces
from core.papers.suites import read_suite_file
from core.probes.invented import invented_findings, oov_replacements, oov_replicate_summary
from core.scoring.runner import run_pairs

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
PAGE = "views/invented.py"


@pytest.fixture(scope="module")
def at():
    return open_page(PAGE)


def _frame(app, column):
    return table_with(app, column, last=False)


def test_words_have_requested_pieces_and_are_not_vocabulary(at):
    at.selectbox(key="iw_pieces").set_value(3).run()
    at.number_input(key="iw_n").set_value(6).run()
    words = _frame(at, "pieces")
    tok = load_tokenizer(MINILM)
    assert len(words) == 12 and set(words[constants.COL_KIND]) == set(constants.WORD_KINDS)
    for word, pieces in zip(words["word"], words["pieces"], strict=True):
        assert word_pieces(tok, word) == pieces.split(" ")
        assert len(pieces.split(" ")) == 3
        assert not is_vocab_entry(tok, word) and not is_vocab_entry(tok, word.lower())
    at.selectbox(key="iw_pieces").set_value("any").run()


def test_empty_entity_is_a_message_not_a_traceback(at):
    at.selectbox(key="iw_kind").set_value(constants.WORD_RANDOM).run()
    at.text_input(key="iw_entity").set_value("").run()
    assert not at.exception
    assert any("Type the entity" in w.value for w in at.warning)
    at.text_input(key="iw_entity").set_value("Penicillin").run()
    at.selectbox(key="iw_kind").set_value("both").run()


def test_words_in_a_sentence_are_scored(at):
    at.text_area(key="iw_sentence").set_value("The patient is allergic to Penicillin.").run()
    next(b for b in at.button if b.label == "Score the sentence with each word").click().run()
    assert not at.exception
    # In words a user uses: one row per word with every model's cosine, no column named "text b" (a bare table before).
    scored = _frame(at, "invented word")
    words = set(_frame(at, "pieces")["word"])
    assert set(scored["invented word"]) == words and len(scored) == len(words)
    assert not {constants.COL_TEXT_B, constants.COL_REPLACEMENT, constants.COL_COSINE} & set(scored.columns)
    assert all(w in t for w, t in zip(scored["invented word"], scored["your sentence with the word"], strict=True))
    cosines = scored["cosine, MiniLM-L6"]
    assert ((cosines > 0) & (cosines < 1)).all() and list(cosines) == sorted(cosines)  # the word that moved it most first
    assert any(md.value.startswith(f"{scored['invented word'].iloc[0]} moves your sentence most") for md in at.markdown)


def test_sentence_without_the_entity_says_so(at):
    at.text_area(key="iw_sentence").set_value("Nothing to replace here.").run()
    next(b for b in at.button if b.label == "Score the sentence with each word").click().run()
    assert not at.exception
    assert any("not a whole word" in e.value for e in at.error)
    assert at.text_area(key="iw_sentence").value == "Nothing to replace here."


def test_the_k_words_run_says_its_expected_time_before_the_click(at):
    """Its run encodes 20 × k × kinds new sentences, and the page said nothing of how long until it had run."""
    at.slider(key="iw_k").set_value(2).run()
    assert not at.exception
    said = [c.value for c in at.caption if c.value.startswith("⏱️ Expected time:")]
    assert len(said) == 1, said
    # At most 2 words × 2 kinds × 20 entities in the second sentence and the 20 originals twice; the test processes share
    # one cache folder, so a file that ran before this one may have encoded some of them already (72 in a CI run)
    to_encode = int(re.search(r"\((\d+) by MiniLM\\-L6 still to encode", said[0]).group(1))
    assert 0 < to_encode <= 120, said
    label = at.button(key="iw_run").label
    assert label.startswith("Run OOV with invented words (") and label.endswith(")") and "cached" not in label, label


def test_oov_with_k_words_matches_core(at):
    at.slider(key="iw_k").set_value(2).run()
    at.button(key="iw_run").click().run()
    assert not at.exception
    versus = _frame(at, "mean_plausible")
    # The page opens on the same reading as OOV robustness (second sentence only), named beside every figure
    assert at.radio(key="iw_reading").value == constants.OOV_DEFAULT_READING == constants.VARIANT_REPLACED_B
    assert sum(c.value == f"Reading: {constants.OOV_READINGS[constants.VARIANT_REPLACED_B]}." for c in at.caption) == 2
    pairs = oov_replacements(read_suite_file(constants.SUITE_OOV), load_tokenizer(MINILM), 2, readings=[constants.VARIANT_REPLACED_B])
    summary = oov_replicate_summary(run_pairs(pairs, [MINILM], cache=EmbeddingCache()).results)
    expected = summary["plausible_vs_random"]
    assert versus["difference"].iloc[0] == pytest.approx(expected["difference"].iloc[0], abs=1e-6)
    assert versus["n_entities"].iloc[0] == 20
    # The reading is shown in words and the raw code column stays off the screen.
    proto = next(d.proto for d in at.dataframe if "mean_plausible" in d.value.columns)
    assert "reading" not in list(proto.column_order) and "reading_label" in list(proto.column_order)
    assert versus["reading_label"].iloc[0] == "second sentence only"
    # The run's finding in words leads the page, above the generator's word table and every chart
    sentences = invented_findings(summary["by_model"], expected, constants.OOV_READINGS[constants.VARIANT_REPLACED_B])
    by_kind = summary["by_model"].set_index(constants.COL_KIND)["mean_delta"]
    assert sentences[0] == (
        "With the entity replaced in the second sentence only, invented words lower the cosine on average by: "
        f"MiniLM-L6 {by_kind['plausible']:.2f} (plausible) and {by_kind['random']:.2f} (random)."
    )
    assert_leads_with(at, sentences)


def test_cli_and_page_print_the_same_oov_figure_by_default(at, cli):
    """One OOV reading in core, so ``oov-words --run`` with no ``--reading`` and the page's default agree."""
    import json

    at.radio(key="iw_reading").set_value(constants.OOV_DEFAULT_READING).run()
    at.slider(key="iw_k").set_value(2).run()
    at.button(key="iw_run").click().run()
    assert not at.exception
    page = _frame(at, "mean_plausible").iloc[0]
    code, out, err = cli("oov-words", "--run", "--k", "2", "--models", MINILM, "--quiet", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["reading"] == constants.OOV_DEFAULT_READING == constants.VARIANT_REPLACED_B
    versus = doc["tables"]["plausible_vs_random"][0]
    for column in ("mean_plausible", "mean_random", "difference"):
        assert versus[column] == pytest.approx(page[column], abs=1e-9), column
