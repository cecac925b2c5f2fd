"""Published figures from the two source papers, as tidy tables.

The numbers the explorer compares a run against live in ``data/reference/``,
transcribed from the papers' results tables:

* ``oov_paper.csv``: "Out-of-Vocabulary Robustness in Sentence Embeddings"
  (the OOV paper), Tables 1, 3-12, A1 and C1.
* ``failure_paper.csv``: "When Cosine Similarity Lies" (the failure paper),
  the Section 3.1 model table, Tables 1-5, Appendix A (Kruskal-Wallis) and
  Appendix B (failure rates at 0.8).
* ``oov_entities.csv``: OOV paper Table 2, one row per entity: ``entity``,
  ``replacement``, ``original_tokens`` and ``replacement_tokens`` (the
  WordPiece split as printed, space-separated, e.g. ``"pen ##ici ##llin"``),
  ``original_n_tokens``, ``replacement_n_tokens`` and ``note``.
* ``failure_examples.csv``: failure paper Section 4.6, 8 pairs x 4 models:
  ``pair_id`` (``ex-neg-1`` ...), ``category``, ``text_a``, ``text_b``
  (verbatim), ``model``, ``published_cosine``, ``section_heading``, ``note``.

The two table files share one long schema, one published value per row:

========== ===============================================================
column     meaning
========== ===============================================================
paper      ``"oov"`` or ``"failure"``
table      as the paper names it: ``"Table 4"``, ``"Table A1"``,
           ``"Appendix B"``, ``"Section 3.1"``
model      Hugging Face id; ``""`` for model-free rows (e.g. the failure
           paper's Table 3, which averages over models)
model_b    second model of a pairwise comparison (OOV Table 7), else ``""``
category   a category of :mod:`core.constants` (``negation`` ...
           ``near_miss``, and ``oov`` for OOV-delta figures), else ``""``
entity     original entity of an OOV row (``"Google"``), else ``""``
metric     snake_case name of the figure: ``mean_cosine``, ``delta``,
           ``normalized_delta``, ``cohens_d``, ``failure_rate`` ...
value      float; percentages are stored as fractions (100.0% -> 1.0)
value_text the printed cell when it is not a plain number (``"< 0.001"``,
           ``"Very large"``, ``"~22M"``); ``""`` otherwise. ``value`` is NaN
           only where the cell has no number, and then ``value_text`` says
           what was printed
threshold  retrieval threshold of a ``failure_rate`` row (0.7 or 0.8), else
           NaN
note       source slips and reproduction remarks, recorded rather than
           corrected: garbled rows, cells that disagree between tables,
           prose that contradicts a table
========== ===============================================================

Text columns are read as strings with ``""`` for empty cells (never NaN), so
filters like ``df[df.model == ""]`` work.
"""

from __future__ import annotations

import pandas as pd

from core import constants, lexicon, paths

REFERENCE_DIR = paths.REFERENCE_DIR

PAPER_OOV = "oov"
PAPER_FAILURE = "failure"
PAPER_FILES = {
    PAPER_OOV: "oov_paper.csv",
    PAPER_FAILURE: "failure_paper.csv",
}
ENTITIES_FILE = "oov_entities.csv"
EXAMPLES_FILE = "failure_examples.csv"

TABLE_COLUMNS = (
    "paper",
    "table",
    "model",
    "model_b",
    "category",
    "entity",
    "metric",
    "value",
    "value_text",
    "threshold",
    "note",
)
_NUMERIC_COLUMNS = ("value", "threshold")

ENTITY_COLUMNS = (
    "entity",
    "replacement",
    "original_tokens",
    "replacement_tokens",
    "original_n_tokens",
    "replacement_n_tokens",
    "note",
)
EXAMPLE_COLUMNS = (
    "pair_id",
    "category",
    "text_a",
    "text_b",
    "model",
    "published_cosine",
    "section_heading",
    "note",
)

MODEL_MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_BGE = "BAAI/bge-large-en-v1.5"
MODEL_NOMIC = "nomic-ai/nomic-embed-text-v1.5"
MODEL_GTE = "thenlper/gte-large"
MODEL_MXBAI = "mixedbread-ai/mxbai-embed-large-v1"

