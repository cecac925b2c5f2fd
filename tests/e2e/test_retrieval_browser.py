"""End-to-end: the Retrieval page in headless Chromium against ``streamlit run``.

A user opens the page, runs the suite's first groups with two mitigations
ticked, and sees the win-rate chart, the paired-accuracy chart with its 25%
random line, and the before/after table.  Screenshots land in
tests/screenshots/ (the README's picture is ``readme-retrieval.png``).

Run: ``.venv/bin/python -m pytest tests/e2e/test_retrieval_browser.py -q``
"""

from __future__ import annotations

import io
import zipfile

import e2e_support as E
import pytest

from core import constants, lexicon

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

N_GROUPS = 60
RUN_TIMEOUT_MS = 900_000  # a fresh cache: every passage of the groups is encoded once, on a shared machine


def _chart_after(page, heading: str):
    title = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text=heading).first
    expect(title).to_be_visible()
    return title.locator("xpath=following::*[@data-testid='stPlotlyChart'][1]")


def test_run_the_suite_and_see_win_rates_and_the_random_line(page, server):
    E.goto(page, f"{server.url}/retrieval")
    expect(page.locator(f"{E.MAIN} h1")).to_contain_text("Retrieval")
    E.assert_no_errors(page)

    groups = page.get_by_label("Anchor groups to run", exact=True)
    groups.fill(str(N_GROUPS))
    E.act(page, lambda: groups.press("Enter"))
    expect(groups).to_have_value(str(N_GROUPS))
    for label in ("BM25 + dense, reciprocal rank fusion", "Contradiction guard"):
        E.act(page, lambda label=label: page.get_by_text(label, exact=True).click())

    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_text("Results for 1 model(s)")).to_be_visible()

    # The win-rate chart: one bar group per failure mode and one for all modes.
    win_chart = _chart_after(page, "Adversarial win rate")
    expect(win_chart).to_be_visible()
    expect(win_chart.locator(".xtick text", has_text="all modes")).to_have_count(1)
    expect(win_chart.locator(".xtick text", has_text=lexicon.CATEGORY_LABELS[constants.CAT_NEGATION])).to_have_count(1)

    # The paired-accuracy chart carries the dashed 25% line of random ranking, labelled.
    paired_chart = _chart_after(page, "Paired accuracy (NevIR)")
    expect(paired_chart.locator(".annotation-text", has_text="random ranking (25%)")).to_have_count(1)
    expect(paired_chart.locator(".shapelayer path")).to_have_count(1)

    # The before/after table lists the plain cosine and both ticked mitigations, with their cost.
    # The held-out split comes first (hand-written variants, then rule-made), then the pooled before/after table.
    by_source = E.read_dataframe(
        page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text="Held out first").first.locator(
            "xpath=following::*[@data-testid='stDataFrame'][1]"
        )
    )
    by_source.columns = [str(c).replace(" ", "_") for c in by_source.columns]
    assert list(dict.fromkeys(by_source["variants"])) == ["hand-written", "rule-made"]
    table = E.read_dataframe(
        page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text="Mitigations: before and after").first.locator(
            "xpath=following::*[@data-testid='stDataFrame'][2]"
        )
    )
    table.columns = [str(c).replace(" ", "_") for c in table.columns]
    assert list(table["mitigation"]) == [
        constants.MITIGATION_LABELS[m] for m in (constants.MITIGATION_NONE, constants.MITIGATION_BM25_RRF, constants.MITIGATION_GUARD)
    ]
    assert {"paraphrases_lost", "correct_lost", "ms_per_query"} <= set(table.columns)
    # Ties, and what each mitigation fixed and broke, beside its win rate.
    assert {"ties", "fixed", "broken", "correct_gained"} <= set(table.columns)

    # The before/after chart, seen in the browser. One panel per figure, the plain
    # cosine and each ticked mitigation on x, bars drawn.
    chart = _chart_after(page, "Mitigations: before and after")
    expect(chart.locator(".gtitle")).to_contain_text("Before and after each mitigation")
    for panel in ("win rate", "paired accuracy", "recall@1"):
        expect(chart.locator(".annotation-text", has_text=panel).first).to_be_visible()
    ticks = chart.locator(".xtick text").all_text_contents()
    for m in (constants.MITIGATION_NONE, constants.MITIGATION_BM25_RRF, constants.MITIGATION_GUARD):
        assert constants.MITIGATION_LABELS[m] in ticks, f"{constants.MITIGATION_LABELS[m]!r} not on the chart's x axis: {ticks}"
    expect(chart.locator(".trace.bars .point path").first).to_be_visible()
    E.element_screenshot(page, chart, "retrieval-before-after-chart")

    E.section_screenshot(page, "readme-retrieval", "Adversarial win rate", "In-corpus ranking")
    E.section_screenshot(page, "readme-retrieval-mitigations", "Mitigations: before and after", "Per group")


