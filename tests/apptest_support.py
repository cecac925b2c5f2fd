"""Shared AppTest helpers for the page tests: open a page through the real router, find a table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

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


class CrashingBackend:
    """A loaded model's tokenizer with an encoder that raises: a model that loads but fails on use."""

    def __init__(self, like):
        self.tokenizer = like.tokenizer
        self.max_seq_length = like.max_seq_length
        self.dimension = like.dimension

    def embed(self, texts):
        raise RuntimeError("simulated encoder crash\nsecond line")
