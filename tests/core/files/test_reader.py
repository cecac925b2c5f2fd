"""Reading user pairs files: formats, encodings, damage, and what gets dropped."""

from __future__ import annotations

import json

import pytest

from core import constants
from core.files.reader import PairsFileError, apply_mapping, guess_mapping, mapping_note, parse_pairs, read_pairs_file


def _pairs(data: bytes, filename: str = "pairs.csv", **kwargs):
    parsed = parse_pairs(data, filename, **kwargs)
    frame, notes = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)))
    return parsed, frame, notes


CSV = b"text_a,text_b,category\nThe cat sat,The cat stood,positive\nIt rained,It did not rain,negation\n"


def test_good_csv():
    parsed, frame, notes = _pairs(CSV)
    assert parsed.delimiter == "," and parsed.encoding == "utf-8"
    assert frame[constants.COL_TEXT_A].tolist() == ["The cat sat", "It rained"]
    assert frame[constants.COL_TEXT_B].tolist() == ["The cat stood", "It did not rain"]
    assert frame[constants.COL_CATEGORY].tolist() == ["positive", "negation"]
    assert frame[constants.COL_PAIR_ID].tolist() == ["row-1", "row-2"]
    assert set(frame[constants.COL_SUITE]) == {"uploaded"}
    assert notes == []


def test_good_tsv_with_commas_in_text():
    data = b"sentence1\tsentence2\tlabel\nHello, world\tGoodbye, world\t1\nA, b, c\tD, e\t0\n"
    parsed, frame, _ = _pairs(data, "pairs.tsv")
    assert parsed.delimiter == "\t"
    assert frame[constants.COL_TEXT_A].tolist() == ["Hello, world", "A, b, c"]
    assert frame[constants.COL_LABEL].tolist() == ["1", "0"]


def test_tsv_content_in_a_csv_named_file_is_sniffed():
    data = b"text_a\ttext_b\nHello, world\tGoodbye, world\nOne\tTwo\n"
    parsed, frame, _ = _pairs(data, "pairs.csv")
    assert parsed.delimiter == "\t"
    assert frame[constants.COL_TEXT_B].tolist() == ["Goodbye, world", "Two"]


def test_jsonl():
    lines = [{"text_a": "a one", "text_b": "b one", "id": "x1"}, {"text_a": "a two", "text_b": "b two", "id": "x2", "extra": 3}]
    data = "\n".join(json.dumps(r) for r in lines).encode() + b"\n\n"
    parsed, frame, _ = _pairs(data, "pairs.jsonl")
    assert parsed.delimiter == "jsonl"
    assert frame[constants.COL_PAIR_ID].tolist() == ["x1", "x2"]
    assert frame[constants.COL_TEXT_B].tolist() == ["b one", "b two"]


def test_json_array():
    data = json.dumps([{"premise": "p1", "hypothesis": "h1"}, {"premise": "p2", "hypothesis": "h2"}]).encode()
    _, frame, _ = _pairs(data, "pairs.json")
    assert frame[constants.COL_TEXT_A].tolist() == ["p1", "p2"]
    assert frame[constants.COL_TEXT_B].tolist() == ["h1", "h2"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b'{"text_a": "x", "text_b": "y"}\nnot json\n', "line 2 is not valid JSON"),
        (b"[1, 2, 3]", "one object per line"),
        (b'[{"text_a": "x"', "invalid JSON"),
    ],
)
def test_bad_json(data, fragment):
    with pytest.raises(PairsFileError, match=fragment):
        parse_pairs(data, "pairs.jsonl")


@pytest.mark.parametrize("data", [b"", b"   \n\n  "])
def test_empty_file(data):
    with pytest.raises(PairsFileError, match="empty"):
        parse_pairs(data, "pairs.csv")


def test_header_only():
    with pytest.raises(PairsFileError, match="header but no data rows"):
        parse_pairs(b"text_a,text_b\n", "pairs.csv")


def test_semicolon_delimiter_is_sniffed():
    data = b"text_a;text_b\nHello, world;Goodbye, world\nOne;Two\n"
    parsed, frame, _ = _pairs(data, "pairs.csv")
    assert parsed.delimiter == ";"
    assert frame[constants.COL_TEXT_A].tolist() == ["Hello, world", "One"]
    assert frame[constants.COL_TEXT_B].tolist() == ["Goodbye, world", "Two"]


