"""Reading sentence pairs from CSV, TSV and JSONL files a user supplies.

Every failure is a :class:`PairsFileError` with one sentence a user can act
on; nothing here lets a parser traceback through.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".json")
_ENCODINGS = ("utf-8-sig", "utf-16")
_TEXT_A_GUESSES = ("text_a", "sentence1", "sentence_a", "text1", "premise", "query", "a", "s1")
_TEXT_B_GUESSES = ("text_b", "sentence2", "sentence_b", "text2", "hypothesis", "document", "b", "s2")
_CATEGORY_GUESSES = ("category", "type", "kind", "group")
_LABEL_GUESSES = ("label", "score", "gold", "similar")
_ID_GUESSES = ("pair_id", "id")
_BYTES_PER_MB = 1024 * 1024  # Streamlit's server.maxUploadSize counts MB this way


class PairsFileError(ValueError):
    """A pairs file cannot be read; the message says why and what to do."""


@dataclass
class ParsedPairs:
    """A parsed pairs file before column mapping.

    Attributes:
        frame: all columns as strings.
        delimiter: the detected delimiter (``jsonl`` for JSON Lines).
        encoding: the encoding that decoded the bytes.
        notes: things the user should know (dropped rows, decoding).
    """

    frame: pd.DataFrame
    delimiter: str
    encoding: str
    notes: list[str] = field(default_factory=list)


def _decode(data: bytes) -> tuple[str, str]:
    if not data.strip():
        raise PairsFileError("the file is empty")
    if data[:4] == b"PK\x03\x04":
        raise PairsFileError("this looks like an Excel or zip file; save it as CSV (UTF-8) and upload that")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16"), "utf-16"
    sample = data[:4096]
    zeros_odd, zeros_even = sample[1::2].count(0), sample[0::2].count(0)
    if zeros_even == 0 and zeros_odd > len(sample) // 4:
        return data.decode("utf-16-le", errors="replace"), "utf-16-le"
    if zeros_odd == 0 and zeros_even > len(sample) // 4:
        return data.decode("utf-16-be", errors="replace"), "utf-16-be"
    if b"\x00" in sample:
        # NUL never occurs in text files other than UTF-16, whose BOM was handled above.
        raise PairsFileError("the file is binary, not text; upload a CSV, TSV or JSONL file")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:4096]:
        raise PairsFileError("the file is binary, not text; upload a CSV, TSV or JSONL file")
    return data.decode("latin-1"), "latin-1"


def _parse_jsonl(text: str) -> pd.DataFrame:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            rows = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise PairsFileError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from exc
    else:
        rows = []
        for n, line in enumerate(stripped.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise PairsFileError(f"line {n} is not valid JSON ({exc.msg})") from exc
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise PairsFileError("JSON Lines input must hold one object per line, e.g. {\"text_a\": …, \"text_b\": …}")
    return pd.DataFrame(rows).astype("string").fillna("")


def _sniff(text: str, suffix: str) -> str:
    if suffix == ".tsv":
        return "\t"
    sample = text[:8192]
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        return "\t" if sample.count("\t") > sample.count(",") else ","


def _check_size(n_bytes: int, max_mb: float) -> None:
    if n_bytes > max_mb * _BYTES_PER_MB:
        raise PairsFileError(
            f"the file is {n_bytes:,} bytes ({n_bytes / _BYTES_PER_MB:.1f} MB); the limit is {max_mb:g} MB: split it into smaller files"
        )


def _one_column_message(frame: pd.DataFrame, delimiter: str) -> str:
    column = str(frame.columns[0]) if len(frame.columns) else ""
    if delimiter == "jsonl":
        return f"each record has only one field ({column!r}); a pairs file needs two text fields, such as text_a and text_b"
    return (
        f"found only one column ({column!r}): a pairs file needs two text columns separated by a comma, tab, "
        "semicolon or |; check the file's delimiter"
    )


def parse_pairs(data: bytes, filename: str, max_rows: int = constants.MAX_UPLOAD_ROWS, max_mb: float = constants.MAX_UPLOAD_MB) -> ParsedPairs:
    """Parse an uploaded or local pairs file into a table of strings.

    Args:
        data: the file's bytes.
        filename: its name (the suffix picks JSONL vs delimited text).
        max_rows: refuse files with more data rows than this.
        max_mb: refuse files larger than this many megabytes (MiB, as
            Streamlit's ``server.maxUploadSize`` counts them).

    Raises:
        PairsFileError: empty, binary, Excel, undecodable, malformed, one
            column only, too many rows or too many bytes.
    """
    suffix = Path(filename).suffix.lower()
    if suffix in (".xlsx", ".xls", ".ods"):
        raise PairsFileError(f"{suffix} spreadsheets are not read directly; save the sheet as CSV (UTF-8) and upload that")
    _check_size(len(data), max_mb)
    text, encoding = _decode(data)
    notes = [] if encoding == "utf-8" else [f"decoded as {encoding}"]
    if suffix in (".jsonl", ".json") or text.lstrip().startswith(("{", "[")):
        frame, delimiter = _parse_jsonl(text), "jsonl"
    else:
        delimiter = _sniff(text, suffix)
        try:
            frame = pd.read_csv(io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, skip_blank_lines=True)
        except (pd.errors.ParserError, csv.Error) as exc:
            raise PairsFileError(f"could not parse the file as delimited text: {str(exc).splitlines()[0]}") from exc
        except pd.errors.EmptyDataError as exc:
            raise PairsFileError("the file has no rows") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise PairsFileError("the file has a header but no data rows")
    if len(frame.columns) < 2:
        raise PairsFileError(_one_column_message(frame, delimiter))
    if len(frame) > max_rows:
        raise PairsFileError(f"the file has {len(frame):,} rows; the limit is {max_rows:,}: split it into smaller files")
    return ParsedPairs(frame, delimiter, encoding, notes)


def _by_name(columns: list[str]) -> dict[str, str | None]:
    """Roles whose column is recognised by its name (case-insensitive)."""
    lower = {c.lower(): c for c in columns}

    def pick(options: tuple[str, ...]) -> str | None:
        return next((lower[o] for o in options if o in lower), None)

    return {
        constants.COL_TEXT_A: pick(_TEXT_A_GUESSES),
        constants.COL_TEXT_B: pick(_TEXT_B_GUESSES),
        constants.COL_CATEGORY: pick(_CATEGORY_GUESSES),
        constants.COL_LABEL: pick(_LABEL_GUESSES),
        constants.COL_PAIR_ID: pick(_ID_GUESSES),
    }


def guess_mapping(columns: list[str]) -> dict[str, str | None]:
    """Best guess of which columns hold text A, text B, category, label and id.

    Columns are recognised by name; a text role no column is named for takes
    the first column no other role uses, so the two texts never default to
    the same column.
    """
    mapping = _by_name(columns)
    free = [c for c in columns if c not in mapping.values()]
    for role in (constants.COL_TEXT_A, constants.COL_TEXT_B):
        if mapping[role] is None and free:
            mapping[role] = free.pop(0)
    return mapping


def mapping_note(columns: list[str], mapping: Mapping[str, str | None] | None = None) -> str | None:
    """What to tell the user when the text columns were guessed, not recognised.

    Args:
        columns: the file's columns.
        mapping: the mapping in use; once its text columns differ from the
            guess the user has chosen them, and there is nothing to say.

    Returns:
        None when both text columns are recognised by name (or were chosen);
        otherwise a sentence naming the guessed columns (or the missing
        ones) and asking the user to check the mapping.
    """
    named, guessed = _by_name(columns), guess_mapping(columns)
    missing = [role for role in (constants.COL_TEXT_A, constants.COL_TEXT_B) if named[role] is None]
    chosen = mapping is not None and any(mapping.get(role) != guessed[role] for role in missing if guessed[role] is not None)
    if not missing or chosen:
        return None
    used = [f"{guessed[role]!r} as {role}" for role in missing if guessed[role] is not None]
    unguessed = [role for role in missing if guessed[role] is None]
    advice = [f"using {' and '.join(used)}"] if used else []
    advice.append(f"choose the {' and '.join(unguessed)} column below" if unguessed else "choose other columns below if that is wrong")
    return (
        f"no column is named {' or '.join(missing)} (nor sentence1/sentence2, premise/hypothesis, query/document): "
        + "; ".join(advice)
    )


def apply_mapping(parsed: ParsedPairs, mapping: Mapping[str, str | None], suite: str = "uploaded") -> tuple[pd.DataFrame, list[str]]:
    """Turn a parsed file into a pairs table with the project's column names.

    Rows with an empty text on either side are dropped, exact duplicate pairs
    are removed; both are counted in the returned notes.

    Raises:
        PairsFileError: a required column is unmapped or missing.
    """
    frame = parsed.frame
    for role in (constants.COL_TEXT_A, constants.COL_TEXT_B):
        col = mapping.get(role)
        if not col:
            raise PairsFileError(f"choose the column that holds {role}; the file has: {', '.join(map(str, frame.columns))}")
        if col not in frame.columns:
            raise PairsFileError(f"column {col!r} is not in the file; it has: {', '.join(map(str, frame.columns))}")
    out = pd.DataFrame(
        {
            constants.COL_TEXT_A: frame[mapping[constants.COL_TEXT_A]].astype(str).str.strip(),
            constants.COL_TEXT_B: frame[mapping[constants.COL_TEXT_B]].astype(str).str.strip(),
        }
    )
    cat_col = mapping.get(constants.COL_CATEGORY)
    categories = frame[cat_col].astype(str).str.strip() if cat_col else pd.Series("", index=frame.index)
    no_category = categories == ""
    out[constants.COL_CATEGORY] = categories.replace("", "uncategorized")
    label_col = mapping.get(constants.COL_LABEL)
    if label_col:
        out[constants.COL_LABEL] = frame[label_col].astype(str).str.strip()
    id_col = mapping.get(constants.COL_PAIR_ID)
    out[constants.COL_PAIR_ID] = frame[id_col].astype(str) if id_col else [f"row-{i + 1}" for i in range(len(frame))]
    out[constants.COL_SUITE] = suite
    notes = list(parsed.notes)
    unused = [str(c) for c in frame.columns if c not in {v for v in mapping.values() if v}]
    if unused:
        notes.append(f"ignored {len(unused)} column(s) not chosen below: {', '.join(unused)}")
    empty = (out[constants.COL_TEXT_A] == "") | (out[constants.COL_TEXT_B] == "")
    if empty.any():
        notes.append(f"dropped {int(empty.sum())} row(s) with an empty text")
        out = out[~empty]
    dup = out.duplicated(subset=[constants.COL_TEXT_A, constants.COL_TEXT_B])
    if dup.any():
        notes.append(f"removed {int(dup.sum())} duplicate pair(s)")
        out = out[~dup]
    if out.empty:
        raise PairsFileError("no pair is left after dropping rows with an empty text")
    if cat_col and no_category[out.index].any():
        notes.append(f"{int(no_category[out.index].sum())} pair(s) have an empty category cell: grouped as 'uncategorized'")
    if out[constants.COL_PAIR_ID].duplicated().any():
        out[constants.COL_PAIR_ID] = [f"row-{i + 1}" for i in range(len(out))]
        notes.append("pair ids were not unique; numbered the rows instead")
    return out.reset_index(drop=True), notes


def read_pairs_file(path: str | Path, max_rows: int = constants.MAX_UPLOAD_ROWS, max_mb: float = constants.MAX_UPLOAD_MB) -> tuple[pd.DataFrame, list[str]]:
    """Read a pairs file from disk with the guessed column mapping.

    The size is checked before reading, so a huge file is refused at once.
    """
    path = Path(path)
    try:
        _check_size(path.stat().st_size, max_mb)
        data = path.read_bytes()
    except OSError as exc:
        raise PairsFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    parsed = parse_pairs(data, path.name, max_rows=max_rows, max_mb=max_mb)
    frame, notes = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)), suite=path.stem)
    guessed = mapping_note(list(parsed.frame.columns))
    return frame, ([guessed] if guessed else []) + notes
