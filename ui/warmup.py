"""The app's background warm-up: the default models load, and a cache folder that lacks the examples fills in, while the user works.

Once the first page is drawn, one background thread per server process loads
each default model's weights (:func:`core.probes.warmup.load_weights`): the
first pair a user types then waits for its encoding only, not for the
weights and the imports behind them (7 s on a quiet machine before).
``make setup`` warms the default cache folder (``cosine-probe models --warm``).
A user with a cache folder of their own (``$COSINE_PROBE_CACHE_DIR``) or a
wiped one gets the same texts encoded by one background thread per server
process (:func:`background_warm`, through :func:`core.probes.warmup.warm_cache`),
with its progress in the sidebar.  Nothing waits for it: a page runs what
it is asked at once, taking from the cache what is ready; the thread only
saves later clicks the encoding.  ``$COSINE_PROBE_WARM_IN_BACKGROUND=0``
turns it off (the tests do).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import streamlit as st

from core import constants
from core.messages import typed_first_line
from core.models import defaults
from core.models.cache import EmbeddingCache
from core.models.options import DEFAULT_OPTIONS
from core.probes import warmup as core_warmup  # by module: read at call time, as tests replace its functions
from ui import resources
from ui.widgets import md_escape

CHECKING, LOADING, WARMING, DONE, OFF, FAILED = "checking", "loading", "warming", "done", "off", "failed"
POLL_SECONDS = 2.0
# The thread starts when the first page is drawn (its imports would slow that draw on 2 cores), at the latest after this.
START_DELAY_SECONDS = 8.0
_FIRST_PAGE_DRAWN = threading.Event()
# A model's load holds the GIL for seconds (torch's imports): it starts only when no page has run for this long,
# so it fills the time a user reads or types, not the time a page draws. A user who opens a second page as soon as
# the first is drawn started it within 0.5 s of the first run's end (its charts still loading), and a load then
# slowed that page's first view by ~0.4 s; a second passes before a load starts.
QUIET_SECONDS = 1.0
_RUNS = [0, 0.0]  # script runs under way, when the last one ended (time.monotonic)
_RUNS_LOCK = threading.Lock()


def page_run_started() -> None:
    """Called by the router when a script run starts."""
    with _RUNS_LOCK:
        _RUNS[0] += 1


def page_run_ended() -> None:
    """Called by the router when a script run ends (however it ends): the first one lets the background thread start."""
    with _RUNS_LOCK:
        _RUNS[0] = max(0, _RUNS[0] - 1)
        _RUNS[1] = time.monotonic()
    _FIRST_PAGE_DRAWN.set()


def _wait_quiet(limit: float = 30.0) -> None:
    """Wait until no page runs and none ran for :data:`QUIET_SECONDS`, at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with _RUNS_LOCK:
            active, ended = _RUNS
        if not active and time.monotonic() - ended >= QUIET_SECONDS:
            return
        time.sleep(0.1)


@dataclass
class WarmStatus:
    """Where the background warm-up is; written by its thread, read by every session's sidebar."""

    state: str = CHECKING
    fraction: float = 0.0
    message: str = "checking the embedding cache"
    to_encode: int = 0
    models: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def set(self, **values) -> None:
        with self.lock:
            for key, value in values.items():
                setattr(self, key, value)

    def snapshot(self) -> tuple[str, float, str]:
        with self.lock:
            return self.state, self.fraction, self.message


def enabled() -> bool:
    """Whether this server warms a cold cache in the background (``$COSINE_PROBE_WARM_IN_BACKGROUND``, default on)."""
    return os.environ.get(constants.WARM_ENV_VAR, "1").strip().lower() not in ("0", "off", "false", "no")


def _work(status: WarmStatus, cache: EmbeddingCache, models: list[str]) -> None:
    _FIRST_PAGE_DRAWN.wait(START_DELAY_SECONDS)
    try:
        status.set(state=LOADING, message="loading the models' weights")

        def loading(fraction: float, message: str) -> None:
            status.set(fraction=fraction, message=message)
            if fraction < 1.0:
                _wait_quiet()  # before each model's load

        load_errors = core_warmup.load_weights(models, DEFAULT_OPTIONS, progress=loading)
        loaded = [m for m in models if m not in load_errors]
        if not loaded:
            status.set(state=FAILED, message="; ".join(load_errors.values()))
            return
        status.set(state=CHECKING, fraction=0.0, message="checking the embedding cache")
        missing = core_warmup.missing_texts(loaded, cache, DEFAULT_OPTIONS)
        if not missing:
            status.set(state=DONE, fraction=1.0, message="every example is in the embedding cache")
            return
        status.set(state=WARMING, to_encode=missing, message=f"{missing:,} texts to encode")

        def progress(fraction: float, message: str) -> None:
            status.set(fraction=fraction, message=message)

        report = core_warmup.warm_cache(loaded, cache=cache, options=DEFAULT_OPTIONS, progress=progress)
        failed = [m.error for m in report.failed if m.error]
        status.set(
            state=DONE,
            fraction=1.0,
            message=f"{report.n_encoded:,} texts encoded" + (f"; {len(failed)} model(s) could not run" if failed else ""),
        )
    except Exception as exc:  # noqa: BLE001 - a background helper must never take the server down; the pages still work
        status.set(state=FAILED, message=typed_first_line(exc))


_STATUS: list[WarmStatus] = []  # the one status of this server process, once started
_START_LOCK = threading.Lock()


def background_warm() -> WarmStatus:
    """Start the warm-up thread once per server process (when :func:`enabled`); its status, shared by every session."""
    with _START_LOCK:
        if _STATUS:
            return _STATUS[0]
        status = WarmStatus(models=defaults.default_models())
        _STATUS.append(status)
        if not enabled() or not status.models:
            status.set(state=OFF, fraction=1.0, message="")
            return status
        # The cache is fetched here, in a script thread: a Streamlit cache wrapper is not called from the worker.
        threading.Thread(
            target=_work, args=(status, resources.embedding_cache(), status.models), name="cosine-probe-warm", daemon=True
        ).start()
        return status


KEY_SEEN_END = "_warm_end_seen"  # this session was told how the warm-up ended


def sidebar_status() -> None:
    """The warm-up's progress in the sidebar while it checks or encodes (refreshed every few seconds), how it ended once; then nothing."""
    status = background_warm()
    state, _, message = status.snapshot()
    if state not in (CHECKING, LOADING, WARMING):
        if status.to_encode and state in (DONE, FAILED) and not st.session_state.get(KEY_SEEN_END):
            st.session_state[KEY_SEEN_END] = True
            st.caption(
                f"✅ Examples ready in the embedding cache ({md_escape(message)})."
                if state == DONE
                else f"The background warm-up stopped: {md_escape(message)}. Pages still work; they encode on demand."
            )
        return

    @st.fragment(run_every=POLL_SECONDS)
    def _progress() -> None:
        state, fraction, message = status.snapshot()
        if state == LOADING:
            st.progress(min(max(fraction, 0.0), 1.0), text=f"Loading the models in the background: {md_escape(message)}")
        elif state == WARMING:
            st.progress(min(max(fraction, 0.0), 1.0), text=f"Preparing the examples in the background: {md_escape(message)}")
            st.caption("Pages answer meanwhile; what is not encoded yet is encoded on the click that needs it.")
        elif state != CHECKING:
            st.rerun()  # once: the sidebar then draws no fragment, so nothing polls any more

    _progress()
