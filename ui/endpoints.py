"""The sidebar's "Add an endpoint": an OpenAI-compatible server's model as one more model to compare.

A shared app must not let a visitor spend the server's secrets, so
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
Endpoints added in a session are kept in its state, and ``core`` finds them
there from every thread that runs the session's code (:func:`session_endpoints`,
installed with :func:`core.models.endpoint.use_session_lookup`): a fragment's
rerun, which skips the sidebar, scores with the visitor's endpoint like a
full run; another session never runs them; and an endpoint model this
session did not add is refused, never sent to the environment's
``OPENAI_BASE_URL`` with its key.  The CLI, run by the key's owner, keeps
``--api-key-env``.

The boxes are one ``st.form``: the browser sends what they hold when "Add
endpoint" is pressed.  Outside a form a box sends its text when it loses
focus to something outside itself, and Tab from the password box lands on
its own show-password toggle, so a key typed and left with Tab was never
sent and the endpoint was added with no key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.models import endpoint
from ui.widgets import md_escape

KEY_ENDPOINTS = "endpoint_settings"
KEY_API_KEY = "endpoint_api_key"
# Each added key empties its box by giving the box a new widget key: a value set from the script does not reach a box
# whose text the form's submit sent (the browser keeps showing the key), while a new box starts empty.
_KEY_BOX = "endpoint_api_key_box"
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
    typed_key = (ss.get(key_box()) or "").strip()
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
    ss.pop(key_box(), None)  # the key now lives in the settings' SessionKey only
    ss[_KEY_BOX] = ss.get(_KEY_BOX, 0) + 1
    ss[KEY_ENDPOINTS] = {**ss.get(KEY_ENDPOINTS, {}), settings.name: settings}
    if settings.name not in ss[custom_key]:
        ss[custom_key] = [*ss[custom_key], settings.name]
    if settings.name not in ss[models_key]:
        ss[models_key] = [*ss[models_key], settings.name]
    ss[_MESSAGE] = f"Added {settings.name}: {endpoint.describe(settings)}."


def session_endpoints() -> Mapping[str, endpoint.EndpointSettings] | None:
    """The endpoints of the session whose script thread calls (a full run, a fragment's rerun, a callback); None outside the app.

    Streamlit gives each thread that runs a session's code that session's
    context, whatever started the run; a thread of the app's server that
    runs no session's code gets no endpoint at all (an empty mapping), so a
    visitor's model name can never reach the environment's key from there.
    """
    if get_script_run_ctx(suppress_warning=True) is None:
        return {} if runtime.exists() else None
    return dict(st.session_state.get(KEY_ENDPOINTS, {}))


endpoint.use_session_lookup(session_endpoints)  # before any page runs: every page imports this module through ui.state


def key_box() -> str:
    """The widget key of the API key box now (a new one after each key added, see ``_KEY_BOX``)."""
    return f"{KEY_API_KEY}_{st.session_state.get(_KEY_BOX, 0)}"


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
    # A form (see the module's docstring); Enter in a box does not add a half-typed endpoint, only the button does.
    with st.expander("Add an endpoint"), st.form("endpoint_form", border=False, enter_to_submit=False):
        st.caption(
            "Any OpenAI-compatible /v1/embeddings server (OpenAI, Azure OpenAI, vLLM, Ollama, TEI, Infinity, LM Studio). "
            "Texts are sent once: vectors are cached by base URL, model and dimensions."
        )
        st.text_input("Base URL", key="endpoint_base_url", placeholder=next(iter(allowed), "http://127.0.0.1:8000/v1"))
        st.text_input("Model name", key="endpoint_model", placeholder="text-embedding-3-small")
        st.text_input(
            "API key (optional)",
            key=key_box(),
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
        st.form_submit_button("Add endpoint", on_click=_add_endpoint, args=(models_key, custom_key))
        if st.session_state.get(_MESSAGE):
            st.caption(md_escape(st.session_state[_MESSAGE]))
