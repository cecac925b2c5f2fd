"""Reading a triples file: an anchor, the passage that should rank first, and passages that should not.

The sentence-transformers convention names the columns ``anchor``,
``positive``, ``negative``; NLI sets turned into triples name them after the
premise (``premise``, ``query``), the entailed hypothesis (``entailed``,
``entailment``) and the contradicting one (``contradicted``,
``contradiction``, ``hard_negative``).  Several negatives per anchor come
either long (one row per negative, the anchor and positive repeated) or wide
(``negative_1``, ``negative_2``, … in one row).

The bytes go through the one pairs-file path (:func:`core.files.reader.parse_pairs`:
decoding, CSV/TSV sniffing, JSON and JSON Lines records, nesting, lone
surrogates, size and row limits), so a triples file is refused for the same
reasons and in the same words as any other file, and its cells by the rule
of every reader of texts (:func:`core.files.texts.unreadable_rows`): a JSON
number or boolean is never scored as its printed form.  What is read is one tidy
row per (source row, negative): ``row, anchor, positive, negative,
negative_column``; nothing is deduplicated, since every source row is its
own passage in the in-corpus ranking.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import constants
from core.files.errors import PairsFileError
from core.files.json_records import row_listing
from core.files.reader import parse_pairs
from core.files.texts import dropped_notes, read_file_bytes, unreadable_rows

ANCHOR_NAMES = ("anchor", "query", "premise", "question")
POSITIVE_NAMES = ("positive", "pos", "entailed", "entailment")
NEGATIVE_NAMES = ("negative", "neg", "contradicted", "contradiction", "hard_negative")
# negative_1, negative 2, hard_negative3, contradiction_2 ... (the wide format's numbered negatives)
_NUMBERED_NEGATIVE = re.compile(rf"^(?:{'|'.join(NEGATIVE_NAMES)})[ _-]?\d+$", re.IGNORECASE)
TRIPLE_COLUMNS = (
    constants.COL_SOURCE_ROW,
    constants.COL_ANCHOR,
    constants.COL_POSITIVE,
    constants.COL_NEGATIVE,
    constants.COL_NEGATIVE_COLUMN,
)
# Role -> the command-line flag that names its column (cosine-probe retrieval --triples).
TRIPLE_FLAGS = {constants.COL_ANCHOR: "--query", constants.COL_POSITIVE: "--positive", constants.COL_NEGATIVE: "--negative"}


@dataclass(frozen=True)
class Triples:
    """A triples file as one tidy table.

    Attributes:
        name: the file's stem.
        frame: one row per (source row, negative), columns of :data:`TRIPLE_COLUMNS`;
            ``row`` is the 1-based data row of the file.
        mapping: anchor -> column, positive -> column, negative -> the negative columns.
        notes: what reading changed or guessed, in words.
    """

    name: str
    frame: pd.DataFrame
    mapping: dict[str, str | tuple[str, ...]]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def plain_mapping(self) -> dict[str, str | list[str]]:
        """The column mapping, JSON-ready (the negative columns as a list), for reports and the run history."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.mapping.items()}

    @property
    def n_rows(self) -> int:
        """Source rows kept (each holds one anchor and one positive)."""
        return int(self.frame[constants.COL_SOURCE_ROW].nunique())


def _pick(columns: Sequence[str], names: Sequence[str]) -> str | None:
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in names if n in lower), None)


def guess_triple_columns(columns: Sequence[str]) -> dict[str, str | tuple[str, ...] | None]:
    """Which columns hold the anchor, the positive and the negatives, by their names.

    Args:
        columns: the file's column names.

    Returns:
        ``{"anchor": col or None, "positive": col or None, "negative": (cols…) or None}``;
        the negatives are the column named like :data:`NEGATIVE_NAMES` and every
        numbered one (``negative_1``, ``negative_2``, …), in file order.
    """
    named = _pick(columns, NEGATIVE_NAMES)
    negatives = tuple(c for c in columns if c == named or _NUMBERED_NEGATIVE.match(c.strip()))
    return {
        constants.COL_ANCHOR: _pick(columns, ANCHOR_NAMES),
        constants.COL_POSITIVE: _pick(columns, POSITIVE_NAMES),
        constants.COL_NEGATIVE: negatives or None,
    }


