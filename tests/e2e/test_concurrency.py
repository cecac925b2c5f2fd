"""Concurrency and state: many sessions on one ``streamlit run`` server.

One server with two bundled models selected by default (MiniLM-L6 on torch,
MiniLM-L3 on ONNX Runtime), one headless Chromium, and ``N_SESSIONS``
(3 here, 8 under ``make bench``'s ``concurrency_8``; ``$COSINE_PROBE_CONCURRENCY_SESSIONS``)
browser contexts, each its own Streamlit session, driven at the same time
through Playwright's async API (one event loop, ``asyncio.gather``):

1. every session opens the cold server at once: three quarters on Compare,
   whose first visit scores the default pair, so both
   models load while those sessions ask for them, and the last quarter on
   Tokenizer, which loads only the tokenizers meanwhile (then goes to Compare);
2. all sessions (after a barrier) type their *own* pair, marked
   ``session <n> zebra``, and press Compare together;
3. the first half then run a suite (failure modes and OOV in turn) through the
   sidebar while the other sessions score a second pair of their own, and
   come back to Compare, where their first pair must still be shown.

Asserted: no exception element, error box or dialog in any session; no
traceback in the server log; each session shows its own pair, with the
cosine core computes for it in this process, and no other session's
sentence; each suite session shows results for both models; and the
server's load log (``COSINE_PROBE_LOAD_LOG``, see :mod:`core.models`) names
each model exactly once, from the server's own process.

Screenshots: tests/screenshots/concurrency-<n>.png, one per session (the full page when it failed).

Two cheap companions (no browser, a few seconds): eight threads racing for
one cold model load it once and log it once; and in a fresh interpreter an
ONNX model and two tokenizers loading at the same moment all succeed (they
failed with "cannot import name 'AutoTokenizer' from 'transformers'" before
core.backends.HF_LOAD_LOCK).

Run: ``.venv/bin/python -m pytest tests/test_concurrency.py -q``
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time

import e2e_support as E
import pandas as pd
import pytest

from core.models import registry
from core.models.loading import LOAD_LOG_ENV

SKIP_REASON = E.chromium_available()

# ONNX first: its load imports AutoTokenizer at the moment the Tokenizer-page
# sessions do (the race core.backends.HF_LOAD_LOCK closes).
MODELS = (registry.MINILM_L3_ONNX, registry.MINILM_L6)
# Three sessions in `make test` keep every role (a suite of each kind, and a Tokenizer-first session that then only compares)
# for less; `make bench` (figure `concurrency_8`) runs the eight-session stress of the same test.
N_SESSIONS = int(os.environ.get("COSINE_PROBE_CONCURRENCY_SESSIONS", "3"))
# Sessions whose first page on the cold server is Tokenizer, not Compare: the last quarter.
TOKENIZER_FIRST = set(range(N_SESSIONS - max(1, N_SESSIONS // 4), N_SESSIONS))
_FAILURE_MODES = ("failure-modes", "Failure modes", "Run failure-mode suite", f"Results for {len(MODELS)} model(s)")
_OOV = ("oov", "OOV robustness", "Run OOV suites", "Results for: " + ", ".join(registry.short_name(m) for m in MODELS))
# session -> (url path of the suite page, its nav label, run button, text shown once it ran): the first half,
# failure modes and OOV in turn.
SUITES = {n: (_FAILURE_MODES, _OOV)[n % 2] for n in range(max(2, N_SESSIONS // 2))}
# Generous bounds: on two cores shared with other work, eight cold first
# visits (both models loading, eight pages of charts rendering) took 60-80 s.
FIRST_VISIT_TIMEOUT_MS = 240_000
TEST_TIMEOUT_S = 420

# Distinct topics, so a cosine shown in the wrong session would not match by chance.
TOPICS = [
    ("crossed the river at dawn with the herd", "swam across the river before sunrise"),
    ("paid the invoice before the deadline", "paid the invoice after the deadline"),
    ("is allergic to penicillin", "is not allergic to penicillin"),
    ("bought three tickets for the concert", "bought thirty tickets for the concert"),
    ("reviewed every contract in the archive", "reviewed none of the contracts in the archive"),
    ("might have caused the outage last night", "definitely caused the outage last night"),
    ("chased the dog around the garden", "was chased around the garden by the dog"),
    ("ships parcels to Norway every Monday", "sends packages to Norway each Monday"),
    ("painted the fence a bright shade of blue", "ate a sandwich in the quiet library"),
    ("won the chess tournament in Madrid", "lost the chess tournament in Madrid"),
    ("drinks two cups of coffee each morning", "drinks twelve cups of coffee each morning"),
    ("repaired the bicycle with a borrowed wrench", "fixed the bike using a wrench from a neighbour"),
    ("sold all of the apples at the market", "sold some of the apples at the market"),
    ("arrived at the station after the train left", "arrived at the station before the train left"),
    ("teaches physics at the village school", "quarterly revenue rose by four percent"),
    ("planted tulips along the northern wall", "planted roses along the northern wall"),
]
DEFAULT_A = "The patient is allergic to penicillin"  # views/compare.py scores it on a first visit
MARK = re.compile(r"session (\d+) zebra", re.IGNORECASE)


def pair(session: int, round_: int) -> tuple[str, str]:
    """The unique pair ``session`` types in ``round_`` (1 or 2)."""
    a, b = TOPICS[(2 * session + round_ - 1) % len(TOPICS)]
    return f"Session {session} zebra {a}", f"Session {session} zebra {b}"


# ------------------------------------------------------- async Playwright helpers
# The same waits as e2e_support's sync helpers, on the async API.


async def wait_idle(page, timeout_ms: int = E.RUN_TIMEOUT_MS) -> None:
    await page.wait_for_function(E.IDLE_JS, timeout=timeout_ms)


async def runs(page) -> int:
    return int(await page.evaluate("() => window.__stRuns || 0"))


async def wait_run_started(page, before: int) -> None:
    """Wait (bounded) for a script run after the ``before``-th to start."""
    # Too quick to observe is fine: callers assert the outcome.
    with contextlib.suppress(Exception):
        await page.wait_for_function(f"() => (window.__stRuns || 0) > {before}", timeout=E.START_GRACE_MS)


async def open_app(page, url: str) -> None:
    await page.goto(url, wait_until="domcontentloaded")
    await page.wait_for_selector(E.APP, timeout=30_000)


async def assert_no_errors(page, where: str) -> None:
    for selector, what in ((E.EXCEPTION, "exception element"), (E.ERROR_ALERT, "st.error box"), (E.DIALOG, "modal dialog")):
        texts = [t.strip()[:500] for t in await page.locator(selector).all_inner_texts()]
        assert not texts, f"{where}: {len(texts)} {what}(s) on {page.url}:\n" + "\n---\n".join(texts)


async def read_dataframe(grid) -> pd.DataFrame:
    await grid.locator("table").first.wait_for(state="attached", timeout=30_000)
    data = await grid.evaluate(E.READ_GRID_JS)
    columns = sorted(data["header"], key=int)
    rows = [[data["cells"][r].get(c, "") for c in columns] for r in sorted(data["cells"], key=int)]
    return pd.DataFrame(rows, columns=[data["header"][c] for c in columns])


async def screenshot(page, name: str) -> None:
    """Full-app screenshot (grow the viewport to the content, as E.screenshot does)."""
    E.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or E.VIEWPORT
    last, same, deadline = -1, 0, time.monotonic() + 5
    while time.monotonic() < deadline and same < 3:
        height = int(await page.evaluate(E.HEIGHT_JS))
        same, last = (same + 1 if height == last else 0), height
        await page.wait_for_timeout(150)
    tall = min(max(last, size["height"]), 12_000)
    try:
        if tall > size["height"]:
            await page.set_viewport_size({"width": size["width"], "height": tall})
            await page.wait_for_timeout(400)
        await page.screenshot(path=str(E.SCREENSHOTS / f"{name}.png"), full_page=True)
    finally:
        if tall > size["height"]:
            await page.set_viewport_size(size)


def after_heading(page, text: str):
    heading = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text=text).first
    return heading.locator("xpath=following::*[@data-testid='stDataFrame'][1]")


# ------------------------------------------------------------------ one session


class Session:
    """One browser context = one Streamlit session, and what it must show."""

    def __init__(self, n: int, page, base: str, expected: dict[tuple[str, str], dict[str, float]]):
        self.n, self.page, self.base, self.expected = n, page, base, expected
        self.log: list[str] = []

    def note(self, message: str) -> None:
        self.log.append(f"{time.monotonic():.1f} s{self.n}: {message}")

    async def shown(self, locator, timeout_ms: int = E.RUN_TIMEOUT_MS) -> None:
        """Wait for what an action must produce, then for the run that drew it to end.

        Waiting for the outcome, not for a rerun to start within a grace
        period: on two busy cores a page can take longer than any grace to
        even start its rerun, and a check made then reads the previous
        result.
        """
        await locator.first.wait_for(state="visible", timeout=timeout_ms)
        await wait_idle(self.page)

    def echo(self, round_: int):
        """The scored-pair text Compare shows for this session's pair of ``round_``."""
        return self.page.locator(E.MAIN).get_by_text(f"A: {pair(self.n, round_)[0]}")

    async def compare(self, round_: int) -> None:
        """Type this session's pair and press Compare.

        Filling B blurs A and pressing the button blurs B, which commits each
        box's text before the click is processed (Streamlit runs the script
        again with both), so there is no separate commit per box.
        """
        text_a, text_b = pair(self.n, round_)
        box_a, box_b = self.page.get_by_label("Sentence A", exact=True), self.page.get_by_label("Sentence B", exact=True)
        await box_a.fill(text_a)
        await box_b.fill(text_b)
        await self.page.get_by_role("button", name="Compare", exact=True).click()
        await self.shown(self.echo(round_))
        self.note(f"compared round {round_}")
        for box, text in ((box_a, text_a), (box_b, text_b)):
            assert await box.input_value() == text, f"session {self.n}: box holds {await box.input_value()!r}, typed {text!r}"
        await self.check_compare(round_)

    async def check_compare(self, round_: int) -> None:
        """The scored pair echoed, its cosine per model, and nothing from another session."""
        page, where = self.page, f"session {self.n} round {round_}"
        await assert_no_errors(page, where)
        text_a, text_b = pair(self.n, round_)
        shown_echo = await self.echo(round_).first.inner_text()
        assert f"B: {text_b}" in shown_echo, f"{where}: scored pair shown as {shown_echo!r}"
        assert await page.get_by_text("The boxes changed since this pair was scored").count() == 0, f"{where}: result is stale"

        frame = await read_dataframe(after_heading(page, "Cosine per model"))
        assert {"model", "cosine"} <= set(frame.columns), f"{where}: compare table columns {list(frame.columns)}"
        # Rows are keyed by model id when the table has that column, else by the short label.
        key = "model id" if "model id" in frame.columns else "model"
        got = {row[key]: E.to_float(row["cosine"]) for _, row in frame.iterrows()}
        want = self.expected[(text_a, text_b)]
        if key == "model":
            want = {registry.short_name(m): c for m, c in want.items()}
        assert set(got) == set(want), f"{where}: models shown {sorted(got)} != {sorted(want)}"
        for model, cosine in want.items():
            assert got[model] == pytest.approx(cosine, abs=1e-4), (
                f"{where}: {model} shows {got[model]}, core computes {cosine:.6f} for this session's pair"
            )
        await self.check_no_foreign_text(where)

    async def check_no_foreign_text(self, where: str) -> None:
        text = await self.page.locator(E.APP).inner_text()
        foreign = sorted({int(m) for m in MARK.findall(text)} - {self.n})
        assert not foreign, f"{where}: shows text of session(s) {foreign}"

    async def run_suite(self, started: asyncio.Event) -> None:
        """Open a suite page through the sidebar, run it, check it, and go back to Compare."""
        path, nav_label, button, done_text = SUITES[self.n]
        page, where = self.page, f"session {self.n} {path} suite"
        nav = page.locator('[data-testid="stSidebarNav"] a')
        await nav.filter(has_text=nav_label).click()
        await page.wait_for_url(f"**/{path}", timeout=E.RUN_TIMEOUT_MS)
        run_button = page.get_by_role("button", name=button)
        await self.shown(run_button)
        before = await runs(page)
        await run_button.click()
        await wait_run_started(page, before)
        self.note("suite started")
        started.set()
        await self.shown(page.locator(E.MAIN).get_by_text(done_text))
        self.note("suite done")
        await assert_no_errors(page, where)
        if path == "failure-modes":
            frame = await read_dataframe(after_heading(page, "Failure rate at threshold"))
            missing = {registry.short_name(m) for m in MODELS} - set(frame.columns)
            assert not missing, f"{where}: failure-rate table lacks {missing}: {list(frame.columns)}"
        await self.check_no_foreign_text(where)
        # Back on Compare, this session's own first pair is still the one shown.
        await nav.filter(has_text="Compare").click()
        await page.wait_for_url("**/compare", timeout=E.RUN_TIMEOUT_MS)
        await self.shown(self.echo(1))
        await self.check_compare(1)


