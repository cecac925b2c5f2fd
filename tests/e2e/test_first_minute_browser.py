"""End-to-end: the explorer's first minute in headless Chromium at 1280×800 on a fresh cache.

A new user opens Compare and sees which model loads (and the one-off exact
ONNX export) while it loads, then the cosine table in the first screen; on
Failure modes the "Across thresholds" tab stays open when the threshold moves,
a worst case reads in full, and the one-click HTML report opens offline with
its charts; Your data says an AUC below 0.5 in words. Screenshots land in
tests/screenshots/first-minute-*.png.

Run: ``.venv/bin/python -m pytest tests/e2e/test_first_minute_browser.py -q``
"""

from __future__ import annotations

import re

import e2e_support as E
import pytest

from core import constants, lexicon
from core.papers.suites import load_suite

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

SMALL = {"width": 1280, "height": 800}
RUN_TIMEOUT_MS = 600_000  # a fresh cache on a shared 2-core machine: the export, torch and the suite's encoding
BACKWARDS = (
    "a,b,label\n"
    "The patient is allergic to penicillin,The patient is not allergic to penicillin,contradiction\n"
    "The train leaves at 9 am,The train does not leave at 9 am,contradiction\n"
    "All students passed the exam,No students passed the exam,contradiction\n"
    "The patient is allergic to penicillin,Penicillin triggers a reaction in this person,paraphrase\n"
    "The train leaves at 9 am,Departure is scheduled for nine in the morning,paraphrase\n"
    "All students passed the exam,Every pupil got through the test,paraphrase\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Its own server on a fresh cache with the default backend (auto), so the first load makes MiniLM's exact ONNX export."""
    with E.running_server(tmp_path_factory.mktemp("e2e-first-minute"), env={constants.BACKEND_ENV_VAR: "auto"}) as srv:
        yield srv


@pytest.fixture
def page(request, browser, server):
    """A fresh 1280×800 browser context (the issue's screen)."""
    context = browser.new_context(viewport=SMALL, accept_downloads=True)
    context.set_default_timeout(60_000)
    context.add_init_script(E.INIT_SCRIPT)
    pg = context.new_page()
    pg.base = server.url
    yield pg
    context.close()


def _viewport_shot(page, name: str) -> None:
    E.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    E.wait_charts_drawn(page, 3_000)
    page.screenshot(path=str(E.SCREENSHOTS / f"{name}.png"))


def test_first_compare_names_the_model_while_it_loads_then_shows_the_table_in_the_first_screen(page):
    page.goto(f"{page.base}/compare", wait_until="domcontentloaded")
    # The first run loads MiniLM on a fresh cache: the status names it (and its one-off export), n of N.
    progress = page.get_by_text("MiniLM-L6", exact=False).filter(has_text="(1/1)").first
    progress.wait_for(state="visible", timeout=RUN_TIMEOUT_MS)
    said = progress.inner_text()
    _viewport_shot(page, "first-minute-1-compare-loading")
    assert "making its exact ONNX export once (about" in said or "loading MiniLM-L6" in said, said
    E.wait_idle(page, RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    done = main.get_by_text("Comparing: done in").first
    expect(done).to_be_visible()
    table = main.locator(E.DATAFRAME).first
    expect(table).to_be_visible()
    box = table.bounding_box()
    _viewport_shot(page, "first-minute-2-compare-first-screen")
    assert box is not None and box["y"] + box["height"] <= SMALL["height"], f"the cosine table ends at {box} below the first 800 px"
    assert "cosine" in E.read_dataframe(table).columns


def test_failure_modes_keeps_its_tab_shows_a_worst_case_in_full_and_its_report_opens_offline(page, browser, tmp_path):
    E.goto(page, f"{page.base}/failure-modes", RUN_TIMEOUT_MS)
    E.act(page, lambda: page.get_by_role("button", name="Run failure-mode suite").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_text("At threshold 0.70, MiniLM-L6 scores").first).to_be_visible()

    # The tab built around the slider stays open when the slider moves.
    E.act(page, lambda: main.get_by_role("tab", name="Across thresholds").click())
    thumb = page.locator(f'{E.SIDEBAR} [data-testid="stSlider"]').get_by_role("slider")
    thumb.focus()
    E.act(page, lambda: thumb.press("ArrowRight"))
    assert float(thumb.input_value()) == pytest.approx(0.71)
    expect(main.get_by_role("tab", name="Across thresholds")).to_have_attribute("aria-selected", "true")
    expect(main.get_by_role("heading", name="Share above each threshold")).to_be_visible()
    _viewport_shot(page, "first-minute-3-failure-modes-tab-kept")

    # A worst case, selected, reads in full under the table: the suite's longest adversarial sentence, searched for.
    suite = load_suite(constants.SUITE_FAILURE_MODES)
    adversarial = suite[suite[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES)]
    longest = max(adversarial[constants.COL_TEXT_A], key=len)
    E.act(page, lambda: main.get_by_role("tab", name="Worst cases").click())
    search = main.get_by_label("Search pairs", exact=True)
    search.fill(longest)
    E.act(page, lambda: search.press("Enter"))
    grid = main.locator(E.DATAFRAME).filter(visible=True).first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    E.act(page, lambda: page.mouse.click(box["x"] + 18, box["y"] + 35 + 36))  # the first row's selection box (header 35 px, rows 72 px)
    detail = main.locator("[data-testid='stMarkdownContainer'] p", has=page.locator("strong", has_text=re.compile(r"^text a$"))).first
    expect(detail).to_be_visible()
    sentence = detail.inner_text().split("\n", 1)[1].strip()
    assert sentence == longest, f"the selected row's sentence {sentence!r} is not the whole {longest!r}"
    detail.scroll_into_view_if_needed()
    _viewport_shot(page, "first-minute-4-worst-case-in-full")
    search.fill("")
    E.act(page, lambda: search.press("Enter"))

    # One click: the HTML report; it opens with the network off and draws its charts.
    button = main.get_by_role("button", name="⬇ HTML report")
    with page.expect_download(timeout=120_000) as info:
        button.click()
    path = tmp_path / "report.html"
    info.value.save_as(str(path))
    offline = browser.new_context(viewport=SMALL, offline=True)
    try:
        report = offline.new_page()
        report.route("http*://**", lambda route: route.abort())  # nothing may be fetched
        report.goto(path.as_uri())
        report.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg .trace').length >= 3", timeout=60_000)
        expect(report.get_by_text(re.compile(r"At threshold 0\.71, MiniLM-L6 scores")).first).to_be_visible()
        report.screenshot(path=str(E.SCREENSHOTS / "first-minute-5-report-offline.png"), full_page=False)
    finally:
        offline.close()


def test_your_data_says_an_auc_below_half_in_words(page, tmp_path):
    path = tmp_path / "backwards.csv"
    path.write_text(BACKWARDS, encoding="utf-8")
    E.goto(page, f"{page.base}/your-data")
    E.upload(page, str(path))
    E.act(page, lambda: page.get_by_role("button", name="Run on selected models").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    said = page.locator(E.MAIN).get_by_text(re.compile(r"rank(s)? them backwards")).first
    expect(said).to_be_visible()
    text = said.inner_text()
    assert "a “match (paraphrase)” pair outscores a “no match (contradiction)” pair" in text, text
    said.scroll_into_view_if_needed()
    _viewport_shot(page, "first-minute-6-your-data-auc-below-half")
