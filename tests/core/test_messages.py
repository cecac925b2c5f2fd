"""One-line errors: the first line of an exception's message, cut, with a fallback for a blank one."""

from __future__ import annotations

from core.messages import first_line, typed_first_line


def test_first_line_is_the_first_line_of_the_stripped_message():
    exc = ValueError("\n  bad value here\nsecond line\n")
    assert first_line(exc) == "bad value here"
    assert first_line(exc, 3) == "bad"
    assert first_line(ValueError("x" * 500), 300) == "x" * 300


def test_a_blank_message_gives_the_type_or_the_fallback():
    assert first_line(OSError()) == "OSError"
    assert first_line(RuntimeError("   \n "), fallback="") == ""
    assert typed_first_line(RuntimeError("")) == "RuntimeError: "


def test_typed_first_line_names_the_type_and_cuts_the_line():
    assert typed_first_line(ValueError("no such file\ntraceback noise")) == "ValueError: no such file"
    assert typed_first_line(ValueError("y" * 400)) == "ValueError: " + "y" * 300
    assert typed_first_line(ValueError("abcdef"), limit=2) == "ValueError: ab"
