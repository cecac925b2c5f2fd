"""Issue 38: where an endpoint's key comes from. A typed key is held in memory only; a session sees only its own endpoints."""

from __future__ import annotations

import contextvars
import pickle

import pytest

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


def test_a_session_sees_only_its_own_endpoints():
    mine = endpoint.make_settings("mine", "http://127.0.0.1:9/v1", env_key=False)

    def in_session():
        endpoint.use_session_settings([mine])
        assert endpoint.settings_for("openai:mine") is mine
        with pytest.raises(endpoint.EndpointError, match="not set up in this session"):
            endpoint.settings_for("openai:theirs")

    contextvars.copy_context().run(in_session)
    assert endpoint.settings_for("openai:theirs").model == "theirs"  # outside a session (the CLI): configured, else the defaults


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
    """Review of issue 38: the redaction is process-wide, so a visitor typing "negation" as a key must not blank that word for everyone."""
    from core.messages import redact as redact_everywhere

    word = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=endpoint.SessionKey("negation"))
    assert endpoint.api_key(word) == "negation"
    assert redact_everywhere("the negation cue") == "the negation cue"
    key = "sk-typed-canary-0f3e9a7b2c4d"
    typed = endpoint.make_settings("m", "http://127.0.0.1:9/v1", session_key=endpoint.SessionKey(key))
    assert endpoint.api_key(typed) == key
    assert key not in redact_everywhere(f"echoed {key}")
