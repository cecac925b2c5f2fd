"""End-to-end: the real app in headless Chromium, driven like a user would.

One ``streamlit run app.py`` per session (MiniLM only, a throw-away cache),
one Chromium per session, a fresh browser context per test.  Every test
leaves a screenshot of its last screen in tests/screenshots/<test>.png (a
full-page <test>-FAILED.png when it fails, with the server log printed).

Run: ``.venv/bin/python -m pytest tests/test_e2e_browser.py -q``
(``-m "not browser"`` skips them).
"""

from __future__ import annotations

import e2e_support as E
import pandas as pd
import pytest

from core import constants, lexicon, stats
from core.models import registry
from core.papers import suites
from core.papers.suites import control_pairs

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

# Every page opening from its own URL (title, no error, the shared sidebar) is
# the tour's first check at each stop (tests/e2e/test_pages_tour.py).


# --------------------------------------------------------------------- tests


def test_sidebar_navigation_reaches_every_page(page):
    """Clicking through the sidebar menu switches pages in one session."""
    E.goto(page, page.base + "/")
    links = page.locator('[data-testid="stSidebarNav"] a')
    expect(links).to_have_count(len(E.PAGE_TITLES))
    for i, path in enumerate(E.PAGE_TITLES):
        E.act(page, lambda i=i: links.nth(i).click())
        expect(page).to_have_url(f"{page.base}/{path}")
        title = page.locator(f"{E.MAIN} h1").first
        expect(title).to_contain_text(E.PAGE_TITLES[path], ignore_case=True)
        E.assert_no_errors(page)


# ------------------------------------------------- what core says (expected values)


@pytest.fixture(scope="session")
def core_scores():
    """Score pairs with core directly (no cache), as the expected values."""
    from core.scoring.runner import run_pairs

    def score(pairs: pd.DataFrame) -> pd.DataFrame:
        result = run_pairs(pairs, [E.TEST_MODEL], cache=None)
        assert not result.errors, result.errors
        return result.results

    return score


def _after_heading(page, text: str, testid: str = "stDataFrame"):
    """The first element with ``data-testid=testid`` after the heading that contains ``text``."""
    heading = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text=text).first
    expect(heading).to_be_visible()
    return heading.locator(f"xpath=following::*[@data-testid='{testid}'][1]")


def _type_into(page, label: str, text: str) -> None:
    """Replace a text area's text and commit it (Ctrl+Enter), waiting for the rerun."""
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    E.act(page, lambda: box.press("Control+Enter"))
    expect(box).to_have_value(text)


def _set_threshold(page, key: str) -> float:
    """Move the sidebar threshold with the keyboard (End, Home, ArrowRight…); return the value shown."""
    slider = page.locator(f'{E.SIDEBAR} [data-testid="stSlider"]')
    thumb = slider.get_by_role("slider")
    thumb.focus()
    E.act(page, lambda: thumb.press(key))
    shown = slider.locator('[data-testid="stSliderThumbValue"]').inner_text()
    assert float(shown) == pytest.approx(float(thumb.input_value())), f"thumb label {shown!r} != slider value {thumb.input_value()!r}"
    return float(shown)


# --------------------------------------------------------------------- compare


def test_compare_shows_core_cosine(page, core_scores):
    """Typed sentences → Compare → the cosine shown equals core's for the pair."""
    text_a = "The invoice was paid before the deadline"
    text_b = "The invoice was paid after the deadline"
    E.goto(page, f"{page.base}/compare")
    _type_into(page, "Sentence A", text_a)
    _type_into(page, "Sentence B", text_b)
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    E.assert_no_errors(page)

    # The scored pair is echoed, and the box-changed note is gone.
    expect(page.locator(E.MAIN).get_by_text(f"A: {text_a}")).to_be_visible()
    expect(page.get_by_text("The boxes changed since this pair was scored")).to_have_count(0)

    expected = core_scores(pd.DataFrame({"text_a": [text_a], "text_b": [text_b]}))
    want = dict(zip(expected["model"], expected["cosine"].astype(float), strict=True))

    grid = _after_heading(page, "Cosine per model")
    shown = E.read_dataframe(grid)
    assert {"model", "cosine"} <= set(shown.columns), f"compare table columns: {list(shown.columns)}"
    got = {row["model"]: E.to_float(row["cosine"]) for _, row in shown.iterrows()}
    by_label = {registry.short_name(m): c for m, c in want.items()}
    assert set(got) == set(by_label), f"models shown {sorted(got)} != models scored {sorted(by_label)}"
    for model, cosine in by_label.items():
        assert got[model] == pytest.approx(cosine, abs=1e-3), f"{model}: page shows {got[model]}, core computes {cosine}"

    # The CSV download carries the same number at full precision.
    csv = E.download_csv(page, page.locator(".st-key-dl-csv-compare-table button"))
    for model, cosine in want.items():
        row = csv[csv["model id"] == model]
        assert len(row) == 1, f"CSV rows for {model}: {len(row)}"
        assert float(row["cosine"].iloc[0]) == pytest.approx(cosine, abs=1e-4)


