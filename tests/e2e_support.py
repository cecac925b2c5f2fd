"""Helpers for the end-to-end browser tests (tests/test_e2e_browser.py).

A real ``streamlit run app.py`` server, a headless Chromium driven through
Playwright's sync API, and waits that follow Streamlit's own script state
instead of sleeping:

* ``stApp`` carries ``data-test-script-state`` (``initial``, ``running``,
  ``rerunRequested``, ``notRunning``) and ``data-test-connection-state``;
* an init script counts every transition into ``running``, so an action can
  wait for *its* rerun to start and finish, not for a stale idle state.

Nothing here is collected as a test (the file name does not start with
``test_``).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ui.pages import PAGES

ROOT = Path(os.environ.get("COSINE_PROBE_E2E_ROOT") or Path(__file__).resolve().parent.parent)
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = os.environ.get("COSINE_PROBE_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
]
TEST_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
HEALTH_TIMEOUT_S = 60.0
RUN_TIMEOUT_MS = 120_000  # a script run that loads a model and scores a suite
START_GRACE_MS = 3_000  # how long an action may take to start its rerun
UPLOAD_START_MS = 30_000  # an upload always reruns, after its bytes reach the server
VIEWPORT = {"width": 1600, "height": 1000}
# url path -> words the page's title (its h1) must show, in the order app.py lists the pages: the one page list's records
PAGE_TITLES = {p.url_path: p.heading for p in PAGES}

# Server log lines that say nothing about a failure.
NOISE = re.compile(r"use_container_width|width='stretch'|width='content'|will be removed after")

# Selectors (Streamlit 1.67 test ids).
APP = '[data-testid="stApp"]'
MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'
STATUS_WIDGET = '[data-testid="stStatusWidget"]'
EXCEPTION = '[data-testid="stException"]'
ERROR_ALERT = '[data-testid="stAlertContentError"]'
DIALOG = '[role="dialog"]'
DATAFRAME = '[data-testid="stDataFrame"]'

# Counts runs of the script as the browser sees them (see module docstring).
INIT_SCRIPT = """
(() => {
  window.__stRuns = 0;
  let last = null;
  const check = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app ? app.getAttribute('data-test-script-state') : null;
    if (state !== last) {
      if (state === 'running' || state === 'rerunRequested') window.__stRuns += (last === 'running' || last === 'rerunRequested') ? 0 : 1;
      last = state;
    }
  };
  new MutationObserver(check).observe(document,
    {subtree: true, childList: true, attributes: true, attributeFilter: ['data-test-script-state']});
})();
"""

IDLE_JS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]');
}
"""

# Height of the app's content (Streamlit scrolls inside stMain, not the document).
HEIGHT_JS = """
() => Math.max(document.documentElement.scrollHeight,
  ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebarContent"]')].map(el => el.scrollHeight))
"""


# ---------------------------------------------------------------- the server


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class StreamlitServer:
    """``python -m ui.serve`` (``make run``: ``streamlit run app.py`` once the pages' imports are done) in a subprocess,
    with its log in a file."""

    root: Path
    env: dict[str, str]
    log_path: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        python = self.root / ".venv" / "bin" / "python"
        cmd = [  # what ``make run`` starts: the pages' imports first, then ``streamlit run app.py``
            str(python) if python.exists() else sys.executable,
            "-m",
            "ui.serve",
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            # The repo holds .venv: watching it floods inotify and a stray
            # save would rerun the app in the middle of a test.
            "--server.fileWatcherType",
            "none",
        ]
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout: float = HEALTH_TIMEOUT_S) -> None:
        """Poll ``/_stcore/health`` until it says ok; fail with the log otherwise."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode} before it was healthy:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as resp:
                    body = resp.read().decode().strip()
                if body == "ok":
                    return
                last = f"health said {body!r}"
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.25)
        raise TimeoutError(f"streamlit not healthy after {timeout:.0f} s ({last}):\n{self.log_tail()}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGKILL the server's process group and reap it.

        Not SIGTERM: no test asserts anything about the server's own shutdown, and a graceful one (Streamlit's
        stop, the loaded models' threads, atexit) took 1.4-6.9 s per server on a busy machine, seven servers a run.
        """
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=grace)
        self._log.close()

    def log_tail(self, lines: int = 60) -> str:
        """The server log's last lines, without Streamlit's deprecation chatter."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        kept = [line for line in text.splitlines() if line.strip() and not NOISE.search(line)]
        return "\n".join(kept[-lines:]) or "(log has nothing but deprecation notes)"


def chromium_available() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (set COSINE_PROBE_E2E_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    return None


# ------------------------------------------------------------------ waiting


def wait_idle(page, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Wait until the app is connected, not running, and drawn.

    "Drawn": no "Running…" status widget and no skeleton placeholders (the
    script can be done while lazily loaded elements still show skeletons).
    """
    try:
        page.wait_for_function(IDLE_JS, timeout=timeout_ms)
    except Exception as exc:  # noqa: BLE001 - re-raised with the state that explains it
        state = page.evaluate(
            "() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
            " return a ? [a.getAttribute('data-test-script-state'), a.getAttribute('data-test-connection-state')] : null; }"
        )
        raise AssertionError(f"Streamlit still busy after {timeout_ms / 1000:.0f} s (stApp script/connection state: {state})") from exc


