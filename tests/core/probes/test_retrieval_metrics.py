"""Retrieval metrics against hand computations and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.probes.retrieval.metrics import (
    adversarial_wins,
    mcnemar_exact,
    paired_correct,
    ranking_summary,
    rate_difference_ci,
    rate_with_ci,
    target_ranks,
)
from core.stats.intervals import bootstrap_ci

INF = math.inf


def test_wins_are_strict_and_filtered_variants_never_win():
    paraphrase = [0.80, 0.70, 0.60, -INF, 0.50]
    variant = [0.90, 0.70, 0.55, 0.10, -INF]
    # 0.9 > 0.8 wins; a tie is no win; 0.55 < 0.60; any finite beats a filtered paraphrase; a filtered variant never wins.
    assert adversarial_wins(paraphrase, variant).tolist() == [True, False, False, True, False]


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [([0.1, math.nan], [0.2, 0.3], "NaN"), ([0.1], [0.2, 0.3], "length"), ([[0.1]], [[0.2]], "1-D")],
)
def test_wins_refuse_bad_input(a, b, message):
    with pytest.raises(ValueError, match=message):
        adversarial_wins(a, b)


def test_paired_correct_needs_both_queries_right():
    # group:          both right  q1 wrong   q2 wrong   tie on q1
    q1_anchor = [0.9, 0.4, 0.9, 0.5]
    q1_variant = [0.8, 0.6, 0.8, 0.5]
    q2_anchor = [0.3, 0.3, 0.9, 0.1]
    q2_variant = [0.7, 0.7, 0.2, 0.9]
    assert paired_correct(q1_anchor, q1_variant, q2_anchor, q2_variant).tolist() == [True, False, False, False]


def test_rate_without_clusters_is_the_bootstrap_of_the_mean():
    wins = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1], dtype=bool)
    rate, low, high = rate_with_ci(wins, seed=3)
    assert rate == pytest.approx(7 / 10)
    assert (low, high) == bootstrap_ci(wins.astype(float), seed=3)
    assert low <= rate <= high


def test_rate_resamples_whole_clusters():
    # Every group holds one win and one loss: any resample of groups has rate exactly 1/2,
    # where resampling single values would give a wide interval.
    wins = [True, False] * 6
    groups = np.repeat(np.arange(6), 2)
    assert rate_with_ci(wins, groups) == (0.5, 0.5, 0.5)
    rate, low, high = rate_with_ci(wins)
    assert rate == 0.5 and low < 0.5 < high


def test_clustered_interval_matches_scipy_on_group_sums():
    wins = np.array([1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1], dtype=bool)
    groups = np.array([0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5])
    w = np.array([2, 1, 0, 2, 1, 1], dtype=float)  # wins per group, counted by hand
    n = np.array([2, 3, 1, 2, 1, 3], dtype=float)
    expected = stats.bootstrap(
        (w, n),
        lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
        paired=True,
        vectorized=True,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    rate, low, high = rate_with_ci(wins, groups, n_resamples=2000)
    assert rate == pytest.approx(7 / 12)
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_rate_of_nothing_is_nan_and_bad_values_are_refused():
    assert all(math.isnan(v) for v in rate_with_ci([]))
    with pytest.raises(ValueError, match="booleans"):
        rate_with_ci([0.5, 1.0])
    with pytest.raises(ValueError, match="clusters"):
        rate_with_ci([True, False], [1])


SCORES = np.array(
    [
        [0.9, 0.5, 0.7, 0.7, 0.1],
        [0.2, 0.8, 0.8, -INF, 0.3],
        [-INF, 0.4, 0.6, 0.5, 0.0],
    ]
)


def test_ranks_by_hand_with_ties_against_the_retriever():
    targets = np.array([2, 1, 0])
    # q0: 0.7 has 0.9 above and a tie with the other 0.7 -> 3rd (tie counted above it).
    # q1: 0.8 has no one above and one tie -> 2nd.  q2: the target is filtered -> inf.
    assert target_ranks(SCORES, targets).tolist() == [3.0, 2.0, INF]
    # ties_first: the target wins its ties.
    assert target_ranks(SCORES, targets, ties_first=True).tolist() == [2.0, 1.0, INF]


def test_ranks_match_scipy_rankdata():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 5, size=(6, 9)).astype(float)  # many ties on purpose
    targets = rng.integers(0, 9, size=6)
    worst = np.array([stats.rankdata(-row, method="max")[t] for row, t in zip(scores, targets, strict=True)])
    best = np.array([stats.rankdata(-row, method="min")[t] for row, t in zip(scores, targets, strict=True)])
    assert target_ranks(scores, targets).tolist() == worst.tolist()
    assert target_ranks(scores, targets, ties_first=True).tolist() == best.tolist()


@pytest.mark.parametrize(
    ("scores", "targets", "message"),
    [
        (np.zeros(3), np.array([0]), "n_queries"),
        (np.zeros((2, 3)), np.array([0]), "integer"),
        (np.zeros((1, 3)), np.array([3]), "outside"),
        (np.array([[math.nan, 0.0]]), np.array([0]), "NaN"),
    ],
)
def test_ranks_refuse_bad_input(scores, targets, message):
    with pytest.raises(ValueError, match=message):
        target_ranks(scores, targets)


def test_ranking_summary_by_hand():
    right = [1, 2, INF, 5, 7]
    contra = [3, 1, 1, 2, 1]
    s = ranking_summary(right, contra)
    assert s.n_queries == 5
    assert s.recall == {1: pytest.approx(1 / 5), 5: pytest.approx(3 / 5)}
    assert s.mrr == pytest.approx((1 + 1 / 2 + 0 + 1 / 5 + 1 / 7) / 5)
    assert s.top1_contradiction == pytest.approx(3 / 5)


def test_ranking_summary_of_no_query_and_bad_ranks():
    empty = ranking_summary([], [])
    assert empty.n_queries == 0 and math.isnan(empty.mrr) and math.isnan(empty.recall[1])
    with pytest.raises(ValueError, match="ranks"):
        ranking_summary([0.5], [1])
    with pytest.raises(ValueError, match="k"):
        ranking_summary([1], [1], ks=(0,))


def test_mcnemar_by_hand():
    a = [1, 1, 1, 1, 1, 1, 0, 1, 0, 1]
    b = [0, 0, 0, 0, 0, 0, 1, 1, 0, 1]
    test = mcnemar_exact(a, b)
    # Discordant: 6 where only A, 1 where only B.  Exact two-sided p = 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128.
    assert (test.a_only, test.b_only) == (6, 1)
    assert test.pvalue == pytest.approx(2 * 8 / 128)
    assert test.pvalue == pytest.approx(stats.binomtest(6, 7, 0.5).pvalue)


def test_mcnemar_without_discordant_pairs():
    assert mcnemar_exact([True, False], [True, False]) == mcnemar_exact([], []).__class__(0, 0, 1.0)


def test_rate_difference_by_hand_and_bootstrap():
    a = np.array([1, 1, 1, 0, 1, 0, 1, 1], dtype=bool)
    b = np.array([0, 1, 0, 0, 1, 0, 0, 1], dtype=bool)
    diff, low, high = rate_difference_ci(a, b, seed=2, n_resamples=2000)
    assert diff == pytest.approx(6 / 8 - 3 / 8)
    expected = stats.bootstrap(
        (a.astype(float), b.astype(float)),
        lambda x, y, axis=-1: x.mean(axis) - y.mean(axis),
        paired=True,
        vectorized=True,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert rate_difference_ci([True, False], [True, False]) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="length"):
        rate_difference_ci([True], [True, False])
