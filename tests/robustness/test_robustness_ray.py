"""Ray never hangs silently.

Too many actors are capped with a note; an unreachable cluster, or a port that is not Ray, is one line.

No Ray instance starts here: the pool size is a pure function of the
cluster's resources, and an unreachable ``$RAY_ADDRESS`` is refused before
Ray is imported.  (``--quiet`` against a running instance is tested in
``tests/core/models/test_engines.py``, on the session's one Ray instance.)
"""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time

import pytest

from core import constants
from core.cli import main as cli
from core.cluster.session import RayUnavailable, actor_pool_size, check_reachable

ray = pytest.importorskip("ray")


@pytest.mark.parametrize(
    "requested, resources, device, expected",
    [
        (None, {"CPU": 2.0}, "cpu", (1, None)),
        (None, {"CPU": 16.0}, "cpu", (8, None)),
        (1, {"CPU": 2.0}, "cpu", (1, None)),
        (
            100,
            {"CPU": 2.0},
            "cpu",
            (
                1,
                "--ray-actors 100: the cluster has 2 CPU(s), one actor each and one kept for reading and writing; "
                "running 1 actor(s) per model",
            ),
        ),
        (7, {"CPU": 8.0}, "cpu", (7, None)),
        (
            8,
            {"CPU": 8.0},
            "cpu",
            (
                7,
                "--ray-actors 8: the cluster has 8 CPU(s), one actor each and one kept for reading and writing; "
                "running 7 actor(s) per model",
            ),
        ),
        (4, {"CPU": 32.0, "GPU": 2.0}, "cuda", (2, "--ray-actors 4: the cluster has 2 GPU(s), 1 per actor; running 2 actor(s) per model")),
        (4, {"CPU": 32.0}, "cpu", (4, None)),
    ],
)
def test_actors_beyond_the_cluster_are_capped_with_a_note(requested, resources, device, expected):
    assert actor_pool_size(requested, resources, device) == expected


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once the socket is closed


def test_an_unreachable_address_is_refused_at_once():
    port = _closed_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(RayUnavailable, match=f"cannot reach the Ray cluster at \\$RAY_ADDRESS={address} "):
            check_reachable(address, timeout=2)
    with pytest.raises(RayUnavailable):
        check_reachable("no-such-host.invalid:6379", timeout=2)
    check_reachable("auto")  # Ray resolves these forms itself


@contextlib.contextmanager
def _web_server():
    """A plain HTTP server on a free loopback port: it answers, but it is not Ray (ray.init waited on one for minutes)."""

    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _listener(answer: bool):
    """A port that accepts and then closes at once (``answer``), or accepts and never says a word."""
    sock = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        sock.settimeout(0.1)
        held = []
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                conn, _ = sock.accept()
                if answer:
                    conn.close()
                else:
                    held.append(conn)
        for conn in held:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        sock.close()


def test_a_port_that_answers_but_is_not_ray_is_refused_at_once(monkeypatch):
    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    with _web_server() as port:
        start = time.monotonic()
        with pytest.raises(
            RayUnavailable, match=f"^\\$RAY_ADDRESS=127.0.0.1:{port} is not a Ray cluster: it answered '<!DOCTYPE HTML>', not gRPC"
        ):
            check_reachable(f"127.0.0.1:{port}", timeout=2)
        assert time.monotonic() - start < 2
    with _listener(answer=True) as port, pytest.raises(RayUnavailable, match="is not a Ray cluster: it closed the connection, not gRPC"):
        check_reachable(f"ray://127.0.0.1:{port}", timeout=2)
    with (
        _listener(answer=False) as port,
        pytest.raises(
            RayUnavailable,
            match=f"^\\$RAY_ADDRESS=127.0.0.1:{port} is not a Ray cluster: it accepted the connection but said nothing within 1 s",
        ),
    ):
        check_reachable(f"127.0.0.1:{port}", timeout=1)
    # A TLS cluster answers a plain preface with an alert: there only reachability is checked.
    monkeypatch.setenv("RAY_USE_TLS", "1")
    with _web_server() as port:
        check_reachable(f"127.0.0.1:{port}", timeout=2)


@pytest.mark.parametrize("listening", ["closed port", "web server"])
def test_an_unreachable_ray_address_is_one_error_line_in_the_cli(tmp_path, capsys, monkeypatch, listening):
    with contextlib.ExitStack() as stack:
        port = _closed_port() if listening == "closed port" else stack.enter_context(_web_server())
        monkeypatch.setenv(constants.RAY_ADDRESS_ENV_VAR, f"127.0.0.1:{port}")
        _run_on_ray(tmp_path, capsys, monkeypatch, "cannot reach the Ray cluster" if listening == "closed port" else "is not a Ray cluster")


def _run_on_ray(tmp_path, capsys, monkeypatch, fragment: str) -> None:
    running = ray.is_initialized()  # the session's instance, when a test before this one started it
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("text_a,text_b\nA ray cat,A ray dog\n", encoding="utf-8")
    code = cli.main(["run", "--suite", str(pairs), "--out", str(tmp_path / "out"), "--engine", "ray", "--quiet", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and fragment in errors[0] and "Traceback" not in err
    assert ray.is_initialized() is running  # the address is refused before Ray is started or joined
