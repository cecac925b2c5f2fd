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
    triples = parse_triples(
        b"anchor,positive,negative\nA dog runs.,A dog is running.,A dog is running.\nA cat sits.,A cat is sitting.,A cat is not sitting.\n",
        "t.csv",
    )
    out = run_triples(triples, [MINILM_L6])
    row = out.win_rates.iloc[0]
    assert (row[constants.COL_TIES], row[constants.COL_WINS], row[constants.COL_N]) == (1, 0, 2)
    assert row[constants.COL_TIE_RATE] == 0.5


def test_rank_order_breaks_a_tie_by_id_descending_as_trec_eval():
    order = rank_order(np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.1]]), np.array([["b", "a", "c"], ["a", "b", "c"]]))
    assert order.tolist() == [[0, 1, 2], [1, 0, 2]]


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
    order = rank_order(scores, [f"d{j}" for j in range(30)])
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
    assert (
        "bad.csv: no column is named anchor or query or premise or question for the anchor; name it with --query COL"
        in capsys.readouterr().err
    )
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


class _Negate:
    """Reverses every ranking."""

    name = "negate"

    def rescore(self, queries, passages, dense, *, model):
        return -np.asarray(dense)


class _FilterAll:
    """Filters every passage out: every negative ties its positive at -inf."""

    name = "filter-all"

    def rescore(self, queries, passages, dense, *, model):
        return np.full(np.shape(dense), -np.inf)


TIED = (
    b"anchor,positive,negative\n"
    b"An old man is feeding pigeons in the park.,Someone is outside.,An old man is feeding pigeons in his living room.\n"
    b"Kids play in the snow.,Children are outdoors.,SOMEONE IS OUTSIDE.\n"
)


def test_triples_break_exact_ties_as_pytrec_eval_and_count_them(minilm):
    """One tie rule for triples and BEIR.

    MiniLM lowercases, so the two spellings tie exactly; the larger id (the negative's) wins.
    """
    pytrec_eval = pytest.importorskip("pytrec_eval")
    triples = parse_triples(TIED, "tied.csv")
    out = run_triples(triples, [MINILM_L6])
    corpus = corpus_of(triples)
    from core.models.encode import embedding_matrix, encode_texts

    vectors, _ = encode_texts(minilm, [*corpus.queries, *corpus.passages], None)
    scores = (
        embedding_matrix(vectors, list(corpus.queries)).astype(np.float64)
        @ embedding_matrix(vectors, list(corpus.passages)).astype(np.float64).T
    )
    ids = [f"{i:09d}" for i in range(len(corpus.passages))]
    assert scores[0, 0] == scores[0, 3]  # "Someone is outside." and "SOMEONE IS OUTSIDE." tie exactly
    run = {f"q{i}": dict(zip(ids, map(float, np.clip(row, -1, 1)), strict=True)) for i, row in enumerate(scores)}
    qrels = {
        f"q{i}": {d: 1 for d, t in zip(ids, corpus.passages, strict=True) if t in corpus.positives[i]} for i in range(len(corpus.queries))
    }
    full = pytrec_eval.RelevanceEvaluator(qrels, {"recall.1,5,10", "ndcg_cut.10", "recip_rank"}).evaluate(run)
    ranks = out.ranks.reset_index(drop=True)
    for i in range(len(corpus.queries)):
        for k in (1, 5, 10):
            assert ranks.loc[i, f"recall_at_{k}"] == pytest.approx(full[f"q{i}"][f"recall_{k}"], abs=1e-9)
        assert ranks.loc[i, "mrr_at_10"] == pytest.approx(full[f"q{i}"]["recip_rank"], abs=1e-9)
        assert ranks.loc[i, "ndcg_at_10"] == pytest.approx(full[f"q{i}"]["ndcg_cut_10"], abs=1e-9)
    # Only the first anchor's tie mixes a positive with another passage; the second's tie is between two passages it does not judge.
    assert ranks[constants.COL_TIE_DECIDED].tolist() == [True, False]
    assert out.ranking[constants.COL_TIED_QUERIES].iloc[0] == 1


