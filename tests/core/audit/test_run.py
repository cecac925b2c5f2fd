"""The audit end to end with the bundled MiniLM: pairs, kinds, risk numbers, curve, findings; bad corpora; vectors reused."""

from __future__ import annotations

import numpy as np
import pytest

from core import lexicon
from core.audit import kinds, risk
from core.audit.findings import audit_findings
from core.audit.planted import planted_corpus, planted_scores
from core.audit.run import PAIR_COLUMNS, audit_corpus, check_corpus
from core.models.encode import embedding_matrix, encode_texts
from core.models.registry import MINILM_L6

CORPUS = [
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The patient has diabetes.",
    "The patient does not have diabetes.",
    "The contract was signed before the merger.",
    "The contract was signed after the merger.",
    "The drug reduces pain.",
    "the drug reduces pain",
    "Paris is the capital of France.",
    "Bananas are rich in potassium.",
]
QUERIES = ["How much of the drug should I take?", "Does the patient have diabetes?", "What is the capital of France?"]


@pytest.fixture(scope="module")
def result(minilm, tmp_path_factory):
    from core.models.cache import EmbeddingCache

    return audit_corpus(CORPUS, [MINILM_L6], 0.5, queries=QUERIES, cache=EmbeddingCache(tmp_path_factory.mktemp("c") / "e.sqlite"))


def test_pairs_are_exact_and_classified(result, minilm):
    pairs = result.pairs
    assert list(pairs.columns) == PAIR_COLUMNS
    vectors, _ = encode_texts(minilm, CORPUS, None)
    matrix = embedding_matrix(vectors, CORPUS)
    sims = matrix @ matrix.T / np.outer(np.linalg.norm(matrix, axis=1), np.linalg.norm(matrix, axis=1))
    expected = {(i, j) for i in range(len(CORPUS)) for j in range(i + 1, len(CORPUS)) if sims[i, j] > 0.5}
    assert set(zip(pairs.index_a, pairs.index_b, strict=True)) == expected
    by_text = {(r.text_a, r.text_b): r for r in pairs.itertuples(index=False)}
    assert by_text[(CORPUS[0], CORPUS[1])].mode == "numerical"
    assert by_text[(CORPUS[2], CORPUS[3])].mode == "negation"
    assert by_text[(CORPUS[4], CORPUS[5])].mode == "temporal"
    assert by_text[(CORPUS[6], CORPUS[7])].kind == kinds.KIND_DUPLICATE
    assert by_text[(CORPUS[0], CORPUS[1])].changed_a == "5"


def test_risk_numbers_follow_the_threshold(result):
    summary = risk.risk_summary(result, 0.5)
    overall = summary[summary["mode"] == risk.ALL_MODES].iloc[0]
    assert overall.twin_pairs == 3
    assert overall.passages_with_twin == 6
    assert overall.twin_share == pytest.approx(0.6)
    assert overall.twin_share_ci_low <= 0.6 <= overall.twin_share_ci_high
    assert overall.n_queries == 3
    # Each query's top 5 of ten passages holds its twin pair.
    assert overall.query_twin_top5 == pytest.approx(1.0)
    negation = summary[summary["mode"] == "negation"].iloc[0]
    assert negation.twin_pairs == 1 and negation.passages_with_twin == 2
    high = risk.risk_summary(result, 0.999)
    assert high[high["mode"] == risk.ALL_MODES].iloc[0].twin_pairs == 0
    with pytest.raises(ValueError, match="below 0.5"):
        risk.pairs_at(result, 0.4)


def test_curve_and_findings(result):
    curve = risk.twin_curve(result, step=0.05)
    assert curve["threshold"].iloc[0] == 0.5 and curve["threshold"].iloc[-1] == 1.0
    assert curve["twin_share"].iloc[0] == pytest.approx(0.6)
    assert np.all(np.diff(curve["twin_share"].to_numpy()) <= 0)
    summary = risk.risk_summary(result, 0.5)
    said = audit_findings(result, summary, 0.5)
    assert said.lead.startswith("60.0% of the 10 passages have a confusable twin above 0.50 for MiniLM-L6 (95% CI ")
    assert said.worst[0].startswith("Worst pair (")
    worst = risk.pairs_at(result, 0.5)
    worst = worst[worst.kind == "twin"].iloc[0]
    assert f"MiniLM-L6 {worst.cosine:.3f}" in said.worst[0]
    doc = risk.summary_doc(result, summary, said.lines(), said.table)
    assert doc["n_passages"] == 10 and doc["summary"][0]["mode"] == "all"
    assert doc["findings"][0] == said.lead and doc["findings_table"][0]["twin_pairs"] == 3


def test_second_run_reuses_every_vector(minilm, fresh_cache):
    first = audit_corpus(CORPUS[:4], [MINILM_L6], 0.6, cache=fresh_cache)
    second = audit_corpus(CORPUS[:4], [MINILM_L6], 0.6, cache=fresh_cache)
    assert first.reports[MINILM_L6].n_encoded == 4
    assert second.reports[MINILM_L6].n_encoded == 0
    assert second.pairs.equals(first.pairs)


@pytest.mark.parametrize(
    ("corpus", "message"),
    [
        ([], "no passage"),
        (["Only one passage."], "one distinct passage"),
        (["Same.", "Same.", " Same. "], "one distinct passage"),
        ("a string", "not one string"),
    ],
)
def test_bad_corpora_are_one_line(corpus, message):
    with pytest.raises(ValueError, match=message):
        check_corpus(corpus)


def test_no_close_pair_is_an_empty_table(minilm):
    result = audit_corpus(["Bananas are rich in potassium.", "The stock market closed higher today."], [MINILM_L6], 0.9)
    assert result.pairs.empty
    summary = risk.risk_summary(result, 0.9)
    assert summary.iloc[0].twin_pairs == 0
    assert audit_findings(result, summary, 0.9).lead == "No two of the 2 passages are confusable twins above 0.90 for MiniLM-L6."


def test_heldout_planted_twins_are_found(minilm):
    corpus = planted_corpus("heldout")
    result = audit_corpus(corpus.passages, [MINILM_L6], 0.7)
    scores = planted_scores(result, corpus, 0.7).set_index("mode")
    assert scores.loc["all", "planted"] == len(corpus.planted) > 150
    # The held-out split: recall and precision as docs/audit.md reports them (rules were written on dev only).
    assert scores.loc["all", "recall"] >= 0.95
    assert scores.loc["all", "precision"] >= 0.95
    assert set(scores.index) == {"all", *lexicon.FAILURE_MODES}


def test_planted_splits_are_disjoint_and_fixed():
    dev, held = planted_corpus("dev"), planted_corpus("heldout")
    assert not set(dev.passages) & set(held.passages)
    assert planted_corpus("dev").passages == dev.passages
    with pytest.raises(ValueError, match="split"):
        planted_corpus("test")
