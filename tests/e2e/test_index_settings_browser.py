"""End-to-end: the Index settings page in headless Chromium at 1280x800, the failure-mode suite under every default setting.

A user scores the suite, reads the finding first, is told why binary is never read at the cosine threshold,
sees what moved and the change chart, whose binary cells are its rates at its own calibrated threshold (``†``), and
opens every figure: binary's row at the cosine threshold is not made (``—``), its row at its own threshold is.
Screenshots land in tests/screenshots/ (``index-settings-*.png``).

Run: ``.venv/bin/python -m pytest tests/e2e/test_index_settings_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

SMALL_SCREEN = {"width": 1280, "height": 800}


@pytest.fixture
def small_page(browser, server):
    """A page at the 1280x800 a laptop user has (the shared ``page`` fixture is larger)."""
    context = browser.new_context(viewport=SMALL_SCREEN)
    context.set_default_timeout(60_000)
    context.add_init_script(E.INIT_SCRIPT)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


def test_binary_is_read_at_its_own_threshold_and_the_finding_leads(small_page, server):
    page = small_page
    E.goto(page, f"{server.url}/index-settings")
    E.assert_page_opened(page, "index-settings")
    main = page.locator(E.MAIN)
    # The server's cache starts empty: the suite's 700 texts are encoded on this click (minutes on a loaded machine).
    E.act(page, lambda: page.get_by_role("button", name="Score index settings", exact=True).click(), timeout_ms=900_000)
    E.assert_no_errors(page)

    # The finding first (bold, per model), then the sentence on binary's scale.
    finding = main.locator("[data-testid='stMarkdownContainer'] strong", has_text="MiniLM-L6:").first
    expect(finding).to_be_visible()
    assert "binary" in finding.inner_text()
    scale = main.locator("[data-testid='stAlert']", has_text="never at the cosine threshold").first
    expect(scale).to_be_visible()
    assert "binary (Hamming scale)" in scale.inner_text()
    expect(main.locator("h3", has_text="What moved beyond its interval")).to_be_visible()
    E.wait_charts_drawn(page)
    chart = main.locator("[data-testid='stPlotlyChart']").first
    expect(chart).to_be_visible()
    # The chart's binary cells are its failure rates at its own calibrated threshold, marked † and said under the chart.
    heat = chart.locator(".js-plotly-plot").first.evaluate("div => ({x: div.data[0].x, text: div.data[0].text})")
    column = heat["x"].index("binary")
    binary_cells = [row[column] for row in heat["text"]]
    assert binary_cells and all(cell.endswith("†") for cell in binary_cells), binary_cells
    expect(main.get_by_text("own calibrated threshold", exact=False).first).to_be_visible()
    E.screenshot(page, "index-settings-failure-modes")

    # Every figure: binary has no failure rate at the cosine threshold, and one at its own threshold.
    E.act(page, lambda: main.get_by_text("Every figure", exact=False).first.click(), expect_rerun=False)
    grid = main.locator("[data-testid='stExpander'] [data-testid='stDataFrame']").first
    expect(grid).to_be_visible()
    table = E.read_dataframe(grid)
    at_cosine = table[table["metric"] == "failure_rate"]
    at_own = table[table["metric"] == "failure_rate_own_threshold"]
    assert len(at_cosine) >= 7 and (at_cosine["binary"] == "—").all() and (at_cosine["binary-rescore"] == "—").all()
    assert (at_cosine["float32"] != "—").all()
    assert len(at_own) == len(at_cosine) and all(E.to_float(v) >= 0 for v in at_own["binary"])
    # The chart's binary cells are those rates at its own threshold, not the cosine threshold's "—".
    charted = sorted(float(cell.rstrip("*†")) for cell in binary_cells)
    assert charted == pytest.approx(sorted(round(E.to_float(v), 2) for v in at_own["binary"]), abs=0.0051)
    E.element_screenshot(page, grid, "index-settings-every-figure")
