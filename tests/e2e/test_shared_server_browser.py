"""End-to-end: a hostile visitor of a shared app reaches none of the server's secrets or files.

The app runs with secrets in its environment (``SECRET_TOKEN``,
``OPENAI_API_KEY``) and an operator allowlist naming one base URL and one
key variable.  Two local HTTP servers stand in for OpenAI-compatible
endpoints and record every request's Authorization header.  In Chromium a
visitor:

* adds an endpoint at their own URL typing the server's variable names in
  every box the form has: no environment value reaches their server;
* adds one with a key they type, and one at the allowed URL: the typed key
  goes only to its URL, the server's key only to the allowed URL;
* uploads a BEIR zip with a symbolic link, tries paths as the split, a good
  zip, a damaged one: nothing outside the upload is read or shown, each bad
  zip is one line and the results stay;
* uploads twenty zips: one unpacked folder remains on the server, and its
  memory grows by less than a stated bound.

Run: ``.venv/bin/python -m pytest tests/e2e/test_shared_server_browser.py -q``
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import e2e_support as E
import numpy as np
import pytest
from zip_support import BEIR, MALFORMED, make_zip

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

SERVER_SECRET = "sk-server-secret-3f9a1c7e5b"
SERVER_OPENAI_KEY = "sk-server-openai-6d2b8e4a0c"
TYPED_KEY = "sk-visitor-typed-9c1e7a3f5d"
OUTSIDE_HEADER = "password\tapikey\tnote"
# Ten uploads of a 1 MB zip may grow the server's resident memory by at most this much (keeping every upload grew it
# by 475 MB over twenty, about 24 MB an upload).
RSS_BOUND_MB = 120


@dataclass
class Recorder:
    """A stand-in OpenAI-compatible server: answers /embeddings with fixed vectors, records (path, model, Authorization)."""

    seen: list[tuple[str, str, str]] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def auths(self, model: str | None = None) -> set[str]:
        return {auth for _, m, auth in self.seen if model is None or m == model}


@contextlib.contextmanager
def recorder():
    rec = Recorder()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _answer(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            with lock:
                rec.seen.append((self.path, "", self.headers.get("Authorization", "")))
            self._answer(404, {"error": {"message": "no model list here"}})  # the app then asks /embeddings directly

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0) or 0)) or b"{}")
            with lock:
                rec.seen.append((self.path, str(body.get("model", "")), self.headers.get("Authorization", "")))
            texts = body.get("input") or []
            vectors = [np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[:8].astype(float).tolist() for t in texts]
            self._answer(
                200,
                {
                    "object": "list",
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                },
            )

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    rec.port = httpd.server_address[1]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield rec
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def visitor_url():
    with recorder() as rec:
        yield rec


@pytest.fixture(scope="module")
def allowed_url():
    with recorder() as rec:
        yield rec


@pytest.fixture(scope="module")
def server_tmp(tmp_path_factory):
    """The app server's TMPDIR: the unpacked uploads land here, to be counted."""
    return tmp_path_factory.mktemp("shared-server-tmp")


@pytest.fixture(scope="module")
def server(tmp_path_factory, visitor_url, allowed_url, server_tmp):
    env = {
        "SECRET_TOKEN": SERVER_SECRET,
        "OPENAI_API_KEY": SERVER_OPENAI_KEY,
        "TMPDIR": str(server_tmp),
        "COSINE_PROBE_ENDPOINTS": f"{allowed_url.base_url}=SECRET_TOKEN",
    }
    with E.running_server(tmp_path_factory.mktemp("shared-server"), env) as srv:
        yield srv


def _endpoint_form(page):
    form = page.locator('[data-testid="stExpander"]', has_text="Add an endpoint")
    if not form.get_by_label("Base URL", exact=True).is_visible():
        E.act(page, lambda: form.get_by_text("Add an endpoint").click(), expect_rerun=False)
    return form


def _type(page, box, text: str) -> None:
    # Enter reruns the page only when it commits a new value: for the text a box already holds no rerun comes, and
    # waiting for one cost act's whole grace (3 s).
    changes = box.input_value() != text
    box.fill(text)
    E.act(page, lambda: box.press("Enter"), expect_rerun=changes)


def _add_endpoint(page, base_url: str, model: str, every_other_box: str = "") -> None:
    """Fill the form as a visitor: the base URL, the model, and ``every_other_box`` in each other text box it has."""
    form = _endpoint_form(page)
    # The boxes are one form: what they hold is sent with the button, so no box reruns the page on its own.
    form.get_by_label("Base URL", exact=True).fill(base_url)
    form.get_by_label("Model name", exact=True).fill(model)
    for box in form.locator("input[type=text], input[type=password]").all():
        if box.get_attribute("aria-label") not in ("Base URL", "Model name"):
            box.fill(every_other_box)
    E.act(page, lambda: form.get_by_role("button", name="Add endpoint").click())


def _compare(page) -> None:
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    E.assert_no_errors(page, allow_error_alerts=True)


def _page_text(page) -> str:
    return page.locator(E.APP).inner_text()


def test_a_visitor_naming_the_servers_variables_receives_none_of_their_values(page, server, visitor_url):
    E.goto(page, f"{server.url}/compare")
    for model, name in (("probe-secret", "SECRET_TOKEN"), ("probe-openai", "OPENAI_API_KEY")):
        _add_endpoint(page, visitor_url.base_url, model, every_other_box=name)
    _compare(page)
    received = "".join(visitor_url.auths())
    assert visitor_url.seen, "the visitor's server got no request: nothing was tested"
    assert SERVER_SECRET not in received and SERVER_OPENAI_KEY not in received, visitor_url.seen
    shown = _page_text(page)
    assert SERVER_SECRET not in shown and SERVER_OPENAI_KEY not in shown
    E.screenshot(page, "issue38-endpoint-visitor")


