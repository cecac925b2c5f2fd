"""End-to-end: the papers' models from a user's Hugging Face cache, in the real app.

Tiny stand-ins are installed under BGE-large's and mxbai-large's ids in a
temporary ``HF_HOME`` (tests/hub_cache_support.py), and ``streamlit run`` is
started with that ``HF_HOME`` and a hub endpoint that refuses connections.
In headless Chromium the sidebar must show the stand-ins as "cached", a user
must be able to pick one in the model picker, and Compare must score with
them: the cosines shown are the ones computed here by hand from each
stand-in's CLS hidden state.

Run: ``.venv/bin/python -m pytest tests/e2e/test_models_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest
from hub_cache_support import UNREACHABLE_HUB, StandIn, build_standin, hand_vectors, install

from core.models.registry import BGE_LARGE, MXBAI, REGISTRY, short_name

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

# Compare's default pair (views/compare.py), scored on the first run of the page.
A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
SPECS = (StandIn(BGE_LARGE, pooling="cls", seed=11), StandIn(MXBAI, pooling="cls", normalize=False, seed=12))


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    """The stand-ins, installed at their pinned revisions in a fresh HF_HOME; name -> snapshot folder."""
    root = tmp_path_factory.mktemp("models-e2e")
    hub = root / "hf-home" / "hub"
    found = {
        spec.repo_id: install(
            hub, spec.repo_id, build_standin(spec, root / spec.repo_id.replace("/", "--")), REGISTRY[spec.repo_id].revision
        )
        for spec in SPECS
    }
    return root / "hf-home", found


@pytest.fixture(scope="module")
def server(snapshots, tmp_path_factory):
    home, _ = snapshots
    env = {"HF_HOME": str(home), "HF_ENDPOINT": UNREACHABLE_HUB, "COSINE_PROBE_DEFAULT_MODELS": BGE_LARGE}
    with E.running_server(
        tmp_path_factory.mktemp("models-e2e-server"), env, drop=("HF_HUB_OFFLINE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")
    ) as srv:
        yield srv


def _compare_cosines(page) -> dict[str, float]:
    heading = page.locator(f"{E.MAIN} :is(h1, h2, h3)", has_text="Cosine per model").first
    expect(heading).to_be_visible()
    frame = E.read_dataframe(heading.locator("xpath=following::*[@data-testid='stDataFrame'][1]"))
    return {row["model"]: E.to_float(row["cosine"]) for _, row in frame.iterrows()}


def _hand_cosine(snapshot) -> float:
    cls = hand_vectors(snapshot, [A, B], 512)["cls"]
    return float(cls[0] @ cls[1])


def test_sidebar_shows_cached_standins_and_compare_scores_with_them(page, server, snapshots):
    _, found = snapshots
    E.goto(page, f"{server.url}/compare")
    E.assert_no_errors(page)
    sidebar = page.locator(E.SIDEBAR)

    # The default model is the BGE stand-in: the availability list calls it cached, at the pinned snapshot.
    sidebar.locator('[data-testid="stExpander"] summary', has_text="Availability").click()
    expect(sidebar.get_by_text(f"{short_name(BGE_LARGE)} — cached")).to_be_visible()
    expect(sidebar.get_by_text(f"snapshot {REGISTRY[BGE_LARGE].revision[:12]}")).to_be_visible()
    assert _compare_cosines(page) == pytest.approx({short_name(BGE_LARGE): _hand_cosine(found[BGE_LARGE])}, abs=1e-4)

    # Pick mxbai-large in the model picker, as a user would: Compare scores both again.
    picker = sidebar.locator('[data-testid="stMultiSelect"]').first
    picker.locator("input").click()
    picker.locator("input").fill(short_name(MXBAI))
    E.act(page, lambda: page.keyboard.press("Enter"))
    page.keyboard.press("Escape")
    E.wait_idle(page)
    E.assert_no_errors(page)
    expect(sidebar.get_by_text(f"{short_name(MXBAI)} — cached")).to_be_visible()
    want = {short_name(name): _hand_cosine(snapshot) for name, snapshot in found.items()}
    assert _compare_cosines(page) == pytest.approx(want, abs=1e-4)

    # Where each stand-in departs from its registry record, the page says so, and where it encoded.
    main = page.locator(E.MAIN)
    # The notes sit in one collapsed line under the results, which names the device: open it.
    notes = main.get_by_text("Encoded on cpu · ").first
    expect(notes).to_be_visible()
    E.act(page, lambda: notes.click())
    for name in found:
        expect(main.get_by_text(f"{name}: the loaded model's embeddings have 32 dimensions, the registry says 1024")).to_be_visible()
