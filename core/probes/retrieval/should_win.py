"""Compare's third box: which passage a retriever ranks first for query = sentence A.

The passages are sentence B (on the Compare page, typically a contradiction
of A) and "a passage that should win".  A dense retriever ranks them by their
cosine with the query, so the contradiction wins exactly when
cos(A, B) > cos(A, passage): the adversarial win of
:func:`core.probes.retrieval.metrics.adversarial_wins`, with the passage in
the paraphrase's place.  An exact tie is reported as such: a retriever's
order between tied passages is arbitrary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from core import constants
from core.probes.retrieval.metrics import adversarial_wins

COLUMNS = [
    constants.COL_MODEL,
    constants.COL_RANKED_FIRST,
    constants.COL_COSINE_B,
    constants.COL_COSINE_SHOULD_WIN,
    "margin",
    "verdict",
]
# Cosines of unit vectors; float32 encodings can overshoot 1 by a few ulps.
_COSINE_SLACK = 1e-4


@dataclass(frozen=True)
class TwoPassageRanking:
    """The order of two passages for one query.

    Attributes:
        cosine_b: cos(query, sentence B).
        cosine_should_win: cos(query, the passage that should win).
        ranked_first: ``RANKED_B``, ``RANKED_SHOULD_WIN`` or ``RANKED_TIE``.
        margin: ``cosine_b - cosine_should_win`` (positive: the contradiction ranks first).
        verdict: one of the ``VERDICT_*`` sentences of ``core.constants``.
    """

    cosine_b: float
    cosine_should_win: float
    ranked_first: str
    margin: float
    verdict: str


def _cosine(value: float, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x) or abs(x) > 1 + _COSINE_SLACK:
        raise ValueError(f"{name} must be a cosine in [-1, 1], got {value!r}")
    return x


def rank_two_passages(cosine_b: float, cosine_should_win: float) -> TwoPassageRanking:
    """Rank sentence B against the passage that should win, by cosine with the query.

    Args:
        cosine_b: cos(query, B), in [-1, 1].
        cosine_should_win: cos(query, the passage that should win), in [-1, 1].

    Returns:
        The ranking: the higher cosine ranks first; equal cosines tie.

    Raises:
        ValueError: a value that is not a finite cosine.
    """
    b, right = _cosine(cosine_b, "cosine_b"), _cosine(cosine_should_win, "cosine_should_win")
    if b == right:
        return TwoPassageRanking(b, right, constants.RANKED_TIE, 0.0, constants.VERDICT_TIE)
    contradiction_wins = bool(adversarial_wins([right], [b])[0])
    if contradiction_wins:
        return TwoPassageRanking(b, right, constants.RANKED_B, b - right, constants.VERDICT_CONTRADICTION_WINS)
    return TwoPassageRanking(b, right, constants.RANKED_SHOULD_WIN, b - right, constants.VERDICT_RIGHT_PASSAGE_WINS)


def should_win_table(results: pd.DataFrame, query: str, sentence_b: str, should_win: str) -> pd.DataFrame:
    """Per model, the ranking of B and the passage that should win for ``query``.

    Args:
        results: tidy scoring rows (``core.scoring.runner.run_pairs``) holding, per
            model, the pairs (query, B) and (query, should_win): columns model,
            text_a, text_b, cosine.
        query: sentence A.
        sentence_b: sentence B.
        should_win: the passage that should win.

    Returns:
        One row per model that scored both pairs, in the order models appear:
        model, ranked_first, cosine_b, cosine_should_win, margin, verdict.

    Raises:
        ValueError: ``results`` lacks a column, or a cosine is not a cosine.
    """
    needed = [constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise ValueError(f"the results lack columns {missing}")
    rows = []
    mine = results[results[constants.COL_TEXT_A] == query]
    for model, group in mine.groupby(constants.COL_MODEL, sort=False):
        by_passage = dict(zip(group[constants.COL_TEXT_B], group[constants.COL_COSINE], strict=True))
        if sentence_b not in by_passage or should_win not in by_passage:
            continue
        r = rank_two_passages(by_passage[sentence_b], by_passage[should_win])
        rows.append((model, r.ranked_first, r.cosine_b, r.cosine_should_win, r.margin, r.verdict))
    return pd.DataFrame(rows, columns=COLUMNS)
