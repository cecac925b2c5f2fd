"""Retrieval results as the history's tidy pairs: the suite's scores (a suite, a pairs file) and corpus mode's pairs.

Each anchor or query keeps the model's own cosine in ``cosine`` and every mitigation's score of the same passage
beside it as ``score[<mitigation>]``, so the history stores and diffs a retrieval run like any run of pairs.
A triples file and a BEIR folder give theirs from their own result (``TriplesResult.history_pairs``,
``BeirResult.history_pairs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from core import constants
from core.models.encode import EncodeReport
from core.scoring.result import backends, json_rows


def _mitigated(rows: pd.DataFrame, scores: pd.DataFrame, keys: list[str], score: str) -> pd.DataFrame:
    """``rows`` (dense, with ``keys``) plus one ``score[<mitigation>]`` column per other mitigation: the score
    that mitigation gave the same passage (matched by ``keys`` and order among equal keys)."""
    rows = rows.assign(_occ=rows.groupby(keys, sort=False).cumcount())
    for mitigation in dict.fromkeys(scores[constants.COL_MITIGATION]):
        if mitigation == constants.MITIGATION_NONE:
            continue
        part = scores.loc[scores[constants.COL_MITIGATION] == mitigation, [*keys, score]]
        part = part.assign(_occ=part.groupby(keys, sort=False).cumcount()).rename(columns={score: f"score[{mitigation}]"})
        rows = rows.merge(part, on=[*keys, "_occ"], how="left")
    return rows.drop(columns="_occ")


def retrieval_pairs(scores: pd.DataFrame, suite: str) -> pd.DataFrame:
    """A retrieval run's scores as tidy pair results, so the history stores and diffs them like any run.

    Each anchor group gives one ``positive`` row (anchor vs its paraphrase) and
    one row per adversarial variant (anchor vs variant, category = its mode);
    ``win`` and ``margin`` ride along.  ``cosine`` is mitigation ``none``'s (the
    model's, not a reranker's); each other mitigation's score of the same
    passage is kept beside it as ``score[<mitigation>]``.

    Args:
        scores: ``RetrievalResult.scores`` (model, mitigation, group_id, mode, anchor,
            paraphrase, variant, cosine_paraphrase, cosine_variant, and
            score_paraphrase/score_variant for mitigated scores).
        suite: the suite's name.

    Raises:
        ValueError: ``scores`` lacks a needed column.
    """
    needed = [
        constants.COL_MODEL,
        constants.COL_MITIGATION,
        constants.COL_GROUP_ID,
        constants.COL_MODE,
        constants.COL_ANCHOR,
        constants.COL_PARAPHRASE,
        "variant",
        "cosine_paraphrase",
        "cosine_variant",
    ]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ValueError(f"the retrieval scores lack columns {missing}")
    mitigated = {"score_paraphrase", "score_variant"} <= set(scores.columns)
    dense = scores[scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    extra = [c for c in (constants.COL_DOMAIN, constants.COL_WIN, "margin") if c in dense.columns]
    variant_keys = [constants.COL_MODEL, constants.COL_GROUP_ID, constants.COL_MODE]
    if mitigated:
        dense = _mitigated(dense, scores, variant_keys, "score_variant")
    variants = pd.DataFrame(
        {
            constants.COL_MODEL: dense[constants.COL_MODEL],
            constants.COL_SUITE: suite,
            constants.COL_CATEGORY: dense[constants.COL_MODE],
            constants.COL_PAIR_ID: dense[constants.COL_GROUP_ID].astype(str) + "/" + dense[constants.COL_MODE].astype(str),
            constants.COL_TEXT_A: dense[constants.COL_ANCHOR],
            constants.COL_TEXT_B: dense["variant"],
            constants.COL_COSINE: dense["cosine_variant"],
            **{c: dense[c] for c in extra},
            **{c: dense[c] for c in dense.columns if c.startswith("score[")},
        }
    )
    group_keys = [constants.COL_MODEL, constants.COL_GROUP_ID]
    groups = dense.drop_duplicates(group_keys)[[c for c in dense.columns if not c.startswith("score[")]]
    if mitigated:
        groups = _mitigated(groups, scores.drop_duplicates([*group_keys, constants.COL_MITIGATION]), group_keys, "score_paraphrase")
    paraphrases = pd.DataFrame(
        {
            constants.COL_MODEL: groups[constants.COL_MODEL],
            constants.COL_SUITE: suite,
            constants.COL_CATEGORY: constants.CAT_POSITIVE,
            constants.COL_PAIR_ID: groups[constants.COL_GROUP_ID].astype(str) + "/paraphrase",
            constants.COL_TEXT_A: groups[constants.COL_ANCHOR],
            constants.COL_TEXT_B: groups[constants.COL_PARAPHRASE],
            constants.COL_COSINE: groups["cosine_paraphrase"],
            **({constants.COL_DOMAIN: groups[constants.COL_DOMAIN]} if constants.COL_DOMAIN in groups.columns else {}),
            **{c: groups[c] for c in groups.columns if c.startswith("score[")},
        }
    )
    return (
        pd.concat([paraphrases, variants], ignore_index=True)
        .sort_values([constants.COL_MODEL, constants.COL_PAIR_ID], kind="stable")
        .reset_index(drop=True)
    )


def corpus_pairs(pairs: pd.DataFrame, name: str) -> pd.DataFrame:
    """Corpus mode's pairs (``CorpusResult.pairs``) as tidy pair results: per model and query, the query vs its
    top passage (category ``positive``) and vs each rule-made variant of it (category = the mode); ``cosine`` is
    mitigation ``none``'s, the other mitigations' scores ride along as ``score[<mitigation>]``.

    Raises:
        ValueError: ``pairs`` lacks a needed column.
    """
    needed = [
        constants.COL_MODEL,
        constants.COL_MITIGATION,
        constants.COL_QUERY,
        "original",
        constants.COL_MODE,
        constants.COL_RULE,
        "variant",
        "score_original",
        "score_variant",
    ]
    if pairs.empty:
        # No query's top passage gave a rule a handle: no variant, so no pair (the frame then has no columns either).
        return pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    missing = [c for c in needed if c not in pairs.columns]
    if missing:
        raise ValueError(f"the corpus-mode pairs lack columns {missing}")
    keys = [constants.COL_MODEL, constants.COL_QUERY, constants.COL_MODE, constants.COL_RULE]
    dense = _mitigated(pairs[pairs[constants.COL_MITIGATION] == constants.MITIGATION_NONE], pairs, keys, "score_variant")
    mitigated = [c for c in dense.columns if c.startswith("score[")]
    query_id = dense.groupby(constants.COL_MODEL, sort=False)[constants.COL_QUERY].transform(lambda q: pd.factorize(q)[0]).astype(str)
    variants = pd.DataFrame(
        {
            constants.COL_MODEL: dense[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: dense[constants.COL_MODE],
            constants.COL_PAIR_ID: "q" + query_id + "/" + dense[constants.COL_RULE].astype(str),
            constants.COL_TEXT_A: dense[constants.COL_QUERY],
            constants.COL_TEXT_B: dense["variant"],
            constants.COL_COSINE: dense["score_variant"],
            **{c: dense[c] for c in (constants.COL_OUTRANKS, "rank_original") if c in dense.columns},
            **{c: dense[c] for c in mitigated},
        }
    )
    first = dense.assign(_qid=query_id).drop_duplicates([constants.COL_MODEL, constants.COL_QUERY])
    tops = _mitigated(
        first.drop(columns=mitigated),
        pairs.drop_duplicates([constants.COL_MODEL, constants.COL_QUERY, constants.COL_MITIGATION]),
        [constants.COL_MODEL, constants.COL_QUERY],
        "score_original",
    )
    originals = pd.DataFrame(
        {
            constants.COL_MODEL: tops[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: constants.CAT_POSITIVE,
            constants.COL_PAIR_ID: "q" + tops["_qid"] + "/top",
            constants.COL_TEXT_A: tops[constants.COL_QUERY],
            constants.COL_TEXT_B: tops["original"],
            constants.COL_COSINE: tops["score_original"],
            **{c: tops[c] for c in tops.columns if c.startswith("score[")},
        }
    )
    return (
        pd.concat([originals, variants], ignore_index=True)
        .sort_values([constants.COL_MODEL, constants.COL_PAIR_ID], kind="stable")
        .reset_index(drop=True)
    )


def ranked_settings(reports: Mapping[str, EncodeReport], summary: pd.DataFrame) -> dict[str, Any]:
    """What every retrieval result's history record keeps besides its pairs: no threshold (ranking cuts nothing; a
    calibrated filter's per-model thresholds are in its mitigation's settings), the backend each model encoded on, and
    its summary (each model and mitigation's figures)."""
    return {"threshold": None, "backends": backends(reports), "summary": json_rows(summary)}
