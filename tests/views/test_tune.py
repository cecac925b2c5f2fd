"""The Tune page: pick a model, run a short tune with progress, see the report held-out first (a tiny stand-in model)."""

from __future__ import annotations

import pytest
from apptest_support import open_page
from hub_cache_support import StandIn, build_standin

from core import constants as C

PAGE = "views/tune.py"


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
    assert any("saved to" in s.value for s in at.success)


def test_the_saved_model_loads_as_a_folder(at):
    from sentence_transformers import SentenceTransformer

    folder = next(s.value for s in at.success if "saved to" in s.value).split("`")[1]
    assert SentenceTransformer(folder, device="cpu").encode(["a sentence"]).shape == (1, 32)
