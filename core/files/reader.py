"""Reading sentence pairs from CSV, TSV and JSONL files a user supplies.

Every failure is a :class:`PairsFileError` with one sentence a user can act
on; nothing here lets a parser traceback through.
"""

from __future__ import annotations

import csv
import errno
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants
from core.files.decoding import decode_bytes
from core.files.errors import PairsFileError
from core.files.json_records import parse_json_records, row_listing
from core.files.text_checks import unusable_reason
from core.messages import first_line

_ENCODINGS = ("utf-8-sig", "utf-16")
_TEXT_A_GUESSES = ("text_a", "sentence1", "sentence_a", "text1", "premise", "query", "a", "s1")
_TEXT_B_GUESSES = ("text_b", "sentence2", "sentence_b", "text2", "hypothesis", "document", "b", "s2")
_CATEGORY_GUESSES = ("category", "type", "kind", "group")
_LABEL_GUESSES = ("label", "score", "gold", "similar")
# A column named with one of these words is a label too (same_meaning, is_duplicate, paraphrase_label, match).
_LABEL_WORDS = ("label", "gold", "similar", "similarity", "same", "match", "paraphrase", "duplicate", "equivalent", "entailment")
_ID_GUESSES = ("pair_id", "id")
_SAMPLE_ROWS = 200  # rows a column's values are judged on when guessing the text columns
_FILE_NAME = re.compile(r"^[^\s/\\]*[/\\]?[^\s]*\.[A-Za-z0-9]{1,5}$")  # img_0001.jpg, images/a.png
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$", re.IGNORECASE)
_ID_NAME = re.compile(r"(^|_)(id|uid|key|idx|index|uuid|guid|hash)$|^_key$", re.IGNORECASE)
_BYTES_PER_MB = 1024 * 1024  # Streamlit's server.maxUploadSize counts MB this way


@dataclass
class ParsedPairs:
    """A parsed pairs file before column mapping.

    Attributes:
        frame: all columns as strings.
        delimiter: the detected delimiter (``jsonl`` for JSON Lines).
        encoding: the encoding that decoded the bytes.
        notes: things the user should know (dropped rows, decoding).
        nested: for JSON, column -> 1-based rows whose value is an object or
            array; such a column is refused when mapped to a role.
        undecodable: for Parquet, a bytes column -> 1-based rows whose bytes
            are not UTF-8 (read with U+FFFD); said once for a mapped column.
        non_text: for JSON, column -> 1-based rows whose value is a number or
            a boolean (held as its printed form; a reader of texts drops it).
    """

    frame: pd.DataFrame
    delimiter: str
    encoding: str
    notes: list[str] = field(default_factory=list)
    nested: dict[str, list[int]] = field(default_factory=dict)
    undecodable: dict[str, list[int]] = field(default_factory=dict)
    non_text: dict[str, list[int]] = field(default_factory=dict)


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


def parse_pairs(
    data: bytes,
    filename: str,
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
    header: bool = True,
    encoding: str | None = None,
) -> ParsedPairs:
    """Parse an uploaded or local pairs file into a table of strings.

    Args:
        data: the file's bytes.
        filename: its name (the suffix picks JSONL vs delimited text).
        max_rows: refuse files with more data rows than this.
        max_mb: refuse files larger than this many megabytes (MiB, as
            Streamlit's ``server.maxUploadSize`` counts them).
        header: the first line of delimited text names the columns; when
            False it is data and the columns are ``column_1``, ``column_2``, ...
        encoding: the file's codec as the user names it; None detects it
            (:mod:`core.files.decoding`).

    Raises:
        PairsFileError: empty, binary, Excel, undecodable, malformed, one
            column only, too many rows or too many bytes; never another
            exception, whatever the bytes.
    """
    suffix = Path(filename).suffix.lower()
    if suffix in (".xlsx", ".xls", ".ods"):
        raise PairsFileError(f"{suffix} spreadsheets are not read directly; save the sheet as CSV (UTF-8) and upload that")
    _check_size(len(data), max_mb)
    decoded = decode_bytes(data, encoding)
    text, notes, nested, non_text = decoded.text, list(decoded.notes), {}, {}
    if suffix in (".jsonl", ".json") or text.lstrip().startswith(("{", "[")):
        records = parse_json_records(text)
        frame, delimiter, nested, non_text = records.frame, "jsonl", records.nested, records.non_text
        notes += records.notes
    else:
        delimiter = _sniff(text, suffix)
        try:
            frame = pd.read_csv(
                io.StringIO(text), sep=delimiter, dtype=str, keep_default_na=False, skip_blank_lines=True, header=0 if header else None
            )
        except (pd.errors.ParserError, csv.Error) as exc:
            raise PairsFileError(f"could not parse the file as delimited text: {first_line(exc)}") from exc
        except pd.errors.EmptyDataError as exc:
            raise PairsFileError("the file has no rows") from exc
    frame.columns = _distinct(
        [str(c).strip() if header or delimiter == "jsonl" else f"column_{i + 1}" for i, c in enumerate(frame.columns)]
    )
    if frame.empty:
        raise PairsFileError("the file has a header but no data rows")
    if len(frame.columns) < 2:
        raise PairsFileError(_one_column_message(frame, delimiter))
    if len(frame) > max_rows:
        raise PairsFileError(f"the file has {len(frame):,} rows; the limit is {max_rows:,}: split it into smaller files")
    return ParsedPairs(
        frame,
        delimiter,
        decoded.encoding,
        notes,
        {c.strip(): rows for c, rows in nested.items()},
        non_text={c.strip(): rows for c, rows in non_text.items()},
    )


