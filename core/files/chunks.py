"""Reading a pairs file of any size in chunks, each through the one validation path.

:func:`read_pairs_file` holds the whole file, its decoded text and its
table in memory at once, which is right for an upload and wrong for a
million-pair file.  Here a file is read ``chunk_rows`` records at a time:

* CSV and TSV by pandas' chunked reader on a decoded text stream (encoding
  and delimiter found on the file's first 64 KiB, as the whole-file reader
  finds them);
* JSON Lines by groups of lines, a JSON array object by object
  (``json.JSONDecoder.raw_decode``), both parsed by
  :func:`core.files.json_records.parse_json_records`;
* Parquet by row batches (``pyarrow.parquet.ParquetFile.iter_batches``).

Each chunk goes through :func:`core.files.reader.apply_mapping` and
:func:`core.files.intake.check_pairs`, exactly as a whole file does; what a
chunk cannot see on its own is carried across chunks here: exact duplicate
pairs, mirrored pairs (``(b, a)`` after ``(a, b)``), repeated pair ids and
row numbers.  Memory stays bounded by the chunk, plus 8-byte digests per pair
for the cross-chunk checks.

A file no larger than ``whole_read_bytes`` is read whole instead (the upload
path, with its line-exact decoding notes) and handed out in slices.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants
from core.files.decoding import ENCODING_HINT, REPLACEMENT, decode_bytes
from core.files.errors import PairsFileError
from core.files.intake import CheckedPairs, _key, check_pairs
from core.files.json_records import parse_json_records, row_listing
from core.files.reader import (
    ParsedPairs,
    _distinct,
    _os_error_message,
    _sniff,
    apply_mapping,
    guess_mapping,
    mapping_note,
    read_pairs_file,
)
from core.messages import first_line

PARQUET_SUFFIXES = (".parquet", ".pq")
_ROWS_NAMED = 10  # rows a note lists before counting the rest
_SAMPLE_BYTES = 64 * 1024
_JSON_BLOCK_CHARS = 1 << 20
_ROW_ID = re.compile(r"^row-(\d+)$")


@dataclass
class ChunkTotals:
    """What every chunk found, for the run's summary.

    Attributes:
        rows_read: data rows read from the file.
        pairs_kept: pairs handed out for scoring.
        notes: what reading and checking found, each sentence once.
        identical: ids of pairs with the same text on both sides.
        mirrored: ``(id, id of the earlier pair it mirrors)``.
        dropped: ids left out at the user's request.
        violations: category-rule problems, as text.
    """

    rows_read: int = 0
    pairs_kept: int = 0
    notes: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    mirrored: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)

    def add_note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


def _digest(*parts: str) -> bytes:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.digest()


# ------------------------------------------------------------ raw chunks
def _columns(names: list[object], header: bool) -> list[str]:
    return _distinct([str(c).strip() if header else f"column_{i + 1}" for i, c in enumerate(names)])


def _sample_text(path: Path, encoding: str | None) -> tuple[str, str, list[str]]:
    """The decoded first 64 KiB (cut at a line end), the codec for the rest, and decoding notes."""
    with open(path, "rb") as fh:
        sample = fh.read(_SAMPLE_BYTES)
        more = bool(fh.read(1))
    if more and b"\n" in sample:
        sample = sample[: sample.rfind(b"\n") + 1]  # no character cut in half at the sample's end
    decoded = decode_bytes(sample, encoding)
    codec = "utf-8-sig" if decoded.encoding == "utf-8" else decoded.encoding
    notes = [n for n in decoded.notes if REPLACEMENT not in n]  # U+FFFD is reported for the whole file below
    return decoded.text, codec, notes


def _delimited_chunks(path: Path, chunk_rows: int, header: bool, encoding: str | None, notes: list[str]) -> Iterator[pd.DataFrame]:
    text, codec, found = _sample_text(path, encoding)
    notes += found
    delimiter = _sniff(text, path.suffix.lower())
    with open(path, encoding=codec, errors="replace", newline="") as fh:
        try:
            reader = pd.read_csv(
                fh,
                sep=delimiter,
                dtype=str,
                keep_default_na=False,
                skip_blank_lines=True,
                header=0 if header else None,
                chunksize=chunk_rows,
            )
            for frame in reader:
                frame.columns = _columns(list(frame.columns), header)
                yield frame
        except pd.errors.EmptyDataError as exc:
            raise PairsFileError("the file has no rows") from exc
        except (pd.errors.ParserError, ValueError) as exc:
            raise PairsFileError(f"could not parse the file as delimited text: {first_line(exc)}") from exc


def _json_objects(fh: io.TextIOBase) -> Iterator[str]:
    """Each element of a top-level JSON array, as its own JSON text, reading the file a block at a time."""
    decoder = json.JSONDecoder()
    buffer, pos, started = "", 0, False
    while True:
        block = fh.read(_JSON_BLOCK_CHARS)
        buffer = buffer[pos:] + block
        pos = 0
        while True:
            while pos < len(buffer) and (buffer[pos].isspace() or buffer[pos] == "," or (not started and buffer[pos] == "[")):
                started = started or buffer[pos] == "["
                pos += 1
            if pos < len(buffer) and buffer[pos] == "]":
                return
            try:
                value, end = decoder.raw_decode(buffer, pos)
            except json.JSONDecodeError as exc:
                if not block:
                    raise PairsFileError(f"invalid JSON: {exc.msg} near character {exc.pos}") from exc
                break  # the element continues in the next block
            yield json.dumps(value)
            pos = end
        if not block:
            return


def _json_chunks(path: Path, chunk_rows: int, encoding: str | None, notes: list[str]) -> Iterator[ParsedPairs]:
    text, codec, found = _sample_text(path, encoding)
    notes += found
    array = text.lstrip().startswith("[")
    with open(path, encoding=codec, errors="replace", newline="") as fh:
        lines = _json_objects(fh) if array else (line for line in fh if line.strip())
        batch: list[str] = []
        for line in lines:
            batch.append(line.rstrip("\r\n"))
            if len(batch) == chunk_rows:
                yield _parsed_json(batch)
                batch = []
        if batch:
            yield _parsed_json(batch)


def _parsed_json(lines: list[str]) -> ParsedPairs:
    records = parse_json_records("\n".join(lines))
    records.frame.columns = _columns(list(records.frame.columns), True)
    return ParsedPairs(records.frame, "jsonl", "utf-8", records.notes, records.nested)


def _parquet_chunks(path: Path, chunk_rows: int) -> Iterator[ParsedPairs]:
    """The file's row batches as string tables; list, struct and map columns are marked nested, never stringified.

    Arrow has already checked the strings as UTF-8, so a U+FFFD in a cell is
    the character itself, not a byte that failed to decode.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        source = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise PairsFileError(f"not a readable Parquet file ({first_line(exc, 200)})") from exc
    batches = source.iter_batches(batch_size=chunk_rows)
    done = 0
    while True:
        try:
            batch = next(batches, None)
        except Exception as exc:  # noqa: BLE001 - a damaged page is an OSError or an ArrowInvalid, by codec
            raise PairsFileError(
                f"a damaged Parquet page after row {done:,} cannot be read ({first_line(exc, 200)}); write the file again"
            ) from exc
        if batch is None:
            return
        raw_nested = {}
        for field_, column in zip(batch.schema, batch.columns, strict=True):
            if pa.types.is_nested(field_.type):
                rows = [done + i + 1 for i, valid in enumerate(column.is_valid().to_pylist()) if valid]
                if rows:
                    raw_nested[field_.name] = rows
        frame = batch.to_pandas()
        raw = list(frame.columns)
        for name in raw_nested:
            if name in frame.columns:
                frame[name] = ""  # never scored as a repr: apply_mapping refuses the column when it is mapped
        raw_bad: dict[str, list[int]] = {}
        for index, field_ in enumerate(batch.schema):
            if _is_binary(field_.type) and field_.name in frame.columns:
                values, bad = _utf8_values(batch.column(index).to_pylist())
                frame[field_.name] = pd.Series(values, index=frame.index, dtype=object)
                if bad:
                    raw_bad[field_.name] = [done + i + 1 for i in bad]
        frame = frame.astype("string").fillna("").astype(object)
        frame.columns = _columns(raw, True)
        nested = {frame.columns[raw.index(name)]: rows for name, rows in raw_nested.items() if name in raw}
        undecodable = {frame.columns[raw.index(name)]: rows for name, rows in raw_bad.items() if name in raw}
        done += batch.num_rows
        yield ParsedPairs(frame, "parquet", "parquet", nested=nested, undecodable=undecodable)