def _given(columns: Mapping[str, str | Sequence[str] | None] | None) -> dict[str, str | tuple[str, ...]]:
    out: dict[str, str | tuple[str, ...]] = {}
    for role, value in (columns or {}).items():
        if not value:
            continue
        if role == constants.COL_NEGATIVE:
            names = [value] if isinstance(value, str) else list(value)
            out[role] = tuple(c.strip() for name in names for c in name.split(",") if c.strip())
        else:
            out[role] = str(value).strip()
    return out


def _how(role: str, flags: Mapping[str, str] | None) -> str:
    return f"name it with {flags[role]} COL" if flags else "choose it below"


def _resolve(
    found: list[str], columns: Mapping[str, str | Sequence[str] | None] | None, flags: Mapping[str, str] | None, name: str
) -> dict[str, str | tuple[str, ...]]:
    mapping: dict[str, str | tuple[str, ...] | None] = {**guess_triple_columns(found), **_given(columns)}
    listing = ", ".join(found)
    for role, names in (
        (constants.COL_ANCHOR, ANCHOR_NAMES),
        (constants.COL_POSITIVE, POSITIVE_NAMES),
        (constants.COL_NEGATIVE, NEGATIVE_NAMES),
    ):
        if not mapping.get(role):
            raise PairsFileError(
                f"{name}: no column is named {' or '.join(names)} for the {role}; {_how(role, flags)} (columns: {listing})"
            )
    wanted = [str(mapping[constants.COL_ANCHOR]), str(mapping[constants.COL_POSITIVE]), *tuple(mapping[constants.COL_NEGATIVE] or ())]
    missing = [c for c in wanted if c not in found]
    if missing:
        raise PairsFileError(f"{name}: column(s) {', '.join(map(repr, missing))} not in the file; it has: {listing}")
    if len(set(wanted)) < len(wanted):
        raise PairsFileError(
            f"{name}: one column is mapped to two roles ({', '.join(map(str, wanted))}); the anchor, positive and each negative need "
            "their own column"
        )
    return {k: v for k, v in mapping.items() if v}


