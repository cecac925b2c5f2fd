"""Index settings (core/probes/index_settings.py): each setting against a hand computation or faiss, float32 against the exact figures."""

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
from core.probes import index_settings as c
from core.probes.retrieval.rescoring import cosine_matrix
from core.probes.retrieval.run import run_retrieval
from core.probes.retrieval.suite_files import load_retrieval_suite
from core.scoring.runner import run_pairs
from core.scoring.tables import category_summary

S = {setting.name: setting for setting in c.PRECISIONS}


# ------------------------------------------------------------------ settings by name


def test_parse_settings_keeps_order_and_drops_repeats():
    parsed = c.parse_settings(["int8", " Binary ", "dims:64", "int8", "dims:064"])
    assert [s.name for s in parsed] == ["int8", "binary", "dims:64"]
    assert parsed[2].dims == 64 and isinstance(parsed[2], c.Truncation) and isinstance(parsed[0], c.Int8)


@pytest.mark.parametrize("bad", ["int4", "dims:0", "dims:x", "dims:-3"])
def test_parse_settings_refuses_a_bad_name(bad):
    with pytest.raises(ValueError, match=r"dims:D|unknown index setting"):
        c.parse_settings([bad])


def test_parse_settings_refuses_nothing():
    with pytest.raises(ValueError, match="at least one"):
        c.parse_settings(["", " "])


# ------------------------------------------------------------------ each setting by hand


def test_int8_pair_score_by_hand_is_the_float_query_against_the_decoded_passage():
    """faiss SQ8 by hand: code = floor(255 (x - min) / (max - min)) (at most 255), decoded to min + (code + 0.5) (max - min) / 255.

    So the top code decodes half a bucket above the maximum, as faiss does.
    """
    cal = np.array([[0.6, 0.8], [0.8, 0.6], [1.0, 0.0]])  # unit rows; dim 0 spans 0.6..1, dim 1 spans 0..0.8
    a, b = np.array([[1.0, 0.0]]), np.array([[0.6, 0.8]])
    # b: dim 0 at the bottom of 0.6..1 -> code 0 -> 0.6 + 0.5 * 0.4 / 255; dim 1 at the top of 0..0.8 -> code 255 -> 255.5 * 0.8 / 255.
    decoded = np.array([0.6 + 0.5 * 0.4 / 255, 255.5 * 0.8 / 255])
    np.testing.assert_allclose(S["int8"].kept(b, cal), [decoded], atol=1e-7)
    # The query is not quantised: a . decoded b, not renormalised (faiss' inner product).
    assert S["int8"].pair_scores(a, b, cal)[0] == pytest.approx(decoded[0], abs=1e-7)
    # Global: one range 0..1 for both dimensions: 0.6 -> floor(153) = 153, 0.8 -> floor(204) = 204.
    np.testing.assert_allclose(S["int8-global"].kept(b, cal), [[153.5 / 255, 204.5 / 255]], atol=1e-7)


