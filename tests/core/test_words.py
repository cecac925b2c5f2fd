"""The four word cutters of core.words, each against hand-written expectations."""

from __future__ import annotations

import pytest

from core import words
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


# ---------------------------------------------------------------- The words that differ, marked


@pytest.mark.parametrize(
    ("a", "b", "summary"),
    [
        ("The patient is allergic to penicillin.", "The patient is not allergic to penicillin.", "+ not"),
        ("Take 5 mg daily.", "Take 50 mg daily.", "5 → 50"),
        ("The landlord sued the tenant.", "The tenant sued the landlord.", "landlord → tenant; tenant → landlord"),
        ("It will rain.", "It might possibly rain.", "will → might possibly"),
        ("He is not here.", "He is here.", "− not"),
        ("Same text.", "same TEXT.", "(no change)"),
    ],
)
def test_change_summary_names_only_the_words_that_differ(a, b, summary):
    assert words.change_summary(a, b) == summary


def test_word_changes_join_back_and_mark_only_the_change():
    a, b = "The patient is allergic to penicillin.", "The patient is not  allergic to penicillin."
    tokens_a, tokens_b = words.word_changes(a, b)
    assert "".join(t for t, _ in tokens_a) == a and "".join(t for t, _ in tokens_b) == b
    assert [t for t, changed in tokens_a if changed] == []
    assert [t for t, changed in tokens_b if changed] == ["not"]
    # a run of changed words keeps the space between them, so it reads as one phrase
    _, swapped = words.word_changes("It will rain.", "It might possibly rain.")
    assert "".join(t for t, changed in swapped if changed) == "might possibly"


def test_change_summary_is_cut_and_checks_its_limit():
    long_a, long_b = " ".join(f"a{i}" for i in range(60)), " ".join(f"b{i}" for i in range(60))
    line = words.change_summary(long_a, long_b, limit=40)
    assert len(line) == 40 and line.endswith("…")
    with pytest.raises(ValueError, match="at least 10"):
        words.change_summary("a", "b", limit=3)
    with pytest.raises(TypeError):
        words.word_changes(None, "b")  # type: ignore[arg-type]
