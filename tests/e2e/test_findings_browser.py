"""End-to-end at 1280x800: findings said once, in a table, where a user reads them.

Your corpus: the lead sentence and the table of every model, then one card per twin pair with every model's cosine,
under its mode's heading. Retrieval on a BEIR zip: the wrong top passage beside the judged-relevant one, the words that
separate them marked. Screenshots land in tests/screenshots/ (``findings-*.png``), at the width a laptop gives.

Run: ``.venv/bin/python -m pytest tests/e2e/test_findings_browser.py -q``
"""

from __future__ import annotations

import io
import re
import zipfile

import e2e_support as E
import pytest

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

LAPTOP = {"width": 1280, "height": 800}
CORPUS = [
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The patient has diabetes.",
    "The patient does not have diabetes.",
    "Acme acquired Globex in 2019.",
    "Globex acquired Acme in 2019.",
    "Paris is the capital of France.",
    "Bananas are rich in potassium.",
]


def _fits(page, locator) -> None:
    """Nothing of ``locator`` runs past the main area's right edge at this width (no text cut off)."""
    main = page.locator(E.MAIN).bounding_box()
    box = locator.bounding_box()
    assert main and box and box["x"] + box["width"] <= main["x"] + main["width"] + 1, (box, main)


def test_your_corpus_cards_one_per_pair_under_their_mode(page, server, tmp_path):
    page.set_viewport_size(LAPTOP)
    path = tmp_path / "kb.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    E.goto(page, f"{server.url}/your-corpus")
    E.upload(page, str(path))
    main = page.locator(E.MAIN)
    expect(main.get_by_text("8 passages")).to_be_visible()
    # The page's one threshold, above the store block: 0.60 for this corpus.
    slider = page.get_by_role("slider", name="Threshold for this audit")
    slider.focus()
    E.act(page, lambda: page.keyboard.press("Home"))  # 0.50
    for _ in range(10):
        E.act(page, lambda: page.keyboard.press("ArrowRight"))
    expect(main.locator("[data-testid='stSliderThumbValue']", has_text="0.60").first).to_be_visible()
    E.act(page, lambda: page.get_by_role("button", name="Audit corpus", exact=True).click())
    E.assert_no_errors(page)

    # The lead sentence, then the table of every model (in words and percentages).
    lead = main.get_by_text("of the 8 passages have a confusable twin above 0.60 for MiniLM-L6").first
    expect(lead).to_be_visible()
    findings = E.read_dataframe(
        page.locator(f"{E.MAIN} h2", has_text="Findings").first.locator("xpath=following::*[@data-testid='stDataFrame'][1]")
    )
    assert findings["model"].tolist() == ["MiniLM-L6"] and findings["share of passages with a twin"].iloc[0].endswith(")")
    E.viewport_screenshot(page, "findings-your-corpus-lead")

    # One card per pair, each under its mode's heading, the model's cosine in it and the differing words marked.
    for heading in ("Negation · 1 pair", "Numerical · 1 pair", "Entity/role swap · 1 pair"):
        expect(main.locator("h3", has_text=heading)).to_be_visible()
    cards = main.locator("[data-testid='stCaptionContainer']", has_text=re.compile(r"^Passages \d+ and \d+"))
    expect(cards).to_have_count(3)
    expect(cards.first).to_contain_text("MiniLM-L6")
    marked = main.locator("[data-testid='stMarkdownContainer'] span", has_text="500")
    expect(marked.first).to_be_visible()
    numerical = main.locator("h3", has_text="Numerical · 1 pair")
    numerical.scroll_into_view_if_needed()
    _fits(page, cards.nth(1))
    E.viewport_screenshot(page, "findings-your-corpus-cards")
    E.screenshot(page, "findings-your-corpus-full")


def _zip(folder) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, str(path.relative_to(folder)))
    return out.getvalue()


