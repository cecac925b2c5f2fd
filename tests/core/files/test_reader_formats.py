"""Pairs files of any size read in chunks: CSV/TSV, JSON Lines, JSON arrays and Parquet, checked chunk by chunk."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import constants
from core.files import chunks as chunks_module
from core.files.chunks import ChunkTotals, iter_checked_chunks
from core.files.errors import PairsFileError
from core.files.reader import read_pairs_file

N = 23
ROWS = [{"premise": f"The cat number {i} sat here.", "hypothesis": f"A dog number {i} ran there.", "label": str(i % 2)} for i in range(N)]


def _write(folder, fmt: str, rows=ROWS):
    path = folder / f"pairs.{fmt}"
    frame = pd.DataFrame(rows)
    if fmt == "tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path


def _streamed(path, chunk_rows=5, **kw) -> tuple[list[pd.DataFrame], ChunkTotals]:
    totals = ChunkTotals()
    return list(iter_checked_chunks(path, chunk_rows, totals=totals, whole_read_bytes=0, **kw)), totals


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl", "json", "parquet"])
def test_every_format_streams_in_chunks_of_the_asked_size(tmp_path, fmt):
    got, totals = _streamed(_write(tmp_path, fmt))
    assert [len(c) for c in got] == [5, 5, 5, 5, 3]  # 23 rows, 5 a chunk
    allp = pd.concat(got, ignore_index=True)
    assert list(allp[constants.COL_TEXT_A]) == [r["premise"] for r in ROWS]
    assert list(allp[constants.COL_TEXT_B]) == [r["hypothesis"] for r in ROWS]
    assert list(allp[constants.COL_LABEL]) == [r["label"] for r in ROWS]
    # Row ids count from the file's first row, not from each chunk's.
    assert list(allp[constants.COL_PAIR_ID]) == [f"row-{i + 1}" for i in range(N)]
    assert (totals.rows_read, totals.pairs_kept) == (N, N)


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "json"])
def test_streamed_chunks_hold_what_the_whole_file_reader_reads(tmp_path, fmt):
    path = _write(tmp_path, fmt)
    whole, _notes = read_pairs_file(path)
    got, _ = _streamed(path, chunk_rows=4)
    pd.testing.assert_frame_equal(pd.concat(got, ignore_index=True)[list(whole.columns)], whole, check_dtype=False)


def test_a_small_file_is_read_whole_and_sliced(tmp_path):
    path = _write(tmp_path, "tsv")
    got = list(iter_checked_chunks(path, 10))
    assert [len(c) for c in got] == [10, 10, 3]


def test_duplicates_and_mirrors_across_chunks_are_found(tmp_path):
    rows = [*ROWS[:6], ROWS[1], {"premise": ROWS[2]["hypothesis"], "hypothesis": ROWS[2]["premise"], "label": "0"}]
    got, totals = _streamed(_write(tmp_path, "tsv", rows), chunk_rows=3)
    allp = pd.concat(got, ignore_index=True)
    assert len(allp) == 7  # 8 rows, the repeat of row 2 dropped
    assert totals.mirrored == [("row-8", "row-3")]
    assert any("1 duplicate pair(s)" in n for n in totals.notes)
    assert any("sides swapped" in n for n in totals.notes)
    dropped, totals2 = _streamed(_write(tmp_path, "tsv", rows), chunk_rows=3, drop_mirrored=True)
    assert len(pd.concat(dropped)) == 6 and totals2.dropped == ["row-8"]


def test_repeated_ids_across_chunks_are_made_unique(tmp_path):
    rows = [{**r, "id": "same" if i in (0, 4) else f"id{i}"} for i, r in enumerate(ROWS[:6])]
    got, totals = _streamed(_write(tmp_path, "jsonl", rows), chunk_rows=3)
    ids = list(pd.concat(got)[constants.COL_PAIR_ID])
    assert len(set(ids)) == 6 and ids[0] == "same" and ids[4] == "same-row5"
    assert any("repeat an id of an earlier chunk" in n for n in totals.notes)


def test_column_flags_map_a_streamed_file(tmp_path):
    rows = [{"x": r["premise"], "y": r["hypothesis"], "z": r["label"]} for r in ROWS]
    got, _ = _streamed(
        _write(tmp_path, "parquet", rows), columns={constants.COL_TEXT_A: "y", constants.COL_TEXT_B: "x", constants.COL_LABEL: "z"}
    )
    allp = pd.concat(got, ignore_index=True)
    assert allp[constants.COL_TEXT_A][0] == ROWS[0]["hypothesis"] and allp[constants.COL_LABEL][1] == "1"


def test_a_json_array_element_split_across_read_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks_module, "_JSON_BLOCK_CHARS", 17)  # every object straddles a block boundary
    got, _ = _streamed(_write(tmp_path, "json"), chunk_rows=6)
    assert list(pd.concat(got)[constants.COL_TEXT_A]) == [r["premise"] for r in ROWS]


def test_empty_rows_in_a_chunk_are_dropped_and_noted(tmp_path):
    rows = [*ROWS[:3], {"premise": "", "hypothesis": "x y z", "label": "1"}, *ROWS[3:5]]
    got, totals = _streamed(_write(tmp_path, "tsv", rows), chunk_rows=2)
    assert sum(len(c) for c in got) == 5
    assert any("dropped 1 row(s) with an empty text" in n for n in totals.notes)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[{"text_a": "a", "text_b": ', "invalid JSON"),
        ("", "empty"),
    ],
)
def test_broken_files_end_in_one_pairs_file_error(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(PairsFileError, match=fragment):
        _streamed(path)


def test_not_parquet_is_a_pairs_file_error(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"not parquet at all")
    with pytest.raises(PairsFileError, match="not a readable Parquet file"):
        _streamed(path)


@pytest.mark.parametrize("kind", ["binary", "large_binary", "dictionary"])
def test_parquet_bytes_columns_are_read_as_utf8_text(tmp_path, kind):
    """Hive, Impala and older Spark write text as bytes without the UTF-8 annotation: the text is scored, never ``b'...'``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def column(values):
        if kind == "dictionary":
            return pa.array(values, pa.binary()).dictionary_encode()
        return pa.array(values, getattr(pa, kind)())

    texts_a = [r["premise"].replace("cat", "café") for r in ROWS]
    bytes_b = [r["hypothesis"].encode("utf-8") for r in ROWS]
    for i in (7, 13):
        bytes_b[i] = f"A dog \xff number {i} ran there.".encode("latin-1")  # not UTF-8
    blobs = [bytes([0xFF, i]) for i in range(N)]  # an unmapped bytes column: never noted
    table = pa.table(
        {
            "premise": column([t.encode("utf-8") for t in texts_a]),
            "hypothesis": column(bytes_b),
            "blob": column(blobs),
            "uuid": pa.array([bytes(16)] * N, pa.binary(16)),
            "label": [r["label"] for r in ROWS],
        }
    )
    path = tmp_path / "bytes.parquet"
    pq.write_table(table, path)

    got, totals = _streamed(
        path, columns={constants.COL_TEXT_A: "premise", constants.COL_TEXT_B: "hypothesis", constants.COL_LABEL: "label"}
    )
    allp = pd.concat(got, ignore_index=True)
    assert list(allp[constants.COL_TEXT_A]) == texts_a
    assert [allp[constants.COL_TEXT_B][i] for i in (7, 13)] == [f"A dog \ufffd number {i} ran there." for i in (7, 13)]
    assert list(allp[constants.COL_TEXT_B].drop(index=[7, 13])) == [r["hypothesis"] for i, r in enumerate(ROWS) if i not in (7, 13)]
    assert not allp[constants.COL_TEXT_B].str.startswith("b'").any()
    # One note for the whole file (rows 8 and 14 are in different chunks), none for the unmapped blob column.
    notes = [n for n in totals.notes if "not valid UTF-8" in n]
    assert notes == [
        "column 'hypothesis' holds bytes, read as UTF-8: rows 8, 14 are not valid UTF-8; each bad byte was read as U+FFFD (\ufffd)"
    ], totals.notes