def test_missing_required_columns_are_named():
    parsed = parse_pairs(b"foo,bar\nx,y\n", "pairs.csv")
    with pytest.raises(PairsFileError) as info:
        apply_mapping(parsed, {constants.COL_TEXT_A: "sentence1", constants.COL_TEXT_B: "sentence2"})
    assert "'sentence1'" in str(info.value) and "foo, bar" in str(info.value)

    with pytest.raises(PairsFileError) as info:
        apply_mapping(parsed, {constants.COL_TEXT_A: "foo", constants.COL_TEXT_B: None})
    assert constants.COL_TEXT_B in str(info.value) and "foo, bar" in str(info.value)

    # One column cannot hold a pair: refused when parsed, naming the column and the likely cause.
    with pytest.raises(PairsFileError, match="only one column \\('only'\\).*delimiter"):
        parse_pairs(b"only\nx\n", "pairs.csv")


def test_unknown_column_names_fall_back_to_the_first_two():
    _, frame, _ = _pairs(b"left,right\nx,y\n")
    assert (frame[constants.COL_TEXT_A].tolist(), frame[constants.COL_TEXT_B].tolist()) == (["x"], ["y"])


def test_extra_columns_are_fine():
    data = b"id,text_a,text_b,notes,score\n7,a,b,whatever,0.5\n"
    parsed, frame, _ = _pairs(data)
    assert "notes" in parsed.frame.columns
    assert frame[constants.COL_PAIR_ID].tolist() == ["7"]
    assert frame[constants.COL_LABEL].tolist() == ["0.5"]


def test_empty_cells_are_dropped_and_counted():
    data = b"text_a,text_b\nx,y\n,z\nw,\n  ,   \nu,v\n"
    _, frame, notes = _pairs(data)
    assert frame[constants.COL_TEXT_A].tolist() == ["x", "u"]
    assert "dropped 3 row(s) with an empty text" in notes


def test_nothing_left_is_an_error():
    with pytest.raises(PairsFileError, match="no pair is left"):
        _pairs(b"text_a,text_b\n,z\n")


def test_duplicates_are_removed_and_counted():
    data = b"text_a,text_b\nx,y\nx,y\n x , y \nx,z\n"
    _, frame, notes = _pairs(data)
    assert list(zip(frame[constants.COL_TEXT_A], frame[constants.COL_TEXT_B], strict=True)) == [("x", "y"), ("x", "z")]
    assert "removed 2 duplicate pair(s)" in notes


def test_duplicate_ids_are_renumbered():
    _, frame, notes = _pairs(b"id,text_a,text_b\n1,a,b\n1,c,d\n")
    assert frame[constants.COL_PAIR_ID].tolist() == ["row-1", "row-2"]
    assert any("not unique" in n for n in notes)


def test_latin1_file_is_decoded():
    data = "text_a,text_b\nCafé crème,Naïve façade\n".encode("latin-1")
    parsed, frame, notes = _pairs(data)
    assert parsed.encoding == "latin-1"
    assert frame[constants.COL_TEXT_A].tolist() == ["Café crème"]
    assert frame[constants.COL_TEXT_B].tolist() == ["Naïve façade"]
    assert "decoded as latin-1" in notes


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_with_bom_is_decoded(codec):
    text = "text_a,text_b\nCafé 🦄,Ünïcödé\n"
    data = text.encode(codec) if codec == "utf-16" else b"\xfe\xff" + text.encode(codec)
    assert data[:2] in (b"\xff\xfe", b"\xfe\xff")
    parsed, frame, _ = _pairs(data)
    assert parsed.encoding == "utf-16"
    assert frame[constants.COL_TEXT_A].tolist() == ["Café 🦄"]
    assert frame[constants.COL_TEXT_B].tolist() == ["Ünïcödé"]


def test_utf8_bom_is_stripped():
    parsed, frame, _ = _pairs(b"\xef\xbb\xbftext_a,text_b\nx,y\n")
    assert list(parsed.frame.columns) == ["text_a", "text_b"]
    assert frame[constants.COL_TEXT_A].tolist() == ["x"]


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 64,
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
    ],
    ids=["all-bytes", "png"],
)
def test_binary_file_named_csv(data):
    with pytest.raises(PairsFileError, match="binary"):
        parse_pairs(data, "pairs.csv")


def test_zip_or_xlsx_content():
    with pytest.raises(PairsFileError, match="save it as CSV"):
        parse_pairs(b"PK\x03\x04" + b"\x00" * 100, "pairs.csv")


@pytest.mark.parametrize("name", ["pairs.xlsx", "Pairs.XLS", "sheet.ods"])
def test_spreadsheet_names_say_save_as_csv(name):
    with pytest.raises(PairsFileError, match="save the sheet as CSV"):
        parse_pairs(b"PK\x03\x04whatever", name)


