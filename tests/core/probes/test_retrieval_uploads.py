"""A retrieval suite from uploaded bytes: pairs files and the wide format (corpus and queries files: tests/core/files/test_texts.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants, lexicon
from core.probes.retrieval.suite import RetrievalSuiteError
from core.probes.retrieval.suite_files import RETRIEVAL_FILE, load_retrieval_suite, suite_from_bytes

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
    [
        (b"", "e.csv", "empty"),
        (b"PK\x03\x04rest", "book.csv", "Excel"),
        (b"\x00\x01\x02" * 50, "bin.csv", "binary"),
        (b"only\none column\n", "one.csv", "one column"),
    ],
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


def test_wide_upload_without_some_mode_columns_scores_the_modes_it_has():
    # The shipped file without its direction and hedging columns (a file from before direction existed).
    shipped = pd.read_csv(RETRIEVAL_FILE, dtype=str, keep_default_na=False)
    older = shipped.drop(columns=["direction", constants.CAT_HEDGING])
    older = older[~older[constants.COL_QUERY_MODE].isin(["direction", constants.CAT_HEDGING])]
    suite = suite_from_bytes(older.to_csv(index=False).encode(), "older.csv")
    modes = set(suite.passages[constants.COL_MODE]) - {""}
    assert modes == set(lexicon.FAILURE_MODES) - {"direction", constants.CAT_HEDGING}
    assert suite.group_ids == list(older[constants.COL_GROUP_ID])


def test_upload_arguments_are_checked():
    with pytest.raises(ValueError, match="bytes"):
        suite_from_bytes("text_a,text_b", "p.csv")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        suite_from_bytes(b"a", " ")
    with pytest.raises(RetrievalSuiteError, match="limit"):
        suite_from_bytes(b"a" * (constants.MAX_UPLOAD_MB * 1024 * 1024 + 1), "big.csv")
