"""The store's own filters (``--store-filter COLUMN=VALUE``): hostile values read the right rows and write nothing.

Each store holds 60 passages of the shipped corpus tagged with one of three
``source`` values, two of them hostile (a quote with SQL after it, unicode).
Filtering on each value reads exactly its rows, the store's own search
returns only those rows, the store is unchanged after, and an unknown column
is one line.  ``--mitigate`` with ``--store`` is refused in one line saying why.
"""

from __future__ import annotations

import pytest
from store_support import build_chroma, build_lance, build_pg, folder_digest, table_fingerprint

from core.models.registry import MINILM_L6
from core.stores.audit import audit_store
from core.stores.base import StoreError, parse_filters
from core.stores.kinds import open_store
from core.stores.retrieval import retrieval_through_store

N = 60
HOSTILE = ["x'; DROP TABLE passages; --", 'it\'s "quoted" \\ 100%', "Ünïcödé ✓ 日本語 \u200b"]
QUERIES = ["not able to do something", "a feeling of great happiness"]


def _sources(n: int) -> list[str]:
    return [HOSTILE[i % len(HOSTILE)] for i in range(n)]


def _make(kind, tmp_path, pg, texts, vectors, sources):
    if kind == "lancedb":
        return build_lance(tmp_path / "kb.lance", texts, vectors, source=sources), lambda: folder_digest(tmp_path / "kb.lance")
    if kind == "chroma":
        uri = build_chroma(tmp_path / "chroma", texts, vectors, ef_search=500, source=sources)
        return uri, lambda: folder_digest(tmp_path / "chroma")
    table = f"kb_filter_{tmp_path.name[-8:].lower().replace('-', '_')}"
    return build_pg(pg, table, texts, vectors, source=sources), lambda: table_fingerprint(pg, table)


def test_parse_filters():
    assert parse_filters(["source=a=b", " lang =en", "empty="]) == {"source": "a=b", "lang": "en", "empty": ""}
    assert parse_filters(None) == {}
    for bad, says in (("novalue", "a store filter is COLUMN=VALUE"), ("=x", "a store filter is COLUMN=VALUE")):
        with pytest.raises(StoreError, match=says):
            parse_filters([bad])
    with pytest.raises(StoreError, match="names 'a' more than once"):
        parse_filters(["a=1", "a=2"])


@pytest.mark.parametrize("kind", ["lancedb", "chroma", "pgvector"])
def test_hostile_filter_values_read_the_right_rows_and_write_nothing(kind, tmp_path, pg, stored):
    texts, vectors = stored[0][:N], stored[1][:N]
    sources = _sources(N)
    uri, state = _make(kind, tmp_path, pg, texts, vectors, sources)
    before = state()
    for value in HOSTILE:
        want = [t for t, s in zip(texts, sources, strict=True) if s == value]
        handle = open_store(uri, exact=kind != "chroma", filters={"source": value})
        try:
            result = audit_store(handle, MINILM_L6, 0.5, queries=QUERIES)
            # The store's own search ranks only the filtered rows: every row it returns carries the value.
            found = handle.search(vectors[:5], 30)
        finally:
            handle.close()
        assert result.exact.passages == want == result.through_store.passages
        assert {t for row in found for t in row} <= set(want) and all(len(row) == len(want) for row in found)
        assert result.store_pairs == result.exact_pairs
        assert result.query_recall == 1.0
        assert result.filters == {"source": value} and result.as_dict()["filters"] == {"source": value}
        assert result.notes[0] == f"store filter source = {value!r}: {len(want)} row(s) read"
    assert state() == before  # nothing written, nothing dropped: the folder byte for byte, the table row for row


@pytest.mark.parametrize("kind", ["lancedb", "chroma", "pgvector"])
def test_an_unknown_filter_column_is_one_line(kind, cli, tmp_path, pg, stored):
    texts, vectors = stored[0][:N], stored[1][:N]
    uri, _ = _make(kind, tmp_path, pg, texts, vectors, _sources(N))
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--store-filter", "nope=1", "--quiet")
    assert (code, out) == (2, "")
    what = "metadata key" if kind == "chroma" else "column"
    assert err.startswith(f"error: the store filter names 'nope', which is not a {what}; its {what}s: ") and err.count("\n") == 1
    assert "source" in err


def test_the_filter_through_the_cli_and_its_refusals(cli, tmp_path, stored):
    texts, vectors = stored[0][:N], stored[1][:N]
    sources = _sources(N)
    uri = build_lance(tmp_path / "kb.lance", texts, vectors, source=sources)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    code, out, err = cli(
        "retrieval", "--store", uri, "--queries", str(queries), "--models", MINILM_L6, "--store-filter", f"source={HOSTILE[0]}", "--json"
    )
    assert code == 0, err
    assert f"store filter source = {HOSTILE[0]!r}: 20 row(s) read" in err
    assert '"n_passages": 20' in out and '"filters": {' in out
    code, out, err = cli(
        "retrieval", "--store", uri, "--queries", str(queries), "--models", MINILM_L6, "--store-filter", "source=none", "--quiet"
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: the store holds 0 passage(s) with a vector in 'text'/'vector'; an audit needs at least 2 "
        "(after the store filter source = 'none')\n"
    )
    code, _, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--store-filter", "source")
    assert code == 2 and err == "error: a store filter is COLUMN=VALUE, got 'source'\n"
    code, _, err = cli("audit", "--corpus", "x.txt", "--store-filter", "source=a")
    assert code == 2 and "--store-filter go(es) with --store URI" in err


def test_mitigate_with_store_is_refused_saying_why(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:10], vectors[:10])
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    code, out, err = cli("retrieval", "--store", uri, "--queries", str(queries), "--models", MINILM_L6, "--mitigate", "bm25")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("error: --mitigate does not run with --store: the mitigations rescore the whole corpus by its text")
    assert "--corpus FILE --queries FILE" in err


def test_retrieval_through_a_filtered_store_ranks_only_its_rows(tmp_path, stored):
    texts, vectors = stored[0][:N], stored[1][:N]
    sources = _sources(N)
    uri = build_lance(tmp_path / "kb.lance", texts, vectors, source=sources)
    handle = open_store(uri, exact=True, filters={"source": HOSTILE[2]})
    try:
        result = retrieval_through_store(handle, MINILM_L6, QUERIES)
    finally:
        handle.close()
    assert result.n_passages == 20 and result.filters == {"source": HOSTILE[2]}
    assert result.recall == {1: 1.0, 5: 1.0, 10: 1.0} and result.same_first == 1.0


@pytest.mark.parametrize("binary", ["binary", "binary-rescore"])
def test_pgvector_binary_search_sees_only_the_filtered_rows(binary, tmp_path, pg, stored):
    # The binary queries take the same bound WHERE as the read: a hostile value ranks only its own rows.
    texts, vectors = stored[0][:N], stored[1][:N]
    sources = _sources(N)
    uri, state = _make("pgvector", tmp_path, pg, texts, vectors, sources)
    before = state()
    value = HOSTILE[0]
    want = {t for t, s in zip(texts, sources, strict=True) if s == value}
    handle = open_store(uri, binary=binary, filters={"source": value})
    try:
        found = handle.search(vectors[:5], 30)
    finally:
        handle.close()
    assert all(set(row) == want for row in found)  # k above the filtered count: every filtered row, no other
    assert state() == before