_SHOWN_NAMES = 8  # column names a message lists before counting the rest
_SHOWN_NAME_CHARS = 60


def some_names(names: Sequence[object], shown: int = _SHOWN_NAMES) -> str:
    """A few names for a one-line message, the rest counted: ``a, b, c and 4,997 more``; long names are shortened."""
    texts = [str(n) if len(str(n)) <= _SHOWN_NAME_CHARS else str(n)[: _SHOWN_NAME_CHARS - 1] + "…" for n in names[:shown]]
    rest = len(names) - len(texts)
    return ", ".join(texts) + (f" and {rest:,} more" if rest > 0 else "")


def _distinct(names: list[str]) -> list[str]:
    """Column names made distinct (``x`` and ``x `` both strip to ``x``: the second becomes ``x.1``)."""
    seen: set[str] = set()
    out = []
    for name in names:
        unique, n = name, 0
        while unique in seen:
            n += 1
            unique = f"{name}.{n}"
        seen.add(unique)
        out.append(unique)
    return out


def _by_name(columns: list[str]) -> dict[str, str | None]:
    """Roles whose column is recognised by its name (case-insensitive); a label also by a word of it (``same_meaning``)."""
    lower = {c.lower(): c for c in columns}

    def pick(options: tuple[str, ...]) -> str | None:
        return next((lower[o] for o in options if o in lower), None)

    found = {
        constants.COL_TEXT_A: pick(_TEXT_A_GUESSES),
        constants.COL_TEXT_B: pick(_TEXT_B_GUESSES),
        constants.COL_CATEGORY: pick(_CATEGORY_GUESSES),
        constants.COL_LABEL: pick(_LABEL_GUESSES),
        constants.COL_PAIR_ID: pick(_ID_GUESSES),
    }
    if found[constants.COL_LABEL] is None:
        taken = set(found.values())
        found[constants.COL_LABEL] = next(
            (c for c in columns if c not in taken and set(re.split(r"[\s_\-.]+", str(c).lower())) & set(_LABEL_WORDS)), None
        )
    return found


def _not_text(name: str, values: pd.Series) -> str | None:
    """Why a column is no text to score (ids, file names, links, numbers, single words), or None when it holds sentences."""
    given = values.astype(str).str.strip()
    given = given[given != ""]
    if given.empty:
        return "empty"
    if _ID_NAME.search(name.strip()):
        return "ids"
    share = lambda hits: float(hits.mean()) >= 0.8  # noqa: E731 - most values, not all: a stray cell changes nothing
    if share(pd.to_numeric(given, errors="coerce").notna()):
        return "numbers"
    if share(given.str.match(_URL)):
        return "links"
    if share(given.str.match(_FILE_NAME) & ~given.str.contains(r"\s")):
        return "file names"
    if share(~given.str.contains(r"\s")):
        return "single words"
    return None


def text_columns(frame: pd.DataFrame, columns: list[str]) -> tuple[list[str], dict[str, str]]:
    """Which of ``columns`` hold sentences, judged on the first rows' values, most words first.

    Returns:
        (sentence columns ranked by their median word count, ties in file order;
        column -> why it is not text: ``ids``, ``file names``, ``links``, ``numbers``, ``single words``, ``empty``).
    """
    sample = frame.head(_SAMPLE_ROWS)
    skipped: dict[str, str] = {}
    words: dict[str, float] = {}
    for col in columns:
        if col not in sample.columns:
            continue
        why = _not_text(str(col), sample[col])
        if why:
            skipped[col] = why
        else:
            given = sample[col].astype(str).str.strip()
            words[col] = float(given[given != ""].map(lambda v: len(v.split())).median())
    ranked = sorted(words, key=lambda c: -words[c])  # sorted() is stable: ties keep the file's order
    return ranked, skipped


