"""Small reusable page pieces: downloads, result tables, notes."""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.export import to_csv_bytes, to_json_bytes


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "table"


def downloads(frame: pd.DataFrame, name: str) -> None:
    """CSV (spreadsheet-safe) and JSON download buttons for a table."""
    slug = _slug(name)
    left, right = st.columns(2)
    left.download_button("⬇ CSV", to_csv_bytes(frame), file_name=f"{slug}.csv", mime="text/csv", key=f"dl-csv-{slug}", use_container_width=True)
    right.download_button("⬇ JSON", to_json_bytes(frame), file_name=f"{slug}.json", mime="application/json", key=f"dl-json-{slug}", use_container_width=True)


def table(frame: pd.DataFrame, name: str, **kwargs) -> None:
    """A dataframe with its downloads underneath."""
    st.dataframe(frame, use_container_width=True, hide_index=True, **kwargs)
    downloads(frame, name)


def chart(fig: go.Figure, frame: pd.DataFrame, name: str) -> None:
    """A Plotly chart with the data behind it as downloads."""
    st.plotly_chart(fig, use_container_width=True, key=f"chart-{_slug(name)}")
    downloads(frame, name)
