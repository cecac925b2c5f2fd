"""Where an endpoint's key comes from. A typed key is held in memory only; a session sees only its own endpoints."""

from __future__ import annotations

import pickle
import threading

import pytest
from endpoint_support import scripted_server

from core.models import endpoint

TYPED = "sk-typed-0123456789abcdef"


def test_a_session_key_is_in_no_repr_pickle_fingerprint_or_digest_and_is_sent_as_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-0123456789abcdef")
    key = endpoint.SessionKey(TYPED)
    settings = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=key)
    assert settings.key_env == "" and endpoint.api_key(settings) == TYPED
    for text in (
        repr(key),
        repr(settings),
        endpoint.fingerprint(settings),
        endpoint.settings_digest(settings),
        endpoint.describe(settings),
    ):
        assert TYPED not in text and TYPED[3:15] not in text
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(settings)
    other = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=endpoint.SessionKey(TYPED))
    assert endpoint.fingerprint(other) == endpoint.fingerprint(settings)  # the same vectors
    assert endpoint.settings_digest(other) != endpoint.settings_digest(settings)  # but another client: one session never uses another's key
    with pytest.raises(endpoint.EndpointError, match="empty"):
        endpoint.SessionKey("  ")


def test_no_environment_key_unless_asked(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-0123456789abcdef")
    assert endpoint.api_key(endpoint.make_settings("m", "http://127.0.0.1:9/v1", env_key=False)) == ""
    assert endpoint.describe(endpoint.make_settings("m", "http://127.0.0.1:9/v1", env_key=False)).endswith("(no key)")
    assert endpoint.api_key(endpoint.make_settings("m", "http://127.0.0.1:9/v1")) == "sk-server-0123456789abcdef"  # the CLI's default


class Sessions:
    """A stand-in for the app's lookup: like Streamlit, the session is an attribute of the thread running its code."""

    def __init__(self, endpoints: dict[str, dict[str, endpoint.EndpointSettings]]) -> None:
        self.endpoints = endpoints

    def __call__(self):
        session = getattr(threading.current_thread(), "session", None)
        return None if session is None else self.endpoints.get(session, {})

    def run(self, session: str | None, task):
        """``task()`` in a new thread of ``session`` (a fragment rerun, a callback): its answer or the error it raised."""
        out: list = []

        def target():
            try:
                out.append(task())
            except Exception as exc:  # noqa: BLE001 - handed back to the test
                out.append(exc)

        thread = threading.Thread(target=target)
        thread.session = session
        thread.start()
        thread.join(30)
        return out[0]


@pytest.fixture
def sessions(monkeypatch):
    """No lookup installed by an earlier import of the app's code, no process-wide endpoints; the test's lookup installed."""
    monkeypatch.setattr(endpoint, "_SESSION_LOOKUP", [])
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    lookup = Sessions({})
    endpoint.use_session_lookup(lookup)
    return lookup


def test_a_session_finds_its_endpoints_from_every_thread_it_runs_and_no_other_session_does(sessions, monkeypatch):
    """A fragment rerun runs in a thread of its own that the sidebar's run never touched: the session's endpoints are still its own."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-0123456789abcdef")
    mine = endpoint.make_settings("mine", "http://127.0.0.1:9/v1", env_key=False)
    sessions.endpoints["s1"] = {mine.name: mine}
    assert sessions.run("s1", lambda: endpoint.settings_for("openai:mine")) is mine  # the sidebar's run
    assert sessions.run("s1", lambda: endpoint.settings_for("openai:mine")) is mine  # a fragment's, another thread
    refused = sessions.run("s2", lambda: endpoint.settings_for("openai:mine"))
    assert isinstance(refused, endpoint.EndpointError) and "not set up in this session" in str(refused)
    # Outside any session (the CLI, run by the key's owner): the configured settings, else the environment's defaults.
    assert sessions.run(None, lambda: endpoint.settings_for("openai:theirs")).model == "theirs"


def test_an_endpoint_a_session_did_not_set_up_is_refused_in_one_line_never_sent_to_the_environments(sessions, monkeypatch):
    """The operator's OPENAI_BASE_URL and OPENAI_API_KEY, and endpoints configured process-wide, are never a session's fallback."""
    from core.models.loading import ModelUnavailable, load_model

    operator_key = "sk-operator-canary-4f1e9a2c7b"
    with scripted_server(model="m") as operator:
        monkeypatch.setenv("OPENAI_BASE_URL", operator.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", operator_key)
        endpoint.configure(endpoint.make_settings("openai:m", operator.base_url))
        sessions.endpoints["s1"] = {}
        refused = sessions.run("s1", lambda: endpoint.settings_for("openai:m"))
        failed = sessions.run("s1", lambda: load_model("openai:m"))
    assert isinstance(refused, endpoint.EndpointError) and isinstance(failed, ModelUnavailable)
    for message in (str(refused), str(failed)):
        assert "openai:m is not set up in this session" in message and "\n" not in message and operator_key not in message
    assert operator.requests == []  # not even GET /models


def test_the_operator_allowlist_from_secrets_or_the_environment():
    assert endpoint.parse_allowlist("http://127.0.0.1:8000/v1/=VLLM_KEY, https://api.openai.com/v1=OPENAI_API_KEY  http://h:1/v1=") == {
        "http://127.0.0.1:8000/v1": "VLLM_KEY",
        "https://api.openai.com/v1": "OPENAI_API_KEY",
        "http://h:1/v1": "",
    }
    assert endpoint.parse_allowlist({"http://h:1/v1": "K"}) == {"http://h:1/v1": "K"}
    assert endpoint.parse_allowlist("") == {}
    for bad in ("http://h:1/v1", "http://h:1/v1=sk-live-123", "nota url=K"):
        with pytest.raises(endpoint.EndpointError):
            endpoint.parse_allowlist(bad)


@pytest.mark.parametrize(
    "text", ["sk-proj-abcdefghijklmnop1234", "hf_abcdefghijklmnopqrstu", "AKIAIOSFODNN7EXAMPLE", "0123456789abcdef0123456789abcdef"]
)
def test_a_key_typed_as_a_model_name_is_refused_without_echo(text):
    with pytest.raises(endpoint.EndpointError) as raised:
        endpoint.make_settings(text, "http://127.0.0.1:9/v1")
    assert text not in str(raised.value)


@pytest.mark.parametrize(
    "text", ["text-embedding-3-small", "BAAI/bge-m3", "nomic-embed-text:latest", "paraphrase-multilingual-mpnet-base-v2", "skywork-embed"]
)
def test_model_names_are_not_mistaken_for_keys(text):
    assert not endpoint.looks_like_secret(text)


def test_a_bad_base_url_is_not_echoed():
    with pytest.raises(endpoint.EndpointError) as raised:
        endpoint.make_settings("m", TYPED)
    assert TYPED not in str(raised.value)


def test_a_short_word_typed_as_a_key_is_not_redacted_on_every_page_but_a_real_key_is():
    """Review of the redaction is process-wide, so a visitor typing "negation" as a key must not blank that word for everyone."""
    from core.messages import redact as redact_everywhere

    word = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=endpoint.SessionKey("negation"))
    assert endpoint.api_key(word) == "negation"
    assert redact_everywhere("the negation cue") == "the negation cue"
    key = "sk-typed-canary-0f3e9a7b2c4d"
    typed = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=endpoint.SessionKey(key))
    assert endpoint.api_key(typed) == key
    assert key not in redact_everywhere(f"echoed {key}")
