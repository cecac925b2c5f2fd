"""The BEIR probe with the real MiniLM: figures equal pytrec_eval's, chunking changes nothing, the cache is used."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core import constants, lexicon
from core.cli import main as cli
from core.files.beir import read_beir
from core.files.triples import read_triples
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from core.probes.retrieval.beir import run_beir
from core.probes.retrieval.triples import run_triples

BEIR = PROJECT_ROOT / "data" / "samples" / "nli-beir"
TRIPLES = PROJECT_ROOT / "data" / "samples" / "nli-triples.csv"
FIGURES = ("recall_at_1", "recall_at_5", "recall_at_10", "mrr_at_10", "ndcg_at_10")


@pytest.fixture(scope="module")
def folder():
    return read_beir(BEIR)


@pytest.fixture(scope="module")
def result(folder, minilm):
    return run_beir(folder, [MINILM_L6], chunk_rows=7)


def test_figures_equal_pytrec_eval(folder, result, minilm):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from core.models.encode import embedding_matrix, encode_texts

    chunks = list(folder.corpus_chunks(1000))
    ids, texts = chunks[0].ids, chunks[0].texts
    qids = list(folder.queries)
    vectors, _ = encode_texts(minilm, [*texts, *folder.queries.values()], None)
    scores = embedding_matrix(vectors, [folder.queries[q] for q in qids]) @ embedding_matrix(vectors, texts).T
    run = {q: {d: float(s) for d, s in zip(ids, row, strict=True)} for q, row in zip(qids, scores, strict=True)}
    top10 = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:10]) for q, docs in run.items()}
    full = pytrec_eval.RelevanceEvaluator(folder.qrels, {"recall.1,5,10", "ndcg_cut.10"}).evaluate(run)
    rr = pytrec_eval.RelevanceEvaluator(folder.qrels, {"recip_rank"}).evaluate(top10)
    ranks = result.ranks.set_index("query_id")
    for q in qids:
        for k in (1, 5, 10):
            assert ranks.loc[q, f"recall_at_{k}"] == pytest.approx(full[q][f"recall_{k}"], abs=1e-6)
        assert ranks.loc[q, "ndcg_at_10"] == pytest.approx(full[q]["ndcg_cut_10"], abs=1e-6)
        assert ranks.loc[q, "mrr_at_10"] == pytest.approx(rr[q]["recip_rank"], abs=1e-6)
    assert result.ranking[constants.COL_N_PASSAGES].iloc[0] == 46


def test_chunk_size_changes_nothing(folder, result, minilm):
    whole = run_beir(folder, [MINILM_L6], chunk_rows=10_000)
    assert np.allclose(whole.ranking[list(FIGURES)].to_numpy(float), result.ranking[list(FIGURES)].to_numpy(float))


def test_the_embedding_cache_serves_a_second_run(folder, minilm, fresh_cache):
    run_beir(folder, [MINILM_L6], cache=fresh_cache, chunk_rows=20)
    again = run_beir(folder, [MINILM_L6], cache=fresh_cache, chunk_rows=20)
    report = again.reports[MINILM_L6]
    assert report.n_encoded == 0 and report.n_cached > 0


def test_the_same_set_as_triples_gives_the_same_recall_at_1(result, minilm):
    triples = run_triples(read_triples(TRIPLES), [MINILM_L6])
    assert result.ranking["recall_at_1"].iloc[0] == pytest.approx(triples.ranking["recall_at_1"].iloc[0], abs=1e-12)


def test_cli_beir(capsys, minilm, tmp_path):
    assert cli.main(["retrieval", "--beir", str(BEIR), "--models", MINILM_L6, "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["split"] == "test" and doc["ranking"][0]["n_queries"] == 23
    assert cli.main(["retrieval", "--beir", str(BEIR), "--split", "dev", "--quiet"]) == 2
    assert "no qrels/dev.tsv; splits there: test" in capsys.readouterr().err
    assert cli.main(["retrieval", "--split", "dev", "--quiet"]) == 2
    assert "--split needs a --beir DIR" in capsys.readouterr().err


def test_variants_of_relevant_passages_outrank_them_as_the_cosines_say(folder, minilm):
    from core.models.encode import encode_texts

    out = run_beir(folder, [MINILM_L6], variants=True, n_resamples=200)
    pairs = out.variant_pairs
    assert len(pairs) > 20 and set(pairs["mode"]) <= set(lexicon.FAILURE_MODES)
    texts = list(dict.fromkeys([*pairs["query"], *pairs["original"], *pairs["variant"]]))
    vectors, _ = encode_texts(minilm, texts, None)
    cos = lambda a, b: float(vectors[a].astype(float) @ vectors[b].astype(float))  # noqa: E731
    expected = [cos(q, v) > cos(q, o) for q, o, v in zip(pairs["query"], pairs["original"], pairs["variant"], strict=True)]
    assert list(pairs["outranks"]) == expected
    overall = out.variant_rates.set_index("mode").loc["all"]
    assert overall["rate"] == pytest.approx(np.mean(expected)) and overall["n"] == len(pairs)
    assert "beir_variant_rates" in out.frames()
    # The history's pairs: each query's top passage at its own cosine, then every variant at its score, ids unique.
    stored = out.history_pairs("nli")
    tops, variants = stored[stored["pair_id"].str.endswith("/top1")], stored[~stored["pair_id"].str.endswith("/top1")]
    assert len(tops) == len(folder.queries) and stored["pair_id"].is_unique and set(stored["suite"]) == {"nli"}
    top_texts = list(dict.fromkeys([*tops["text_a"], *tops["text_b"]]))
    top_vectors, _ = encode_texts(minilm, top_texts, None)
    assert tops["cosine"].tolist() == pytest.approx(
        [float(top_vectors[q].astype(float) @ top_vectors[p].astype(float)) for q, p in zip(tops["text_a"], tops["text_b"], strict=True)],
        abs=1e-6,
    )
    assert (tops["category"] == "positive").tolist() == (out.ranks["mrr_at_10"] == 1.0).tolist()
    assert variants["cosine"].tolist() == pairs["score_variant"].tolist() and variants["category"].tolist() == pairs["mode"].tolist()


def _write_beir(folder, corpus: dict[str, str], queries: dict[str, str], qrels: list[tuple[str, str, int]]):
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in corpus.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in qrels))
    return read_beir(folder)


def test_duplicate_passages_give_pytrec_evals_figures_and_are_counted(tmp_path, minilm):
    """A text held twice ties exactly, and the figures equal pytrec_eval's.

    Ties are broken as trec_eval breaks them (id, descending).
    """
    pytrec_eval = pytest.importorskip("pytrec_eval")
    corpus = {
        "d1": "A man is performing music.",
        "d2": "A man is performing music.",  # one judged, one not: d2 ranks first
        "d9": "Someone is outside.",
        "d10": "Someone is outside.",  # "d9" > "d10" as strings: the judged d9 ranks first
        "d3": "People are reading.",
        "d4": "A kid is on a bike.",
        "d5": "The stage is empty and silent.",
    }
    queries = {
        "q1": "A man in a blue shirt is playing a guitar on a small stage.",
        "q2": "An old man is feeding pigeons in the park.",
        "q3": "Two children are reading books in a library.",
    }
    qrels = [("q1", "d1", 1), ("q2", "d9", 1), ("q3", "d3", 1)]
    folder = _write_beir(tmp_path / "dupes", corpus, queries, qrels)
    result = run_beir(folder, [MINILM_L6], chunk_rows=3)
    from core.models.encode import embedding_matrix, encode_texts

    vectors, _ = encode_texts(minilm, [*corpus.values(), *queries.values()], None)
    scores = np.clip(
        embedding_matrix(vectors, list(queries.values())).astype(np.float64)
        @ embedding_matrix(vectors, list(corpus.values())).astype(np.float64).T,
        -1,
        1,
    )
    run = {q: {d: float(s) for d, s in zip(corpus, row, strict=True)} for q, row in zip(queries, scores, strict=True)}
    judged = {q: {d: r for qq, d, r in qrels if qq == q} for q in queries}
    full = pytrec_eval.RelevanceEvaluator(judged, {"recall.1,5,10", "ndcg_cut.10", "recip_rank"}).evaluate(run)
    ranks = result.ranks.set_index("query_id")
    for q in queries:
        for k in (1, 5, 10):
            assert ranks.loc[q, f"recall_at_{k}"] == pytest.approx(full[q][f"recall_{k}"], abs=1e-9)
        assert ranks.loc[q, "ndcg_at_10"] == pytest.approx(full[q]["ndcg_cut_10"], abs=1e-9)
        assert ranks.loc[q, "mrr_at_10"] == pytest.approx(full[q]["recip_rank"], abs=1e-9)
    assert ranks.loc["q1", "top1_id"] == "d2" and ranks.loc["q1", "recall_at_1"] == 0.0  # d2 > d1: the unjudged copy first
    assert ranks.loc["q2", "top1_id"] == "d9" and ranks.loc["q2", "recall_at_1"] == 1.0  # "d9" > "d10"
    assert ranks[constants.COL_TIE_DECIDED].tolist() == [True, True, False]
    assert result.ranking[constants.COL_TIED_QUERIES].iloc[0] == 2


def test_tie_rule_and_count_by_hand():
    from core.probes.retrieval.metrics import decided_ties, rank_order

    scores = np.array([[0.5, 0.5, 0.9, 0.1], [0.5, 0.5, 0.9, 0.1]])
    order = rank_order(scores, np.array(["d10", "d9", "a", "b"]))
    assert order.tolist() == [[2, 1, 0, 3], [2, 1, 0, 3]]
    ranked = np.take_along_axis(scores, order, axis=1)
    gains = np.take_along_axis(np.array([[1.0, 0, 0, 0], [1.0, 1, 0, 0]]), order, axis=1)
    assert decided_ties(ranked, gains).tolist() == [True, False]  # copies of equal relevance decide nothing
    assert decided_ties(ranked, gains, depth=1).tolist() == [False, False]  # the tie starts below the top 1
    # A streamed merge ranks by each id's place among the ids at hand: the same order as the ids themselves.
    from core.probes.retrieval.metrics import id_places

    kept = np.array([["d10", "x"], ["é", "d9"]])
    fresh = np.array(["b", "a"])
    kp, fp = id_places(kept, fresh)
    tied = np.full((2, 4), 0.5)
    by_place = rank_order(tied, np.concatenate([kp, np.broadcast_to(fp, (2, 2))], axis=1))
    assert (
        by_place.tolist()
        == rank_order(tied, np.concatenate([kept, np.broadcast_to(fresh, (2, 2))], axis=1)).tolist()
        == [[1, 0, 2, 3], [0, 1, 2, 3]]
    )


class _Negate:
    name = "negate"

    def rescore(self, queries, passages, dense, *, model):
        return -np.asarray(dense)


class _FilterAll:
    name = "filter-all"

    def rescore(self, queries, passages, dense, *, model):
        return np.full(np.shape(dense), -np.inf)


def test_mitigations_rescore_the_whole_corpus_and_equal_pytrec_eval_on_their_scores(folder, minilm):
    """The mitigations apply to a BEIR folder; a filtered passage is not retrieved."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    out = run_beir(folder, [MINILM_L6], chunk_rows=7, mitigations=[_Negate(), _FilterAll()])
    assert out.mitigations == [constants.MITIGATION_NONE, "negate", "filter-all"] and out.models == [MINILM_L6]
    from core.models.encode import embedding_matrix, encode_texts

    chunk = next(iter(folder.corpus_chunks(1000)))
    qids = list(folder.queries)
    vectors, _ = encode_texts(minilm, [*chunk.texts, *folder.queries.values()], None)
    scores = (
        embedding_matrix(vectors, [folder.queries[q] for q in qids]).astype(np.float64)
        @ embedding_matrix(vectors, chunk.texts).astype(np.float64).T
    )
    run = {q: {d: float(-np.clip(s, -1, 1)) for d, s in zip(chunk.ids, row, strict=True)} for q, row in zip(qids, scores, strict=True)}
    full = pytrec_eval.RelevanceEvaluator(folder.qrels, {"recall.1,5,10", "ndcg_cut.10", "recip_rank"}).evaluate(run)
    ranks = out.ranks[out.ranks[constants.COL_MITIGATION] == "negate"].set_index("query_id")
    for q in qids:
        assert ranks.loc[q, "recall_at_10"] == pytest.approx(full[q]["recall_10"], abs=1e-9)
        assert ranks.loc[q, "ndcg_at_10"] == pytest.approx(full[q]["ndcg_cut_10"], abs=1e-9)
    summary = out.summary().set_index(constants.COL_MITIGATION)
    filtered, none = summary.loc["filter-all"], summary.loc[constants.MITIGATION_NONE]
    assert filtered["recall_at_10"] == 0 and filtered["recall_lost"] == round(none["recall_at_1"] * none[constants.COL_N_QUERIES])
    assert (none["recall_gained"], none["recall_lost"]) == (0, 0)
    assert len(out.history_pairs("nli")) == len(qids)  # the history keeps the model's own top passages


