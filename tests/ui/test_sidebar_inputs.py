"""Honest inputs: the sidebar refuses what cannot be a model, asks for remote code only where needed,
and a failed model's error appears once per page with what to do (AppTest, no model loaded)."""

from __future__ import annotations

import pytest
from apptest_support import open_page

from ui.state import ERROR_HELP, KEY_ERRORS, KEY_RESULTS


@pytest.fixture(scope="module")
def at():
    return open_page("views/home.py", timeout=120)


def _add(at, text: str) -> None:
    at.text_input(key="custom_model_input").input(text)
    next(b for b in at.button if b.label == "Add model").click()
    at.run()
    assert not at.exception


def _sidebar_captions(at) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def test_refuses_text_that_is_no_id_and_keeps_it(at):
    _add(at, "not a model id at all!!")
    assert any("is not a Hugging Face id or a folder" in c and "owner/name" in c for c in _sidebar_captions(at))
    assert "not a model id at all!!" not in at.session_state["selected_models"]
    assert at.text_input(key="custom_model_input").value == "not a model id at all!!"  # nothing typed is lost


def test_an_unknown_id_gets_no_remote_code_checkbox(at):
    _add(at, "intfloat/e5-small-v2")
    assert "intfloat/e5-small-v2" in at.session_state["selected_models"]
    assert not [c for c in at.sidebar.checkbox if c.label.startswith("Run remote code")]


def test_a_model_error_is_shown_once_with_what_to_do():
    app = open_page("views/compare.py", timeout=120)
    reason = "intfloat/e5-small-v2: not bundled, not in the local Hugging Face cache"
    app.session_state[KEY_ERRORS] = {"compare": {"intfloat/e5-small-v2": reason}, "other": {"intfloat/e5-small-v2": reason}}
    app.session_state[KEY_RESULTS] = {}
    app.run()
    errors = [e.value for e in app.error if "e5" in e.value]
    assert len(errors) == 1
    assert "hf download" in errors[0] and ERROR_HELP.split(":")[0] in errors[0]


def test_model_error_dedupes_within_a_rerun_and_shows_again_next_rerun():
    from streamlit.testing.v1 import AppTest

    def script():
        import streamlit as st

        from ui import state

        st.session_state[state.KEY_SHOWN_ERRORS] = set()  # what the sidebar does at the start of every rerun
        state.model_error("m/x", "m/x: failed in section one")
        state.model_error("m/x", "m/x: failed in section two")
        state.model_error("m/y", "m/y: failed")

    app = AppTest.from_function(script).run()
    shown = [e.value for e in app.error]
    assert len(shown) == 2 and "section one" in shown[0] and "section two" not in " ".join(shown) and "m/y" in shown[1].replace("\\", "")
    app.run()
    assert len(app.error) == 2


def test_the_download_hint_shows_the_id_as_typed_and_is_not_offered_for_folders():
    from ui.state import LOCAL_ERROR_HELP, error_help

    hint = error_help("intfloat/multilingual-e5_small")
    assert "`hf download intfloat/multilingual-e5_small`" in hint and "\\" not in hint
    for folder in ("/no/such/model-folder", "./my_model", "~/models/e5"):
        assert error_help(folder) == LOCAL_ERROR_HELP and "hf download" not in error_help(folder)
    assert "`" not in error_help("owner/na`me").split("`hf download ")[1].rstrip(".").split("`")[0]
