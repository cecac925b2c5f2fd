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
    assert shipped == {"suite": constants.SUITE_FAILURE_MODES, "sha256": hashlib.sha256(SUITE_FILES[constants.SUITE_FAILURE_MODES].read_bytes()).hexdigest()}
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
    assert (by_id.loc["g1/paraphrase", "text_a"], by_id.loc["g1/paraphrase", "text_b"], by_id.loc["g1/paraphrase", "cosine"]) == ("A1", "P1", 0.80)
    assert (by_id.loc["g1/negation", "text_b"], by_id.loc["g1/negation", "cosine"], bool(by_id.loc["g1/negation", "win"])) == ("V1n", 0.90, True)
    assert by_id.loc["g2/negation", "category"] == "negation"
    assert set(pairs["suite"]) == {"retrieval"} and set(pairs["domain"]) == {"medical"}


def test_retrieval_scores_without_their_columns_are_refused():
    with pytest.raises(ValueError, match="lack columns"):
        retrieval_pairs(_scores().drop(columns="cosine_variant"), "retrieval")