def test_cli_beir_mitigate(minilm, capsys):
    assert cli.main(["retrieval", "--beir", str(BEIR), "--models", MINILM_L6, "--mitigate", "bm25", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["mitigation"] for r in doc["before_after"]] == [constants.MITIGATION_NONE, constants.MITIGATION_BM25_RRF]
    assert all(v is not None for r in doc["before_after"] for v in r.values())
    assert {"recall_gained", "recall_lost", "tied_queries"} <= set(doc["before_after"][1])


def _aspirin(tmp_path):
    """A judged folder whose right answer differs from its question in polarity: what the contradiction guard penalises."""
    root = tmp_path / "aspirin"
    (root / "qrels").mkdir(parents=True)
    corpus = {
        "d1": "Aspirin is not recommended for children with a viral infection.",
        "d2": "Ibuprofen is recommended for children with a fever.",
        "d3": "Aspirin is recommended for adults after a heart attack.",
        "d4": "Children should drink water when they have a fever.",
        "d5": "Aspirin is recommended for children with a viral infection.",  # agrees with the question's polarity, and is wrong
        "d6": "Ibuprofen is recommended for children with a viral infection.",
    }
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in corpus.items()))
    queries = {"q1": "Is aspirin recommended for children with a viral infection?", "q2": "What helps a child with a fever?"}
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in queries.items()))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return read_beir(root)