async def drive(base: str, expected, browser) -> list[str]:
    """All sessions at once; returns their merged timelines (raises the first failure)."""
    opened = asyncio.Barrier(N_SESSIONS)
    started = {n: asyncio.Event() for n in SUITES}
    sessions: list[Session] = []

    async def one(n: int) -> None:
        context = await browser.new_context(viewport=E.VIEWPORT)
        context.set_default_timeout(30_000)
        await context.add_init_script(E.INIT_SCRIPT)
        page = await context.new_page()
        s = Session(n, page, base, expected)
        sessions.append(s)
        s.note("context open")
        failed = False
        try:
            if n in TOKENIZER_FIRST:
                # Loads only tokenizers, while the Compare sessions load the models.
                await open_app(page, f"{base}/tokenizer")
                await s.shown(page.locator(f"{E.MAIN} h1", has_text="Tokenizer"), FIRST_VISIT_TIMEOUT_MS)
                await assert_no_errors(page, f"session {n} first visit (tokenizer page)")
                s.note("opened tokenizer")
                await page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Compare").click()
                await page.wait_for_url("**/compare", timeout=E.RUN_TIMEOUT_MS)
            else:
                await open_app(page, f"{base}/compare")
            # A first visit to Compare scores the default pair: wait for it, not for a grace period.
            await s.shown(page.locator(E.MAIN).get_by_text(f"A: {DEFAULT_A}"), FIRST_VISIT_TIMEOUT_MS)
            await assert_no_errors(page, f"session {n} first visit")
            s.note("opened compare")
            await asyncio.wait_for(opened.wait(), timeout=FIRST_VISIT_TIMEOUT_MS / 1000)
            await s.compare(1)
            if n in SUITES:
                await s.run_suite(started[n])
            else:
                # A second pair of its own while the suite sessions run their suites.
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in started.values())), timeout=E.RUN_TIMEOUT_MS / 1000)
                await s.compare(2)
        except BaseException:
            failed = True
            await opened.abort()
            for event in started.values():
                event.set()
            raise
        finally:
            try:
                # The full page (viewport grown to the content) when it failed; the screen it ended on otherwise, which
                # costs a fraction: eight full-page shots at once took seconds of the two cores.
                if failed:
                    await screenshot(page, f"concurrency-{n}")
                else:
                    E.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    await page.screenshot(path=str(E.SCREENSHOTS / f"concurrency-{n}.png"))
            finally:
                await context.close()
                s.note("closed")

    outcomes = await asyncio.gather(*(one(n) for n in range(N_SESSIONS)), return_exceptions=True)
    timeline = sorted(line for s in sessions for line in s.log)
    failures = [(n, o) for n, o in enumerate(outcomes) if isinstance(o, BaseException)]
    # A broken barrier is the echo of another session's failure: report the cause first.
    failures.sort(key=lambda f: isinstance(f[1], asyncio.BrokenBarrierError))
    if failures:
        detail = "\n".join(f"session {n}: {type(o).__name__}: {str(o)[:800]}" for n, o in failures)
        raise AssertionError(f"{len(failures)} session(s) failed:\n{detail}\n--- timeline ---\n" + "\n".join(timeline)) from failures[0][1]
    return timeline


