"""Index settings (core/probes/compression.py): each setting against a hand computation, float32 against the exact figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from core import constants
from core.models.cache import EmbeddingCache
from core.models.encode import embedding_matrix, encode_texts
from core.models.registry import MINILM_L6
from core.papers.suites import load_suite
from core.probes import compression as c
from core.probes.retrieval.rescoring import cosine_matrix
from core.probes.retrieval.run import run_retrieval
from core.probes.retrieval.suite_files import load_retrieval_suite
from core.scoring.runner import run_pairs
from core.scoring.tables import category_summary

S = {name: c.IndexSetting(name) for name in c.PRECISIONS}


# ------------------------------------------------------------------ settings by name


def test_parse_settings_keeps_order_and_drops_repeats():
    parsed = c.parse_settings(["int8", " Binary ", "dims:64", "int8", "dims:064"])
    assert [s.name for s in parsed] == ["int8", "binary", "dims:64"]
    assert parsed[2].dims == 64


@pytest.mark.parametrize("bad", ["int4", "dims:0", "dims:x", "dims:-3"])
def test_parse_settings_refuses_a_bad_name(bad):
    with pytest.raises(ValueError, match=r"dims:D|unknown index setting"):
        c.parse_settings([bad])


def test_parse_settings_refuses_nothing():
    with pytest.raises(ValueError, match="at least one"):
        c.parse_settings(["", " "])


# ------------------------------------------------------------------ each setting by hand


def test_int8_per_dimension_codes_and_decoding_by_hand():
    vectors = np.array([[0.0, 0.5], [1.0, 1.0], [0.5, 0.75]], dtype=np.float32)
    ranges = c.int8_ranges(vectors)
    np.testing.assert_array_equal(ranges, [[0.0, 0.5], [1.0, 1.0]])
    codes = c.int8_codes(vectors, ranges)
    # dim 0: step 1/255; 0 -> bucket 0 -> -128, 0.5 -> floor(127.5) = 127 -> -1.
    # dim 1: step 0.5/255; 0.5 -> -128, 0.75 -> floor(127.5) -> -1.
    # The maximum: the quantizer divides in float32, where 1 / float32(1/255) = 254.99998, so it lands in
    # bucket 254 (code 126), not 255: sentence-transformers' rounding, kept as the library does it.
    assert np.floor(np.float32(1.0) / (np.float32(1.0) / np.float32(255))) == 254
    np.testing.assert_array_equal(codes, [[-128, -128], [126, 126], [-1, -1]])
    decoded = c.int8_decode(codes, ranges)
    # A code decodes to its bucket's centre: start + (code + 128 + 0.5) * step.
    np.testing.assert_allclose(decoded[2], [127.5 / 255, 0.5 + 127.5 * 0.5 / 255])
    np.testing.assert_allclose(decoded[0], [0.5 / 255, 0.5 + 0.5 * 0.5 / 255])


def test_int8_global_calibration_uses_one_range_for_every_dimension():
    vectors = np.array([[-0.5, 0.1], [0.25, 1.0]])
    ranges = c.int8_ranges(vectors, per_dimension=False)
    np.testing.assert_array_equal(ranges, [[-0.5, -0.5], [1.0, 1.0]])
    # 0.25 on the range -0.5..1 (step 1.5/255): floor(0.75 / (1.5/255)) = floor(127.5) = 127 -> -1.
    assert c.int8_codes(np.array([[0.25, 1.0]]), ranges).tolist() == [[-1, 127]]


def test_int8_decoding_agrees_with_faiss_scalar_quantizers():
    """Per-dimension int8 is faiss' SQ8 (QT_8bit), global int8 its QT_8bit_uniform: the same decoded vectors.

    Per dimension, a value on a bucket's edge may land one bucket apart (sentence-transformers divides in
    float32, faiss multiplies), e.g. each dimension's maximum; nowhere more than one bucket.
    """
    import faiss

    x = np.random.default_rng(0).normal(size=(200, 16)).astype(np.float32)
    for kind, per_dimension in ((faiss.ScalarQuantizer.QT_8bit, True), (faiss.ScalarQuantizer.QT_8bit_uniform, False)):
        index = faiss.IndexScalarQuantizer(16, kind)
        index.train(x)
        theirs = index.sa_decode(index.sa_encode(x))
        ranges = c.int8_ranges(x, per_dimension=per_dimension)
        ours = c.int8_decode(c.int8_codes(x, ranges), ranges)
        buckets = np.abs(theirs - ours) / ((ranges[1] - ranges[0]) / 255)
        assert buckets.max() < 1.001
        assert (buckets > 0.01).mean() < (0.001 if per_dimension else 1e-9)


def test_int8_pair_score_is_the_cosine_of_the_decoded_vectors():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5, 16)), rng.normal(size=(5, 16))
    cal = np.concatenate([a, b])
    ranges = c.int8_ranges(cal)
    da, db = c.int8_decode(c.int8_codes(a, ranges), ranges), c.int8_decode(c.int8_codes(b, ranges), ranges)
    hand = (da * db).sum(1) / np.linalg.norm(da, axis=1) / np.linalg.norm(db, axis=1)
    np.testing.assert_allclose(c.pair_scores(S["int8"], a, b), hand, atol=1e-12)
    assert (
        np.abs(
            hand - c.pair_scores(S["float32"], a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True))
        ).max()
        < 0.05
    )


def test_hamming_on_known_bits_with_a_dimension_not_a_multiple_of_eight():
    a = np.array([[1, -1, 1, -1, 1, -1, 1, -1, 1, -1]], dtype=np.float32)
    b = np.array([[1, 1, 1, -1, -1, -1, 1, -1, -1, 1], [1, -1, 1, -1, 1, -1, 1, -1, 1, -1]], dtype=np.float32)
    # a vs b[0]: signs differ at positions 1, 4, 8, 9 -> 4; a vs b[1]: identical -> 0.
    assert c.hamming(c.binary_codes(a), c.binary_codes(b)).tolist() == [[4, 0]]
    assert c.setting_scores(S["binary"], a, b).tolist() == [[1 - 2 * 4 / 10, 1.0]]
    assert c.pair_scores(S["binary"], np.repeat(a, 2, axis=0), b).tolist() == [1 - 2 * 4 / 10, 1.0]


def test_binary_score_is_the_cosine_of_the_sign_vectors_and_zero_is_negative():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(4, 24)), rng.normal(size=(6, 24))
    a[0, :3] = 0.0  # a sign bit is "> 0": zero counts as negative, as sentence-transformers packs it
    sa, sb = np.where(a > 0, 1.0, -1.0), np.where(b > 0, 1.0, -1.0)
    np.testing.assert_allclose(c.setting_scores(S["binary"], a, b), sa @ sb.T / 24, atol=1e-12)


def test_binary_rescore_keeps_the_hamming_shortlist_and_scores_it_in_float():
    rng = np.random.default_rng(2)
    q, p = rng.normal(size=(3, 32)), rng.normal(size=(50, 32))
    scores = c.setting_scores(S["binary-rescore"], q, p)
    keep = c.RESCORE_MULTIPLIER * c.RESCORE_TOP_K
    distances = c.hamming(c.binary_codes(q), c.binary_codes(p))
    signs = np.where(p > 0, 1.0, -1.0)
    for i in range(3):
        finite = np.isfinite(scores[i])
        assert finite.sum() == keep
        shortlist = np.argsort(distances[i], kind="stable")[:keep]
        assert set(np.flatnonzero(finite)) == set(shortlist)
        hand = signs[shortlist] @ q[i] / np.linalg.norm(q[i]) / np.sqrt(32)
        np.testing.assert_allclose(scores[i, shortlist], hand, atol=1e-12)


def test_truncation_keeps_the_first_dimensions_renormalised():
    a, b = np.array([[3.0, 4.0, 12.0]]), np.array([[4.0, 3.0, 0.0]])
    dims2 = c.IndexSetting("dims:2", 2)
    np.testing.assert_allclose(c.stored_vectors(dims2, a), [[0.6, 0.8]])
    np.testing.assert_allclose(c.pair_scores(dims2, a, b), [0.6 * 0.8 + 0.8 * 0.6])
    with pytest.raises(ValueError, match="keep fewer"):
        c.stored_vectors(c.IndexSetting("dims:3", 3), a)


def test_float16_is_the_cosine_of_the_half_precision_vectors():
    a = np.array([[0.1, 0.2, 0.3001]], dtype=np.float32)
    b = np.array([[0.3, 0.2, 0.1]], dtype=np.float32)
    ha, hb = a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64)
    hand = float((ha @ hb.T)[0, 0] / np.linalg.norm(ha) / np.linalg.norm(hb))
    assert c.pair_scores(S["float16"], a, b)[0] == pytest.approx(hand, abs=1e-15)


def test_float32_scores_are_the_exact_cosines():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(6, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    vectors = {f"t{i}": v[i] for i in range(6)}
    expected = cosine_matrix(vectors, ["t0", "t1"], ["t2", "t3", "t4", "t5"])
    got = c.setting_scores(S["float32"], v[:2], v[2:])
    assert np.array_equal(got, expected)


def test_with_change_subtracts_float32_of_the_same_cell():
    rows = [
        ("float32", "m", "p", "failure_rate", "negation", 0.5, 0.4, 0.6, 10),
        ("binary", "m", "p", "failure_rate", "negation", 0.2, 0.1, 0.3, 10),
        ("binary", "m", "p", "failure_rate", "hedging", 0.2, 0.1, 0.3, 10),
    ]
    table = c.with_change(pd.DataFrame(rows, columns=c.TABLE_COLUMNS[:-1]))
    assert table["change"].iloc[:2].tolist() == pytest.approx([0.0, -0.3])
    assert np.isnan(table["change"].iloc[2])


# ------------------------------------------------------------------ float32 is the exact run, with the real MiniLM


@pytest.fixture(scope="module")
def suite_pairs():
    suite = load_suite(constants.SUITE_FAILURE_MODES)
    return suite.groupby(constants.COL_CATEGORY, sort=False).head(6).reset_index(drop=True)


@pytest.fixture(scope="module")
def shared_cache(session_cache_dir):
    cache = EmbeddingCache()
    yield cache
    cache.close()


@pytest.fixture(scope="module")
def result(suite_pairs, shared_cache):
    return c.run_index_settings(
        [MINILM_L6],
        settings=c.parse_settings(["float32", "int8", "binary", "dims:64"]),
        pairs={constants.SUITE_FAILURE_MODES: suite_pairs},
        retrieval=load_retrieval_suite().head(6),
        cache=shared_cache,
    )


def test_float32_failure_rates_and_intervals_equal_the_exact_run(result, suite_pairs, shared_cache):
    exact = category_summary(run_pairs(suite_pairs, [MINILM_L6], cache=shared_cache).results)
    t = result.table
    ours = t[(t["setting"] == "float32") & (t["probe"] == constants.SUITE_FAILURE_MODES)]
    rates = ours[ours["metric"].isin([c.METRIC_FAILURE_RATE, c.METRIC_MATCH_RATE])].set_index(constants.COL_MODE)
    means = ours[ours["metric"] == c.METRIC_MEAN_SCORE].set_index(constants.COL_MODE)
    exact = exact.set_index(constants.COL_CATEGORY)
    assert sorted(rates.index) == sorted(exact.index) == sorted(means.index)
    for cat in exact.index:
        assert rates.loc[cat, "value"] == exact.loc[cat, "failure_rate"]
        assert (rates.loc[cat, "ci_low"], rates.loc[cat, "ci_high"]) == (exact.loc[cat, "fr_ci_low"], exact.loc[cat, "fr_ci_high"])
        assert rates.loc[cat, "n"] == exact.loc[cat, "n"]
        assert means.loc[cat, "value"] == pytest.approx(exact.loc[cat, "mean"], abs=1e-15)
        assert (means.loc[cat, "ci_low"], means.loc[cat, "ci_high"]) == (exact.loc[cat, "ci_low"], exact.loc[cat, "ci_high"])


def test_each_setting_gets_its_own_youden_threshold_from_the_controls(result, suite_pairs, shared_cache, minilm):
    from core.probes.calibration import youden_threshold

    vectors, _ = encode_texts(minilm, [*suite_pairs[constants.COL_TEXT_A], *suite_pairs[constants.COL_TEXT_B]], shared_cache)
    a = embedding_matrix(vectors, list(suite_pairs[constants.COL_TEXT_A]))
    b = embedding_matrix(vectors, list(suite_pairs[constants.COL_TEXT_B]))
    cats = suite_pairs[constants.COL_CATEGORY].to_numpy()
    scores = c.pair_scores(S["binary"], a, b)
    own = youden_threshold(scores[cats == "positive"], scores[cats == "negative"]).threshold
    t = result.table.query("setting == 'binary' and probe == 'failure-modes'")
    assert t.query("metric == 'own_threshold'")["value"].tolist() == [own]
    negation = t.query("metric == 'failure_rate_own_threshold' and mode == 'negation'")["value"].iloc[0]
    assert negation == np.mean(scores[cats == "negation"] > own)


def test_float32_retrieval_figures_equal_the_exact_run(result, shared_cache):
    exact = run_retrieval(load_retrieval_suite().head(6), [MINILM_L6], cache=shared_cache)
    t = result.table
    mine = t[(t["setting"] == "float32") & (t["probe"] == constants.SUITE_RETRIEVAL)]
    wins = mine[mine["metric"] == "win_rate"].set_index(constants.COL_MODE)
    for row in exact.win_rates.to_dict("records"):
        assert wins.loc[row["mode"], "value"] == row["win_rate"]
        assert (wins.loc[row["mode"], "ci_low"], wins.loc[row["mode"], "ci_high"]) == (row["ci_low"], row["ci_high"])
    recall = mine.set_index("metric")["value"]
    assert recall["recall_at_1"] == exact.ranking["recall_at_1"].iloc[0]
    assert recall["recall_at_5"] == exact.ranking["recall_at_5"].iloc[0]


def test_every_setting_reports_every_metric_with_ordered_intervals(result):
    t = result.table
    assert list(t.columns) == c.TABLE_COLUMNS
    assert list(dict.fromkeys(t["setting"])) == ["float32", "int8", "binary", "dims:64"]
    cells = t.groupby("setting").size()
    assert cells.nunique() == 1  # every setting has every (probe, metric, mode) cell
    ok = t.dropna(subset=["ci_low", "ci_high"])
    assert ((ok["ci_low"] <= ok["value"] + 1e-12) & (ok["value"] <= ok["ci_high"] + 1e-12)).all()
    assert (t.loc[t["setting"] == "float32", "change"] == 0).all()
    assert not result.errors


@pytest.mark.parametrize("category", ["negation", "numerical", "positive"])
def test_an_interval_matches_scipy_bootstrap_drawn_by_hand(result, suite_pairs, shared_cache, minilm, category):
    """The binary setting's failure rate of a category: its interval recomputed from the scores with scipy directly."""
    part = suite_pairs[suite_pairs[constants.COL_CATEGORY] == category]
    vectors, _ = encode_texts(minilm, [*part[constants.COL_TEXT_A], *part[constants.COL_TEXT_B]], shared_cache)
    a = embedding_matrix(vectors, list(part[constants.COL_TEXT_A]))
    b = embedding_matrix(vectors, list(part[constants.COL_TEXT_B]))
    scores = c.pair_scores(S["binary"], a, b)
    indicators = (scores > constants.DEFAULT_THRESHOLD).astype(float)
    row = result.table.query("setting == 'binary' and probe == 'failure-modes' and mode == @category").iloc[0]
    assert row["value"] == indicators.mean()
    if np.ptp(indicators) == 0:
        assert row["ci_low"] == row["ci_high"] == row["value"]
        return
    from core import settings

    ci = scipy_stats.bootstrap(
        (indicators,),
        np.mean,
        n_resamples=settings.bootstrap_resamples(),
        method="percentile",
        rng=np.random.default_rng(constants.BOOTSTRAP_SEED),
    ).confidence_interval
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))


