"""Small reusable page pieces: downloads, result tables, notes."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, cast

import altair as alt
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.files.export import to_csv_bytes, to_json_bytes
from core.history.report import report_html
from core.messages import redact
from core.models.registry import short_name
from core.probes.labels import categories_in_words, report_labels
from core.words import change_summary, word_changes

# Every character Markdown, Streamlit's ":color[...]"/":emoji:" directives or
# LaTeX ("$") give a meaning to; escaped, each one is shown as typed.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md_escape(text: object) -> str:
    """Text made inert for elements that render Markdown (error, warning, info, caption, labels).

    User text (typed sentences, file names, cells, model ids, messages that
    quote them) goes through this before any Markdown-rendering element, so
    ``**bold**`` stays two asterisks and ``<img onerror=…>`` stays text.
    It passes the one redaction of secrets first (:func:`core.messages.redact`):
    a message may quote what a server echoed, the key included.
    """
    return _MD_SPECIAL.sub(r"\\\1", redact(text))


def wall_time(seconds: float) -> str:
    """A duration as a person reads it: "0.4 s", "48 s", "1 min 43 s"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "table"


def downloads(frame: pd.DataFrame, name: str) -> None:
    """CSV (spreadsheet-safe) and JSON download buttons for a table.

    The files are built only when clicked, and a click does not rerun the page
    (a download on a long page cost a full rerun of every table).
    """
    slug = _slug(name)
    what = download_label(name)
    left, right = st.columns(2)
    # Two rows of bare "CSV / JSON" buttons looked the same; each says which table it holds.
    left.download_button(
        f"⬇ CSV · {what}",
        lambda: to_csv_bytes(frame),
        file_name=f"{slug}.csv",
        mime="text/csv",
        key=f"dl-csv-{slug}",
        width="stretch",
        on_click="ignore",
    )
    right.download_button(
        f"⬇ JSON · {what}",
        lambda: to_json_bytes(frame),
        file_name=f"{slug}.json",
        mime="application/json",
        key=f"dl-json-{slug}",
        width="stretch",
        on_click="ignore",
    )


def download_label(name: str) -> str:
    """What a download holds, in words: a table's file name without dashes.

    For example ``"failure-modes-worst-cases"`` -> ``"failure modes worst cases"``.
    """
    return re.sub(r"[-_\s]+", " ", str(name)).strip() or "table"


def table(frame: pd.DataFrame, name: str, download: pd.DataFrame | None = None, **kwargs) -> None:
    """A dataframe with its downloads underneath: readable headers (no snake_case) and "—" for missing cells.

    ``download`` is what the downloads hold when the screen shows less (every column, typed); None = ``frame``.
    """
    config: dict[str, Any] = {str(c): str(c).replace("_", " ") for c in frame.columns if "_" in str(c)}
    for column, given in (kwargs.pop("column_config", None) or {}).items():
        config[column] = _readable(column, given, {})
    kwargs.setdefault("placeholder", MISSING)
    st.dataframe(frame, width="stretch", hide_index=True, column_config=config, **kwargs)
    downloads(frame if download is None else download, name)


def chart(fig: go.Figure, frame: pd.DataFrame, name: str) -> None:
    """A Plotly chart with the data behind it as downloads."""
    st.plotly_chart(fig, width="stretch", key=f"chart-{_slug(name)}")
    downloads(frame, name)


def vega_chart(spec: alt.LayerChart, frame: pd.DataFrame, name: str) -> None:
    """A Vega-Lite chart (Altair) with the data behind it as downloads: for a chart in a page's first view, where
    Plotly's JavaScript (4.6 MB) would hold the view; Vega-Lite's is a sixth of it."""
    st.altair_chart(spec, width="stretch", key=f"chart-{_slug(name)}")
    downloads(frame, name)


def report_html_bytes(results: pd.DataFrame, threshold: float, title: str, settings: dict, match_label: object = None) -> bytes:
    """The run's HTML report (``core.history.report``) with its label finding, no-match pairs and label settings
    (``core.probes.labels.report_labels``) and its models (the report left the label finding out)."""
    said, match, label_settings, label_table = report_labels(results, threshold, match_label, short_name)
    # Categories that are the pairs' 0/1 labels (Your data with no category column) read "no match (0)" / "match (1)", as on the page.
    by_category = categories_in_words(results, match_label)
    return report_html(
        by_category, threshold, title, settings, label_sentences=said, match=match, label_settings=label_settings, label_table=label_table
    ).encode("utf-8")


