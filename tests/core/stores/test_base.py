"""A collection as read: repeats, blanks and missing vectors dropped with notes; mixed dimensions and too few passages one line."""

from __future__ import annotations

import numpy as np
import pytest

from core.files.vectors import VectorsError
from core.stores.base import StoreError, finish_rows, pick_column, rows_reader


def collection_from_rows(ids, texts, vectors, text_column: str, vector_column: str):
    """Rows read as one batch, as a store's reader reads each batch."""
    rows = rows_reader(len(ids), text_column, vector_column)
    rows.add_rows(ids, texts, vectors)
    return finish_rows(rows, text_column, vector_column)


def test_rows_are_kept_once_with_notes():
    v = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], None, [np.nan, 1.0], [0.0, 0.0], [2.0, 1.0]]
    texts = ["a  b", "c", "a b", "d", "e", "f", "   "]
    got = collection_from_rows(list(range(7)), texts, v, "text", "vector")
    assert got.passages == ["a b", "c"] and got.ids == ["0", "1"] and got.rows == 7
    assert got.vectors.dtype == np.float32 and got.vectors.shape == (2, 2)
    assert got.notes == [
        "1 row(s) dropped: blank or not text",
        "1 row(s) dropped: repeated text",
        "3 row(s) dropped: no vector or a non-finite one",
    ]


def test_mixed_dimensions_and_too_few_passages_are_one_line():
    with pytest.raises(VectorsError, match="holds vectors of 2 and of 3 dimensions"):
        collection_from_rows([1, 2], ["a", "b"], [[1.0, 0.0], [1.0, 0.0, 0.0]], "text", "vector")
    with pytest.raises(StoreError, match=r"holds 1 passage\(s\) with a vector in 'text'/'vector'; an audit needs at least 2"):
        collection_from_rows([1, 2], ["a", "a"], [[1.0, 0.0], [1.0, 0.0]], "text", "vector")


def test_pick_column():
    assert pick_column("text", None, ["body"], ("text",), "--text-column") == "body"
    assert pick_column("text", None, ["id", "text"], ("text",), "--text-column") == "text"
    with pytest.raises(StoreError, match=r"several vector columns \(a, b\); name one with --vector-column"):
        pick_column("vector", None, ["a", "b"], ("vector",), "--vector-column")
    with pytest.raises(StoreError, match="has no text column; name one with --text-column"):
        pick_column("text", None, [], ("text",), "--text-column")
