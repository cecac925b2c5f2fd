"""Warm by default: what is warmed, that the warm-up fills the cache (its counters), that a second one encodes nothing."""

from __future__ import annotations

from core import constants
from core.models.estimate import estimate_run
from core.models.options import DEFAULT_OPTIONS
from core.models.registry import MINILM_L6
from core.papers import suites
from core.probes import warmup
from core.probes.retrieval.suite_files import load_retrieval_suite

SMALL = {"a few": ["The patient is allergic to penicillin", "The patient is not allergic to penicillin", "Google acquired YouTube"]}


def test_warm_texts_cover_what_the_pages_ask_first():
    texts = warmup.warm_texts()
    every = {t for group in texts.values() for t in group}
    controls = suites.control_pairs((constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS))
    # Calibrate's control pairs, Compare's first pair and heatmap, Retrieval's default sample: all warmed.
    assert set(controls[constants.COL_TEXT_A]) | set(controls[constants.COL_TEXT_B]) <= every
    assert {constants.EXAMPLE_SENTENCE_A, constants.EXAMPLE_SENTENCE_B, *constants.EXAMPLE_HEATMAP_SENTENCES} <= every
    sample = load_retrieval_suite().sample(constants.RETRIEVAL_QUICK_GROUPS)
    assert set(sample.passages[constants.COL_TEXT]) | set(sample.queries[constants.COL_TEXT]) <= every
    assert warmup.warm_texts() == texts  # deterministic: the same texts on every call


def test_warm_fills_the_cache_and_a_second_warm_encodes_nothing(fresh_cache, minilm):
    first = warmup.warm_cache([MINILM_L6], cache=fresh_cache, options=DEFAULT_OPTIONS, texts=SMALL)
    assert first.models[0].n_encoded == 3 and first.models[0].error is None
    assert fresh_cache.stats.misses == 3 and fresh_cache.stats.writes >= 1
    assert warmup.missing_texts([MINILM_L6], fresh_cache, texts=SMALL) == 0
    fresh_cache.stats.reset()
    fresh_cache.clear_memory()  # as a new process would: only the disk layer is left
    again = warmup.warm_cache([MINILM_L6], cache=fresh_cache, options=DEFAULT_OPTIONS, texts=SMALL)
    assert again.n_encoded == 0 and again.models[0].n_cached == 3
    assert fresh_cache.stats.misses == 0 and fresh_cache.stats.disk_hits == 3


def test_a_model_that_cannot_load_is_reported_and_the_others_warm(fresh_cache, minilm):
    report = warmup.warm_cache(["no-such-owner/no-such-model", MINILM_L6], cache=fresh_cache, texts=SMALL)
    assert report.models[0].error and "no-such-model" in report.models[0].error
    assert report.models[1].n_encoded == 3


def test_estimate_counts_what_the_cache_lacks(fresh_cache, minilm):
    texts = SMALL["a few"]
    before = estimate_run([MINILM_L6], texts, fresh_cache, DEFAULT_OPTIONS)
    assert before.n_to_encode == 3 and before.seconds > 0
    warmup.warm_cache([MINILM_L6], cache=fresh_cache, texts=SMALL)
    after = estimate_run([MINILM_L6], texts, fresh_cache, DEFAULT_OPTIONS)
    assert after.n_to_encode == 0 and after.seconds < before.seconds


def test_cli_warm_is_idempotent(cli, monkeypatch, minilm):
    monkeypatch.setattr(warmup, "warm_texts", lambda: {"a few": ["Warm me once", "And me too"]})
    code, out, _ = cli("models", "--warm", "--warm-models", MINILM_L6)
    assert code == 0 and "2 texts, 2 encoded" in out
    code, out, _ = cli("models", "--warm", "--warm-models", MINILM_L6)
    assert code == 0 and "2 texts, 0 encoded, 2 already cached" in out and "no weights loaded" not in out  # MiniLM is in memory here


def test_quick_sample_is_deterministic_and_spread_over_modes():
    suite = load_retrieval_suite()
    sample = suite.sample(constants.RETRIEVAL_QUICK_GROUPS)
    assert len(sample.group_ids) == constants.RETRIEVAL_QUICK_GROUPS
    assert sample.group_ids == suite.sample(constants.RETRIEVAL_QUICK_GROUPS).group_ids
    assert sample.passages[constants.COL_DOMAIN].nunique() > 1  # not the first 25 groups of one domain
    assert suite.sample(10_000) is suite


def test_calibrate_scores_the_warmed_control_pairs_from_the_cache(fresh_cache, minilm):
    """Compare's "Calibrate on the control pairs" runs these pairs (ui/calibration_controls.py): after a warm-up nothing is encoded."""
    from core.scoring.runner import run_pairs

    pairs = suites.control_pairs((constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS))
    pairs = pairs.groupby(constants.COL_CATEGORY).head(4)  # a few of each kind keep the test fast; the warmed set holds them all (above)
    controls = list(dict.fromkeys([*pairs[constants.COL_TEXT_A], *pairs[constants.COL_TEXT_B]]))
    warmup.warm_cache([MINILM_L6], cache=fresh_cache, texts={"controls": controls})
    fresh_cache.clear_memory()
    result = run_pairs(pairs, [MINILM_L6], cache=fresh_cache)
    assert result.reports[MINILM_L6].n_encoded == 0 and result.reports[MINILM_L6].n_cached == len(controls)
