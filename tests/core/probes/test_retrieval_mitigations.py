"""Retrieval mitigations: BM25 fusion, the contradiction guard, the calibrated filter, the cross-encoder reranker.

Every fused score is checked against a hand computation, BM25 against the
Lucene formula written out here, and the reranker against the logits of the
very model it loads, run directly through transformers.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest
from cross_encoder_support import NLI_LABELS
from cross_encoder_support import direct_logits as _direct_logits
from cross_encoder_support import tiny_cross_encoder as _tiny_cross_encoder

from core import constants
from core.models import sources
from core.models.loading import ModelUnavailable
from core.models.registry import MINILM_L6
from core.probes.retrieval.guard import COL_FLAGS, contradiction_flags, flag_pairs, guard_precision_recall, suite_pairs
from core.probes.retrieval.mitigations import (
    BM25_WEIGHT_GRID,
    CalibratedFilter,
    ContradictionGuard,
    CrossEncoderReranker,
    HybridBM25,
    Mitigation,
    bm25_scores,
    candidates,
    guard_demotions,
    minmax_rows,
    reciprocal_rank_fusion,
    sweep_bm25_weights,
    weighted_fusion,
)
from core.probes.retrieval.reranker import model_kind, nli_score

# A 2 x 3 problem: two queries, three passages.
DENSE = np.array([[0.9, 0.5, 0.1], [0.2, 0.2, 0.8]])
LEXICAL = np.array([[1.0, 3.0, 2.0], [0.0, 5.0, 1.0]])


# ------------------------------------------------------------------ fusion


def test_rrf_matches_a_hand_computation():
    # Row 0: dense ranks (1, 2, 3), lexical ranks (3, 1, 2).
    # Row 1: dense 0.8 is rank 1 and the tied 0.2s share rank 2; lexical ranks (3, 1, 2).
    expected = np.array(
        [
            [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62],
            [1 / 62 + 1 / 63, 1 / 62 + 1 / 61, 1 / 61 + 1 / 62],
        ]
    )
    np.testing.assert_allclose(reciprocal_rank_fusion([DENSE, LEXICAL]), expected, rtol=0, atol=1e-15)
    # k is the damping constant: k = 0.5 gives 1 / (0.5 + rank).
    np.testing.assert_allclose(reciprocal_rank_fusion([DENSE], k=0.5)[0], [1 / 1.5, 1 / 2.5, 1 / 3.5])


def test_rrf_keeps_filtered_passages_filtered_and_refuses_bad_input():
    filtered = DENSE.copy()
    filtered[0, 0] = -np.inf
    fused = reciprocal_rank_fusion([filtered, LEXICAL])
    assert fused[0, 0] == -np.inf
    # Passage 1 is now the dense rank 1 and the lexical rank 1.
    assert fused[0, 1] == pytest.approx(2 / 61)
    with pytest.raises(ValueError, match="at least one"):
        reciprocal_rank_fusion([])
    with pytest.raises(ValueError, match="one shape"):
        reciprocal_rank_fusion([DENSE, LEXICAL[:, :2]])
    with pytest.raises(ValueError, match="positive"):
        reciprocal_rank_fusion([DENSE], k=0)
    with pytest.raises(ValueError, match="NaN"):
        reciprocal_rank_fusion([np.array([[np.nan, 1.0]])])


def test_weighted_fusion_matches_a_hand_computation():
    # Row 0: minmax(dense) = (1, 0.5, 0), minmax(lexical) = (0, 1, 0.5).
    # Row 1: minmax(dense) = (0, 0, 1),   minmax(lexical) = (0, 1, 0.2).
    expected = np.array([[0.7 * 1 + 0.3 * 0, 0.7 * 0.5 + 0.3 * 1, 0.7 * 0 + 0.3 * 0.5], [0.0, 0.3 * 1, 0.7 * 1 + 0.3 * 0.2]])
    np.testing.assert_allclose(weighted_fusion(LEXICAL, DENSE, 0.3), expected, atol=1e-12)
    np.testing.assert_allclose(weighted_fusion(LEXICAL, DENSE, 0.0), minmax_rows(DENSE))
    np.testing.assert_allclose(weighted_fusion(LEXICAL, DENSE, 1.0), minmax_rows(LEXICAL))


def test_minmax_rows_handles_constant_rows_and_filtered_entries():
    out = minmax_rows(np.array([[2.0, 2.0], [-np.inf, 3.0], [1.0, 3.0]]))
    np.testing.assert_array_equal(out, [[0.0, 0.0], [-np.inf, 0.0], [0.0, 1.0]])


@pytest.mark.parametrize("weight", [-0.1, 1.5, float("nan"), "heavy"])
def test_weighted_fusion_refuses_a_weight_outside_0_1(weight):
    with pytest.raises(ValueError, match="between 0 and 1"):
        weighted_fusion(LEXICAL, DENSE, weight)


# ------------------------------------------------------------------ BM25

CORPUS = [
    "The cat sat on the mat.",
    "Dogs chase cats in the park.",
    "Quarterly revenue rose 5 percent, the company said.",
]


def _lucene_bm25(term: str, docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """BM25 (Lucene variant: no (k1 + 1) factor, IDF never negative) of a one-word query, from the formula."""
    n = len(docs)
    df = sum(term in d for d in docs)
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    avgdl = sum(len(d) for d in docs) / n
    return [idf * d.count(term) / (d.count(term) + k1 * (1 - b + b * len(d) / avgdl)) for d in docs]


def test_bm25_matches_the_lucene_formula():
    docs = [["the", "cat", "sat", "on", "the", "mat"], ["dogs", "chase", "cats", "in", "the", "park"], ["the", "cat", "the", "cat"]]
    scores = bm25_scores(["cat"], [" ".join(d) for d in docs])
    np.testing.assert_allclose(scores[0], _lucene_bm25("cat", docs), rtol=1e-5)


def test_bm25_counts_a_repeated_query_word_once():
    # Bm25s sums every id it is given, so "the cat the cat" scored "the" and "cat" twice while the
    # docstring says distinct words. The hand computation is the formula summed over {"the", "cat"} once each.
    docs = [["the", "cat", "sat", "on", "the", "mat"], ["dogs", "chase", "cats", "in", "the", "park"], ["a", "cat", "naps"]]
    texts = [" ".join(d) for d in docs]
    by_hand = np.add(_lucene_bm25("the", docs), _lucene_bm25("cat", docs))
    np.testing.assert_allclose(bm25_scores(["the cat the cat"], texts)[0], by_hand, rtol=1e-5)
    np.testing.assert_allclose(bm25_scores(["The cat, THE CAT!"], texts), bm25_scores(["the cat"], texts), rtol=1e-6)


def test_bm25_ranks_the_exact_lexical_match_first_and_keeps_stop_words():
    scores = bm25_scores(["revenue rose 5 percent", "the cat", "zebra"], CORPUS)
    assert scores.shape == (3, 3)
    assert int(np.argmax(scores[0])) == 2
    assert int(np.argmax(scores[1])) == 0
    np.testing.assert_array_equal(scores[2], 0.0)  # no shared word
    # "not" is a word BM25 sees: a stop-word list would drop it.
    negated = bm25_scores(["not allergic"], ["The patient is allergic.", "The patient is not allergic."])
    assert negated[0, 1] > negated[0, 0]


def test_bm25_accepts_an_empty_collection_and_refuses_a_string():
    np.testing.assert_array_equal(bm25_scores(["a query"], ["", "..."]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="sequence of strings"):
        bm25_scores("a query", CORPUS)


def test_hybrid_bm25_lifts_the_lexical_match_over_a_dense_tie():
    dense = np.array([[0.6, 0.6, 0.6]])
    query = ["revenue rose 5 percent"]
    for mitigation in (HybridBM25(), HybridBM25("weighted", 0.5)):
        scores = mitigation.rescore(query, CORPUS, dense, model=MINILM_L6)
        assert scores.shape == (1, 3)
        assert int(np.argmax(scores[0])) == 2
    fused = HybridBM25().rescore(query, CORPUS, dense, model=MINILM_L6)
    lexical = bm25_scores(query, CORPUS)
    # Only passage 2 shares a word with the query: lexical ranks (2, 2, 1), the tied zeros sharing rank 2.
    # The three dense ties share rank 1.
    assert lexical[0, 0] == lexical[0, 1] == 0 < lexical[0, 2]
    np.testing.assert_allclose(fused[0], [1 / 61 + 1 / 62, 1 / 61 + 1 / 62, 1 / 61 + 1 / 61])


def test_hybrid_bm25_checks_its_inputs():
    with pytest.raises(ValueError, match="shape"):
        HybridBM25().rescore(["q"], CORPUS, np.zeros((2, 3)), model=MINILM_L6)
    with pytest.raises(ValueError, match="NaN"):
        HybridBM25().rescore(["q"], CORPUS[:1], np.array([[np.nan]]), model=MINILM_L6)
    with pytest.raises(ValueError, match="needs the lexical weight"):
        HybridBM25("weighted")
    with pytest.raises(ValueError, match="takes no weight"):
        HybridBM25("rrf", 0.2)
    with pytest.raises(ValueError, match="fusion must be one of"):
        HybridBM25("max")


def test_sweep_runs_each_weight_and_reports_the_callbacks_numbers():
    # The evaluation: does the mitigation put passage 2 first for the revenue query, with dense preferring passage 0?
    dense = np.array([[0.9, 0.1, 0.5]])
    seen = []

    def evaluate(mitigation: Mitigation) -> dict[str, float]:
        seen.append(mitigation.name)
        scores = mitigation.rescore(["revenue rose 5 percent"], CORPUS, dense, model=MINILM_L6)
        return {"top_is_lexical_match": float(np.argmax(scores[0]) == 2)}

    table = sweep_bm25_weights(evaluate)
    assert list(table[constants.COL_BM25_WEIGHT]) == pytest.approx([i / 10 for i in range(11)])
    assert seen == [f"bm25-weighted:{w:g}" for w in BM25_WEIGHT_GRID]
    assert list(table[constants.COL_MITIGATION]) == seen
    # Weight 0 is the dense order (passage 0 first); weight 1 the BM25 order (passage 2 first).
    assert table["top_is_lexical_match"].iloc[0] == 0.0
    assert table["top_is_lexical_match"].iloc[-1] == 1.0
    single = sweep_bm25_weights(lambda m: 0.5, weights=[0.25])
    assert list(single.columns) == [constants.COL_BM25_WEIGHT, constants.COL_MITIGATION, "score"]
    with pytest.raises(ValueError, match="at least one weight"):
        sweep_bm25_weights(evaluate, weights=[])
    with pytest.raises(ValueError, match="between 0 and 1"):
        sweep_bm25_weights(evaluate, weights=[2.0])


# ------------------------------------------------------------------ the guard's flags

FLAGGED = [
    (constants.CAT_NEGATION, "The patient is allergic to penicillin", "The patient is not allergic to penicillin"),
    (constants.CAT_NUMERICAL, "Take 5 mg of the drug daily.", "Take 50 mg of the drug daily."),
    (constants.CAT_ENTITY_SWAP, "Google acquired YouTube", "YouTube acquired Google"),
    (
        constants.CAT_ENTITY_SWAP,
        "Acme Corp owes Brightline Logistics $4.2 million.",
        "Brightline Logistics owes Acme Corp $4.2 million under the settlement.",
    ),
    (constants.CAT_TEMPORAL, "Take the pill before meals.", "Take the pill after meals."),
    (constants.CAT_TEMPORAL, "Google acquired YouTube.", "Google will acquire YouTube."),
    (constants.CAT_TEMPORAL, "The drug reduces pain.", "The drug reduced pain."),
    (constants.CAT_TEMPORAL, "Stop taking aspirin seven days prior to surgery.", "Stop taking aspirin seven days following surgery."),
    (constants.CAT_QUANTIFIER, "All patients recovered.", "Some patients recovered."),
    (constants.CAT_QUANTIFIER, "The patients recovered.", "All patients recovered."),
    (constants.CAT_HEDGING, "The drug reduces pain.", "The drug may reduce pain."),
    (constants.CAT_HEDGING, "The drug reduces pain.", "The drug reportedly reduces pain."),
    # Through core.lexicon: numbers inside hyphenated words and below zero, a tense change beside a kept "is".
    (constants.CAT_NUMERICAL, "Vantor signed a three-year contract.", "Vantor signed a thirty-year contract."),
    (constants.CAT_NUMERICAL, "Store frozen food at -18 degrees.", "Store frozen food at 18 degrees."),
    (constants.CAT_TEMPORAL, "Interest is charged if the balance is paid late.", "Interest was charged if the balance is paid late."),
]

NOT_FLAGGED = [
    ("The cat sat on the mat", "A feline rested on the rug"),
    ("Could you tell me how to get to the train station?", "What is the way to the railway depot from here?"),
    ("Google acquired YouTube in 2006.", "YouTube was acquired by Google in 2006."),
    ("Take three tablets a day.", "Take 3 tablets a day."),
    ("Every patient recovered.", "All patients recovered."),
    ("Stop taking aspirin seven days before surgery.", "Stop taking aspirin seven days prior to surgery."),
    ("The tenant must give at least 30 days notice.", "The tenant must give no less than 30 days notice."),
]


@pytest.mark.parametrize(("mode", "text_a", "text_b"), FLAGGED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(FLAGGED)])
def test_guard_flags_each_mode_and_only_it(mode, text_a, text_b):
    assert contradiction_flags(text_a, text_b) == {mode}
    assert contradiction_flags(text_b, text_a) == {mode}  # symmetric


@pytest.mark.parametrize(("text_a", "text_b"), NOT_FLAGGED)
def test_guard_does_not_flag_paraphrases(text_a, text_b):
    assert contradiction_flags(text_a, text_b) == set()


def test_guard_flags_a_question_against_the_passage_that_contradicts_it():
    assert contradiction_flags("Is 5 mg the daily dose?", "The daily dose is 50 mg.") == {constants.CAT_NUMERICAL}
    assert contradiction_flags("How much is the daily dose?", "The daily dose is 50 mg.") == set()  # nothing to contradict


def test_guard_refuses_non_text():
    with pytest.raises(ValueError, match="text_b must be a string"):
        contradiction_flags("a", None)  # type: ignore[arg-type]


# A tiny labelled frame whose flags are checked first, so the counting below is what is tested.
TINY = pd.DataFrame(
    [
        ("neg-1", constants.CAT_NEGATION, "The patient is allergic to penicillin", "The patient is not allergic to penicillin"),
        ("neg-2", constants.CAT_NEGATION, "The test was positive", "The test was negative"),
        ("num-1", constants.CAT_NUMERICAL, "Take 5 mg of the drug daily.", "Take 50 mg of the drug daily."),
        ("pos-1", constants.CAT_POSITIVE, "The cat sat on the mat", "A feline rested on the rug"),
        (
            "pos-2",
            constants.CAT_POSITIVE,
            "Patients should fast for eight hours before the procedure.",
            "Those undergoing the operation must not eat for eight hours beforehand.",
        ),
        ("ngc-1", constants.CAT_NEGATIVE, "The cat sat on the mat", "The cat did not sit on 5 mats"),
    ],
    columns=[constants.COL_PAIR_ID, constants.COL_CATEGORY, constants.COL_TEXT_A, constants.COL_TEXT_B],
)
TINY_FLAGS = {
    "neg-1": (constants.CAT_NEGATION,),
    "neg-2": (),
    "num-1": (constants.CAT_NUMERICAL,),
    "pos-1": (),
    "pos-2": (constants.CAT_NEGATION,),
    "ngc-1": (constants.CAT_NEGATION,),
}


def test_flag_pairs_adds_the_sorted_modes():
    flagged = flag_pairs(TINY)
    assert dict(zip(flagged[constants.COL_PAIR_ID], flagged[COL_FLAGS], strict=True)) == TINY_FLAGS
    with pytest.raises(ValueError, match="text_b"):
        flag_pairs(TINY.drop(columns=[constants.COL_TEXT_B]))


def test_precision_and_recall_match_a_hand_count():
    table = guard_precision_recall(TINY).set_index(constants.COL_CATEGORY)
    assert list(table.index) == [constants.CAT_NEGATION, constants.CAT_NUMERICAL, constants.CAT_POSITIVE, constants.CAT_NEGATIVE, "all"]
    neg, num, pos, ngc, total = (table.loc[c] for c in table.index)
    # negation: 1 of its 2 pairs flagged; 2 scored pairs carry the negation flag (neg-1, pos-2), 1 of them a negation pair.
    assert (neg["n"], neg["n_flagged"], neg["n_mode_flagged"]) == (2, 1, 1)
    assert (neg["recall"], neg["precision"], neg["flag_rate"]) == (0.5, 0.5, 0.5)
    assert (num["recall"], num["precision"]) == (1.0, 1.0)
    # positive: 1 of 2 falsely flagged; precision and recall do not apply.
    assert pos["flag_rate"] == 0.5 and math.isnan(pos["recall"]) and math.isnan(pos["precision"])
    # The negative control is reported but counts in no precision: ngc-1's negation flag is not in neg's denominator.
    assert ngc[constants.COL_KIND] == "other" and ngc["flag_rate"] == 1.0
    # all: 3 failure + 2 positive pairs; 2 of 3 failures flagged; 3 flagged in all, 2 of them failures.
    assert (total["n"], total["n_flagged"]) == (5, 3)
    assert total["recall"] == pytest.approx(2 / 3) and total["precision"] == pytest.approx(2 / 3)


def test_precision_recall_refuses_empty_or_unlabelled_pairs():
    with pytest.raises(ValueError, match="no pairs"):
        guard_precision_recall(TINY.iloc[:0])
    with pytest.raises(ValueError, match="category"):
        guard_precision_recall(TINY.drop(columns=[constants.COL_CATEGORY]))


def test_suite_pairs_pairs_the_anchor_with_its_paraphrase_and_variants():
    passages = pd.DataFrame(
        [
            ("g1", "medical", constants.ROLE_ANCHOR, "", "A"),
            ("g1", "medical", constants.ROLE_PARAPHRASE, "", "A'"),
            ("g1", "medical", constants.ROLE_VARIANT, constants.CAT_NEGATION, "not A"),
            ("g2", "legal", constants.ROLE_PARAPHRASE, "", "B'"),  # no anchor: skipped
        ],
        columns=[constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_ROLE, constants.COL_MODE, constants.COL_TEXT],
    )
    pairs = suite_pairs(passages)
    assert list(pairs[constants.COL_PAIR_ID]) == ["g1-paraphrase", "g1-negation"]
    assert list(pairs[constants.COL_CATEGORY]) == [constants.ROLE_PARAPHRASE, constants.CAT_NEGATION]
    assert list(pairs[constants.COL_TEXT_A]) == ["A", "A"]
    assert list(pairs[constants.COL_TEXT_B]) == ["A'", "not A"]


# ------------------------------------------------------------------ the guard as a mitigation

ANCHOR = "The patient is allergic to penicillin."
PARAPHRASE = "Penicillin causes an allergic reaction in this patient."
VARIANT = "The patient is not allergic to penicillin."
UNRELATED = "The museum is closed on public holidays."


def test_candidates_are_near_the_best_or_above_the_floor():
    row = np.array([0.30, 0.62, 0.60, 0.55, -np.inf, 0.2])
    # Best 0.62: 0.60 is within 0.05; 0.55 is above 0.5; 0.30 and 0.2 are neither.
    assert list(candidates(row, gap=0.05, floor=0.5, limit=10)) == [1, 2, 3]
    assert list(candidates(row, gap=0.05, floor=0.5, limit=2)) == [1, 2]
    assert list(candidates(row, gap=0.05, floor=0.9, limit=10)) == [1, 2]
    assert list(candidates(np.array([-np.inf]), 0.05, 0.5, 10)) == []


def test_guard_demotes_the_candidate_a_rival_contradicts():
    assert guard_demotions(ANCHOR, [VARIANT, PARAPHRASE, UNRELATED]) == [True, False, False]
    # A lone candidate: the query's flag decides.
    assert guard_demotions(ANCHOR, [VARIANT]) == [True]
    assert guard_demotions(ANCHOR, [PARAPHRASE]) == [False]
    # Two candidates that differ from the query the same way: no rival agrees with the query, nothing is demoted.
    assert guard_demotions("Is the dose 5 mg?", ["The dose is 50 mg.", "The dose is 50 mg per day."]) == [False, False]


def test_guard_rescore_subtracts_the_penalty_from_demoted_candidates_only():
    passages = [PARAPHRASE, VARIANT, UNRELATED]
    dense = np.array([[0.80, 0.95, 0.10], [0.10, 0.20, 0.90]])
    out = ContradictionGuard().rescore([ANCHOR, "When does the museum open?"], passages, dense, model=MINILM_L6)
    expected = dense.copy()
    expected[0, 1] -= constants.GUARD_PENALTY  # the variant, a near-top candidate flagged against the paraphrase
    np.testing.assert_allclose(out, expected)
    assert int(np.argmax(out[0])) == 0
    # A variant outside the candidates (far below the best, under the floor) is left alone.
    far = np.array([[0.80, 0.30, 0.10]])
    np.testing.assert_allclose(ContradictionGuard().rescore([ANCHOR], passages, far, model=MINILM_L6), far)


def test_guard_checks_its_settings():
    with pytest.raises(ValueError, match="penalty"):
        ContradictionGuard(penalty=0)
    with pytest.raises(ValueError, match="gap"):
        ContradictionGuard(gap=-0.1)
    with pytest.raises(ValueError, match="limit"):
        ContradictionGuard(limit=0)


# ------------------------------------------------------------------ calibrated threshold


def test_calibrated_filter_drops_scores_at_or_below_the_models_threshold():
    flt = CalibratedFilter({MINILM_L6: 0.5, "other/model": 0.9})
    dense = np.array([[0.6, 0.5, 0.4], [0.95, -0.2, 0.51]])
    out = flt.rescore(["q1", "q2"], ["a", "b", "c"], dense, model=MINILM_L6)
    np.testing.assert_array_equal(out, [[0.6, -np.inf, -np.inf], [0.95, -np.inf, 0.51]])  # strictly above, as calibration counts
    np.testing.assert_array_equal(flt.rescore(["q"], ["a", "b"], np.array([[0.95, 0.6]]), model="other/model"), [[0.95, -np.inf]])
    # A registry alias finds the calibrated name.
    assert flt.threshold("all-MiniLM-L6-v2") == 0.5
    with pytest.raises(ValueError, match="no calibrated threshold for 'unknown/model'"):
        flt.rescore(["q"], ["a"], np.array([[0.9]]), model="unknown/model")
    with pytest.raises(ValueError, match="calibrate"):
        CalibratedFilter({})
    with pytest.raises(ValueError, match="finite"):
        CalibratedFilter({MINILM_L6: float("nan")})


# ------------------------------------------------------------------ cross-encoder reranker

QUERIES = ["Which drug is the patient allergic to?", "When does the museum open?"]
PASSAGES = [ANCHOR, VARIANT, UNRELATED, PARAPHRASE]


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    """A relevance cross-encoder (one output) and an NLI model (three labels), each saved to its own folder."""
    relevance = tmp_path_factory.mktemp("tiny-relevance")
    nli = tmp_path_factory.mktemp("tiny-nli")
    return {
        "relevance": (str(relevance), *_tiny_cross_encoder(relevance, 1, None)),
        "nli": (str(nli), *_tiny_cross_encoder(nli, 3, NLI_LABELS)),
    }


def test_relevance_reranker_scores_as_the_model_says(tiny_models):
    folder, model, tokenizer = tiny_models["relevance"]
    reranker = CrossEncoderReranker(folder)
    assert reranker.availability().available
    dense = np.zeros((2, 4))
    scores = reranker.rescore(QUERIES, PASSAGES, dense, model=MINILM_L6)
    expected = _direct_logits(model, tokenizer, [(q, p) for q in QUERIES for p in PASSAGES]).reshape(2, 4)
    np.testing.assert_allclose(scores, expected, rtol=1e-4, atol=1e-5)
    # The order is the model's, not the (all-equal) cosines'.
    assert [list(np.argsort(-row)) for row in scores] == [list(np.argsort(-row)) for row in expected]
    assert len({round(float(s), 4) for s in scores[0]}) == 4


def test_nli_reranker_scores_entailment_minus_contradiction_with_the_passage_as_premise(tiny_models):
    folder, model, tokenizer = tiny_models["nli"]
    scores = CrossEncoderReranker(folder).rescore(QUERIES[:1], PASSAGES, np.zeros((1, 4)), model=MINILM_L6)
    logits = _direct_logits(model, tokenizer, [(p, QUERIES[0]) for p in PASSAGES])
    np.testing.assert_allclose(scores[0], logits[:, 1] - logits[:, 0], rtol=1e-4, atol=1e-5)


def test_reranker_reads_only_the_top_k_and_keeps_the_rest_below_in_cosine_order(tiny_models):
    folder, model, tokenizer = tiny_models["relevance"]
    dense = np.array([[0.1, 0.9, -np.inf, 0.5]])
    scores = CrossEncoderReranker(folder, top_k=2).rescore(QUERIES[:1], PASSAGES, dense, model=MINILM_L6)
    read = _direct_logits(model, tokenizer, [(QUERIES[0], PASSAGES[1]), (QUERIES[0], PASSAGES[3])])[:, 0]
    np.testing.assert_allclose(scores[0, [1, 3]], read, rtol=1e-4, atol=1e-5)
    assert scores[0, 2] == -np.inf  # filtered stays filtered
    assert scores[0, 0] < read.min()  # not read: below every reranked passage


def test_model_kind_and_nli_score():
    assert model_kind(1, None) == "relevance"
    assert model_kind(3, {0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}) == "nli"
    with pytest.raises(ValueError, match="neither a relevance cross-encoder"):
        model_kind(2, {0: "LABEL_0", 1: "LABEL_1"})
    logits = np.array([[1.0, 3.0, 0.0], [2.0, -1.0, 5.0]])
    np.testing.assert_array_equal(nli_score(logits, NLI_LABELS), [3.0 - 1.0, -1.0 - 2.0])


def test_a_two_label_classifier_is_refused_with_the_reason(tmp_path):
    _tiny_cross_encoder(tmp_path, 2, None)
    with pytest.raises(ModelUnavailable, match="neither a relevance cross-encoder"):
        CrossEncoderReranker(str(tmp_path)).rescore(["q"], ["p"], np.zeros((1, 1)), model=MINILM_L6)


@pytest.fixture
def hub_refuses(monkeypatch):
    """A hub endpoint that refuses connections at once, and no remembered probe."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sources, "_HUB_STATE", {})


