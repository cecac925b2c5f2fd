"""Hostile or unusual pairs files end as pairs or one clear PairsFileError.

Points 3 (one bad byte must not turn a UTF-8 file into Latin-1), 4 (cells of
only invisible or control characters follow the typed-text rule), 5 (JSON
objects and arrays as values are refused, naming the rows), 7 (deep nesting
and lone surrogate escapes stay inside the reader) and 12 (a JSON object
file and a symlink loop get messages saying what was found).
"""

from __future__ import annotations

import json
import os

import pytest

from core import constants
from core.files.decoding import decode_bytes
from core.files.reader import PairsFileError, apply_mapping, guess_mapping, parse_pairs, read_pairs_file
from core.files.text_checks import check_text

ACCENTED = "Naïve résumé", "Résumé naïf"


def _pairs(data: bytes, filename: str = "pairs.csv", **kwargs):
    parsed = parse_pairs(data, filename, **kwargs)
    frame, notes = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)))
    return parsed, frame, notes


def _utf8_with_one_bad_byte() -> bytes:
    return (
        "text_a,text_b\n{},{}\nThe cat sat,A cat sat\nBroken \xff byte,Fine\n".format(*ACCENTED)
        .encode("utf-8")
        .replace("\xff".encode(), b"\xff")
    )


# ------------------------------------------------------------------ point 3: decoding


def test_one_bad_byte_keeps_a_utf8_file_utf8_and_names_its_line():
    data = _utf8_with_one_bad_byte()
    assert data.count(b"\xff") == 1
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    parsed, frame, notes = _pairs(data)
    assert parsed.encoding == "utf-8"
    assert tuple(frame.iloc[0][[constants.COL_TEXT_A, constants.COL_TEXT_B]]) == ACCENTED  # no mojibake
    assert frame[constants.COL_TEXT_A].iloc[2] == "Broken \ufffd byte"
    (note,) = [n for n in notes if "U+FFFD" in n]
    assert note.startswith("1 byte sequence(s) on line 4 are not valid UTF-8")
    assert "--encoding" in note


def test_many_bad_lines_are_listed_with_a_bound():
    lines = ["text_a,text_b"] + [f"Café {i} \xff,Crème {i}" for i in range(12)]
    data = "\n".join(lines).encode("utf-8").replace("\xff".encode(), b"\xff")
    decoded = decode_bytes(data)
    assert decoded.encoding == "utf-8"  # 12 bad bytes among 24 valid accented letters
    (note,) = decoded.notes
    assert note.startswith("12 byte sequence(s) on lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, and 2 more are not valid UTF-8")


def test_a_latin1_file_is_still_read_as_latin1():
    data = "text_a,text_b\nCafé crème,Naïve façade\nÀ bientôt,Déjà vu\n".encode("latin-1")
    parsed, frame, notes = _pairs(data)
    assert parsed.encoding == "latin-1" and notes == ["decoded as latin-1"]
    assert frame[constants.COL_TEXT_A].tolist() == ["Café crème", "À bientôt"]


def test_the_user_can_name_the_encoding():
    data = _utf8_with_one_bad_byte()
    parsed, frame, notes = _pairs(data, encoding="latin-1")
    assert parsed.encoding == "iso8859-1" and "decoded as iso8859-1" in notes
    assert frame[constants.COL_TEXT_A].iloc[0] == ACCENTED[0].encode("utf-8").decode("latin-1")  # what the user asked for
    cp1252 = "text_a,text_b\n“Quoted” text,Plain\n".encode("cp1252")
    _, frame, _ = _pairs(cp1252, encoding="cp1252")
    assert frame[constants.COL_TEXT_A].tolist() == ["“Quoted” text"]
    with pytest.raises(PairsFileError, match="unknown encoding 'klingon'"):
        parse_pairs(data, "x.csv", encoding="klingon")