def guess_mapping(columns: list[str], frame: pd.DataFrame | None = None) -> dict[str, str | None]:
    """Best guess of which columns hold text A, text B, category, label and id.

    Columns are recognised by name.  A text role no column is named for
    takes, when the values are at hand (``frame``), the column holding the
    longest sentences, never one of ids, file names, links, numbers or single
    words (:func:`text_columns`), keeping the file's order between the two;
    without values, or with no such column, the first column no other role
    uses.  The two texts never default to the same column.
    """
    mapping = _by_name(columns)
    free = [c for c in columns if c not in mapping.values()]
    missing = [role for role in (constants.COL_TEXT_A, constants.COL_TEXT_B) if mapping[role] is None]
    if frame is not None and missing:
        ranked, _ = text_columns(frame, free)
        chosen = [c for c in free if c in ranked[: len(missing)]]  # the best ones, in the file's order
        for role, col in zip(missing, chosen, strict=False):
            mapping[role] = col
        free = [c for c in free if c not in chosen]
    for role in (constants.COL_TEXT_A, constants.COL_TEXT_B):
        if mapping[role] is None and free:
            mapping[role] = free.pop(0)
    return mapping


def header_looks_like_data(columns: list[str]) -> bool:
    """True when no column name is a known role and two or more read like sentences.

    A file without a header row loses its first pair to the header; its
    "names" then have several words or end a sentence ("The cat sat.").
    """
    named = _by_name(columns)
    if named[constants.COL_TEXT_A] or named[constants.COL_TEXT_B]:
        return False
    sentence_like = [c for c in columns if len(str(c).split()) >= 3 or str(c).rstrip().endswith((".", "!", "?"))]
    return len(sentence_like) >= 2


def mapping_note(
    columns: list[str],
    mapping: Mapping[str, str | None] | None = None,
    flags: Mapping[str, str] | None = None,
    frame: pd.DataFrame | None = None,
) -> str | None:
    """What to tell the user when the text columns were guessed, not recognised.

    Args:
        columns: the file's columns.
        mapping: the mapping in use; once its text columns differ from the
            guess the user has chosen them, and there is nothing to say.
        flags: role -> command-line flag that maps it (and ``"header"`` ->
            the flag that reads a header-less file), for a terminal where
            there is no column picker "below"; None words it for the page.
        frame: the file's values, when at hand: the guess then prefers sentence
            columns (:func:`guess_mapping`) and the note says which it passed over and why.

    Returns:
        None when both text columns are recognised by name (or were chosen);
        otherwise a sentence naming the guessed columns (or the missing
        ones) and saying how to map them; first, a file whose header row
        looks like data is named as such.
    """
    if header_looks_like_data(columns):
        shown = ", ".join(repr(str(c)) for c in columns[:2])
        if flags:
            return (
                f"the first row looks like data, not column names ({shown}): if the file has no header row, pass {flags['header']} to "
                "score it as a pair"
            )
        return (
            f"the first row looks like data, not column names ({shown}): it is read as the header and not scored; add a header row such "
            "as text_a, text_b"
        )
    named, guessed = _by_name(columns), guess_mapping(columns, frame)
    missing = [role for role in (constants.COL_TEXT_A, constants.COL_TEXT_B) if named[role] is None]
    chosen = mapping is not None and any(mapping.get(role) != guessed[role] for role in missing if guessed[role] is not None)
    if not missing or chosen:
        return None
    used = [f"{guessed[role]!r} as {role}" for role in missing if guessed[role] is not None]
    unguessed = [role for role in missing if guessed[role] is None]
    advice = [f"using {' and '.join(used)}"] if used else []
    if frame is not None and used:
        _, skipped = text_columns(frame, [c for c in columns if c not in named.values()])
        passed = [f"{c!r} ({why})" for c, why in skipped.items() if c not in guessed.values()]
        if passed:
            advice[0] += f", the columns holding sentences (passed over: {', '.join(passed[:5])}{', …' if len(passed) > 5 else ''})"
    if flags:
        advice.append(
            f"give the {' and '.join(unguessed)} column with {' and '.join(f'{flags[r]} COL' for r in unguessed)}"
            if unguessed
            else f"if that is wrong, map other columns with {' and '.join(f'{flags[r]} COL' for r in missing)}"
        )
    else:
        advice.append(f"choose the {' and '.join(unguessed)} column below" if unguessed else "choose other columns below if that is wrong")
    return f"no column is named {' or '.join(missing)} (nor sentence1/sentence2, premise/hypothesis, query/document): " + "; ".join(advice)