def test_quoted_newlines_are_kept():
    data = b'text_a,text_b\n"first line\nsecond line","a ""quoted"" word, and a comma"\nx,y\n'
    _, frame, _ = _pairs(data)
    assert frame[constants.COL_TEXT_A].tolist() == ["first line\nsecond line", "x"]
    assert frame[constants.COL_TEXT_B].tolist()[0] == 'a "quoted" word, and a comma'


def test_malformed_delimited_text():
    with pytest.raises(PairsFileError, match="could not parse"):
        parse_pairs(b'text_a,text_b\n"unterminated,x\n', "pairs.csv")


def test_row_limit_is_named():
    data = b"text_a,text_b\n" + b"".join(f"a{i},b{i}\n".encode() for i in range(6))
    with pytest.raises(PairsFileError, match="6 rows; the limit is 5") as info:
        parse_pairs(data, "pairs.csv", max_rows=5)
    # The message only suggests what the user can actually do.
    assert "split it into smaller files" in str(info.value)
    assert "--max-rows" not in str(info.value)
    assert len(parse_pairs(data, "pairs.csv", max_rows=6).frame) == 6

    big = b"text_a,text_b\n" + b"a,b\n" * (constants.MAX_UPLOAD_ROWS + 1)
    with pytest.raises(PairsFileError, match=f"the limit is {constants.MAX_UPLOAD_ROWS:,}"):
        parse_pairs(big, "pairs.csv")


def test_read_pairs_file(tmp_path):
    path = tmp_path / "my-pairs.csv"
    path.write_bytes(CSV)
    frame, notes = read_pairs_file(path)
    assert set(frame[constants.COL_SUITE]) == {"my-pairs"}
    assert len(frame) == 2 and notes == []
    with pytest.raises(PairsFileError, match="cannot read"):
        read_pairs_file(tmp_path / "missing.csv")


# ------------------------------------------------------------- limits and hints


def test_byte_limit_is_named():
    data = b"text_a,text_b\n" + b"a long enough sentence,another one\n" * 40
    with pytest.raises(PairsFileError, match=r"the limit is 0\.001 MB: split it into smaller files") as info:
        parse_pairs(data, "pairs.csv", max_mb=0.001)
    assert f"{len(data):,} bytes" in str(info.value)
    assert len(parse_pairs(data, "pairs.csv").frame) == 40
    over = b"text_a,text_b\n" + b"x" * (constants.MAX_UPLOAD_MB * 1024 * 1024)
    with pytest.raises(PairsFileError, match=f"the limit is {constants.MAX_UPLOAD_MB} MB"):
        parse_pairs(over, "pairs.csv")