# Short names the papers print, for labels and legends.
MODEL_SHORT_NAMES = {
    MODEL_MINILM: "MiniLM",
    MODEL_BGE: "BGE",
    MODEL_NOMIC: "Nomic",
    MODEL_GTE: "GTE",
    MODEL_MXBAI: "MxBAI",
}
MODELS_BY_PAPER = {
    PAPER_OOV: (MODEL_MINILM, MODEL_BGE, MODEL_NOMIC, MODEL_GTE),
    PAPER_FAILURE: (MODEL_MINILM, MODEL_BGE, MODEL_NOMIC, MODEL_MXBAI),
}

WIDE_INDEXES = ("category", "entity", "metric")
# Column holding model-free rows (e.g. failure paper Table 3) in published_wide.
MODEL_FREE_COLUMN = "value"

REFERENCE_CATEGORIES = (*lexicon.PAPER_MODES, *constants.CONTROLS, constants.CAT_OOV)


def _check_paper(paper: str) -> str:
    """Return ``paper`` if it is a known paper key, else raise ValueError."""
    if paper not in PAPER_FILES:
        raise ValueError(f"unknown paper {paper!r}; known papers: {', '.join(PAPER_FILES)}")
    return paper


def published_tables(paper: str) -> tuple[str, ...]:
    """The tables a paper's file holds, in source order: the data names them, nothing here lists them again.

    Raises:
        ValueError: an unknown paper.
    """
    return tuple(dict.fromkeys(load_reference(paper)["table"]))


def _check_table(paper: str, table: str) -> str:
    """Return ``table`` if ``paper`` has it, else raise naming the known tables."""
    known = published_tables(_check_paper(paper))
    if table not in known:
        raise ValueError(f"unknown table {table!r} for paper {paper!r}; known tables: {', '.join(known)}")
    return table


def _read_text_csv(name: str) -> pd.DataFrame:
    """Read a reference CSV with every column as text and ``""`` for empty cells."""
    path = REFERENCE_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"reference data file missing: {path}")
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _to_float(column: pd.Series) -> pd.Series:
    """Convert a text column to float64, ``""`` becoming NaN."""
    return pd.to_numeric(column.where(column != ""), errors="raise").astype("float64")


def _read_table_file(paper: str) -> pd.DataFrame:
    """One paper's long table, columns in :data:`TABLE_COLUMNS` order, dtypes set."""
    df = _read_text_csv(PAPER_FILES[paper])
    missing = [col for col in TABLE_COLUMNS if col not in df.columns]
    if missing:
        raise ValueError(f"{PAPER_FILES[paper]} lacks columns: {', '.join(missing)}")
    df = df[list(TABLE_COLUMNS)].copy()
    for col in _NUMERIC_COLUMNS:
        df[col] = _to_float(df[col])
    return df


def load_reference(paper: str | None = None) -> pd.DataFrame:
    """Load the published figures of one paper or both, in the long schema.

    Args:
        paper: ``"oov"``, ``"failure"``, or None for both (OOV rows first).

    Returns:
        DataFrame with the columns of :data:`TABLE_COLUMNS`; ``value`` and
        ``threshold`` are float64, every other column is text with ``""``
        for empty cells.

    Raises:
        ValueError: If ``paper`` is not a known paper key.
        FileNotFoundError: If a reference CSV is missing.
    """
    papers = list(PAPER_FILES) if paper is None else [_check_paper(paper)]
    frames = [_read_table_file(p) for p in papers]
    return pd.concat(frames, ignore_index=True)


def load_oov_entities() -> pd.DataFrame:
    """Load OOV paper Table 2: the 20 entities, replacements and their WordPiece splits.

    Returns:
        DataFrame with the columns of :data:`ENTITY_COLUMNS`; the two
        ``*_n_tokens`` columns are int64, the rest text.

    Raises:
        FileNotFoundError: If the CSV is missing.
    """
    df = _read_text_csv(ENTITIES_FILE)[list(ENTITY_COLUMNS)].copy()
    for col in ("original_n_tokens", "replacement_n_tokens"):
        df[col] = df[col].astype("int64")
    return df