def test_a_note_on_bytes_that_are_not_utf8_counts_past_the_rows_it_names(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = [f"Sentence {i} \xff".encode("latin-1") for i in range(N)]
    pq.write_table(pa.table({"text_a": pa.array(bad, pa.binary()), "text_b": [r["hypothesis"] for r in ROWS]}), tmp_path / "bad.parquet")
    _, totals = _streamed(tmp_path / "bad.parquet")
    notes = [n for n in totals.notes if "not valid UTF-8" in n]
    assert notes == [
        f"column 'text_a' holds bytes, read as UTF-8: rows {', '.join(str(r) for r in range(1, 11))}, and {N - 10} more are not valid "
        "UTF-8; "
        "each bad byte was read as U+FFFD (\ufffd)"
    ]


def test_chunk_rows_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="chunk_rows must be at least 1"):
        list(iter_checked_chunks(_write(tmp_path, "tsv"), 0))


# ---------------------------------------------------------------- Objects of records, sentence columns first


def _captions(n: int) -> dict[str, dict[str, object]]:
    return {
        str(i): {
            "filename": f"img_{i:04d}.jpg",
            "caption": f"A brown dog number {i} runs across the park.",
            "negative_caption": f"A brown dog number {i} does not run across the park.",
            "width": 640,
        }
        for i in range(n)
    }


