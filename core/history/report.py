"""A run as one self-contained HTML file to share: findings in a sentence and a table, interactive charts, worst cases, settings.

The file opens offline: plotly.js is inlined once (from the installed
``plotly`` package), every other chart reuses it, and nothing is fetched.
Every text from the run (sentences, model ids, settings) is HTML-escaped.
:func:`report_html` builds it from a results table (the app's in-memory run);
:func:`run_report` from a stored run of the history (``cosine-probe report RUN_ID``).
"""

from __future__ import annotations

import html
import json
import platform
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import plotly
import plotly.graph_objects as go
import plotly.io as pio

from core import constants, lexicon
from core.models.registry import model_color, short_name
from core.scoring import findings, tables
from core.stats.rates import failure_rate

WORST_ROWS = 25
# Every report names its maker in its head, so `report --out` knows an earlier report (which it may replace) from any other file.
REPORT_MARKER = "<meta name='generator' content='cosine-probe report'>"
# Reports written before the marker say so in their first lines instead.
_OLD_MARKER = " · made by cosine-probe</p>"
_HEAD_BYTES = 64 * 1024
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2rem auto;\
padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.finding{font-size:1.1rem;background:#f3f6fb;border-left:4px solid #4a78c2;padding:.6rem 1rem;margin:.4rem 0}
table{border-collapse:collapse;width:100%;font-size:.9rem}\
th,td{border:1px solid #ddd;padding:.35rem .5rem;vertical-align:top;text-align:left}
th{background:#f5f5f5}td.num{text-align:right;white-space:nowrap}.meta{color:#666;font-size:.9rem}
"""


def _category_label(category: str) -> str:
    return lexicon.CATEGORY_LABELS.get(category, category)


def _bars(summary: pd.DataFrame, value: str, title: str, y_title: str, percent: bool) -> go.Figure:
    """One bar per model and category, each model in its app colour."""
    fig = go.Figure()
    for model, group in summary.groupby(constants.COL_MODEL, sort=False):
        model = str(model)
        fig.add_bar(
            name=short_name(model),
            x=[_category_label(c) for c in group[constants.COL_CATEGORY]],
            y=group[value],
            marker_color=model_color(model),
            hovertemplate="%{x}: %{y:" + (".1%" if percent else ".3f") + "}<extra>" + html.escape(short_name(model)) + "</extra>",
        )
    fig.update_layout(
        barmode="group",
        title=title,
        yaxis={"title": y_title, "tickformat": ".0%" if percent else None},
        height=420,
        margin={"l": 40, "r": 10, "t": 50, "b": 40},
        legend={"orientation": "h", "y": -0.2},
        showlegend=True,
    )
    return fig


def _distribution(results: pd.DataFrame, threshold: float) -> go.Figure:
    """Every pair's cosine per model (box with the points), the threshold dashed."""
    fig = go.Figure()
    for key, group in results.groupby(constants.COL_MODEL, sort=False):
        model = str(key)
        fig.add_trace(
            go.Box(
                y=group[constants.COL_COSINE],
                name=short_name(model),
                marker_color=model_color(model),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                text=[f"{a} | {b}" for a, b in zip(group[constants.COL_TEXT_A], group[constants.COL_TEXT_B], strict=True)],
                hovertemplate="%{y:.4f}<br>%{text}<extra></extra>",
            )
        )
    fig.add_hline(y=threshold, line_dash="dash", line_color="black", annotation_text=f"threshold {threshold:.2f}")
    fig.update_layout(
        title="Every pair's cosine, per model",
        yaxis={"title": "cosine"},
        height=420,
        margin={"l": 40, "r": 10, "t": 50, "b": 40},
        showlegend=False,
    )
    return fig


def _table(frame: pd.DataFrame, numeric: Mapping[str, str]) -> str:
    """An escaped HTML table; ``numeric`` maps columns to their format spec."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            if column in numeric and isinstance(value, (int, float)) and value == value:
                cells.append(f'<td class="num">{format(value, numeric[column])}</td>')
            else:
                cells.append(
                    f"<td>{html.escape('—' if value is None or (isinstance(value, float) and value != value) else str(value))}</td>"
                )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def non_matching(results: pd.DataFrame, match: pd.Series | None = None) -> pd.DataFrame:
    """Every pair that should not match: those the labels call no match (``match`` 0) when the run has binary labels,
    else every pair but the paraphrase controls (every failure mode, contradiction, negative and near-miss control, a
    file's own categories). The worst cases came from the six named modes alone."""
    if match is not None and (match == 0).any():
        return results[(match == 0).to_numpy()]
    return results[results[constants.COL_CATEGORY] != constants.CAT_POSITIVE]


def _worst(pool: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """The non-matching pairs scored highest, each pair once with every model's cosine beside it, both texts in full."""
    keys = [constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY]
    models = list(dict.fromkeys(pool[constants.COL_MODEL].astype(str)))
    wide = pool.pivot_table(index=keys, columns=constants.COL_MODEL, values=constants.COL_COSINE, aggfunc="max", sort=False)
    wide = wide.reindex(columns=models)
    best = wide.max(axis=1)
    order = best.sort_values(ascending=False, kind="stable").index[:WORST_ROWS]
    top = wide.loc[order]
    above = [", ".join(short_name(m) for m in models if row[m] == row[m] and row[m] > threshold) or "none" for _, row in top.iterrows()]
    out = pd.DataFrame(
        {
            "category": [_category_label(c) for c in top.index.get_level_values(constants.COL_CATEGORY)],
            **{f"cosine {short_name(m)}": top[m].to_numpy() for m in models},
            f"above {threshold:.2f}": above,
            "sentence A": top.index.get_level_values(constants.COL_TEXT_A),
            "sentence B": top.index.get_level_values(constants.COL_TEXT_B),
        }
    )
    if constants.COL_LABEL in pool.columns:
        labels = pool.drop_duplicates(keys).set_index(keys)[constants.COL_LABEL]
        out.insert(1, "label", labels.reindex(order).to_numpy())
    return out


def _models(results: pd.DataFrame) -> pd.DataFrame:
    """One row per model of the run (short name, id, source, dimension), when the caller gives no model table."""
    from core.models.registry import resolve

    rows = []
    for model in dict.fromkeys(results[constants.COL_MODEL].astype(str)):
        try:
            meta = resolve(model)
            source, dimension = meta.source, meta.dimension
        except ValueError:
            source, dimension = "", None
        rows.append({"model": short_name(model), "id": model, "source": source, "dimension": dimension})
    return pd.DataFrame(rows)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version(), "plotly": plotly.__version__}
    for dist in ("cosine-probe", "pandas", "sentence-transformers", "onnxruntime", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


def report_html(
    results: pd.DataFrame,
    threshold: float,
    title: str,
    settings: Mapping[str, Any] | None = None,
    models: pd.DataFrame | None = None,
    created_at: datetime | None = None,
    label_sentences: Sequence[str] = (),
    match: pd.Series | None = None,
    label_settings: Mapping[str, str] | None = None,
    label_table: pd.DataFrame | None = None,
) -> str:
    """A self-contained HTML report of one run.

    Args:
        results: tidy results (model, category, text_a, text_b, cosine, ...), shape (pairs × models, k).
        threshold: the threshold the verdicts and shares above use, in [-1, 1].
        title: the report's heading (e.g. "Run 12: failure-modes").
        settings: what the run was made with (shown as JSON); its ``findings`` (sentences), when given, lead the report,
            its ``findings_table`` (records, e.g. an audit's table of every model) right under them.
        models: one row per model (model, revision, backend, status, ...), or None.
        created_at: when the run was made (UTC); None = now.
        label_sentences: the label column's finding (``core.probes.labels.report_labels``: one sentence), first.
        label_table: the label classifier per model (``core.probes.labels.report_labels``): the AUC, said once here.
        match: per row 1 (match), 0 (no match) or NaN, aligned with ``results``; the worst cases are then the no-match pairs.
        label_settings: how the labels were read (which value is the match, the values on each side).

    Returns:
        One HTML document; plotly.js is inlined, so it opens with no network.

    Raises:
        ValueError: empty results, missing columns, or a threshold outside [-1, 1].
    """
    needed = {constants.COL_MODEL, constants.COL_CATEGORY, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE}
    if results.empty or not needed <= set(results.columns):
        raise ValueError(f"a report needs scored pairs with the columns {', '.join(sorted(needed))}")
    if not -1.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    results = results.assign(**{constants.COL_CATEGORY: results[constants.COL_CATEGORY].fillna("").astype(str)})
    summary = tables.category_summary(results, threshold)
    # A run that stored its own findings (an audit's: twins, not a suite's categories) leads with them.
    own = [str(s) for s in (settings or {}).get("findings") or [] if str(s).strip()]
    sentences = own or [*label_sentences, *findings.failure_mode_findings(summary, threshold)]
    sentences.append(_scored(results, threshold))
    figures = [
        _bars(summary, "mean", "Mean cosine by category", "mean cosine", percent=False),
        _bars(summary, "failure_rate", f"Share of pairs above {threshold:.2f} by category", "share above threshold", percent=True),
        _distribution(results, threshold),
    ]
    charts = [pio.to_html(fig, full_html=False, include_plotlyjs=i == 0, config={"displaylogo": False}) for i, fig in enumerate(figures)]
    shown_summary = summary.assign(
        **{
            constants.COL_MODEL: summary[constants.COL_MODEL].map(short_name),
            constants.COL_CATEGORY: summary[constants.COL_CATEGORY].map(_category_label),
        }
    )
    shown_summary = shown_summary[[constants.COL_MODEL, constants.COL_CATEGORY, "n", "mean", "sd", "failure_rate"]].rename(
        columns={"failure_rate": "share above threshold"}
    )
    when = (created_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    if match is not None and len(match) != len(results):
        raise ValueError(f"match has {len(match)} rows, the results {len(results)}")
    pool = non_matching(results, None if match is None else match.reset_index(drop=True).set_axis(results.index))
    worst = _worst(pool, threshold)
    n_worst = len(pool[[constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY]].drop_duplicates())
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{REPORT_MARKER}",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1><p class='meta'>{html.escape(when)} · threshold {threshold:.2f} · made by cosine-probe</p>",
        "<h2>Findings</h2>",
        *[f"<p class='finding'>{html.escape(s)}</p>" for s in sentences[:1]],
        *_finding_tables(settings or {}, label_table if not own else None),
        *[f"<p class='finding'>{html.escape(s)}</p>" for s in sentences[1:]],
        "<h2>Charts</h2>",
        *charts,
        f"<h2>Worst cases (top {len(worst)} of {n_worst} pairs that should not match, each with every model's cosine)</h2>",
        "<p class='meta'>"
        + html.escape(
            "Pairs the labels call no match."
            if match is not None and (match == 0).any()
            else "Every pair but the paraphrase controls: failure modes, contradictions, negative and near-miss controls."
        )
        + "</p>",
        _table(worst, {c: ".4f" for c in worst.columns if str(c).startswith("cosine ")}),
        "<h2>By category</h2>",
        _table(shown_summary, {"mean": ".3f", "sd": ".3f", "share above threshold": ".1%"}),
    ]
    models = models if models is not None and not models.empty else _models(results)
    parts += ["<h2>Models</h2>", _table(models.astype(object), {})]
    if label_settings:
        parts += ["<h2>Labels</h2>", _table(pd.DataFrame(list(label_settings.items()), columns=["setting", "value"]), {})]
    parts += [
        "<h2>Settings</h2>",
        f"<pre>{html.escape(json.dumps(_settings_shown(settings), indent=2, default=str, ensure_ascii=False))}</pre>",
        "<h2>Versions</h2>",
        _table(pd.DataFrame(list(_versions().items()), columns=["package", "version"]), {}),
        "</body></html>",
    ]
    return "\n".join(parts)


def _scored(results: pd.DataFrame, threshold: float) -> str:
    """How many pairs each model scored and its mean; a single pair is named as an example, never as a share."""
    models = list(dict.fromkeys(results[constants.COL_MODEL].astype(str)))
    n_pairs = len(results) // max(1, len(models))
    said_models = "1 model" if len(models) == 1 else f"{len(models)} models"
    if n_pairs == 1:
        cosines = results.groupby(constants.COL_MODEL, sort=False)[constants.COL_COSINE].first()
        return (
            f"One pair scored by {said_models} (cosine "
            + ", ".join(f"{short_name(m)} {cosines[m]:.3f}" for m in models)
            + "): one pair is an example, not a measure of a model; score a set of pairs for a finding."
        )
    means = results.groupby(constants.COL_MODEL, sort=False)[constants.COL_COSINE].mean()
    shares = results.groupby(constants.COL_MODEL, sort=False)[constants.COL_COSINE].apply(
        lambda c: failure_rate(c.to_numpy(float), threshold)
    )
    return (
        f"{n_pairs:,} pairs scored by {said_models}: "
        + "; ".join(f"{short_name(m)} mean cosine {means[m]:.3f}, {100 * shares[m]:.0f}% above {threshold:.2f}" for m in means.index)
        + "."
    )


def _finding_tables(settings: Mapping[str, Any], label_table: pd.DataFrame | None) -> list[str]:
    """The tables under the lead sentence: a run's own ``findings_table`` (an audit's models), the label classifier."""
    out = []
    own = settings.get("findings_table")
    if isinstance(own, list) and own and all(isinstance(r, Mapping) for r in own):
        out.append(_table(pd.DataFrame(own).astype(object), {}))
    if label_table is not None and not label_table.empty:
        out.append(_table(label_table, {c: ".3f" for c in label_table.columns if c != "model" and c != "reading"}))
    return out


def _settings_shown(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings as JSON without what the Findings section already says."""
    return {k: v for k, v in dict(settings or {}).items() if k not in ("findings", "findings_table")}


def is_report(path: str | Path) -> bool:
    """Whether the file at ``path`` is a report this module wrote (its first bytes carry the marker); False when unreadable."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return head.lstrip().lower().startswith("<!doctype html>") and (REPORT_MARKER in head or _OLD_MARKER in head)


LabelReader = Callable[[pd.DataFrame, float, Any], tuple[Sequence[str], "pd.Series | None", Mapping[str, str], "pd.DataFrame | None"]]


def run_report(
    run_id: int,
    path: str | None = None,
    labels: LabelReader | None = None,
    categories: Callable[[pd.DataFrame, Any], pd.DataFrame] | None = None,
) -> str:
    """The HTML report of a stored run (``core.history.store.load_run``; raises its ``HistoryError`` for an unknown id).

    ``labels`` reads a label column (``core.probes.labels.report_labels``, passed in by the caller: that package sits
    beside this one and is not imported here) with the run's ``match_label`` setting, if it has one. ``categories``
    says the run's categories as the page said them (``core.probes.labels.categories_in_words``: a pair grouped by its
    0/1 label reads "no match (0)"), read through the same setting; a page run keeps no polarity choice (it is made
    after the run), so its labels are read the automatic way (1, true, yes: a match).
    """
    from core.history import store

    run = store.load_run(run_id, path)
    threshold = run.threshold if run.threshold is not None else constants.DEFAULT_THRESHOLD
    settings = {"command": run.command, "origin": run.origin, "source": run.source, **run.settings}
    said, match, label_settings, label_table = (
        labels(run.results, threshold, run.settings.get("match_label")) if labels is not None else ((), None, {}, None)
    )
    shown = categories(run.results, run.settings.get("match_label")) if categories is not None else run.results
    return report_html(
        shown,
        threshold,
        f"cosine-probe run {run.run_id}: {run.command}",
        settings,
        run.models,
        run.created_at,
        label_sentences=said,
        match=match,
        label_settings=label_settings,
        label_table=label_table,
    )
