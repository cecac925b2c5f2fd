"""End-to-end: a visitor's endpoint stays the visitor's in every rerun of their session, fragments included.

The app runs with the operator's own endpoint in its environment
(``OPENAI_BASE_URL`` pointing at a logging server, a canary
``OPENAI_API_KEY``), no allowlist, and the visitor's model name as the
sidebar's default model: before the visitor adds it, it is refused in the
session (nothing is sent anywhere).  A visitor adds their own endpoint in
Chromium, typing its key.  Compare's example pills, its Compare button and
"Calibrate on the control pairs" rerun the pair's fragment alone, without the
sidebar: every text they score must go to the visitor's server with the
visitor's key, and no request at all may reach the operator's server.

A person types the key and presses Tab before clicking "Add endpoint": the
key must be the one added.

Run: ``.venv/bin/python -m pytest tests/e2e/test_endpoint_fragments_browser.py -q``
"""

from __future__ import annotations

import e2e_support as E
import pytest
from endpoint_support import hashed_vectors_reply, scripted_server

pytestmark = pytest.mark.browser

SKIP_REASON = E.chromium_available()
if SKIP_REASON:
    pytest.skip(SKIP_REASON, allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 - after the skip check

OPERATOR_KEY = "sk-operator-canary-2b8f6d1e4a9c"
VISITOR_KEY = "sk-visitor-canary-5c9a3e7f1b0d"
VISITOR_MODEL = "visitor-model"
NAME = f"openai:{VISITOR_MODEL}"
PILLS = ("Negation 2", "Numerical 1", "Entity/role swap 1")  # none is the default pair: each sends new texts
FRAGMENT_RUN = "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"


@pytest.fixture(scope="module")
def operator():
    """The operator's endpoint, named by the server's $OPENAI_BASE_URL; it would answer for the visitor's model name too."""
    with scripted_server(model=VISITOR_MODEL, embeddings=hashed_vectors_reply) as srv:
        yield srv


@pytest.fixture(scope="module")
def visitor():
    with scripted_server(model=VISITOR_MODEL, embeddings=hashed_vectors_reply) as srv:
        yield srv


@pytest.fixture(scope="module")
def server(tmp_path_factory, operator):
    # The visitor's model name is the only default model: no local weights to load, and a name the environment could serve.
    env = {"OPENAI_BASE_URL": operator.base_url, "OPENAI_API_KEY": OPERATOR_KEY, "COSINE_PROBE_DEFAULT_MODELS": NAME}
    with E.running_server(tmp_path_factory.mktemp("endpoint-fragments"), env, drop=("COSINE_PROBE_ENDPOINTS",)) as srv:
        yield srv


def _form(page):
    title = page.get_by_text("Add an endpoint", exact=True)  # the Availability list names it too, in its refusal
    form = page.locator('[data-testid="stExpander"]').filter(has=title)
    if not form.get_by_label("Base URL", exact=True).is_visible():
        E.act(page, title.click, expect_rerun=False)
    return form


def _add_typing_the_key_then_tab(page, base_url: str, model: str, key: str):
    """Fill the form as a person does: click a box and type; after the key, press Tab; then click "Add endpoint"."""
    form = _form(page)
    for label, text in (("Base URL", base_url), ("Model name", model), ("API key (optional)", key)):
        form.get_by_label(label, exact=True).click()
        page.keyboard.type(text)
        E.wait_idle(page)
    page.keyboard.press("Tab")
    E.wait_idle(page)
    E.act(page, lambda: form.get_by_role("button", name="Add endpoint").click())
    return form


def _visitor_requests_grew(page, visitor, before: int, what: str) -> int:
    """The visitor's server got new texts from ``what``; the count after."""
    E.assert_no_errors(page)
    assert visitor.posts() > before, f"{what} sent the visitor's server nothing: nothing was tested"
    return visitor.posts()


def _open_compare(page, server, operator) -> None:
    """Compare's first view: the default model, the visitor's name, is not set up in this new session and is refused."""
    E.goto(page, f"{server.url}/compare")
    errors = E.error_texts(page, E.ERROR_ALERT)
    assert any(f"{NAME} is not set up in this session" in e for e in errors), errors
    assert operator.requests == []


def test_a_typed_key_followed_by_tab_is_the_key_added(page, server, operator, visitor):
    """A key typed in its box and left with Tab (focus then sits on the box's own show-password toggle) is the one added."""
    _open_compare(page, server, operator)
    before = len(visitor.auth)
    form = _add_typing_the_key_then_tab(page, visitor.base_url, VISITOR_MODEL, VISITOR_KEY)
    expect(form.get_by_text(f"Added {NAME}")).to_be_visible()
    assert "(key typed in this session)" in form.inner_text(), form.inner_text()[-300:]
    assert form.get_by_label("API key (optional)", exact=True).input_value() == ""  # the box is emptied once added
    # It was selected (the default) while refused; now usable, it stays selected under its own name.
    picker = page.locator(f'{E.SIDEBAR} [data-testid="stMultiSelect"]')
    expect(picker).to_contain_text(NAME)
    assert "⛔" not in picker.inner_text() and "unavailable" not in picker.inner_text()
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    E.assert_no_errors(page)
    assert visitor.posts() >= 1 and set(visitor.auth[before:]) == {f"Bearer {VISITOR_KEY}"}
    assert not operator.requests and OPERATOR_KEY not in "".join(visitor.auth)


def test_pills_compare_and_calibrate_rerun_the_fragment_with_the_visitors_endpoint_only(page, server, operator, visitor):
    frames = E.record_script_runs(page)
    _open_compare(page, server, operator)
    before_auth = len(visitor.auth)
    _add_typing_the_key_then_tab(page, visitor.base_url, VISITOR_MODEL, VISITOR_KEY)
    posts = visitor.posts()

    for label in PILLS:
        pill = page.locator(f'{E.MAIN} [data-testid="stButtonGroup"] button', has_text=label)
        seen = len(frames)
        E.act(page, pill.click)
        assert E.runs_seen(frames[seen:])[0] == [FRAGMENT_RUN], f"the pill {label} did not rerun the fragment alone"
        posts = _visitor_requests_grew(page, visitor, posts, f"the pill {label}")
        expect(page.locator(E.MAIN).get_by_text(f"A: {page.get_by_label('Sentence A', exact=True).input_value()}")).to_be_visible()

    box = page.get_by_label("Sentence A", exact=True)
    box.fill("A visitor's own sentence, sent to the visitor's own server")
    seen = len(frames)
    E.act(page, lambda: page.get_by_role("button", name="Compare", exact=True).click())
    assert FRAGMENT_RUN in E.runs_seen(frames[seen:])[0], "Compare did not rerun the fragment"
    posts = _visitor_requests_grew(page, visitor, posts, "the Compare button")

    # Choosing calibrated thresholds calibrates on that click (the controls were missing): a fragment run too.
    seen = len(frames)
    E.act(page, lambda: page.locator(E.MAIN).get_by_text("each model's calibrated threshold").click())
    assert E.runs_seen(frames[seen:])[0] == [FRAGMENT_RUN], "calibrating did not rerun the fragment alone"
    _visitor_requests_grew(page, visitor, posts, "calibrating on the control pairs")
    expect(page.get_by_text("Each model's own threshold comes from the control pairs")).to_have_count(0)
    shown = page.locator(E.APP).inner_text()
    assert "not set up in this session" not in shown and "cannot reach" not in shown

    assert operator.requests == [], f"the operator's server was asked {operator.requests[:5]}"
    assert set(visitor.auth[before_auth:]) == {f"Bearer {VISITOR_KEY}"}
    assert OPERATOR_KEY not in shown and VISITOR_KEY not in shown
    E.screenshot(page, "endpoint-fragments-calibrated")