def test_a_triples_file_gets_a_finding_a_chart_and_the_ticked_mitigation(page, server):
    """A triples upload leads with a sentence and a chart, and the ticked mitigation is applied.

    The applied mitigation shows its ties, fixed and broken.
    """
    E.goto(page, f"{server.url}/retrieval")
    E.act(page, lambda: page.get_by_text("A triples file", exact=True).click())
    E.upload(page, str(E.ROOT / "data" / "samples" / "nli-triples.csv"))
    E.act(page, lambda: page.get_by_text("BM25 + dense, reciprocal rank fusion", exact=True).click())
    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    main = page.locator(E.MAIN)
    expect(main.get_by_text("ranks a negative above its positive", exact=False).first).to_be_visible()
    expect(main.get_by_text("fixed", exact=False).first).to_be_visible()
    chart = main.locator("[data-testid='stPlotlyChart']").first
    expect(chart).to_be_visible()
    expect(chart.locator(".xtick text", has_text="BM25")).not_to_have_count(0)
    table = E.read_dataframe(
        page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text="Mitigations: before and after").first.locator(
            "xpath=following::*[@data-testid='stDataFrame'][1]"
        )
    )
    table.columns = [str(c).replace(" ", "_") for c in table.columns]
    assert len(table) == 2 and {"ties", "fixed", "broken", "recall_gained", "recall_lost"} <= set(table.columns)
    E.screenshot(page, "retrieval-triples-mitigations")
    _worst_in_full(page, "Per triple, worst first", "negative", "retrieval-triples-worst-in-full")

    # The same for a BEIR folder: the worst query's top passage in full.
    E.act(page, lambda: page.get_by_text("A BEIR folder (zip)", exact=True).click())
    E.upload(page, [{"name": "nli-beir.zip", "mimeType": "application/zip", "buffer": _zip(E.ROOT / "data" / "samples" / "nli-beir")}])
    E.act(page, lambda: page.get_by_role("button", name="Run retrieval probes").click(), timeout_ms=RUN_TIMEOUT_MS)
    E.assert_no_errors(page)
    _worst_in_full(page, "Per query, worst first", "top passage", "retrieval-beir-worst-in-full")


def _zip(folder) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, str(path.relative_to(folder)))
    return out.getvalue()


def _worst_in_full(page, heading: str, column: str, name: str) -> None:
    """Under a worst-first table, its first row's ``column`` text in full (it ran off the table's edge), with
    the changed words marked; a screenshot from the heading to the end of that text."""
    title = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text=heading).first
    worst = E.read_dataframe(title.locator("xpath=following::*[@data-testid='stDataFrame'][1]")).iloc[0]
    assert len(worst[column]) > 0 and worst["changed words"], worst
    label = title.locator(f"xpath=following::strong[normalize-space()='{column}'][1]")
    text = label.locator("xpath=ancestor::p[1]")
    expect(text).to_contain_text(worst[column])
    expect(text.locator("span strong").first).to_be_visible()  # a changed word, marked
    with E.tall_viewport(page, name) as path:
        top, bottom, main = title.bounding_box(), text.bounding_box(), page.locator(E.MAIN).bounding_box()
        assert top and bottom and main
        clip = {"x": main["x"], "y": top["y"] - 16, "width": main["width"], "height": bottom["y"] + bottom["height"] + 24 - top["y"]}
        page.screenshot(path=str(path), full_page=True, clip=clip)
