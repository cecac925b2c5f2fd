"""An endpoint that echoes the key gets the page's error line, never the key.

The page's error path passes the one redaction.
"""

from __future__ import annotations

from apptest_support import open_page
from endpoint_support import Reply, scripted_server

from core.models import endpoint
from ui.endpoints import KEY_ENDPOINTS

KEY = "sk-canary-page-6b2e9d04a7c1f3"
PASSWORD = "pw-canary-page-8c3a"
NAME = "openai:echoing"


def _everything_shown(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "text", "info", "error", "warning", "success", "code", "title", "subheader", "toast", "exception"):
        parts += [str(getattr(e, "value", "")) for e in getattr(at, kind, [])]
    parts += [str(e.value) for e in at.text_input] + [str(e.value) for e in at.text_area]
    parts += [d.value.to_string() for d in at.dataframe]
    parts += [str(e.label) for e in at.expander] + [str(e.label) for e in getattr(at, "status", [])]
    return "\n".join(parts)


def test_an_echoed_key_is_not_in_the_pages_error_line(tmp_path, monkeypatch):
    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(tmp_path / "h.duckdb"))
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    echo = f"Bearer {KEY} via http://admin:{PASSWORD}@proxy.internal/v1"
    at = open_page("views/compare.py", timeout=120)
    with scripted_server(
        model="echoing",
        embeddings=lambda texts: Reply(
            200, {"data": [{"index": i, "embedding": [echo, 0.1]} for i in range(len(texts))]}, {"X-Echo": echo}, f"OK {echo}"
        ),
    ) as server:
        # The key a visitor typed for this endpoint (a page takes no variable's name).
        settings = endpoint.make_settings(NAME, server.base_url, session_key=endpoint.SessionKey(KEY))
        at.session_state[KEY_ENDPOINTS] = {settings.name: settings}
        at.session_state["selected_models"] = [NAME]
        at.run()
        next(b for b in at.button if b.label == "Compare").click()
        at.run()
        assert not at.exception
        assert server.posts() >= 1  # the texts did reach the server (the key in the header only)
    errors = [e.value for e in at.error]
    assert any(NAME in e and "failed while encoding" in e for e in errors), errors  # the failure is said
    shown = _everything_shown(at)
    assert KEY not in shown and KEY[:14] not in shown and KEY[-14:] not in shown and PASSWORD not in shown
