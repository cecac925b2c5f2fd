"""The History page through the real router, and the app runs that feed it (Your data with MiniLM)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apptest_support import assert_leads_with, open_page, table_with

from core import constants
from core.history import store
from core.models.registry import MINILM_L6

PAGE = "views/history.py"
PAIRS_TSV = (
    b"text_a\ttext_b\tcategory\n"
    b"The history page patient has diabetes\tThe history page patient does not have diabetes\tnegation\n"
    b"The history page cat sat on the mat\tA history page feline rested on the rug\tpositive\n"
)


@pytest.fixture
def history_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    return path


def _frame(cosines: list[float]) -> pd.DataFrame:
    n = len(cosines)
    return pd.DataFrame(
        {
            "model": MINILM_L6,
            "suite": "s",
            "category": "negation",
            "pair_id": [f"p{i}" for i in range(n)],
            "text_a": [f"a{i}" for i in range(n)],
            "text_b": [f"b{i}" for i in range(n)],
            "cosine": cosines,
        }
    )


def test_empty_history_says_how_to_fill_it(history_file):
    app = open_page(PAGE)
    assert any("No run stored yet" in i.value for i in app.info)
    # Every page whose runs land here is named, Your corpus's audits and Retrieval's runs too (once left out).
    intro = app.markdown[0].value
    for title in ("Failure modes", "OOV robustness", "Your data", "Your corpus", "Retrieval", "Index settings", "Tune"):
        assert f"**{title}**" in intro, (title, intro)
    assert "`audit`" in intro


def test_two_runs_are_listed_and_compared(history_file):
    before, after = [0.5, 0.75, 0.9], [0.72, 0.6, 0.95]
    store.record_run(_frame(before), command="run", origin="cli", settings={"threshold": 0.7})
    store.record_run(_frame(after), command="failure-modes", origin="app", settings={"threshold": 0.7})
    app = open_page(PAGE)
    runs = table_with(app, "run_id")
    assert list(runs["run_id"]) == [2, 1]
    assert app.selectbox(key="hist_before").value == 1 and app.selectbox(key="hist_after").value == 2

    change = table_with(app, "mean_change")
    [row] = change.to_dict("records")
    assert row["mean_change"] == pytest.approx(np.mean(after) - np.mean(before))
    assert row["rate_before"] == pytest.approx(2 / 3) and row["rate_after"] == pytest.approx(2 / 3)
    crossed = table_with(app, "direction")
    assert sorted(zip(crossed["pair_id"], crossed["direction"], strict=True)) == [("p0", "now above"), ("p1", "now below")]
    # What changed, in words, above the runs table: (0.72 + 0.6 + 0.95 - 0.5 - 0.75 - 0.9) / 3 = +0.04
    assert_leads_with(
        app,
        [
            f"From run #1 to run #2, the largest change is MiniLM-L6 on negation pairs: mean cosine +0.0400 "
            f"(95% CI {row['mean_ci_low']:+.4f} to {row['mean_ci_high']:+.4f}).",
            "2 pair scores crossed the threshold: 1 now above, 1 now below.",
        ],
    )

    # Judged at one threshold (the sidebar's 0.7 by default) the answer is the same here; at 0.8 p1 stays below.
    app.session_state["threshold"] = 0.8
    app.toggle(key="hist_shared_threshold").set_value(True).run()
    assert not app.exception
    # 0.5->0.72 and 0.75->0.6 stay below 0.8; 0.9->0.95 stays above: no crossed-pairs table, a note instead.
    assert not any("direction" in d.value.columns for d in app.dataframe)
    assert any("No pair crossed" in i.value for i in app.info)
    assert table_with(app, "rate_change")["threshold_after"].tolist() == [0.8]

    app.selectbox(key="hist_before").set_value(2).run()
    assert any("Pick two different runs" in w.value for w in app.warning)


def test_a_your_data_run_is_stored_and_shows_up(history_file):
    app = open_page("views/your_data.py")
    app.session_state["yd_upload_bytes"] = PAIRS_TSV
    app.session_state["yd_upload_name"] = "history.tsv"
    app.run()
    next(b for b in app.button if b.label == "Run on selected models").click().run()
    assert not app.exception
    [run] = store.list_runs(history_file).to_dict("records")
    stored = store.load_run(int(run["run_id"]), history_file)
    assert (stored.origin, stored.command, stored.threshold) == ("app", "your-data", constants.DEFAULT_THRESHOLD)
    assert stored.settings["sources"] == [{"file": "history.tsv", "sha256": hashlib.sha256(PAIRS_TSV).hexdigest()}]
    assert len(stored.results) == 2 and set(stored.results["model"]) == {MINILM_L6}
    app.switch_page(PAGE).run()
    assert not app.exception
    assert list(table_with(app, "run_id")["command"]) == ["your-data"]
    assert any("Only one run so far" in i.value for i in app.info)


def test_a_cli_run_and_a_page_run_of_one_file_diff_pair_by_pair(history_file, tmp_path, capsys):
    import json

    from core.cli import main as cli

    app = open_page("views/your_data.py")
    app.session_state["yd_upload_bytes"] = PAIRS_TSV
    app.session_state["yd_upload_name"] = "history.tsv"
    app.run()
    next(b for b in app.button if b.label == "Run on selected models").click().run()
    path = tmp_path / "history.tsv"
    path.write_bytes(PAIRS_TSV)
    assert cli.main(["run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet"]) == 0
    page_run, cli_run = store.load_run(1, history_file), store.load_run(2, history_file)
    assert set(page_run.results["suite"]) != set(cli_run.results["suite"])  # "uploaded" vs the file's name
    assert page_run.pairs_digest == cli_run.pairs_digest
    capsys.readouterr()
    assert cli.main(["history", "diff", "1", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["n_matched"], doc["n_only_before"], doc["n_only_after"]) == (2, 0, 0)
    change = pd.DataFrame(doc["categories"])
    assert change["mean_change"].abs().max() < 1e-6  # one model, one file: the same cosines


def test_a_history_that_cannot_be_written_is_one_warning_and_the_run_stays(tmp_path, monkeypatch):
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(folder))
    app = open_page("views/your_data.py")
    app.session_state["yd_upload_bytes"] = PAIRS_TSV
    app.session_state["yd_upload_name"] = "history.tsv"
    app.run()
    next(b for b in app.button if b.label == "Run on selected models").click().run()
    assert not app.exception
    warnings = [w.value for w in app.warning if "run history" in w.value]
    assert len(warnings) == 1 and "results below are unaffected" in warnings[0]
    assert len(table_with(app, constants.COL_TOKENS_A)) == 2
    app.switch_page(PAGE).run()
    assert not app.exception
    assert any("cannot be read" in e.value for e in app.error)


@pytest.mark.parametrize(
    "page, button, command, suites",
    [
        ("views/failure_modes.py", "Run failure-mode suite", "failure-modes", [constants.SUITE_FAILURE_MODES]),
        ("views/oov.py", "Run OOV suites", "oov", [constants.SUITE_OOV, constants.SUITE_BASELINE]),
    ],
)
def test_suite_pages_store_their_runs(history_file, page, button, command, suites):
    from core.papers.suites import SUITE_FILES

    app = open_page(page)
    next(b for b in app.button if b.label == button).click().run()
    assert not app.exception
    [run] = store.list_runs(history_file).to_dict("records")
    stored = store.load_run(int(run["run_id"]), history_file)
    assert (stored.origin, stored.command) == ("app", command)
    assert stored.settings["sources"] == [{"suite": s, "sha256": hashlib.sha256(SUITE_FILES[s].read_bytes()).hexdigest()} for s in suites]
    assert set(stored.results["suite"]) == set(suites)
    assert stored.models.loc[0, "model"] == MINILM_L6 and stored.models.loc[0, "revision"]


def test_the_default_comparison_is_the_latest_two_runs_of_the_same_pairs(history_file):
    store.record_run(_frame([0.5, 0.6]), command="run", origin="cli", settings={"threshold": 0.7})
    other = _frame([0.5, 0.6]).assign(text_a=["x0", "x1"])
    store.record_run(other, command="run", origin="cli", settings={"threshold": 0.7})
    store.record_run(
        _frame([0.75, 0.6]).assign(suite="uploaded", pair_id=["1", "2"]), command="your-data", origin="app", settings={"threshold": 0.7}
    )
    app = open_page(PAGE)
    assert not app.exception
    # Run 2 shares no pair with 3; run 1 does (under another suite name): 1 against 3, pair by pair.
    assert app.selectbox(key="hist_before").value == 1 and app.selectbox(key="hist_after").value == 3
    crossed = table_with(app, "direction")
    assert list(zip(crossed["text_a"], crossed["direction"], strict=True)) == [("a0", "now above")]


def test_runs_can_be_named_pinned_and_deleted_on_the_page(history_file):
    for shift in (0.0, 0.1, 0.2):
        store.record_run(_frame([0.5 + shift, 0.6]), command="run", origin="cli", settings={"threshold": 0.7})
    app = open_page(PAGE)
    app.selectbox(key="hist_manage").set_value(1).run()
    app.text_input(key="hist_name_1").input("baseline").run()
    next(b for b in app.button if b.label == "Save name").click().run()
    next(b for b in app.button if b.label.endswith("Pin")).click().run()
    assert not app.exception
    runs = store.list_runs(history_file).set_index("run_id")
    assert (runs.loc[1, "name"], bool(runs.loc[1, "pinned"])) == ("baseline", True)
    # The pinned run is the baseline the latest run is compared with, and it cannot be deleted.
    assert app.selectbox(key="hist_before").value == 1 and app.selectbox(key="hist_after").value == 3
    assert next(b for b in app.button if b.label == "Delete").disabled
    app.selectbox(key="hist_manage").set_value(2).run()
    next(b for b in app.button if b.label == "Delete").click().run()
    assert not app.exception
    assert list(store.list_runs(history_file)["run_id"]) == [3, 1]
    assert "#1 📌 “baseline”" in app.selectbox(key="hist_before").format_func(1)