def test_unavailable_reranker_says_why_within_the_hub_timeout(hub_refuses):
    reranker = CrossEncoderReranker("no-such-org/no-such-cross-encoder")  # constructing is free: nothing is looked up
    start = time.monotonic()
    with pytest.raises(
        ModelUnavailable,
        match=(
            "no-such-org/no-such-cross-encoder: not bundled, not in the local Hugging Face cache, and the Hugging Face hub .* is "
            "unreachable"
        ),
    ):
        reranker.rescore(["q"], ["p"], np.zeros((1, 1)), model=MINILM_L6)
    assert time.monotonic() - start < constants.HUB_TIMEOUT_SECONDS
    assert not reranker.availability().available


def test_a_bundled_bi_encoder_is_not_a_reranker():
    found = CrossEncoderReranker(MINILM_L6).availability()
    assert not found.available and "not a cross-encoder" in found.reason
    with pytest.raises(ModelUnavailable, match="not a cross-encoder"):
        CrossEncoderReranker(MINILM_L6).rescore(["q"], ["p"], np.zeros((1, 1)), model=MINILM_L6)


def test_reranker_checks_its_settings():
    with pytest.raises(ValueError, match="needs a model id"):
        CrossEncoderReranker(" ")
    with pytest.raises(ValueError, match="top_k"):
        CrossEncoderReranker("x/y", top_k=0)
