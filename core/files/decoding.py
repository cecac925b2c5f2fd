"""Turning a pairs file's bytes into text, and saying what that took.

Detection, in order: empty, zip (Excel), UTF-16 by BOM or by its zero
bytes, binary (NUL), UTF-8.  A file that is UTF-8 but for a few bytes stays
UTF-8: the bad bytes become U+FFFD and a note names their lines, because
reading the whole file as Latin-1 instead would turn every accented letter
into mojibake ("Naïve" -> "NaÃ¯ve") and change every cosine without a word.
Only a file with more bad sequences than valid non-ASCII characters (a
Latin-1 or cp1252 export) is read as Latin-1.  A caller that knows the
encoding names it and no guess is made.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from core.files.errors import PairsFileError

REPLACEMENT = "\ufffd"
_UTF8_REPLACEMENT = REPLACEMENT.encode("utf-8")
_MAX_LINES_LISTED = 10
ENCODING_HINT = "if the file is not UTF-8, choose its encoding (the File encoding box on the page, --encoding on the command line)"


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was obtained.

    Attributes:
        text: the decoded text.
        encoding: the codec used (``utf-8``, ``utf-16``, ``latin-1``, or the one asked for).
        notes: what the user should know (another encoding, replaced bytes).
    """

    text: str
    encoding: str
    notes: tuple[str, ...] = ()


def _line_listing(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:_MAX_LINES_LISTED])
    more = len(numbers) - _MAX_LINES_LISTED
    word = "line" if len(numbers) == 1 else "lines"
    return f"{word} {shown}, and {more} more" if more > 0 else f"{word} {shown}"


def replaced_lines(text: str) -> list[int]:
    """1-based numbers of the lines of ``text`` holding U+FFFD."""
    return [n for n, line in enumerate(text.split("\n"), start=1) if REPLACEMENT in line]


def _replaced_note(text: str, n_bad: int, encoding: str) -> str:
    return (
        f"{n_bad} byte sequence(s) on {_line_listing(replaced_lines(text))} are not valid {encoding}: "
        f"each was read as U+FFFD ({REPLACEMENT}); {ENCODING_HINT}"
    )


def _check_not_binary(text: str) -> None:
    if "\x00" in text[:4096]:
        raise PairsFileError("the file is binary, not text; upload a CSV, TSV or JSONL file")


def _decode_as(data: bytes, encoding: str) -> Decoded:
    """Decode with the codec the user named; undecodable bytes become U+FFFD, with a note."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError as exc:
        raise PairsFileError(f"unknown encoding {encoding!r}; use a name such as utf-8, latin-1, cp1252 or utf-16") from exc
    codec = "utf-8-sig" if name == "utf-8" else name
    try:
        text = data.decode(codec)
        n_bad = 0
    except UnicodeDecodeError:
        text = data.decode(codec, errors="replace")
        n_bad = max(1, text.count(REPLACEMENT) - data.count(_UTF8_REPLACEMENT) if name == "utf-8" else text.count(REPLACEMENT))
    if not name.startswith(("utf-16", "utf-32")):
        _check_not_binary(text)
    notes = [] if name == "utf-8" else [f"decoded as {name}"]
    if n_bad:
        notes.append(_replaced_note(text, n_bad, name))
    return Decoded(text, name, tuple(notes))


def _utf8_or_latin1(data: bytes) -> Decoded:
    """UTF-8 with U+FFFD for a few bad bytes, or Latin-1 when bad sequences outnumber valid non-ASCII characters."""
    try:
        return Decoded(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8-sig", errors="replace")
    n_bad = text.count(REPLACEMENT) - data.count(_UTF8_REPLACEMENT)
    non_ascii = len(text) - len(text.encode("ascii", errors="ignore")) - text.count(REPLACEMENT)
    if non_ascii >= n_bad:
        return Decoded(text, "utf-8", (_replaced_note(text, n_bad, "UTF-8"),))
    return Decoded(data.decode("latin-1"), "latin-1", ("decoded as latin-1",))


def decode_bytes(data: bytes, encoding: str | None = None) -> Decoded:
    """Decode a pairs file's bytes.

    Args:
        data: the file's bytes.
        encoding: a codec name the user chose, or None to detect.

    Returns:
        The text, the encoding used and notes for the user.

    Raises:
        PairsFileError: empty, a zip/Excel file, binary, or an unknown
            encoding name.
    """
    if not data.strip():
        raise PairsFileError("the file is empty")
    if data[:4] == b"PK\x03\x04":
        raise PairsFileError("this looks like an Excel or zip file; save it as CSV (UTF-8) and upload that")
    if encoding:
        return _decode_as(data, encoding)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return Decoded(data.decode("utf-16", errors="replace"), "utf-16", ("decoded as utf-16",))
    sample = data[:4096]
    zeros_odd, zeros_even = sample[1::2].count(0), sample[0::2].count(0)
    if zeros_even == 0 and zeros_odd > len(sample) // 4:
        return Decoded(data.decode("utf-16-le", errors="replace"), "utf-16-le", ("decoded as utf-16-le",))
    if zeros_odd == 0 and zeros_even > len(sample) // 4:
        return Decoded(data.decode("utf-16-be", errors="replace"), "utf-16-be", ("decoded as utf-16-be",))
    if b"\x00" in sample:
        # NUL never occurs in text files other than UTF-16, whose BOM was handled above.
        raise PairsFileError("the file is binary, not text; upload a CSV, TSV or JSONL file")
    return _utf8_or_latin1(data)
