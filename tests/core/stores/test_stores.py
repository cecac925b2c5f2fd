"""The audit and the queries through LanceDB, Chroma and PostgreSQL + pgvector holding the shipped public corpus.

Through each store's exact search the audit equals the exact audit of the
same passages (:func:`core.audit.run.audit_corpus`); through pgvector's HNSW
index, searched with a small ``ef_search``, the difference is measured and
reported.  No store changes: a folder is byte-identical after, a table has
the same rows.  The named model is checked: other vectors are refused in one
line.
"""

from __future__ import annotations

import numpy as np
import pytest
from store_support import build_chroma, build_lance, build_pg, folder_digest, table_fingerprint

from core.audit.run import audit_corpus
from core.models.registry import MINILM_L6
from core.stores.audit import audit_store
from core.stores.kinds import open_store

THRESHOLD = 0.7
QUERIES = ["not able to do something", "a feeling of great happiness", "lacking the necessary skill"]
KEYS = ["text_a", "text_b", "kind", "mode"]


@pytest.fixture(scope="module")
def exact_audit(stored):
    texts, _ = stored
    return audit_corpus(texts, [MINILM_L6], THRESHOLD, queries=QUERIES)


def _make(kind, tmp_path, pg, texts, vectors) -> tuple[str, object]:
    """A store of ``kind`` holding the passages; its URI and a function giving its state (to show it did not change)."""
    if kind == "lancedb":
        return build_lance(tmp_path / "kb.lance", texts, vectors), lambda: folder_digest(tmp_path / "kb.lance")
    if kind == "chroma":
        # ef_search above the collection's size: Chroma's HNSW then visits every passage, an exact search in effect.
        return build_chroma(tmp_path / "chroma", texts, vectors, ef_search=500), lambda: folder_digest(tmp_path / "chroma")
    table = f"kb_{tmp_path.name[-8:].lower().replace('-', '_')}"
    return build_pg(pg, table, texts, vectors), lambda: table_fingerprint(pg, table)


@pytest.mark.parametrize("kind", ["lancedb", "chroma", "pgvector"])
def test_exact_search_through_each_store_equals_the_exact_audit(kind, tmp_path, pg, stored, exact_audit):
    texts, vectors = stored
    uri, state = _make(kind, tmp_path, pg, texts, vectors)
    before = state()
    handle = open_store(uri, exact=True)
    try:
        result = audit_store(handle, MINILM_L6, THRESHOLD, queries=QUERIES)
    finally:
        handle.close()
    assert state() == before  # nothing written: the folder byte for byte, the table row for row
    assert result.check.passed and min(result.check.cosines) > 0.9999
    want = exact_audit.pairs.reset_index(drop=True)
    assert len(want) > 5  # the slice has close pairs to compare
    for audit in (result.exact, result.through_store):
        got = audit.pairs.reset_index(drop=True)
        assert got[KEYS].equals(want[KEYS])
        np.testing.assert_allclose(got["cosine"], want["cosine"], atol=1e-6)
        np.testing.assert_array_equal(audit.top[result.model], exact_audit.top[result.model])
    assert result.pair_recall == 1.0 and result.query_recall == 1.0
    assert result.store_pairs == result.exact_pairs == len(want)


def test_hnsw_index_searched_with_a_small_ef_search_reports_the_difference(cli, pg, stored):
    texts, vectors = stored
    uri = build_pg(pg, "kb_hnsw", texts, vectors, hnsw=True)
    with pg.connect() as conn:
        # pgvector's HNSW returns at most ef_search rows: with 4 a passage sees at most 3 neighbours (the default, 40, sees 32).
        conn.execute("ALTER ROLE probe SET hnsw.ef_search = 4")
        # 120 rows: the planner would scan them all; a production-sized table would use the index, as this makes it.
        conn.execute("ALTER ROLE probe SET enable_seqscan = off")
    try:
        handle = open_store(uri)
        try:
            result = audit_store(handle, MINILM_L6, 0.5)
        finally:
            handle.close()
        assert result.method == "pgvector hnsw index, cosine distance"
        assert result.store_pairs < result.exact_pairs and result.pair_recall < 1.0
        code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--threshold", "0.5", "--quiet")
        assert code == 0, err
        assert (
            f"{result.store_pairs:,} close pairs against {result.exact_pairs:,} by exact search; recall against exact "
            f"{result.pair_recall:.1%}" in out
        )
        assert "twin_pairs_exact  twin_pairs_store" in out
        code, out, _ = cli("audit", "--store", uri, "--models", MINILM_L6, "--threshold", "0.5", "--quiet", "--store-search", "exact")
        assert "pgvector exact scan (no index scan)" in out and "recall against exact 100.0%" in out
    finally:
        with pg.connect() as conn:
            conn.execute("ALTER ROLE probe RESET ALL")