async def run_all(base: str, expected) -> list[str]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=E.CHROMIUM, headless=True, args=E.CHROMIUM_ARGS)
        try:
            return await asyncio.wait_for(drive(base, expected, browser), timeout=TEST_TIMEOUT_S)
        finally:
            await browser.close()


# ------------------------------------------------------------------------ test


@pytest.fixture(scope="module")
def expected() -> dict[tuple[str, str], dict[str, float]]:
    """Core's cosine for every pair a session types, per model (no cache, one pair per call as the page does)."""
    from core.scoring.runner import run_pairs

    out = {}
    for n in range(N_SESSIONS):
        for round_ in (1, 2):
            text_a, text_b = pair(n, round_)
            result = run_pairs(pd.DataFrame({"text_a": [text_a], "text_b": [text_b]}), list(MODELS), cache=None)
            assert not result.errors, result.errors
            out[(text_a, text_b)] = dict(zip(result.results["model"], result.results["cosine"].astype(float), strict=True))
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if SKIP_REASON:
        pytest.skip(SKIP_REASON)
    tmp = tmp_path_factory.mktemp("concurrency")
    with E.running_server(tmp, env={"COSINE_PROBE_DEFAULT_MODELS": ",".join(MODELS), LOAD_LOG_ENV: str(tmp / "loads.jsonl")}) as srv:
        srv.load_log = tmp / "loads.jsonl"
        yield srv


