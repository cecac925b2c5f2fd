"""End-to-end: the History page in headless Chromium lists stored runs and diffs the two a user picks.

A ``streamlit run app.py`` server of its own (module scope) reads a history
file this module seeds with three runs; the test picks run #1 against run #3
in the page's selectboxes and reads the grids back, comparing them with
``core.history.diff`` on the same stored runs.
"""

from __future__ import annotations

import e2e_support as E
import numpy as np
import pandas as pd
import pytest

from core.history import store
from core.history.diff import diff_runs
from core.models.registry import MINILM_L6

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

RUNS = {  # run id -> cosines of the same four negation pairs
    1: [0.50, 0.75, 0.90, 0.65],
    2: [0.55, 0.74, 0.91, 0.66],
    3: [0.72, 0.60, 0.95, 0.69],
}


def _frame(cosines: list[float]) -> pd.DataFrame:
    n = len(cosines)
    return pd.DataFrame(
        {
            "model": MINILM_L6,
            "suite": "e2e",
            "category": "negation",
            "pair_id": [f"e2e-{i}" for i in range(n)],
            "text_a": [f"E2E sentence {i}" for i in range(n)],
            "text_b": [f"E2E sentence {i} negated" for i in range(n)],
            "cosine": cosines,
        }
    )


@pytest.fixture(scope="module")
def history_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("e2e-history") / "history.duckdb"
    for run_id, cosines in RUNS.items():
        assert (
            store.record_run(
                _frame(cosines),
                command="run",
                origin="cli",
                settings={"threshold": 0.7, "sources": [{"suite": f"e2e-{run_id}"}]},
                path=path,
            )
            == run_id
        )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory, history_file):
    with E.running_server(tmp_path_factory.mktemp("e2e-history-server"), {"COSINE_PROBE_HISTORY": str(history_file)}) as srv:
        yield srv


def _grid_with(page, column: str) -> pd.DataFrame:
    for grid in page.locator(f"{E.MAIN} {E.DATAFRAME}").all():
        frame = E.read_dataframe(grid)
        frame.columns = [str(c).replace(" ", "_") for c in frame.columns]  # the page shows readable headers ("run id")
        if column in frame.columns:
            return frame
    raise AssertionError(f"no grid with a {column!r} column")


def _choose(page, label: str, option_prefix: str) -> None:
    box = page.get_by_role("combobox", name=label)
    box.click()
    E.act(page, lambda: page.get_by_role("option").filter(has_text=option_prefix).first.click())


def test_history_lists_runs_and_diffs_the_two_picked(page, server, history_file):
    E.goto(page, f"{server.url}/history")
    E.assert_no_errors(page)
    expect(page.locator(f"{E.MAIN} h1")).to_contain_text("History")
    runs = _grid_with(page, "run_id")
    assert list(runs["run_id"]) == ["3", "2", "1"]

    _choose(page, "Before (run A)", "#1 ·")
    E.assert_no_errors(page)
    expect(page.get_by_text("Run #3 against run #1")).to_be_visible()

    before, after = store.load_run(1, history_file), store.load_run(3, history_file)
    expected = diff_runs(before.results, after.results, before.thresholds(), after.thresholds())
    change = _grid_with(page, "mean_change")
    assert len(change) == 1
    assert E.to_float(change.loc[0, "mean_change"]) == pytest.approx(expected.categories.loc[0, "mean_change"], abs=1e-4)
    assert E.to_float(change.loc[0, "mean_change"]) == pytest.approx(np.mean(RUNS[3]) - np.mean(RUNS[1]), abs=1e-4)

    crossed = _grid_with(page, "direction")
    shown = sorted(zip(crossed["pair_id"], crossed["direction"], strict=True))
    # 0.50 -> 0.72 rises above 0.7; 0.75 -> 0.60 falls below; 0.90 -> 0.95 and 0.65 -> 0.69 keep their side.
    assert shown == [("e2e-0", "now above"), ("e2e-1", "now below")]
    assert shown == sorted(zip(expected.crossed["pair_id"], expected.crossed["direction"], strict=True))
