"""The one page list (ui/pages.py): a common test over every page record, as scikit-learn's common estimator tests.

Each record has a title, an icon, a unique URL and a module that exists; the router registers it; its module runs
under AppTest from the router without an exception; Home links it with the record's words. A new page is one record
and these checks cover it with no new test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest_support import APP
from streamlit.testing.v1 import AppTest

from ui.pages import PAGES, PageRecord, linked_pages
from ui.state import KEY_MODELS

ROOT = Path(APP).parent


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    # No model picked: each page draws what it draws before scoring, so the check costs no model load (the pages'
    # own tests score with MiniLM).
    at.multiselect(key=KEY_MODELS).set_value([]).run()
    assert not at.exception
    return at


def test_records_are_complete_and_unique():
    assert len({p.path for p in PAGES}) == len({p.url_path for p in PAGES}) == len({p.title for p in PAGES}) == len(PAGES)
    assert [p.is_home for p in PAGES] == [True] + [False] * (len(PAGES) - 1), "Home is the one default page, first"
    for page in PAGES:
        assert page.title.strip() and page.icon.strip() and page.heading.strip(), page
        assert (ROOT / page.path).is_file() and page.path.startswith("views/"), page
        assert page.is_home or (page.blurb.strip() and page.url_path == page.url_path.strip().lower()), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.url_path or "home")
def test_each_page_runs_from_the_router(app: AppTest, page: PageRecord):
    app.switch_page(page.path).run()
    assert not app.exception, [e.value for e in app.exception]
    headings = [node.value for node in app.title] + [node.value for node in app.header]
    assert any(page.heading.lower() in h.lower() for h in headings), (page.path, headings)


def test_home_links_every_page_with_its_record(app: AppTest):
    app.switch_page("views/home.py").run()
    links = {link.proto.page: (link.proto.label, link.proto.icon) for link in app.get("page_link")}
    assert links == {p.url_path: (p.blurb, p.icon) for p in linked_pages()}


def _code_of(page: PageRecord) -> str:
    """A page's view and the ``ui`` packages it imports by name (``from ui.retrieval import ...``): where its runs are recorded."""
    view = (ROOT / page.path).read_text(encoding="utf-8")
    packages = {ROOT / "ui" / name for name in re.findall(r"^from ui\.(\w+)", view, flags=re.MULTILINE)}
    return view + "".join(p.read_text(encoding="utf-8") for folder in packages if folder.is_dir() for p in sorted(folder.glob("*.py")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.url_path or "home")
def test_a_page_says_it_records_history_exactly_when_it_does(page: PageRecord):
    """The History page names the pages whose runs it lists from this flag: a page that records and is not flagged goes unnamed."""
    records = re.search(r"\bhistory\.record\w*\(", _code_of(page)) is not None
    assert page.records_history == records, (page.path, "calls history.record" if records else "never calls history.record")