def _server_problems(log: str) -> list[str]:
    """Tracebacks and error lines in the server log (deprecation chatter aside)."""
    lines = [line for line in log.splitlines() if not E.NOISE.search(line)]
    return [line for line in lines if re.search(r"Traceback|Exception|\bERROR\b|Error:", line)]


@pytest.mark.browser
@pytest.mark.slow
def test_concurrent_sessions(server, expected):
    """Eight sessions compare (and four run suites) at once: no errors, own results only, one load per model."""
    start = time.monotonic()
    # Own thread: asyncio.run must not meet an event loop another test's sync Playwright left behind.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        try:
            timeline = pool.submit(asyncio.run, run_all(server.url, expected)).result()
        except Exception:
            print(f"--- streamlit log (tail) ---\n{server.log_tail()}")
            raise
    print(f"{N_SESSIONS} sessions in {time.monotonic() - start:.1f} s\n" + "\n".join(timeline))

    problems = _server_problems(server.log_path.read_text(errors="replace"))
    assert not problems, "server log has errors:\n" + "\n".join(problems[:40]) + f"\n--- tail ---\n{server.log_tail()}"

    assert server.load_log.exists(), f"no load log at {server.load_log}: the server loaded no model?\n{server.log_tail()}"
    events = [json.loads(line) for line in server.load_log.read_text().splitlines() if line.strip()]
    counts = collections.Counter(e["model"] for e in events if e["event"] == "load")
    assert counts == dict.fromkeys(MODELS, 1), f"model loads in the server: {dict(counts)} (want each of {list(MODELS)} once)"
    pids = {e["pid"] for e in events}
    assert pids == {server.proc.pid}, f"loads logged by pid(s) {pids}, server is {server.proc.pid}"


