"""A store read within bounds (counted and refused before any vector is read) and its search said in the right words.

The neighbour cap (each passage's k nearest) is apart from the index's
approximation: an exact flat search with a small k loses pairs to the cap
alone, and its index recall within the cap is 1.  Every command asks the
store for the same depth per query.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from store_support import build_chroma, build_lance, build_pg

from core.audit.neighbours import close_pairs, top_k
from core.audit.search import SearchReport, compare_with_exact, pairs_from_neighbours, wilson_interval
from core.files import vectors as vf
from core.models.registry import MINILM_L6
from core.stats.overlap import top_k_overlap
from core.stores.base import StoreError
from core.stores.kinds import open_store


@pytest.mark.parametrize("kind", ["lancedb", "chroma", "pgvector"])
def test_a_store_too_large_is_refused_from_its_count_before_any_vector_is_read(kind, tmp_path, pg, stored, monkeypatch):
    texts, vectors = stored
    if kind == "lancedb":
        uri = build_lance(tmp_path / "kb.lance", texts, vectors)
    elif kind == "chroma":
        uri = build_chroma(tmp_path / "chroma", texts, vectors)
    else:
        uri = build_pg(pg, f"kb_cap_{tmp_path.name[-6:].lower().replace('-', '_')}", texts, vectors)
    module = {"lancedb": "lance", "chroma": "chroma", "pgvector": "pgvector"}[kind]

    def read_nothing(*args, **kwargs):
        raise AssertionError("the bulk read started before the size was checked")

    monkeypatch.setattr(f"core.stores.{module}.rows_reader", read_nothing)
    monkeypatch.setattr(vf, "MAX_VECTOR_BYTES", 100 * 384 * 4)
    handle = open_store(uri)
    try:
        with pytest.raises(StoreError) as info:
            handle.read()
    finally:
        handle.close()
    assert str(info.value) == (
        "the store holds 120 rows of 384 dimensions: 0.2 MiB of float32 vectors, above the 0.1 MiB the audit keeps in memory "
        "(at 384 dimensions, 100 rows); filter it or sample it"
    )


def test_the_stores_vectors_arrive_as_one_float32_array_of_unit_rows(tmp_path, stored):
    texts, vectors = stored
    handle = open_store(build_lance(tmp_path / "kb.lance", texts, vectors * 3.0))
    try:
        got = handle.read()
    finally:
        handle.close()
    assert got.vectors.dtype == np.float32 and got.vectors.flags.c_contiguous and got.vectors.shape == (120, 384)
    np.testing.assert_allclose(np.linalg.norm(got.vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(got.vectors, vectors, atol=1e-6)


def test_the_neighbour_cap_is_apart_from_the_index():
    # Passage 0 has four neighbours above 0.5 (1-4), each of them only passage 0: with k = 2 an exact search of each
    # passage's 2 nearest finds 0-1 and 0-2 from passage 0, and 0-3, 0-4 from their own ends: nothing is out of reach.
    # Passages 5-8 are four mutual neighbours (6 pairs), each with 3 neighbours: k = 2 leaves pairs out of reach.
    rng = np.random.default_rng(0)
    base = rng.standard_normal((2, 16))
    star = np.vstack([base[0], base[0] + 0.3 * rng.standard_normal((4, 16))])
    clique = base[1] + 0.2 * rng.standard_normal((4, 16))
    unit = np.vstack([star, clique]).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    exact = close_pairs(unit, 0.5)
    k = 2
    nearest, _ = top_k(unit, unit, k + 1)
    flat = pairs_from_neighbours(unit, nearest, 0.5, 1_000)  # an exact flat scan, capped at k neighbours per passage
    report = compare_with_exact(SearchReport("flat scan", k), flat, exact, unit.shape[0])
    assert report.exact_pairs_in_sample == exact.i.size
    assert report.recall < 1.0  # the cap alone loses pairs ...
    assert report.index_recall == 1.0  # ... the search itself loses none within it
    assert report.within_cap == flat.i.size < exact.i.size
    assert report.crowded >= 1
    words = report.sentence()
    assert f"leaves {exact.i.size - flat.i.size:,} of the {exact.i.size:,} exact pairs out of reach of any 2-neighbour search" in words
    assert f"the index found 100.0% of the {flat.i.size:,} within the cap" in words


def test_wilson_interval_and_top_k_overlap_by_hand():
    low, high = wilson_interval(8, 10)
    z = 1.959963984540054
    centre, half = (0.8 + z * z / 20) / (1 + z * z / 10), z / (1 + z * z / 10) * np.sqrt(0.8 * 0.2 / 10 + z * z / 400)
    assert low == pytest.approx(centre - half, abs=1e-9) and high == pytest.approx(centre + half, abs=1e-9)
    report = SearchReport("faiss", 32, 0.8, 100, 10, low, high)
    assert f"recall against exact search on a sample of 100 passages (10 exact pairs): 80.0% (95% Wilson interval {low:.1%} to " in (
        report.sentence()
    )
    np.testing.assert_allclose(top_k_overlap([[1, 2, 3], [4]], [[3, 2, 9], [4, 5, 6]], 2), [0.5, 0.5])


def test_every_command_asks_the_store_for_one_depth_per_query(tmp_path, stored, monkeypatch):
    from core.stores.audit import QUERY_DEPTH, audit_store
    from core.stores.lance import LanceStore
    from core.stores.retrieval import retrieval_through_store

    texts, vectors = stored
    asked: list[tuple[int, int]] = []
    search = LanceStore.search

    def recorded(self, queries, k):
        asked.append((len(queries), k))
        return search(self, queries, k)

    monkeypatch.setattr(LanceStore, "search", recorded)
    queries = ["not able to do something", "a feeling of great happiness", "lacking the necessary skill"]
    handle = open_store(build_lance(tmp_path / "kb.lance", texts, vectors), exact=True)
    try:
        audit_store(handle, MINILM_L6, 0.7, queries=queries, k=8)
        retrieval_through_store(handle, MINILM_L6, queries)
    finally:
        handle.close()
    # The audit: every passage's 8 nearest (and itself); then the queries, as retrieval asks them.
    assert asked == [(120, 9), (3, QUERY_DEPTH), (3, QUERY_DEPTH)]


def test_store_retrieval_rates_read_as_labels_and_percentages():
    """The store retrieval block's rates: a failure mode by its label and each search's rate as a percentage (it showed
    ``entity_swap`` and 0.125); by hand."""
    from core.stores.retrieval import rates_words

    rates = pd.DataFrame(
        {
            "mode": ["negation", "all", "negation", "all", "entity_swap"],
            "rate": [0.125, 0.25, 0.5, 1 / 3, 0.0],
            "search": ["exact", "exact", "store", "store", "store"],
        }
    )
    words = rates_words(rates)
    assert words.columns.tolist() == ["failure mode", "exact search", "the store's search"]
    assert words.to_dict("records") == [
        {"failure mode": "Negation", "exact search": "12.5%", "the store's search": "50.0%"},
        {"failure mode": "all modes", "exact search": "25.0%", "the store's search": "33.3%"},
        {"failure mode": "Entity/role swap", "exact search": "—", "the store's search": "0.0%"},
    ]
