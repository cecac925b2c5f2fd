"""What a run scored: suite and file hashes, and a retrieval run's scores as pair rows."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from core import constants
from core.history.sources import bytes_sha256, file_sha256, retrieval_pairs, suite_source
from core.papers.suites import SUITE_FILES


def test_hashes_are_sha256_of_the_bytes(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"text_a,text_b\nx,y\n")
    assert file_sha256(path) == hashlib.sha256(b"text_a,text_b\nx,y\n").hexdigest()
    assert bytes_sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_suite_source_names_a_suite_or_a_file(tmp_path):
    shipped = suite_source(constants.SUITE_FAILURE_MODES)
    assert shipped == {
        "suite": constants.SUITE_FAILURE_MODES,
        "sha256": hashlib.sha256(SUITE_FILES[constants.SUITE_FAILURE_MODES].read_bytes()).hexdigest(),
    }
    assert suite_source(constants.SUITE_ALL) == {"suite": constants.SUITE_ALL}
    path = tmp_path / "mine.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    assert suite_source(str(path)) == {"file": str(path.resolve()), "sha256": hashlib.sha256(b"a\tb\n").hexdigest()}
    assert suite_source("no-such-suite") == {"suite": "no-such-suite"}


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
    from core.history.sources import corpus_pairs

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


def test_any_retrieval_result_is_recorded_through_one_function():
    from types import SimpleNamespace

    from core.history.sources import mitigation_settings, retrieval_record
    from core.probes.retrieval.mitigations import CalibratedFilter

    own = pd.DataFrame({"model": ["m"], "text_a": ["q"], "text_b": ["p"], "cosine": [0.4]})
    hooked = SimpleNamespace(
        history_pairs=lambda name: own.assign(suite=name), errors={}, rates=pd.DataFrame({"model": ["m"], "rate": [0.25]})
    )
    pairs, settings = retrieval_record(hooked, "triples")
    assert pairs["suite"].tolist() == ["triples"] and settings["threshold"] is None and settings["rates"] == [{"model": "m", "rate": 0.25}]
    with pytest.raises(TypeError, match="no scores"):
        retrieval_record(SimpleNamespace(errors={}), "x")
    assert mitigation_settings([CalibratedFilter({"m": 0.81})]) == [{"name": "calibrated", "thresholds": {"m": 0.81}}]


def test_one_set_of_mitigations_in_any_order_records_the_same_settings():
    from core.history.sources import mitigation_settings
    from core.probes.retrieval.specs import build_mitigations, parse_mitigation_specs

    typed = mitigation_settings(build_mitigations(parse_mitigation_specs("guard,bm25-weighted:0.3,bm25")))
    reordered = mitigation_settings(build_mitigations(parse_mitigation_specs("bm25, bm25-weighted:0.3 ,guard")))
    assert typed == reordered
    assert [s["name"] for s in typed] == sorted(s["name"] for s in typed) and len(typed) == 3
