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

:func:`unreadable_rows` and :func:`dropped_notes` are that rule for one
column of any file of texts (a corpus, queries, a triples file's anchors,
positives and negatives, a BEIR corpus or queries file): a number or a
boolean, an empty value (null, ``""``, whitespace) and a value of only
invisible or control characters (the typed-text rule of
:mod:`core.files.text_checks`) take no part, and one note per reason names
the rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants
from core.files.decoding import decode_bytes
from core.files.errors import PairsFileError
from core.files.json_records import _kind, clean_text, parse_json_records, parse_json_values, row_listing
from core.files.reader import _check_size, _os_error_message, _sniff
from core.files.text_checks import unusable_reason
from core.messages import first_line
from core.words import passage_key

# The column or field a retrieval corpus or queries file holds its texts in, most likely first (a one-column file needs none).
TEXT_COLUMNS = {
    "corpus": ("text", "passage", "document", "doc", "content", "sentence", "text_b"),
    "queries": ("query", "question", "text", "q", "sentence", "text_a"),
}
_JSON_SUFFIXES = (".json", ".jsonl")
_DELIMITED_SUFFIXES = (".csv", ".tsv")


# Why a value takes no part, in the order notes give them.
NOT_TEXT, EMPTY, INVISIBLE = "not text", "empty", "invisible"
_WHY = {
    NOT_TEXT: "dropped {n} {unit}(s){of} holding a number or a boolean, not a text ({listing})",
    EMPTY: "dropped {n} empty {unit}(s){of} ({listing})",
    INVISIBLE: "dropped {n} {unit}(s){of} holding only invisible or control characters, nothing a model could read ({listing})",
}


def unreadable_rows(values: Iterable[str], non_text: Iterable[int] = (), *, numbers: Sequence[int] | None = None) -> dict[str, list[int]]:
    """The rows of one column that take no part, by reason (:data:`NOT_TEXT`, :data:`EMPTY`, :data:`INVISIBLE`).

    Args:
        values: the column's values as read (null as ``""``, numbers as their printed form).
        non_text: 1-based positions in ``values`` whose JSON value was a number or a boolean
            (``JsonRecords.non_text``).
        numbers: the row or line number of each value, for messages; default 1, 2, ….

    Returns:
        Reason -> row numbers, only reasons that occur; every other row holds a text to score.
    """
    flagged = set(non_text)
    out: dict[str, list[int]] = {}
    for i, value in enumerate(values, start=1):
        reason = NOT_TEXT if i in flagged else EMPTY if not value or value.isspace() else INVISIBLE if unusable_reason(value) else None
        if reason is not None:
            out.setdefault(reason, []).append(numbers[i - 1] if numbers is not None else i)
    return out


def dropped_notes(rows: Mapping[str, list[int]], column: str | None = None, unit: str = "row", where: str = "row") -> list[str]:
    """One note per reason :func:`unreadable_rows` found, naming the column and the rows.

    Args:
        rows: what :func:`unreadable_rows` returned.
        column: the column or field, or None for a file of bare texts.
        unit: what was dropped ("row", "negative cell", "passage", "query").
        where: what the numbers count ("row", or "line" for a JSON Lines file read line by line).
    """
    of = f" of {column!r}" if column else ""
    notes = []
    for reason, template in _WHY.items():
        found = sorted(rows.get(reason, []))
        if found:
            listing = row_listing(found)
            if where != "row":
                listing = where + listing[3:] if len(found) == 1 else f"{where}s" + listing[4:]
            notes.append(template.format(n=len(found), unit=unit, of=of, listing=listing))
    return notes


def merge_rows(into: dict[str, list[int]], rows: Mapping[str, list[int]]) -> dict[str, list[int]]:
    """``into`` with ``rows`` added, reason by reason (a file read in chunks says each reason once)."""
    for reason, found in rows.items():
        into.setdefault(reason, []).extend(found)
    return into


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


def _json_texts(text: str, guesses: Sequence[str], what: str, name: str, notes: list[str]) -> tuple[list[str], list[int], str | None]:
    """The values of a JSON file of texts, the positions of those that were numbers or booleans, and the field read.

    The field read is None for plain values.
    """
    values = parse_json_values(text)
    if values and all(isinstance(v, Mapping) for v in values):
        records = parse_json_records(text)
        notes += records.notes
        column = _column(list(records.frame.columns), guesses, what, name)
        if column in records.nested:
            raise PairsFileError(
                f"{what} file {name}: field {column!r} holds JSON objects or arrays, not text, in {row_listing(records.nested[column])}"
            )
        return list(records.frame[column]), records.non_text.get(column, []), column
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
        notes.append(
            f"{row_listing(replaced)} held \\ud800-style escapes (half of a character, not valid Unicode): each was read as U+FFFD (\ufffd)"
        )
    return texts, [], None


def _delimited_texts(text: str, suffix: str, guesses: Sequence[str], what: str, name: str) -> tuple[list[str], str | None]:
    delimiter = _sniff(text, suffix)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, skip_blank_lines=True)
    except (pd.errors.ParserError, csv.Error) as exc:
        raise PairsFileError(f"{what} file {name} cannot be read as delimited text: {first_line(exc)}") from exc
    except pd.errors.EmptyDataError:
        return [], None
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = columns
    column = _column(columns, guesses, what, name)
    return list(frame[column]), column


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
    non_text: list[int] = []
    column: str | None = None
    if suffix in _JSON_SUFFIXES or (suffix not in (".txt", *_DELIMITED_SUFFIXES) and text.lstrip().startswith(("{", "["))):
        try:
            raw, non_text, column = _json_texts(text, guesses, what, name, notes)
        except PairsFileError as exc:
            raise PairsFileError(exc.args[0] if str(exc).startswith(f"{what} file {name}") else f"{what} file {name}: {exc}") from exc
    elif suffix in _DELIMITED_SUFFIXES:
        raw, column = _delimited_texts(text, suffix, guesses, what, name)
    else:
        raw = text.splitlines()
    cleaned = [passage_key(t) for t in raw]
    dropped = unreadable_rows(cleaned, non_text)
    notes += dropped_notes(dropped, column)
    skip = {r for rows in dropped.values() for r in rows}
    kept = [t for i, t in enumerate(cleaned, start=1) if i not in skip]
    unique = list(dict.fromkeys(kept))
    if len(unique) < len(kept):
        notes.append(f"removed {len(kept) - len(unique)} repeated text(s)")
    if not unique:
        raise PairsFileError(f"{what} file {name} holds no text")
    if len(unique) > max_rows:
        raise PairsFileError(f"{what} file {name} has {len(unique):,} texts; the limit is {max_rows:,}")
    return TextList(unique, decoded.encoding, [f"{name}: {n}" for n in notes])


def read_texts(
    path: str | Path,
    guesses: Sequence[str],
    *,
    what: str = "text",
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
) -> TextList:
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
