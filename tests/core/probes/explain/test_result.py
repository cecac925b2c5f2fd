"""The attribution table's helpers and the completeness arithmetic, on hand-made numbers; sides on MiniLM's tokenizer."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants
from core.models.loading import load_tokenizer
from core.models.registry import MINILM_L6
from core.probes.explain import TABLE_COLUMNS, by_word, top_units
from core.probes.explain.result import completeness
from core.probes.explain.sides import tokenize_side


def _table(rows: list[tuple[str, int, str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                constants.COL_MODEL: "m",
                constants.COL_SIDE: s,
                constants.COL_POSITION: p,
                constants.COL_TOKEN: t,
                constants.COL_WORD: w,
                constants.COL_WORD_POSITION: wp,
                constants.COL_ATTRIBUTION: a,
                constants.COL_METHOD: constants.METHOD_IG,
                constants.COL_UNIT: constants.UNIT_TOKEN,
            }
            for s, p, t, w, wp, a in rows
        ],
        columns=list(TABLE_COLUMNS),
    )


TABLE = _table(
    [
        ("A", 0, "pen", "penicillin", 0, 0.10),
        ("A", 1, "##ici", "penicillin", 0, -0.02),
        ("A", 2, "works", "works", 1, -0.30),
        ("B", 0, "not", "not", 0, 0.05),
    ]
)


def test_top_units_orders_by_absolute_attribution():
    top = top_units(TABLE, 3)
    assert list(top[constants.COL_TOKEN]) == ["works", "pen", "not"]
    with pytest.raises(ValueError, match="at least 1"):
        top_units(TABLE, 0)


def test_by_word_sums_the_pieces():
    words = by_word(TABLE)
    assert list(words[constants.COL_WORD]) == ["penicillin", "works", "not"]
    assert words[constants.COL_ATTRIBUTION].tolist() == pytest.approx([0.08, -0.30, 0.05])
    assert words[constants.COL_TOKEN].iloc[0] == "pen ##ici"
    assert set(words[constants.COL_UNIT]) == {constants.UNIT_WORD}
    with pytest.raises(ValueError, match="already per word"):
        by_word(words)


def test_completeness_arithmetic():
    check = completeness(50, "mask", cosine=0.90, baseline_cosine=0.99, attribution_sum=-0.0855)
    assert check.miss == pytest.approx(-0.0855 - (0.90 - 0.99))
    assert check.relative_miss == pytest.approx(0.0045 / 0.09)
    assert check.ok and check.as_dict()["ok"] is True
    off = completeness(20, "pad", cosine=0.90, baseline_cosine=0.99, attribution_sum=-0.05)
    assert off.relative_miss == pytest.approx(0.04 / 0.09)
    assert not off.ok and off.more_steps == 80
    # No change to share out: a tiny absolute miss is fine, a real one is an infinite relative miss.
    assert completeness(50, "mask", 1.0, 1.0, 2e-5).ok
    flat = completeness(50, "mask", 1.0, 1.0, 0.01)
    assert math.isinf(flat.relative_miss) and not flat.ok and flat.as_dict()["relative_miss"] is None


@pytest.fixture(scope="module")
def tokenizer(session_cache_dir):
    return load_tokenizer(MINILM_L6)


def test_side_maps_tokens_to_words(tokenizer):
    side = tokenize_side(tokenizer, "Fleming found penicillin, in 1928.", "A", max_length=256)
    assert side.tokens == ("fleming", "found", "pen", "##ici", "##llin", ",", "in", "1928", ".")
    assert side.words == ("Fleming", "found", "penicillin", ",", "in", "1928", ".")
    assert side.word_of == (0, 1, 2, 2, 2, 3, 4, 5, 6)
    # [CLS] and [SEP] are fed to the model but not explained.
    assert len(side.input_ids) == len(side.positions) + 2 and side.positions[0] == 1
    assert side.word_positions(2) == (3, 4, 5) and not side.truncated


def test_side_skips_the_prompt_and_reports_truncation(tokenizer):
    side = tokenize_side(tokenizer, "alpha beta gamma delta", "B", prompt="query: ", max_length=6)
    assert side.tokens == ("alpha", "beta")  # [CLS] query : alpha beta [SEP]
    assert side.truncated
    with pytest.raises(ValueError, match="side"):
        tokenize_side(tokenizer, "x", "C")
    with pytest.raises(ValueError, match="empty"):
        tokenize_side(tokenizer, "", "A")
