"""Compare/tokenizer analyses: similarity_matrix, compare_table, published_split_check."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.models.cache import EmbeddingCache
from core.models.loading import load_model
from core.papers import oov
from core.papers.reference import load_failure_examples, load_oov_entities
from core.scoring import tables
from core.scoring.runner import similarity_matrix

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SENTENCES = [
    "The patient is allergic to penicillin",
    "The patient is not allergic to penicillin",
    "Stock prices fell sharply in March",
    "The patient is allergic to penicillin",  # a repeat gets its own row
]


@pytest.fixture(scope="module")
def minilm():
    return load_model(MINILM)


def test_similarity_matrix_matches_direct_sentence_transformer(minilm, tmp_path):
    from sentence_transformers import SentenceTransformer

    from core.models.bundled import bundle_path

    got = similarity_matrix(minilm, SENTENCES, EmbeddingCache(tmp_path / "e.sqlite"))
    direct = SentenceTransformer(str(bundle_path("minilm_l6")), device="cpu").encode(SENTENCES, convert_to_numpy=True)
    direct = direct / np.linalg.norm(direct, axis=1, keepdims=True)
    expected = direct @ direct.T
    assert got.shape == (4, 4)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(np.diag(got), 1.0, atol=1e-5)
    np.testing.assert_allclose(got, got.T, atol=1e-7)
    assert got[0, 3] == pytest.approx(1.0, abs=1e-6)
    # served from the cache the second time, same numbers
    again = similarity_matrix(minilm, SENTENCES, EmbeddingCache(tmp_path / "e.sqlite"))
    np.testing.assert_allclose(again, got, atol=1e-6)


def test_similarity_matrix_rejects_no_texts(minilm):
    with pytest.raises(ValueError, match="empty"):
        similarity_matrix(minilm, [], None)


def _results(cosines: dict[str, float], a: str, b: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            constants.COL_MODEL: list(cosines),
            constants.COL_PAIR_ID: "typed-1",
            constants.COL_TEXT_A: a,
            constants.COL_TEXT_B: b,
            constants.COL_COSINE: list(cosines.values()),
            constants.COL_TOKENS_A: 10,
            constants.COL_TOKENS_B: 11,
            constants.COL_TRUNCATED: False,
        }
    )


def test_compare_table_verdict_is_strictly_above_threshold():
    res = _results({"m1": 0.7, "m2": 0.70001, "m3": 0.2}, "x", "y")
    table = tables.compare_table(res, threshold=0.7)
    assert list(table["verdict"]) == [tables.BELOW_THRESHOLD, tables.ABOVE_THRESHOLD, tables.BELOW_THRESHOLD]
    assert table["published"].isna().all()
    assert list(table[constants.COL_MODEL]) == ["m1", "m2", "m3"]
    assert list(tables.compare_table(res, threshold=0.1)["verdict"]) == [tables.ABOVE_THRESHOLD] * 3


def test_compare_table_attaches_published_cosine_for_exact_example():
    ex = load_failure_examples()
    a, b = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
    res = _results({MINILM: 0.947, "some/other-model": 0.5}, a, b)
    table = tables.compare_table(res, 0.7, ex)
    assert table.loc[0, "published"] == pytest.approx(0.92)
    assert "did not reproduce" in table.loc[0, "note"]
    assert math.isnan(table.loc[1, "published"])
    # a different pair gets nothing
    other = tables.compare_table(_results({MINILM: 0.9}, a, b + "!"), 0.7, ex)
    assert math.isnan(other.loc[0, "published"])


def test_compare_table_empty():
    assert tables.compare_table(pd.DataFrame()).empty


def test_published_split_check():
    ent = load_oov_entities()
    hit = oov.published_split_check(ent, " xylophrix ", ["x", "##yl", "##op", "##hri", "##x"])
    assert hit is not None and hit["match"] is True and hit["kind"] == "replacement" and hit[constants.COL_ENTITY] == "Google"
    miss = oov.published_split_check(ent, "Xylophrix", ["xylophrix"])
    assert miss is not None and miss["match"] is False and miss["published"] == "x ##yl ##op ##hri ##x"
    orig = oov.published_split_check(ent, "penicillin", ["pen", "##ici", "##llin"])
    assert orig is not None and orig["kind"] == "original" and orig["match"] is True
    assert oov.published_split_check(ent, "aspirin", ["aspirin"]) is None
    assert oov.published_split_check(ent, "   ", []) is None


def test_compare_table_per_model_thresholds():
    res = _results({"m1": 0.5, "m2": 0.5, "m3": 0.5}, "x", "y")
    table = tables.compare_table(res, threshold={"m1": 0.4, "m2": 0.6})
    assert list(table[constants.COL_THRESHOLD].fillna(-1)) == [0.4, 0.6, -1]
    assert list(table["verdict"]) == [tables.ABOVE_THRESHOLD, tables.BELOW_THRESHOLD, tables.NO_THRESHOLD]


def test_perturbation_table_marks_each_variant_per_model():
    from core.probes.perturb import perturb

    pairs = perturb("Google acquired YouTube").to_frame()
    rows = []
    for model, cos in (("m1", 0.9), ("m2", 0.65)):
        rows.append(pairs.assign(**{constants.COL_MODEL: model, constants.COL_COSINE: cos}))
    table = tables.perturbation_table(pd.concat(rows), {"m1": 0.95, "m2": 0.6})
    assert len(table) == 2 * len(pairs)
    assert list(table.columns[:4]) == [constants.COL_PAIR_ID, constants.COL_CATEGORY, constants.COL_RULE, constants.COL_CHANGE]
    by_model = table.groupby(constants.COL_MODEL)["verdict"].agg(set).to_dict()
    assert by_model == {"m1": {tables.BELOW_THRESHOLD}, "m2": {tables.ABOVE_THRESHOLD}}
    assert table[constants.COL_PAIR_ID].is_monotonic_increasing