def report_download(results: pd.DataFrame, threshold: float, title: str, settings: dict, key: str, match_label: object = None) -> None:
    """One click: the run as a self-contained HTML report (:func:`report_html_bytes`), built only when clicked."""
    st.download_button(
        "⬇ HTML report",
        lambda: report_html_bytes(results, threshold, title, settings, match_label),
        file_name=f"{_slug(title)}.html",
        mime="text/html",
        key=f"dl-report-{key}",
        on_click="ignore",
        type="secondary",
        help="Findings in sentences, interactive charts, the worst cases, settings and versions in one file that opens offline.",
    )


def pair_chart(fig: go.Figure, frame: pd.DataFrame, name: str, columns: list[str]) -> None:
    """A chart whose points are pairs, with ``frame`` as its downloads: a click on a point shows that pair in full with its scores.

    Each trace's ``customdata`` holds its points' row positions in ``frame``;
    traces without it (legends, thresholds) are not pairs.
    """
    event = st.plotly_chart(fig, width="stretch", key=f"chart-{_slug(name)}", on_select="rerun", selection_mode="points")
    downloads(frame, name)
    picked = selected_rows(event, fig)
    if picked:
        row_detail(frame.iloc[picked[0]], columns, {c: c.replace("_", " ") for c in columns})
    else:
        st.caption("Click a point to read that pair in full with its scores.")


def selected_rows(event, fig: go.Figure) -> list[int]:
    """Rows of the chart's frame behind the selected points: each point's trace ``customdata`` (its row), in selection order."""
    selection = getattr(event, "selection", None) if not isinstance(event, dict) else event.get("selection")
    points = (selection.get("points") if isinstance(selection, dict) else getattr(selection, "points", None)) or []
    rows = []
    for point in points:
        curve, index = point.get("curve_number"), point.get("point_index", point.get("point_number"))
        if curve is None or index is None or curve >= len(fig.data):
            continue
        data = fig.data[curve].customdata
        if data is not None and 0 <= index < len(data):
            rows.append(int(data[index]))
    return rows


# --- widget values that survive page switches -------------------------------
# Streamlit forgets the state of widgets a page did not draw, so each widget
# keeps a copy of its value under saved_key(key) and is refilled from it.

SAVED_SUFFIX = "__saved"


def saved_key(key: str) -> str:
    """Where a widget's value is kept between page switches."""
    return f"{key}{SAVED_SUFFIX}"


def persistent_text_area(label: str, key: str, default: str, **kwargs) -> str:
    """A text area whose text survives reruns and page switches; returns the text."""
    ss = st.session_state
    saved = saved_key(key)
    ss.setdefault(saved, default)
    if key not in ss:
        ss[key] = ss[saved]
    value = st.text_area(label, key=key, **kwargs)
    ss[saved] = value
    return value


def set_text(key: str, value: str) -> None:
    """Fill a persistent text widget (call from a callback, before it is drawn)."""
    st.session_state[key] = value
    st.session_state[saved_key(key)] = value


def saved(key: str, default: Any) -> Any:
    """The value a widget last had (kept under :func:`saved_key`), or ``default``.

    Pass it as the widget's initial value and :func:`persist` as its
    ``on_change`` callback (``args=(key,)``) so the choice survives page switches.
    """
    return st.session_state.setdefault(saved_key(key), default)


def persist(key: str) -> None:
    """``on_change`` callback: copy a widget's value to :func:`saved_key`."""
    st.session_state[saved_key(key)] = st.session_state[key]


def _saved_index(key: str, options: list) -> int | None:
    if not options:  # no model picked in the sidebar: an empty box, not an IndexError
        return None
    value = saved(key, options[0])
    return options.index(value) if value in options else 0


def saved_selectbox(label: str, options: list, key: str, **kwargs):
    """A selectbox whose choice survives page switches; returns the choice."""
    return st.selectbox(label, options, index=_saved_index(key, options), key=key, on_change=persist, args=(key,), **kwargs)


def saved_radio(label: str, options: list, key: str, **kwargs):
    """A horizontal radio whose choice survives page switches; returns the choice."""
    return st.radio(label, options, index=_saved_index(key, options), key=key, on_change=persist, args=(key,), horizontal=True, **kwargs)