def test_compare_text_and_result_survive_page_switch(page):
    """Typed text and the scored result are still there after visiting another page."""
    text_a = "Shipments leave the warehouse every Monday"
    E.goto(page, f"{page.base}/compare")
    _type_into(page, "Sentence A", text_a)
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    expect(page.locator(E.MAIN).get_by_text(f"A: {text_a}")).to_be_visible()
    nav = page.locator('[data-testid="stSidebarNav"] a')
    E.act(page, lambda: nav.filter(has_text="Your data").click())
    expect(page.locator(f"{E.MAIN} h1")).to_contain_text("Your data")
    E.act(page, lambda: nav.filter(has_text="Compare").click())
    expect(page.get_by_label("Sentence A", exact=True)).to_have_value(text_a)
    expect(page.locator(E.MAIN).get_by_text(f"A: {text_a}")).to_be_visible()
    expect(page.get_by_text("The boxes changed since this pair was scored")).to_have_count(0)
    E.assert_no_errors(page)


def test_an_example_pill_reruns_only_the_pair_area_and_shows_its_cosine(page, core_scores):
    """An example pill fills both boxes and scores the pair by rerunning the pair's fragment alone: the
    server reports a fragment run, and draws nothing in the sidebar (a full rerun redraws it, as the first visit shows)."""
    frames = E.record_script_runs(page)
    E.goto(page, f"{page.base}/compare")
    first_visit = E.runs_seen(frames)
    assert "FINISHED_SUCCESSFULLY" in first_visit[0] and "SIDEBAR" in first_visit[1], first_visit  # the reading works
    box_a, box_b = page.get_by_label("Sentence A", exact=True), page.get_by_label("Sentence B", exact=True)
    before = (box_a.input_value(), box_b.input_value())
    pill = page.locator(f'{E.MAIN} [data-testid="stButtonGroup"] button', has_text="Negation 2")
    seen = len(frames)
    E.act(page, pill.click)
    E.assert_no_errors(page)
    ended, drawn = E.runs_seen(frames[seen:])
    assert ended == ["FINISHED_FRAGMENT_RUN_SUCCESSFULLY"], f"the pill's runs ended as {ended}: a full-page rerun"
    assert drawn == {"MAIN"}, f"the pill's run drew in {drawn}"
    text_a, text_b = box_a.input_value(), box_b.input_value()
    assert (text_a, text_b) != before, "the boxes did not take the example's text"
    expect(page.locator(E.MAIN).get_by_text(f"A: {text_a}")).to_be_visible()
    expect(page.get_by_text("The boxes changed since this pair was scored")).to_have_count(0)
    want = float(core_scores(pd.DataFrame({"text_a": [text_a], "text_b": [text_b]}))["cosine"].iloc[0])
    # The grid draws its new rows a moment after the run's text (its data is decoded apart): read it until it shows
    # the pair's cosine, for at most 5 s; a grid still showing the old pair's then fails.
    for _ in range(20):
        shown = E.to_float(E.read_dataframe(_after_heading(page, "Cosine per model"))["cosine"].iloc[0])
        if shown == pytest.approx(want, abs=1e-3):
            break
        page.wait_for_timeout(250)
    assert shown == pytest.approx(want, abs=1e-3), (shown, want)


# --------------------------------------------------------------- failure modes


def _failure_rates(page, model_col: str) -> dict[str, float]:
    grid = _after_heading(page, "Failure rate at threshold")
    frame = E.read_dataframe(grid)
    assert {"failure mode", model_col} <= set(frame.columns), f"failure-rate table columns: {list(frame.columns)}"
    # The page shows labels, never codes; the grid's accessible table holds values, not their display format: 0.96 for "96%".
    code = {label: cat for cat, label in lexicon.CATEGORY_LABELS.items()}
    return {code[row["failure mode"]]: E.to_float(row[model_col]) for _, row in frame.iterrows()}


