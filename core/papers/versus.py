"""The papers' published figures beside ours: one tidy long table a page or a report lays out as it likes.

The matching is :func:`core.papers.reproduce.compare_to_published`'s, cell by cell; this module reads several
tables through it at once and keeps what a side-by-side view needs: each published cell of a model the paper
tested, the paper's value and ours.  Failure modes shows the failure paper's Table 1 (mean and SD of the cosine),
Table 2 (failure rate above 0.7) and Appendix B (above 0.8) this way, for each model it ran.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from core.papers import reference, reproduce

FAILURE_MODE_TABLES = ("Table 1", "Table 2", "Appendix B")
"""The failure paper's tables of per-mode figures: mean ± SD, failure rate at 0.7 and at 0.8."""

VERSUS_COLUMNS = ("table", "model", "category", "metric", "threshold", "published", "ours", "status")


def published_vs_ours(
    results: pd.DataFrame, paper: str = reference.PAPER_FAILURE, tables: Sequence[str] = FAILURE_MODE_TABLES
) -> pd.DataFrame:
    """Each published cell of ``tables`` beside the same figure computed from ``results``.

    Args:
        results: runner output, one row per (model, pair) with at least :data:`core.constants.RESULT_COLUMNS`;
            each table reads the rows of the suite its paper used. May be empty: every row is then published only.
        paper: ``"oov"`` or ``"failure"``.
        tables: table names of :data:`core.papers.reproduce.TABLES` for that paper, in the order wanted.

    Returns:
        A long DataFrame with :data:`VERSUS_COLUMNS`, one row per published cell that names a model, tables in the
        order given and cells in the paper's order: ``threshold`` is the failure rate's threshold (NaN for other
        metrics), ``ours`` is NaN where the model was not run (``status`` then says so, as in
        :func:`~core.papers.reproduce.compare_to_published`). Models the paper did not test have no row.

    Raises:
        ValueError: an unknown paper or table, or no table at all.
    """
    tables = list(tables)
    if not tables:
        raise ValueError("name at least one published table")
    known = reproduce.TABLES.get(paper, ())
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise ValueError(f"unknown table(s) {', '.join(map(repr, unknown))} for paper {paper!r}; known: {', '.join(known)}")
    parts = [reproduce.compare_to_published(results, paper, table) for table in tables]
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(reproduce.REPRODUCTION_COLUMNS))
    cells = long[(long["status"] != reproduce.STATUS_EXTRA) & (long["model"] != "")]
    return cells.rename(columns={"recomputed": "ours"})[list(VERSUS_COLUMNS)].reset_index(drop=True)