def test_each_query_shows_its_relevant_passage_and_the_guard_demotion(tmp_path, minilm):
    from core.probes.retrieval.specs import build_mitigations, parse_mitigation_specs
    from core.scoring.findings import demoted_findings

    result = run_beir(_aspirin(tmp_path), [MINILM_L6], mitigations=build_mitigations(parse_mitigation_specs("guard")))
    plain = result.ranks[result.ranks["mitigation"] == "none"].set_index("query_id")
    # The relevant passage beside the top one: its text and its 1-based rank among the passages kept.
    assert plain.loc["q1", "relevant"] == "Aspirin is not recommended for children with a viral infection."
    # The wrong "is recommended" passage, of the question's polarity, comes first; the right one second.
    assert (
        plain.loc["q1", "relevant_rank"] == 2 and plain.loc["q1", "top1"] == "Aspirin is recommended for children with a viral infection."
    )
    assert plain.loc["q2", "relevant_id"] == "d2"
    # The guard penalises the correct "not recommended" answer to an "Is ... recommended?" question: moved down.
    demoted = result.demoted("guard")
    assert demoted["query_id"].tolist() == ["q1"]
    assert demoted["rank_before"].iloc[0] == 2 and (demoted["rank_after"].isna() | (demoted["rank_after"] > 2)).all()
    (said,) = demoted_findings(demoted, {MINILM_L6: 2}, "guard")
    assert said.startswith("Contradiction guard moved a passage you judged relevant down for 1 of 2 queries with MiniLM-L6")
    assert "polarity differs" in said and "went from rank 2" in said
    assert result.demoted("bm25").empty  # a mitigation that did not run demotes nothing