def test_utf16_with_an_odd_byte_count_is_not_a_crash():
    data = "text_a,text_b\nx,y\n".encode("utf-16") + b"\x00"
    parsed, frame, _ = _pairs(data)
    assert parsed.encoding == "utf-16" and frame[constants.COL_TEXT_A].tolist() == ["x"]


# ------------------------------------------------------------------ point 4: invisible cells


@pytest.mark.parametrize("cell", ["\u200b", "\u200b\u200d\u2060", "\x01\x02", "\ufeff", "\u200e \x07"])
def test_cells_of_only_invisible_characters_are_dropped_and_counted(cell):
    assert check_text(cell, "Sentence A").problem  # the typed-text rule refuses the same text
    data = f"text_a,text_b\nThe cat sat,A cat sat\n{cell},Visible text\nVisible,{cell}\n".encode()
    _, frame, notes = _pairs(data)
    assert frame[constants.COL_TEXT_A].tolist() == ["The cat sat"]
    assert "dropped 2 row(s) whose text holds only invisible or control characters (rows 2, 3): nothing a model could read" in notes


def test_visible_text_with_invisible_characters_is_kept():
    data = "text_a,text_b\nzero\u200bwidth,joined\n".encode()
    _, frame, notes = _pairs(data)
    assert frame[constants.COL_TEXT_A].tolist() == ["zero\u200bwidth"] and notes == []


def test_nothing_left_after_dropping_invisible_rows_is_an_error():
    with pytest.raises(PairsFileError, match="no pair is left"):
        _pairs("text_a,text_b\n\u200b,x\n".encode())


# ------------------------------------------------------------------ point 5: nested JSON values


@pytest.mark.parametrize("filename", ["pairs.jsonl", "pairs.json"])
def test_objects_and_arrays_as_text_are_refused_naming_the_rows(filename):
    records = [
        {"text_a": "fine", "text_b": "also fine"},
        {"text_a": {"x": [1, 2, {"y": None}]}, "text_b": "b"},
        {"text_a": "ok", "text_b": "ok too"},
        {"text_a": ["a", "list"], "text_b": "b"},
    ]
    data = ("\n".join(json.dumps(r) for r in records) if filename.endswith("l") else json.dumps(records)).encode()
    parsed = parse_pairs(data, filename)
    with pytest.raises(PairsFileError) as err:
        apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)))
    assert (
        str(err.value) == "column 'text_a' (for text_a) holds JSON objects or arrays, not text, in rows 2, 4: give each value as a string"
    )
    assert "{'x'" not in str(err.value)  # never the Python repr


def test_nested_values_in_an_unused_column_are_only_ignored():
    data = b'{"text_a": "a", "text_b": "b", "meta": {"source": "x"}}\n{"text_a": "c", "text_b": "d", "meta": [1]}\n'
    _, frame, notes = _pairs(data, "pairs.jsonl")
    assert frame[constants.COL_TEXT_A].tolist() == ["a", "c"]
    assert "ignored 1 column(s) not chosen in the column boxes: meta" in notes


def test_json_scalars_read_as_text():
    data = (
        b'[{"text_a": "a", "text_b": "b", "label": -1}, {"text_a": "c", "text_b": "d", "label": 0.25}, {"text_a": "e", "text_b": "f", '
        b'"label": null}]'
    )
    _, frame, _ = _pairs(data, "pairs.json")
    assert frame[constants.COL_LABEL].tolist() == ["-1", "0.25", ""]


# ------------------------------------------------------------------ point 7: nesting and surrogates


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "deep.json"),
        (b'{"text_a": "x", "text_b": "y"}\n{"text_a": ' + b"[" * 100_000 + b"]" * 100_000 + b', "text_b": "y"}\n', "deep.jsonl"),
        (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "deep.json"),
    ],
    ids=["array", "jsonl-line-2", "objects"],
)
def test_deep_nesting_is_a_reader_error(data, filename):
    with pytest.raises(PairsFileError, match="nested too deeply for the JSON parser"):
        parse_pairs(data, filename)