def _is_binary(kind) -> bool:
    """A Parquet column of bytes that may be text: Hive, Impala and older Spark write text without the UTF-8 annotation.

    Fixed-size bytes are left alone: they hold UUIDs and digests, never text.
    """
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind))


def _utf8_values(values: list) -> tuple[list, list[int]]:
    """Bytes cells as text (None stays None), and the 0-based positions of those that are not valid UTF-8."""
    bad: list[int] = []
    out: list = []
    for i, value in enumerate(values):
        if value is None:
            out.append(None)
            continue
        try:
            out.append(bytes(value).decode("utf-8"))
        except UnicodeDecodeError:
            bad.append(i)
            out.append(bytes(value).decode("utf-8", errors="replace"))
    return out, bad


def _raw_chunks(path: Path, chunk_rows: int, header: bool, encoding: str | None, notes: list[str]) -> Iterator[ParsedPairs]:
    """The file's records, ``chunk_rows`` at a time, as parsed string tables."""
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xls", ".ods"):
        raise PairsFileError(f"{suffix} spreadsheets are not read directly; save the sheet as CSV (UTF-8) and use that")
    if suffix in PARQUET_SUFFIXES:
        yield from _parquet_chunks(path, chunk_rows)
        return
    text, _codec, _notes = _sample_text(path, encoding)
    if suffix in (".jsonl", ".json", ".ndjson") or text.lstrip().startswith(("{", "[")):
        yield from _json_chunks(path, chunk_rows, encoding, notes)
        return
    yield from (ParsedPairs(f, "delimited", "text") for f in _delimited_chunks(path, chunk_rows, header, encoding, notes))


