"""End-to-end: the Your corpus page in headless Chromium against ``streamlit run``.

A user uploads a corpus file, audits it (the progress names the model), reads
the findings, the risk table and the twin-share curve, sees each twin pair
side by side with its differing words marked, and moves the page's threshold:
the numbers change without a second audit.  Screenshots land in
tests/screenshots/ (``your-corpus-*.png``).

Run: ``.venv/bin/python -m pytest tests/e2e/test_your_corpus_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

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


def _risk_all(page):
    table = E.read_dataframe(
        page.locator(f"{E.MAIN} h2", has_text="The risk in numbers").first.locator("xpath=following::*[@data-testid='stDataFrame'][1]")
    )
    table.columns = [str(c).replace(" ", "_") for c in table.columns]
    return table[table["failure_mode"] == "all modes"].iloc[0]


def test_upload_audit_and_move_the_threshold(page, server, tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    E.goto(page, f"{server.url}/your-corpus")
    E.assert_page_opened(page, "your-corpus")
    E.upload(page, str(path))
    expect(page.locator(E.MAIN).get_by_text("8 passages")).to_be_visible()

    E.act(page, lambda: page.get_by_role("button", name="Audit corpus", exact=True).click())
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    # The status box names the model that ran (its progress bar named it while encoding).
    expect(main.get_by_text("Audit done with MiniLM-L6: 8 passages")).to_be_visible()
    expect(main.locator("h2", has_text="Findings")).to_be_visible()
    expect(main.get_by_text("have a confusable twin above").first).to_be_visible()

    # The twin boxes: both texts, the differing words highlighted.
    marked = main.locator("[data-testid='stMarkdownContainer'] span", has_text="500")
    expect(marked.first).to_be_visible()
    expect(main.get_by_text("Globex acquired Acme in 2019.").first).to_be_visible()
    E.wait_charts_drawn(page)
    expect(main.locator("[data-testid='stPlotlyChart']").first).to_be_visible()
    before = _risk_all(page)
    assert int(before["twin_pairs"]) >= 3
    E.screenshot(page, "your-corpus-audit")

    # The map: twins drawn as linked points; a click on one shows its passage and its twins.
    map_chart = main.locator("[data-testid='stPlotlyChart']").filter(has_text="2-D map").first
    expect(map_chart).to_be_visible()
    point = map_chart.locator(".scatterlayer .trace .points path").last
    expect(point).to_be_attached()
    E.element_screenshot(page, map_chart, "your-corpus-map")
    E.act(page, lambda: point.click(force=True))
    expect(main.get_by_text("Passage ", exact=False).first).to_be_visible()
    E.screenshot(page, "your-corpus-map-selected")

    # The page's threshold: high enough that no pair is close; no second audit (the status still says the first one).
    slider = page.get_by_role("slider", name="Threshold for this audit")
    slider.focus()
    E.act(page, lambda: page.keyboard.press("End"))
    after = _risk_all(page)
    assert int(after["twin_pairs"]) < int(before["twin_pairs"])
    E.assert_no_errors(page)
    E.screenshot(page, "your-corpus-threshold-high")


def test_check_a_dedup_run_and_download_keep_csv(page, server, tmp_path):
    """A user uploads a corpus with ids and a dedup run's clusters beside it, reads what the run deletes, and downloads
    keep.csv: the negation the run would delete is kept, the copy is not.  No model runs."""
    corpus = tmp_path / "kb.csv"
    corpus.write_text(
        "id,text\n"
        "p1,The patient has diabetes.\n"
        "p2,the patient has diabetes\n"
        "p3,The patient does not have diabetes.\n"
        "p4,Take 5 mg of the drug twice a day.\n"
        "p5,Take 500 mg of the drug twice a day.\n"
        "p6,Paris is the capital of France.\n",
        encoding="utf-8",
    )
    clusters = tmp_path / "clusters.csv"
    clusters.write_text("id,cluster_id\np1,A\np2,A\np3,A\np4,B\np5,B\n", encoding="utf-8")
    E.goto(page, f"{server.url}/your-corpus")
    E.assert_page_opened(page, "your-corpus")
    E.upload(page, str(corpus), target=".st-key-yc_corpus_uploader input[type=file]")
    main = page.locator(E.MAIN)
    expect(main.get_by_text("6 passages")).to_be_visible()
    E.upload(page, str(clusters), target=".st-key-yc_dedup_uploader input[type=file]")
    E.assert_no_errors(page)
    expect(main.get_by_text("The dedup run removes 3 passage(s) from 2 cluster(s)")).to_be_visible()
    expect(main.get_by_text("keeps 5 passages where the run keeps 3", exact=False)).to_be_visible()
    summary = E.read_dataframe(
        main.locator("h3", has_text="What the run deletes").first.locator("xpath=following::*[@data-testid='stDataFrame'][1]")
    )
    assert set(summary["kind"]) == {"twin", "near-duplicate"}, summary
    # The worst cluster side by side: the negation marked on the side the run deletes.
    expect(main.locator("[data-testid='stMarkdownContainer'] span", has_text="does not have").first).to_be_visible()
    keep = E.download_csv(page, main.get_by_role("button", name="keep.csv", exact=False))
    assert keep["id"].tolist() == ["p1", "p3", "p4", "p5", "p6"]
    E.screenshot(page, "your-corpus-dedup")
