"""Issue 23: Ray never hangs silently: too many actors are capped with a note, an unreachable cluster is one line.

No Ray instance starts here: the pool size is a pure function of the
cluster's resources, and an unreachable ``$RAY_ADDRESS`` is refused before
Ray is imported.  (``--quiet`` against a running instance is tested in
``tests/core/scoring/test_ray_engine.py``, which starts Ray once.)
"""

from __future__ import annotations

import socket

import pytest

from core import constants
from core.cli import main as cli
from core.scoring.ray_engine import RayUnavailable, actor_pool_size, check_reachable

ray = pytest.importorskip("ray")


@pytest.mark.parametrize(
    "requested, resources, device, expected",
    [
        (None, {"CPU": 2.0}, "cpu", (1, None)),
        (None, {"CPU": 16.0}, "cpu", (8, None)),
        (1, {"CPU": 2.0}, "cpu", (1, None)),
        (100, {"CPU": 2.0}, "cpu", (1, "--ray-actors 100: the cluster has 2 CPU(s), one actor each and one kept for reading and writing; "
                                       "running 1 actor(s) per model")),
        (7, {"CPU": 8.0}, "cpu", (7, None)),
        (8, {"CPU": 8.0}, "cpu", (7, "--ray-actors 8: the cluster has 8 CPU(s), one actor each and one kept for reading and writing; "
                                     "running 7 actor(s) per model")),
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


def test_an_unreachable_ray_address_is_one_error_line_in_the_cli(tmp_path, capsys, monkeypatch):
    if ray.is_initialized():
        pytest.skip("a Ray instance of another test is running")
    monkeypatch.setenv(constants.RAY_ADDRESS_ENV_VAR, f"127.0.0.1:{_closed_port()}")
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("text_a,text_b\nA ray cat,A ray dog\n", encoding="utf-8")
    code = cli.main(["run", "--suite", str(pairs), "--out", str(tmp_path / "out"), "--engine", "ray", "--quiet", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot reach the Ray cluster" in errors[0] and "Traceback" not in err
    assert not ray.is_initialized()
