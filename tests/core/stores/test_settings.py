"""index-settings --store: a LanceDB folder's stored vectors under each index setting, pairs and queries (core/stores/settings.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from store_support import build_lance, folder_digest

from core.models.cache import EmbeddingCache
from core.models.encode import embedding_matrix, encode_texts
from core.models.registry import MINILM_L6
from core.probes.index_settings import parse_setting, setting_scores
from core.stats.similarity import pairwise_cos_sim
from core.stores.settings import METRIC_TOP_CHANGED, PROBE_STORE_QUERIES

QUERIES = ["not able to do something", "a feeling of great happiness", "lacking the necessary skill", "very old", "easy to see"]
NEW = ("a text the store does not hold", "another text it does not hold either")


def test_pairs_and_queries_scored_with_the_stores_vectors_under_each_setting(cli, tmp_path, stored, minilm):
    texts, vectors = stored
    folder = tmp_path / "kb.lance"
    uri = build_lance(folder, texts, vectors)
    before = folder_digest(folder)
    pairs = tmp_path / "pairs.csv"
    stored_pairs = [(texts[i], texts[i + 1]) for i in range(0, 20, 2)]
    pd.DataFrame([*stored_pairs, NEW], columns=["text_a", "text_b"]).to_csv(pairs, index=False)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    out = tmp_path / "settings.csv"
    argv = ("index-settings", "--store", uri, "--models", MINILM_L6, "--pairs", str(pairs), "--queries", str(queries), "--quiet")
    code, stdout, err = cli(*argv, "--settings", "float32,binary,dims:32", "--out", str(out))
    assert code == 0, err
    assert folder_digest(folder) == before  # read only
    assert "note: 2 of the 22 pair texts are not in the store: their vectors are MiniLM-L6's, encoded now" in err
    assert "model check: MiniLM-L6 re-encoded 20 of 120 stored passages" in stdout and "vectors from lancedb://" in stdout
    table = pd.read_csv(out)
    # float32: the mean cosine of ten pairs of stored vectors and one pair the model encoded now.
    row = table.query("setting == 'float32' and metric == 'mean_score'")
    index = {t: i for i, t in enumerate(texts)}
    a = vectors[[index[x] for x, _ in stored_pairs]]
    b = vectors[[index[y] for _, y in stored_pairs]]
    cache = EmbeddingCache(None)
    try:
        fresh, _ = encode_texts(minilm, list(NEW), cache)
    finally:
        cache.close()
    new = embedding_matrix(fresh, list(NEW))
    want = np.append(pairwise_cos_sim(a, b), pairwise_cos_sim(new[:1], new[1:]))
    assert row["n"].item() == 11 and abs(row["value"].item() - want.mean()) < 1e-5
    ranked = table[table["probe"] == PROBE_STORE_QUERIES].set_index(["setting", "metric"])["value"]
    assert ranked[("float32", METRIC_TOP_CHANGED)] == 0.0 and ranked[("float32", "recall_at_10")] == 1.0
    # What binary does to the queries' top 10 over the 120 stored passages, computed here from the stored vectors.
    assert 0.0 <= ranked[("binary", "recall_at_10")] < 1.0
    assert ranked[("binary", METRIC_TOP_CHANGED)] > 0.0
    assert ("dims:32", "recall_at_5") in ranked.index


def test_store_settings_bad_input_is_one_line(cli, tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:12], vectors[:12])
    for argv, message in (
        (("--store", uri, "--models", MINILM_L6), "--store needs --pairs FILE or --queries FILE"),
        (("--store", uri, "--models", MINILM_L6, "--suite", "failure-modes"), "leave out --suite"),
        (("--queries", "q.txt"), "--queries go(es) with --store URI"),
        (("--store", uri, "--queries", "q.txt", "--models", MINILM_L6), "queries file q.txt: cannot read q.txt"),
    ):
        code, out, err = cli("index-settings", *argv, "--quiet")
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
        assert message in err


def test_binary_ranking_of_the_queries_is_what_setting_scores_gives():
    rng = np.random.default_rng(0)
    passages, queries = rng.standard_normal((40, 16)), rng.standard_normal((6, 16))
    from core.stores.settings import query_setting_rows

    rows = query_setting_rows(queries, passages, [parse_setting("float32"), parse_setting("binary")], model="m", n_resamples=200)
    exact = np.argsort(-setting_scores(parse_setting("float32"), queries, passages), axis=1, kind="stable")[:, :10]
    got = np.argsort(-setting_scores(parse_setting("binary"), queries, passages), axis=1, kind="stable")[:, :10]
    want = np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got, exact, strict=True)])
    value = rows.query("setting == 'binary' and metric == 'recall_at_10'")["value"].item()
    assert abs(value - want) < 1e-12 and value < 1.0


def test_a_corpus_without_queries_ranks_each_passage_over_the_others():
    """Leave-one-out by hand: passage i's top 10 over the other passages, binary's against float32's."""
    from core.probes.vector_settings import CORPUS_SELF_QUERIES, corpus_setting_rows

    rng = np.random.default_rng(1)
    passages = rng.standard_normal((30, 16))
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    settings = [parse_setting("float32"), parse_setting("binary")]
    rows = corpus_setting_rows(passages, settings, model="m", probe="kb", n_resamples=200)

    def top(name: str) -> np.ndarray:
        scores = setting_scores(parse_setting(name), passages, passages).astype(float)
        np.fill_diagonal(scores, -np.inf)  # a passage is never its own neighbour
        return np.argsort(-scores, axis=1, kind="stable")[:, :10]

    exact, got = top("float32"), top("binary")
    assert not (exact == np.arange(30)[:, None]).any()
    for k in (1, 5, 10):
        want = np.mean([len(set(g[:k]) & set(e[:k])) / k for g, e in zip(got, exact, strict=True)])
        value = rows.query(f"setting == 'binary' and metric == 'recall_at_{k}'")["value"].item()
        assert abs(value - want) < 1e-12
    assert rows.query("setting == 'float32'")["value"].tolist() == [0.0, 1.0, 1.0, 1.0]
    assert set(rows["n"]) == {30}
    # A larger corpus: a seeded sample of its passages are the queries, the same on every run.
    big = rng.standard_normal((CORPUS_SELF_QUERIES + 40, 8))
    big /= np.linalg.norm(big, axis=1, keepdims=True)
    first, again = (corpus_setting_rows(big, settings, model="m", probe="kb", n_resamples=50, seed=3) for _ in range(2))
    assert set(first["n"]) == {CORPUS_SELF_QUERIES} and first.equals(again)
