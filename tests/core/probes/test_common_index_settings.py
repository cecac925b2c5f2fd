"""Every index setting record (core/probes/index_settings.py) against the contract they share, as scikit-learn's test_common.

A new setting is one class and one entry in ``PRECISIONS`` (or a ``dims:D``); these tests then hold it to the
others' rules: its name parses back to it, it keeps shapes, its scores sit on its documented scale, a pair's score
is the matrix's diagonal, and a setting on another scale than a cosine never gets a rate at the cosine threshold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.probes import index_settings as s
from core.stats.similarity import cos_sim

D = 300  # above every default truncation (dims:256), not a multiple of 8 (packed sign bits)
SETTINGS = s.parse_settings(s.DEFAULT_SETTINGS)
IDS = [setting.name for setting in SETTINGS]


@pytest.fixture(scope="module")
def vectors():
    """Unit rows as a model returns them, float32: 7 queries, 40 passages, a calibration set holding both."""
    rng = np.random.default_rng(11)
    rows = rng.normal(size=(47, D)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows[:7], rows[7:], rows


def test_every_default_setting_is_a_record_and_float32_comes_first():
    assert SETTINGS[0] == s.FLOAT32_SETTING
    assert all(isinstance(setting, s.IndexSetting) for setting in SETTINGS)
    assert len({setting.name for setting in SETTINGS}) == len(SETTINGS) == len(s.DEFAULT_SETTINGS)


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_name_round_trips_in_any_case(setting):
    assert s.parse_setting(setting.name) == setting
    assert s.parse_setting(f"  {setting.name.upper()} ") == setting
    assert s.parse_settings([setting.name, setting.name]) == (setting,)


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_keeps_shapes(setting, vectors):
    q, p, cal = vectors
    assert setting.scores(q, p, cal).shape == (len(q), len(p))
    assert setting.pair_scores(q, p[: len(q)], cal).shape == (len(q),)
    assert len(setting.kept(p, cal)) == len(p)
    assert setting.keeps  # said in the CLI's help and on the page


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_scores_sit_on_the_documented_scale(setting, vectors):
    q, p, cal = vectors
    scores = setting.scores(q, p, cal)
    finite = np.isfinite(scores)
    # Only a shortlist leaves passages out, and it leaves them at -inf (never retrieved), each query keeping its shortlist.
    assert (scores[~finite] == -np.inf).all()
    assert (finite.sum(axis=1) >= min(len(p), s.RESCORE_MULTIPLIER * s.RESCORE_TOP_K)).all()
    bound = setting.score_bound(cal)
    assert 1.0 <= bound < 1.05
    assert np.abs(scores[finite]).max() <= bound + 1e-9
    pairs = setting.pair_scores(q, p[: len(q)], cal)
    assert np.isfinite(pairs).all() and np.abs(pairs).max() <= bound + 1e-9


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_a_pair_score_is_the_matrix_diagonal(setting, vectors):
    q, p, cal = vectors
    diagonal = np.diag(setting.scores(q, p[: len(q)], cal))
    np.testing.assert_allclose(setting.pair_scores(q, p[: len(q)], cal), diagonal, rtol=0, atol=1e-12)


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_scores_are_deterministic_and_leave_the_inputs_alone(setting, vectors):
    q, p, cal = vectors
    before = [a.copy() for a in (q, p, cal)]
    assert np.array_equal(setting.scores(q, p, cal), setting.scores(q, p, cal))
    assert all(np.array_equal(a, b) for a, b in zip(before, (q, p, cal), strict=True))


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_a_cosine_scale_setting_stays_near_the_cosine_and_another_scale_says_so(setting, vectors):
    q, p, cal = vectors
    exact = cos_sim(q, p)
    scores = setting.scores(q, p, cal)
    gap = np.abs(scores - exact)[np.isfinite(scores)]
    if setting.scale.cosine:
        # Random 300-d vectors: a precision moves a cosine by its rounding; a truncation to 32 of 300 by sampling.
        assert gap.max() < (0.5 if setting.dims else 0.01)
    else:
        assert setting.scale.name and setting in s.off_scale([setting])
        assert s.scale_note([setting]) is not None and setting.name in s.scale_note([setting])


def test_float32_is_the_exact_cosine_to_the_last_bit(vectors):
    q, p, cal = vectors
    assert np.array_equal(s.FLOAT32_SETTING.scores(q, p, cal), cos_sim(q, p))
    assert s.FLOAT32_SETTING.score_bound(cal) == 1.0


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_a_truncation_refuses_vectors_it_cannot_shorten_and_nothing_else_does(setting, vectors):
    q, p, cal = vectors
    small = 16
    if setting.dims:
        assert not setting.fits(setting.dims) and setting.fits(setting.dims + 1)
        with pytest.raises(ValueError, match="keep fewer"):
            setting.scores(q[:, :small], p[:, :small])
    else:
        assert setting.fits(small)
        assert setting.scores(q[:, :small], p[:, :small]).shape == (len(q), len(p))


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_bad_shapes_are_one_clear_error(setting, vectors):
    q, p, _ = vectors
    with pytest.raises(ValueError, match="one d"):
        setting.scores(q, p[:, :-1])
    with pytest.raises(ValueError, match="one shape"):
        setting.pair_scores(q, p)
    with pytest.raises(ValueError, match=r"\(n, d\) matrix"):
        setting.kept(p[0])


@pytest.mark.parametrize("setting", SETTINGS, ids=IDS)
def test_rates_at_the_cosine_threshold_only_on_the_cosine_scale(setting, vectors):
    """A binary setting's rates are at its own threshold, never at the cosine one (they would look like a fix)."""
    _, _, rows = vectors
    texts = [f"t{i}" for i in range(len(rows))]
    by_text = dict(zip(texts, rows, strict=True))
    cats = ["negation"] * 8 + ["positive"] * 8 + ["negative"] * 7
    pairs = pd.DataFrame({"text_a": texts[:23], "text_b": texts[23:46], "category": cats})
    table = s.pair_setting_rows(pairs, by_text, [setting], model="m", probe="p", threshold=0.0, n_resamples=99)
    at_cosine = {s.METRIC_FAILURE_RATE, s.METRIC_MATCH_RATE} & set(table["metric"])
    at_own = {s.METRIC_FAILURE_RATE_OWN, s.METRIC_MATCH_RATE_OWN} <= set(table["metric"])
    assert at_own
    assert bool(at_cosine) == setting.scale.cosine
    assert set(table["setting"]) == {setting.name}


def test_every_setting_is_parsed_once_from_its_name_and_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown index setting"):
        s.parse_setting("int4")
    for bad in ("dims:0", "dims:x", "dims:-3"):
        with pytest.raises(ValueError, match="dims:D"):
            s.parse_setting(bad)
    assert s.parse_setting("dims:064") == s.truncation(64)
