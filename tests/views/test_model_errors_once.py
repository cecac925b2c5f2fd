"""A model that cannot load gets one error box per page, not one per section (AppTest, hub refused).

Compare draws the model in four places (the scores, the tokens, "Why this score" and
the heatmap) and Invented words loads its tokenizer before anything else; each page
must say once what failed and what to do.
"""

from __future__ import annotations

from apptest_support import MINILM, open_page

from ui.state import ERROR_HELP

MISSING = "intfloat/e5-small-v2"  # a real hub id, neither bundled nor in the test's Hugging Face cache


def _add_missing(app) -> None:
    app.text_input(key="custom_model_input").input(MISSING)
    next(b for b in app.button if b.label == "Add model").click()
    app.run()
    assert not app.exception
    assert MISSING in app.session_state["selected_models"]


def _errors_naming(app, text: str) -> list[str]:
    return [e.value for e in app.error if text in e.value.replace("\\", "")]


def test_compare_says_once_that_a_model_failed_in_every_section():
    app = open_page("views/compare.py", timeout=300)
    _add_missing(app)
    app.toggle(key="why_on").set_value(True).run()
    app.button(key="cmp_compare").click().run()
    app.button(key="cmp_build_heatmap").click().run()
    assert not app.exception
    errors = _errors_naming(app, "e5-small-v2")
    assert len(errors) == 1, errors
    assert ERROR_HELP.split(":")[0] in errors[0]
    # The other models still scored: MiniLM's row and its explanation are there, the failed model has neither.
    why = [e.label.replace("\\", "") for e in app.expander if e.label.startswith("Why this score")]
    assert "Why this score: MiniLM-L6" in why and not any("e5" in label for label in why)
    assert any(MINILM in set(d.value.get("model id", [])) for d in app.dataframe)


def test_invented_words_says_once_that_a_tokenizer_failed():
    app = open_page("views/invented.py", timeout=300)
    _add_missing(app)
    assert not app.exception
    errors = _errors_naming(app, "e5-small-v2")
    assert len(errors) == 1, errors
    assert ERROR_HELP.split(":")[0] in errors[0]
    assert len(app.table) + len(app.dataframe) > 0  # the page goes on with MiniLM's tokenizer