def test_threads_racing_for_a_cold_model_load_it_once(tmp_path, monkeypatch, caplog):
    """Eight threads ask for one model nobody loaded yet: one load, one shared instance, one log record."""
    from core.models import loading

    load_log = tmp_path / "loads.jsonl"
    monkeypatch.setenv(LOAD_LOG_ENV, str(load_log))
    # A cold process as far as load_model can tell (restored after the test).
    monkeypatch.setattr(loading, "_LOADED", {})
    monkeypatch.setattr(loading, "_LOAD_LOCKS", {})
    monkeypatch.setattr(loading, "LOAD_COUNTS", {})
    caplog.set_level(logging.INFO, logger=loading.__name__)
    name, n = registry.MINILM_L3_ONNX, 8
    gate = threading.Barrier(n)

    def load(_):
        gate.wait(timeout=30)
        return loading.load_model(name)

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        loaded = list(pool.map(load, range(n)))
    assert all(m is loaded[0] for m in loaded), "threads got different model instances"
    assert dict(loading.LOAD_COUNTS) == {name: 1}, f"load counts: {loading.LOAD_COUNTS}"
    events = [json.loads(line) for line in load_log.read_text().splitlines()]
    assert [(e["event"], e["model"], e["pid"]) for e in events] == [("load", name, os.getpid())]
    assert events[0]["seconds"] >= 0
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("loaded model")] == [
        f"loaded model {name} in {loaded[0].load_seconds:.2f} s"
    ]

    # A load log that cannot be written is a warning, never a failed load.
    monkeypatch.setenv(LOAD_LOG_ENV, str(tmp_path))  # a folder, not a file
    loading._record_load(loaded[0])
    assert any(r.levelno == logging.WARNING and "load log" in r.getMessage() for r in caplog.records)


# Run in a fresh interpreter: the race is in transformers' *first* lazy imports,
# which this test process has long finished.
FIRST_IMPORT_RACE = """
import concurrent.futures, threading
from core.models import loading
from core.models import registry
jobs = [
    lambda: loading.load_model(registry.MINILM_L3_ONNX),
    lambda: loading.load_tokenizer(registry.MINILM_L6),
    lambda: loading.load_tokenizer(registry.MINILM_L6_INT8),
]
gate = threading.Barrier(len(jobs))
def run(job):
    gate.wait(timeout=60)
    try:
        job()
        return "ok"
    except Exception as exc:
        return repr(exc)
with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
    print("\\n".join(pool.map(run, jobs)))
"""


def test_first_hugging_face_loads_in_parallel_threads_all_succeed():
    """A cold process: an ONNX model and two tokenizers load at the same moment, and none fails.

    Without core.backends.HF_LOAD_LOCK the ONNX load failed every time here
    (transformers 5's lazy ``from transformers import AutoTokenizer`` is not
    thread-safe): in the app, a session opening Tokenizer while another's
    Compare loads the ONNX model got a "failed to load" error.
    """
    env = dict(os.environ, PYTHONPATH=str(E.ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", FIRST_IMPORT_RACE], cwd=E.ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcomes = proc.stdout.strip().splitlines()
    assert outcomes == ["ok"] * 3, "\n".join(outcomes)
