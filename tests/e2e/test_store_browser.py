"""End-to-end: "Connect a store" on the Your corpus page in headless Chromium against ``streamlit run``.

A LanceDB folder holds the first 120 passages of the shipped corpus
(data/corpora/wordnet-adjectives.csv) with MiniLM-L6's vectors; the user
opens the block, types the folder and the table, audits the store and reads
the model check and the exact-vs-store table.  The app opens stores only where
its operator allows (``$COSINE_PROBE_STORES``), so this module's server allows
one folder and the store is built in it.  Screenshot:
tests/screenshots/store-your-corpus-lancedb.png.

Run: ``.venv/bin/python -m pytest tests/e2e/test_store_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest
from store_support import build_lance, stored  # noqa: F401 - stored is a fixture

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

from core.stores.access import STORES_ENV  # noqa: E402 - after the skip check


@pytest.fixture(scope="module")
def stores_folder(tmp_path_factory):
    """The one folder this module's server lets visitors open stores in."""
    return tmp_path_factory.mktemp("allowed-stores")


@pytest.fixture(scope="module")
def server(tmp_path_factory, stores_folder):
    with E.running_server(tmp_path_factory.mktemp("store-server"), {STORES_ENV: str(stores_folder)}) as srv:
        yield srv


def test_connect_a_lancedb_folder_and_see_exact_vs_store(page, server, stores_folder, stored):  # noqa: F811 - the fixture
    texts, vectors = stored
    folder = stores_folder / "kb.lance"
    build_lance(folder, texts, vectors)
    E.goto(page, f"{server.url}/your-corpus")
    E.assert_page_opened(page, "your-corpus")
    main = page.locator(E.MAIN)
    E.act(page, lambda: main.get_by_text("Connect a store", exact=True).click(), expect_rerun=False)
    E.act(page, lambda: (main.get_by_label("Folder").fill(str(folder)), main.get_by_label("Folder").press("Enter")))
    E.act(page, lambda: (main.get_by_label("Table").fill("passages"), main.get_by_label("Table").press("Enter")))
    E.act(page, lambda: main.get_by_role("button", name="Audit the store", exact=True).click())
    E.assert_no_errors(page)
    expect(main.get_by_text("Model check: MiniLM-L6 re-encoded 20 of 120 stored passages", exact=False)).to_be_visible()
    expect(main.get_by_text("LanceDB flat scan (exact), cosine distance", exact=False)).to_be_visible()
    pairs, shares = "twin pairs: exact → store", "share of passages with a twin: exact → store"
    grid = main.locator("[data-testid='stDataFrame']").filter(has_text=pairs).first
    table = E.read_dataframe(grid)
    assert {pairs, shares} <= set(table.columns), list(table.columns)
    exact, store = table[pairs].str.split(" → ").str[0], table[pairs].str.split(" → ").str[1]
    assert (exact == store).all()  # a flat scan is exact search
    assert exact.str.replace(",", "").astype(int).max() > 0  # the slice holds twins to compare
    assert not [c for c in table.columns if c.startswith("queries")]  # no query given: no empty query columns
    E.screenshot(page, "store-your-corpus-lancedb")
