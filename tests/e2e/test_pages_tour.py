"""End-to-end tour: every page at 1280×800 in headless Chromium, its main action run, a screenshot kept.

One ``streamlit run app.py`` (MiniLM only, a throw-away cache) and one browser
context for the whole tour, as one user would go through the app: the history
page then lists the runs made on the way.  Screenshots go to
``tests/screenshots/tour-<page>.png``; the README's come from them
(``docs/screenshots/``).

Run: ``.venv/bin/python -m pytest tests/e2e/test_pages_tour.py -q`` (``-m "not browser"`` skips it).
"""

from __future__ import annotations

import os
import re

import e2e_support as E
import pytest

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402 - after the skip check

from ui.pages import PAGES  # noqa: E402

VIEWPORT = {"width": 1280, "height": 800}
# text A, text B, no category, a label: the label becomes the category and the classifier section appears
PASTED = (
    "The patient has diabetes\tThe patient does not have diabetes\t\t0\nThe meeting was postponed\tThe meeting was delayed\t\t1\n"
    "Google acquired YouTube\tYouTube was bought by Google\t\t1\nI like green tea\tThe bridge closed for repairs\t\t0"
)


SLOW_RUN_MS = 900_000  # the whole retrieval suite with its mitigations, on a loaded 2-core machine


def _click(page, name: str, timeout_ms: int = E.RUN_TIMEOUT_MS) -> None:
    button = page.get_by_role("button", name=name, exact=True).first
    expect(button).to_be_visible()
    E.act(page, button.click, timeout_ms=timeout_ms)


def _home(page) -> None:
    expect(page.locator(E.DATAFRAME).first).to_be_visible()


def _compare(page) -> None:
    _click(page, "Compare")
    expect(page.locator(f"{E.MAIN} h3", has_text="Cosine per model")).to_be_visible()


def _perturb(page) -> None:
    _click(page, "Score variants")
    expect(page.locator(f"{E.MAIN} h3", has_text="Scores")).to_be_visible()


def _tokenizer(page) -> None:
    expect(page.locator(f"{E.MAIN} h3", has_text="Line by line")).to_be_visible()


def _oov(page) -> None:
    _click(page, "Run OOV suites")
    expect(page.get_by_role("tab", name="Summary")).to_be_visible()
    expect(page.get_by_text("second sentence only (as the paper's figures)").first).to_be_visible()


def _invented(page) -> None:
    # The button carries its expected time ("Run OOV with invented words (under 5 s)"), read before the click.
    button = page.get_by_role("button", name=re.compile(r"^Run OOV with invented words \((under|about) ")).first
    expect(button).to_be_visible()
    E.act(page, button.click, timeout_ms=E.RUN_TIMEOUT_MS)


def _failure_modes(page) -> None:
    _click(page, "Run failure-mode suite")
    expect(page.get_by_role("tab", name="Summary")).to_be_visible()
    E.act(page, lambda: page.get_by_role("tab", name="Each model's own threshold").click())  # a tab click reruns the page
    expect(page.locator(f"{E.MAIN} h2", has_text="Each model's own threshold")).to_be_visible()
    page.wait_for_timeout(800)  # let the ROC chart lay out in the tab just shown
    E.element_screenshot(page, page.locator('[role="tabpanel"]:visible').first, "tour-failure-modes-own-threshold")
    E.act(page, lambda: page.get_by_role("tab", name="Worst cases").click())
    expect(page.locator(f"{E.MAIN} h2", has_text="Worst cases")).to_be_visible()


def _retrieval(page) -> None:
    _click(page, "Run retrieval probes", timeout_ms=SLOW_RUN_MS)


def _your_data(page) -> None:
    box = page.get_by_label("Or paste tab-separated pairs (text A<TAB>text B per line)", exact=True)
    box.fill(PASTED)
    E.act(page, lambda: box.press("Control+Enter"))
    _click(page, "Use pasted pairs")
    _click(page, "Run on selected models")
    expect(page.locator(f"{E.MAIN} h2", has_text="Cosine as a classifier of your label")).to_be_visible()


