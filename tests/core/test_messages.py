"""One-line errors: the first line of an exception's message, cut, with a fallback for a blank one."""

from __future__ import annotations

import pytest

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


# ------------------------------------------------------------------ the one redaction
from core.messages import REDACTED, redact, register_secret  # noqa: E402

KEY = "sk-msgcanary-4d7e1a9b0c3f"


def test_a_registered_key_is_removed_whole_halved_encoded_and_from_one_line_errors():
    register_secret(KEY)
    half = len(KEY) // 2
    for spelled in (KEY, KEY.upper(), KEY[:half], KEY[half:], "".join(f"%{b:02X}" for b in KEY.encode())):
        assert KEY[:half].lower() not in redact(f"echo {spelled}!").lower() and KEY[half:].lower() not in redact(f"echo {spelled}!").lower()
    exc = ValueError(f"could not convert string to float: 'Bearer {KEY}'")
    assert first_line(exc) == f"could not convert string to float: 'Bearer {REDACTED}'"
    # Cut after redacting: a 40-character cut inside the key leaves no piece of it.
    assert KEY[:10] not in first_line(ValueError("x" * 30 + KEY), 40)


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Authorization: Bearer abc.def-ghi_123", "abc.def-ghi_123"),
        ('{"authorization": "Basic dXNlcjpwYXNz"}', "dXNlcjpwYXNz"),
        ("retry at http://admin:pw-1234@proxy/v1", "pw-1234"),
        ("cannot reach http://user%3Apw-1234%40host/v1", "pw-1234"),
        ("see http%3A%2F%2Fadmin%3Apw-1234%40proxy%2Fv1", "pw-1234"),
        ("Incorrect API key provided: sk-proj-********************abcd.", "abcd"),
        ("an unregistered sk-live0123456789abcdef key", "sk-live0123456789abcdef"),
    ],
)
def test_tokens_url_credentials_and_masked_keys_are_removed_unregistered(text, gone):
    assert gone not in redact(text) and REDACTED in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "p < 0.001 ***",
        "***NOTE*** read this",
        "token counts are estimates",
        "authorization: pending approval",
        "http://127.0.0.1:8000/v1",
        "a basic sentence",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_terminal_safe_spells_out_controls_and_keeps_line_breaks_and_text():
    from core.messages import terminal_safe

    assert terminal_safe("a\x1b[31mb\x07c\x9bd") == "a\\x1b[31mb\\x07c\\x9bd"
    assert terminal_safe("line\tone\r\nline two é ✓") == "line\tone\r\nline two é ✓"


def test_counted_says_one_in_the_singular_and_every_other_count_in_the_plural():
    from core.messages import counted

    assert counted(1, "pair") == "1 pair"
    assert [counted(n, "pair") for n in (0, 2, 1200)] == ["0 pairs", "2 pairs", "1,200 pairs"]
    assert counted(1, "new text") == "1 new text" and counted(3, "entry", "entries") == "3 entries"
