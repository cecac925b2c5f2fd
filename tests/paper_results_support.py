"""A hand-made results table over the three suites, for the papers' reproduction tests (figures computed by hand)."""

from __future__ import annotations

import pandas as pd

from core import constants
from core.papers import reference

MINILM = reference.MODEL_MINILM
EXTRA = "acme/tiny-embedder"  # a model neither paper tested
PENICILLIN = ("The patient is allergic to penicillin", "The patient is not allergic to penicillin")


def pair_rows(model: str, suite: str, category: str, cosines, **extra) -> list[dict]:
    """One result row per cosine: ``model``'s pairs of ``category`` in ``suite``, numbered, with ``extra`` columns."""
    return [
        {
            constants.COL_MODEL: model,
            constants.COL_SUITE: suite,
            constants.COL_CATEGORY: category,
            constants.COL_PAIR_ID: f"{suite}-{category}-{i}",
            constants.COL_TEXT_A: f"{category} a{i}",
            constants.COL_TEXT_B: f"{category} b{i}",
            constants.COL_COSINE: c,
            constants.COL_TOKEN_JACCARD: 0.5,
            **extra,
        }
        for i, c in enumerate(cosines)
    ]


def _oov(model: str, entity: str, replacement: str, original: float, both: float, second: float) -> list[dict]:
    out = []
    for variant, cos in (
        (constants.VARIANT_ORIGINAL, original),
        (constants.VARIANT_REPLACED_BOTH, both),
        (constants.VARIANT_REPLACED_B, second),
    ):
        out.append(
            {
                constants.COL_MODEL: model,
                constants.COL_SUITE: constants.SUITE_OOV,
                constants.COL_CATEGORY: constants.CAT_OOV,
                constants.COL_PAIR_ID: f"oov-{entity}",
                constants.COL_TEXT_A: f"{entity} {variant} a",
                constants.COL_TEXT_B: f"{entity} {variant} b",
                constants.COL_COSINE: cos,
                constants.COL_ENTITY: entity,
                constants.COL_REPLACEMENT: replacement,
                constants.COL_VARIANT: variant,
                constants.COL_TOKEN_JACCARD: 0.5,
            }
        )
    return out


def hand_results() -> pd.DataFrame:
    """Two models (MiniLM and one neither paper tested) over the three suites, each figure chosen to be computed by hand."""
    rows: list[dict] = []
    for model in (EXTRA, MINILM):  # the extra model first: orientation must follow the paper, not result order
        # failure-modes suite: positives mean 0.8, sample SD 0.1
        rows += pair_rows(model, constants.SUITE_FAILURE_MODES, constants.CAT_POSITIVE, [0.8, 0.7, 0.9])
        rows += pair_rows(model, constants.SUITE_FAILURE_MODES, constants.CAT_NEGATION, [0.9, 0.95])
        rows.append(
            {
                **pair_rows(model, constants.SUITE_FAILURE_MODES, constants.CAT_NEGATION, [0.947])[0],
                constants.COL_PAIR_ID: "neg-002",
                constants.COL_TEXT_A: PENICILLIN[0],
                constants.COL_TEXT_B: PENICILLIN[1],
            }
        )
        # baseline: positive mean 0.7, negative mean 0.05 -> dynamic range 0.65
        rows += pair_rows(model, constants.SUITE_BASELINE, constants.CAT_POSITIVE, [0.8, 0.6])
        rows += pair_rows(model, constants.SUITE_BASELINE, constants.CAT_NEGATIVE, [0.1, 0.0])
        rows += pair_rows(model, constants.SUITE_BASELINE, constants.CAT_ENTITY_SWAP, [0.99, 0.97])
    # OOV: MiniLM deltas (both) = -0.1, -0.05; (second only) = 0.2, 0.3
    rows += _oov(MINILM, "Google", "Xylophrix", 0.8, 0.9, 0.6)
    rows += _oov(MINILM, "Microsoft", "Quarbitone", 0.7, 0.75, 0.4)
    # extra model: deltas (second only) = 0.1, 0.1
    rows += _oov(EXTRA, "Google", "Xylophrix", 0.8, 0.8, 0.7)
    rows += _oov(EXTRA, "Microsoft", "Quarbitone", 0.7, 0.7, 0.6)
    return pd.DataFrame(rows)