@pytest.mark.parametrize("kind", ["int8", "int8-global"])
def test_int8_scores_and_ranking_are_faiss_index_scalar_quantizer_search(kind):
    """The stores' int8: faiss' IndexScalarQuantizer searched with float queries gives our scores and our top 10."""
    import faiss

    rng = np.random.default_rng(0)
    rows = rng.normal(size=(330, 48)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    queries, passages = rows[:30], rows[30:]
    qtype = faiss.ScalarQuantizer.QT_8bit if kind == "int8" else faiss.ScalarQuantizer.QT_8bit_uniform
    index = faiss.IndexScalarQuantizer(48, qtype, faiss.METRIC_INNER_PRODUCT)
    index.train(passages)
    index.add(passages)
    theirs, order = index.search(queries, 10)
    ours = S[kind].scores(queries, passages)  # calibrated on the passages, as the index is trained on them
    np.testing.assert_allclose(np.take_along_axis(ours, order, axis=1), theirs, rtol=0, atol=2e-6)
    np.testing.assert_array_equal(np.argsort(-ours, axis=1, kind="stable")[:, :10], order)
    # The symmetric figure (query quantised too) is another ranking: what the setting no longer reports.
    symmetric = S[kind].kept(queries, passages) @ S[kind].kept(passages).T
    assert not np.array_equal(np.argsort(-symmetric, axis=1, kind="stable")[:, :10], order)


def test_int8_decoding_is_faiss_scalar_quantizer_decoding():
    import faiss

    x = np.random.default_rng(0).normal(size=(200, 16)).astype(np.float32)
    units = x / np.linalg.norm(x, axis=1, keepdims=True)
    for name, qtype in (("int8", faiss.ScalarQuantizer.QT_8bit), ("int8-global", faiss.ScalarQuantizer.QT_8bit_uniform)):
        index = faiss.IndexScalarQuantizer(16, qtype)
        index.train(units)
        # Equal but for one float32 rounding of a unit row (ours normalises in float32 its own way, 0.5% of entries).
        np.testing.assert_allclose(S[name].kept(x), index.sa_decode(index.sa_encode(units)), rtol=0, atol=1.2e-7)


def test_int8_score_bound_by_hand():
    cal = np.array([[0.6, 0.8], [0.8, 0.6], [1.0, 0.0]])
    # Half a bucket per dimension: 0.4 / 255 / 2 and 0.8 / 255 / 2.
    assert S["int8"].score_bound(cal) == pytest.approx(1 + np.hypot(0.4 / 510, 0.8 / 510), abs=1e-7)
    assert S["int8-global"].score_bound(cal) == pytest.approx(1 + np.hypot(1 / 510, 1 / 510), abs=1e-7)


def test_packed_sign_bits_are_sentence_transformers_ubinary():
    from sentence_transformers.util.quantization import quantize_embeddings

    x = np.random.default_rng(5).normal(size=(9, 21)).astype(np.float32)
    x[0, :4] = 0.0
    np.testing.assert_array_equal(c.binary_codes(x), quantize_embeddings(x, "ubinary"))


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
    dims2 = c.truncation(2)
    np.testing.assert_allclose(dims2.kept(a), [[3.0, 4.0]])
    # The first two of each, renormalised by the cosine: (0.6, 0.8) . (0.8, 0.6).
    np.testing.assert_allclose(c.pair_scores(dims2, a, b), [0.6 * 0.8 + 0.8 * 0.6])
    with pytest.raises(ValueError, match="keep fewer"):
        c.truncation(3).kept(a)


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
    cells = {name: set(map(tuple, part[["probe", "metric", "mode"]].to_numpy())) for name, part in t.groupby("setting")}
    assert cells["float32"] == cells["int8"] == cells["dims:64"]  # every cosine-scale setting has every cell
    # binary: every cell but the rates at the cosine threshold, which it never gets (another scale).
    at_cosine = {cell for cell in cells["float32"] if cell[1] in (c.METRIC_FAILURE_RATE, c.METRIC_MATCH_RATE)}
    assert at_cosine and cells["binary"] == cells["float32"] - at_cosine
    binary_means = t[(t["setting"] == "binary") & t["metric"].isin(c.SCORE_METRICS)]
    assert len(binary_means) and binary_means["change"].isna().all()  # a difference of two scales is not a change
    ok = t.dropna(subset=["ci_low", "ci_high"])
    assert ((ok["ci_low"] <= ok["value"] + 1e-12) & (ok["value"] <= ok["ci_high"] + 1e-12)).all()
    assert (t.loc[t["setting"] == "float32", "change"] == 0).all()
    assert not result.errors


@pytest.mark.parametrize("category", ["negation", "numerical", "positive"])
def test_an_interval_matches_scipy_bootstrap_drawn_by_hand(result, suite_pairs, shared_cache, minilm, category):
    """The binary setting's rate of a category at its own threshold: its interval recomputed from the scores with scipy directly."""
    part = suite_pairs[suite_pairs[constants.COL_CATEGORY] == category]
    vectors, _ = encode_texts(minilm, [*part[constants.COL_TEXT_A], *part[constants.COL_TEXT_B]], shared_cache)
    a = embedding_matrix(vectors, list(part[constants.COL_TEXT_A]))
    b = embedding_matrix(vectors, list(part[constants.COL_TEXT_B]))
    scores = c.pair_scores(S["binary"], a, b)
    binary = result.table.query("setting == 'binary' and probe == 'failure-modes'")
    own = binary.query("metric == 'own_threshold'")["value"].iloc[0]
    indicators = (scores > own).astype(float)
    row = binary[binary["metric"].str.endswith("_own_threshold") & (binary["mode"] == category)].iloc[0]
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


# ------------------------------------------------------------------ what changed, in words


def _table(rows):
    return c.with_change(pd.DataFrame(rows, columns=c.TABLE_COLUMNS[:-1]))


def test_changed_cells_are_those_each_outside_the_others_interval():
    rows = [
        ("float32", "m", "p", "recall_at_1", "all", 0.36, 0.31, 0.41, 270),
        ("binary", "m", "p", "recall_at_1", "all", 0.30, 0.25, 0.35, 270),  # 0.36 outside [0.25, 0.35], 0.30 outside [0.31, 0.41]
        ("dims:64", "m", "p", "recall_at_1", "all", 0.33, 0.28, 0.38, 270),  # 0.36 inside its interval: not moved
        ("float32", "m", "p", "failure_rate", "negation", 1.0, np.nan, np.nan, 55),  # a rate of 1: a point
        ("dims:32", "m", "p", "failure_rate", "negation", 0.9, 0.82, 0.96, 55),  # 1 outside, 0.9 off the point: moved
        ("float32", "m", "p", "mean_score", "negation", 0.88, 0.86, 0.90, 55),
        ("binary", "m", "p", "mean_score", "negation", 0.71, 0.68, 0.73, 55),  # another scale: never a change
    ]
    moved = c.changed_cells(_table(rows))
    assert list(moved.columns) == c.CHANGE_COLUMNS
    assert list(zip(moved["setting"], moved["metric"], strict=True)) == [("dims:32", "failure_rate"), ("binary", "recall_at_1")]
    assert moved["change"].tolist() == pytest.approx([-0.1, -0.06])
    assert moved[c.FLOAT32].tolist() == [1.0, 0.36]


def test_chart_cells_read_an_off_scale_setting_at_its_own_threshold_against_float32_at_its_own():
    rows = [
        ("float32", "m", "p", "failure_rate", "negation", 0.50, 0.40, 0.60, 55),
        ("float32", "m", "p", "failure_rate_own_threshold", "negation", 0.30, 0.20, 0.40, 55),
        ("int8", "m", "p", "failure_rate", "negation", 0.52, 0.42, 0.62, 55),
        ("int8", "m", "p", "failure_rate_own_threshold", "negation", 0.31, 0.21, 0.41, 55),
        # binary has no rate at the cosine threshold: its cell is its rate at its own threshold, moved against float32's own
        ("binary", "m", "p", "failure_rate_own_threshold", "negation", 0.80, 0.70, 0.90, 55),
        ("binary", "m", "p", "mean_score", "negation", 0.71, 0.68, 0.73, 55),
        ("float32", "m", "p", "failure_rate", "hedging", 0.9, 0.8, 1.0, 20),
        ("int8", "m", "p", "failure_rate", "hedging", 0.9, 0.8, 1.0, 20),  # binary made no figure here: no cell
    ]
    cells = c.chart_cells(_table(rows), "failure_rate")
    assert list(cells.columns) == c.CHART_CELL_COLUMNS
    got = {(r.setting, r.mode): (r.metric, r.value, r.own_threshold, r.moved) for r in cells.itertuples()}
    assert got == {
        ("int8", "negation"): ("failure_rate", 0.52, False, False),
        ("binary", "negation"): ("failure_rate_own_threshold", 0.80, True, True),
        ("int8", "hedging"): ("failure_rate", 0.9, False, False),
    }
    binary = cells[cells["setting"] == "binary"].iloc[0]
    assert binary["change"] == pytest.approx(0.50)  # 0.80 - float32's 0.30 at its own threshold, never 0.80 - 0.50
    # A figure with no own-threshold twin (mean score) reads only its own rows; an unknown figure is refused.
    assert set(c.chart_cells(_table(rows), "mean_score")["setting"]) == {"binary"}
    with pytest.raises(ValueError, match="no figure 'recall_at_1'"):
        c.chart_cells(_table(rows), "recall_at_1")


def test_findings_name_what_moved_and_what_did_not():
    rows = [
        ("float32", "m", "p", "recall_at_1", "all", 0.36, 0.31, 0.41, 270),
        ("binary", "m", "p", "recall_at_1", "all", 0.30, 0.25, 0.35, 270),
        ("float16", "m", "p", "recall_at_1", "all", 0.36, 0.31, 0.41, 270),
        ("float32", "n", "p", "recall_at_1", "all", 0.36, 0.31, 0.41, 270),
        ("float16", "n", "p", "recall_at_1", "all", 0.36, 0.31, 0.41, 270),
    ]
    said = c.findings(_table(rows), short_name=str.upper)
    assert said == [
        "M: binary moves 1 figure, most the recall@1 (0.36 to 0.30); float16 moves nothing beyond the intervals.",
        "N: no index setting (float16) moves a failure rate, win rate or recall beyond its 95% interval against float32.",
    ]


def test_metric_words():
    assert c.metric_words("recall_at_5") == "recall@5"
    assert c.metric_words("top10_changed") == "top 10 changed"
    assert c.metric_words("failure_rate_own_threshold") == "failure rate at its own threshold"


def test_pairs_without_controls_say_why_binary_has_no_rate(shared_cache):
    pairs = pd.DataFrame(
        {"text_a": ["The patient has diabetes"], "text_b": ["The patient does not have diabetes"], "category": ["negation"]}
    )
    result = c.run_index_settings(
        [MINILM_L6], settings=c.parse_settings(["binary", "int8"]), pairs={"mine": pairs}, cache=shared_cache, n_resamples=99
    )
    assert result.notes == [
        "mine: no failure rate for binary: their scores are not cosines and these pairs hold no positive and negative "
        "controls to calibrate their own threshold; compare them by rank (retrieval, triples)"
    ]
    binary = result.table[result.table["setting"] == "binary"]
    assert set(binary["metric"]) == {c.METRIC_MEAN_SCORE}


def test_a_run_without_pairs_says_why_it_is_not_stored_without_naming_an_output_it_may_not_have(capsys, monkeypatch, tmp_path):
    """A retrieval- or triples-only run stores no history; the note must not send the reader to an --out never given."""
    from core.cli.history import record_result_history
    from core.probes.index_settings import IndexSettingsResult

    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    table = pd.DataFrame({"setting": ["float32"], "model": [MINILM_L6], "metric": ["recall_at_1"], "value": [1.0]})
    assert record_result_history("index-settings", "retrieval", IndexSettingsResult(table), {}) is None
    err = capsys.readouterr().err
    assert err.startswith("note: not stored in the history: the run scored no pairs") and "--out" not in err, err
