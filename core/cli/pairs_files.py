"""The options ``run`` and ``validate`` share for a pairs file, and the one way both read and check it.

Both commands read a file with :func:`core.files.reader.read_pairs_file` and
check it with :func:`core.files.intake.check_pairs` (the path the app's
upload takes too), so they agree on what the file holds.
"""

from __future__ import annotations

import argparse

from core import constants
from core.files.intake import CheckedPairs, check_pairs
from core.papers.suites import SUITE_FILES, SuiteError, load_suite_with_notes

# role -> the flag that maps it; "header" -> the flag for a file without a header row.
COLUMN_FLAGS = {
    constants.COL_TEXT_A: "--text-a",
    constants.COL_TEXT_B: "--text-b",
    constants.COL_CATEGORY: "--category",
    constants.COL_LABEL: "--label",
    "header": "--no-header",
}
_ROLES = (constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY, constants.COL_LABEL)


class PairsArgError(ValueError):
    """A pairs-file option cannot be used; the CLI prints it as one ``error:`` line."""


def add_pairs_file_options(p: argparse.ArgumentParser) -> None:
    """Column mapping, header and identical/mirrored-pair options for a pairs file."""
    g = p.add_argument_group("pairs file", "for a CSV/TSV/JSONL file; columns are guessed by name unless mapped here")
    for role in _ROLES:
        optional = role in (constants.COL_CATEGORY, constants.COL_LABEL)
        g.add_argument(
            COLUMN_FLAGS[role], dest=f"col_{role}", metavar="COL", help=f"the column holding {role}{' (optional)' if optional else ''}"
        )
    g.add_argument(
        COLUMN_FLAGS["header"],
        dest="no_header",
        action="store_true",
        help="the file has no header row: its first line is a pair; columns are column_1, column_2, ...",
    )
    g.add_argument(
        "--encoding",
        metavar="CODEC",
        help="the file's encoding (utf-8, latin-1, cp1252, utf-16, ...); default: detected, bad UTF-8 bytes read as U+FFFD",
    )
    g.add_argument(
        "--drop-identical", action="store_true", help="leave out pairs whose two texts are the same (default: keep and report them)"
    )
    g.add_argument(
        "--drop-mirrored", action="store_true", help="leave out a pair (b, a) when (a, b) came earlier (default: keep and report them)"
    )


def is_shipped(source: str) -> bool:
    """True for a shipped suite name or ``all``, False for a file path."""
    return source in SUITE_FILES or source == constants.SUITE_ALL


def _columns(args: argparse.Namespace) -> dict[str, str]:
    return {role: value for role in _ROLES if (value := getattr(args, f"col_{role}", None))}


def refuse_file_options_for_suite(args: argparse.Namespace, source: str) -> None:
    """Column and header flags only mean something for a file.

    Raises:
        PairsArgError: one of them was given with a shipped suite's name.
    """
    given = [COLUMN_FLAGS[role] for role in _columns(args)] + ([COLUMN_FLAGS["header"]] if getattr(args, "no_header", False) else [])
    if given:
        raise PairsArgError(f"{', '.join(given)} map(s) the columns of a pairs file; {source!r} is a shipped suite")


def read_checked_file(args: argparse.Namespace, source: str) -> CheckedPairs:
    """Read and check a pairs file the way ``run``, ``validate`` and the app's upload do.

    Raises:
        PairsArgError: no such file, the file cannot be read, a mapped
            column is missing, or dropping leaves no pair.
    """
    try:
        pairs, notes = load_suite_with_notes(
            source, columns=_columns(args), header=not args.no_header, flags=COLUMN_FLAGS, encoding=getattr(args, "encoding", None)
        )
    except SuiteError as exc:  # already names the file
        raise PairsArgError(str(exc)) from exc
    try:
        return check_pairs(pairs, notes, drop_identical=args.drop_identical, drop_mirrored=args.drop_mirrored)
    except ValueError as exc:
        raise PairsArgError(f"{source}: {exc}") from exc


def keep_or_drop_hint(checked: CheckedPairs, args: argparse.Namespace) -> str | None:
    """The flags that drop what was found and kept, or None when nothing was kept."""
    flags = [
        flag
        for flag, found, dropping in (
            ("--drop-identical", checked.identical, args.drop_identical),
            ("--drop-mirrored", checked.mirrored, args.drop_mirrored),
        )
        if found and not dropping
    ]
    return f"{' or '.join(flags)} leave(s) them out" if flags else None
