"""ui.resources' cached analyses: keyed by every row of a results table, not Streamlit's sample of big ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants
from ui import resources

N_ROWS = 60_000  # over Streamlit's 50,000 rows, where it hashes a 10,000-row sample only


def _results(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    categories = np.array(["negation", "numerical", "entity_swap", "temporal"])
    return pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_SUITE: constants.SUITE_FAILURE_MODES,
            constants.COL_CATEGORY: categories[np.arange(N_ROWS) % len(categories)],
            constants.COL_PAIR_ID: np.arange(N_ROWS),
            constants.COL_COSINE: rng.uniform(0.0, 0.6, N_ROWS),
        }
    )


def _rows_streamlit_does_not_hash(frame: pd.DataFrame, n: int) -> pd.Index:
    from streamlit.runtime.caching import hashing

    sampled = frame.sample(n=hashing._PANDAS_SAMPLE_SIZE, random_state=hashing._sample_seed()).index
    return frame.index.difference(sampled)[:n]


@pytest.fixture(autouse=True)
def _empty_caches():
    import streamlit as st

    st.cache_data.clear()
    yield


def test_an_edited_60000_row_result_changes_the_summary():
    first = _results()
    edited = first.copy()
    rows = _rows_streamlit_does_not_hash(edited, 400)
    edited.loc[rows, constants.COL_COSINE] = 0.99  # 400 negation/numerical/... pairs now fail at 0.7
    before = resources.category_summary(first, 0.7)
    after = resources.category_summary(edited, 0.7)
    assert before["failure_rate"].sum() == 0
    assert after["failure_rate"].sum() == pytest.approx(400 / (N_ROWS / 4))
    # The same table again is a hit: the digest is computed once per table and the wrapper is not re-run.
    assert resources.results_digest(edited) == resources.results_digest(edited.copy())
    assert resources.results_digest(edited) != resources.results_digest(first)


def test_each_analysis_recomputes_only_for_new_inputs(monkeypatch):
    from core.scoring import tables

    calls: list[float] = []
    real = tables.category_summary
    monkeypatch.setattr(tables, "category_summary", lambda results, threshold: calls.append(threshold) or real(results, threshold))
    frame = _results()
    resources.category_summary(frame, 0.7)
    resources.category_summary(frame, 0.7)
    resources.category_summary(frame.copy(), 0.7)  # equal rows, new object: still a hit
    resources.category_summary(frame, 0.8)
    assert calls == [0.7, 0.8]


def test_a_users_rows_are_scored_whatever_their_suite():
    """The cached failure-mode table of a user's file (its own suite name) was empty behind a hidden suite filter."""
    from core.papers import failure_modes

    mine = _results().iloc[:400].assign(**{constants.COL_SUITE: "my-pairs.csv"})
    mine.loc[mine.index[:4], constants.COL_CATEGORY] = constants.CAT_POSITIVE
    table = resources.failure_mode_table(mine, 0.7)
    assert set(table[constants.COL_CATEGORY]) == {"negation", "numerical", "entity_swap", "temporal"}
    pd.testing.assert_frame_equal(table, failure_modes.failure_mode_table(mine, 0.7))
    assert resources.failure_rate_curves(mine)[constants.COL_CATEGORY].nunique() == 5


def test_a_note_is_toasted_once_per_server_not_once_per_session():
    """A one-off note (an exact ONNX export) toasted over the first result of every new session."""
    from streamlit.testing.v1 import AppTest

    def page():
        import pandas as pd
        import streamlit as st

        from core.models.encode import EncodeReport
        from core.scoring.runner import RunResult
        from ui import state

        state.init_state()
        st.session_state["results"]["k"] = RunResult(
            pd.DataFrame({"model": ["m"], "cosine": [0.5]}), {}, {"m": EncodeReport("m", notes=("issue-33 note: exported once",))}
        )
        state.show_notes("k")

    first = AppTest.from_function(page, default_timeout=60)
    first.run()
    second = AppTest.from_function(page, default_timeout=60)
    second.run()
    assert not first.exception and not second.exception
    toasts = [[t.value for t in app.toast] for app in (first, second)]
    assert any("exported once" in t for t in toasts[0]) and not any("exported once" in t for t in toasts[1]), toasts
    assert any("1 note" in e.label for e in second.expander)  # the second session still has it, collapsed


def test_a_model_a_server_encodes_is_refused_before_any_load(monkeypatch):
    """The shared model instance is one per process: an endpoint's would carry one session's key to every other."""
    from core.models import registry
    from core.models.loading import ModelUnavailable
    from core.models.options import EncodeOptions

    loads: list[str] = []
    monkeypatch.setattr(resources, "load", lambda name, options: loads.append(name))
    resources.model.clear()
    try:
        with pytest.raises(ModelUnavailable, match="served by an endpoint"):
            resources.model("openai:text-embedding-3-small", EncodeOptions())
        assert loads == []
        resources.model(registry.MINILM_L6, EncodeOptions())
        assert loads == [registry.MINILM_L6]
    finally:
        resources.model.clear()  # the stand-in's None must not outlive this test in the shared cache
