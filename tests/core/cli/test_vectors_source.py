"""``--vectors FILE`` on audit, retrieval's corpus mode and index-settings: the same probes as a corpus, no model needed to audit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.models.encode import embedding_matrix, encode_texts
from core.models.registry import MINILM_L6

CORPUS = [
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The patient has diabetes.",
    "The patient does not have diabetes.",
    "Paris is the capital of France.",
    "Bananas are rich in potassium.",
    "The contract was signed before the merger.",
    "The contract was signed after the merger.",
    "The drug reduces pain.",
    "Water boils at 100 degrees.",
    "The train leaves at noon.",
    "The museum opens on Monday.",
]
QUERIES = ["How much of the drug should I take?", "Does the patient have diabetes?", "When does the train leave?"]


@pytest.fixture(scope="module")
def vectors(minilm) -> np.ndarray:
    found, _ = encode_texts(minilm, CORPUS, None)
    return embedding_matrix(found, CORPUS).astype(np.float32)


def _parquet(path, vectors: np.ndarray, texts=CORPUS) -> str:
    # As LanceDB and most pipelines write them: an id, the text, a fixed-size list of float32.
    pq.write_table(
        pa.table(
            {
                "id": [f"c{i}" for i in range(len(texts))],
                "text": list(texts),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1]),
            }
        ),
        path,
    )
    return str(path)


def test_audit_of_given_vectors_equals_the_corpus_audit_without_a_model(cli, tmp_path, vectors, monkeypatch):
    corpus = tmp_path / "kb.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    code, _, err = cli(
        "audit", "--corpus", str(corpus), "--models", MINILM_L6, "--threshold", "0.6", "--out", str(tmp_path / "a"), "--quiet"
    )
    assert code == 0, err
    file = _parquet(tmp_path / "v.parquet", vectors)
    import core.models.runs as runs

    def no_model(*args, **kwargs):
        raise AssertionError("no model may load to audit given vectors")

    monkeypatch.setattr(runs, "model_runs", no_model)
    code, out, err = cli("audit", "--vectors", file, "--threshold", "0.6", "--out", str(tmp_path / "b"), "--quiet")
    assert code == 0, err
    want = pd.read_parquet(tmp_path / "a" / "close-pairs.parquet")
    got = pd.read_parquet(tmp_path / "b" / "close-pairs.parquet")
    assert len(want) >= 3
    keys = ["text_a", "text_b", "kind", "mode"]
    assert got[keys].equals(want[keys])
    np.testing.assert_allclose(got["cosine"], want["cosine"], atol=1e-6)
    assert got["id_a"].str.startswith("c").all() and set(got["model"]) == {"vectors:v.parquet"}
    doc = json.loads((tmp_path / "b" / "summary.json").read_text(encoding="utf-8"))
    assert doc["sources"][0]["file"].endswith("v.parquet") and len(doc["sources"][0]["sha256"]) == 64
    assert "vectors:v.parquet" in out


def test_audit_of_given_vectors_with_queries_checks_the_model(cli, tmp_path, vectors):
    file = _parquet(tmp_path / "v.parquet", vectors)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    code, out, err = cli("audit", "--vectors", file, "--queries", str(queries), "--threshold", "0.6", "--quiet")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "--queries with --vectors needs --models NAME: the model that made the vectors encodes them" in err
    code, out, err = cli("audit", "--vectors", file, "--queries", str(queries), "--threshold", "0.6", "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert "model check: MiniLM-L6 re-encoded 12 of the 12 passages of v.parquet: cosine with their given vectors 1.0000 to 1.0000" in out
    assert "queries whose top 5 holds a passage and its twin" in out
    other = np.random.default_rng(0).standard_normal(vectors.shape).astype(np.float32)
    code, out, err = cli("audit", "--vectors", _parquet(tmp_path / "o.parquet", other), "--models", MINILM_L6, "--quiet")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("error: the given vectors were not made by MiniLM-L6: re-encoding 12 given passages gives cosines")


def test_bad_vectors_files_are_one_line_on_every_command(cli, tmp_path, vectors):
    bad = vectors.copy()
    bad[3, 7] = np.nan
    file = _parquet(tmp_path / "nan.parquet", bad)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    for argv in (
        ("audit", "--vectors", file),
        ("retrieval", "--vectors", file, "--queries", str(queries), "--models", MINILM_L6),
        ("index-settings", "--vectors", file, "--queries", str(queries), "--models", MINILM_L6),
    ):
        code, out, err = cli(*argv, "--quiet")
        assert (code, out) == (2, ""), argv
        assert err == "error: row 4 of the vectors file nan.parquet: its vector holds NaN or infinity\n", argv
    code, _, err = cli("audit", "--vectors", file, "--store-filter", "a=b", "--quiet")
    assert code == 2 and "--store-filter go(es) with --store URI" in err


def test_retrieval_and_index_settings_on_given_vectors(cli, tmp_path, vectors):
    file = _parquet(tmp_path / "v.parquet", vectors)
    queries = tmp_path / "q.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    code, out, err = cli("retrieval", "--vectors", file, "--queries", str(queries), "--models", MINILM_L6, "--quiet", "--json")
    assert code == 0, err
    doc = json.loads(out)["corpus"]
    assert doc["vectors"] == file and doc["n_passages"] == 12 and doc["n_queries"] == 3
    corpus = tmp_path / "kb.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    code, out, err = cli("retrieval", "--corpus", str(corpus), "--queries", str(queries), "--models", MINILM_L6, "--quiet", "--json")
    assert code == 0, err
    want = json.loads(out)["corpus"]
    # The same corpus mode on the same vectors: the same variants, scores and rates.
    got_pairs, want_pairs = pd.DataFrame(doc["pairs"]), pd.DataFrame(want["pairs"])
    assert len(want_pairs) >= 3
    words = ["query", "original", "mode", "variant", "outranks", "rank_original"]
    assert got_pairs[words].equals(want_pairs[words])
    np.testing.assert_allclose(got_pairs[["score_original", "score_variant"]], want_pairs[["score_original", "score_variant"]], atol=1e-6)
    assert [r["rate"] for r in doc["rates"]] == [r["rate"] for r in want["rates"]]
    code, _, err = cli("retrieval", "--vectors", file, "--queries", str(queries), "--quiet")
    assert code == 2 and "corpus mode with --vectors needs --models NAME" in err
    out_csv = tmp_path / "settings.csv"
    argv = ("index-settings", "--vectors", file, "--queries", str(queries), "--models", MINILM_L6, "--settings", "float32,binary")
    code, out, err = cli(*argv, "--out", str(out_csv), "--quiet")
    assert code == 0, err
    table = pd.read_csv(out_csv)
    ranked = table[table["probe"] == "vectors queries"].set_index(["setting", "metric"])["value"]
    assert ranked[("float32", "recall_at_10")] == 1.0 and ranked[("float32", "top10_changed")] == 0.0
    assert ("binary", "recall_at_5") in ranked.index
    assert "model check: MiniLM-L6 re-encoded 12 of the 12 passages of v.parquet" in out
