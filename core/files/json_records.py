"""Reading JSON and JSON Lines pairs files into records, refusing what is not one.

A pairs file in JSON is a list of objects (``[{"text_a": …, "text_b": …}, …]``)
or one object per line (JSON Lines); a single object is one record.  An
object whose every value is an object is a table exported by pandas: records
keyed by id (``{"0": {"caption": …}, "1": {…}}``, ``orient="index"``, the keys
kept as an id column) or columns keyed by row (``{"caption": {"0": …}}``,
``orient="columns"``, told apart by which level's keys are row numbers).  Every
way a file can miss that ends in :class:`PairsFileError` saying what was
found and what is expected: a wrapper object (``{"pairs": [...]}``), an array
of strings, nesting too deep for the parser (``RecursionError``), invalid
JSON.  Values that are objects or arrays are kept as placeholders and their
rows remembered, so a column holding them is refused when it is used as
text.  A ``\\ud800`` escape (half of a UTF-16 pair, not a character) becomes
U+FFFD with a note: left as it is it cannot be encoded and crashes the
tokenizer later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from core.files.errors import PairsFileError

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_ROWS_LISTED = 10
_EXAMPLE = '{"text_a": "…", "text_b": "…"}'
_ROW_KEY = re.compile(r"-?\d+")
KEY_COLUMNS = ("id", "key", "_key")  # the column an object's keys go into: the first name its records do not use


@dataclass
class _Document:
    records: list
    notes: list[str] = field(default_factory=list)


@dataclass
class JsonRecords:
    """Records read from JSON text.

    Attributes:
        frame: one row per record, every value a string (objects and arrays
            as ``{…}`` / ``[…]`` placeholders).
        nested: column -> 1-based rows whose value is an object or array.
        notes: what the user should know (replaced surrogate escapes).
        non_text: column -> 1-based rows whose value is a number or a boolean
            (kept as its string; a reader of texts drops it).
    """

    frame: pd.DataFrame
    nested: dict[str, list[int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    non_text: dict[str, list[int]] = field(default_factory=dict)


def row_listing(rows: list[int]) -> str:
    """``row 3`` / ``rows 2, 5, and 4 more``."""
    shown = ", ".join(str(r) for r in rows[:_MAX_ROWS_LISTED])
    more = len(rows) - _MAX_ROWS_LISTED
    word = "row" if len(rows) == 1 else "rows"
    return f"{word} {shown}, and {more} more" if more > 0 else f"{word} {shown}"


def _kind(value: object) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _loads(text: str, where: str) -> object:
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise PairsFileError(
            f"{where} is nested too deeply for the JSON parser; a pairs file holds flat records such as {_EXAMPLE}"
        ) from exc


def _row_keys(keys: list[str]) -> bool:
    return bool(keys) and all(_ROW_KEY.fullmatch(k.strip()) for k in keys)


def _shown_keys(keys: list[str]) -> str:
    return ", ".join(repr(k) for k in keys[:3]) + (", …" if len(keys) > 3 else "")


def _object_of_records(doc: Mapping) -> _Document | None:
    """An object whose every value is an object, as records (see the module docstring); None for any other object."""
    if not doc or not all(isinstance(v, Mapping) for v in doc.values()):
        return None
    outer = [str(k) for k in doc]
    if len(outer) == 1 and not _row_keys(outer):
        return None  # {"text": {…}} is one record whose field holds an object, not a table of one record
    inner = list(dict.fromkeys(str(k) for v in doc.values() for k in v))
    scalars = all(not isinstance(x, Mapping | list) for v in doc.values() for x in v.values())
    if scalars and _row_keys(inner) and not _row_keys(outer):
        # {"caption": {"0": …, "1": …}, …}: columns keyed by row number (pandas' default orient).
        rows = [
            {str(col): values.get(row, values.get(int(row)) if row.lstrip("-").isdigit() else None) for col, values in doc.items()}
            for row in inner
        ]
        return _Document(
            rows,
            [f"the file is one JSON object of {len(outer)} column(s) keyed by row ({_shown_keys(inner)}): read as {len(rows)} record(s)"],
        )
    used = {str(k) for v in doc.values() for k in v}
    column = next((c for c in KEY_COLUMNS if c not in used), "_key")
    rows = [{column: str(k), **v} for k, v in doc.items()]
    return _Document(
        rows,
        [
            f"the file is one JSON object of {len(rows)} record(s) keyed by {_shown_keys(outer)}: read as records, "
            f"each key in column {column!r}"
        ],
    )


def _whole_document(stripped: str) -> _Document:
    """Records of a file that is one JSON document (an array or a single object)."""
    try:
        doc = _loads(stripped, "the JSON")
    except json.JSONDecodeError as exc:
        raise PairsFileError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from exc
    if isinstance(doc, list):
        return _Document(doc)
    if isinstance(doc, Mapping):
        keyed = _object_of_records(doc)
        if keyed is not None:
            return keyed
        wrapped = [k for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(r, Mapping) for r in v)]
        if wrapped:
            key = wrapped[0]
            raise PairsFileError(
                f"the file holds one JSON object with keys {', '.join(map(repr, list(doc)[:5]))}, and its {key!r} holds "
                f"{len(doc[key])} record(s); a pairs file is a list of records ([{_EXAMPLE}, …]) or one record per line (JSON Lines): "
                f"save the list under {key!r} on its own"
            )
        return _Document([doc])
    raise PairsFileError(f"the file holds {_kind(doc)}, not records; a pairs file is a list of objects such as [{_EXAMPLE}, …]")


def _json_lines(stripped: str) -> _Document:
    rows = []
    for n, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(_loads(line, f"line {n}"))
        except json.JSONDecodeError as exc:
            raise PairsFileError(f"line {n} is not valid JSON ({exc.msg})") from exc
        if not isinstance(rows[-1], Mapping):
            raise PairsFileError(
                f"line {n} holds {_kind(rows[-1])}, not an object; JSON Lines needs one object per line, such as {_EXAMPLE}"
            )
    return _Document(rows)


def _records(text: str) -> _Document:
    stripped = text.strip()
    if stripped.startswith("["):
        return _whole_document(stripped)
    if stripped.startswith("{") and "\n" in stripped:
        # JSON Lines when the first line is a whole object; otherwise one object pretty-printed over lines.
        try:
            _loads(stripped.split("\n", 1)[0], "line 1")
        except json.JSONDecodeError:
            return _whole_document(stripped)
        return _json_lines(stripped)
    if stripped.startswith("{"):
        return _whole_document(stripped)
    return _json_lines(stripped)


def _clean(value: object, row: int, replaced: list[int]) -> str | None:
    """A scalar as the string the frame holds; surrogates replaced (row noted)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    if _SURROGATE.search(text):
        replaced.append(row)
        text = _SURROGATE.sub("\ufffd", text)
    return text


