"""The sidebar's "Add an endpoint": an OpenAI-compatible server's model as one more model to compare.

The form asks for the base URL, the model name and the *name* of the
environment variable that holds the key (the key itself is never typed,
shown or kept here: the server process reads it from its environment).
Endpoints added in a session are kept in its state and registered again on
every rerun (:func:`core.models.endpoint.configure`), so the runner finds
their settings whichever page runs.
"""

from __future__ import annotations

import os

import streamlit as st

from core.models import endpoint
from ui.widgets import md_escape

KEY_ENDPOINTS = "endpoint_settings"
_MESSAGE = "endpoint_message"


def _add_endpoint(models_key: str, custom_key: str) -> None:
    ss = st.session_state
    dims = int(ss.get("endpoint_dimensions") or 0)
    try:
        settings = endpoint.make_settings(ss.get("endpoint_model", ""), ss.get("endpoint_base_url", ""), ss.get("endpoint_key_env", ""), dims or None)
    except endpoint.EndpointError as exc:
        ss[_MESSAGE] = f"⚠️ {exc}"  # the typed values stay in their boxes to be corrected
        return
    ss[KEY_ENDPOINTS] = {**ss.get(KEY_ENDPOINTS, {}), settings.name: settings}
    endpoint.configure(settings)
    if settings.name not in ss[custom_key]:
        ss[custom_key] = [*ss[custom_key], settings.name]
    if settings.name not in ss[models_key]:
        ss[models_key] = [*ss[models_key], settings.name]
    key_state = "set" if os.environ.get(settings.key_env) else "not set: servers that need a key will refuse"
    ss[_MESSAGE] = f"Added {settings.name}: {endpoint.describe(settings)}; ${settings.key_env} is {key_state}."


def register_session_endpoints() -> None:
    """Register this session's endpoints again (another session may have pointed a name elsewhere)."""
    for settings in st.session_state.get(KEY_ENDPOINTS, {}).values():
        endpoint.configure(settings)


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
    with st.expander("Add an endpoint"):
        st.caption("Any OpenAI-compatible /v1/embeddings server (OpenAI, Azure OpenAI, vLLM, Ollama, TEI, Infinity, LM Studio). "
                   "Texts are sent once: vectors are cached by base URL, model and dimensions.")
        st.text_input("Base URL", key="endpoint_base_url", placeholder=os.environ.get(endpoint.BASE_URL_ENV) or "http://127.0.0.1:8000/v1")
        st.text_input("Model name", key="endpoint_model", placeholder="text-embedding-3-small")
        st.text_input("Environment variable holding the key", key="endpoint_key_env", value=endpoint.DEFAULT_KEY_ENV,
                      help="The variable's NAME, set where the app runs. The key itself is never typed here, shown or stored.")
        st.number_input("Dimensions (0: the model's own)", min_value=0, step=1, key="endpoint_dimensions")
        st.button("Add endpoint", on_click=_add_endpoint, args=(models_key, custom_key))
        if st.session_state.get(_MESSAGE):
            st.caption(md_escape(st.session_state[_MESSAGE]))