def test_beir_wrong_top_passage_beside_the_relevant_one(page, server):
    page.set_viewport_size(LAPTOP)
    E.goto(page, f"{server.url}/retrieval")
    E.act(page, lambda: page.get_by_text("A BEIR folder (zip)", exact=True).click())
    E.upload(page, [{"name": "nli-beir.zip", "mimeType": "application/zip", "buffer": _zip(E.ROOT / "data" / "samples" / "nli-beir")}])
    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click(), timeout_ms=E.RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    title = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text="Per query, worst first").first
    worst = E.read_dataframe(title.locator("xpath=following::*[@data-testid='stDataFrame'][1]")).iloc[0]
    assert worst["top passage"] != worst["relevant passage"] and worst["changed words"], worst
    top = title.locator("xpath=following::strong[normalize-space()='top passage'][1]/ancestor::p[1]")
    relevant = title.locator("xpath=following::strong[normalize-space()='relevant passage'][1]/ancestor::p[1]")
    expect(top).to_contain_text(worst["top passage"])
    expect(relevant).to_contain_text(worst["relevant passage"])
    expect(top.locator("span strong").first).to_be_visible()  # a word that separates them, marked
    expect(relevant.locator("span strong").first).to_be_visible()
    # Beside each other: one row, two columns, both inside the page at 1280 px.
    a, b = top.bounding_box(), relevant.bounding_box()
    assert a and b and abs(a["y"] - b["y"]) < 5 and a["x"] + a["width"] <= b["x"] + 1, (a, b)
    _fits(page, relevant)
    relevant.scroll_into_view_if_needed()
    E.viewport_screenshot(page, "findings-beir-side-by-side")
    E.screenshot(page, "findings-beir-full")


def test_retrieval_headline_table_and_whole_mode_labels(page, server):
    """The suite's headline is one sentence and a table; Direction (beyond the papers) is whole under its bars."""
    page.set_viewport_size(LAPTOP)
    E.goto(page, f"{server.url}/retrieval")
    groups = page.get_by_label("Anchor groups to run", exact=True)
    groups.fill("8")
    E.act(page, lambda: groups.press("Enter"))
    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click(), timeout_ms=E.RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    lead = main.get_by_text("ranks the contradiction above the restatement for").first
    expect(lead).to_be_visible()
    assert (lead.inner_text()).count("lower is better") == 1
    headline = E.read_dataframe(lead.locator("xpath=following::*[@data-testid='stDataFrame'][1]"))
    assert "contradiction ranked above the restatement" in headline.columns
    E.viewport_screenshot(page, "findings-retrieval-headline")
    chart = main.locator("[data-testid='stPlotlyChart']").filter(has_text="Adversarial win rate by failure mode").first
    chart.scroll_into_view_if_needed()
    E.wait_charts_drawn(page)
    tick = chart.locator(".xtick text", has_text="Direction")
    expect(tick).to_have_count(1)
    expect(tick).to_contain_text("(beyond the papers)")
    box, frame = tick.bounding_box(), chart.bounding_box()
    assert box and frame and box["x"] >= frame["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"], (box, frame)
    assert box["y"] + box["height"] <= frame["y"] + frame["height"], (box, frame)
    expect(chart.locator(".annotation-text", has_text="hatched")).to_have_count(1)  # 8 groups: some modes have fewer than 5
    E.element_screenshot(page, chart, "findings-retrieval-win-rate-chart")


def test_compare_calibrates_on_the_first_click_and_says_every_rate_is_100(page, server):
    page.set_viewport_size(LAPTOP)
    E.goto(page, f"{server.url}/compare")
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    E.assert_no_errors(page)
    E.act(page, lambda: page.get_by_text("each model's calibrated threshold").click(), timeout_ms=E.RUN_TIMEOUT_MS)
    main = page.locator(E.MAIN)
    warning = main.get_by_text("lies below every pair of every failure mode").first
    expect(warning).to_be_visible()
    expect(main.get_by_text("press Calibrate on the control pairs")).to_have_count(0)
    warning.scroll_into_view_if_needed()
    E.viewport_screenshot(page, "findings-compare-calibrated")
