"""The four word cutters of core.words, each against hand-written expectations."""

from __future__ import annotations

import pytest

from core.words import overlap_words, pretokenizer_words, rule_words, surface_tokens


def test_overlap_words():
    text = "Don\u2019t take 500mg, v1.5 \u2014 NOW! The patient's_id"
    assert overlap_words(text) == ["don't", "take", "500mg", "v1", "5", "now", "the", "patient's_id"]
    assert overlap_words("") == []
    assert overlap_words("?! --") == []


def test_rule_words_split_contractions_and_keep_units():
    assert rule_words("Don't take 5mg.") == ["do", "n't", "take", "5mg"]
    # can't / won't stay whole; units and separators stay on their number
    assert rule_words("We can't pay $3.2m at 10:30 (1,200 total)!") == ["we", "can't", "pay", "$3.2m", "at", "10:30", "1,200", "total"]
    assert rule_words("") == []


def test_pretokenizer_words():
    assert pretokenizer_words("Don't take 5mg, O'Brien!") == ["Don't", "take", "5mg", ",", "O'Brien", "!"]
    assert pretokenizer_words("") == []


@pytest.mark.parametrize("text", ["Take 2.5 mg, daily.", "  two  spaces\tand a tab\n", "1,200 (40%) — ok", ""])
def test_surface_tokens_join_back(text):
    assert "".join(surface_tokens(text)) == text


def test_surface_tokens_keep_numbers_whole():
    assert surface_tokens("Take 2.5 mg, daily.") == ["Take", " ", "2.5", " ", "mg", ",", " ", "daily", "."]
    assert surface_tokens("40% of 1,200") == ["40%", " ", "of", " ", "1,200"]


@pytest.mark.parametrize("cut", [overlap_words, rule_words, pretokenizer_words, surface_tokens])
def test_non_string_is_a_type_error(cut):
    with pytest.raises(TypeError, match="must be a string"):
        cut(None)  # type: ignore[arg-type]
