"""Retrieval inputs from uploaded bytes: pairs files, the wide format, corpus and queries files."""

from __future__ import annotations

import pytest

from core import constants
from core.probes.retrieval.suite import RETRIEVAL_FILE, RetrievalSuiteError, load_retrieval_suite, read_text_list
from core.probes.retrieval.uploads import suite_from_bytes, texts_from_bytes

PAIRS = (
    "query,passage,category\n"
    "Is the patient allergic?,The patient has a penicillin allergy.,paraphrase\n"
    "Is the patient allergic?,The patient is not allergic to penicillin.,negation\n"
    "Is the patient allergic?,The patient was allergic to penicillin.,temporal\n"
    "How much was paid?,The firm paid 5 million.,positive\n"
    "How much was paid?,The firm paid 50 million.,numerical\n"
    "A lone query,A passage without a paraphrase.,negation\n"
    "A lone query,Something unrelated.,negative\n"
)


def test_pairs_file_groups_by_text_a():
    suite = suite_from_bytes(PAIRS.encode(), "my pairs.csv")
    assert suite.name == "my pairs"
    p = suite.passages
    # Two groups have a paraphrase and a variant; the lone query has no paraphrase and is dropped.
    assert len(suite.group_ids) == 2
    first = p[p[constants.COL_GROUP_ID] == suite.group_ids[0]]
    assert list(first[constants.COL_ROLE]) == ["anchor", "paraphrase", "variant", "variant"]
    assert list(first[constants.COL_TEXT])[:2] == ["Is the patient allergic?", "The patient has a penicillin allergy."]
    assert list(first[constants.COL_MODE])[2:] == ["negation", "temporal"]
    assert suite.queries.empty
    assert any("negative" in n for n in suite.notes) and any("dropped 1 text_a group" in n for n in suite.notes)


def test_pairs_file_without_a_category_column_says_what_to_add():
    with pytest.raises(RetrievalSuiteError, match="no category column"):
        suite_from_bytes(b"text_a,text_b\nOne,Two\nThree,Four\n", "plain.csv")


def test_pairs_file_with_nothing_to_rank():
    with pytest.raises(RetrievalSuiteError, match="nothing to rank"):
        suite_from_bytes(b"text_a,text_b,category\nOne,Two,negation\n", "p.csv")


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [(b"", "e.csv", "empty"), (b"PK\x03\x04rest", "book.csv", "Excel"), (b"\x00\x01\x02" * 50, "bin.csv", "binary"), (b"only\none column\n", "one.csv", "one column")],
)
def test_unusable_pairs_files(data, name, message):
    with pytest.raises(RetrievalSuiteError, match=message):
        suite_from_bytes(data, name)


def test_the_shipped_file_uploaded_reads_as_the_suite():
    uploaded = suite_from_bytes(RETRIEVAL_FILE.read_bytes(), "retrieval.csv")
    shipped = load_retrieval_suite()
    assert uploaded.group_ids == shipped.group_ids
    assert uploaded.passages.equals(shipped.passages)
    assert uploaded.queries.equals(shipped.queries)
    assert uploaded.notes == ()  # the shipped suite breaks no rule


def test_wide_format_missing_columns():
    with pytest.raises(RetrievalSuiteError, match="lacks the retrieval columns"):
        suite_from_bytes(b"anchor,paraphrase\nA,B\n", "wide.csv")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("c.txt", "First passage.\n\nSecond passage, with a comma.\nFirst passage.\n"),
        ("c.csv", "id,passage\n1,Alpha\n2,Beta\n"),
        ("c.jsonl", '{"text": "Alpha"}\n{"text": "Beta"}\n'),
        ("c.json", '["Alpha", "Beta"]'),
    ],
)
def test_texts_from_bytes_reads_as_read_text_list(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert texts_from_bytes(content.encode("utf-8"), name, "corpus") == read_text_list(path, "corpus")


def test_texts_from_bytes_latin1_is_noted_once():
    texts, notes = texts_from_bytes("Café crème\nNaïve\n".encode("latin-1"), "q.txt", "queries")
    assert texts == ["Café crème", "Naïve"]
    assert sum("latin" in n for n in notes) == 1


@pytest.mark.parametrize(("data", "message"), [(b"", "empty"), (b"\n \n", "empty"), (b"a,b\n1,2\n", "name the text column")])
def test_texts_from_bytes_refuses(data, message):
    with pytest.raises(RetrievalSuiteError, match=message):
        texts_from_bytes(data, "q.csv" if b"," in data else "q.txt", "queries")


def test_upload_arguments_are_checked():
    with pytest.raises(ValueError, match="bytes"):
        texts_from_bytes("text", "q.txt", "queries")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        suite_from_bytes(b"a", " ")
    with pytest.raises(ValueError, match="kind"):
        texts_from_bytes(b"a\n", "q.txt", "passages")
    with pytest.raises(RetrievalSuiteError, match="limit"):
        texts_from_bytes(b"a" * (constants.MAX_UPLOAD_MB * 1024 * 1024 + 1), "big.txt", "corpus")


def test_a_field_over_the_csv_limit_is_read_as_the_pairs_reader_reads_it():
    # Issue 23.5: one reader; pandas has no 128 KiB field limit, so a long passage is a passage.
    data = ("text\n" + "a" * 200_000 + "\n").encode()
    texts, _ = texts_from_bytes(data, "c.csv", "corpus")
    assert texts == ["a" * 200_000]