def test_byte_limit_is_checked_before_reading_a_file(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    path.write_bytes(b"text_a,text_b\n" + b"a,b\n" * 1000)
    monkeypatch.setattr("pathlib.Path.read_bytes", lambda self: pytest.fail("read a file over the limit"))
    with pytest.raises(PairsFileError, match="the limit is 0.001 MB"):
        read_pairs_file(path, max_mb=0.001)


@pytest.mark.parametrize(
    ("data", "name", "fragment"),
    [
        (b"text_a:text_b\nOne:Two\n", "pairs.csv", "only one column ('text_a:text_b')"),
        (b"text_a;text_b\nOne;Two\n", "pairs.tsv", "only one column ('text_a;text_b')"),
        (b'{"text_a": "x"}\n{"text_a": "y"}\n', "pairs.jsonl", "only one field ('text_a')"),
    ],
    ids=["colon", "semicolon-named-tsv", "jsonl"],
)
def test_wrong_delimiter_leaves_one_column_and_says_so(data, name, fragment):
    with pytest.raises(PairsFileError) as info:
        parse_pairs(data, name)
    assert fragment in str(info.value)


def test_missing_text_column_is_guessed_from_a_free_column_and_said():
    columns = ["id", "text_a", "notes"]
    mapping = guess_mapping(columns)
    assert (mapping[constants.COL_TEXT_A], mapping[constants.COL_TEXT_B], mapping[constants.COL_PAIR_ID]) == ("text_a", "notes", "id")
    note = mapping_note(columns)
    assert note.startswith("no column is named text_b")
    assert "using 'notes' as text_b" in note
    # Once the user picks another column there is nothing left to say.
    assert mapping_note(columns, {**mapping, constants.COL_TEXT_B: "id"}) is None
    assert mapping_note(["text_a", "text_b"]) is None


def test_no_text_column_named_uses_the_first_two_and_says_so():
    note = mapping_note(["question", "answer", "category"])
    assert "no column is named text_a or text_b" in note
    assert "using 'question' as text_a and 'answer' as text_b" in note


def test_unguessable_text_column_asks_for_a_choice():
    columns = ["question", "type"]
    assert guess_mapping(columns)[constants.COL_TEXT_B] is None
    assert mapping_note(columns).endswith("choose the text_b column below")


def test_unused_columns_and_empty_categories_are_said():
    data = b"text_a,text_b,category,notes,source\nx,y,negation,n1,s1\nu,v,,n2,s2\nw,z,,n3,s3\n"
    _, frame, notes = _pairs(data)
    assert "ignored 2 column(s) not chosen in the column boxes: notes, source" in notes
    assert "2 pair(s) have an empty category cell: grouped as 'uncategorized'" in notes
    assert frame[constants.COL_CATEGORY].tolist() == ["negation", "uncategorized", "uncategorized"]


# ------------------------------------------------------- command-line wording, header-less files

FLAGS = {
    constants.COL_TEXT_A: "--text-a",
    constants.COL_TEXT_B: "--text-b",
    constants.COL_CATEGORY: "--category",
    constants.COL_LABEL: "--label",
    "header": "--no-header",
}


def test_command_line_wording_names_flags_not_the_page():
    guessed = mapping_note(["question", "answer", "category"], flags=FLAGS)
    assert "below" not in guessed and guessed.endswith("if that is wrong, map other columns with --text-a COL and --text-b COL")
    assert mapping_note(["question", "type"], flags=FLAGS).endswith("give the text_b column with --text-b COL")
    parsed = parse_pairs(b"foo,bar,extra\nx,y,z\n", "pairs.csv")
    with pytest.raises(PairsFileError, match="give the column that holds text_b with --text-b COL"):
        apply_mapping(parsed, {constants.COL_TEXT_A: "foo", constants.COL_TEXT_B: None}, flags=FLAGS)
    _, notes = apply_mapping(parsed, {constants.COL_TEXT_A: "foo", constants.COL_TEXT_B: "bar"}, flags=FLAGS)
    assert notes == ["ignored 1 column(s) not mapped by a column flag: extra"]


HEADERLESS = b"The cat sat on the mat.,A cat was sitting on the mat.\nIt rained all day.,It did not rain at all.\n"


def test_a_header_row_that_reads_like_data_is_said():
    parsed = parse_pairs(HEADERLESS, "pairs.csv")
    columns = list(parsed.frame.columns)
    assert len(parsed.frame) == 1  # the first pair became the header
    assert mapping_note(columns, flags=FLAGS).endswith("pass --no-header to score it as a pair")
    assert "it is read as the header and not scored" in mapping_note(columns)
    # ordinary headers, even unrecognised ones, are not data
    assert "first row" not in mapping_note(["question", "answer"])


def test_no_header_reads_the_first_line_as_a_pair(tmp_path):
    parsed = parse_pairs(HEADERLESS, "pairs.csv", header=False)
    assert list(parsed.frame.columns) == ["column_1", "column_2"] and len(parsed.frame) == 2
    path = tmp_path / "headerless.csv"
    path.write_bytes(HEADERLESS)
    frame, notes = read_pairs_file(
        path, header=False, columns={constants.COL_TEXT_A: "column_2", constants.COL_TEXT_B: "column_1"}, flags=FLAGS
    )
    assert frame[constants.COL_TEXT_A].tolist() == ["A cat was sitting on the mat.", "It did not rain at all."]
    assert notes == []  # both text columns were named: nothing guessed


def test_named_columns_must_exist_and_differ(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(b"q,r,s\nx,y,z\n")
    with pytest.raises(PairsFileError, match=r"column 'nope' \(for category\) is not in the file; it has: q, r, s"):
        read_pairs_file(path, columns={constants.COL_CATEGORY: "nope"}, flags=FLAGS)
    with pytest.raises(PairsFileError, match="text_a and text_b are both column 'r'"):
        read_pairs_file(path, columns={constants.COL_TEXT_A: "r", constants.COL_TEXT_B: "r"}, flags=FLAGS)
    frame, _ = read_pairs_file(
        path, columns={constants.COL_TEXT_A: "s", constants.COL_TEXT_B: "q", constants.COL_CATEGORY: "r"}, flags=FLAGS
    )
    assert (frame[constants.COL_TEXT_A].tolist(), frame[constants.COL_TEXT_B].tolist(), frame[constants.COL_CATEGORY].tolist()) == (
        ["z"],
        ["x"],
        ["y"],
    )