def runs(page) -> int:
    """How many script runs this page has seen start."""
    return int(page.evaluate("() => window.__stRuns || 0"))


def act(
    page, action: Callable[[], object], timeout_ms: int = RUN_TIMEOUT_MS, expect_rerun: bool = True, start_ms: int = START_GRACE_MS
) -> None:
    """Do ``action`` and wait for the rerun it triggers to finish.

    If no rerun starts within ``start_ms`` (the action needed none, or the
    run was too quick to observe), carry on once the app is idle: callers
    assert the outcome they expect, so a missed rerun still fails loudly.
    """
    before = runs(page)
    action()
    if expect_rerun:
        with contextlib.suppress(Exception):
            page.wait_for_function(f"() => (window.__stRuns || 0) > {before}", timeout=start_ms)
    wait_idle(page, timeout_ms)


def upload(page, files, target: str = "input[type=file]") -> None:
    """Give ``files`` to the file box ``target`` and wait for the rerun the upload makes.

    An upload is an HTTP request before its rerun starts; on a loaded machine
    that takes longer than START_GRACE_MS, and reading the page before the
    rerun saw the old page (a CI failure), so this waits up to UPLOAD_START_MS.
    """
    act(page, lambda: page.locator(target).first.set_input_files(files), start_ms=UPLOAD_START_MS)


def goto(page, url: str, timeout_ms: int = RUN_TIMEOUT_MS) -> None:
    """Open a page of the app and wait for its first run to finish."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(APP, timeout=30_000)
    # The first run starts once the websocket connects.
    with contextlib.suppress(Exception):
        page.wait_for_function("() => (window.__stRuns || 0) > 0", timeout=15_000)
    wait_idle(page, timeout_ms)


def record_script_runs(page) -> list[bytes]:
    """Every binary message the server sends this page (Streamlit's ForwardMsg protobufs), in order, as they arrive."""
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(data) if isinstance(data, bytes) else None))
    return frames


def runs_seen(frames: list[bytes]) -> tuple[list[str], set[str]]:
    """How each script run the messages report ended (FINISHED_SUCCESSFULLY is a full run, FINISHED_FRAGMENT_RUN_SUCCESSFULLY a
    fragment's), and which root containers (MAIN, SIDEBAR) their elements were drawn in."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.proto.RootContainer_pb2 import RootContainer

    ended, drawn = [], set()
    for frame in frames:
        msg = ForwardMsg()
        msg.ParseFromString(frame)
        if msg.WhichOneof("type") == "script_finished":
            ended.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))
        elif msg.WhichOneof("type") == "delta" and msg.metadata.delta_path:
            drawn.add(RootContainer.Name(msg.metadata.delta_path[0]))
    return ended, drawn


# ---------------------------------------------------------------- assertions


def assert_page_opened(page, path: str) -> None:
    """The page at ``path`` shows its title, no error, and the shared sidebar (its threshold slider)."""
    from playwright.sync_api import expect

    title = page.locator(f"{MAIN} h1").first
    expect(title).to_be_visible()
    assert PAGE_TITLES[path].lower() in title.inner_text().lower(), f"/{path}: title is {title.inner_text()!r}"
    assert_no_errors(page)
    expect(page.locator(f'{SIDEBAR} [data-testid="stSlider"]')).to_be_visible()


def error_texts(page, selector: str) -> list[str]:
    return [t.strip()[:500] for t in page.locator(selector).all_inner_texts()]


def assert_no_errors(page, allow_error_alerts: bool = False) -> None:
    """No traceback element; no st.error box unless the caller expects one."""
    exceptions = error_texts(page, EXCEPTION)
    assert not exceptions, f"{len(exceptions)} exception element(s) on {page.url}:\n" + "\n---\n".join(exceptions)
    if not allow_error_alerts:
        alerts = error_texts(page, ERROR_ALERT)
        assert not alerts, f"{len(alerts)} st.error box(es) on {page.url}:\n" + "\n---\n".join(alerts)
    # Streamlit's own modals ("Page not found", connection errors) block every click.
    dialogs = error_texts(page, DIALOG)
    assert not dialogs, f"modal dialog open on {page.url}:\n" + "\n---\n".join(dialogs)


def settled_height(page, timeout_ms: int = 5_000) -> int:
    """The content height once it stopped changing for two polls in a row (bounded)."""
    deadline = time.monotonic() + timeout_ms / 1000
    last, same = -1, 0
    while time.monotonic() < deadline and same < 2:
        height = int(page.evaluate(HEIGHT_JS))
        same = same + 1 if height == last else 0
        last = height
        page.wait_for_timeout(100)
    return last


CHARTS_DRAWN_JS = """
() => [...document.querySelectorAll('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]')]
  .filter(c => c.getClientRects().length > 0)  // charts in a hidden tab or a closed expander are never drawn
  .every(c => c.querySelector('.main-svg .trace, .main-svg .hm, .main-svg image, canvas.marks, svg.marks') !== null)
