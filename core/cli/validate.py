"""``validate SUITE_OR_FILE``: a suite or pairs file against its category rules and counts."""

from __future__ import annotations

from core import constants, lexicon
from core.cli.common import CliError
from core.cli.pairs_files import add_pairs_file_options


def cmd_validate(args) -> int:
    from core.cli.pairs_files import PairsArgError, is_shipped, keep_or_drop_hint, read_checked_file, refuse_file_options_for_suite
    from core.files.intake import check_pairs
    from core.papers.suites import SuiteError, load_suite, read_suite_file

    name = args.suite
    from core.cli import retrieval as retrieval_cli  # the wide retrieval suite has its own rules

    if retrieval_cli.is_retrieval_suite(name):
        return retrieval_cli.cmd_validate_retrieval(args)
    try:
        if is_shipped(name):
            refuse_file_options_for_suite(args, name)
            frame = read_suite_file(name) if name in lexicon.SUITE_COUNTS else load_suite(name)
            # The OOV suite's rows are items expanded into variants that share an id: its rules are validators.validate_oov.
            checked = None if name == constants.SUITE_OOV else check_pairs(frame, expected_counts=lexicon.SUITE_COUNTS.get(name))
        else:
            checked = read_checked_file(args, name)
    except (SuiteError, PairsArgError) as exc:
        raise CliError(str(exc)) from exc
    if checked is None:
        print(f"{len(frame)} rows, 0 problem(s)")
        return 0
    hint = keep_or_drop_hint(checked, args) if not is_shipped(name) else None
    for note in [*checked.notes, *filter(None, [hint])]:
        print(f"note: {note}")
    for p in checked.violations:
        print(p)
    # The same count ``run`` scores: after empty rows, exact duplicates and any drop asked for.
    print(f"{len(checked.pairs)} rows, {len(checked.violations)} problem(s)")
    return 1 if checked.violations else 0


def register(subparsers) -> None:
    """Add the ``validate`` command."""
    p = subparsers.add_parser("validate", help="check a suite against its category rules and counts")
    p.add_argument("suite", help="suite name or pairs file")
    add_pairs_file_options(p)
    p.set_defaults(func=cmd_validate)
