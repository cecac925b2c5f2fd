"""Ray sessions: joining the cluster at ``$RAY_ADDRESS`` or starting a local instance, and what a cluster can hold.

Every use of Ray goes through :func:`ray_session`: a batch function on a
pool of actors (:mod:`core.cluster.actors`, which the Ray encoder of
:mod:`core.models.engines` uses) and the whole audit on Ray
(:mod:`core.audit.ray_audit`); a session held open around many uses
(a whole run: :meth:`core.models.runs.ModelRun.keep`) starts Ray once.  Ray starts a local instance by default
(``address="local"``: never a cluster found by accident); ``$RAY_ADDRESS``
(``ray://head:10001`` or ``head:6379``) joins a cluster unchanged, checked to
answer first (:func:`check_reachable`: Ray itself retries an unreachable
address for minutes).  On a cluster every node needs the project installed
(``make setup``).  Nothing here knows models or pairs: the packages above
hand their work to Ray through these.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Iterator

from core import constants
from core.messages import first_line, typed_first_line


class RayUnavailable(RuntimeError):
    """The Ray cluster named by ``$RAY_ADDRESS`` cannot be reached or joined; the message is one line."""


def actor_pool_size(
    requested: int | None, resources: dict, device: str = constants.DEVICE_CPU, gpus_per_actor: float = constants.RAY_GPUS_PER_ACTOR
) -> tuple[int, str | None]:
    """Actors per model that the cluster can hold, and a note when ``requested`` was more.

    Each actor takes one CPU, and one CPU is kept for reading and writing
    (an actor pool larger than that waits forever for CPUs that never come);
    on ``cuda`` each actor also takes ``gpus_per_actor`` GPUs.

    Args:
        requested: ``--ray-actors``, or None for half the cluster's CPUs.
        resources: ``ray.cluster_resources()`` (``CPU``, ``GPU`` counts).
        device: where the actors encode.
        gpus_per_actor: GPUs each actor reserves on ``cuda``.

    Returns:
        (actors, None) or (the cap, a one-line note saying why).
    """
    cpus = int(resources.get("CPU", 0))
    limit = max(1, cpus - 1)
    why = f"the cluster has {cpus} CPU(s), one actor each and one kept for reading and writing"
    if device == constants.DEVICE_CUDA and gpus_per_actor > 0:
        gpu_limit = max(1, int(resources.get("GPU", 0) // gpus_per_actor))
        if gpu_limit < limit:
            limit, why = gpu_limit, f"the cluster has {resources.get('GPU', 0):g} GPU(s), {gpus_per_actor:g} per actor"
    if requested is None:
        return min(limit, max(1, cpus // 2)), None
    if requested > limit:
        return limit, f"--ray-actors {requested}: {why}; running {limit} actor(s) per model"
    return requested, None


def _host_port(address: str) -> tuple[str, int] | None:
    """Host and port of a ``$RAY_ADDRESS`` (``ray://host:port`` or ``host:port``); None when it names none."""
    rest = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


# A client's HTTP/2 connection preface and an empty SETTINGS frame: a gRPC server (Ray's GCS and
# its client server are gRPC) answers with a SETTINGS frame of its own; anything else is not Ray.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_HTTP2_SETTINGS = 4  # frame type, the 4th byte of a frame header


def check_reachable(address: str, timeout: float = constants.RAY_CONNECT_TIMEOUT_S) -> None:
    """Fail fast when no Ray answers at a Ray address (Ray itself retries for minutes, even at a web server).

    Raises:
        RayUnavailable: the host does not resolve, refuses, does not answer
            within ``timeout`` seconds, or answers but does not speak gRPC.
    """
    import socket

    target = _host_port(address)
    if target is None:  # "auto" and other forms Ray resolves itself
        return
    where = f"the Ray cluster at ${constants.RAY_ADDRESS_ENV_VAR}={address}"
    try:
        conn = socket.create_connection(target, timeout=timeout)
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise RayUnavailable(f"cannot reach {where} ({reason} within {timeout:g} s)") from exc
    not_ray = f"${constants.RAY_ADDRESS_ENV_VAR}={address} is not a Ray cluster"
    with conn:
        if _tls():  # a TLS cluster answers a plain preface with an alert: reachability is all we can check
            return
        deadline = time.monotonic() + timeout
        try:
            conn.sendall(_HTTP2_PREFACE)
            answer = _read_up_to(conn, 9, deadline)
        except OSError:  # reset: it closed the connection on us
            answer = b""
        if answer is None:
            raise RayUnavailable(
                f"{not_ray}: it accepted the connection but said nothing within {timeout:g} s; "
                f"give the head node's GCS port (6379 by default) or ray://HOST:10001"
            )
        if len(answer) == 9 and answer[3] != _HTTP2_SETTINGS:
            with contextlib.suppress(OSError):  # more of what it said, for the message
                answer += _read_up_to(conn, 55, time.monotonic() + min(timeout, 0.5)) or b""
    if len(answer) < 9 or answer[3] != _HTTP2_SETTINGS:
        said = next((line.strip()[:40] for line in answer.decode("ascii", "replace").splitlines() if line.strip()), "")
        heard = f"it answered {said!r}" if said else f"it answered {len(answer)} blank byte(s)" if answer else "it closed the connection"
        raise RayUnavailable(f"{not_ray}: {heard}, not gRPC; give the head node's GCS port (6379 by default) or ray://HOST:10001")


def _tls() -> bool:
    return constants.ENV_RAY_USE_TLS.value().lower() in ("1", "true", "yes")


def _read_up_to(conn, n: int, deadline: float) -> bytes | None:
    """Up to ``n`` bytes by ``deadline`` (fewer when the peer closes first); None when it sent nothing by then.

    Raises:
        OSError: the connection was reset.
    """
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        conn.settimeout(left)
        try:
            chunk = conn.recv(n - len(data))
        except TimeoutError:
            break
        if not chunk:
            return data
        data += chunk
    return data or None


def root_cause(exc: BaseException, plain: tuple[type[BaseException], ...] = ()) -> str:
    """One line from the deepest cause: Ray wraps a task's or an actor's error in several layers.

    Args:
        exc: what Ray raised.
        plain: error types whose message is already a user's one line (shown without the type's name), also when
            Ray passed them on only as text.
    """
    while exc.__cause__ is not None:
        exc = exc.__cause__
    if plain and isinstance(exc, plain):
        return first_line(exc, 300)
    for kind in plain:
        for line in str(exc).strip().splitlines():
            if f"{kind.__name__}: " in line:
                return line.split(f"{kind.__name__}: ", 1)[-1][:300]
    return typed_first_line(exc)


@contextlib.contextmanager
def ray_session(quiet: bool = False) -> Iterator[None]:
    """Ray for the block: the running instance if there is one, else a new one, shut down afterwards.

    ``$RAY_ADDRESS`` names a cluster to join (checked to answer first: Ray
    itself retries an unreachable one for minutes); without it a fresh local
    instance starts on all of this machine's CPUs.  Ray's progress and its
    workers' logs stay off stdout (``--json`` prints one document there);
    ``quiet`` keeps its log lines off stderr too.

    Raises:
        RayUnavailable: the cluster cannot be reached or joined.
    """
    with _quieted(quiet):
        started = _start(quiet)
        try:
            yield
        finally:
            if started:
                _stop()


def _start(quiet: bool) -> bool:
    """Join ``$RAY_ADDRESS`` or start a local instance, unless Ray is running; whether it was started here.

    Raises:
        RayUnavailable: the cluster cannot be reached or joined.
    """
    address = os.environ.get(constants.RAY_ADDRESS_ENV_VAR, "").strip()
    if address and address not in ("local",):
        check_reachable(address)
    import ray
    import ray.data

    level = logging.ERROR if quiet else logging.WARNING
    started = not ray.is_initialized()
    if started:
        try:
            if address:
                ray.init(address=address, log_to_driver=False, logging_level=level)
            else:
                ray.init(address="local", include_dashboard=False, log_to_driver=False, logging_level=level)
        except (ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
            raise RayUnavailable(
                f"cannot join the Ray cluster at ${constants.RAY_ADDRESS_ENV_VAR}={address or 'local'} ({root_cause(exc)})"
            ) from exc
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(level)
    return started


def _stop() -> None:
    import ray

    ray.shutdown()


@contextlib.contextmanager
def _quieted(quiet: bool) -> Iterator[None]:
    """Ray's lines off stdout for the block (to stderr, or nowhere when ``quiet``), and fd 2 silenced when ``quiet``."""
    with _stderr_silenced(quiet), _stdout_kept_for_results(quiet):
        yield


@contextlib.contextmanager
def _stdout_kept_for_results(quiet: bool) -> Iterator[None]:
    """Ray's driver prints the raylet's warnings to ``sys.stdout`` whatever ``log_to_driver`` says
    (``listen_error_messages``: "8 PYTHON worker processes have been started ..."), which broke ``--json``'s one
    document; for the block they go to stderr, or nowhere when ``quiet``."""
    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(open(os.devnull, "w")) if quiet else sys.stderr
        stack.enter_context(contextlib.redirect_stdout(sink))
        yield


@contextlib.contextmanager
def _stderr_silenced(quiet: bool) -> Iterator[None]:
    """File descriptor 2 to the null device for the block when ``quiet``: Ray's C++ core logs there directly."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