"""


def wait_charts_drawn(page, timeout_ms: int = 5_000) -> None:
    """Wait (bounded) until every chart on the page (Plotly, Vega-Lite) has drawn, so a screenshot never shows an empty frame."""
    with contextlib.suppress(Exception):  # a shot of a slow chart beats no shot; the tests assert on data, not pixels
        page.wait_for_function(CHARTS_DRAWN_JS, timeout=timeout_ms)
    page.wait_for_timeout(150)


@contextlib.contextmanager
def tall_viewport(page, name: str, max_height: int = 12_000):
    """Grow the viewport to the content's height, charts drawn; yield the screenshot path; restore the size.

    Streamlit scrolls inside its main container, not the document, and lays
    out and draws only what fits: a shot in the default viewport shows one
    screen, and a tall element's lower charts stay blank.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    size = page.viewport_size or VIEWPORT
    tall = min(max(settled_height(page), size["height"]), max_height)
    try:
        if tall > size["height"]:
            page.set_viewport_size({"width": size["width"], "height": tall})
            page.wait_for_timeout(200)  # let the data grids and charts lay out again
        wait_charts_drawn(page)
        yield path
    finally:
        page.set_viewport_size(size)


def element_screenshot(page, locator, name: str) -> Path:
    """A screenshot of one element (a tab panel, a section) in tests/screenshots/<name>.png, charts drawn."""
    with tall_viewport(page, name) as path:
        locator.screenshot(path=str(path))
    return path


def screenshot(page, name: str) -> Path:
    """A screenshot of the whole app in tests/screenshots/<name>.png, the viewport grown to the content."""
    with tall_viewport(page, name) as path:
        page.screenshot(path=str(path), full_page=True)
    return path


# ------------------------------------------------------------- reading data


READ_GRID_JS = """
async (el) => {
  const sleep = (ms) => new Promise(r => setTimeout(r, ms));
  const header = {}, cells = {};
  let colcount = 0, rowcount = 0;
  const signature = () => {
    const table = el.querySelector('table');
    if (!table) return '';
    const first = table.querySelector('tbody tr');
    return [first && first.getAttribute('aria-rowindex'),
            ...[...table.querySelectorAll('thead th')].map(th => th.getAttribute('aria-colindex'))].join(',');
  };
  const collect = () => {
    const table = el.querySelector('table');
    if (!table) return;
    colcount = Number(table.getAttribute('aria-colcount') || 0);
    rowcount = Number(table.getAttribute('aria-rowcount') || 0);
    table.querySelectorAll('thead th').forEach(th => { header[th.getAttribute('aria-colindex')] = th.innerText.trim(); });
    table.querySelectorAll('tbody tr').forEach(tr => {
      const row = (cells[tr.getAttribute('aria-rowindex')] ||= {});
      tr.querySelectorAll('td').forEach(td => { row[td.getAttribute('aria-colindex')] = td.innerText.trim(); });
    });
  };
  // Scroll, then wait (bounded) for the grid to render the new region.
  const scrollTo = async (scroller, x, y) => {
    const before = signature(), left = scroller.scrollLeft, top = scroller.scrollTop;
    scroller.scrollTo(x, y);
    if (scroller.scrollLeft === left && scroller.scrollTop === top) return;
    for (let waited = 0; waited < 1000 && signature() === before; waited += 25) await sleep(25);
    await sleep(25);
  };
  collect();
  const scroller = el.querySelector('.dvn-scroller');
  const complete = () => Object.keys(header).length >= colcount && Object.keys(cells).length >= rowcount - 1;
  if (scroller && !complete()) {
    const stepX = Math.max(50, scroller.clientWidth - 40), stepY = Math.max(30, scroller.clientHeight - 80);
    for (let y = 0, i = 0; i < 500 && !complete(); y += stepY, i++) {
      for (let x = 0, j = 0; j < 50; x += stepX, j++) {
        await scrollTo(scroller, x, y);
        collect();
        if (x + scroller.clientWidth >= scroller.scrollWidth) break;
      }
      if (y + scroller.clientHeight >= scroller.scrollHeight) break;
    }
    await scrollTo(scroller, 0, 0);
  }
  return {header, cells, colcount, rowcount};
}
"""


