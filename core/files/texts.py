"""Reading a file of texts, one per row (a retrieval corpus, a queries file), by the pairs files' rules.

The bytes are decoded by :func:`core.files.decoding.decode_bytes`, delimited
text is read by pandas with the pairs reader's delimiter sniffing (no
128 KiB field limit), and JSON by :mod:`core.files.json_records` (nesting too
deep for the parser, lone surrogates, wrapper objects).  The format comes
from the suffix: ``.txt`` is one text per line even when a line starts with
``[`` or ``{``; ``.csv``/``.tsv`` a header and a text column; ``.json``/``.jsonl``
strings or objects with a text field.  A value that is not a string (null,
a number, a boolean, an object, an array) is never scored as its printed
form: it is dropped, and a note names the rows.  Every message names the file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants
from core.files.decoding import decode_bytes
from core.files.errors import PairsFileError
from core.files.json_records import _kind, clean_text, parse_json_records, parse_json_values, row_listing
from core.files.reader import _check_size, _os_error_message, _sniff
from core.messages import first_line

# The column or field a retrieval corpus or queries file holds its texts in, most likely first (a one-column file needs none).
TEXT_COLUMNS = {
    "corpus": ("text", "passage", "document", "doc", "content", "sentence", "text_b"),
    "queries": ("query", "question", "text", "q", "sentence", "text_a"),
}
_JSON_SUFFIXES = (".json", ".jsonl")
_DELIMITED_SUFFIXES = (".csv", ".tsv")


@dataclass(frozen=True)
class TextList:
    """The texts of a file, in file order.

    Attributes:
        texts: distinct, non-empty texts, whitespace runs collapsed.
        encoding: the codec that decoded the bytes.
        notes: what reading dropped or changed, each naming the file.
    """

    texts: list[str]
    encoding: str
    notes: list[str] = field(default_factory=list)


def _column(columns: list[str], guesses: Sequence[str], what: str, name: str) -> str:
    if len(columns) == 1:
        return columns[0]
    lower = {c.lower(): c for c in columns}
    found = next((lower[g] for g in guesses if g in lower), None)
    if found is None:
        raise PairsFileError(f"{what} file {name} has columns {columns}; name the text column {guesses[0]!r} or give a one-column file")
    return found


def _json_texts(text: str, guesses: Sequence[str], what: str, name: str, notes: list[str]) -> list[str]:
    values = parse_json_values(text)
    if values and all(isinstance(v, Mapping) for v in values):
        records = parse_json_records(text)
        notes += records.notes
        column = _column(list(records.frame.columns), guesses, what, name)
        if column in records.nested:
            raise PairsFileError(f"{what} file {name}: field {column!r} holds JSON objects or arrays, not text, in {row_listing(records.nested[column])}")
        dropped = records.non_text.get(column, [])
        if dropped:
            notes.append(f"dropped {row_listing(dropped)}: its {column!r} is a number or a boolean, not a text")
        skip = set(dropped)
        return [t for i, t in enumerate(records.frame[column], start=1) if i not in skip]
    texts, replaced, not_text = [], [], []
    for i, value in enumerate(values, start=1):
        if isinstance(value, str):
            cleaned, changed = clean_text(value)
            texts.append(cleaned)
            if changed:
                replaced.append(i)
        else:
            not_text.append((i, _kind(value)))
    if not_text:
        kinds = sorted({k for _, k in not_text})
        notes.append(f"dropped {row_listing([i for i, _ in not_text])}: {' or '.join(kinds)}, not a text")
    if replaced:
        notes.append(f"{row_listing(replaced)} held \\ud800-style escapes (half of a character, not valid Unicode): each was read as U+FFFD (\ufffd)")
    return texts


def _delimited_texts(text: str, suffix: str, guesses: Sequence[str], what: str, name: str) -> list[str]:
    delimiter = _sniff(text, suffix)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, skip_blank_lines=True)
    except (pd.errors.ParserError, csv.Error) as exc:
        raise PairsFileError(f"{what} file {name} cannot be read as delimited text: {first_line(exc)}") from exc
    except pd.errors.EmptyDataError:
        return []
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = columns
    return list(frame[_column(columns, guesses, what, name)])


def parse_texts(
    data: bytes,
    name: str,
    guesses: Sequence[str],
    *,
    what: str = "text",
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
    encoding: str | None = None,
) -> TextList:
    """The texts of a file's bytes (the rules of the module docstring).

    Args:
        data: the file's bytes.
        name: its file name; the suffix picks the format and messages name it.
        guesses: names of the text column or JSON field, most likely first
            (``TEXT_COLUMNS[what]`` for a corpus or queries file).
        what: what the file is (``corpus``, ``queries``), for messages.
        max_rows: refuse files with more texts than this.
        max_mb: refuse larger files.
        encoding: the file's codec, or None to detect it.

    Returns:
        A :class:`TextList`; empty rows and repeats are dropped with a note.

    Raises:
        PairsFileError: empty, binary, invalid or too deeply nested JSON, no
            text column, a column of objects, no text, or too many texts.
    """
    try:
        _check_size(len(data), max_mb)
        decoded = decode_bytes(bytes(data), encoding)
    except PairsFileError as exc:
        raise PairsFileError(f"{what} file {name}: {exc}") from exc
    text, suffix = decoded.text, Path(name).suffix.lower()
    notes = list(decoded.notes)
    if suffix in _JSON_SUFFIXES or (suffix not in (".txt", *_DELIMITED_SUFFIXES) and text.lstrip().startswith(("{", "["))):
        try:
            raw = _json_texts(text, guesses, what, name, notes)
        except PairsFileError as exc:
            raise PairsFileError(exc.args[0] if str(exc).startswith(f"{what} file {name}") else f"{what} file {name}: {exc}") from exc
    elif suffix in _DELIMITED_SUFFIXES:
        raw = _delimited_texts(text, suffix, guesses, what, name)
    else:
        raw = text.splitlines()
    cleaned = [" ".join(t.split()) for t in raw]
    kept = [t for t in cleaned if t]
    if len(kept) < len(cleaned):
        notes.append(f"dropped {len(cleaned) - len(kept)} empty row(s)")
    unique = list(dict.fromkeys(kept))
    if len(unique) < len(kept):
        notes.append(f"removed {len(kept) - len(unique)} repeated text(s)")
    if not unique:
        raise PairsFileError(f"{what} file {name} holds no text")
    if len(unique) > max_rows:
        raise PairsFileError(f"{what} file {name} has {len(unique):,} texts; the limit is {max_rows:,}")
    return TextList(unique, decoded.encoding, [f"{name}: {n}" for n in notes])


def read_texts(path: str | Path, guesses: Sequence[str], *, what: str = "text", max_rows: int = constants.MAX_UPLOAD_ROWS,
               max_mb: float = constants.MAX_UPLOAD_MB) -> TextList:
    """A file of texts on disk (the rules of :func:`parse_texts`); the size is checked before reading.

    Raises:
        PairsFileError: unreadable, or as :func:`parse_texts`.
    """
    path = Path(path).expanduser()
    data = read_file_bytes(path, max_mb, f"{what} file {path}")
    return parse_texts(data, path.name, guesses, what=what, max_rows=max_rows, max_mb=max_mb)


def read_file_bytes(path: Path, max_mb: float, label: str) -> bytes:
    """A user's file's bytes, its size checked before reading; every failure a :class:`PairsFileError` led by ``label``."""
    try:
        _check_size(path.stat().st_size, max_mb)
        return path.read_bytes()
    except OSError as exc:
        raise PairsFileError(f"{label}: {_os_error_message(path, exc)}") from exc
    except PairsFileError as exc:
        raise PairsFileError(f"{label}: {exc}") from exc