def test_a_typed_key_goes_only_to_its_url_and_the_servers_key_only_to_the_allowed_url(page, server, visitor_url, allowed_url):
    E.goto(page, f"{server.url}/compare")
    _add_endpoint(page, visitor_url.base_url, "typed-model", every_other_box=TYPED_KEY)
    _add_endpoint(page, allowed_url.base_url, "allowed-model")
    _compare(page)
    assert visitor_url.auths("typed-model") == {f"Bearer {TYPED_KEY}"}
    assert allowed_url.auths("allowed-model") == {f"Bearer {SERVER_SECRET}"}
    assert TYPED_KEY not in "".join(allowed_url.auths()) and SERVER_SECRET not in "".join(visitor_url.auths())
    shown = _page_text(page)
    assert TYPED_KEY not in shown and SERVER_SECRET not in shown
    expect(page.locator(E.MAIN).get_by_text("openai:typed-model").first).to_be_visible()


# ------------------------------------------------------------------ uploads


def _beir_source(page) -> None:
    E.goto(page, f"{page.base}/retrieval")
    E.act(page, lambda: page.get_by_text("A BEIR folder (zip)", exact=True).click())


def _upload(page, name: str, data: bytes) -> None:
    E.upload(page, [{"name": name, "mimeType": "application/zip", "buffer": data}])


def _errors(page) -> list[str]:
    return E.error_texts(page, E.ERROR_ALERT)


def _errors_once_shown(page, count: int = 1) -> list[str]:
    """The page's error boxes once ``count`` of them show.

    Replacing an upload reruns twice (the old file removed, then the new one
    received): the first rerun can end before the refused zip's error exists.
    """
    expect(page.locator(E.ERROR_ALERT)).to_have_count(count, timeout=E.RUN_TIMEOUT_MS)
    E.wait_idle(page)
    return _errors(page)


def test_a_beir_upload_reads_nothing_outside_itself_and_a_bad_zip_keeps_the_results(page, server, server_tmp):
    outside = server_tmp / "outside.tsv"
    outside.write_text(f"{OUTSIDE_HEADER}\nx\ty\tz\n")
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else "no-hostname-here"
    _beir_source(page)

    _upload(page, "link.zip", MALFORMED["a symbolic link"][0]())
    errors = _errors_once_shown(page)
    assert len(errors) == 1 and "symbolic link" in errors[0]
    _upload(page, "good.zip", make_zip(BEIR, prefix="scifact/"))
    # A visitor types paths wherever a split can be typed; the split is picked from the zip's qrels.
    for box in page.locator(f"{E.MAIN} input[type=text]").all():
        if "split" in (box.get_attribute("aria-label") or "").lower():
            for split in (str(outside.with_suffix("")), "../../outside", "/etc/hostname"):
                _type(page, box, split)
                assert "password" not in _page_text(page)
    E.assert_no_errors(page, allow_error_alerts=True)
    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click())
    E.assert_no_errors(page)
    expect(page.locator(E.MAIN).get_by_text("Results for 1 model(s)")).to_be_visible()

    _upload(page, "crc.zip", MALFORMED["a bad CRC"][0]())
    errors = _errors_once_shown(page)
    assert len(errors) == 1 and "crc.zip" in errors[0] and "damaged" in errors[0] and "good.zip is kept" in errors[0], errors
    expect(page.locator(E.MAIN).get_by_text("Results for 1 model(s)")).to_be_visible()
    E.assert_no_errors(page, allow_error_alerts=True)
    shown = _page_text(page)
    assert "password" not in shown and "apikey" not in shown and hostname not in shown
    E.screenshot(page, "issue38-beir-bad-zip-keeps-results")


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS")) / 1024


def test_ten_uploads_leave_one_folder_and_bounded_memory(page, server, server_tmp):
    earlier = set(server_tmp.glob("cosine-probe-beir-*"))  # another session's folder goes when that session is dropped
    _beir_source(page)

    def upload(i: int) -> None:
        _upload(page, f"u{i}.zip", make_zip({**BEIR, "pad.bin": os.urandom(1 << 20)}))
        assert not _errors(page)

    upload(0)
    before = _rss_mb(server.proc.pid)
    # Ten in the browser (the AppTest twin in tests/views/test_retrieval_beir_upload.py takes twenty, in process).
    for i in range(1, 11):
        upload(i)
    grown = _rss_mb(server.proc.pid) - before

    def unpacked() -> list[str]:
        return sorted(p.name for p in set(server_tmp.glob("cosine-probe-beir-*")) - earlier)

    # The run that unpacks the last zip removes the one before it a moment later: on a busy machine the browser can
    # be idle before that run ends, so the count is read once it settles (10 s at most), not at one instant.
    deadline = time.monotonic() + 10
    while len(unpacked()) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    folders = unpacked()
    print(f"10 uploads of a 1 MB zip: server RSS +{grown:.0f} MB, unpacked folders left: {len(folders)}")
    assert len(folders) == 1, f"{len(folders)} unpacked folders after 11 uploads in one session"
    assert grown < RSS_BOUND_MB, f"server memory grew {grown:.0f} MB over 10 uploads (bound {RSS_BOUND_MB} MB)"
