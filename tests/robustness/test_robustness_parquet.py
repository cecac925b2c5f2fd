"""Parquet inputs to ``run``: a damaged page names the file, a real U+FFFD is not a decoding note,
list and struct cells are refused by name, never scored as their Python repr.  No model runs here."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import constants
from core.cli import main as cli
from core.files.chunks import ChunkTotals, iter_checked_chunks
from core.files.errors import PairsFileError


def _pairs(n: int = 400) -> pd.DataFrame:
    return pd.DataFrame(
        {"text_a": [f"The parquet cat number {i} sat" for i in range(n)], "text_b": [f"A parquet dog number {i} ran" for i in range(n)]}
    )


def _read(path, chunk_rows: int = 100) -> tuple[pd.DataFrame, ChunkTotals]:
    totals = ChunkTotals()
    frame = pd.concat(list(iter_checked_chunks(path, chunk_rows, totals=totals)), ignore_index=True)
    return frame, totals


def test_a_damaged_page_is_one_error_line_naming_the_file(tmp_path, capsys, monkeypatch):
    path = tmp_path / "damaged.parquet"
    pq.write_table(pa.Table.from_pandas(_pairs(), preserve_index=False), path, compression="snappy", row_group_size=100)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = b"\xff" * 64  # inside a column chunk: the footer still reads, a page does not
    path.write_bytes(bytes(data))
    with pytest.raises(PairsFileError, match="damaged Parquet page"):
        _read(path)
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    code = cli.main(["run", "--suite", str(path), "--out", str(tmp_path / "out"), "--quiet", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {path}: a damaged Parquet page")


def test_a_real_replacement_character_gets_no_decoding_note(tmp_path):
    path = tmp_path / "fffd.parquet"
    pairs = _pairs(3)
    pairs.loc[0, "text_a"] = "The sign \ufffd is a real character here"
    pairs.to_parquet(path)
    frame, totals = _read(path)
    assert "\ufffd" in frame.loc[0, constants.COL_TEXT_A]
    assert not [n for n in totals.notes if "not valid text" in n]


def test_list_and_struct_cells_are_refused_by_column_not_scored_as_repr(tmp_path):
    table = pa.table(
        {
            "text_a": pa.array([["a", "list"], ["another", "list"]]),
            "text_b": ["A plain text", "Another plain text"],
            "meta": pa.array([{"k": 1}, {"k": 2}]),
        }
    )
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    with pytest.raises(PairsFileError, match=r"column 'text_a' \(for text_a\) holds JSON objects or arrays, not text, in rows 1, 2"):
        _read(path)
    # A nested column that is not scored is only ignored.
    pq.write_table(table.set_column(0, "text_a", pa.array(["A cat", "A dog"])), path)
    frame, totals = _read(path)
    assert list(frame[constants.COL_TEXT_A]) == ["A cat", "A dog"]
    assert any(n.startswith("ignored 1 column(s)") and "meta" in n for n in totals.notes)