@pytest.mark.parametrize("indent", [None, 2])
def test_an_object_of_records_is_read_as_records_with_its_keys_as_ids(tmp_path, indent):
    from core.files.reader import parse_pairs

    records = _captions(4)
    data = json.dumps({f"k{i}": r for i, r in enumerate(records.values())}, indent=indent).encode()
    parsed = parse_pairs(data, "captions.json")
    assert list(parsed.frame.columns) == ["id", "filename", "caption", "negative_caption", "width"] and len(parsed.frame) == 4
    assert any("one JSON object of 4 record(s) keyed by 'k0', 'k1', 'k2', …" in n for n in parsed.notes)
    path = tmp_path / "captions.json"
    path.write_bytes(data)
    pairs, notes = read_pairs_file(path)
    assert pairs[constants.COL_PAIR_ID].tolist() == ["k0", "k1", "k2", "k3"]  # the keys are the pairs' ids
    assert pairs[constants.COL_TEXT_A].tolist()[0] == "A brown dog number 0 runs across the park."
    assert pairs[constants.COL_TEXT_B].tolist()[0] == "A brown dog number 0 does not run across the park."
    note = next(n for n in notes if n.startswith("no column is named"))
    assert "using 'caption' as text_a and 'negative_caption' as text_b, the columns holding sentences" in note
    assert "'filename' (file names)" in note and "'width' (numbers)" in note


def test_keys_go_to_a_free_column_and_pandas_columns_orient_is_read_too():
    from core.files.reader import parse_pairs

    with_ids = {k: {**v, "id": f"own-{k}"} for k, v in _captions(3).items()}
    parsed = parse_pairs(json.dumps(with_ids).encode(), "x.json")
    assert parsed.frame["key"].tolist() == ["0", "1", "2"] and parsed.frame["id"].tolist() == ["own-0", "own-1", "own-2"]
    columns = pd.DataFrame(list(_captions(3).values())).to_json()  # pandas' default orient: {"caption": {"0": …}, …}
    parsed = parse_pairs(columns.encode(), "x.json")
    assert len(parsed.frame) == 3 and parsed.frame.loc[2, "caption"] == "A brown dog number 2 runs across the park."
    assert any("2" in n and "keyed by row" in n for n in parsed.notes)


def test_a_single_record_with_a_nested_value_stays_one_record():
    from core.files.reader import parse_pairs

    parsed = parse_pairs(json.dumps({"text_a": "One cat sleeps.", "text_b": "A cat sleeps.", "meta": {"src": "x"}}).encode(), "one.json")
    assert len(parsed.frame) == 1 and parsed.nested == {"meta": [1]}


def test_a_large_pretty_printed_object_of_records_streams_in_chunks(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_captions(700), indent=2), encoding="utf-8")
    totals = ChunkTotals()
    got = pd.concat(list(iter_checked_chunks(path, 100, totals=totals)), ignore_index=True)
    assert len(got) == 700 and got[constants.COL_TEXT_A].iloc[699] == "A brown dog number 699 runs across the park."
    assert any("keyed by '0', '1', '2', …" in n for n in totals.notes)


def test_column_guess_prefers_sentences_over_ids_file_names_links_and_numbers():
    from core.files.reader import guess_mapping, text_columns

    frame = pd.DataFrame(
        {
            "uid": ["a1", "a2"],
            "path": ["x/1.png", "x/2.png"],
            "url": ["https://a.b/1", "https://a.b/2"],
            "n": ["3", "4"],
            "tag": ["cat", "dog"],
            "short": ["A cat.", "A dog runs."],
            "long": ["The black cat sleeps on the warm mat.", "A small dog runs in the green park."],
        }
    )
    ranked, skipped = text_columns(frame, list(frame.columns))
    assert ranked == ["long", "short"]
    assert skipped == {"uid": "ids", "path": "file names", "url": "links", "n": "numbers", "tag": "single words"}
    mapping = guess_mapping(list(frame.columns), frame)
    assert (mapping[constants.COL_TEXT_A], mapping[constants.COL_TEXT_B]) == ("short", "long")  # the two sentence columns, in file order
    assert guess_mapping(list(frame.columns))[constants.COL_TEXT_A] == "uid"  # without values: the first free column, as before
