"""Uploaded files: every kind of file a user can give the Your data page or the CLI.

Files go through the real ``st.file_uploader`` (AppTest can set its value).
One app session uploads a good file and runs it first; every later upload,
bad or odd, must say what happened and leave the earlier pairs (for a file
that cannot be read) and the earlier results (always) in place.  The CLI
reads the same files through ``run --suite PATH``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apptest_support import open_page
from markup_guard import assert_never_rendered
from streamlit.testing.v1 import AppTest

from core import constants
from core.cli import main as cli_main
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from ui.widgets import md_escape

APP = str(PROJECT_ROOT / "app.py")
PAGE = "views/your_data.py"
RUN = "Run on selected models"
GOOD_NAME = "good.tsv"
GOOD = (
    b"text_a\ttext_b\tcategory\n"
    b"The patient has diabetes\tThe patient does not have diabetes\tnegation\n"
    b"Take 5mg of aspirin daily\tTake 500mg of aspirin daily\tnumerical\n"
    b"The cat sat on the mat\tA feline rested on the rug\tpositive\n"
    b"The meeting was postponed\tThe meeting was delayed\tpositive\n"
    b"The cat sat on the mat\tStock prices fell sharply in March\tnegative\n"
)
N_GOOD = 5
MB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8


def rows_csv(n: int) -> bytes:
    return b"text_a,text_b\n" + b"".join(f"sentence {i},other sentence {i}\n".encode() for i in range(n))


# name, bytes, what the error must say (before Markdown escaping)
BAD_FILES = {
    "empty file": ("empty.csv", b"", "the file is empty"),
    "blank file": ("blank.csv", b" \n\n\t\n", "the file is empty"),
    "header only": ("header.csv", b"text_a,text_b\n", "the file has a header but no data rows"),
    "wrong delimiter": ("colons.csv", b"text_a:text_b\nOne:Two\nThree:Four\n", "found only one column ('text_a:text_b')"),
    "binary named .csv": ("picture.csv", PNG, "the file is binary, not text"),
    "Excel file": ("book.xlsx", b"PK\x03\x04" + bytes(200), ".xlsx spreadsheets are not read directly; save the sheet as CSV (UTF-8)"),
    "Excel content named .csv": ("book.csv", b"PK\x03\x04" + bytes(200), "this looks like an Excel or zip file; save it as CSV (UTF-8)"),
    "unterminated quote": ("quote.csv", b'text_a,text_b\n"never closed,x\n', "could not parse the file as delimited text"),
    "broken JSON Lines": ("pairs.jsonl", b'{"text_a": "x", "text_b": "y"}\n{oops\n', "line 2 is not valid JSON"),
    "too many rows": (
        "rows.csv",
        rows_csv(constants.MAX_UPLOAD_ROWS + 1),
        f"the file has {constants.MAX_UPLOAD_ROWS + 1:,} rows; the limit is {constants.MAX_UPLOAD_ROWS:,}",
    ),
    "too many bytes": (
        "bytes.csv",
        rows_csv(2) + b"x" * (constants.MAX_UPLOAD_MB * MB),
        f"the limit is {constants.MAX_UPLOAD_MB} MB: split it into smaller files",
    ),
}


# ------------------------------------------------------------------ helpers


def upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader[0].set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception


def results(at: AppTest) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if {constants.COL_MODEL, constants.COL_COSINE, constants.COL_TOKENS_A} <= set(d.value.columns)]
    assert len(frames) == 1, "exactly one per-pair results table"
    return frames[0]


def preview(at: AppTest) -> pd.DataFrame:
    frames = [d.value for d in at.dataframe if constants.COL_TEXT_A in d.value.columns and constants.COL_MODEL not in d.value.columns]
    assert len(frames) == 1, "exactly one preview"
    return frames[0]


def boxes(at: AppTest) -> dict[str, str]:
    return {s.label: s.value for s in at.selectbox}


def infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info]


@pytest.fixture(scope="module")
def at() -> AppTest:
    """The page after a good file was uploaded and run once."""
    app = open_page(PAGE)
    upload(app, GOOD_NAME, GOOD)
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception
    assert len(results(app)) == N_GOOD
    return app


@pytest.fixture(scope="module")
def first_results(at) -> pd.DataFrame:
    return results(at).copy()


def assert_results_kept(at: AppTest, first: pd.DataFrame) -> None:
    now = results(at)
    assert list(now[constants.COL_PAIR_ID]) == list(first[constants.COL_PAIR_ID])
    np.testing.assert_allclose(now[constants.COL_COSINE], first[constants.COL_COSINE])
    assert any(f"Computed from {md_escape(GOOD_NAME)}" in c.value for c in at.caption)


# --------------------------------------------------------- unreadable files


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_unreadable_file_says_why_and_keeps_pairs_and_results(at, first_results, case):
    name, data, message = BAD_FILES[case]
    upload(at, GOOD_NAME, GOOD)  # the good file's pairs are the ones on show
    assert list(preview(at)[constants.COL_TEXT_A]) == [line.split("\t")[0] for line in GOOD.decode().splitlines()[1:]]

    upload(at, name, data)

    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"Could not read {md_escape(name)}: ")
    assert md_escape(message) in errors[0]
    assert errors[0].endswith(f"The pairs from {md_escape(GOOD_NAME)} are kept.")
    assert len(preview(at)) == N_GOOD
    assert boxes(at)["Text A column"] == "text_a"
    assert_results_kept(at, first_results)


def test_upload_limit_is_one_number_for_config_widget_and_core(at):
    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == constants.MAX_UPLOAD_MB
    uploader = at.file_uploader[0]
    assert uploader.proto.max_upload_size_mb == constants.MAX_UPLOAD_MB
    assert f"Up to {constants.MAX_UPLOAD_MB} MB and {constants.MAX_UPLOAD_ROWS:,} rows" in uploader.help
    # Exactly at the limit is accepted; one byte more is refused (the 'too many bytes' case above).
    prefix = rows_csv(2) + b"padded,"
    at_limit = prefix + b"y" * (constants.MAX_UPLOAD_MB * MB - len(prefix) - 1) + b"\n"
    assert len(at_limit) == constants.MAX_UPLOAD_MB * MB
    upload(at, "exactly-at-limit.csv", at_limit)
    assert not at.error
    assert len(preview(at)) == 3
    upload(at, GOOD_NAME, GOOD)


def test_unusable_file_keeps_results_and_says_nothing_is_left(at, first_results):
    upload(at, "all-empty.csv", b"text_a,text_b\n,\n  ,\n")
    errors = [e.value for e in at.error]
    assert errors == [f"These columns cannot be used: {md_escape('no pair is left after dropping rows with an empty text')}."]
    assert not [b for b in at.button if b.label == RUN]  # nothing to run ...
    assert_results_kept(at, first_results)  # ... and the earlier results stay


# ------------------------------------------------ readable files with news


def test_missing_text_columns_offer_the_mapping(at, first_results):
    upload(at, "qa.csv", b"question,answer,topic\nIs it raining?,It is raining,weather\nIs it cold?,It is warm,weather\n")
    note = [i for i in infos(at) if "no column is named" in i]
    assert note == [
        md_escape(
            "no column is named text_a or text_b (nor sentence1/sentence2, premise/hypothesis, query/document): "
            "using 'question' as text_a and 'answer' as text_b, the columns holding sentences (passed over: 'topic' (single words)); "
            "choose other columns below if that is wrong"
        )
    ]
    assert boxes(at)["Text A column"] == "question" and boxes(at)["Text B column"] == "answer"
    box = next(s for s in at.selectbox if s.label == "Text B column")
    assert list(box.options) == ["question", "answer", "topic"]  # every column is offered
    box.set_value("topic").run()
    assert list(preview(at)[constants.COL_TEXT_B]) == ["weather", "weather"]
    assert not [i for i in infos(at) if "no column is named" in i]  # chosen: nothing left to say
    assert_results_kept(at, first_results)


def test_one_text_column_missing_never_defaults_both_texts_to_one_column(at):
    upload(at, "half.csv", b"id,text_a,remark\n1,The door is open,The door is shut\n2,It rained,It did not rain\n")
    assert boxes(at)["Text A column"] == "text_a" and boxes(at)["Text B column"] == "remark"
    assert any(md_escape("no column is named text_b") in i and md_escape("using 'remark' as text_b") in i for i in infos(at))
    assert not at.warning  # no "same column" warning
    assert list(preview(at)[constants.COL_PAIR_ID]) == ["1", "2"]


def test_extra_columns_are_ignored_and_named(at):
    upload(at, "extra.csv", b"text_a,text_b,notes,source\nOne,Two,n1,s1\nThree,Four,n2,s2\n")
    assert md_escape("ignored 2 column(s) not chosen in the column boxes: notes, source") in infos(at)
    assert list(preview(at)[constants.COL_TEXT_B]) == ["Two", "Four"]


def test_thousands_of_columns_are_named_in_a_bounded_line(at):
    # The CLI's "ignored columns" line was bounded, the page still listed every column (34 KB).
    names = [f"extra_column_with_a_long_name_{i:05d}" for i in range(1_000)]
    upload(at, "wide.csv", ("text_a,text_b," + ",".join(names) + "\nOne,Two," + ",".join("x" for _ in names) + "\n").encode())
    texts = [e.value for kind in ("caption", "info", "markdown", "warning", "error") for e in getattr(at, kind)]
    assert any("and 992 more" in t for t in texts)
    longest = max(texts, key=len)
    assert len(longest) < 2_000, longest[:300]


def test_empty_cells_are_dropped_and_counted(at):
    data = b"text_a,text_b,category\nOne,Two,positive\n,Lonely,negation\nThree,,negation\nFour,Five,\n"
    upload(at, "cells.csv", data)
    said = infos(at)
    assert md_escape("dropped 2 row(s) with an empty text") in said
    assert md_escape("1 pair(s) have an empty category cell: grouped as 'uncategorized'") in said
    assert list(preview(at)[constants.COL_CATEGORY]) == ["positive", "uncategorized"]


def test_duplicate_rows_are_removed_and_counted(at):
    data = b"text_a,text_b\nOne,Two\nOne,Two\n One , Two \nThree,Four\nOne,Two\n"
    upload(at, "dups.csv", data)
    assert md_escape("removed 3 duplicate pair(s)") in infos(at)
    assert list(zip(preview(at)[constants.COL_TEXT_A], preview(at)[constants.COL_TEXT_B], strict=True)) == [
        ("One", "Two"),
        ("Three", "Four"),
    ]
    assert any("2 pairs after mapping" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("codec", "data", "said"),
    [
        ("latin-1", "text_a,text_b\nCafé crème,Naïve façade\n".encode("latin-1"), "decoded as latin-1"),
        ("utf-16 with BOM", "text_a,text_b\nCafé crème,Naïve façade\n".encode("utf-16"), "decoded as utf-16"),
        ("utf-16-le without BOM", "text_a,text_b\nCafé crème,Naïve façade\n".encode("utf-16-le"), "decoded as utf-16-le"),
    ],
    ids=["latin-1", "utf-16", "utf-16-le"],
)
def test_other_encodings_are_decoded_and_said(at, codec, data, said):
    upload(at, f"{codec}.csv", data)
    assert not at.error
    assert md_escape(said) in infos(at)
    assert (preview(at)[constants.COL_TEXT_A].iloc[0], preview(at)[constants.COL_TEXT_B].iloc[0]) == ("Café crème", "Naïve façade")


def test_quoted_newlines_stay_inside_their_cell(at):
    upload(at, "multiline.csv", b'text_a,text_b\n"first line\nsecond line","a ""quoted"" word, and a comma"\nx,y\n')
    assert not at.error
    assert list(preview(at)[constants.COL_TEXT_A]) == ["first line\nsecond line", "x"]
    assert preview(at)[constants.COL_TEXT_B].iloc[0] == 'a "quoted" word, and a comma'


def test_markup_in_file_names_and_cells_stays_text(at):
    name = "<img src=x onerror=alert(1)>**bold**.csv"
    upload(at, name, b"text_a,<script>alert(1)</script>\n**bold** [x](http://y),<b>hi</b>\n")
    assert list(preview(at)[constants.COL_TEXT_B]) == ["<b>hi</b>"]  # dataframe cells are plain text
    # The odd header is offered as a column and quoted in the mapping note, escaped.
    assert "<script>alert(1)</script>" in next(s for s in at.selectbox if s.label == "Text B column").options
    assert any(md_escape("using '<script>alert(1)</script>' as text_b") in i for i in infos(at))
    assert list(preview(at)[constants.COL_TEXT_A]) == ["**bold** [x](http://y)"]
    assert_never_rendered(at, "<img", "<script", "**bold**", "[x](", "<b>")
    assert any(md_escape(name) in c.value for c in at.caption)


# ------------------------------------------------------------------ the CLI


def _cli_run(cli, tmp_path: Path, name: str, data: bytes) -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_bytes(data)
    return cli("run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet", "--no-cache")


# The page's row and byte limits are not the CLI's: `run` reads a file of any size in chunks (tests/core/cli/test_run_scale.py).
@pytest.mark.parametrize("case", [c for c in BAD_FILES if c not in ("too many rows", "too many bytes")])
def test_cli_refuses_unreadable_files_in_one_line(cli, tmp_path, case):
    name, data, message = BAD_FILES[case]
    code, out, err = _cli_run(cli, tmp_path, name, data)
    assert code == cli_main.EXIT_USAGE
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / name}: ")
    assert message in lines[0]
    assert "Traceback" not in err and not (tmp_path / "out" / "pairs.csv").exists()


def test_cli_reads_latin1_and_utf16_files(cli, tmp_path):
    for name, data in (
        ("latin.csv", "text_a,text_b\nCafé crème,Naïve façade\n".encode("latin-1")),
        ("wide.csv", "text_a,text_b\nCafé crème,Naïve façade\n".encode("utf-16")),
    ):
        code, _, err = _cli_run(cli, tmp_path, name, data)
        assert code == 0, err
        written = pd.read_csv(tmp_path / "out" / "pairs.csv")
        assert (written[constants.COL_TEXT_A].iloc[0], written[constants.COL_TEXT_B].iloc[0]) == ("Café crème", "Naïve façade")


def test_cli_refuses_a_file_with_nothing_left(cli, tmp_path):
    code, _, err = _cli_run(cli, tmp_path, "all-empty.csv", b"text_a,text_b\n,\n  ,\n")
    assert code == cli_main.EXIT_USAGE
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0] == f"error: {tmp_path / 'all-empty.csv'}: no pair is left after dropping rows with an empty text"


def test_cli_run_prints_what_reading_the_file_changed(cli, tmp_path):
    data = b"text_a,text_b,notes\nThe cat sat,A cat was sitting,x\nThe cat sat,A cat was sitting,y\n,empty,z\n"
    code, _, err = _cli_run(cli, tmp_path, "dups.csv", data)
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert any("removed 1 duplicate pair(s)" in n for n in notes), err
    assert any("dropped 1 row(s) with an empty text" in n for n in notes), err
    assert any("ignored 1 column(s) not chosen in the column boxes: notes" in n for n in notes) or any("notes" in n for n in notes), err
    assert len(pd.read_csv(tmp_path / "out" / "pairs.csv")) == 1


def test_cli_run_says_which_columns_it_guessed(cli, tmp_path):
    code, _, err = _cli_run(cli, tmp_path, "qd.csv", b"q,d\nThe cat sat,A cat was sitting\n")
    assert code == 0, err
    assert any(line.startswith("note: ") and "'q' as text_a" in line and "'d' as text_b" in line for line in err.splitlines()), err


def test_the_docs_state_the_upload_limit_as_the_code_has_it():
    import re

    pages = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
    stated = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        stated += re.findall(r"MAX_UPLOAD_MB = (\d+)", text) + re.findall(r"maxUploadSize = (\d+)", text)
        stated += re.findall(r"the limit is (\d+) MB", text) + re.findall(r"upload limit (?:is )?(\d+) MB", text)
    assert stated, "the upload limit is stated nowhere"
    assert set(stated) == {str(constants.MAX_UPLOAD_MB)}
