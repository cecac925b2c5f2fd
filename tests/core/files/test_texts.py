"""A corpus or queries file goes through core/files with the pairs files' rules and messages naming the file."""

from __future__ import annotations

import json

import pytest

from core import constants
from core.cli import main as cli
from core.files.errors import PairsFileError
from core.files.texts import TEXT_COLUMNS, parse_texts, read_texts
from core.probes.retrieval.suite_files import is_wide_retrieval_file

GUESSES = ("text", "passage")


def test_deep_nesting_is_a_message_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(PairsFileError, match=r"corpus file deep\.json: .*nested too deeply"):
        read_texts(path, TEXT_COLUMNS["corpus"], what="corpus")


def test_a_lone_surrogate_is_replaced_with_a_note_naming_the_file():
    data = b'{"text": "caf\\ud800 au lait"}\n{"text": "tea"}\n'
    found = parse_texts(data, "c.jsonl", GUESSES, what="corpus")
    assert found.texts == ["caf\ufffd au lait", "tea"]
    assert any(n.startswith("c.jsonl:") and "U+FFFD" in n for n in found.notes)
    strings = parse_texts(b'["ok", "bad \\udc00"]', "c.json", GUESSES, what="corpus")
    assert strings.texts == ["ok", "bad \ufffd"]


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (json.dumps([{"text": None}, {"text": 3}, {"text": True}, {"text": "kept"}]).encode(), "c.json"),
        (b'{"text": 3.5}\n{"text": null}\n{"text": "kept"}\n', "c.jsonl"),
        (json.dumps(["kept", None, 4, {"a": 1}, ["x"]]).encode(), "c.json"),
    ],
)
def test_values_that_are_not_text_are_never_scored_as_their_repr(data, name):
    found = parse_texts(data, name, GUESSES, what="corpus")
    assert found.texts == ["kept"]
    assert not any(t in {"None", "3", "3.5", "True", "4", "{'a': 1}", "['x']"} for t in found.texts)


def test_a_field_of_objects_is_refused_naming_the_file():
    with pytest.raises(PairsFileError, match=r"corpus file c\.jsonl: field 'text' holds JSON objects"):
        parse_texts(b'{"text": {"a": 1}}\n', "c.jsonl", GUESSES, what="corpus")


def test_a_txt_file_whose_first_line_looks_like_json_is_lines():
    found = parse_texts(b"[1] The first passage.\n{draft} The second passage.\n", "c.txt", GUESSES, what="corpus")
    assert found.texts == ["[1] The first passage.", "{draft} The second passage."]


def test_a_first_field_over_128_kb_is_no_wide_header(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"text_a": "word " * 40_000, "text_b": "b", "category": "negation"}) + "\n")
    assert is_wide_retrieval_file(path) is False


def test_validate_and_retrieval_suite_do_not_crash_on_a_long_first_field(tmp_path, capsys):
    # "field larger than field limit" (exit 1) from the wide-format sniffing.
    path = tmp_path / "long.csv"
    path.write_text('text_a,text_b,category\n"' + "word " * 40_000 + '",b,negation\n')
    assert cli.main(["validate", str(path)]) in (0, 1)
    assert "field larger than field limit" not in capsys.readouterr().err
    code = cli.main(["retrieval", "--suite", str(path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "field larger" not in err and "nothing to rank" in err


def test_upload_limit_is_named():
    with pytest.raises(PairsFileError, match=r"queries file q\.txt: .*limit is"):
        parse_texts(b"a" * (constants.MAX_UPLOAD_MB * 1024 * 1024 + 1), "q.txt", GUESSES, what="queries")


# ------------------------------------------------------------------ a retrieval corpus or queries file, by path and by uploaded bytes


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("c.txt", "First passage.\n\nSecond passage, with a comma.\nFirst passage.\n", ["First passage.", "Second passage, with a comma."]),
        ("c.csv", 'text\n"One, quoted"\nTwo\n', ["One, quoted", "Two"]),
        ("c.csv", "id,passage\n1,Alpha\n2,Beta\n", ["Alpha", "Beta"]),
        ("c.tsv", "text\nA, with comma\n", ["A, with comma"]),
        ("c.jsonl", '{"text": "Alpha"}\n{"text": "Beta"}\n', ["Alpha", "Beta"]),
        ("c.json", '["Alpha", "Beta"]', ["Alpha", "Beta"]),
    ],
)
def test_read_texts(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    found = read_texts(path, TEXT_COLUMNS["corpus"], what="corpus")
    texts, notes = found.texts, found.notes
    assert texts == expected
    if name == "c.txt":
        assert any("dropped 1 empty" in n for n in notes) and any("removed 1 repeated" in n for n in notes)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("e.txt", "", "empty"),
        ("e.txt", "\n  \n", "empty"),
        ("e.csv", "a,b\n1,2\n", "name the text column"),
        ("e.jsonl", "{bad", "invalid JSON"),
    ],
)
def test_read_texts_refuses(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PairsFileError, match=message):
        read_texts(path, TEXT_COLUMNS["queries"], what="queries")


def test_read_texts_limits_rows(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("a\nb\nc\n", encoding="utf-8")
    with pytest.raises(PairsFileError, match="limit is 2"):
        read_texts(path, TEXT_COLUMNS["queries"], what="queries", max_rows=2)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("c.txt", "First passage.\n\nSecond passage, with a comma.\nFirst passage.\n"),
        ("c.csv", "id,passage\n1,Alpha\n2,Beta\n"),
        ("c.jsonl", '{"text": "Alpha"}\n{"text": "Beta"}\n'),
        ("c.json", '["Alpha", "Beta"]'),
    ],
)
def test_an_upload_reads_as_the_file_on_disk(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert parse_texts(content.encode("utf-8"), name, TEXT_COLUMNS["corpus"], what="corpus") == read_texts(
        path, TEXT_COLUMNS["corpus"], what="corpus"
    )


def test_latin1_is_noted_once():
    found = parse_texts("Café crème\nNaïve\n".encode("latin-1"), "q.txt", TEXT_COLUMNS["queries"], what="queries")
    assert found.texts == ["Café crème", "Naïve"]
    assert sum("latin" in n for n in found.notes) == 1


def test_a_field_over_the_csv_limit_is_read_as_the_pairs_reader_reads_it():
    # One reader; pandas has no 128 KiB field limit, so a long passage is a passage.
    data = ("text\n" + "a" * 200_000 + "\n").encode()
    assert parse_texts(data, "c.csv", TEXT_COLUMNS["corpus"], what="corpus").texts == ["a" * 200_000]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("c.txt", "A real passage.\n\u200b\u200d\n\u2060\ufeff \u200b\n"),
        ("c.csv", "text\nA real passage.\n\u200b\u200d\n\u2060\ufeff \u200b\n"),
        ("c.jsonl", '{"text": "A real passage."}\n{"text": "\\u200b\\u200d"}\n{"text": "\\u2060\\ufeff \\u200b"}\n'),
    ],
)
def test_invisible_only_texts_are_dropped_with_a_note(tmp_path, name, content):
    # A passage of zero-width characters only was ranked as a text, with no note.
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    found = read_texts(path, TEXT_COLUMNS["corpus"], what="corpus")
    assert found.texts == ["A real passage."]
    of = "" if name == "c.txt" else " of 'text'"
    assert (
        f"{name}: dropped 2 row(s){of} holding only invisible or control characters, nothing a model could read (rows 2, 3)" in found.notes
    )