def test_mitigations_apply_to_triples_with_ties_and_churn_beside_each_figure(minilm):
    """The ticked mitigations run on a triples file; a win turned into a tie is no fix."""
    triples = read_triples(SAMPLE)
    out = run_triples(triples, [MINILM_L6], mitigations=[_Negate(), _FilterAll()], n_resamples=200)
    assert out.mitigations == [constants.MITIGATION_NONE, "negate", "filter-all"]
    summary = out.summary().set_index(constants.COL_MITIGATION)
    none, negate, filtered = summary.loc[constants.MITIGATION_NONE], summary.loc["negate"], summary.loc["filter-all"]
    plain = out.scores[out.scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    # Reversing the order flips every strict outcome: each win becomes a fix, each right order a break.
    assert negate[constants.COL_WINS] == (plain["cosine_negative"] < plain["cosine_positive"]).sum()
    assert (negate[constants.COL_FIXED], negate[constants.COL_BROKEN]) == (none[constants.COL_WINS], len(plain) - none[constants.COL_WINS])
    # Filtering everything: no win left, every triple a tie, nothing fixed, every right order broken; no positive retrieved.
    assert (filtered[constants.COL_WINS], filtered[constants.COL_TIES], filtered[constants.COL_FIXED]) == (0, len(plain), 0)
    assert filtered[constants.COL_BROKEN] == len(plain) - none[constants.COL_WINS]
    assert (
        filtered["recall_at_1"] == 0
        and filtered["recall_at_10"] == 0
        and filtered["recall_lost"] == round(none["recall_at_1"] * none[constants.COL_N_QUERIES])
    )
    columns = list(out.summary().columns)
    assert columns[columns.index(constants.COL_TIES) + 1 : columns.index(constants.COL_TIES) + 3] == [
        constants.COL_FIXED,
        constants.COL_BROKEN,
    ]
    assert columns[columns.index("recall_at_1") + 1 : columns.index("recall_at_1") + 3] == ["recall_gained", "recall_lost"]
    assert not out.summary().isna().all().any()  # no all-NaN column
    assert len(out.history_pairs("nli")) == 48  # the history keeps the model's own cosines


def test_cli_triples_mitigate_prints_no_all_nan_column(minilm, capsys):
    """`--triples --mitigate` printed NaN paired-accuracy and recall columns (the file has no query pairs)."""
    code = cli.main(["retrieval", "--triples", str(SAMPLE), "--models", MINILM_L6, "--mitigate", "bm25", "--json", "--quiet"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["mitigation"]: r for r in doc["before_after"]}
    assert set(rows) == {constants.MITIGATION_NONE, constants.MITIGATION_BM25_RRF}
    assert all(v is not None for r in rows.values() for v in r.values())
    assert {"ties", "fixed", "broken", "recall_at_1", "recall_gained", "recall_lost", "tied_queries"} <= set(rows["none"])
    assert cli.main(["retrieval", "--triples", str(SAMPLE), "--models", MINILM_L6, "--mitigate", "bm25", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "before / after each mitigation" in printed and "NaN" not in printed and "paired_accuracy" not in printed


def test_with_mitigations_each_is_reported_on_hand_written_negatives_first(minilm, tmp_path):
    """Kept through 37.12: a triples run with mitigations splits every win rate by negative source, held-out first.

    One negative is what the perturbation rules write word for word for its anchor (rule-made), the other a person wrote.
    """
    from core.probes.perturb import perturb

    anchor = "The patient is allergic to penicillin."
    ruled = next(v.text for v in perturb(anchor).variants)
    path = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "anchor": [anchor, anchor],
            "positive": ["Penicillin gives the patient an allergic reaction."] * 2,
            "negative": [ruled, "The patient tolerates penicillin well."],
        }
    ).to_csv(path, index=False)
    out = run_triples(read_triples(path), [MINILM_L6], mitigations=[_Negate()], n_resamples=200)
    table = out.by_source
    assert list(table[constants.COL_MITIGATION]) == [constants.MITIGATION_NONE] * 2 + ["negate"] * 2
    assert list(table[constants.COL_VARIANT_SOURCE]) == [constants.SOURCE_HAND, constants.SOURCE_RULE] * 2
    scores = out.scores.set_index([constants.COL_MITIGATION, constants.COL_NEGATIVE])
    for row in table.itertuples():
        negative = ruled if row.variant_source == constants.SOURCE_RULE else "The patient tolerates penicillin well."
        assert (row.n, row.wins) == (1, int(scores.loc[(row.mitigation, negative), constants.COL_WIN]))
    assert run_triples(read_triples(path), [MINILM_L6], n_resamples=200).by_source.empty  # without mitigations: no split asked for
