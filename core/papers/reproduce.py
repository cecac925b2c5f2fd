"""Published figures next to the same figures recomputed from a run.

The two papers' tables (:mod:`core.papers.reference`) are matched cell by cell to
what :mod:`core.scoring.tables` computes from a runner results table.  Nothing here
computes a statistic of its own: each table has a small builder that calls
the analysis functions and names each recomputed number the way the
reference data names the published one (``model``, ``model_b``,
``category``, ``entity``, ``item``, ``metric``).

Matching rules:

* A results model maps to the paper's row of the same name, so the bundled
  ``sentence-transformers/all-MiniLM-L6-v2`` is the papers' MiniLM.
* A published row whose model was not run keeps its published value and a
  NaN recomputed value, status :data:`STATUS_NOT_RUN`.
* A model that was run but that the paper did not test gets recomputed-only
  rows for the cells the published table has, status :data:`STATUS_EXTRA`.
* ``difference = recomputed - published``; ``differs`` is
  ``|difference| > tolerance`` (False where either side is missing).

Statuses (column ``status``):

===================================== =====================================
``compared``                          both sides have a number
``published (model not run here)``    the paper's model was not run
``published (not recomputed)``        a label, model metadata, or a figure
                                      that needs more models than were run
                                      (``remark`` says which)
``recomputed only (model not in the   a model the paper did not test
paper)``
===================================== =====================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.models.registry import short_name
from core.papers import failure_modes, oov, reference
from core.scoring import tables

SECTION_EXAMPLES = "Section 4.6"
"""The failure paper's worked examples (not a numbered table)."""

STATUS_COMPARED = "compared"
STATUS_NOT_RUN = "published (model not run here)"
STATUS_NOT_RECOMPUTED = "published (not recomputed)"
STATUS_EXTRA = "recomputed only (model not in the paper)"

KEYS = ("model", "model_b", "category", "entity", "item", "metric")
REPRODUCTION_COLUMNS = (
    "paper",
    "table",
    *KEYS,
    "threshold",
    "published",
    "published_text",
    "recomputed",
    "recomputed_text",
    "difference",
    "differs",
    "status",
    "note",
    "remark",
)

DEFAULT_TOLERANCE = 0.02

# Why a published figure has no recomputed counterpart, by metric.
_NOT_RECOMPUTABLE = {
    "parameters": "model metadata, not measured",
    "dimensions": "model metadata, not measured",
    "layers": "model metadata, not measured",
    "vocab_size": "model metadata, not measured",
    "downloads": "model metadata, not measured",
    "interpretation": "a verbal label",
}

# ------------------------------------------------------------------ builders


def _row(
    metric: str, value: float, *, model: str = "", model_b: str = "", category: str = "", entity: str = "", item: str = "", text: str = ""
) -> dict:
    return {
        "model": model,
        "model_b": model_b,
        "category": category,
        "entity": entity,
        "item": item,
        "metric": metric,
        "recomputed": float(value),
        "recomputed_text": text,
    }


def _long(
    frame: pd.DataFrame,
    metrics: Mapping[str, str],
    *,
    category: str | None = None,
    category_col: str | None = None,
    entity_col: str | None = None,
) -> list[dict]:
    """Rows ``metric -> value`` from a per-model analysis table (column -> metric)."""
    rows = []
    for rec in frame.to_dict("records"):
        for col, metric in metrics.items():
            rows.append(
                _row(
                    metric,
                    rec[col],
                    model=rec[constants.COL_MODEL],
                    category=rec[category_col] if category_col else (category or ""),
                    entity=rec[entity_col] if entity_col else "",
                )
            )
    return rows