def saved_tabs(labels: list[str], key: str):
    """Tabs whose open tab survives every rerun (a slider move, a toggle) and page switches; returns the tab containers.

    Plain ``st.tabs`` reopen on the first tab after any rerun that
    redraws them. Streamlit 1.67's stateful tabs (a ``key`` and an ``on_change``
    callback) keep the choice across reruns; the callback also copies it to
    :func:`saved_key` so a page switch does not lose it either.

    Each tab's ``.open`` says whether it is the open one; pages draw
    only the open tab, inside a fragment, so a click reruns that fragment and
    draws one tab instead of rerunning the page and drawing every tab.
    """
    ss = st.session_state
    if ss.get(key) not in labels:  # a page switch forgot the widget: reopen the saved tab
        default = saved(key, labels[0])
        ss[key] = default if default in labels else labels[0]
    # No ``default=``: it is part of the widget's identity, and a changing one would make a new widget each time.
    tabs = st.tabs(labels, key=key, on_change=persist, args=(key,))
    ss[saved_key(key)] = ss[key]  # a tab opened from code (session state), not by a click, is kept too
    return tabs


def lazy_tabs(sections: Mapping[str, Callable[[], None]], key: str) -> None:
    """Saved tabs (:func:`saved_tabs`) that draw only the open one: ``sections`` maps each label, in order, to what draws it.

    Call it inside a fragment (``st.fragment``): a tab click then reruns the fragment and draws one tab, where drawing
    every tab on every click cost 8-20 s on a busy machine.
    """
    labels = list(sections)
    for label, tab in zip(labels, saved_tabs(labels, key), strict=True):
        if tab.open:
            with tab:
                sections[label]()


# --- results tables: key numbers first -----------------------------------------
# A user opens a results table for the model, its cosine and the verdict; texts come
# next (wrapped), ids and bookkeeping last, raw codes off the screen (still in downloads).

MISSING = "—"
LEAD = ("model", "cosine", "threshold", "verdict")
TEXT_COLUMNS = (
    "text_a",
    "text_b",
    "variant",
    "sentence",
    "text",
    "tokens",
    "change",
    "why",
    "note",
    "remark",
    "anchor",
    "paraphrase",
    "query",
    "original",
    "positive",
    "negative",
    "top1",
    "relevant",
)
DETAILS = ("model id", "model_id", "pair_id", "suite", "source", "rule")
CODE_LABELS = {
    "category": ("failure mode", "category label"),
    "reading": ("reading_label",),
}  # raw code column -> label columns that show it
WRAP_ROW_HEIGHT = 72  # Streamlit wraps text cells only when rows are taller than 4rem (64 px)
_P_COLUMN = re.compile(r"(^p$|_p$|^p_value$|^p \(|kruskal_p)")
_INTERNAL_PATH = re.compile(r"\s*\((?:\.\./)?(?:shared|notes|data|core)/[^()]*\)|\s*(?:\.\./)?shared/notes/\S+\.md")
_PLAIN_WORDS = ((re.compile(r"source row garbled", re.IGNORECASE), "the paper's printed row is damaged"),)


def lead_columns(
    columns: list[str], lead: tuple[str, ...] = LEAD, details: tuple[str, ...] = DETAILS, hide: tuple[str, ...] = ()
) -> list[str]:
    """The display order of a results table's columns.

    ``lead`` columns first (in that order), then the others as they come,
    then ``details``; ``hide`` columns are left off the screen.

    Args:
        columns: the table's columns, in their order.
        lead: the columns a reader came for.
        details: ids and bookkeeping, shown last.
        hide: raw codes shown through a label column instead.

    Returns:
        Column names, each once, all of them from ``columns``.
    """
    if len(set(columns)) != len(columns):
        raise ValueError(f"a results table needs distinct column names, got {columns}")
    shown = [c for c in columns if c not in hide]
    first = [c for c in lead if c in shown]
    last = [c for c in details if c in shown and c not in first]
    return [*first, *[c for c in shown if c not in first and c not in last], *last]


def plain_note(text: object) -> str:
    """A data note for the screen: no internal file paths, plain words, "—" when empty."""
    if text is None or (isinstance(text, float) and text != text):
        return MISSING
    out = _INTERNAL_PATH.sub("", str(text))
    for pattern, words in _PLAIN_WORDS:
        out = pattern.sub(words, out)
    out = out.strip()
    return out or MISSING