def test_lone_surrogate_escapes_become_replacement_characters_with_a_note():
    data = (
        b'{"text_a": "caf\\ud800e", "text_b": "x"}\n{"text_a": "c", "text_b": "d\\udfff"}\n{"text_a": "\\ud83d\\ude00", "text_b": "pair"}\n'
    )
    _, frame, notes = _pairs(data, "pairs.jsonl")
    assert frame[constants.COL_TEXT_A].tolist() == ["caf\ufffde", "c", "😀"]  # a proper pair stays an emoji
    assert frame[constants.COL_TEXT_B].tolist() == ["x", "d\ufffd", "pair"]
    assert "rows 1, 2 held \\ud800-style escapes (half of a character, not valid Unicode): each was read as U+FFFD (\ufffd)" in notes
    for text in [*frame[constants.COL_TEXT_A], *frame[constants.COL_TEXT_B]]:
        text.encode("utf-8")  # nothing left that cannot be encoded


# ------------------------------------------------------------------ point 12: say what was found


def test_a_json_object_wrapping_the_records_says_what_was_found():
    data = json.dumps({"pairs": [{"text_a": "a", "text_b": "b"}], "version": 2}, indent=2).encode()
    with pytest.raises(PairsFileError) as err:
        parse_pairs(data, "pairs.json")
    message = str(err.value)
    assert message.startswith("the file holds one JSON object with keys 'pairs', 'version', and its 'pairs' holds 1 record(s)")
    assert "save the list under 'pairs' on its own" in message
    assert "not valid JSON" not in message


def test_a_pretty_printed_single_record_is_one_pair():
    data = json.dumps({"text_a": "a", "text_b": "b"}, indent=2).encode()
    _, frame, _ = _pairs(data, "pairs.json")
    assert frame[constants.COL_TEXT_A].tolist() == ["a"]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b'["a", "b"]', "record 1 is a string, not an object"),
        (b'"just a string"', "line 1 holds a string, not an object"),
        (b'{"a": 1} trailing', "invalid JSON: Extra data at line 1"),
        (b"[]", "the JSON holds no records"),
        (b'{"text_a": "x", "text_b": "y"}\n[1, 2]\n', "line 2 holds an array, not an object"),
    ],
)
def test_json_that_is_not_records_says_what_it_is(data, said):
    with pytest.raises(PairsFileError, match=said.replace("[", r"\[")):
        parse_pairs(data, "pairs.json")


def test_a_symlink_loop_is_not_reported_as_missing(tmp_path):
    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    with pytest.raises(PairsFileError) as err:
        read_pairs_file(loop)
    assert "symbolic link loop" in str(err.value) and "No such file" not in str(err.value)


def test_duplicate_column_names_after_stripping_stay_distinct():
    parsed, frame, _ = _pairs(b"text_a ,text_a,text_b\nx,y,z\n")
    assert list(parsed.frame.columns) == ["text_a", "text_a.1", "text_b"]
    assert frame[constants.COL_TEXT_B].tolist() == ["z"]


def test_five_thousand_columns_are_named_a_few_and_counted():
    header = ",".join(["text_a", "text_b", *(f"extra_column_{i}" for i in range(4998))])
    row = ",".join(["A cat sat", "A dog sat", *("x" for _ in range(4998))])
    _, _, notes = _pairs(f"{header}\n{row}\n".encode())
    [note] = [n for n in notes if n.startswith("ignored")]
    assert (
        note
        == "ignored 4,998 column(s) not chosen in the column boxes: " + ", ".join(f"extra_column_{i}" for i in range(8)) + " and 4,990 more"
    )
    with pytest.raises(PairsFileError) as info:
        apply_mapping(
            parse_pairs(f"{header}\n{row}\n".encode(), "wide.csv"), {constants.COL_TEXT_A: "no_such_column", constants.COL_TEXT_B: "text_b"}
        )
    assert len(str(info.value)) < 400 and "and 4,992 more" in str(info.value)