def test_binary_search_in_pgvector_reports_the_difference_and_writes_nothing(cli, tmp_path, pg, stored):
    texts, vectors = stored
    table = "kb_binary"
    uri = build_pg(pg, table, texts, vectors)
    before = table_fingerprint(pg, table)
    handle = open_store(uri, binary="binary")
    try:
        result = audit_store(handle, MINILM_L6, 0.5, queries=QUERIES)
    finally:
        handle.close()
    assert result.method.startswith("pgvector binary quantization (Hamming distance <~> of binary_quantize(vector)")
    # One sign bit per dimension reorders neighbours: on 120 rows each passage's 32 nearest by Hamming still hold its close
    # pairs, but the queries' top 5 differ from exact.
    assert result.pair_recall <= 1.0 and result.query_recall < 1.0
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    argv = ("audit", "--store", uri, "--models", MINILM_L6, "--threshold", "0.5", "--quiet", "--queries", str(queries), "--store-search")
    code, out, err = cli(*argv, "binary")
    assert code == 0, err
    assert f"recall against exact {result.pair_recall:.1%}; each query's top 5 recall {result.query_recall:.1%}" in out
    assert "twin_pairs_exact  twin_pairs_store" in out
    code, out, err = cli(*argv, "binary-rescore")
    assert code == 0, err
    assert "shortlist rescored by cosine distance of the stored vectors" in out
    rescored = float(out.split("each query's top 5 recall ")[1].split("%")[0]) / 100
    assert result.query_recall < rescored <= 1.0  # rescoring the Hamming shortlist in float wins neighbours back
    assert table_fingerprint(pg, table) == before  # a query-time expression: no index built, no row touched
    lance = build_lance(tmp_path / "kb.lance", texts[:10], vectors[:10])
    code, out, err = cli("audit", "--store", lance, "--models", MINILM_L6, "--quiet", "--store-search", "binary")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--store-search binary is a query-time binary search (PostgreSQL + pgvector); LanceDB has no query-time binary search" in err


def test_vectors_of_another_model_are_refused_in_one_line(cli, tmp_path, stored):
    texts, vectors = stored
    other = np.random.default_rng(0).standard_normal(vectors.shape).astype(np.float32)
    uri = build_lance(tmp_path / "other.lance", texts, other)
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert code == 2 and out == ""
    assert err.startswith("error: the stored vectors were not made by MiniLM-L6: re-encoding 20 stored passages gives cosines")
    assert err.count("\n") == 1
    small = build_lance(tmp_path / "small.lance", texts, vectors[:, :16])
    code, _, err = cli("audit", "--store", small, "--models", MINILM_L6, "--quiet")
    assert code == 2 and "the stored vectors have 16 dimensions and MiniLM-L6 makes 384" in err


def test_store_needs_one_named_model_and_its_flags_need_a_store(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:10], vectors[:10])
    code, _, err = cli("audit", "--store", uri, "--quiet")
    assert code == 2 and "--store needs --models NAME" in err
    code, _, err = cli("audit", "--corpus", "x.txt", "--text-column", "body")
    assert code == 2 and "--text-column go(es) with --store URI" in err
    code, _, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--text-column", "body")
    assert code == 2 and "the store has no text column 'body'; its text columns: id, text" in err


def test_retrieval_through_the_store(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts, vectors)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    code, out, err = cli(
        "retrieval", "--store", uri, "--queries", str(queries), "--models", MINILM_L6, "--quiet", "--store-search", "exact"
    )
    assert code == 0, err
    assert "recall@1 1.000, recall@5 1.000, recall@10 1.000; same first passage for 100.0%" in out
    assert "first passage by exact search vs by the store" in out
    code, _, err = cli("retrieval", "--store", uri, "--models", MINILM_L6)
    assert code == 2 and "--store needs --queries FILE" in err


def test_a_table_the_user_may_not_read_is_one_line(cli, pg, stored):
    texts, vectors = stored
    build_pg(pg, "kb_private", texts[:10], vectors[:10])
    with pg.connect() as conn:
        conn.execute("DROP ROLE IF EXISTS reader")
        conn.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw-0000'")
    uri = f"postgresql://reader:reader-pw-0000@127.0.0.1:{pg.port}/postgres?table=kb_private"
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert (code, out) == (2, "")
    assert err == "error: the database 'postgres' has no table 'kb_private' this user can read\n"
