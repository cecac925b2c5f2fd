"""Typed text: whatever is typed on the Compare page or given to the CLI.

Every case checks the specific message, that the boxes still hold what was
typed, and that the results from before a refused input are still shown.
Real MiniLM throughout; expected values come from ``core`` on the same text.
User text must never reach an element that renders Markdown or HTML
unescaped (``markup_guard.assert_never_rendered``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from apptest_support import compare_table, expected_cosine, minilm_row, open_page
from markup_guard import assert_never_rendered
from streamlit.testing.v1 import AppTest

from core.cli import main as cli_main
from core.models.bounds import model_inputs
from core.models.loading import load_model
from core.models.registry import MINILM_L6, short_name
from core.models.tokens import token_counts, tokenize
from ui.widgets import md_escape

KEY_A, KEY_B, KEY_HEAT = "cmp_text_a", "cmp_text_b", "cmp_heat_text"

LONG_TEXT = ("The patient is allergic to penicillin and was given a different antibiotic instead. " * 300)[:20_000]
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MARKDOWN = "**bold** # heading [link](http://x)"
MORE_MARKUP = "<b>bold</b> _under_ `code` $x^2$ :red[red] :smile: > quote"


# ------------------------------------------------------------------ helpers


def scored_text(at: AppTest) -> str:
    """The 'A: …\\nB: …' plain-text echo of the pair the table shows."""
    texts = [t.value for t in at.text if t.value.startswith("A: ")]
    assert len(texts) == 1
    return texts[0]


def type_and_compare(at: AppTest, a: str, b: str) -> None:
    at.text_area(key=KEY_A).input(a)
    at.text_area(key=KEY_B).input(b)
    at.button(key="cmp_compare").click().run()
    assert not at.exception, at.exception


def values(elements) -> list[str]:
    return [e.value for e in elements]


@pytest.fixture(scope="module")
def at() -> AppTest:
    return open_page("views/compare.py")


@pytest.fixture
def scored(at):
    """A fresh, ordinary pair scored, so each test starts from known results."""
    a, b = "The cat sat on the mat", "A feline rested on the rug"
    type_and_compare(at, a, b)
    assert scored_text(at) == f"A: {a}\nB: {b}"
    return at


# ---------------------------------------------------------- refused inputs

REFUSED = {
    "both empty": ("", "", ["Sentence A is empty: type a sentence to compare.", "Sentence B is empty: type a sentence to compare."]),
    "whitespace only": ("   \t  ", "A sentence", ["Sentence A holds only whitespace: type a sentence to compare."]),
    "one side empty": ("A sentence", "", ["Sentence B is empty: type a sentence to compare."]),
    "only newlines": ("A sentence", "\n\n\n", ["Sentence B holds only line breaks: type a sentence to compare."]),
    "only zero-width": (
        "\u200b\u200b",
        "A sentence",
        ["Sentence A holds only invisible characters (U+200B ZERO WIDTH SPACE), nothing a model could read: type a sentence to compare."],
    ),
    "only control characters": (
        "A sentence",
        "\x00\x1b \x07",
        ["Sentence B holds only invisible characters (U+0000, U+001B, U+0007), nothing a model could read: type a sentence to compare."],
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_input_says_why_keeps_text_and_earlier_results(scored, case):
    at = scored
    a, b, messages = REFUSED[case]
    before = compare_table(at).copy()
    echo = scored_text(at)

    type_and_compare(at, a, b)

    assert values(at.warning) == messages
    assert at.text_area(key=KEY_A).value == a
    assert at.text_area(key=KEY_B).value == b
    after = compare_table(at)
    np.testing.assert_allclose(after["cosine"], before["cosine"])
    assert scored_text(at) == echo  # the earlier pair is still what the table shows
    assert any("press Compare to score what you typed" in i.value for i in at.info)


# ------------------------------------------------------------- long input


def test_twenty_thousand_characters_run_with_truncation_and_token_counts(scored):
    at = scored
    b = "The patient has a penicillin allergy"
    minilm = load_model(MINILM_L6)
    limit = minilm.max_seq_length
    full = token_counts(minilm.tokenizer, [LONG_TEXT])[0]
    # The text is cut before tokenizing (core.models.bounds): the count shown is that of the part the model can use,
    # a lower bound of the whole text's count and already above the limit.
    n_tokens = model_inputs(minilm.tokenizer, [LONG_TEXT], limit)[0].n_tokens
    assert len(LONG_TEXT) == 20_000 and limit < n_tokens < full

    type_and_compare(at, LONG_TEXT, b)

    row = minilm_row(at)
    assert row["tokens A"] == n_tokens and bool(row["truncated"])
    assert row["cosine"] == pytest.approx(expected_cosine(LONG_TEXT, b), abs=1e-4)
    cut = [w.value for w in at.warning if w.icon == "✂️"]
    assert cut == [
        f"{md_escape(short_name(MINILM_L6))}: Sentence A is {n_tokens} tokens but the model keeps {limit}; "
        "every token past that was cut before encoding and does not affect the cosine."
    ]
    assert any(v.startswith("Sentence A: ") and f"(model keeps {limit})" in v for v in values(at.text))
    assert at.text_area(key=KEY_A).value == LONG_TEXT
    assert scored_text(at) == f"A: {LONG_TEXT}\nB: {b}"


# -------------------------------------------------------- scripts and marks

SCRIPTS = {
    "emoji": ("The party was 🎉 and the food was 🍕", "The party was fun and the food was pizza"),
    "cjk": ("病人对青霉素过敏", "患者は ペニシリン に アレルギー があります"),
    "arabic": ("المريض يعاني من حساسية البنسلين", "The patient is allergic to penicillin"),
    "hebrew": ("המטופל אלרגי לפניצילין", "המטופל אינו אלרגי לפניצילין"),
}


@pytest.mark.parametrize("case", list(SCRIPTS))
def test_any_script_is_scored_and_shown_as_typed(scored, case):
    at = scored
    a, b = SCRIPTS[case]
    type_and_compare(at, a, b)

    assert not at.warning or all(w.icon == "❓" for w in at.warning), values(at.warning)
    assert minilm_row(at)["cosine"] == pytest.approx(expected_cosine(a, b), abs=1e-4)
    assert scored_text(at) == f"A: {a}\nB: {b}"  # right-to-left text is not reordered or altered
    assert (at.text_area(key=KEY_A).value, at.text_area(key=KEY_B).value) == (a, b)
    # Whatever the tokenizer does not know is said, per side, with its count.
    minilm = load_model(MINILM_L6)
    for side, text in (("Sentence A", a), ("Sentence B", b)):
        split = tokenize(minilm.tokenizer, text, minilm.max_seq_length)
        said = [w for w in values(at.warning) if f"tokens of {side} are [UNK]" in w]
        if split.n_unk:
            assert len(said) == 1 and f": {split.n_unk} of {split.n_tokens} tokens of {side}" in said[0]
        else:
            assert said == []


def test_different_unknown_characters_score_as_identical_and_the_page_says_why(scored):
    at = scored
    a, b = "I feel 😀 today", "I feel 💀 today"
    tok = load_model(MINILM_L6).tokenizer
    assert tok.tokenize(a) == tok.tokenize(b)  # both emoji become [UNK]

    type_and_compare(at, a, b)

    assert minilm_row(at)["cosine"] == pytest.approx(1.0, abs=1e-5)
    unknown = [w for w in values(at.warning) if "[UNK]" in w]
    assert len(unknown) == 2 and all("the same token" in w for w in unknown)


def test_combining_marks_are_scored_as_typed_with_a_note(scored):
    at = scored
    a, b = "The cafe\u0301 serves cre\u0300me bru\u0302le\u0301e", "The café serves crème brûlée"
    type_and_compare(at, a, b)
    notes = [i for i in values(at.info) if i.startswith("Sentence A")]
    assert len(notes) == 1 and "combining mark" in notes[0] and "not Unicode NFC" in notes[0]
    assert not any(i.startswith("Sentence B") for i in values(at.info))
    assert minilm_row(at)["cosine"] == pytest.approx(expected_cosine(a, b), abs=1e-4)
    assert scored_text(at) == f"A: {a}\nB: {b}"


def test_zero_width_kept_control_characters_removed_box_unchanged(scored):
    at = scored
    typed_a = "The patient\u200b is allergic\x00 to penicillin\x1b"
    cleaned_a = "The patient\u200b is allergic to penicillin"
    b = "The patient is allergic to penicillin"

    type_and_compare(at, typed_a, b)

    infos = values(at.info)
    assert (
        "Sentence A: removed 2 control characters (U+0000, U+001B) before scoring; "
        "they carry no meaning in a sentence. What you typed is left as it was."
    ) in infos
    assert any(i.startswith("Sentence A contains 1 invisible character (U+200B ZERO WIDTH SPACE), scored as typed") for i in infos)
    assert at.text_area(key=KEY_A).value == typed_a  # the box keeps the control characters
    assert scored_text(at) == f"A: {cleaned_a}\nB: {b}"
    assert minilm_row(at)["cosine"] == pytest.approx(expected_cosine(cleaned_a, b), abs=1e-4)
    # The cleaned text is what was scored, so the page does not claim the boxes changed.
    assert not any("press Compare" in i for i in infos)
    assert not at.warning


# ------------------------------------------------------ markup stays text


@pytest.mark.parametrize(("a", "b"), [(SCRIPT, IMG), (MARKDOWN, MORE_MARKUP)], ids=["html", "markdown"])
def test_markup_is_shown_verbatim_as_plain_text_never_rendered(scored, a, b):
    at = scored
    type_and_compare(at, a, b)

    assert scored_text(at) == f"A: {a}\nB: {b}"  # st.text: shown character for character
    assert minilm_row(at)["cosine"] == pytest.approx(expected_cosine(a, b), abs=1e-4)
    assert (at.text_area(key=KEY_A).value, at.text_area(key=KEY_B).value) == (a, b)
    assert_never_rendered(at, a, b, "<script", "<img", "**bold**", "[link](", ":red[")


def test_markup_in_heatmap_lines_stays_text(at):
    lines = [SCRIPT, IMG, MARKDOWN, MORE_MARKUP]
    at.text_area(key=KEY_HEAT).input("\n".join(lines))
    at.button(key="cmp_build_heatmap").click().run()
    assert not at.exception
    legend = [df.value for df in at.dataframe if list(df.value.columns) == ["label", "sentence"]]
    assert legend and list(legend[0]["sentence"]) == lines
    assert_never_rendered(at, *lines, "<script", "<img", "**bold**")


def test_heatmap_skips_invisible_lines_and_cleans_control_characters(at):
    at.text_area(key=KEY_HEAT).input("The cat sat\n\u200b\nA feline\x00 rested\n\nStocks fell")
    at.button(key="cmp_build_heatmap").click().run()
    assert not at.exception
    infos = values(at.info)
    assert "Line 2 holds only invisible characters (U+200B ZERO WIDTH SPACE), nothing a model could read: skipped." in infos
    assert any(i.startswith("Line 3: removed 1 control character (U+0000)") for i in infos)
    legend = [df.value for df in at.dataframe if list(df.value.columns) == ["label", "sentence"]]
    assert list(legend[0]["sentence"]) == ["The cat sat", "A feline rested", "Stocks fell"]
    assert at.text_area(key=KEY_HEAT).value == "The cat sat\n\u200b\nA feline\x00 rested\n\nStocks fell"


def test_no_unsafe_html_anywhere_in_the_app():
    root = Path(__file__).resolve().parents[2]
    sources = [p for folder in ("views", "ui") for p in (root / folder).rglob("*.py")] + [root / "app.py"]
    offenders = [str(p) for p in sources if "unsafe_allow_html" in p.read_text(encoding="utf-8")]
    assert offenders == []


# ----------------------------------------------------------------- the CLI


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compare", "", "A sentence"], "error: TEXT_A is empty"),
        (["compare", "A sentence", "   \t "], "error: TEXT_B holds only whitespace"),
        (["compare", "\n\n\n", "A sentence"], "error: TEXT_A holds only line breaks"),
        (["tokens", "A sentence", "\n"], "error: TEXT holds only line breaks"),
    ],
    ids=["empty", "whitespace", "newlines", "tokens-newline"],
)
def test_cli_refuses_blank_text_in_one_line(cli, args, message):
    code, out, err = cli(*args, "--models", MINILM_L6)
    assert code == cli_main.EXIT_USAGE
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message)
    assert "Traceback" not in err


def test_cli_twenty_thousand_characters_report_tokens_and_truncation(cli):
    b = "The patient has a penicillin allergy"
    minilm = load_model(MINILM_L6)
    n_tokens = model_inputs(minilm.tokenizer, [LONG_TEXT], minilm.max_seq_length)[0].n_tokens  # a lower bound: the text is cut first
    code, out, _ = cli("compare", LONG_TEXT, b, "--models", MINILM_L6, "--json", "--no-cache")
    assert code == 0
    (row,) = json.loads(out)
    assert row["n_tokens_a"] == n_tokens > minilm.max_seq_length
    assert row["truncated"] is True
    assert row["cosine"] == pytest.approx(expected_cosine(LONG_TEXT, b), abs=1e-5)
    code, out, _ = cli("compare", LONG_TEXT, b, "--models", MINILM_L6, "--no-cache")
    assert code == 0 and out.strip().endswith(f"{MINILM_L6}  (truncated)")


@pytest.mark.parametrize("case", [*SCRIPTS, "combining", "zero-width"])
def test_cli_scores_any_script_as_typed(cli, case):
    a, b = {
        **SCRIPTS,
        "combining": ("The cafe\u0301 is open", "The café is open"),
        "zero-width": ("The patient\u200b is allergic", "The patient is allergic"),
    }[case]
    code, out, err = cli("compare", a, b, "--models", MINILM_L6, "--json", "--no-cache")
    assert code == 0 and "Traceback" not in err
    (row,) = json.loads(out)
    assert row["cosine"] == pytest.approx(expected_cosine(a, b), abs=1e-5)


def test_cli_prints_markup_as_plain_characters(cli):
    code, out, err = cli("tokens", SCRIPT, MARKDOWN, "--models", MINILM_L6)
    assert code == 0 and "Traceback" not in err
    assert repr(SCRIPT) in out and repr(MARKDOWN) in out  # a terminal renders nothing


def test_cli_refuses_invisible_only_text(cli):
    code, _, err = cli("compare", "\u200b", "\x00", "--models", MINILM_L6)
    assert code == cli_main.EXIT_USAGE
    assert "holds only invisible characters" in err


def test_cli_removes_control_characters_and_says_so(cli):
    code, out, err = cli("compare", "The cat\x00 sat", "e\u0301clair", "--models", MINILM_L6, "--json", "--no-cache")
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert any("TEXT_A: removed 1 control character (U+0000)" in n for n in notes), err
    assert any("TEXT_B writes some letters as a base letter plus a combining mark" in n for n in notes), err
    assert "Traceback" not in err and json.loads(out)[0]["cosine"] < 1


def test_cli_cache_warning_is_one_line(cli, tmp_path, monkeypatch):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    monkeypatch.setenv("COSINE_PROBE_CACHE_DIR", str(blocker / "cache"))
    code, out, err = cli("compare", "A cat sat", "A cat was sitting", "--models", MINILM_L6)
    assert code == 0 and out.strip()
    warnings_ = [line for line in err.splitlines() if "cache" in line.lower()]
    assert len(warnings_) == 1 and warnings_[0].startswith("warning: cannot use the embedding cache"), err
