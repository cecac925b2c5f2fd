"""Shared browser fixtures: one Chromium per module and one default ``streamlit run`` server for the whole e2e session.

A module that needs a server with its own environment (a history file, a
temporary HF_HOME) defines its own ``server`` fixture with
:func:`e2e_support.running_server`; ``page`` then uses that one, because
pytest resolves a fixture from the requesting module first.
"""

from __future__ import annotations

import e2e_support as E
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item, so ``page`` can name a failed test's screenshot."""
    report = yield
    setattr(item, f"e2e_rep_{report.when}", report)
    return report


# Module scope, not session: Playwright's sync API allows one instance per thread at a time, and
# some modules (the concurrency test, the tour) drive their own.
@pytest.fixture(scope="module")
def browser():
    if E.chromium_available():
        pytest.skip(E.chromium_available())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=E.CHROMIUM, headless=True, args=E.CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The app with MiniLM as the default model and a fresh cache, shared by every e2e module that needs nothing else."""
    with E.running_server(tmp_path_factory.mktemp("e2e")) as srv:
        yield srv


@pytest.fixture
def page(request, browser, server):
    """A fresh browser context on ``server``; a screenshot of what the test saw is kept.

    A failed test gets the full page (-FAILED, viewport grown, charts drawn: 1-6 s on a page of charts);
    a passed one the screen as it left it (a fraction of a second), since the shots a test wants are its own.
    """
    context = browser.new_context(viewport=E.VIEWPORT, accept_downloads=True)
    context.set_default_timeout(60_000)
    context.add_init_script(E.INIT_SCRIPT)
    pg = context.new_page()
    pg.base = server.url
    yield pg
    report = getattr(request.node, "e2e_rep_call", None)
    failed = report is not None and report.failed
    try:
        if failed:
            E.screenshot(pg, request.node.name + "-FAILED")
        else:
            E.viewport_screenshot(pg, request.node.name)
    finally:
        context.close()
    if failed:
        print(f"--- streamlit log (tail) ---\n{server.log_tail()}")
