"""``cosine-probe report RUN_ID --out report.html``: a stored run as one self-contained HTML file (``core.history.report``)."""

from __future__ import annotations

import argparse
import sys

from core.cli.common import CliError
from core.messages import first_line

EXAMPLES = ("cosine-probe report 12 --out report.html",)


def register(subparsers) -> None:
    """Add the ``report`` command."""
    p = subparsers.add_parser(
        "report",
        help="write a stored run as a self-contained HTML report (findings, interactive charts, worst cases, settings); opens offline",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_id", metavar="RUN_ID", type=int, help="the run's number (cosine-probe history list)")
    p.add_argument("--out", metavar="FILE", required=True, help="the HTML file to write")
    p.set_defaults(func=cmd_report)


def cmd_report(args) -> int:
    from core.cli.outputs import output_file, write_output
    from core.history.report import is_report, run_report
    from core.history.store import HistoryError
    from core.models.registry import short_name
    from core.probes.labels import categories_in_words, report_labels

    # Checked before the run is read: never over the history, the cache or a file that is not an earlier report.
    out = output_file(args.out, "--out", "report", replaces=is_report, kind="a cosine-probe report")
    assert out is not None  # --out is required
    try:
        text = run_report(
            args.run_id,
            labels=lambda results, threshold, match: report_labels(results, threshold, match, short_name),
            categories=categories_in_words,  # a page run's 0/1 categories in the page's words
        )
    except (HistoryError, ValueError) as exc:
        raise CliError(first_line(exc)) from exc
    size = write_output(out, text, "--out", "report")
    print(f"wrote {out} ({size / 1e6:.1f} MB; opens offline)", file=sys.stderr)
    return 0
