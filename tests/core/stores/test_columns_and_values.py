"""What a store holds that the readers must not misread: an id taken as the text, filters on typed values, vector types
not read yet, vectors far from unit length, repeated ids, a Chroma folder with links, a damaged LanceDB folder."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from store_support import build_chroma, build_lance, folder_digest

from core.models.registry import MINILM_L6
from core.stores import lance
from core.stores.base import StoreError, finish_rows, pick_column, rows_reader
from core.stores.kinds import open_store

N = 30


def test_an_id_column_is_never_taken_as_the_text(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:N], vectors[:N], columns={"text": None})
    with pytest.raises(StoreError) as err:
        open_store(uri)
    assert str(err.value) == "the store has no text column (string columns: id); name one with --text-column"
    code, out, err_text = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert (code, out) == (2, "")
    assert err_text == "error: the store has no text column (string columns: id); name one with --text-column\n"
    for name in ("doc_id", "uuid", "chunk-key", "ID"):
        with pytest.raises(StoreError, match="no text column"):
            pick_column("text", None, [name], ("text",), "--text-column", skip_ids=True)
    assert pick_column("text", None, ["id", "body"], ("text",), "--text-column", skip_ids=True) == "body"
    assert pick_column("text", "id", ["id"], ("text",), "--text-column", skip_ids=True) == "id"  # named: the user's word


def test_lancedb_filters_read_booleans_and_numbers_as_their_type(tmp_path, stored):
    texts, vectors = stored
    flags = [i % 3 == 0 for i in range(N)]
    pages = [i % 4 for i in range(N)]
    uri = build_lance(
        tmp_path / "kb.lance", texts[:N], vectors[:N], columns={"flag": flags, "page": pages, "score": [p / 2 for p in pages]}
    )
    for filters, want in (
        ({"flag": "true"}, [t for t, f in zip(texts, flags, strict=False) if f]),
        ({"flag": "False"}, [t for t, f in zip(texts, flags, strict=False) if not f]),
        ({"page": "1"}, [t for t, p in zip(texts, pages, strict=False) if p == 1]),
        ({"score": "1.5"}, [t for t, p in zip(texts, pages, strict=False) if p == 3]),
    ):
        handle = open_store(uri, exact=True, filters=filters)
        try:
            assert handle.read().passages == want
            assert {t for row in handle.search(vectors[:2], N) for t in row} == set(want)
        finally:
            handle.close()
    for filters, says in (
        ({"flag": "maybe"}, "the store filter: 'flag' holds booleans; 'maybe' is not true or false"),
        ({"page": "one"}, "the store filter: 'page' holds integers; 'one' is not one"),
    ):
        with pytest.raises(StoreError) as err:
            open_store(uri, filters=filters)
        assert str(err.value) == says


def test_chroma_filters_read_numbers_and_booleans_as_their_type(tmp_path, stored):
    texts, vectors = stored
    metas = [{"page": i % 4, "flag": i % 3 == 0, "score": (i % 4) / 2, "source": "a" if i % 2 else "b"} for i in range(N)]
    uri = build_chroma(tmp_path / "chroma", texts[:N], vectors[:N], ef_search=500, metadatas=metas)
    for filters, keep in (
        ({"page": "1"}, lambda m: m["page"] == 1),
        ({"flag": "true"}, lambda m: m["flag"]),
        ({"score": "1.5"}, lambda m: m["score"] == 1.5),
        ({"page": "2", "source": "b"}, lambda m: m["page"] == 2 and m["source"] == "b"),
    ):
        want = [t for t, m in zip(texts, metas, strict=False) if keep(m)]
        handle = open_store(uri, filters=filters)
        try:
            assert handle.read().passages == want
            assert {t for row in handle.search(vectors[:2], N) for t in row} == set(want)
        finally:
            handle.close()
    with pytest.raises(StoreError) as err:
        open_store(uri, filters={"page": "x1"})
    assert str(err.value) == "the store filter: 'page' holds integers; 'x1' is not one"


def test_vector_types_not_read_yet_are_said_before_any_work(tmp_path, stored, pg):
    texts, vectors = stored
    # (LanceDB casts a list column named vector or embedding to fixed-size floats as it writes it: another name stays a list.)
    double = pa.array(vectors[:N].astype(np.float64).tolist(), type=pa.list_(pa.float64()))
    uri = build_lance(tmp_path / "kb.lance", texts[:N], vectors[:N], columns={"vector": None, "vec64": double})
    with pytest.raises(StoreError) as err:
        open_store(uri)
    assert str(err.value) == (
        "the vector column 'vec64' is list<double>, which is not read yet: the store's vectors are read from LanceDB "
        "fixed_size_list<float> columns"
    )
    with pg.connect() as conn:
        for table, sql_type in (("kb_half", "halfvec(384)"), ("kb_real", "real[]")):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"CREATE TABLE {table} (id bigserial, text text, embedding {sql_type})")
            conn.execute(f"INSERT INTO {table} (text, embedding) VALUES ('a', %s), ('b', %s)", ([0.1] * 384, [0.2] * 384))
            with pytest.raises(StoreError) as err:
                open_store(pg.uri(table))
            said = sql_type.split("(")[0]
            assert str(err.value) == (
                f"the vector column 'embedding' is {said}, which is not read yet: the store's vectors are read from pgvector's "
                "vector columns"
            )


@pytest.mark.parametrize("scale", [1e25, 1e-30])
def test_vectors_far_from_unit_length_say_why_the_stores_search_finds_nothing(scale, cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:N], vectors[:N] * np.float32(scale))
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {N} of the {N} stored vectors in 'vector' have lengths far from 1 ")
    assert "the store's own search returns nothing for them" in err and err.count("\n") == 1
    chroma = build_chroma(tmp_path / "chroma", texts[:N], vectors[:N] * np.float32(scale))
    code, _, err = cli("audit", "--store", chroma, "--models", MINILM_L6, "--quiet")
    assert code == 2 and "reads back so from a store that normalises in float32" in err  # Chroma keeps NaN or zeros for them


def test_repeated_ids_get_a_note_and_the_check_says_how_many_it_read(cli, tmp_path, stored):
    texts, vectors = stored
    rows = rows_reader(5, "text", "vector")
    rows.add_rows(["a", "a", "b", "c", "c"], ["t1", "t2", "t3", "t4", "t5"], vectors[:5])
    got = finish_rows(rows, "text", "vector")
    assert got.notes == ["2 id(s) name more than one row: rows are matched by their text, never their id, so each text is read once"]
    ids = [f"p{i // 2}" for i in range(N)]
    uri = build_lance(tmp_path / "kb.lance", texts[:N], vectors[:N], columns={"id": ids})
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert f"note: {N // 2} id(s) name more than one row" in err
    assert f"model check: MiniLM-L6 re-encoded 20 of {N} stored passages of lancedb://" in out


def test_a_chroma_folder_is_copied_without_links_or_other_files(tmp_path, stored, monkeypatch):
    texts, vectors = stored
    folder = tmp_path / "chroma"
    uri = build_chroma(folder, texts[:N], vectors[:N])
    big = tmp_path / "elsewhere"
    big.mkdir()
    (big / "huge.bin").write_bytes(b"\0" * 1_000_000)
    (folder / "linked").symlink_to(big)
    (folder / "backup.tar").write_bytes(b"\0" * 100_000)
    before = folder_digest(folder)
    copied: list[str] = []
    real_open = open_store

    def spy(*args, **kwargs):
        handle = real_open(*args, **kwargs)
        copied.extend(str(p.relative_to(handle._copy / "store")) for p in (handle._copy / "store").rglob("*"))
        return handle

    handle = spy(uri)
    try:
        assert len(handle.read().passages) == N
    finally:
        handle.close()
    assert "chroma.sqlite3" in copied and not [p for p in copied if p.startswith(("linked", "backup"))]
    assert folder_digest(folder) == before
    link_db = tmp_path / "linkdb"
    link_db.mkdir()
    (link_db / "chroma.sqlite3").symlink_to(folder / "chroma.sqlite3")
    with pytest.raises(StoreError, match="its chroma.sqlite3 is a link, which is not followed"):
        open_store(f"chroma://{link_db}?collection=passages")


def test_a_damaged_lancedb_folder_and_a_rust_panic_are_one_line(cli, tmp_path, stored):
    texts, vectors = stored
    folder = tmp_path / "kb.lance"
    uri = build_lance(folder, texts[:N], vectors[:N])
    data = next((folder / "passages.lance" / "data").glob("*.lance"))
    data.write_bytes(data.read_bytes()[:50])
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: LanceDB cannot read the folder {folder}: lance error: ") and err.count("\n") == 1
    assert ".rs:" not in err and "/rustc/" not in err

    class PanicException(BaseException):  # pyo3's panic type derives from BaseException, as this does
        pass

    with pytest.raises(StoreError) as caught, lance.lance_errors(folder):
        raise PanicException("rust future panicked: unknown error\nstack backtrace: ...")
    assert str(caught.value) == f"LanceDB cannot read the folder {folder}: rust future panicked: unknown error"
    with pytest.raises(KeyboardInterrupt), lance.lance_errors(folder):
        raise KeyboardInterrupt


def test_a_model_id_of_ten_thousand_characters_is_cut(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:N], vectors[:N])
    code, out, err = cli("audit", "--store", uri, "--models", "x" * 10_000, "--quiet")
    assert (code, out) == (2, "")
    assert len(err) < 300 and "(10,000 characters)" in err and err.count("\n") == 1