def test_a_demotion_is_said_once_for_every_model_it_happened_with():
    from core.models.registry import MPNET
    from core.scoring.findings import demoted_findings

    row = {"query_id": "q1", "query": "Is aspirin recommended?", "relevant": "Aspirin is not recommended.", "rank_before": 1}
    demoted = pd.DataFrame(
        [
            {"model": MINILM_L6, **row, "rank_after": 2.0},
            {"model": "sentence-transformers/paraphrase-MiniLM-L3-v2", **row, "rank_after": 3.0},
            {"model": MPNET, **row, "rank_after": float("nan")},
            {"model": MPNET, **row, "query_id": "q2", "rank_after": 4.0},
        ]
    )
    total = {MINILM_L6: 6, "sentence-transformers/paraphrase-MiniLM-L3-v2": 6, MPNET: 6}
    (said,) = demoted_findings(demoted, total, "guard")  # one warning, not one per model
    assert said.startswith(
        "Contradiction guard moved a passage you judged relevant down for 1 of 6 queries with MiniLM-L6 and MiniLM-L3 (ONNX), "
        "2 of 6 queries with mpnet-base"
    ), said
    assert said.count("polarity differs") == 1 and said.endswith("went from rank 1 to rank 2 (MiniLM-L6).")
    assert demoted_findings(demoted.iloc[:0], total, "guard") == []