def read_dataframe(grid) -> pd.DataFrame:
    """Cell values of an ``st.dataframe`` as a frame of strings.

    Glide Data Grid paints on a canvas but keeps an accessible ``<table>`` of
    the rendered cells; that is what a screen reader gets, and what this
    reads.  Cells hold the *values*, not their display format (``0.96`` for a
    cell shown as ``96%``, full precision for ``%.4f``).  The grid renders
    only the rows and columns in view, so when some are missing this scrolls
    the grid through the rest, collecting cells by their ARIA row and column
    index, and scrolls back.
    """
    grid.locator("table").first.wait_for(state="attached", timeout=30_000)
    data = grid.evaluate(READ_GRID_JS)
    columns = sorted(data["header"], key=int)
    header = [data["header"][c] for c in columns]
    rows = [[data["cells"][r].get(c, "") for c in columns] for r in sorted(data["cells"], key=int)]
    frame = pd.DataFrame(rows, columns=header)
    missing = data["colcount"] - len(header), data["rowcount"] - 1 - len(rows)
    assert missing == (0, 0), f"read {len(rows)} rows × {len(header)} columns of a {data['rowcount'] - 1} × {data['colcount']} grid"
    return frame


def download_csv(page, button) -> pd.DataFrame:
    """Click a CSV download button and parse what the browser received."""
    with page.expect_download(timeout=30_000) as info:
        button.click()
    path = info.value.path()
    raw = Path(path).read_bytes()
    return pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)


NUMBER = re.compile(r"[-+]?\d*\.\d+|[-+]?\d+")


def to_float(text: str) -> float:
    """The number in a cell ('0.8123', '81.2%', '−0.05'); percentages stay as shown."""
    match = NUMBER.search(text.replace("−", "-").replace(",", ""))
    if match is None:
        raise ValueError(f"no number in {text!r}")
    return float(match.group())


def viewport_screenshot(page, name: str) -> Path:
    """A screenshot of what the viewport shows now in tests/screenshots/<name>.png: no resize, no wait for charts."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    page.screenshot(path=str(path))
    return path


def section_screenshot(page, name: str, first: str, until: str) -> Path:
    """A screenshot of the main area from the heading containing ``first`` up to the one containing ``until``.

    Used for the README's pictures of one page section.
    """
    with tall_viewport(page, name) as path:
        heading = f"{MAIN} :is(h1, h2, h3)"
        top = page.locator(heading, has_text=first).first.bounding_box()
        bottom = page.locator(heading, has_text=until).first.bounding_box()
        main = page.locator(MAIN).bounding_box()
        assert top and bottom and main, f"section {first!r}..{until!r} not found"
        clip = {"x": main["x"], "y": top["y"] - 16, "width": main["width"], "height": bottom["y"] - top["y"]}
        page.screenshot(path=str(path), full_page=True, clip=clip)
    return path


@contextlib.contextmanager
def running_server(tmp: Path, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()):
    """``streamlit run`` on a free port with MiniLM as the default model and a cache under ``tmp``; stopped on exit.

    ``env`` adds or overrides variables; ``drop`` removes inherited ones (e.g. HF_HUB_OFFLINE).
    """
    full = {k: v for k, v in os.environ.items() if k not in drop}
    full.setdefault("HF_HUB_OFFLINE", "1")
    full.update({"COSINE_PROBE_DEFAULT_MODELS": TEST_MODEL, "COSINE_PROBE_CACHE_DIR": str(tmp / "cache"), "PYTHONUNBUFFERED": "1"})
    if "HF_HUB_OFFLINE" in drop:
        full.pop("HF_HUB_OFFLINE", None)
    full.update(env or {})
    srv = StreamlitServer(root=ROOT, env=full, log_path=tmp / "streamlit.log")
    srv.start()
    try:
        srv.wait_healthy()
        yield srv
    finally:
        srv.stop()