def _readable(column: str, given: Any, labels: dict[str, str]) -> Any:
    """A caller's column config with a readable header: one given for its format alone, or labelled with the
    raw column name itself (``NumberColumn(c, format=…)``), shows ``labels[column]`` or the name without underscores."""
    if isinstance(given, dict) and given.get("label") in (None, "", column):
        return {**given, "label": labels.get(column, str(column).replace("_", " "))}
    return given


def _default_config(column: str, labels: dict[str, str]):
    label = labels.get(column, column.replace("_", " "))
    if column == "cosine":
        return st.column_config.NumberColumn(label, format="%.4f")
    if column == "threshold":
        return st.column_config.NumberColumn(label, format="%.3f", help="The threshold the verdict uses.")
    if _P_COLUMN.search(column):
        return st.column_config.NumberColumn(label, format="%.1e", help="p-value, scientific notation.")
    if column in ("failure_rate", "fr_ci_low", "fr_ci_high"):
        return st.column_config.NumberColumn(label, format="percent")
    if column in TEXT_COLUMNS:
        return st.column_config.TextColumn(label, width="large")
    if column == CHANGE_COLUMN:
        return st.column_config.TextColumn(
            label, width="medium", help="The words that differ between the two texts (→ replaced by, + added, − dropped)."
        )
    return label


def results_table(
    frame: pd.DataFrame,
    name: str,
    lead: tuple[str, ...] = LEAD,
    details: tuple[str, ...] = DETAILS,
    hide: tuple[str, ...] = (),
    labels: dict[str, str] | None = None,
    column_config: dict | None = None,
    notes: tuple[str, ...] = ("note", "remark", "why"),
    download: pd.DataFrame | None = None,
    pair: tuple[str, str] | None = None,
    beside: bool = False,
) -> None:
    """A results table that leads with what matters, with its downloads underneath.

    Shows ``lead`` columns first, texts wrapped, ``details`` last and ``hide``
    off the screen; missing cells read "—", p-values are in scientific
    notation, note columns lose internal paths.  Downloads hold every column
    with its type unchanged.

    Args:
        frame: the table (any shape); nothing in it is changed for the download.
        name: download file name.
        lead, details, hide: see :func:`lead_columns`.
        labels: column -> header shown (e.g. ``{"failure_rate": "share above threshold"}``).
        column_config: Streamlit column configs that override the defaults.
        notes: free-text columns cleaned with :func:`plain_note` for the screen.
        download: what the downloads hold when it differs from ``frame`` (full model ids, typed labels); None = ``frame``.
        pair: the two text columns of a worst-case table: a "changed words" column follows the lead columns,
            and the selected row, or else the first (the worst), is shown below with both texts in full and the
            words that differ marked.
        beside: the two ``pair`` texts side by side (two columns) rather than one under the other.
    """
    if pair is not None:
        frame = with_changes(frame, pair)
        if CHANGE_COLUMN in frame.columns:
            at = min([lead.index(c) for c in pair if c in lead], default=len(lead))
            lead = (*lead[:at], CHANGE_COLUMN, *lead[at:])  # the change on screen, before the texts that scroll off it
    # A raw code column goes off the screen when a label column carries it.
    hide = (*hide, *(code for code, shown_as in CODE_LABELS.items() if any(label in frame.columns for label in shown_as)))
    order = lead_columns(list(frame.columns), lead, details, hide)
    labels = labels or {}
    config = {c: _default_config(c, labels) for c in order}
    for column, given in (column_config or {}).items():
        config[column] = _readable(column, given, labels)
    shown = frame.assign(
        **{
            c: frame[c].map(plain_note)
            for c in notes
            if c in frame.columns and (frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c]))
        }
    )
    texts = [c for c in order if c in TEXT_COLUMNS]
    if not texts:
        st.dataframe(shown, width="stretch", hide_index=True, column_order=order, column_config=config, placeholder=MISSING)
        downloads(frame if download is None else download, name)
        return
    # Wrapped cells still cut a long sentence, so a selected row is shown below in full.
    event = st.dataframe(
        shown,
        width="stretch",
        hide_index=True,
        column_order=order,
        column_config=config,
        placeholder=MISSING,
        row_height=WRAP_ROW_HEIGHT,
        key=f"table-{_slug(name)}",
        on_select="rerun",
        selection_mode="single-row",
    )
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    headers = {c: header_of(c, config[c]) for c in order}
    if rows and rows[0] < len(shown):
        row_detail(shown.iloc[rows[0]], order, headers, pair, beside)
    elif pair is not None and len(shown):
        st.caption("The first row in full, the words that differ marked; select another row (the box at its left) to read it.")
        row_detail(shown.iloc[0], order, headers, pair, beside)
    else:
        st.caption("Select a row (the box at its left) to read its sentences in full.")
    downloads(frame if download is None else download, name)