def parse_json_records(text: str) -> JsonRecords:
    """Records of a JSON or JSON Lines pairs file.

    Args:
        text: the decoded file.

    Returns:
        A :class:`JsonRecords` with every value a string ('' for null).

    Raises:
        PairsFileError: invalid JSON, nesting too deep, no records, a record
            that is not an object, or a wrapper object around the records.
    """
    document = _records(text)
    records = document.records
    if not records:
        raise PairsFileError(f"the JSON holds no records; a pairs file is a list of objects such as [{_EXAMPLE}, …]")
    rows: list[dict[str, str | None]] = []
    nested: dict[str, list[int]] = {}
    non_text: dict[str, list[int]] = {}
    replaced: list[int] = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise PairsFileError(
                f"record {number} is {_kind(record)}, not an object: a pairs file holds a list of objects or one object per line "
                f"(JSON Lines), each like {_EXAMPLE}"
            )
        row: dict[str, str | None] = {}
        for key, value in record.items():
            column = _clean(str(key), number, replaced) or ""
            if isinstance(value, Mapping | list):
                nested.setdefault(column, []).append(number)
                row[column] = "{…}" if isinstance(value, Mapping) else "[…]"
            else:
                if value is not None and not isinstance(value, str):
                    non_text.setdefault(column, []).append(number)
                row[column] = _clean(value, number, replaced)
        rows.append(row)
    notes = list(document.notes)
    if replaced:
        rows_with = sorted(set(replaced))
        notes.append(
            f"{row_listing(rows_with)} held \\ud800-style escapes (half of a character, not valid Unicode): each was read as U+FFFD "
            "(\ufffd)"
        )
    frame = pd.DataFrame(rows).astype("string").fillna("")
    return JsonRecords(frame, nested, notes, non_text)


def parse_json_values(text: str) -> list:
    """The top-level values of JSON text, of any kind: an array's elements, one document, or one value per line.

    For a list of texts (``["a", "b"]``, or one JSON string per line); records
    go through :func:`parse_json_records`.

    Raises:
        PairsFileError: invalid JSON or nesting too deep for the parser.
    """
    stripped = text.strip()
    if stripped.startswith("["):
        return _whole_document(stripped).records
    values = []
    for n, line in enumerate(stripped.splitlines(), start=1):
        if line.strip():
            try:
                values.append(_loads(line, f"line {n}"))
            except json.JSONDecodeError as exc:
                if n == 1 and stripped.startswith("{"):
                    return _whole_document(stripped).records  # one object pretty-printed over lines
                raise PairsFileError(f"line {n} is not valid JSON ({exc.msg})") from exc
    return values


def clean_text(value: str) -> tuple[str, bool]:
    """A JSON string with each lone surrogate as U+FFFD, and whether one was replaced."""
    return (_SURROGATE.sub("\ufffd", value), True) if _SURROGATE.search(value) else (value, False)
