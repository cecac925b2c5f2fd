"""End-to-end: what the walk found wrong on screen, each fixed, in headless Chromium at 1280×800.

On the shared e2e server (MiniLM, a fresh cache): Home links every main page, gives the README's example number,
keeps the threshold in the first screen and marks models that cannot load in the picker; Compare's axis is zoomed
to the scores, its threshold named in the legend, its downloads each say what they hold; Failure modes draws only
the open tab, says when a calibrated threshold makes failure rates 100% (with the near-miss choice beside it) and
shows the worst pair in full with the changed words marked, the change itself on screen in the table; Papers says
metrics in words and no "None"; OOV robustness shows short model names; Tokenizer shows a split once with the
models that make it; Your data's worst pairs are marked too. Screenshots: tests/screenshots/screen-*.png.

Run: ``.venv/bin/python -m pytest tests/e2e/test_screen_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

SMALL = {"width": 1280, "height": 800}
RUN_TIMEOUT_MS = 600_000  # a fresh cache on a shared 2-core machine
# Streamlit draws :orange-background[...] as a span with an inline background colour.
MARKED = "[data-testid='stMarkdownContainer'] span[style*='background']"
# text A, text B, no category, a label (1 = same meaning): the report then leads with the label finding
PASTED = (
    "The patient is allergic to penicillin\tThe patient is not allergic to penicillin\t\t0\nTake 5 mg daily\tTake 50 mg daily\t\t0\n"
    "The meeting was postponed\tThe meeting was delayed\t\t1\nI like green tea\tGreen tea is what I like\t\t1"
)


@pytest.fixture
def page(request, browser, server):
    """A fresh 1280×800 browser context (the walk's screen) on the shared server."""
    context = browser.new_context(viewport=SMALL, accept_downloads=True)
    context.set_default_timeout(60_000)
    context.add_init_script(E.INIT_SCRIPT)
    pg = context.new_page()
    pg.base = server.url
    yield pg
    context.close()


def _shot(page, name: str) -> None:
    E.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    E.wait_charts_drawn(page, 3_000)
    page.screenshot(path=str(E.SCREENSHOTS / f"screen-{name}.png"))


def _grid_with(page, header: str):
    """The visible data grid that has a column headed ``header``."""
    grids = page.locator(E.MAIN).locator(E.DATAFRAME).filter(visible=True)
    for i in range(grids.count()):
        grid = grids.nth(i)
        grid.locator("table").first.wait_for(state="attached", timeout=30_000)
        if grid.locator("thead th", has_text=header).count():
            return grid
    raise AssertionError(f"no visible table with a column {header!r}")


def test_home_links_every_page_gives_the_example_and_keeps_the_threshold_in_view(page):
    E.goto(page, page.base)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    for link in ("Rank passages", "Fine-tune a model", "Earlier runs"):
        expect(main.get_by_role("link", name=link)).to_be_visible()
    example = main.locator("[data-testid='stAlert']", has_text="0.947").first
    expect(example).to_be_visible()
    assert "not allergic to penicillin" in example.inner_text() and "all-MiniLM-L6-v2" in example.inner_text()
    thumb = page.locator(f'{E.SIDEBAR} [data-testid="stSlider"]').get_by_role("slider")
    box = thumb.bounding_box()
    assert box is not None and box["y"] + box["height"] <= SMALL["height"], f"the threshold slider sits at {box}, below the first 800 px"
    _shot(page, "home-first-screen")
    # The picker marks a model that cannot load here before it is picked.
    page.locator(f'{E.SIDEBAR} [data-testid="stMultiSelect"]').first.click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    texts = [options.nth(i).inner_text() for i in range(options.count())]
    assert any(t.startswith("⛔") and "unavailable" in t for t in texts), texts
    assert any(t.startswith("🔒") for t in texts), texts
    _shot(page, "home-picker-marks")
    # With the four bundled models a new user gets (their chips fill the picker), the slider stays in the first screen:
    # under the picker it sat below 800 px.
    for name in ("mpnet-base", "MiniLM-L3 (ONNX)", "MiniLM-L6 int8 (ONNX)"):
        E.act(page, lambda name=name: page.get_by_role("option", name=name).first.click())
        if not page.get_by_role("option").first.is_visible():
            page.locator(f'{E.SIDEBAR} [data-testid="stMultiSelect"]').first.click()
    page.keyboard.press("Escape")
    picked = page.locator(f'{E.SIDEBAR} [data-testid="stMultiSelect"]').first.inner_text()
    assert all(name in picked for name in ("MiniLM-L6", "mpnet-base", "MiniLM-L3 (ONNX)", "MiniLM-L6 int8 (ONNX)")), picked
    box = thumb.bounding_box()
    assert box is not None and box["y"] + box["height"] <= SMALL["height"], f"with four models the slider sits at {box}"
    _shot(page, "home-four-models-threshold-in-view")


def test_compare_zooms_its_axis_names_the_threshold_and_labels_each_download(page):
    E.goto(page, f"{page.base}/compare", RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_text("Cosine per model").first).to_be_visible()
    chart = main.locator("[data-testid='stVegaLiteChart']").first  # Vega-Lite, drawn as SVG: its text is in the page
    chart.scroll_into_view_if_needed()
    E.wait_charts_drawn(page, 5_000)
    title = chart.locator(".role-axis-title text").all_text_contents()
    said = next(t for t in title if "cosine similarity" in t)
    start = float(said.split("starts at ")[1].split(",")[0])
    ticks = [float(t) for t in chart.locator(".role-axis-label text").all_text_contents() if t.replace(".", "", 1).isdigit()]
    cosine = E.to_float(E.read_dataframe(main.locator(E.DATAFRAME).first)["cosine"].iloc[0])
    assert 0 < start <= min(ticks) < cosine < max(ticks), (start, ticks, cosine)  # zoomed to the score, not 0-1
    assert said.endswith(f"starts at {start:.2f}, not 0")
    assert "threshold 0.70" in chart.locator(".role-legend").text_content()  # in the legend, not on its line
    bar = chart.locator(".mark-rect.role-mark path").first.bounding_box()
    assert bar and bar["height"] > 15, bar  # one model: its bar is drawn (at a fixed 115 px height the legend and axis took it all)
    written = chart.locator(".mark-text.role-mark text").all_text_contents()  # the bars' values, nothing on the threshold's line
    assert written and all(t.replace(".", "", 1).isdigit() for t in written), written
    labels = [b.inner_text() for b in main.get_by_role("button", name="⬇").all()]
    downloads = [label for label in labels if "CSV" in label or "JSON" in label]
    assert downloads and len(downloads) == len(set(downloads)) and all("·" in label for label in downloads), downloads
    _shot(page, "compare-zoomed-axis")


def test_failure_modes_draws_the_open_tab_says_a_100_percent_rate_and_marks_the_worst_pair(page):
    E.goto(page, f"{page.base}/failure-modes")
    E.act(page, lambda: page.get_by_role("button", name="Run failure-mode suite").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_role("heading", name="Failure rate at threshold 0.70")).to_be_visible()

    # Only the open tab is drawn: another tab's content is not in the page at all until it is opened.
    assert not main.get_by_role("heading", name="Share above each threshold").count()
    E.act(page, lambda: main.get_by_role("tab", name="Each model's own threshold").click())
    expect(main.get_by_role("heading", name="Each model's own threshold")).to_be_visible()
    assert not main.get_by_role("heading", name="Failure rate at threshold 0.70").count()
    said = main.get_by_text("lies below every pair of").first
    expect(said).to_be_visible()
    assert "100%" in said.inner_text() and "near-miss" in main.get_by_text("count the near-miss controls").first.inner_text()
    expect(main.get_by_role("checkbox", name="Count near-miss controls as negatives")).to_be_attached()
    said.scroll_into_view_if_needed()
    _shot(page, "failure-modes-calibrated-100")

    # The worst cases: the change on screen in the table, and the worst pair in full with the changed words marked.
    E.act(page, lambda: main.get_by_role("tab", name="Worst cases").click())
    # The grid renders the columns in view only (its accessible table has no others before a scroll): the change is one.
    grid = _grid_with(page, "changed words")
    grid.scroll_into_view_if_needed()
    shown = [th.inner_text().strip() for th in grid.locator("thead th").all()]
    assert shown.index("changed words") < shown.index("text a"), shown
    marked = main.locator(MARKED)
    expect(marked.first).to_be_visible()
    assert marked.count() >= 2  # in both sentences
    marked.first.scroll_into_view_if_needed()
    _shot(page, "failure-modes-worst-marked")


def test_your_data_worst_pairs_show_the_change_marked_and_its_report_says_the_labels(page, tmp_path):
    E.goto(page, f"{page.base}/your-data")
    box = page.get_by_label("Or paste tab-separated pairs (text A<TAB>text B per line)", exact=True)
    box.fill(PASTED)
    E.act(page, lambda: box.press("Control+Enter"))
    E.act(page, lambda: page.get_by_role("button", name="Use pasted pairs").click())
    E.act(page, lambda: page.get_by_role("button", name="Run on selected models").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    table = E.read_dataframe(_grid_with(page, "changed words"))
    assert {"+ not", "5 → 50"} <= set(table["changed words"]), table
    marked = main.locator(MARKED)
    expect(marked.first).to_be_visible()
    assert {marked.nth(i).inner_text().strip() for i in range(marked.count())} & {"not", "50", "5"}
    marked.first.scroll_into_view_if_needed()
    _shot(page, "your-data-worst-marked")

    # The HTML report says the label finding, draws its worst cases from the no-match pairs, and names the models and labels.
    with page.expect_download(timeout=120_000) as info:
        main.get_by_role("button", name="⬇ HTML report").click()
    report = tmp_path / "report.html"
    info.value.save_as(str(report))
    text = report.read_text(encoding="utf-8")
    findings = text[text.index("<h2>Findings</h2>") : text.index("<h2>Charts</h2>")]
    assert "AUC" in findings, findings[:500]
    worst = text[text.index("Worst cases") : text.index("<h2>By category</h2>")]
    assert "should not match" in worst and "The patient is not allergic to penicillin" in worst and "The meeting was delayed" not in worst
    assert "<h2>Models</h2>" in text and "<h2>Labels</h2>" in text and "match label" in text


def test_papers_say_metrics_in_words_and_never_none(page):
    E.goto(page, f"{page.base}/papers")
    E.assert_no_errors(page)
    table = E.read_dataframe(_grid_with(page, "metric"))
    assert "mean cosine" in set(table["metric"]) and not any("_" in m for m in table["metric"]), set(table["metric"])
    assert not (table == "None").any().any()
    _shot(page, "papers-words")


def test_oov_tables_use_short_names_and_tokenizer_groups_identical_splits(page):
    E.goto(page, f"{page.base}/oov")
    E.act(page, lambda: page.get_by_role("button", name="Run OOV suites").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    grid = _grid_with(page, "mean delta")
    table = E.read_dataframe(grid)
    assert "MiniLM-L6" in set(table["model"]) and not any("/" in m for m in table["model"]), set(table["model"])
    grid.scroll_into_view_if_needed()
    _shot(page, "oov-short-names")

    # Tokenizer: MiniLM and its int8 twin split alike; the split is printed once, naming both.
    E.goto(page, f"{page.base}/tokenizer")
    picker = page.locator(f'{E.SIDEBAR} [data-testid="stMultiSelect"]').first
    picker.click()
    E.act(page, lambda: page.get_by_role("option", name="MiniLM-L6 int8", exact=False).first.click())
    page.keyboard.press("Escape")
    E.wait_idle(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_text("all 2 models:").first).to_be_visible()
    assert not main.get_by_text("MiniLM-L6 int8:").count()  # no split printed for one twin alone
    _shot(page, "tokenizer-grouped")
