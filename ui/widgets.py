"""Small reusable page pieces: downloads, result tables, notes."""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.files.export import to_csv_bytes, to_json_bytes

# Every character Markdown, Streamlit's ":color[...]"/":emoji:" directives or
# LaTeX ("$") give a meaning to; escaped, each one is shown as typed.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def md_escape(text: object) -> str:
    """Text made inert for elements that render Markdown (error, warning, info, caption, labels).

    User text (typed sentences, file names, cells, model ids, messages that
    quote them) goes through this before any Markdown-rendering element, so
    ``**bold**`` stays two asterisks and ``<img onerror=…>`` stays text.
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "table"


def downloads(frame: pd.DataFrame, name: str) -> None:
    """CSV (spreadsheet-safe) and JSON download buttons for a table."""
    slug = _slug(name)
    left, right = st.columns(2)
    left.download_button("⬇ CSV", to_csv_bytes(frame), file_name=f"{slug}.csv", mime="text/csv", key=f"dl-csv-{slug}", width="stretch")
    right.download_button("⬇ JSON", to_json_bytes(frame), file_name=f"{slug}.json", mime="application/json", key=f"dl-json-{slug}", width="stretch")


def table(frame: pd.DataFrame, name: str, **kwargs) -> None:
    """A dataframe with its downloads underneath."""
    st.dataframe(frame, width="stretch", hide_index=True, **kwargs)
    downloads(frame, name)


def chart(fig: go.Figure, frame: pd.DataFrame, name: str) -> None:
    """A Plotly chart with the data behind it as downloads."""
    st.plotly_chart(fig, width="stretch", key=f"chart-{_slug(name)}")
    downloads(frame, name)


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


def saved(key: str, default):
    """The value a widget last had (kept under :func:`saved_key`), or ``default``.

    Pass it as the widget's initial value and :func:`persist` as its
    ``on_change`` callback (``args=(key,)``) so the choice survives page switches.
    """
    return st.session_state.setdefault(saved_key(key), default)


def persist(key: str) -> None:
    """``on_change`` callback: copy a widget's value to :func:`saved_key`."""
    st.session_state[saved_key(key)] = st.session_state[key]


def _saved_index(key: str, options: list) -> int:
    value = saved(key, options[0])
    return options.index(value) if value in options else 0


def saved_selectbox(label: str, options: list, key: str, **kwargs):
    """A selectbox whose choice survives page switches; returns the choice."""
    return st.selectbox(label, options, index=_saved_index(key, options), key=key, on_change=persist, args=(key,), **kwargs)


def saved_radio(label: str, options: list, key: str, **kwargs):
    """A horizontal radio whose choice survives page switches; returns the choice."""
    return st.radio(label, options, index=_saved_index(key, options), key=key, on_change=persist, args=(key,), horizontal=True, **kwargs)