# ------------------------------------------------------------ checked chunks
@dataclass
class _AcrossChunks:
    """What earlier chunks held: pair digests, mirror keys and ids."""

    pairs: set[bytes] = field(default_factory=set)
    keys: dict[bytes, str] = field(default_factory=dict)
    ids: set[bytes] = field(default_factory=set)
    duplicates: int = 0
    mirrors: int = 0
    renamed: int = 0


def _global_row_ids(pairs: pd.DataFrame, offset: int) -> pd.Series:
    """``row-k`` ids of a chunk (numbered from its own first row) renumbered from the file's first row."""

    def shift(pid: str) -> str:
        match = _ROW_ID.match(pid)
        return f"row-{int(match.group(1)) + offset}" if match else pid

    return pairs[constants.COL_PAIR_ID].astype(str).map(shift)


def _drop_seen(pairs: pd.DataFrame, seen: _AcrossChunks, drop_mirrored: bool, totals: ChunkTotals, offset: int) -> pd.DataFrame:
    """Drop pairs an earlier chunk held; note mirrors of earlier chunks' pairs; make ids unique across chunks."""
    keep, ids = [], []
    mine: dict[bytes, str] = {}  # this chunk's own mirrors are check_pairs' to find
    for pid, a, b in zip(pairs[constants.COL_PAIR_ID].astype(str), pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True):
        exact = _digest(a, b)
        if exact in seen.pairs:
            seen.duplicates += 1
            keep.append(False)
            continue
        seen.pairs.add(exact)
        ka, kb = _key(a), _key(b)
        mirror_of = seen.keys.get(_digest(kb, ka)) if ka != kb else None
        if mirror_of is not None:
            totals.mirrored.append((pid, mirror_of))
            seen.mirrors += 1
            if drop_mirrored:
                totals.dropped.append(pid)
                keep.append(False)
                continue
        mine.setdefault(_digest(ka, kb), pid)
        keep.append(True)
    for digest, pid in mine.items():
        seen.keys.setdefault(digest, pid)
    kept = pairs[keep].copy()
    for i, pid in enumerate(kept[constants.COL_PAIR_ID].astype(str)):
        tag = _digest(pid)
        if tag in seen.ids:
            pid = f"{pid}-row{offset + i + 1}"
            seen.renamed += 1
            tag = _digest(pid)
        seen.ids.add(tag)
        ids.append(pid)
    kept[constants.COL_PAIR_ID] = ids
    return kept.reset_index(drop=True)


