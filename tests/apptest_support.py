"""Shared AppTest helpers for the page tests: open a page through the real router, find a table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from core.models.protocols import BackendDefaults

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_page(page: str, timeout: float = 300) -> AppTest:
    """The app with ``page`` shown, as a user who followed its link (the router registers pages first)."""
    app = AppTest.from_file(APP, default_timeout=timeout)
    app.run()
    app.switch_page(page).run()
    assert not app.exception
    return app


def table_with(app: AppTest, column: str, last: bool = False) -> pd.DataFrame:
    """The first (or last) dataframe on the page that has ``column``."""
    frames = [d.value for d in app.dataframe if column in d.value.columns]
    assert frames, f"no table with {column!r}"
    return frames[-1] if last else frames[0]


# ---------------------------------------------------------------- the Compare page and MiniLM

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def expected_cosine(a: str, b: str, model: str = MINILM) -> float:
    """The cosine core computes for a pair (no cache): what the page must show."""
    import numpy as np

    from core.models.encode import encode_texts
    from core.models.loading import load_model

    vectors, _ = encode_texts(load_model(model), [a, b], None)
    return float(np.dot(vectors[a], vectors[b]))


def compare_table(at: AppTest) -> pd.DataFrame:
    """The Compare page's one cosine-per-model table."""
    frames = [df.value for df in at.dataframe if {"cosine", "verdict"} <= set(df.value.columns)]
    assert len(frames) == 1, "exactly one compare table"
    return frames[0]


def minilm_row(at: AppTest) -> pd.Series:
    """MiniLM's row of the Compare table."""
    table = compare_table(at)
    rows = table[table["model id"] == MINILM]
    assert len(rows) == 1
    return rows.iloc[0]


class CrashingBackend(BackendDefaults):
    """A loaded model's tokenizer with an encoder that raises: a model that loads but fails on use."""

    def __init__(self, like):
        self.tokenizer = like.tokenizer
        self.max_seq_length = like.max_seq_length
        self.dimension = like.dimension

    def embed(self, texts):
        raise RuntimeError("simulated encoder crash\nsecond line")


# ---------------------------------------------------------------- A page leads with its finding

RESULT_TYPES = ("dataframe", "table", "plotly_chart", "metric")


def assert_leads_with(app: AppTest, sentences: list[str]) -> None:
    """The finding (``sentences``, markdown-escaped and joined as the pages draw them) is on the page once, above its
    first table, chart or metric."""
    from ui.widgets import md_escape

    assert sentences, "a finding to look for"
    said = " ".join(md_escape(s) for s in sentences)
    order = [(node.type, getattr(node, "value", None)) for node in app.main if node.type in ("markdown", *RESULT_TYPES)]
    at = [i for i, (kind, value) in enumerate(order) if kind == "markdown" and value == said]
    assert len(at) == 1, (said, [v for k, v in order if k == "markdown"])
    first_result = next(i for i, (kind, _) in enumerate(order) if kind in RESULT_TYPES)
    assert at[0] < first_result, f"the finding comes after a {order[first_result][0]}"


# ---------------------------------------------------------------- Only the open tab is drawn


def show_tab(app: AppTest, key: str, label: str) -> AppTest:
    """Open tab ``label`` of the tabs with ``key`` (what a click sets) and rerun: pages draw the open tab only."""
    app.session_state[key] = label
    app.run()
    assert not app.exception
    return app
