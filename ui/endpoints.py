"""The sidebar's "Add an endpoint": an OpenAI-compatible server's model as one more model to compare.

A shared app must not let a visitor spend the server's secrets (issue 38), so
the form never takes the *name* of an environment variable.  An endpoint's
key is either

* a key the visitor types: a :class:`core.models.endpoint.SessionKey` kept in
  this session's state only (never in an environment variable, the history,
  a cache key or a log) and sent only to the base URL it was added with; or
* the server's own key for a base URL the operator allows
  (:func:`allowed_endpoints`: ``[endpoints]`` in Streamlit's secrets file
  and ``$COSINE_PROBE_ENDPOINTS``, base URL -> key variable), used when the
  visitor types no key for that URL.

Any other URL gets no key at all.  With no allowlist a visitor cannot make
the server read any environment variable, ``OPENAI_API_KEY`` included.
Endpoints added in a session are kept in its state and made that session's
own on every rerun (:func:`core.models.endpoint.use_session_settings`), so
another session never runs them and an endpoint model this session did not
add is refused.  The CLI, run by the key's owner, keeps ``--api-key-env``.
"""

from __future__ import annotations

import os

import streamlit as st

from core.models import endpoint
from ui.widgets import md_escape

KEY_ENDPOINTS = "endpoint_settings"
KEY_API_KEY = "endpoint_api_key"
_MESSAGE = "endpoint_message"
SECRETS_SECTION = "endpoints"


def allowed_endpoints() -> tuple[dict[str, str], str | None]:
    """The operator's allowlist (base URL -> key variable, "" for none) and a problem reading it, if any.

    Read on every call from ``[endpoints]`` in ``st.secrets`` and ``$COSINE_PROBE_ENDPOINTS``
    (the server's configuration, never a visitor's input); a bad entry makes the whole list empty.
    """
    try:
        section = st.secrets.get(SECRETS_SECTION)
    except FileNotFoundError:  # no secrets.toml (StreamlitSecretNotFoundError) or one that does not parse
        section = None
    try:
        allowed = endpoint.parse_allowlist(dict(section)) if section else {}
        allowed.update(endpoint.parse_allowlist(os.environ.get(endpoint.ALLOWLIST_ENV, "")))
    except (endpoint.EndpointError, TypeError, ValueError) as exc:
        return {}, f"the operator's endpoint allowlist is not valid ({exc}); no server key is used"
    return allowed, None


def _add_endpoint(models_key: str, custom_key: str) -> None:
    ss = st.session_state
    dims = int(ss.get("endpoint_dimensions") or 0)
    typed_key = (ss.get(KEY_API_KEY) or "").strip()
    try:
        base = (ss.get("endpoint_base_url") or "").strip()
        if not base:
            raise endpoint.EndpointError("type the endpoint's base URL, e.g. http://127.0.0.1:8000/v1")
        url = endpoint.clean_base_url(base)
        allowed, _problem = allowed_endpoints()
        if typed_key:
            settings = endpoint.make_settings(
                ss.get("endpoint_model", ""), url, dimensions=dims or None, session_key=endpoint.SessionKey(typed_key)
            )
        elif url in allowed:
            settings = endpoint.make_settings(
                ss.get("endpoint_model", ""), url, allowed[url] or None, dims or None, env_key=bool(allowed[url])
            )
        else:
            settings = endpoint.make_settings(ss.get("endpoint_model", ""), url, dimensions=dims or None, env_key=False)
    except endpoint.EndpointError as exc:
        ss[_MESSAGE] = f"⚠️ {exc}"  # the typed values stay in their boxes to be corrected; messages never echo them
        return
    ss[KEY_API_KEY] = ""  # the key now lives in the settings' SessionKey only
    ss[KEY_ENDPOINTS] = {**ss.get(KEY_ENDPOINTS, {}), settings.name: settings}
    register_session_endpoints()
    if settings.name not in ss[custom_key]:
        ss[custom_key] = [*ss[custom_key], settings.name]
    if settings.name not in ss[models_key]:
        ss[models_key] = [*ss[models_key], settings.name]
    ss[_MESSAGE] = f"Added {settings.name}: {endpoint.describe(settings)}."


def register_session_endpoints() -> None:
    """Make this session's endpoints the only ones its run sees (:func:`core.models.endpoint.use_session_settings`)."""
    endpoint.use_session_settings(st.session_state.get(KEY_ENDPOINTS, {}).values())


def settings_key(name: str) -> str:
    """A digest of an endpoint model's settings (keys cached availability), empty for other models."""
    if not endpoint.is_endpoint(name):
        return ""
    try:
        return endpoint.settings_digest(endpoint.settings_for(name))
    except endpoint.EndpointError:
        return "invalid"


def endpoint_form(models_key: str, custom_key: str) -> None:
    """The "Add an endpoint" expander."""
    allowed, problem = allowed_endpoints()
    with st.expander("Add an endpoint"):
        st.caption(
            "Any OpenAI-compatible /v1/embeddings server (OpenAI, Azure OpenAI, vLLM, Ollama, TEI, Infinity, LM Studio). "
            "Texts are sent once: vectors are cached by base URL, model and dimensions."
        )
        st.text_input("Base URL", key="endpoint_base_url", placeholder=next(iter(allowed), "http://127.0.0.1:8000/v1"))
        st.text_input("Model name", key="endpoint_model", placeholder="text-embedding-3-small")
        st.text_input(
            "API key (optional)",
            key=KEY_API_KEY,
            type="password",
            autocomplete="off",
            help="Kept in this browser session's memory only and sent only to the base URL above; never written or shown. "
            "Leave it empty for a server that needs none"
            + (", or to use this server's own key for a URL its operator allows." if allowed else "."),
        )
        if allowed:
            st.caption("This server's operator allows its own key for: " + ", ".join(md_escape(u) for u in allowed))
        if problem:
            st.caption(md_escape(f"⚠️ {problem}"))
        st.number_input("Dimensions (0: the model's own)", min_value=0, step=1, key="endpoint_dimensions")
        st.button("Add endpoint", on_click=_add_endpoint, args=(models_key, custom_key))
        if st.session_state.get(_MESSAGE):
            st.caption(md_escape(st.session_state[_MESSAGE]))