def test_pair_rows_from_any_vectors_without_a_category():
    """Vectors from anywhere (a store's, here made up) score a pairs table; no category: one mode ``all``, no own threshold."""
    rng = np.random.default_rng(4)
    texts = [f"text {i}" for i in range(8)]
    vectors = {t: v for t, v in zip(texts, rng.normal(size=(8, 12)), strict=True)}
    pairs = pd.DataFrame({"text_a": texts[:4], "text_b": texts[4:]})
    rows = c.pair_setting_rows(pairs, vectors, c.parse_settings(["float32", "dims:4", "dims:12"]), model="store", probe="mine")
    assert set(rows["setting"]) == {"float32", "dims:4"}  # dims:12 keeps every dimension: not a truncation
    assert set(rows["mode"]) == {constants.MODE_ALL} and c.METRIC_OWN_THRESHOLD not in set(rows["metric"])
    a, b = np.stack([vectors[t] for t in texts[:4]]), np.stack([vectors[t] for t in texts[4:]])
    # Not unit length (a store may keep them so): float32 is still their cosine, not their clipped product.
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    mean = rows.query("setting == 'float32' and metric == 'mean_score'")["value"].iloc[0]
    assert mean == pytest.approx(cos.mean())
    with pytest.raises(ValueError, match="have no vector"):
        c.pair_setting_rows(pairs.assign(text_a="unknown"), vectors, c.parse_settings(["float32"]), model="m", probe="p")
