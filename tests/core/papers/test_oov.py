"""core.analysis.oov_token_groups and core.tokens.piece_counts (OOV page, Table 10)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants
from core.models.tokens import piece_counts
from core.papers import oov


def _deltas(model: str, values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            constants.COL_MODEL: model,
            constants.COL_PAIR_ID: [f"p-{e}" for e in values],
            constants.COL_ENTITY: list(values),
            constants.COL_REPLACEMENT: "x",
            "reading": constants.VARIANT_REPLACED_B,
            "cosine_original": 0.9,
            "cosine_replaced": [0.9 - v for v in values.values()],
            "delta": list(values.values()),
            "normalized_delta": math.nan,
        }
    )


def test_oov_token_groups_per_model_counts():
    deltas = pd.concat(
        [_deltas("m1", {"Google": 0.1, "Bitcoin": 0.4, "DNA": 0.3}), _deltas("m2", {"Google": 0.2, "Bitcoin": 0.2, "DNA": 0.5})],
        ignore_index=True,
    )
    counts = {"m1": {"Google": 1, "Bitcoin": 3, "DNA": 1}, "m2": {"Google": 2, "Bitcoin": 3, "DNA": 1}}
    out = oov.oov_token_groups(deltas, counts).set_index(constants.COL_MODEL)
    assert list(out.columns) == ["n_single", "single_token_mean_delta", "n_multi", "multi_token_mean_delta"]
    # m1: single = Google, DNA -> (0.1 + 0.3) / 2; multi = Bitcoin
    assert out.at["m1", "n_single"] == 2 and out.at["m1", "single_token_mean_delta"] == pytest.approx(0.2)
    assert out.at["m1", "n_multi"] == 1 and out.at["m1", "multi_token_mean_delta"] == pytest.approx(0.4)
    # m2's tokenizer splits Google: multi = Google, Bitcoin -> 0.2
    assert out.at["m2", "n_single"] == 1 and out.at["m2", "single_token_mean_delta"] == pytest.approx(0.5)
    assert out.at["m2", "n_multi"] == 2 and out.at["m2", "multi_token_mean_delta"] == pytest.approx(0.2)


def test_oov_token_groups_empty_group_is_nan():
    deltas = _deltas("m1", {"Google": 0.1, "DNA": 0.3})
    out = oov.oov_token_groups(deltas, {}).iloc[0]  # no counts: every entity single-token
    assert out["n_single"] == 2 and out["single_token_mean_delta"] == pytest.approx(0.2)
    assert out["n_multi"] == 0 and math.isnan(out["multi_token_mean_delta"])


class _FakeTokenizer:
    def tokenize(self, word: str) -> list[str]:
        return {"Bitcoin": ["bit", "##co", "##in"], "Google": ["google"]}.get(word, [word])


def test_piece_counts():
    assert piece_counts(_FakeTokenizer(), ["Google", "Bitcoin", "Google"]) == {"Google": 1, "Bitcoin": 3}


def test_piece_counts_real_minilm_matches_table2():
    from core.models.loading import load_tokenizer
    from core.papers.reproduce import table2_token_counts

    tok = load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")
    table2 = table2_token_counts()
    ours = piece_counts(tok, list(table2))
    assert ours["Bitcoin"] == 3 and ours["penicillin"] == 3 and ours["Fibonacci"] == 4 and ours["Google"] == 1
    assert ours["Xylophrix"] == 5


def _oov_results() -> pd.DataFrame:
    rows = []
    for entity, (orig, both, second) in {"Google": (0.8, 0.9, 0.6), "DNA": (0.7, 0.75, 0.4)}.items():
        for variant, cos in (
            (constants.VARIANT_ORIGINAL, orig),
            (constants.VARIANT_REPLACED_BOTH, both),
            (constants.VARIANT_REPLACED_B, second),
        ):
            rows.append(
                {
                    constants.COL_MODEL: "m1",
                    constants.COL_SUITE: constants.SUITE_OOV,
                    constants.COL_CATEGORY: constants.CAT_OOV,
                    constants.COL_PAIR_ID: entity,
                    constants.COL_ENTITY: entity,
                    constants.COL_REPLACEMENT: "x",
                    constants.COL_VARIANT: variant,
                    constants.COL_COSINE: cos,
                }
            )
    for cat, cosines in ((constants.CAT_POSITIVE, (0.8, 0.6)), (constants.CAT_NEGATIVE, (0.1, 0.0))):
        for i, cos in enumerate(cosines):
            rows.append(
                {
                    constants.COL_MODEL: "m1",
                    constants.COL_SUITE: constants.SUITE_BASELINE,
                    constants.COL_CATEGORY: cat,
                    constants.COL_PAIR_ID: f"{cat}{i}",
                    constants.COL_COSINE: cos,
                }
            )
    return pd.DataFrame(rows)


def test_oov_readings_both_and_second_only():
    out = oov.oov_readings(_oov_results()).set_index("reading")
    # both: deltas -0.1, -0.05; second only: 0.2, 0.3; dynamic range 0.7 - 0.05
    assert out.at[constants.VARIANT_REPLACED_BOTH, "mean_delta"] == pytest.approx(-0.075)
    assert out.at[constants.VARIANT_REPLACED_B, "mean_delta"] == pytest.approx(0.25)
    assert out.at[constants.VARIANT_REPLACED_B, "normalized_mean"] == pytest.approx(0.25 / 0.65)
    assert out.at[constants.VARIANT_REPLACED_B, "reading_label"] == constants.OOV_READINGS[constants.VARIANT_REPLACED_B]
    assert (out["n"] == 2).all()


def test_oov_readings_without_oov_rows():
    base = _oov_results()
    assert oov.oov_readings(base[base[constants.COL_SUITE] == constants.SUITE_BASELINE]).empty