def test_failure_modes_table_follows_threshold(page, core_scores):
    """Run the suite; the failure-rate table matches core and moves with the sidebar threshold."""
    model_col = registry.short_name(E.TEST_MODEL)
    E.goto(page, f"{page.base}/failure-modes")
    E.act(page, lambda: page.get_by_role("button", name="Run failure-mode suite").click())
    E.assert_no_errors(page)
    expect(page.locator(E.MAIN).get_by_text("Results for 1 model(s)")).to_be_visible()

    suite = suites.load_suite(constants.SUITE_FAILURE_MODES)
    results = core_scores(suite[suite[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES)])

    def expected(threshold: float) -> dict[str, float]:
        return {
            cat: stats.failure_rate(g[constants.COL_COSINE].to_numpy(float), threshold)
            for cat, g in results.groupby(constants.COL_CATEGORY)
        }

    seen = {}
    for key, threshold in (("start", constants.DEFAULT_THRESHOLD), ("End", 1.0), ("Home", 0.0)):
        if key != "start":
            value = _set_threshold(page, key)
            assert value == pytest.approx(threshold), f"slider shows {value} after pressing {key}"
        expect(page.locator(E.MAIN).get_by_role("heading", name=f"Failure rate at threshold {threshold:.2f}")).to_be_visible()
        E.assert_no_errors(page)
        seen[threshold] = rates = _failure_rates(page, model_col)
        want = expected(threshold)
        assert set(rates) == set(want), f"failure modes shown {sorted(rates)} != {sorted(want)}"
        for cat, rate in rates.items():
            assert rate == pytest.approx(want[cat], abs=1e-3), f"threshold {threshold}: {cat} shows {rate:.4f}, core {want[cat]:.4f}"
        E.screenshot(page, f"failure-modes-threshold-{threshold:.2f}")

    low, mid, high = seen[0.0], seen[constants.DEFAULT_THRESHOLD], seen[1.0]
    assert low != mid != high, "moving the threshold did not change the failure-rate table"
    assert all(low[c] >= mid[c] >= high[c] for c in mid), f"rates not monotone in threshold: {low} / {mid} / {high}"


# ------------------------------------------------------------------- your data

YOUR_PAIRS = [
    ("The patient has diabetes", "The patient does not have diabetes", "negation"),
    ("Take 5 mg twice a day", "Take 50 mg twice a day", "numerical"),
    ("The meeting moved to Friday", "The meeting was rescheduled for Friday", "positive"),
    ("The cat sat on the mat", "Quarterly revenue rose by four percent", "negative"),
]


def test_your_data_upload_and_run(page, tmp_path, core_scores):
    """Upload a TSV through the real file input, run, and see core's cosines per pair."""
    path = tmp_path / "my pairs.tsv"
    path.write_text("text_a\ttext_b\tcategory\n" + "".join(f"{a}\t{b}\t{c}\n" for a, b, c in YOUR_PAIRS), encoding="utf-8")
    E.goto(page, f"{page.base}/your-data")
    E.upload(page, str(path))
    E.assert_no_errors(page)
    expect(page.locator(E.MAIN).get_by_text("my pairs.tsv · 4 rows")).to_be_visible()
    # The column mapping is guessed from the header row.
    for label, column in (("Text A column", "text_a"), ("Text B column", "text_b"), ("Category column (optional)", "category")):
        expect(page.get_by_role("combobox", name=label)).to_have_value(column)

    E.act(page, lambda: page.get_by_role("button", name="Run on selected models").click())
    E.assert_no_errors(page)
    expect(page.locator(E.MAIN).get_by_role("heading", name="Per-pair results")).to_be_visible()

    expected = core_scores(pd.DataFrame(YOUR_PAIRS, columns=["text_a", "text_b", "category"]))
    want = {(r.text_a, r.text_b): float(r.cosine) for r in expected.itertuples()}
    shown = E.read_dataframe(_after_heading(page, "Per-pair results"))
    assert {"text A", "text B", "cosine"} <= set(shown.columns), f"results table columns: {list(shown.columns)}"
    got = {(r["text A"], r["text B"]): E.to_float(r["cosine"]) for _, r in shown.iterrows()}
    assert set(got) == set(want), f"pairs shown {sorted(got)} != uploaded {sorted(want)}"
    for pair, cosine in want.items():
        assert got[pair] == pytest.approx(cosine, abs=1e-3), f"{pair}: page {got[pair]}, core {cosine}"
    # Categories unlock the summaries.
    expect(page.locator(E.MAIN).get_by_role("heading", name="Category summary")).to_be_visible()
    expect(page.locator(E.MAIN).get_by_role("heading", name="Dynamic range")).to_be_visible()


