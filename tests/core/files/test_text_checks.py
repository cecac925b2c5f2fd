"""Checking typed text before it is scored: what is refused, what is cleaned, what is said."""

from __future__ import annotations

import pytest

from core.files.text_checks import check_lines, check_text, describe_char, unknown_token_note


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "Sentence A is empty: type a sentence to compare."),
        (None, "Sentence A is empty: type a sentence to compare."),
        ("   \t  ", "Sentence A holds only whitespace: type a sentence to compare."),
        ("\u00a0\u3000", "Sentence A holds only whitespace: type a sentence to compare."),
        ("\n\n\r\n", "Sentence A holds only line breaks: type a sentence to compare."),
        (" \n ", "Sentence A holds only whitespace: type a sentence to compare."),
    ],
    ids=["empty", "none", "spaces-tabs", "unicode-spaces", "newlines", "mixed"],
)
def test_texts_with_nothing_in_them_are_refused_with_their_reason(text, expected):
    check = check_text(text, "Sentence A")
    assert not check.ok
    assert check.problem == expected
    assert check.notes == ()


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("\u200b", "U+200B ZERO WIDTH SPACE"),
        ("\x00\x1b", "U+0000, U+001B"),
        (" \u200d\x07 \u2060", "U+200D ZERO WIDTH JOINER, U+0007, U+2060 WORD JOINER"),
    ],
)
def test_only_invisible_characters_are_refused_and_named(text, listed):
    check = check_text(text, "Sentence B")
    assert not check.ok
    assert check.problem.startswith("Sentence B holds only invisible characters")
    assert f"({listed})" in check.problem


def test_control_characters_are_removed_and_counted():
    check = check_text("The\x00 patient\x1b is ill\x7f", "Sentence A")
    assert check.ok
    assert check.text == "The\x00 patient\x1b is ill\x7f"  # what was typed is kept
    assert check.cleaned == "The patient is ill"
    assert check.notes == (
        "Sentence A: removed 3 control characters (U+0000, U+001B, U+007F) before scoring; "
        "they carry no meaning in a sentence. What you typed is left as it was.",
    )


def test_tabs_and_newlines_are_not_control_characters_here():
    check = check_text("line one\tcolumn\nline two\r\n", "Sentence A")
    assert check.ok and check.notes == ()
    assert check.cleaned == check.text


def test_zero_width_characters_are_kept_and_noted():
    text = "pen\u200bicillin \u200fallergy"
    check = check_text(text, "Sentence A")
    assert check.ok
    assert check.cleaned == text
    (note,) = check.notes
    assert note.startswith(
        "Sentence A contains 2 invisible characters (U+200B ZERO WIDTH SPACE, U+200F RIGHT-TO-LEFT MARK), scored as typed"
    )


def test_many_distinct_characters_are_listed_up_to_five():
    text = "x" + "".join(chr(c) for c in range(1, 9))
    (note,) = check_text(text, "Sentence A").notes
    assert "removed 8 control characters" in note
    assert "U+0005, and 3 more" in note


def test_decomposed_letters_are_noted_and_scored_as_typed():
    decomposed = "cafe\u0301 cre\u0300me"
    check = check_text(decomposed, "Sentence B")
    assert check.ok and check.cleaned == decomposed
    assert any("combining mark" in n and "not Unicode NFC" in n for n in check.notes)
    assert check_text("café crème", "Sentence B").notes == ()


@pytest.mark.parametrize(
    "text",
    ["I 😀 this 🎉", "你好，世界", "مرحبا بالعالم", "שלום עולם", "<script>alert(1)</script>", "**bold** # heading [link](http://x)"],
    ids=["emoji", "cjk", "arabic", "hebrew", "script-tag", "markdown"],
)
def test_ordinary_text_in_any_script_passes_untouched(text):
    check = check_text(text, "Sentence A")
    assert (check.ok, check.cleaned, check.notes) == (True, text, ())


def test_twenty_thousand_characters_pass_untouched():
    text = ("The patient is allergic to penicillin. " * 600)[:20_000]
    check = check_text(text, "Sentence A")
    assert check.ok and check.cleaned == text and len(check.cleaned) == 20_000


def test_check_lines_skips_blank_and_invisible_lines_and_cleans_the_rest():
    sentences, notes = check_lines("First one\n\n\u200b\u200b\n  Second\x00 one  \n\t\nThird")
    assert sentences == ["First one", "Second one", "Third"]
    assert notes == [
        "Line 3 holds only invisible characters (U+200B ZERO WIDTH SPACE), nothing a model could read: skipped.",
        "Line 4: removed 1 control character (U+0000) before scoring; they carry no meaning in a sentence. What you typed is left as it "
        "was.",
    ]
    assert check_lines("") == ([], [])
    assert check_lines(None) == ([], [])


def test_describe_char():
    assert describe_char("\u200b") == "U+200B ZERO WIDTH SPACE"
    assert describe_char("\x1b") == "U+001B"
    assert describe_char("😀") == "U+1F600 GRINNING FACE"


def test_unknown_token_note():
    assert unknown_token_note("MiniLM-L6", "Sentence A", 0, 7) is None
    note = unknown_token_note("MiniLM-L6", "Sentence A", 2, 7)
    assert note.startswith("MiniLM-L6: 2 of 7 tokens of Sentence A are [UNK]")
    assert "same token" in note