def _your_corpus(page) -> None:
    _click(page, "Use the shipped sample (300 WordNet adjective definitions)")
    _click(page, "Audit corpus")
    expect(page.locator(f"{E.MAIN} h2", has_text="Close pairs, worst first")).to_be_visible()


def _index_settings(page) -> None:
    _click(page, "Score index settings")


def _papers(page) -> None:
    # The button carries its expected time ("Recompute (about 2 min)"); what the cache holds was recomputed on arrival.
    button = page.get_by_role("button", name=re.compile(r"^Recompute \((under|about) ")).first
    expect(button).to_be_visible()
    E.act(page, button.click, timeout_ms=E.RUN_TIMEOUT_MS)
    expect(page.get_by_text("Recomputed on:").first).to_be_visible()


def _tune(page) -> None:
    # A real fine-tune is minutes of training: tests/views/test_tune.py runs one with a fake encoder,
    # tests/core/probes/tune/ with the real MiniLM.
    # Here: the page offers it, its expected time on the button ("Tune (about 2 min)").
    expect(page.get_by_role("button", name=re.compile(r"^Tune \((under|about) "))).to_be_enabled()


def _history(page) -> None:
    expect(page.locator(f"{E.MAIN} h1").first).to_be_visible()


# url path -> the page's main action; a page without one (a new record in ui/pages.py) is still opened and checked.
ACTIONS = {
    "compare": _compare,
    "": _home,
    "perturb": _perturb,
    "tokenizer": _tokenizer,
    "oov": _oov,
    "invented-words": _invented,
    "failure-modes": _failure_modes,
    "retrieval": _retrieval,
    "tune": _tune,
    "your-data": _your_data,
    "your-corpus": _your_corpus,
    "index-settings": _index_settings,
    "papers": _papers,
    "history": _history,
}
# url path, screenshot name, main action, from the one page list (ui/pages.py).  App order, but a deep link first:
# the first visitor of this fresh server lands on a sub-page (pages live in views/, not pages/, so Streamlit must not
# fall back to its legacy multipage mode and show "Page not found", streamlit#9992).  History last, so it lists the
# tour's runs.
TOUR = [
    (p.url_path, p.url_path or "home", ACTIONS.get(p.url_path, _history))
    for p in sorted(PAGES, key=lambda p: (p.url_path != "compare", p.url_path == "history"))
]
assert {path for path, _, _ in TOUR} == set(E.PAGE_TITLES), "the tour must stop at every page"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tour")
    env = dict(os.environ)
    env.update(
        {
            "COSINE_PROBE_DEFAULT_MODELS": E.TEST_MODEL,
            "COSINE_PROBE_CACHE_DIR": str(tmp / "cache"),
            "HF_HUB_OFFLINE": env.get("HF_HUB_OFFLINE", "1"),
            "PYTHONUNBUFFERED": "1",
            # The session turns the run history off (tests/conftest.py); the tour's last page lists its runs.
            "COSINE_PROBE_HISTORY": str(tmp / "history.duckdb"),
        }
    )
    srv = E.StreamlitServer(root=E.ROOT, env=env, log_path=tmp / "streamlit.log")
    srv.start()
    try:
        srv.wait_healthy()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=E.CHROMIUM, headless=True, args=E.CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(60_000)
            context.add_init_script(E.INIT_SCRIPT)
            pg = context.new_page()
            pg.base = srv.url
            pg.server = srv
            yield pg
            context.close()
            browser.close()
    finally:
        srv.stop()


@pytest.mark.parametrize(("path", "name", "action"), TOUR, ids=[t[1] for t in TOUR])
def test_tour(page, path, name, action):
    """The page opens from its own URL (title, no error, the sidebar), its main action runs without an error, and its screenshot is kept."""
    E.goto(page, f"{page.base}/{path}")
    try:
        E.assert_page_opened(page, path)
        action(page)
        E.wait_idle(page, SLOW_RUN_MS)
        E.assert_no_errors(page)
    except Exception:
        E.screenshot(page, f"tour-{name}-FAILED")
        print(f"--- streamlit log (tail) ---\n{page.server.log_tail()}")
        raise
    E.screenshot(page, f"tour-{name}")