# ------------------------------------------------- generators and calibrated thresholds


def _core_thresholds(core_scores) -> float:
    from core.probes.calibration import calibrate, thresholds_by_model

    return thresholds_by_model(calibrate(core_scores(control_pairs())))[E.TEST_MODEL]


def test_perturb_scores_each_variant_and_switches_to_calibrated(page, core_scores):
    """Type a sentence, score its variants; the calibrated marker moves the verdict threshold to the model's own."""
    from core.probes.perturb import perturb

    text = "Google acquired YouTube"
    E.goto(page, f"{page.base}/perturb")
    _type_into(page, "Sentence", text)
    E.act(page, lambda: page.get_by_role("button", name="Score variants").click())
    expect(page.locator(E.MAIN).get_by_text(f"Scored sentence: {text}")).to_be_visible()
    E.assert_no_errors(page)
    want = core_scores(perturb(text).to_frame())
    shown = E.read_dataframe(_after_heading(page, "Scores"))
    got = {r["variant"]: E.to_float(r["cosine"]) for _, r in shown.iterrows()}
    assert set(got) == set(want[constants.COL_TEXT_B]), f"variants shown {sorted(got)}"
    for variant, cosine in zip(want[constants.COL_TEXT_B], want[constants.COL_COSINE], strict=True):
        assert got[variant] == pytest.approx(float(cosine), abs=1e-3)
    assert [E.to_float(t) for t in shown["threshold"]] == pytest.approx([0.7] * len(shown))
    E.screenshot(page, "readme-perturbations")

    # One click: choosing the calibrated marker calibrates (no second button to find).
    E.act(page, lambda: page.get_by_text("each model's calibrated threshold").click())
    expect(page.get_by_text("Each model's own threshold comes from the control pairs")).to_have_count(0)
    E.assert_no_errors(page)
    own = _core_thresholds(core_scores)
    shown = E.read_dataframe(_after_heading(page, "Scores"))
    assert {round(E.to_float(t), 3) for t in shown["threshold"]} == {round(own, 3)}
    for _, row in shown.iterrows():
        assert row["verdict"] == ("above threshold" if E.to_float(row["cosine"]) > own else "below threshold")


def test_invented_words_run_with_k_per_entity(page, core_scores):
    """Words appear as the page opens; the k-per-entity OOV run shows plausible vs random as core computes it."""
    from core.models.loading import load_tokenizer
    from core.probes.invented import oov_replacements, oov_replicate_summary

    E.goto(page, f"{page.base}/invented-words")
    words = E.read_dataframe(_after_heading(page, "Generate words"))
    assert len(words) == 16 and {"word", "pieces"} <= set(words.columns)
    E.act(page, lambda: page.get_by_role("button", name="Run OOV with invented words").click())
    expect(page.locator(E.MAIN).get_by_text(f"20 entities × k = {constants.OOV_REPLICATES}")).to_be_visible()
    E.assert_no_errors(page)
    # The page opens on the OOV pages' one default reading (second sentence only)
    pairs = oov_replacements(
        suites.read_suite_file(constants.SUITE_OOV),
        load_tokenizer(E.TEST_MODEL),
        constants.OOV_REPLICATES,
        readings=[constants.OOV_DEFAULT_READING],
    )
    want = oov_replicate_summary(core_scores(pairs))["plausible_vs_random"].iloc[0]
    shown = E.read_dataframe(_after_heading(page, "Plausible vs random")).iloc[0]
    assert E.to_float(shown["difference"]) == pytest.approx(float(want["difference"]), abs=1e-3)
    E.screenshot(page, "readme-invented-words")


def test_failure_modes_calibrated_thresholds(page, core_scores):
    """The failure-modes page shows each model's calibrated threshold next to the global one."""
    E.goto(page, f"{page.base}/failure-modes")
    E.act(page, lambda: page.get_by_role("button", name="Run failure-mode suite").click())
    expect(page.locator(E.MAIN).get_by_text("Results for 1 model(s)")).to_be_visible()
    E.assert_no_errors(page)
    # The page is in tabs; a tab click reruns the page (it keeps the tab chosen), so wait for that run.
    E.act(page, lambda: page.get_by_role("tab", name="Each model's own threshold").click())
    shown = E.read_dataframe(_after_heading(page, "Each model's own threshold")).iloc[0]
    assert E.to_float(shown["youden threshold"]) == pytest.approx(_core_thresholds(core_scores), abs=1e-3)
    E.element_screenshot(page, page.locator('[role="tabpanel"]:visible').first, "readme-calibrated-thresholds")
