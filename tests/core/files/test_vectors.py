"""Vectors files (``--vectors FILE``): Parquet, Arrow and .npy read in batches into unit float32 rows; bad files one line each."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.files import vectors as vf
from core.files.vectors import PassageRows, VectorsError, read_vectors_file

TEXTS = ["the drug reduces pain", "the  drug reduces pain", "Paris is the capital of France", "", "bananas are rich in potassium"]


def _matrix(n: int = 5, d: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _table(vectors, texts=TEXTS, fixed: bool = True, ids: bool = True) -> pa.Table:
    arr = np.asarray(vectors, dtype=np.float32)
    if fixed:
        column = pa.FixedSizeListArray.from_arrays(pa.array(arr.reshape(-1)), arr.shape[1])
    else:
        column = pa.array([list(map(float, row)) for row in arr], type=pa.list_(pa.float64()))
    data = {"text": pa.array(list(texts), type=pa.string()), "vector": column}
    if ids:
        data = {"id": [f"doc-{i}" for i in range(len(texts))], **data}
    return pa.table(data)


def _check_read(got, m: np.ndarray, ids: list[str]) -> None:
    # Row 1 repeats row 0 in other spacing, row 3 is blank: both dropped, said in notes.
    assert got.passages == ["the drug reduces pain", "Paris is the capital of France", "bananas are rich in potassium"]
    assert got.ids == ids
    assert got.vectors.dtype == np.float32 and got.vectors.shape == (3, m.shape[1])
    np.testing.assert_allclose(got.vectors, _unit(m[[0, 2, 4]]), atol=1e-6)
    assert got.rows == 5
    assert got.notes == ["1 row(s) dropped: blank or not text", "1 row(s) dropped: repeated text"]


@pytest.mark.parametrize("fixed", [True, False])
def test_parquet_with_lists_or_fixed_size_lists(tmp_path, monkeypatch, fixed):
    m = _matrix()
    path = tmp_path / "v.parquet"
    pq.write_table(_table(m, fixed=fixed), path, row_group_size=2)
    monkeypatch.setattr(vf, "BATCH_ROWS", 2)  # several batches: rows counted across them
    _check_read(read_vectors_file(path), m, ["doc-0", "doc-2", "doc-4"])


def test_arrow_file_and_stream(tmp_path):
    m = _matrix()
    table = _table(m, ids=False)
    file_path, stream_path = tmp_path / "v.arrow", tmp_path / "s.arrow"
    with pa.OSFile(str(file_path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=2):
            writer.write_batch(batch)
    with pa.OSFile(str(stream_path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    for path in (file_path, stream_path):
        _check_read(read_vectors_file(path), m, ["1", "3", "5"])


def test_npy_beside_its_text_file(tmp_path):
    m = _matrix()
    np.save(tmp_path / "v.npy", m.astype(np.float64))
    (tmp_path / "v.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    _check_read(read_vectors_file(tmp_path / "v.npy"), m, ["1", "3", "5"])


def test_named_columns_and_id_columns_never_taken_as_text(tmp_path):
    m = _matrix(3)
    table = pa.table(
        {
            "chunk_id": ["a", "b", "c"],
            "summary": ["one passage", "another passage", "a third"],
            "title": ["t", "t", "t"],
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(m.reshape(-1)), 4),
        }
    )
    pq.write_table(table, tmp_path / "v.parquet")
    with pytest.raises(VectorsError, match=r"has several text columns \(summary, title\); name one with --text-column"):
        read_vectors_file(tmp_path / "v.parquet")
    got = read_vectors_file(tmp_path / "v.parquet", text_column="summary", vector_column="emb")
    assert got.passages == ["one passage", "another passage", "a third"] and got.ids == ["a", "b", "c"]


def _bad(tmp_path, name: str, table: pa.Table) -> str:
    path = tmp_path / name
    pq.write_table(table, path)
    with pytest.raises(VectorsError) as info:
        read_vectors_file(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_bad_files_are_one_line(tmp_path):
    m = _matrix()
    nan = m.copy()
    nan[2, 1] = np.nan
    assert _bad(tmp_path, "nan.parquet", _table(nan)) == "row 3 of the vectors file nan.parquet: its vector holds NaN or infinity"
    zero = m.copy()
    zero[4] = 0
    assert _bad(tmp_path, "zero.parquet", _table(zero)) == "row 5 of the vectors file zero.parquet: its vector is all zeros"
    ragged = pa.table({"text": ["a", "b", "c"], "vector": pa.array([[1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0]])})
    assert "row 2: the column 'vector' holds vectors of 2 and of 3 dimensions (ragged lists)" in _bad(tmp_path, "r.parquet", ragged)
    missing = pa.array([[1.0, 0.0], None, [1.0, 1.0]], type=pa.list_(pa.float32()))
    assert _bad(tmp_path, "m.parquet", pa.table({"text": ["a", "b", "c"], "vector": missing})) == (
        "row 2 of the vectors file m.parquet: no vector in 'vector'"
    )
    no_vector = pa.table({"text": ["a", "b"], "n": [1, 2]})
    assert _bad(tmp_path, "nv.parquet", no_vector) == "the vectors file nv.parquet has no vector column; name one with --vector-column"
    no_text = pa.table({"id": ["a", "b"], "vector": pa.array([[1.0, 0.0], [0.0, 1.0]])})
    assert _bad(tmp_path, "nt.parquet", no_text) == "the vectors file nt.parquet has no text column; name one with --text-column"
    empty = _table(m[:0], texts=[])
    assert _bad(tmp_path, "e.parquet", empty) == "the vectors file e.parquet holds no row"
    one = _table(m[:2], texts=["same", "same "])
    assert "holds 1 passage(s) with a vector in 'text'/'vector'; an audit needs at least 2" in _bad(tmp_path, "o.parquet", one)
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(VectorsError, match=r"^x.parquet is not a readable parquet file"):
        read_vectors_file(tmp_path / "x.parquet")
    with pytest.raises(VectorsError, match=r"a vectors file is .parquet, .arrow or .feather"):
        read_vectors_file(tmp_path / "v.csv")


def test_bad_npy_files_are_one_line(tmp_path):
    np.save(tmp_path / "a.npy", _matrix(3))
    with pytest.raises(VectorsError, match=r"^a.npy needs its passages beside it: a.txt"):
        read_vectors_file(tmp_path / "a.npy")
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(VectorsError, match=r"^a.npy has 3 rows and a.txt 2 lines: give one line per row$"):
        read_vectors_file(tmp_path / "a.npy")
    np.save(tmp_path / "b.npy", np.zeros((2, 3, 4)))
    (tmp_path / "b.txt").write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(VectorsError, match=r"b.npy holds a 3-D float64 array; give an \(n, d\) matrix"):
        read_vectors_file(tmp_path / "b.npy")


def test_the_memory_cap_refuses_before_reading(tmp_path):
    m = _matrix(5, 4)
    pq.write_table(_table(m), tmp_path / "v.parquet")
    # 5 rows x 4 dims x 4 bytes = 80 bytes: a cap of 64 bytes refuses from the row count, in memory terms.
    with pytest.raises(
        VectorsError, match=r"holds 5 rows of 4 dimensions: 0.0 MiB of float32 vectors, above the 0.0 MiB .* \(at 4 dimensions, 4 rows\)"
    ):
        read_vectors_file(tmp_path / "v.parquet", max_bytes=64)
    assert read_vectors_file(tmp_path / "v.parquet", max_bytes=80).vectors.shape == (3, 4)


def test_rows_arriving_in_batches_keep_the_first_and_drop_with_notes_for_a_store():
    rows = PassageRows(4, what="the store")
    rows.add_rows(["a", "b"], ["x", "y"], [[1.0, 0.0], [np.nan, 1.0]])
    rows.add_rows(["c", "d"], ["x", "z"], [[0.0, 2.0], None])
    with pytest.raises(VectorsError, match=r"holds 1 passage\(s\)"):
        rows.finish()
    rows.add_rows(["e"], ["w"], [[3.0, 4.0]])  # more rows than counted: the buffer grows
    got = rows.finish()
    assert got.passages == ["x", "w"] and got.ids == ["a", "e"]
    np.testing.assert_allclose(got.vectors, [[1.0, 0.0], [0.6, 0.8]], atol=1e-7)
    assert got.notes == ["1 row(s) dropped: repeated text", "2 row(s) dropped: no vector or a non-finite one"]


def test_an_uploaded_files_bytes_read_as_the_file_and_a_bare_npy_is_refused():
    """The Index settings page's upload: the same passages and vectors as the file on disk; a .npy alone is one line."""
    import io

    m = _matrix()
    sink = io.BytesIO()
    pq.write_table(_table(m), sink)
    _check_read(vf.read_vectors_bytes(sink.getvalue(), "v.parquet"), m, ["doc-0", "doc-2", "doc-4"])
    with pytest.raises(VectorsError, match=r"^x\.npy: a \.npy matrix needs its passages beside it"):
        vf.read_vectors_bytes(b"\x93NUMPY", "x.npy")
    with pytest.raises(VectorsError, match=r"^bad\.parquet is not a readable parquet file"):
        vf.read_vectors_bytes(b"not parquet", "bad.parquet")
