"""Retrieval inputs from uploaded bytes: a pairs file (or the suite's wide format), a corpus, a queries file.

The page gets bytes and a file name from its uploaders; these functions turn
them into what :mod:`core.probes.retrieval.run` takes, by the same rules as
the files the command line reads (:func:`core.probes.retrieval.suite.load_retrieval_suite`,
:func:`core.probes.retrieval.suite.read_text_list`).  Every failure is a
:class:`~core.probes.retrieval.suite.RetrievalSuiteError` whose message says
what to fix.
"""

from __future__ import annotations

from pathlib import Path

from core import constants
from core.files.errors import PairsFileError
from core.files.reader import apply_mapping, guess_mapping, mapping_note, parse_pairs
from core.probes.retrieval.suite import (
    WIDE_COLUMNS,
    RetrievalSuite,
    RetrievalSuiteError,
    pairs_to_suite,
    texts_of_bytes,
    tidy_suite,
    validate_retrieval_suite,
)

_BYTES_PER_MB = 1024 * 1024


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
    ``text_a`` (:func:`~core.probes.retrieval.suite.pairs_to_suite`).

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
        missing = [c for c in WIDE_COLUMNS if c not in columns]
        if missing:
            raise RetrievalSuiteError(f"{name} names anchor and paraphrase but lacks the retrieval columns {missing}; see data/README.md")
        wide = parsed.frame.apply(lambda col: col.astype(str).str.strip())
        problems = validate_retrieval_suite(wide)
        try:
            suite = tidy_suite(wide, stem)
        except ValueError as exc:
            raise RetrievalSuiteError(f"{name}: {exc}") from exc
        note = (f"{len(problems)} rule violation(s), e.g. {problems[0]}",) if problems else ()
        return RetrievalSuite(suite.name, suite.passages, suite.queries, (*parsed.notes, *note))
    mapping = guess_mapping(columns)
    try:
        pairs, notes = apply_mapping(parsed, mapping, suite=stem)
    except PairsFileError as exc:
        raise RetrievalSuiteError(str(exc)) from exc
    if mapping.get(constants.COL_CATEGORY) is None:
        raise RetrievalSuiteError(
            f"{name} has no category column (columns: {', '.join(columns)}); each text_b needs a category: "
            f"paraphrase (or positive) for the passage that should rank first, a failure mode ({', '.join(constants.FAILURE_MODES)}) or {constants.CAT_CONTRADICTION} for the others"
        )
    guessed = mapping_note(columns, mapping)
    suite = pairs_to_suite(pairs, stem)
    return RetrievalSuite(suite.name, suite.passages, suite.queries, (*([guessed] if guessed else []), *notes, *suite.notes))


def texts_from_bytes(data: bytes, name: str, kind: str) -> tuple[list[str], list[str]]:
    """An uploaded corpus or queries file as texts, one per row (the rules of ``read_text_list``).

    Args:
        data: the file's bytes.
        name: its file name (``.txt``: one text per line; ``.csv``/``.tsv``: a
            text column; ``.jsonl``/``.json``: strings or objects).
        kind: ``corpus`` or ``queries``.

    Returns:
        ``(texts, notes)``: distinct non-empty texts in file order, and what reading changed.

    Raises:
        ValueError: ``data`` is not bytes, ``name`` is empty or ``kind`` unknown.
        RetrievalSuiteError: empty, binary, ambiguous or too long.
    """
    _checked_upload(data, name)
    return texts_of_bytes(bytes(data), name, kind)
