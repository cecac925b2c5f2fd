"""The Tune page: pick a model, run a short tune with progress, see the report held-out first (a tiny stand-in model)."""

from __future__ import annotations

import pytest
from apptest_support import open_page
from hub_cache_support import StandIn, build_standin

from core import constants as C
from core.history import store
from core.history.sources import file_sha256
from core.paths import PROJECT_ROOT

PAGE = "views/tune.py"
BEFORE_CLICK: dict[str, object] = {}  # what the page said before the fixture's click


@pytest.fixture(scope="module")
def at(tmp_path_factory):
    folder = build_standin(StandIn("tiny/tune-page", "mean"), tmp_path_factory.mktemp("tiny") / "model")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COSINE_PROBE_DEFAULT_MODELS", str(folder))
        app = open_page(PAGE)
        assert any("Press **Tune**" in i.value for i in app.info)
        app.number_input(key="tn_groups").set_value(8).run()
        app.number_input(key="tn_batch").set_value(4).run()
        app.number_input(key="tn_max_steps").set_value(1).run()
        BEFORE_CLICK.update(label=app.button(key="tn_run").label, captions=[c.value for c in app.caption])
        app.button(key="tn_run").click().run()
        yield app


def test_tune_runs_and_shows_the_held_out_half_first(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    headers = [h.value for h in at.header]
    assert headers[0].startswith(f"Win rate, {C.SPLIT_HELD_OUT} half") and headers[1].startswith(f"Win rate, {C.SPLIT_TRAIN} half")
    wins = next(d.value for d in at.dataframe if {C.COL_SETTING, C.COL_WIN_RATE, C.COL_MODE} <= set(d.value.columns))
    assert wins[C.COL_SPLIT].iloc[0] == C.SPLIT_HELD_OUT
    assert {C.TUNE_SETTING_UNTOUCHED, C.TUNE_SETTING_TUNED, C.TUNE_SETTING_CONTROL} <= set(wins[C.COL_SETTING])
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) == 2
    # The general cost on natural data and the shortcut probe, the cost said first.
    lead = next(m.value for m in at.markdown if m.value.startswith("**General cost on WordNet antonym glosses"))
    assert "**General cost on NLI sentence triples, natural data it never trained on**" in lead
    assert "General cost on natural data it never trained on" in headers and "Shortcut probe: a negation cue, or the meaning?" in headers
    assert headers.index("General cost on natural data it never trained on") < headers.index("Hand-written vs rule-made variants")
    natural = next(
        d.value for d in at.dataframe if "measure" in d.value.columns and "at_ceiling" in d.value.columns and "fixed" in d.value.columns
    )
    assert set(natural["measure"]) == {"opposite win rate", "recall@1"}
    assert any("The door was not closed." in set(d.value.get(C.COL_TEXT_B, [])) for d in at.dataframe)
    assert any("saved to" in s.value for s in at.success)


def test_the_run_says_its_expected_time_before_the_click(at):
    """Training takes minutes and the page said nothing of how long until it had run."""
    said = [c for c in BEFORE_CLICK["captions"] if c.startswith("⏱️ Expected time: ")]
    assert len(said) == 1, BEFORE_CLICK["captions"]
    # One step (the cap set above), the control's too; a folder model's size is unknown, taken as base-size and said so
    assert "(1 training step and 1 for the control; " in said[0] and "unknown size (taken as base-size)" in said[0], said
    assert str(BEFORE_CLICK["label"]).startswith("Tune (") and str(BEFORE_CLICK["label"]).endswith(")")


def test_the_saved_model_loads_as_a_folder(at):
    from sentence_transformers import SentenceTransformer

    folder = next(s.value for s in at.success if "saved to" in s.value).split("`")[1]
    assert SentenceTransformer(folder, device="cpu").encode(["a sentence"]).shape == (1, 32)


SAMPLES = PROJECT_ROOT / "data" / "samples"
LABELS = (
    b"text_a,text_b,label\nThe door was open.,The door was not closed.,match\nA cat sleeps.,A cat is asleep.,match\n"
    b"The shop opens at nine.,Rain fell all night.,no match\nHe sold the car.,The river froze.,no match\n"
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_standin(StandIn("tiny/tune-page-triples", "mean"), tmp_path_factory.mktemp("tiny-triples") / "model")


def _triples_page(tiny, monkeypatch):
    monkeypatch.setenv("COSINE_PROBE_DEFAULT_MODELS", str(tiny))
    app = open_page(PAGE)
    app.radio(key="tn_data").set_value("triples").run()
    assert any("Upload a triples file" in i.value for i in app.info)
    return app


def test_a_triples_upload_tunes_reports_and_is_recorded(tiny, tmp_path, monkeypatch):
    stored = tmp_path / "history.duckdb"
    monkeypatch.setenv(C.HISTORY_ENV_VAR, str(stored))
    app = _triples_page(tiny, monkeypatch)
    data = (SAMPLES / "nli-triples.csv").read_bytes()
    app.file_uploader(key="tn_triples_uploader").set_value(("nli.csv", data, "text/csv")).run()
    app.file_uploader(key="tn_labels_uploader").set_value(("my labels.csv", LABELS, "text/csv")).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    pickers = {s.label: s.value for s in app.selectbox if "column" in s.label}
    assert pickers == {"Anchor (query) column": "premise", "Positive column": "entailed"}
    app.number_input(key="tn_batch").set_value(4).run()
    app.number_input(key="tn_max_steps").set_value(1).run()
    app.checkbox(key="tn_control").uncheck().run()
    said = [c.value for c in app.caption if c.value.startswith("⏱️ Expected time: ")]
    assert len(said) == 1 and "(1 training step; " in said[0], said  # the triples file's run, without the control
    app.button(key="tn_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert any("saved to" in s.value for s in app.success)
    wins = next(d.value for d in app.dataframe if {C.COL_SETTING, C.COL_WIN_RATE, C.COL_SPLIT} <= set(d.value.columns))
    assert wins[C.COL_SPLIT].iloc[0] == C.SPLIT_HELD_OUT
    costs = next(d.value for d in app.dataframe if d.value.astype(str).apply(lambda c: c.str.contains("my labels.csv")).any().any())
    assert len(costs) >= 2
    # Recorded as the CLI records a tune: command tune, the triples file by its bytes' SHA-256, the labels file beside it.
    run = store.load_run(1, stored)
    assert run.command == "tune" and run.origin == C.ORIGIN_APP
    assert run.settings["sources"][0] == {"file": "nli.csv", "sha256": file_sha256(SAMPLES / "nli-triples.csv")}
    assert run.settings["sources"][1]["file"] == "my labels.csv"
    assert run.settings["config"]["max_steps"] == 1
    assert len(run.results) > 0 and run.results[C.COL_MODEL].str.contains(r"\[").all()


def test_a_bad_triples_upload_is_one_error_and_keeps_the_page(tiny, monkeypatch):
    app = _triples_page(tiny, monkeypatch)
    app.file_uploader(key="tn_triples_uploader").set_value(("book.csv", b"PK\x03\x04rest", "text/csv")).run()
    assert not app.exception
    assert len(app.error) == 1 and "Excel or zip" in app.error[0].value
    app.file_uploader(key="tn_labels_uploader").set_value(("labels.csv", b"text_a,text_b\na,b\n", "text/csv")).run()
    assert not app.exception
    assert any("no label column" in e.value for e in app.error)
    app.button(key="tn_run").click().run()
    assert not app.exception
    assert any("Upload a triples file" in e.value for e in app.error)