def load_failure_examples() -> pd.DataFrame:
    """Load the failure paper's Section 4.6 example pairs with their published cosines.

    Returns:
        DataFrame with the columns of :data:`EXAMPLE_COLUMNS`, one row per
        pair and model (8 pairs x 4 models); ``published_cosine`` is float64.

    Raises:
        FileNotFoundError: If the CSV is missing.
    """
    df = _read_text_csv(EXAMPLES_FILE)[list(EXAMPLE_COLUMNS)].copy()
    df["published_cosine"] = _to_float(df["published_cosine"])
    return df


def published_table(paper: str, table: str) -> pd.DataFrame:
    """Rows of one published table, in the long schema.

    Args:
        paper: ``"oov"`` or ``"failure"``.
        table: A table name from :func:`published_tables` for that paper.

    Returns:
        The table's rows with a fresh index, in source order.

    Raises:
        ValueError: If the paper or table is unknown (the message lists the
            known ones).
    """
    df = load_reference(_check_paper(paper))
    if table not in set(df["table"]):
        _check_table(paper, table)  # raises, naming the paper's tables
    return df[df["table"] == table].reset_index(drop=True)


def _check_metric(rows: pd.DataFrame, paper: str, table: str, metric: str) -> None:
    """Raise ValueError unless ``metric`` occurs in the table's rows."""
    metrics = list(dict.fromkeys(rows["metric"]))
    if metric not in metrics:
        raise ValueError(f"metric {metric!r} not in {paper} {table}; its metrics: {', '.join(metrics)}")


def _column_order(paper: str, columns: pd.Series) -> list[str]:
    """Models present in ``columns``, in :data:`MODELS_BY_PAPER` order, model-free last."""
    present = set(columns)
    ordered = [m for m in MODELS_BY_PAPER[paper] if m in present]
    return ordered + [MODEL_FREE_COLUMN] * (MODEL_FREE_COLUMN in present)


def published_wide(paper: str, table: str, metric: str | None, index: str = "category") -> pd.DataFrame:
    """Pivot one published table to ``index`` x model, values = ``value``.

    Rows keep the paper's order of first appearance; columns follow
    :data:`MODELS_BY_PAPER` (MiniLM, BGE, then Nomic and GTE or MxBAI) whatever
    order the source table printed them in. Rows without a model
    (model-free figures) form a last column named :data:`MODEL_FREE_COLUMN`.

    Args:
        paper: ``"oov"`` or ``"failure"``.
        table: A table name from :func:`published_tables` for that paper.
        metric: The metric to pivot; None keeps every metric, which only makes
            sense with ``index="metric"``.
        index: ``"category"``, ``"entity"`` or ``"metric"``.

    Returns:
        Wide float DataFrame, index named ``index``, columns = model ids.

    Raises:
        ValueError: On an unknown paper, table, metric or index, or if the
            selection holds two values for one cell (e.g. pivoting Table 7,
            which has two models per row, or a table by the wrong index).
    """
    if index not in WIDE_INDEXES:
        raise ValueError(f"index must be one of {', '.join(WIDE_INDEXES)}, got {index!r}")
    rows = published_table(paper, table)
    if metric is not None:
        _check_metric(rows, paper, table, metric)
        rows = rows[rows["metric"] == metric]
    elif index != "metric":
        raise ValueError("metric=None is only allowed with index='metric'")
    columns = rows["model"].replace("", MODEL_FREE_COLUMN)
    keys = pd.DataFrame({"row": rows[index], "col": columns, "value": rows["value"]})
    if keys.duplicated(["row", "col"]).any():
        raise ValueError(
            f"{paper} {table} has several values per ({index}, model) cell for metric {metric!r}; use published_table() instead"
        )
    wide = keys.pivot(index="row", columns="col", values="value")
    wide = wide.loc[list(dict.fromkeys(keys["row"])), _column_order(paper, keys["col"])]
    wide.index.name = index
    wide.columns.name = "model"
    return wide.astype("float64")
