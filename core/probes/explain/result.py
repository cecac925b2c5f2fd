"""What an explanation returns: the tidy attribution table, and for integrated gradients its completeness check.

One row per explained unit (a token, or a word for word occlusion) of either
sentence: ``model, side, position, token, word, word_position, attribution,
method, unit``.  ``attribution`` is in cosine units: for occlusion, how much
the pair's cosine drops when the unit is removed (positive: the unit makes the
sentences more alike); for integrated gradients, the unit's share of
``cos(pair) - cos(baseline pair)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from core import constants
from core.probes.explain.sides import Side

TABLE_COLUMNS = (
    constants.COL_MODEL,
    constants.COL_SIDE,
    constants.COL_POSITION,
    constants.COL_TOKEN,
    constants.COL_WORD,
    constants.COL_WORD_POSITION,
    constants.COL_ATTRIBUTION,
    constants.COL_METHOD,
    constants.COL_UNIT,
)


@dataclass(frozen=True)
class Completeness:
    """Integrated gradients' completeness check: do the attributions add up?

    Attributes:
        steps: integration steps used.
        baseline: ``pad`` or ``mask``.
        cosine: cos(pair).
        baseline_cosine: cos(baseline pair).
        attribution_sum: the sum of every attribution of both sentences.
        miss: ``attribution_sum - (cosine - baseline_cosine)``.
        relative_miss: ``|miss| / |cosine - baseline_cosine|`` (inf when that difference is 0 and the miss is not).
    """

    steps: int
    baseline: str
    cosine: float
    baseline_cosine: float
    attribution_sum: float
    miss: float
    relative_miss: float

    @property
    def ok(self) -> bool:
        """The attributions sum to the cosine change within ``IG_MAX_RELATIVE_MISS`` (or ``IG_MISS_FLOOR`` absolute)."""
        return self.relative_miss <= constants.IG_MAX_RELATIVE_MISS or abs(self.miss) <= constants.IG_MISS_FLOOR

    @property
    def more_steps(self) -> int:
        """Steps to try next when the check fails (four times as many: the miss shrinks roughly with the step count)."""
        return self.steps * 4

    def as_dict(self) -> dict:
        return {
            "steps": self.steps,
            "baseline": self.baseline,
            "cosine": self.cosine,
            "baseline_cosine": self.baseline_cosine,
            "attribution_sum": self.attribution_sum,
            "miss": self.miss,
            "relative_miss": None if math.isinf(self.relative_miss) else self.relative_miss,
            "ok": self.ok,
            "max_relative_miss": constants.IG_MAX_RELATIVE_MISS,
        }


def completeness(steps: int, baseline: str, cosine: float, baseline_cosine: float, attribution_sum: float) -> Completeness:
    """The :class:`Completeness` of attributions summing to ``attribution_sum``."""
    change = cosine - baseline_cosine
    miss = attribution_sum - change
    relative = abs(miss) / abs(change) if change != 0 else (0.0 if miss == 0 else math.inf)
    return Completeness(steps, baseline, float(cosine), float(baseline_cosine), float(attribution_sum), float(miss), float(relative))


@dataclass(frozen=True)
class Explanation:
    """Why one model gives a pair its cosine.

    Attributes:
        model: model name.
        method: ``occlusion`` or ``ig``.
        unit: ``token`` or ``word``.
        cosine: the pair's cosine, computed on the same ids the attributions use.
        table: the tidy attribution table (:data:`TABLE_COLUMNS`).
        completeness: integrated gradients' check; None for occlusion.
        truncated: the sides (``A``, ``B``) cut at the model's maximum length.
    """

    model: str
    method: str
    unit: str
    cosine: float
    table: pd.DataFrame
    completeness: Completeness | None = None
    truncated: tuple[str, ...] = field(default_factory=tuple)


def token_rows(model: str, side: Side, values, method: str) -> list[dict]:
    """Table rows for one side's tokens, ``values`` holding one attribution per explained token: (T,)."""
    return [
        {
            constants.COL_MODEL: model,
            constants.COL_SIDE: side.side,
            constants.COL_POSITION: i,
            constants.COL_TOKEN: tok,
            constants.COL_WORD: side.words[w],
            constants.COL_WORD_POSITION: w,
            constants.COL_ATTRIBUTION: float(v),
            constants.COL_METHOD: method,
            constants.COL_UNIT: constants.UNIT_TOKEN,
        }
        for i, (tok, w, v) in enumerate(zip(side.tokens, side.word_of, values, strict=True))
    ]


def word_rows(model: str, side: Side, values, method: str) -> list[dict]:
    """Table rows for one side's words, ``values`` holding one attribution per word: (W,)."""
    rows = []
    for w, (word, v) in enumerate(zip(side.words, values, strict=True)):
        pieces = [t for t, tw in zip(side.tokens, side.word_of, strict=True) if tw == w]
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_SIDE: side.side,
                constants.COL_POSITION: w,
                constants.COL_TOKEN: " ".join(pieces),
                constants.COL_WORD: word,
                constants.COL_WORD_POSITION: w,
                constants.COL_ATTRIBUTION: float(v),
                constants.COL_METHOD: method,
                constants.COL_UNIT: constants.UNIT_WORD,
            }
        )
    return rows


def as_table(rows: list[dict]) -> pd.DataFrame:
    """The tidy table of ``rows``, columns in :data:`TABLE_COLUMNS` order even when empty."""
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def top_units(table: pd.DataFrame, n: int = constants.EXPLAIN_TOP_TOKENS) -> pd.DataFrame:
    """The ``n`` rows with the largest absolute attribution, largest first.

    Raises:
        ValueError: when ``n`` < 1 or the table lacks the attribution column.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if constants.COL_ATTRIBUTION not in table.columns:
        raise ValueError(f"table has no {constants.COL_ATTRIBUTION!r} column")
    order = table[constants.COL_ATTRIBUTION].abs().sort_values(ascending=False, kind="stable").index
    return table.loc[order].head(n).reset_index(drop=True)


def by_word(table: pd.DataFrame) -> pd.DataFrame:
    """Token attributions summed per word (integrated gradients stay complete: sums add).

    Raises:
        ValueError: when the table is not a token table.
    """
    if not table.empty and set(table[constants.COL_UNIT]) != {constants.UNIT_TOKEN}:
        raise ValueError("by_word sums token attributions; this table is already per word")
    keys = [constants.COL_MODEL, constants.COL_SIDE, constants.COL_WORD_POSITION, constants.COL_WORD, constants.COL_METHOD]
    grouped = table.groupby(keys, sort=False, as_index=False).agg(
        **{constants.COL_TOKEN: (constants.COL_TOKEN, " ".join), constants.COL_ATTRIBUTION: (constants.COL_ATTRIBUTION, "sum")}
    )
    grouped[constants.COL_POSITION] = grouped[constants.COL_WORD_POSITION]
    grouped[constants.COL_UNIT] = constants.UNIT_WORD
    return grouped[list(TABLE_COLUMNS)]
