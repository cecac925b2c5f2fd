"""The triples probe: win rate and in-corpus ranking equal a direct sentence-transformers computation; IR metrics equal pytrec_eval's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.files.triples import parse_triples, read_triples
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from core.probes.retrieval.metrics import ir_metrics, rank_order
from core.probes.retrieval.triples import corpus_of, run_triples

SAMPLE = PROJECT_ROOT / "data" / "samples" / "nli-triples.csv"


@pytest.fixture(scope="module")
def direct():
    """Win rate and recall@1 from sentence-transformers itself, on the file read by pandas."""
    from sentence_transformers import SentenceTransformer

    from core.models.bundled import bundle_path

    frame = pd.read_csv(SAMPLE)
    model = SentenceTransformer(str(bundle_path("minilm_l6")), device="cpu")
    premises = list(dict.fromkeys(frame["premise"]))
    passages = [*frame["entailed"], *frame["contradicted"]]  # one passage per row and cell
    q = model.encode(premises, normalize_embeddings=True, convert_to_numpy=True)
    p = model.encode(passages, normalize_embeddings=True, convert_to_numpy=True)
    a = model.encode(list(frame["premise"]), normalize_embeddings=True)
    cos_pos = (a * model.encode(list(frame["entailed"]), normalize_embeddings=True)).sum(1)
    cos_neg = (a * model.encode(list(frame["contradicted"]), normalize_embeddings=True)).sum(1)
    top = (q @ p.T).argmax(axis=1)
    positives = frame.groupby("premise")["entailed"].agg(set)
    recall1 = np.mean([passages[t] in positives[prem] for prem, t in zip(premises, top, strict=True)])
    return {"win_rate": float((cos_neg > cos_pos).mean()), "recall_at_1": float(recall1)}


@pytest.fixture(scope="module")
def result(minilm):
    return run_triples(read_triples(SAMPLE), [MINILM_L6])


def test_win_rate_and_recall_at_1_equal_sentence_transformers(result, direct):
    assert result.errors == {}
    assert result.win_rates[constants.COL_WIN_RATE].iloc[0] == pytest.approx(direct["win_rate"], abs=1e-4)
    assert result.ranking["recall_at_1"].iloc[0] == pytest.approx(direct["recall_at_1"], abs=1e-4)
    # The sample is built so that the figures are not trivial.
    assert 0 < direct["win_rate"] < 1 and 0 < direct["recall_at_1"] < 1


def test_one_passage_per_row_and_ties_apart(result):
    ranking = result.ranking.iloc[0]
    assert ranking[constants.COL_N_PASSAGES] == 48 and ranking[constants.COL_N_QUERIES] == 23
    scores = result.scores
    assert (scores[constants.COL_WIN] == (scores["cosine_negative"] > scores["cosine_positive"])).all()
    assert result.win_rates[constants.COL_TIES].iloc[0] == 0


def test_a_tie_is_counted_apart_never_as_a_win(minilm):
    triples = parse_triples(b"anchor,positive,negative\nA dog runs.,A dog is running.,A dog is running.\nA cat sits.,A cat is sitting.,A cat is not sitting.\n", "t.csv")
    out = run_triples(triples, [MINILM_L6])
    row = out.win_rates.iloc[0]
    assert (row[constants.COL_TIES], row[constants.COL_WINS], row[constants.COL_N]) == (1, 0, 2)
    assert row[constants.COL_TIE_RATE] == 0.5


def test_rank_order_puts_a_tied_irrelevant_passage_first():
    order = rank_order(np.array([[0.5, 0.5, 0.1]]), np.array([[1.0, 0.0, 0.0]]))
    assert order.tolist() == [[1, 0, 2]]


def test_ir_metrics_by_hand():
    ranked = np.array([[0, 1, 0, 0, 1], [1, 0, 0, 0, 0]], dtype=float)
    out = ir_metrics(ranked, [np.array([1, 1]), np.array([1])], ks=(1, 2), cutoff=3)
    assert out["recall_at_1"].tolist() == [0.0, 1.0]
    assert out["recall_at_2"].tolist() == [0.5, 1.0]
    assert out["mrr_at_3"].tolist() == [0.5, 1.0]
    ideal = 1 + 1 / np.log2(3)
    assert out["ndcg_at_3"] == pytest.approx([(1 / np.log2(3)) / ideal, 1.0])
    with pytest.raises(ValueError, match="at least one relevant"):
        ir_metrics(ranked, [np.array([0]), np.array([1])])


def test_ir_metrics_equal_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(12, 30))
    gains = (rng.random((12, 30)) < 0.15) * rng.integers(1, 3, size=(12, 30)).astype(float)
    gains[np.arange(12), rng.integers(0, 30, 12)] = np.maximum(gains[np.arange(12), rng.integers(0, 30, 12)], 1)
    gains[:, 0] = np.where(gains.sum(1) == 0, 1, gains[:, 0])
    order = rank_order(scores, gains)
    ours = ir_metrics(np.take_along_axis(gains, order, axis=1), list(gains))
    qrels = {f"q{i}": {f"d{j}": int(g) for j, g in enumerate(row) if g > 0} for i, row in enumerate(gains)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in enumerate(row)} for i, row in enumerate(scores)}
    top10 = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:10]) for q, docs in run.items()}
    full = pytrec_eval.RelevanceEvaluator(qrels, {"recall.1,5,10", "ndcg_cut.10"}).evaluate(run)
    cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    for i in range(12):
        q = f"q{i}"
        for k in (1, 5, 10):
            assert ours[f"recall_at_{k}"][i] == pytest.approx(full[q][f"recall_{k}"], abs=1e-9)
        assert ours["ndcg_at_10"][i] == pytest.approx(full[q]["ndcg_cut_10"], abs=1e-9)
        assert ours["mrr_at_10"][i] == pytest.approx(cut[q]["recip_rank"], abs=1e-9)


def test_relevance_goes_by_text_so_copies_are_relevant():
    triples = parse_triples(b"anchor,positive,negative\na,same,n1\nb,same,n2\n", "t.csv")
    corpus = corpus_of(triples)
    assert corpus.passages == ("same", "same", "n1", "n2")
    assert corpus.positives == (frozenset({"same"}), frozenset({"same"}))


def test_cli_triples_json_equals_direct(direct, minilm, capsys, tmp_path):
    out = tmp_path / "out"
    code = cli.main(["retrieval", "--triples", str(SAMPLE), "--models", MINILM_L6, "--json", "--quiet", "--out", str(out)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"] == {"anchor": "premise", "positive": "entailed", "negative": ["contradicted"]}
    assert doc["win_rates"][0]["win_rate"] == pytest.approx(direct["win_rate"], abs=1e-4)
    assert doc["ranking"][0]["recall_at_1"] == pytest.approx(direct["recall_at_1"], abs=1e-4)
    assert (out / "triples_scores.csv").is_file() and (out / "summary.json").is_file()


def test_cli_triples_refusals(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("s1,s2,s3\na,p,n\n")
    assert cli.main(["retrieval", "--triples", str(bad), "--quiet"]) == 2
    assert "bad.csv: no column is named anchor or query or premise or question for the anchor; name it with --query COL" in capsys.readouterr().err
    assert cli.main(["retrieval", "--positive", "x", "--quiet"]) == 2
    assert "--positive name(s) the columns of a --triples FILE" in capsys.readouterr().err
    assert cli.main(["retrieval", "--triples", str(bad), "--corpus", str(bad), "--quiet"]) == 2
    assert "--triples runs on its own" in capsys.readouterr().err


def test_history_pairs_hook_gives_tidy_pairs(result):
    pairs = result.history_pairs("nli")
    assert set(pairs["category"]) == {"positive", "contradiction"}
    assert len(pairs) == 24 + 24  # one positive per source row, one row per negative
    assert pairs["pair_id"].is_unique and (pairs["suite"] == "nli").all()
    negatives = pairs[pairs["category"] == "contradiction"]
    assert negatives["win"].sum() == result.win_rates["wins"].iloc[0]