def header_of(column: str, config) -> str:
    """The header a column is shown under, from its column config (a label string or a config dict)."""
    if isinstance(config, str):
        return config
    if isinstance(config, dict) and config.get("label"):
        return str(config["label"])
    return column.replace("_", " ")


def row_detail(
    row: pd.Series, order: list[str], headers: dict[str, str], pair: tuple[str, str] | None = None, beside: bool = False
) -> None:
    """One table row in full: its short values on one line, then every text column unwrapped and uncut; the two
    ``pair`` columns first, with the words that differ marked (:func:`marked_pair`)."""
    short_values = [
        f"**{md_escape(headers[c])}**: {md_escape(cell_text(row[c]))}" for c in order if c not in TEXT_COLUMNS and c != CHANGE_COLUMN
    ]
    paired = pair is not None and all(c in row.index for c in pair)
    with st.container(border=True):
        if short_values:
            st.markdown(" · ".join(short_values))
        if paired:
            a, b = pair  # type: ignore[misc]
            marked_pair(row[a], row[b], headers.get(a, a.replace("_", " ")), headers.get(b, b.replace("_", " ")), beside)
        for column in (c for c in order if c in TEXT_COLUMNS and not (paired and c in pair)):  # type: ignore[operator]
            st.markdown(f"**{md_escape(headers[column])}**  \n{md_escape(cell_text(row[column]))}")


MARK = "orange-background"  # Streamlit's text-background directive: changed words read at a glance, in any theme
CHANGE_COLUMN = "changed words"


def marked_text(tokens: list[tuple[str, bool]]) -> str:
    """Markdown of a text with its changed runs highlighted (:func:`core.words.word_changes` tokens); every character escaped."""
    out: list[str] = []
    run: list[str] = []
    for tok, changed in [*tokens, ("", False)]:
        if changed:
            run.append(tok)
            continue
        if run:
            out.append(f":{MARK}[**{md_escape(''.join(run))}**]")
            run = []
        out.append(md_escape(tok))
    return "".join(out)


def marked_pair(text_a: object, text_b: object, label_a: str = "text A", label_b: str = "text B", beside: bool = False) -> None:
    """Both texts of a pair in full, one under the other (or ``beside`` each other), with the words that differ marked in
    each (the contradicting sentence sat off-screen in every worst-case table)."""
    a, b = cell_text(text_a), cell_text(text_b)
    tokens_a, tokens_b = word_changes(a, b)
    left, right = st.columns(2) if beside else (st, st)
    left.markdown(f"**{md_escape(label_a)}**  \n{marked_text(tokens_a)}")
    right.markdown(f"**{md_escape(label_b)}**  \n{marked_text(tokens_b)}")


def with_changes(frame: pd.DataFrame, pair: tuple[str, str]) -> pd.DataFrame:
    """``frame`` with a :data:`CHANGE_COLUMN` column: the words that differ between the two ``pair`` columns, in one line."""
    a, b = pair
    if frame.empty or a not in frame.columns or b not in frame.columns:
        return frame
    return frame.assign(**{CHANGE_COLUMN: [change_summary(cell_text(x), cell_text(y)) for x, y in zip(frame[a], frame[b], strict=True)]})


def cell_text(value: object) -> str:
    """A cell as text for the row detail: "—" for missing, four decimals for a float."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(cast(Any, value))):
        return MISSING
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def finding(sentences: list[str], where: Any = None) -> None:
    """A page's finding: its sentences as one escaped paragraph in ``where`` (the page by default); nothing when
    the results say nothing yet, so no empty element sits above the charts."""
    if sentences:
        (where if where is not None else st).markdown(" ".join(md_escape(s) for s in sentences))
