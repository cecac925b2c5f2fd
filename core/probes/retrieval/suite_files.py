"""Retrieval suites from files: the shipped wide file, a wide or pairs file on disk, and an uploaded one.

The command line names a file (:func:`load_retrieval_suite`); the page gets
bytes and a file name from its uploader (:func:`suite_from_bytes`).  Both
read a file whose header names ``anchor`` and ``paraphrase`` as the wide
format (data/README.md), its rule violations noted
(:mod:`core.probes.retrieval.suite_checks`), and any other file as a pairs
file grouped by ``text_a`` (:func:`core.probes.retrieval.convert.pairs_to_suite`).
Every failure is a :class:`~core.probes.retrieval.suite.RetrievalSuiteError`
whose message says what to fix.  Corpus and queries files, one text per row,
are read by :mod:`core.files.texts`.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

from core import constants, lexicon
from core.files.errors import PairsFileError
from core.files.reader import apply_mapping, guess_mapping, mapping_note, parse_pairs, read_pairs_file
from core.messages import first_line
from core.paths import SUITES_DIR
from core.probes.retrieval.convert import pairs_to_suite
from core.probes.retrieval.suite import REQUIRED_COLUMNS, RetrievalSuite, RetrievalSuiteError, tidy_suite
from core.probes.retrieval.suite_checks import validate_retrieval_suite

RETRIEVAL_FILE = SUITES_DIR / "retrieval.csv"
_HEADER_CHARS = 64 * 1024
_BYTES_PER_MB = 1024 * 1024


def read_retrieval_file(path: str | Path = RETRIEVAL_FILE) -> pd.DataFrame:
    """The wide retrieval file as strings, one anchor group per row.

    Raises:
        RetrievalSuiteError: unreadable file or missing columns.
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise RetrievalSuiteError(f"cannot read {path}: {first_line(exc)}") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise RetrievalSuiteError(f"{Path(path).name} lacks the retrieval columns {missing}; see data/README.md")
    return frame.apply(lambda col: col.str.strip())


def is_wide_retrieval_file(path: str | Path) -> bool:
    """True when the file's header names the wide suite's anchor and paraphrase columns."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            # Only a bounded start of the first line: a JSON file or a 40,000-word first text is no wide header,
            # and csv's 128 KiB field limit must not turn it into a crash.
            first = fh.readline(_HEADER_CHARS)
        header = next(csv.reader([first]), [])
    except (OSError, csv.Error):
        return False
    return {constants.COL_ANCHOR, constants.COL_PARAPHRASE} <= {h.strip() for h in header}


def _wide_suite(wide: pd.DataFrame, name: str, label: str) -> RetrievalSuite:
    """A wide table as a suite; its rule violations are a note, since a user's suite may break a rule and still rank."""
    problems = validate_retrieval_suite(wide)
    try:
        suite = tidy_suite(wide, name)
    except ValueError as exc:
        raise RetrievalSuiteError(f"{label}: {exc}") from exc
    note = (f"{len(problems)} rule violation(s), e.g. {problems[0]}",) if problems else ()
    return RetrievalSuite(suite.name, suite.passages, suite.queries, note)


def load_retrieval_suite(name_or_path: str = constants.SUITE_RETRIEVAL) -> RetrievalSuite:
    """The shipped suite by name, a wide file in its format, or a user's pairs file.

    Raises:
        RetrievalSuiteError: unknown name, unreadable file, or nothing to rank.
    """
    if name_or_path == constants.SUITE_RETRIEVAL:
        return tidy_suite(read_retrieval_file(), constants.SUITE_RETRIEVAL)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise RetrievalSuiteError(
            f"no retrieval suite named {name_or_path!r} and no such file; use {constants.SUITE_RETRIEVAL!r} or a pairs file"
        )
    if is_wide_retrieval_file(path):
        return _wide_suite(read_retrieval_file(path), path.stem, str(path))
    try:
        pairs, notes = read_pairs_file(path)
    except PairsFileError as exc:
        raise RetrievalSuiteError(f"{path}: {exc}") from exc
    suite = pairs_to_suite(pairs, path.stem)
    return RetrievalSuite(suite.name, suite.passages, suite.queries, (*notes, *suite.notes))


def _checked_upload(data: bytes, name: str) -> None:
    if not isinstance(data, bytes | bytearray):
        raise ValueError(f"data must be bytes, got {type(data).__name__}")  # noqa: TRY004 - input errors are ValueErrors here
    if not isinstance(name, str) or not name.strip():
        raise ValueError("name must be the uploaded file's name")
    if len(data) > constants.MAX_UPLOAD_MB * _BYTES_PER_MB:
        raise RetrievalSuiteError(f"{name} is {len(data) / _BYTES_PER_MB:.1f} MB; the limit is {constants.MAX_UPLOAD_MB} MB")


def suite_from_bytes(data: bytes, name: str) -> RetrievalSuite:
    """An uploaded pairs file, or a file in the retrieval suite's wide format, as a suite.

    A header naming ``anchor`` and ``paraphrase`` reads the wide format
    (data/README.md) and notes its rule violations; any other file is a pairs
    file whose columns are guessed as on the Your data page and grouped by
    ``text_a`` (:func:`~core.probes.retrieval.convert.pairs_to_suite`).

    Args:
        data: the file's bytes.
        name: its file name (the suffix picks the parser).

    Returns:
        The suite, named after the file's stem, with notes on what reading changed.

    Raises:
        ValueError: ``data`` is not bytes or ``name`` is empty.
        RetrievalSuiteError: unreadable, too large, or nothing to rank.
    """
    _checked_upload(data, name)
    stem = Path(name).stem or "upload"
    try:
        parsed = parse_pairs(bytes(data), name)
    except PairsFileError as exc:
        raise RetrievalSuiteError(str(exc)) from exc
    columns = list(parsed.frame.columns)
    if {constants.COL_ANCHOR, constants.COL_PARAPHRASE} <= set(columns):
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if missing:
            raise RetrievalSuiteError(f"{name} names anchor and paraphrase but lacks the retrieval columns {missing}; see data/README.md")
        suite = _wide_suite(parsed.frame.apply(lambda col: col.astype(str).str.strip()), stem, name)
        return RetrievalSuite(suite.name, suite.passages, suite.queries, (*parsed.notes, *suite.notes))
    mapping = guess_mapping(columns, parsed.frame)
    try:
        pairs, notes = apply_mapping(parsed, mapping, suite=stem)
    except PairsFileError as exc:
        raise RetrievalSuiteError(str(exc)) from exc
    if mapping.get(constants.COL_CATEGORY) is None:
        raise RetrievalSuiteError(
            f"{name} has no category column (columns: {', '.join(columns)}); each text_b needs a category: "
            f"paraphrase (or positive) for the passage that should rank first, a failure mode ({', '.join(lexicon.FAILURE_MODES)}) or "
            f"{constants.CAT_CONTRADICTION} for the others"
        )
    guessed = mapping_note(columns, mapping, frame=parsed.frame)
    suite = pairs_to_suite(pairs, stem)
    return RetrievalSuite(suite.name, suite.passages, suite.queries, (*([guessed] if guessed else []), *notes, *suite.notes))
