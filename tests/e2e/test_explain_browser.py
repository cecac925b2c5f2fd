"""End-to-end: Compare's "Why this score" in headless Chromium against ``streamlit run`` (MiniLM only).

Same pattern as tests/e2e/test_browser.py: one server and one Chromium per
session, a fresh context per test, a screenshot per test in tests/screenshots/.
"""

from __future__ import annotations

import e2e_support as E
import pytest

from core import constants
from core.models.loading import load_model
from core.probes.explain import occlusion, top_units

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def core_table(session_cache_dir):
    return occlusion(load_model(E.TEST_MODEL), A, B).table


def test_why_this_score_shades_tokens_and_lists_core_top_tokens(page, core_table):
    """Switch the section on: the expander shows each token, the top tokens as core ranks them, and the CSV has "not" with core's value."""
    E.goto(page, f"{page.base}/compare")
    expect(page.locator(E.MAIN).get_by_text(f"A: {A}")).to_be_visible()
    E.act(page, lambda: page.get_by_text("Explain each model's score").click())
    E.assert_no_errors(page)
    section = page.locator('[data-testid="stExpander"]', has_text="Why this score")
    expect(section.first).to_be_visible()

    # The token heatmap writes every token into the SVG; "not" is one of them.
    expect(section.locator(".js-plotly-plot text", has_text="not").first).to_be_attached()

    top = E.read_dataframe(section.locator(E.DATAFRAME).first)
    want = top_units(core_table)
    assert list(top[constants.COL_TOKEN]) == list(want[constants.COL_TOKEN])
    for shown, expected in zip(top[constants.COL_ATTRIBUTION], want[constants.COL_ATTRIBUTION], strict=True):
        assert E.to_float(shown) == pytest.approx(float(expected), abs=1e-4)

    csv = E.download_csv(page, page.locator(".st-key-dl-csv-attributions-minilm-l6 button"))
    row = csv[(csv[constants.COL_SIDE] == constants.SIDE_B) & (csv[constants.COL_TOKEN] == "not")]
    expected = core_table[(core_table[constants.COL_SIDE] == constants.SIDE_B) & (core_table[constants.COL_TOKEN] == "not")]
    assert len(row) == 1 and float(row[constants.COL_ATTRIBUTION].iloc[0]) == pytest.approx(
        float(expected[constants.COL_ATTRIBUTION].iloc[0]), abs=1e-6
    )
    # The README's picture: the first model's expander, as the user sees it.
    E.element_screenshot(page, section.first, "readme-why-this-score")