def _oov_parts(results: pd.DataFrame, reading: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    dyn = oov.baseline_ranges(results)
    deltas = oov.oov_deltas(results, reading, dyn)
    summary = oov.oov_summary(deltas, dyn)
    summary = summary.assign(range_delta=summary["max_delta"] - summary["min_delta"]) if not summary.empty else summary
    return dyn, deltas, summary


# One builder per published table: (results, published rows, reading, token counts) -> recomputed rows. Each maps one
# analysis onto the paper's metric names; the builders share a shape, not logic.
Builder = Callable[[pd.DataFrame, pd.DataFrame, str, Mapping[str, int] | None], list[dict]]


def _baseline_categories(results: pd.DataFrame) -> pd.DataFrame:
    return tables.category_summary(tables.rows_of_suite(results, constants.SUITE_BASELINE))


def _oov_table3(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    cats = _baseline_categories(results)
    cats = cats[cats[constants.COL_CATEGORY] == constants.CAT_ENTITY_SWAP]
    return _long(cats, {"mean": "mean_cosine", "sd": "sd_cosine"}, category_col=constants.COL_CATEGORY)


def _oov_table12(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    return _long(_baseline_categories(results), {"mean": "mean_cosine"}, category_col=constants.COL_CATEGORY)


def _oov_table11(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    corr = oov.jaccard_correlation(tables.rows_of_suite(results, constants.SUITE_BASELINE))
    return _long(corr, {"pearson_r": "pearson_r", "spearman_rho": "spearman_rho"})


def _oov_table4(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, _, summary = _oov_parts(results, reading)
    metrics = {m: m for m in ("mean_delta", "sd_delta", "min_delta", "max_delta", "range_delta")}
    return _long(summary, metrics, category=constants.CAT_OOV) if not summary.empty else []


def _oov_table5(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    dyn, _, summary = _oov_parts(results, reading)
    if summary.empty:
        return []
    return [
        *_long(dyn, {"mean_positive": "mean_positive"}, category=constants.CAT_POSITIVE),
        *_long(dyn, {"mean_negative": "mean_negative"}, category=constants.CAT_NEGATIVE),
        *_long(dyn, {"dynamic_range": "dynamic_range"}),
        *_long(
            summary,
            {"mean_delta": "mean_delta", "normalized_mean": "normalized_mean_delta", "normalized_max": "normalized_max_delta"},
            category=constants.CAT_OOV,
        ),
    ]


def _oov_table8(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, _, summary = _oov_parts(results, reading)
    metrics = {"mean_delta": "mean_delta", "normalized_mean": "normalized_mean_delta"}
    return _long(summary, metrics, category=constants.CAT_OOV) if not summary.empty else []


def _oov_normalized(with_means: bool) -> Builder:
    """Table 6 (per-entity normalized deltas), and Table C1 (the same with each model's normalized mean)."""

    def build(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
        _, deltas, summary = _oov_parts(results, reading)
        if summary.empty:
            return []
        rows = _long(deltas, {"normalized_delta": "normalized_delta"}, category=constants.CAT_OOV, entity_col=constants.COL_ENTITY)
        if with_means:
            rows += _long(summary, {"normalized_mean": "normalized_mean_delta"}, category=constants.CAT_OOV)
        return rows

    return build


def _oov_tableA1(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, deltas, summary = _oov_parts(results, reading)
    if summary.empty:
        return []
    return _long(
        deltas,
        {"cosine_original": "original_cosine", "cosine_replaced": "modified_cosine", "delta": "delta"},
        category=constants.CAT_OOV,
        entity_col=constants.COL_ENTITY,
    )


def _oov_table9(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, deltas, summary = _oov_parts(results, reading)
    if summary.empty:
        return []
    rows = _long(deltas, {"delta": "delta"}, category=constants.CAT_OOV, entity_col=constants.COL_ENTITY)
    minilm = deltas[deltas[constants.COL_MODEL] == reference.MODEL_MINILM]
    if not minilm.empty:
        ranks = minilm["delta"].rank(ascending=False, method="min")
        rows += [_row("rank", r, category=constants.CAT_OOV, entity=e) for e, r in zip(minilm[constants.COL_ENTITY], ranks, strict=True)]
    if token_counts:
        items = results.loc[
            results[constants.COL_SUITE] == constants.SUITE_OOV, [constants.COL_ENTITY, constants.COL_REPLACEMENT]
        ].drop_duplicates()
        for ent, rep in zip(items[constants.COL_ENTITY], items[constants.COL_REPLACEMENT], strict=True):
            if ent in token_counts and rep in token_counts:
                arrow = f"{token_counts[ent]}→{token_counts[rep]}"
                rows.append(_row("original_n_tokens", token_counts[ent], category=constants.CAT_OOV, entity=ent, text=arrow))
                rows.append(_row("replacement_n_tokens", token_counts[rep], category=constants.CAT_OOV, entity=ent, text=arrow))
    return rows


def _oov_table10(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, deltas, summary = _oov_parts(results, reading)
    if summary.empty:
        return []
    counts = dict(token_counts) if token_counts else table2_token_counts()
    groups = oov.oov_by_original_tokens(deltas, counts)
    names = {"single-token": "single_token_mean_delta", "multi-token": "multi_token_mean_delta"}
    return [
        _row(names[g], v, model=m, category=constants.CAT_OOV)
        for m, g, v in zip(groups[constants.COL_MODEL], groups["group"], groups["mean_delta"], strict=True)
    ]


def _oov_table7(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    _, deltas, summary = _oov_parts(results, reading)
    if summary.empty:
        return []
    matrix = oov.cohens_d_matrix(deltas)
    models = list(matrix.index)
    pub_pairs = set(zip(published["model"], published["model_b"], strict=True))
    rows = []
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            first, second = (b, a) if (b, a) in pub_pairs else (a, b)
            rows.append(_row("cohens_d", matrix.loc[first, second], model=first, model_b=second, category=constants.CAT_OOV))
    return rows


def _nothing(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    """Model metadata (parameters, dimensions, layers): published only, nothing here measures it."""
    return []


def _failure_table1(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    return _long(tables.category_summary(results), {"mean": "mean_cosine", "sd": "sd_cosine"}, category_col=constants.COL_CATEGORY)


def _failure_rates(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    """Table 2 and Appendix B: failure rates at each threshold the published rows carry."""
    rows = []
    for threshold in sorted(set(published["threshold"].dropna())):
        modes = failure_modes.failure_mode_table(results, threshold=threshold)
        rows += _long(modes, {"failure_rate": "failure_rate"}, category_col=constants.COL_CATEGORY)
    return rows


def _failure_table5(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    return _long(failure_modes.failure_mode_table(results), {"cohens_d": "cohens_d"}, category_col=constants.COL_CATEGORY)


def _failure_table3(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    rows = []
    for rec in failure_modes.severity_ranking(results).to_dict("records"):
        for col, metric in (("avg_similarity", "avg_similarity"), ("severity_ratio", "severity_ratio"), ("rank", "severity_rank")):
            rows.append(_row(metric, rec[col], category=rec[constants.COL_CATEGORY]))
    return rows


def _failure_table4(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    rows = []
    for rec in failure_modes.vulnerability_ranking(results).to_dict("records"):
        model = rec[constants.COL_MODEL]
        rows.append(_row("vulnerability_score", rec["score"], model=model))
        rows.append(_row("vulnerability_rank", rec["rank"], model=model))
        rows.append(_row("most_vulnerable_failure_mode", math.nan, model=model, text=rec["modes_ranked_first"] or "none ranked first"))
    return rows


def _failure_appendix_a(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    rows = []
    for rec in failure_modes.kruskal_by_category(results).to_dict("records"):
        rows.append(_row("kruskal_h", rec["h"], category=rec[constants.COL_CATEGORY]))
        rows.append(_row("kruskal_p", rec["p"], category=rec[constants.COL_CATEGORY]))
    return rows


def _failure_examples(results: pd.DataFrame, published: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> list[dict]:
    rows: list[dict] = []
    if results.empty:
        return rows
    for rec in published.drop_duplicates("item").to_dict("records"):
        text_a, text_b = rec["_text_a"], rec["_text_b"]
        hits = results[(results[constants.COL_TEXT_A] == text_a) & (results[constants.COL_TEXT_B] == text_b)].drop_duplicates(
            constants.COL_MODEL
        )
        for model, cos in zip(hits[constants.COL_MODEL], hits[constants.COL_COSINE], strict=True):
            rows.append(_row("cosine", cos, model=model, category=rec["category"], item=rec["item"]))
    return rows


def example_item(text_a: str, text_b: str) -> str:
    """How a Section 4.6 example pair is named in the ``item`` column."""
    return f"“{text_a}” vs “{text_b}”"


def _examples(paper: str, table: str) -> pd.DataFrame:
    """The failure paper's worked examples in the comparison layout, their texts kept to find them in a run."""
    ex = reference.load_failure_examples()
    return pd.DataFrame(
        {
            "paper": paper,
            "table": table,
            "model": ex["model"],
            "model_b": "",
            "category": ex["category"],
            "entity": "",
            "item": [example_item(a, b) for a, b in zip(ex["text_a"], ex["text_b"], strict=True)],
            "metric": "cosine",
            "value": ex["published_cosine"],
            "value_text": "",
            "threshold": np.nan,
            "note": ex["note"],
            "_text_a": ex["text_a"],
            "_text_b": ex["text_b"],
        }
    )


def _table_rows(paper: str, table: str) -> pd.DataFrame:
    """A numbered table's published rows in the comparison layout (``item`` added)."""
    return reference.published_table(paper, table).assign(item="")


@dataclass(frozen=True)
class PaperTable:
    """One published table of a paper, its behaviour on the record (adding a table is its builder and one of these).

    Attributes:
        paper: the paper's key (``oov``, ``failure``).
        name: as the paper names it (``Table 4``, ``Appendix A``, ``Section 4.6``).
        title: what it shows, in a phrase.
        recompute: (results, published rows, OOV reading, token counts) -> recomputed rows (:data:`Builder`).
        published: (paper, name) -> its published rows in the comparison layout.
        suite: the suite whose rows it reads (None: every row, each builder picks its suites).
        threshold: the cosine threshold it is published at (its rates are recomputed at it), or None.
        needs_two_models: it compares models, so a recomputed cell needs at least two run.
        averages_models: its figure is over the models run (a ranking or a test across them), not the paper's.
        oov_deltas: it is built on OOV deltas, so the reading of the invented word matters.
        token_counts: it reads tokenizer counts (``shown``: as columns; ``split``: to split entities, Table 2's by default).
    """

    paper: str
    name: str
    title: str
    recompute: Builder
    published: Callable[[str, str], pd.DataFrame] = _table_rows
    suite: str | None = None
    threshold: float | None = None
    needs_two_models: bool = False
    averages_models: bool = False
    oov_deltas: bool = False
    token_counts: str = ""

    @property
    def label(self) -> str:
        """``"Table 4 — OOV sensitivity (raw cosine deltas)"``."""
        return f"{self.name} — {self.title}"

    @property
    def depends_on_models_run(self) -> bool:
        """Its recomputed value compares or averages models, so it depends on which were run."""
        return self.averages_models or self.needs_two_models


_OOV = reference.PAPER_OOV
_FAILURE = reference.PAPER_FAILURE
_FAILURE_SUITE = constants.SUITE_FAILURE_MODES

PAPER_TABLES: tuple[PaperTable, ...] = (
    PaperTable(_OOV, "Table 3", "Entity swap cosine similarity", _oov_table3),
    PaperTable(_OOV, "Table 4", "OOV sensitivity (raw cosine deltas)", _oov_table4, oov_deltas=True),
    PaperTable(_OOV, "Table 5", "Normalized OOV sensitivity and dynamic range", _oov_table5, oov_deltas=True),
    PaperTable(_OOV, "Table 6", "Per-entity normalized deltas (selected entities)", _oov_normalized(False), oov_deltas=True),
    PaperTable(_OOV, "Table 7", "Cohen's d between models on OOV deltas", _oov_table7, needs_two_models=True, oov_deltas=True),
    PaperTable(_OOV, "Table 8", "Model size and OOV sensitivity", _oov_table8, oov_deltas=True),
    PaperTable(_OOV, "Table 9", "Raw OOV delta by entity", _oov_table9, oov_deltas=True, token_counts="shown"),
    PaperTable(_OOV, "Table 10", "OOV delta by original token count", _oov_table10, oov_deltas=True, token_counts="split"),
    PaperTable(_OOV, "Table 11", "Token Jaccard vs cosine correlation", _oov_table11),
    PaperTable(_OOV, "Table 12", "Mean cosine by baseline category", _oov_table12),
    PaperTable(_OOV, "Table A1", "Full OOV delta matrix", _oov_tableA1, oov_deltas=True),
    PaperTable(_OOV, "Table C1", "Full normalized OOV deltas", _oov_normalized(True), oov_deltas=True),
    PaperTable(_OOV, "Table 1", "Model characteristics", _nothing),
    PaperTable(_FAILURE, "Table 1", "Mean cosine (± SD) by model and category", _failure_table1, suite=_FAILURE_SUITE),
    PaperTable(_FAILURE, "Table 2", "Retrieval failure rate at 0.7", _failure_rates, suite=_FAILURE_SUITE, threshold=0.7),
    PaperTable(_FAILURE, "Table 3", "Failure mode severity ranking", _failure_table3, suite=_FAILURE_SUITE, averages_models=True),
    PaperTable(
        _FAILURE,
        "Table 4",
        "Model vulnerability ranking",
        _failure_table4,
        suite=_FAILURE_SUITE,
        needs_two_models=True,
        averages_models=True,
    ),
    PaperTable(_FAILURE, "Table 5", "Cohen's d, failure mode vs positive controls", _failure_table5, suite=_FAILURE_SUITE),
    PaperTable(
        _FAILURE,
        "Appendix A",
        "Kruskal-Wallis H across models",
        _failure_appendix_a,
        suite=_FAILURE_SUITE,
        needs_two_models=True,
        averages_models=True,
    ),
    PaperTable(_FAILURE, "Appendix B", "Retrieval failure rate at 0.8", _failure_rates, suite=_FAILURE_SUITE, threshold=0.8),
    PaperTable(_FAILURE, SECTION_EXAMPLES, "Selected worst-case examples", _failure_examples, published=_examples, suite=_FAILURE_SUITE),
    PaperTable(_FAILURE, "Section 3.1", "Models tested", _nothing),
)
"""Every published table, one record each, in the Papers page's menu order (model-metadata tables last)."""

TABLES: dict[str, tuple[str, ...]] = {
    paper: tuple(t.name for t in PAPER_TABLES if t.paper == paper) for paper in dict.fromkeys(t.paper for t in PAPER_TABLES)
}
"""Each paper's table names, in menu order (from :data:`PAPER_TABLES`)."""


def paper_table(paper: str, table: str) -> PaperTable:
    """The record of one published table.

    Raises:
        ValueError: a paper or table no record names (the message lists the paper's tables).
    """
    for record in PAPER_TABLES:
        if record.paper == paper and record.name == table:
            return record
    raise ValueError(f"unknown table {table!r} for paper {paper!r}; known: {', '.join(TABLES.get(paper, ()))}")


def table_title(paper: str, table: str) -> str:
    """``"Table 4 — OOV sensitivity (raw cosine deltas)"``; the name alone for a table no record names."""
    try:
        return paper_table(paper, table).label
    except ValueError:
        return table


def table2_token_counts() -> dict[str, int]:
    """Word -> subword count for the OOV entities and replacements as Table 2 prints them."""
    ent = reference.load_oov_entities()
    out = dict(zip(ent["entity"], ent["original_n_tokens"].astype(int), strict=True))
    out.update(zip(ent["replacement"], ent["replacement_n_tokens"].astype(int), strict=True))
    return out


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=list(REPRODUCTION_COLUMNS))


def compare_to_published(
    results: pd.DataFrame,
    paper: str,
    table: str,
    tolerance: float = DEFAULT_TOLERANCE,
    reading: str = constants.OOV_DEFAULT_READING,
    token_counts: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """One published table next to the same figures recomputed from ``results``.

    Args:
        results: runner output (any suites; each table uses the suite the
            paper used: baseline/oov for the OOV paper, failure-modes for
            the failure paper). May be empty: every row is then published
            only.
        paper: ``"oov"`` or ``"failure"``.
        table: a name from :data:`TABLES` (``"Section 4.6"`` is the failure
            paper's worked examples).
        tolerance: ``differs`` marks cells with ``|difference| > tolerance``.
        reading: OOV variant the deltas use (``replaced_both`` or
            ``replaced_b``, see :data:`core.constants.OOV_READINGS`).
        token_counts: word -> subword count from a tokenizer, for Table 9's
            token columns and Table 10's single/multi split; None uses
            Table 2's printed counts for Table 10 and leaves Table 9's
            token columns unrecomputed.

    Returns:
        DataFrame with :data:`REPRODUCTION_COLUMNS`: published rows in the paper's
        order, then recomputed-only rows of models the paper did not test.

    Raises:
        ValueError: unknown paper or table, or a reading that is not an OOV
            variant.
    """
    record = paper_table(paper, table)
    if reading not in constants.OOV_READINGS:
        raise ValueError(f"reading must be one of {', '.join(constants.OOV_READINGS)}, got {reading!r}")
    published = record.published(paper, table)
    results = results if results is not None else pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    run_models = set(results[constants.COL_MODEL]) if not results.empty else set()
    if results.empty:
        rec_rows: list[dict] = []
    else:
        scored = tables.rows_of_suite(results, record.suite) if record.suite else results
        rec_rows = record.recompute(scored, published, reading, token_counts)
    recomputed = pd.DataFrame(rec_rows, columns=[*KEYS, "recomputed", "recomputed_text"])
    recomputed = recomputed.drop_duplicates(list(KEYS))

    pub = published.drop(columns=[c for c in ("_text_a", "_text_b") if c in published.columns])
    pub = pub.rename(columns={"value": "published", "value_text": "published_text"})
    pub["_order"] = range(len(pub))
    merged = pub.merge(recomputed, on=list(KEYS), how="outer", indicator=True)
    paper_models = set(reference.MODELS_BY_PAPER[paper])
    cell_keys = set(zip(pub["category"], pub["entity"], pub["item"], pub["metric"], strict=True))
    in_cells = [k in cell_keys for k in zip(merged["category"], merged["entity"], merged["item"], merged["metric"], strict=True)]
    extra_model = ~merged["model"].isin(paper_models) | (merged["model_b"].ne("") & ~merged["model_b"].isin(paper_models))
    keep = (merged["_merge"] != "right_only") | (pd.Series(in_cells, index=merged.index) & extra_model & merged["model"].ne(""))
    merged = merged[keep].copy()
    if merged.empty:
        return _empty()

    merged["paper"] = paper
    merged["table"] = table
    for col in ("published_text", "recomputed_text", "note"):
        merged[col] = merged[col].fillna("")
    merged["difference"] = merged["recomputed"] - merged["published"]
    merged["differs"] = (merged["difference"].abs() > tolerance).fillna(False).astype(bool)

    def status(row) -> tuple[str, str]:
        if row["_merge"] == "right_only":
            return STATUS_EXTRA, ""
        needed = [m for m in (row["model"], row["model_b"]) if m]
        if any(m not in run_models for m in needed):
            return STATUS_NOT_RUN, ""
        has_recomputed = not pd.isna(row["recomputed"]) or row["recomputed_text"] != ""
        if not has_recomputed:
            return STATUS_NOT_RECOMPUTED, _why_not(record, row["metric"], results, token_counts)
        if pd.isna(row["published"]) and row["published_text"] and not row["recomputed_text"]:
            return STATUS_COMPARED, f"the paper printed {row['published_text']!r}, no number"
        return STATUS_COMPARED, ""

    pairs = [status(r) for r in merged.to_dict("records")]
    merged["status"] = [p[0] for p in pairs]
    merged["remark"] = [p[1] for p in pairs]
    context = _context_remark(record, results, reading, token_counts)
    if context:
        has_rec = merged["status"].isin([STATUS_COMPARED, STATUS_EXTRA])
        if record.oov_deltas:
            has_rec &= merged["category"] == constants.CAT_OOV  # the reading only matters for OOV deltas
        merged.loc[has_rec, "remark"] = [f"{r}; {context}" if r else context for r in merged.loc[has_rec, "remark"]]
    merged = merged.sort_values(["_order", "model", "model_b"], na_position="last", kind="stable")
    return merged[list(REPRODUCTION_COLUMNS)].reset_index(drop=True)


def _why_not(record: PaperTable, metric: str, results: pd.DataFrame, token_counts: Mapping[str, int] | None) -> str:
    if metric in _NOT_RECOMPUTABLE:
        return _NOT_RECOMPUTABLE[metric]
    n_models = results[constants.COL_MODEL].nunique() if not results.empty else 0
    if record.needs_two_models and n_models < 2:
        return "needs at least two models run"
    if metric == "rank":
        return "ranked by MiniLM's delta; MiniLM was not run"
    if metric in ("original_n_tokens", "replacement_n_tokens") and not token_counts:
        return "no tokenizer counts given"
    return "not in the results (suite not run?)"


def _context_remark(record: PaperTable, results: pd.DataFrame, reading: str, token_counts: Mapping[str, int] | None) -> str:
    """What a reader must know to compare the recomputed numbers fairly."""
    parts = []
    if record.oov_deltas:
        parts.append(constants.OOV_READINGS[reading])
    if record.token_counts == "split":
        parts.append("original token counts from the given tokenizer" if token_counts else "original token counts from Table 2")
    if record.averages_models and not results.empty:
        parts.append(f"over the {results[constants.COL_MODEL].nunique()} model(s) run here, not the paper's four")
    return "; ".join(parts)


def comparison_counts(comparison: pd.DataFrame) -> dict[str, int]:
    """Rows per status plus ``differs`` (compared cells beyond the tolerance)."""
    counts = {s: int((comparison["status"] == s).sum()) for s in (STATUS_COMPARED, STATUS_NOT_RUN, STATUS_NOT_RECOMPUTED, STATUS_EXTRA)}
    counts["differs"] = int(comparison["differs"].sum()) if not comparison.empty else 0
    return counts


# ------------------------------------------------- published columns beside ours


def published_alongside(
    ours: pd.DataFrame, paper: str, columns: Mapping[str, tuple[str, str]], keys: Sequence[str] = (constants.COL_MODEL,)
) -> pd.DataFrame:
    """An analysis table with the paper's value of each mapped column beside it.

    Args:
        ours: an analysis table with a ``model`` column (and the other
            ``keys``, e.g. ``category`` or ``entity``).
        paper: ``"oov"`` or ``"failure"``.
        columns: our column -> (published table, metric), e.g.
            ``{"mean_delta": ("Table 4", "mean_delta")}``.
        keys: columns identifying a row in both tables.

    Returns:
        ``ours`` with a ``source`` column (``"recomputed"``) and, right after
        each mapped column ``c``, a column ``"c (published)"`` (NaN where the
        paper has no such row), followed by rows for the paper's models that are not in
        ``ours``: source :data:`STATUS_NOT_RUN`, our columns NaN, published
        columns filled.
    """
    keys = list(keys)
    ref = reference.load_reference(paper)
    pub_wide: pd.DataFrame | None = None
    for col, (table, metric) in columns.items():
        rows = ref[(ref["table"] == table) & (ref["metric"] == metric)]
        part = rows[keys + ["value"]].drop_duplicates(keys).rename(columns={"value": f"{col} (published)"})
        pub_wide = part if pub_wide is None else pub_wide.merge(part, on=keys, how="outer")
    out = ours.copy()
    out.insert(list(out.columns).index(constants.COL_MODEL) + 1, "source", "recomputed")
    if pub_wide is None:
        return out.reset_index(drop=True)
    pub_wide = pub_wide[pub_wide[constants.COL_MODEL] != ""]
    out = out.merge(pub_wide, on=keys, how="left")
    order = [c for c in out.columns if not c.endswith(" (published)")]
    for col in reversed(list(columns)):
        order.insert(order.index(col) + 1 if col in order else len(order), f"{col} (published)")
    out = out[order]
    ours_models = set(ours[constants.COL_MODEL])
    missing = pub_wide[~pub_wide[constants.COL_MODEL].isin(ours_models)].copy()
    if not missing.empty:
        paper_order = {m: i for i, m in enumerate(reference.MODELS_BY_PAPER[paper])}
        missing = missing.sort_values(constants.COL_MODEL, key=lambda s: s.map(paper_order), kind="stable")
        missing["source"] = STATUS_NOT_RUN
        out = pd.concat([out, missing], ignore_index=True)
    return out.reset_index(drop=True)


def reproduction_findings(comparison: pd.DataFrame, tolerance: float) -> list[str]:
    """How many published cells reproduce within the tolerance, and the largest gap (Papers).

    Args:
        comparison: :func:`compare_to_published` output (status, published, recomputed, difference, differs, the keys).
        tolerance: the tolerance the comparison used.

    Returns:
        One sentence; empty when no cell has both a published and a recomputed number.
    """
    numbers = (
        comparison[(comparison["status"] == STATUS_COMPARED) & comparison["difference"].notna()] if not comparison.empty else comparison
    )
    if numbers.empty:
        return []
    within = int((~numbers["differs"].astype(bool)).sum())
    gap = numbers.iloc[int(numbers["difference"].abs().to_numpy(float).argmax())]
    # plain words: short model names, category labels, "mean cosine" for the paper's mean_cosine
    words: dict[str, Callable[[str], str]] = {
        "model": short_name,
        "model_b": short_name,
        "metric": lambda m: m.replace("_", " "),
        "category": lambda c: str(lexicon.CATEGORY_LABELS.get(c, c)).lower(),
    }
    cell = [words.get(k, str)(gap[k]) for k in KEYS if isinstance(gap[k], str) and gap[k]]
    return [
        f"{within} of {len(numbers)} published cells reproduce within {tolerance:.3f}; the largest gap is "
        f"{gap['difference']:+.4f} ({', '.join(cell)})."
    ]