def iter_checked_chunks(
    path: str | Path,
    chunk_rows: int = constants.RUN_CHUNK_PAIRS,
    *,
    columns: Mapping[str, str | None] | None = None,
    header: bool = True,
    flags: Mapping[str, str] | None = None,
    encoding: str | None = None,
    drop_identical: bool = False,
    drop_mirrored: bool = False,
    totals: ChunkTotals | None = None,
    whole_read_bytes: int = constants.RUN_WHOLE_READ_BYTES,
) -> Iterator[pd.DataFrame]:
    """A pairs file's checked pairs, at most ``chunk_rows`` a chunk, with the whole file never in memory.

    Args:
        path: a CSV, TSV, JSON Lines, JSON (an array of objects) or Parquet file.
        chunk_rows: records read per chunk (>= 1).
        columns: role -> column the user named; they override the guess.
        header: the first line of delimited text names the columns.
        flags: the command line's flags, for notes and errors (see :func:`core.files.reader.mapping_note`).
        encoding: the file's codec, or None to detect it.
        drop_identical, drop_mirrored: as :func:`core.files.intake.check_pairs`.
        totals: filled in as chunks are read: counts, notes, what was found.
        whole_read_bytes: a text file up to this size is read whole (exact
            per-line notes, every check over the whole file) and sliced.

    Yields:
        Pairs tables (``pair_id``, ``category``, ``text_a``, ``text_b``,
        ``suite``, optional ``label``), ``<= chunk_rows`` rows each.

    Raises:
        ValueError: ``chunk_rows`` below 1.
        PairsFileError: the file cannot be read, a column is missing, or no
            pair is left; raised when the chunk that shows it is read.
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    path = Path(path)
    totals = totals if totals is not None else ChunkTotals()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise PairsFileError(_os_error_message(path, exc)) from exc
    if size <= whole_read_bytes and path.suffix.lower() not in PARQUET_SUFFIXES:
        yield from _whole_file(path, chunk_rows, columns, header, flags, encoding, drop_identical, drop_mirrored, totals)
        return
    yield from _streamed(path, chunk_rows, columns, header, flags, encoding, drop_identical, drop_mirrored, totals)


def _record(checked: CheckedPairs, totals: ChunkTotals) -> None:
    totals.identical += checked.identical
    totals.mirrored += checked.mirrored
    totals.dropped += checked.dropped
    totals.violations += [str(v) for v in checked.violations]


def _whole_file(path, chunk_rows, columns, header, flags, encoding, drop_identical, drop_mirrored, totals) -> Iterator[pd.DataFrame]:
    pairs, notes = read_pairs_file(
        path,
        max_rows=constants.RUN_MAX_WHOLE_ROWS,
        max_mb=constants.RUN_WHOLE_READ_BYTES / (1024 * 1024),
        columns=columns,
        header=header,
        flags=flags,
        encoding=encoding,
    )
    try:
        checked = check_pairs(pairs, notes, drop_identical=drop_identical, drop_mirrored=drop_mirrored)
    except ValueError as exc:
        raise PairsFileError(str(exc)) from exc
    for note in checked.notes:
        totals.add_note(note)
    _record(checked, totals)
    totals.rows_read = len(pairs)
    totals.pairs_kept = len(checked.pairs)
    for start in range(0, len(checked.pairs), chunk_rows):
        yield checked.pairs.iloc[start : start + chunk_rows].reset_index(drop=True)


def _streamed(path, chunk_rows, columns, header, flags, encoding, drop_identical, drop_mirrored, totals) -> Iterator[pd.DataFrame]:
    notes: list[str] = []
    given = {role: col for role, col in (columns or {}).items() if col}
    mapping: dict[str, str | None] | None = None
    first_columns: list[str] = []
    seen = _AcrossChunks()
    replaced = False
    undecodable: dict[str, tuple[int, list[int]]] = {}  # mapped column -> (rows, the first few)
    for parsed in _raw_chunks(path, chunk_rows, header, encoding, notes):
        if mapping is None:
            first_columns = list(parsed.frame.columns)
            if len(first_columns) < 2:
                raise PairsFileError(
                    f"found only one column ({first_columns[0] if first_columns else ''!r}): a pairs file needs two text columns"
                )
            mapping = {**guess_mapping(first_columns, parsed.frame), **given}
            if given and mapping[constants.COL_TEXT_A] == mapping[constants.COL_TEXT_B]:
                raise PairsFileError(
                    f"text_a and text_b are both column {mapping[constants.COL_TEXT_A]!r}: every pair would score 1.0; map two different "
                    "columns"
                )
            guessed = (
                None
                if {constants.COL_TEXT_A, constants.COL_TEXT_B} <= set(given)
                else mapping_note(first_columns, mapping, flags, parsed.frame)
            )
            for note in ([guessed] if guessed else []) + notes:
                totals.add_note(note)
        # Records of JSON chunks need not all carry every key: every chunk gets the first chunk's columns.
        parsed.frame = parsed.frame.reindex(columns=first_columns, fill_value="")
        for column, rows in parsed.undecodable.items():
            if column in mapping.values():
                count, first = undecodable.get(column, (0, []))
                undecodable[column] = (count + len(rows), (first + rows)[:_ROWS_NAMED])
        offset = totals.rows_read
        totals.rows_read += len(parsed.frame)
        try:
            pairs, chunk_notes = apply_mapping(parsed, mapping, suite=path.stem, flags=flags)
        except PairsFileError as exc:
            if "no pair is left" not in str(exc):
                raise
            totals.add_note(f"rows {offset + 1}-{totals.rows_read}: no usable pair (every row has an empty or unreadable text)")
            continue
        pairs[constants.COL_PAIR_ID] = _global_row_ids(pairs, offset)
        replaced = (
            replaced
            or parsed.encoding != "parquet"
            and bool(
                pairs[constants.COL_TEXT_A].str.contains(REPLACEMENT, regex=False).any()
                or pairs[constants.COL_TEXT_B].str.contains(REPLACEMENT, regex=False).any()
            )
        )
        pairs = _drop_seen(pairs, seen, drop_mirrored, totals, offset)
        if pairs.empty:
            continue
        try:
            checked = check_pairs(pairs, drop_identical=drop_identical, drop_mirrored=drop_mirrored)
        except ValueError:
            totals.dropped += [str(p) for p in pairs[constants.COL_PAIR_ID]]
            continue
        for note in chunk_notes:
            totals.add_note(note if note.startswith("ignored ") else f"rows {offset + 1}-{totals.rows_read}: {note}")
        for note in checked.notes:
            totals.add_note(f"rows {offset + 1}-{totals.rows_read}: {note}")
        _record(checked, totals)
        totals.pairs_kept += len(checked.pairs)
        yield checked.pairs
    if mapping is None:
        raise PairsFileError("the file has no data rows")
    if seen.duplicates:
        totals.add_note(f"removed {seen.duplicates} duplicate pair(s) that repeat a pair of an earlier chunk")
    if seen.mirrors:
        done = "dropped the mirrors" if drop_mirrored else "kept"
        totals.add_note(
            f"{seen.mirrors} pair(s) repeat a pair of an earlier chunk with the sides swapped: cosine is symmetric, so each counts "
            f"twice; {done}"
        )
    if seen.renamed:
        totals.add_note(f"{seen.renamed} pair id(s) repeat an id of an earlier chunk: suffixed with their row number")
    for column, (count, first) in undecodable.items():
        listed = row_listing(first) + (f", and {count - len(first):,} more" if count > len(first) else "")
        totals.add_note(
            f"column {column!r} holds bytes, read as UTF-8: {listed} {'is' if count == 1 else 'are'} not valid UTF-8; "
            f"each bad byte was read as U+FFFD ({REPLACEMENT})"
        )
    if replaced:
        totals.add_note(f"some bytes are not valid text in the file's encoding: each was read as U+FFFD ({REPLACEMENT}); {ENCODING_HINT}")
    if totals.pairs_kept == 0:
        raise PairsFileError("no pair is left after dropping rows with an empty text and duplicates")


def cli_run_command(filename: str) -> str:
    """The shell command that scores ``filename`` from the command line at any size (quoted for a POSIX shell)."""
    import shlex

    return f"python -m core run --suite {shlex.quote(filename)} --out results"
