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
