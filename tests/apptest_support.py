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
