"""The worst cases of a retrieval run, for reading one by one: filtered, searched, worst first.

:func:`worst_variants` takes ``RetrievalResult.scores`` (one row per model,
mitigation and variant) and :func:`worst_corpus_pairs` corpus mode's
``CorpusResult.pairs``; both keep one model and one mitigation, optional
modes and a case-insensitive search over the texts, and sort so the variant
that beats the passage it should lose to by the most comes first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core import constants

COL_MARGIN = "margin"
_SCORE_COLUMNS = (constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_MODE)
_GROUP_TEXTS = (constants.COL_ANCHOR, constants.COL_PARAPHRASE, constants.COL_VARIANT)
_CORPUS_TEXTS = (constants.COL_QUERY, "original", constants.COL_VARIANT)


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} lack columns {missing}")


def _filtered(frame: pd.DataFrame, model: str, mitigation: str, modes: Sequence[str], search: str, texts: Sequence[str]) -> pd.DataFrame:
    keep = (frame[constants.COL_MODEL] == model) & (frame[constants.COL_MITIGATION] == mitigation)
    if modes:
        keep &= frame[constants.COL_MODE].isin(list(modes))
    needle = search.strip()
    if needle:
        hit = pd.Series(False, index=frame.index)
        for column in texts:
            hit |= frame[column].astype(str).str.contains(needle, case=False, regex=False)
        keep &= hit
    return frame[keep]


def worst_variants(
    scores: pd.DataFrame, model: str, mitigation: str = constants.MITIGATION_NONE, modes: Sequence[str] = (), search: str = ""
) -> pd.DataFrame:
    """One model's variants under one mitigation, the variant most above its paraphrase first.

    Args:
        scores: ``RetrievalResult.scores``: model, mitigation, mode, anchor,
            paraphrase, variant, score_paraphrase, score_variant, margin, ...
        model: the model to keep.
        mitigation: the mitigation to keep (``none``: the dense cosines).
        modes: failure modes to keep; empty keeps all.
        search: text any of anchor, paraphrase or variant must contain (case-insensitive); blank keeps all.

    Returns:
        The kept rows sorted by ``margin`` (score of the variant minus score of
        the paraphrase) from highest to lowest, then by group id; a margin that
        is undefined (a filtered passage) sorts last.

    Raises:
        ValueError: a required column is missing.
    """
    _require(scores, [*_SCORE_COLUMNS, *_GROUP_TEXTS, COL_MARGIN, constants.COL_GROUP_ID], "scores")
    kept = _filtered(scores, model, mitigation, modes, search, _GROUP_TEXTS)
    return kept.sort_values([COL_MARGIN, constants.COL_GROUP_ID], ascending=[False, True], na_position="last", kind="stable").reset_index(
        drop=True
    )


def worst_corpus_pairs(pairs: pd.DataFrame, model: str, mitigation: str = constants.MITIGATION_NONE, search: str = "") -> pd.DataFrame:
    """Corpus mode's (query, top passage, variant) rows of one model and mitigation, worst first.

    Args:
        pairs: ``CorpusResult.pairs``: model, mitigation, query, original, mode,
            variant, score_original, score_variant, ...
        model: the model to keep.
        mitigation: the mitigation to keep.
        search: text any of query, original or variant must contain (case-insensitive).

    Returns:
        The kept rows with ``margin = score_variant - score_original`` (NaN
        when either passage was filtered out), highest margin first.

    Raises:
        ValueError: a required column is missing.
    """
    _require(pairs, [*_SCORE_COLUMNS, *_CORPUS_TEXTS, "score_original", "score_variant"], "corpus pairs")
    kept = _filtered(pairs, model, mitigation, (), search, _CORPUS_TEXTS).copy()
    original, variant = kept["score_original"].astype(float), kept["score_variant"].astype(float)
    # -inf means filtered out: a difference with it says nothing about which one ranks first.
    finite = np.isfinite(original) & np.isfinite(variant)
    kept[COL_MARGIN] = (variant - original).where(finite)
    return kept.sort_values(COL_MARGIN, ascending=False, na_position="last", kind="stable").reset_index(drop=True)
