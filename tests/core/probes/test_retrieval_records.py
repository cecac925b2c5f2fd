"""Retrieval results as the history's pair rows: the suite's scores and corpus mode's pairs, each mitigation's score beside the cosine."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants
from core.probes.retrieval.records import corpus_pairs, retrieval_pairs


def _scores() -> pd.DataFrame:
    rows = [
        # model, mitigation, group, mode, anchor, paraphrase, variant, cos_para, cos_var, win
        ("m", "none", "g1", "negation", "A1", "P1", "V1n", 0.80, 0.90, True),
        ("m", "none", "g1", "numerical", "A1", "P1", "V1x", 0.80, 0.70, False),
        ("m", "none", "g2", "negation", "A2", "P2", "V2n", 0.60, 0.65, True),
        ("m", "bm25", "g1", "negation", "A1", "P1", "V1n", 0.50, 0.40, False),
    ]
    columns = ["model", "mitigation", "group_id", "mode", "anchor", "paraphrase", "variant", "cosine_paraphrase", "cosine_variant", "win"]
    return pd.DataFrame(rows, columns=columns).assign(domain="medical", margin=lambda f: f.cosine_paraphrase - f.cosine_variant)


def test_retrieval_scores_become_one_row_per_paraphrase_and_variant():
    pairs = retrieval_pairs(_scores(), "retrieval")
    assert len(pairs) == 2 + 3  # two groups' paraphrases, three dense variants; the bm25 row is left out
    by_id = pairs.set_index("pair_id")
    assert by_id.loc["g1/paraphrase", "category"] == constants.CAT_POSITIVE
    assert (by_id.loc["g1/paraphrase", "text_a"], by_id.loc["g1/paraphrase", "text_b"], by_id.loc["g1/paraphrase", "cosine"]) == (
        "A1",
        "P1",
        0.80,
    )
    assert (by_id.loc["g1/negation", "text_b"], by_id.loc["g1/negation", "cosine"], bool(by_id.loc["g1/negation", "win"])) == (
        "V1n",
        0.90,
        True,
    )
    assert by_id.loc["g2/negation", "category"] == "negation"
    assert set(pairs["suite"]) == {"retrieval"} and set(pairs["domain"]) == {"medical"}


def test_retrieval_scores_without_their_columns_are_refused():
    with pytest.raises(ValueError, match="lack columns"):
        retrieval_pairs(_scores().drop(columns="cosine_variant"), "retrieval")


def test_mitigated_scores_ride_beside_the_dense_cosine():
    scores = pd.DataFrame(
        {
            "model": "m",
            "mitigation": ["none", "none", "bm25", "bm25"],
            "group_id": "g1",
            "mode": ["negation", "numerical"] * 2,
            "anchor": "A",
            "paraphrase": "P",
            "variant": ["Vn", "Vx"] * 2,
            "cosine_paraphrase": 0.8,
            "cosine_variant": [0.9, 0.6] * 2,
            "score_paraphrase": [0.8, 0.8, 0.5, 0.5],
            "score_variant": [0.9, 0.6, 0.2, 0.3],
        }
    )
    got = retrieval_pairs(scores, "s").set_index("pair_id")
    assert got.loc["g1/negation", ["cosine", "score[bm25]"]].tolist() == [0.9, 0.2]
    assert got.loc["g1/numerical", ["cosine", "score[bm25]"]].tolist() == [0.6, 0.3]
    assert got.loc["g1/paraphrase", ["cosine", "score[bm25]"]].tolist() == [0.8, 0.5]


def test_corpus_mode_pairs_become_query_top_and_variant_rows():
    pairs = pd.DataFrame(
        {
            "model": "m",
            "mitigation": ["none", "none", "guard", "guard"],
            "query": "q1",
            "original": "O",
            "mode": ["negation", "numerical"] * 2,
            "rule": ["r1", "r2"] * 2,
            "variant": ["V1", "V2"] * 2,
            "score_original": [0.8, 0.8, 0.7, 0.7],
            "score_variant": [0.9, 0.5, float("-inf"), 0.5],
            "outranks": [True, False] * 2,
        }
    )
    got = corpus_pairs(pairs, "corpus").set_index("pair_id")
    assert list(got.index) == ["q0/r1", "q0/r2", "q0/top"]
    assert got.loc["q0/top", ["text_a", "text_b", "category", "cosine", "score[guard]"]].tolist() == ["q1", "O", "positive", 0.8, 0.7]
    assert got.loc["q0/r1", ["text_b", "category", "cosine", "outranks"]].tolist() == ["V1", "negation", 0.9, True]
    assert got.loc["q0/r1", "score[guard]"] == float("-inf")