def parse_triples(
    data: bytes,
    name: str,
    columns: Mapping[str, str | Sequence[str] | None] | None = None,
    *,
    flags: Mapping[str, str] | None = None,
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
    encoding: str | None = None,
) -> Triples:
    """A triples file's bytes as tidy triples (see the module docstring).

    Args:
        data: the file's bytes (CSV, TSV, JSON, JSON Lines).
        name: its file name; the suffix picks the parser and messages name it.
        columns: role (``anchor``, ``positive``, ``negative``) -> the column
            the user named; ``negative`` may be a list or a comma list.  They
            override the guess from the column names.
        flags: role -> command-line flag, to word messages for a terminal.
        max_rows, max_mb: the pairs-file limits.
        encoding: the file's codec, or None to detect it.

    Returns:
        A :class:`Triples`; a row whose anchor or positive is not a text a
        model could read (a JSON number or boolean, null, empty, only
        invisible characters: :func:`core.files.texts.unreadable_rows`) is
        dropped, and so is such a negative cell, with the corpus reader's notes.

    Raises:
        PairsFileError: unreadable, a role without a column, a column named
            twice or absent, a column holding JSON objects or arrays, or no
            triple left.  The message names the file.
    """
    try:
        parsed = parse_pairs(bytes(data), name, max_rows=max_rows, max_mb=max_mb, encoding=encoding)
    except PairsFileError as exc:
        raise PairsFileError(f"{name}: {exc}") from exc
    frame = parsed.frame
    found = [str(c) for c in frame.columns]
    mapping = _resolve(found, columns, flags, name)
    anchor_col, positive_col = str(mapping[constants.COL_ANCHOR]), str(mapping[constants.COL_POSITIVE])
    negative_cols = tuple(mapping[constants.COL_NEGATIVE])
    for col in (anchor_col, positive_col, *negative_cols):
        if col in parsed.nested:
            raise PairsFileError(
                f"{name}: column {col!r} holds JSON objects or arrays, not text, in {row_listing(parsed.nested[col])}: give each value "
                "as a string"
            )
    notes = [f"{name}: {n}" for n in parsed.notes]
    guessed = guess_triple_columns(found)
    chosen = ", ".join(f"{role} = {', '.join(v) if isinstance(v, tuple) else v}" for role, v in mapping.items())
    if mapping != {k: v for k, v in guessed.items() if v}:
        notes.append(f"{name}: columns as given: {chosen}")
    else:
        notes.append(f"{name}: columns recognised by name: {chosen}")

    def clean(col: str) -> list[str]:
        return [" ".join(t.split()) for t in frame[col].astype(str)]

    # The one rule of every text reader (core.files.texts): numbers, booleans, empty and invisible-only values take no part.
    anchors, positives = clean(anchor_col), clean(positive_col)
    skip: set[int] = set()
    for col, values in ((anchor_col, anchors), (positive_col, positives)):
        dropped = unreadable_rows(values, parsed.non_text.get(col, []))
        notes += [f"{name}: {n}" for n in dropped_notes(dropped, col)]
        skip |= {r for found in dropped.values() for r in found}
    rows = []
    for col in negative_cols:
        negatives = clean(col)
        dropped = unreadable_rows(negatives, parsed.non_text.get(col, []))
        # A row already left out for its anchor or positive says nothing more about its negatives.
        dropped = {why: kept for why, found in dropped.items() if (kept := [r for r in found if r not in skip])}
        notes += [f"{name}: {n}" for n in dropped_notes(dropped, col, unit="negative cell")]
        unusable = {r for found in dropped.values() for r in found}
        rows += [
            (i, a, p, n, col)
            for i, (a, p, n) in enumerate(zip(anchors, positives, negatives, strict=True), start=1)
            if i not in skip and i not in unusable
        ]
    if not rows:
        raise PairsFileError(f"{name}: no row has an anchor, a positive and a negative: nothing to rank")
    out = pd.DataFrame(rows, columns=list(TRIPLE_COLUMNS)).sort_values([constants.COL_SOURCE_ROW], kind="stable").reset_index(drop=True)
    without = sorted(set(range(1, len(frame) + 1)) - skip - set(out[constants.COL_SOURCE_ROW]))
    if without:
        notes.append(f"{name}: dropped {len(without)} row(s) with no negative ({row_listing(without)})")
    same = out[constants.COL_POSITIVE] == out[constants.COL_NEGATIVE]
    if same.any():
        notes.append(f"{name}: {int(same.sum())} negative(s) repeat their row's positive: each is a tie, never a win")
    return Triples(Path(name).stem or "triples", out, dict(mapping), tuple(notes))


def triple_file_columns(data: bytes, name: str, *, max_mb: float = constants.MAX_UPLOAD_MB) -> list[str]:
    """The columns of a triples file, for a column picker (the file read by the pairs-file rules).

    Raises:
        PairsFileError: the file cannot be read; the message names it.
    """
    try:
        return [str(c) for c in parse_pairs(bytes(data), name, max_mb=max_mb).frame.columns]
    except PairsFileError as exc:
        raise PairsFileError(f"{name}: {exc}") from exc


def read_triples(
    path: str | Path,
    columns: Mapping[str, str | Sequence[str] | None] | None = None,
    *,
    flags: Mapping[str, str] | None = None,
    max_rows: int = constants.MAX_UPLOAD_ROWS,
    max_mb: float = constants.MAX_UPLOAD_MB,
    encoding: str | None = None,
) -> Triples:
    """A triples file on disk (the rules of :func:`parse_triples`); the size is checked before reading.

    Raises:
        PairsFileError: unreadable, too large, or as :func:`parse_triples`.
    """
    path = Path(path).expanduser()
    data = read_file_bytes(path, max_mb, path.name)
    return parse_triples(data, path.name, columns, flags=flags, max_rows=max_rows, max_mb=max_mb, encoding=encoding)
