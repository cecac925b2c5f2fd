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

from core import constants as C

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".txt", ".jsonl", ".json")
_ENCODINGS = ("utf-8-sig", "utf-16")
_TEXT_A_GUESSES = ("text_a", "sentence1", "sentence_a", "text1", "premise", "query", "a", "s1")
_TEXT_B_GUESSES = ("text_b", "sentence2", "sentence_b", "text2", "hypothesis", "document", "b", "s2")


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


def parse_pairs(data: bytes, filename: str, max_rows: int = C.MAX_UPLOAD_ROWS) -> ParsedPairs:
    """Parse an uploaded or local pairs file into a table of strings.

    Args:
        data: the file's bytes.
        filename: its name (the suffix picks JSONL vs delimited text).
        max_rows: refuse files with more data rows than this.

    Raises:
        PairsFileError: empty, binary, Excel, undecodable, malformed, or too
            many rows.
    """
    suffix = Path(filename).suffix.lower()
    if suffix in (".xlsx", ".xls", ".ods"):
        raise PairsFileError(f"{suffix} spreadsheets are not read directly; save the sheet as CSV (UTF-8) and upload that")
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
    if len(frame) > max_rows:
        raise PairsFileError(f"the file has {len(frame):,} rows; the limit is {max_rows:,}: split it into smaller files")
    return ParsedPairs(frame, delimiter, encoding, notes)


def guess_mapping(columns: list[str]) -> dict[str, str | None]:
    """Best guess of which columns hold text A, text B, category and label."""
    lower = {c.lower(): c for c in columns}

    def pick(options: tuple[str, ...]) -> str | None:
        return next((lower[o] for o in options if o in lower), None)

    text_a, text_b = pick(_TEXT_A_GUESSES), pick(_TEXT_B_GUESSES)
    if text_a is None and text_b is None and len(columns) >= 2:
        text_a, text_b = columns[0], columns[1]
    return {
        C.COL_TEXT_A: text_a,
        C.COL_TEXT_B: text_b,
        C.COL_CATEGORY: pick(("category", "type", "kind", "group")),
        C.COL_LABEL: pick(("label", "score", "gold", "similar")),
        C.COL_PAIR_ID: pick(("pair_id", "id")),
    }


def apply_mapping(parsed: ParsedPairs, mapping: Mapping[str, str | None], suite: str = "uploaded") -> tuple[pd.DataFrame, list[str]]:
    """Turn a parsed file into a pairs table with the project's column names.

    Rows with an empty text on either side are dropped, exact duplicate pairs
    are removed; both are counted in the returned notes.

    Raises:
        PairsFileError: a required column is unmapped or missing.
    """
    frame = parsed.frame
    for role in (C.COL_TEXT_A, C.COL_TEXT_B):
        col = mapping.get(role)
        if not col:
            raise PairsFileError(f"choose the column that holds {role}; the file has: {', '.join(map(str, frame.columns))}")
        if col not in frame.columns:
            raise PairsFileError(f"column {col!r} is not in the file; it has: {', '.join(map(str, frame.columns))}")
    out = pd.DataFrame(
        {
            C.COL_TEXT_A: frame[mapping[C.COL_TEXT_A]].astype(str).str.strip(),
            C.COL_TEXT_B: frame[mapping[C.COL_TEXT_B]].astype(str).str.strip(),
        }
    )
    cat_col = mapping.get(C.COL_CATEGORY)
    out[C.COL_CATEGORY] = frame[cat_col].astype(str).str.strip().replace("", "uncategorized") if cat_col else "uncategorized"
    label_col = mapping.get(C.COL_LABEL)
    if label_col:
        out[C.COL_LABEL] = frame[label_col].astype(str).str.strip()
    id_col = mapping.get(C.COL_PAIR_ID)
    out[C.COL_PAIR_ID] = frame[id_col].astype(str) if id_col else [f"row-{i + 1}" for i in range(len(frame))]
    out[C.COL_SUITE] = suite
    notes = list(parsed.notes)
    empty = (out[C.COL_TEXT_A] == "") | (out[C.COL_TEXT_B] == "")
    if empty.any():
        notes.append(f"dropped {int(empty.sum())} row(s) with an empty text")
        out = out[~empty]
    dup = out.duplicated(subset=[C.COL_TEXT_A, C.COL_TEXT_B])
    if dup.any():
        notes.append(f"removed {int(dup.sum())} duplicate pair(s)")
        out = out[~dup]
    if out.empty:
        raise PairsFileError("no pair is left after dropping rows with an empty text")
    if out[C.COL_PAIR_ID].duplicated().any():
        out[C.COL_PAIR_ID] = [f"row-{i + 1}" for i in range(len(out))]
        notes.append("pair ids were not unique; numbered the rows instead")
    return out.reset_index(drop=True), notes


def read_pairs_file(path: str | Path, max_rows: int = C.MAX_UPLOAD_ROWS) -> tuple[pd.DataFrame, list[str]]:
    """Read a pairs file from disk with the guessed column mapping."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PairsFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    parsed = parse_pairs(data, path.name, max_rows=max_rows)
    return apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)), suite=path.stem)