def apply_mapping(
    parsed: ParsedPairs, mapping: Mapping[str, str | None], suite: str = "uploaded", flags: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Turn a parsed file into a pairs table with the project's column names.

    Rows with an empty text on either side are dropped, exact duplicate pairs
    are removed; both are counted in the returned notes.  ``flags`` words
    the notes for the command line, as in :func:`mapping_note`.

    Raises:
        PairsFileError: a required column is unmapped or missing.
    """
    frame = parsed.frame
    for role in (constants.COL_TEXT_A, constants.COL_TEXT_B):
        col = mapping.get(role)
        if not col:
            how = f"give the column that holds {role} with {flags[role]} COL" if flags else f"choose the column that holds {role}"
            raise PairsFileError(f"{how}; the file has: {some_names(list(frame.columns))}")
        if col not in frame.columns:
            raise PairsFileError(f"column {col!r} is not in the file; it has: {some_names(list(frame.columns))}")
    for role, col in mapping.items():
        if col and col not in frame.columns:
            raise PairsFileError(f"column {col!r} (for {role}) is not in the file; it has: {some_names(list(frame.columns))}")
        if col and col in parsed.nested:
            raise PairsFileError(
                f"column {col!r} (for {role}) holds JSON objects or arrays, not text, in {row_listing(parsed.nested[col])}: "
                "give each value as a string"
            )
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
        not_chosen = "not mapped by a column flag" if flags else "not chosen in the column boxes"
        notes.append(f"ignored {len(unused):,} column(s) {not_chosen}: {some_names(unused)}")
    empty = (out[constants.COL_TEXT_A] == "") | (out[constants.COL_TEXT_B] == "")
    if empty.any():
        notes.append(f"dropped {int(empty.sum())} row(s) with an empty text")
        out = out[~empty]
    invisible = pd.Series(
        [_unreadable(a) or _unreadable(b) for a, b in zip(out[constants.COL_TEXT_A], out[constants.COL_TEXT_B], strict=True)],
        index=out.index,
        dtype=bool,
    )
    if invisible.any():
        # The typed-text rule (core.files.text_checks): nothing a model could read is not scored.
        notes.append(
            f"dropped {int(invisible.sum())} row(s) whose text holds only invisible or control characters "
            f"({row_listing([int(i) + 1 for i in out.index[invisible]])}): nothing a model could read"
        )
        out = out[~invisible]
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


def _unreadable(text: str) -> bool:
    return unusable_reason(text) is not None


def _os_error_message(path: Path, exc: OSError) -> str:
    """What went wrong opening ``path``, in words (a symlink loop is not "no such file")."""
    if exc.errno == errno.ELOOP:
        return "cannot read it: it is a symbolic link loop (it leads back to itself); point it at a real file"
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot read it: a part of the name is longer than this system allows (255 bytes)"
    if exc.errno == errno.EISDIR:
        return "cannot read it: it is a folder, not a file"
    return f"cannot read {path}: {exc.strerror or exc}"


def read_pairs_file(
    path: str | Path,
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
    *,
    columns: Mapping[str, str | None] | None = None,
    header: bool = True,
    flags: Mapping[str, str] | None = None,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Read a pairs file from disk with the guessed column mapping.

    The size is checked before reading, so a huge file is refused at once.

    Args:
        path: the file.
        max_rows: refuse files with more data rows than this.
        max_mb: refuse files larger than this many MiB.
        columns: role -> column the user named; they override the guess.
        header: the first line names the columns (see :func:`parse_pairs`).
        flags: word notes and errors for the command line (see :func:`mapping_note`).
        encoding: the file's codec, or None to detect it (see :func:`parse_pairs`).

    Raises:
        PairsFileError: unreadable, unparsable, a named column missing, or
            text A and text B mapped to one column.
    """
    path = Path(path)
    try:
        _check_size(path.stat().st_size, max_mb)
        data = path.read_bytes()
    except OSError as exc:
        raise PairsFileError(_os_error_message(path, exc)) from exc
    parsed = parse_pairs(data, path.name, max_rows=max_rows, max_mb=max_mb, header=header, encoding=encoding)
    given = {role: col for role, col in (columns or {}).items() if col}
    mapping = {**guess_mapping(list(parsed.frame.columns), parsed.frame), **given}
    if given and mapping[constants.COL_TEXT_A] == mapping[constants.COL_TEXT_B]:
        raise PairsFileError(
            f"text_a and text_b are both column {mapping[constants.COL_TEXT_A]!r}: every pair would score 1.0; map two different columns"
        )
    frame, notes = apply_mapping(parsed, mapping, suite=path.stem, flags=flags)
    both_given = {constants.COL_TEXT_A, constants.COL_TEXT_B} <= set(given)
    guessed = None if both_given else mapping_note(list(parsed.frame.columns), mapping, flags, parsed.frame)
    return frame, ([guessed] if guessed else []) + notes
