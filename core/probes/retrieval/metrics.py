"""Retrieval-level metrics on score arrays: win rate, NevIR paired accuracy, ranks, model vs model.

Every function takes plain arrays of scores (cosines, or a mitigation's
rescored values where ``-inf`` means "filtered out") and returns numbers; the
tables that group them per model, mitigation and mode are built in
:mod:`core.probes.retrieval.tables`.

In the suite's probes ties are resolved against the retriever: a variant
that scores exactly as high as the paraphrase is not a win for the retriever
(it does not rank the truth first, and the tables count it apart in
``ties``), a right passage tied with another is ranked below it, and a
contradiction tied with the top passage counts as ranked first.  The judged
rankings (triples, BEIR) follow trec_eval's rule instead
(:func:`rank_order`), so their figures equal ``pytrec_eval``'s, and count
the queries it decided (:func:`decided_ties`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from core import constants
from core.stats.guards import interval_or_nan
from core.stats.intervals import bootstrap_ci, bootstrap_diff_ci, cluster_rate_ci


def _scores(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} holds NaN; a score must be a number (use -inf for a filtered passage)")
    return arr


def _same_length(*arrays: np.ndarray) -> None:
    if len({len(a) for a in arrays}) > 1:
        raise ValueError(f"score arrays differ in length: {[len(a) for a in arrays]}")


def _indicators(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold booleans or 0/1")
    return arr.astype(bool)


def adversarial_wins(score_paraphrase: ArrayLike, score_variant: ArrayLike) -> np.ndarray:
    """Where the variant outranks the paraphrase: ``score_variant > score_paraphrase``.

    Args:
        score_paraphrase: score(anchor, paraphrase) per group, shape ``(n,)``.
        score_variant: score(anchor, variant) per group, shape ``(n,)``.

    Returns:
        Boolean array ``(n,)``; a tie is no win, and a filtered (``-inf``)
        variant never wins.

    Raises:
        ValueError: NaN, not 1-D, or unequal lengths.
    """
    para, var = _scores(score_paraphrase, "score_paraphrase"), _scores(score_variant, "score_variant")
    _same_length(para, var)
    return var > para


def paired_correct(q1_anchor: ArrayLike, q1_variant: ArrayLike, q2_anchor: ArrayLike, q2_variant: ArrayLike) -> np.ndarray:
    """NevIR's paired criterion per group: q1 ranks the anchor first AND q2 ranks the variant first.

    Args:
        q1_anchor, q1_variant: score(q1, anchor) and score(q1, variant), shape ``(n,)``.
        q2_anchor, q2_variant: score(q2, anchor) and score(q2, variant), shape ``(n,)``.

    Returns:
        Boolean array ``(n,)``; ties count as wrong.

    Raises:
        ValueError: NaN, not 1-D, or unequal lengths.
    """
    arrays = [
        _scores(a, n)
        for a, n in ((q1_anchor, "q1_anchor"), (q1_variant, "q1_variant"), (q2_anchor, "q2_anchor"), (q2_variant, "q2_variant"))
    ]
    _same_length(*arrays)
    a1, v1, a2, v2 = arrays
    return (a1 > v1) & (v2 > a2)


def rate_with_ci(
    indicators: ArrayLike,
    clusters: Sequence | np.ndarray | None = None,
    *,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """A share of successes with its seeded percentile-bootstrap interval.

    Without ``clusters`` (or when every cluster holds one value) this is
    :func:`core.stats.intervals.bootstrap_ci` of the mean.  With clusters
    (e.g. the group of each variant, when one group has several), whole
    clusters are resampled and the pooled share recomputed, since values of
    one group are not independent.

    Args:
        indicators: successes, shape ``(n,)``, booleans or 0/1.
        clusters: cluster label per value, shape ``(n,)``, or None.
        n_resamples: bootstrap resamples; None for the current setting
            (:func:`core.settings.bootstrap_resamples`).
        confidence: confidence level in (0, 1).
        seed: seed of the resampling.

    Returns:
        ``(rate, low, high)``; all NaN for ``n == 0``; ``(r, r, r)`` when
        every value (or the only cluster) is the same.

    Raises:
        ValueError: non-boolean values, or clusters of another length.
    """
    values = _indicators(indicators, "indicators").astype(float)
    if values.size == 0:
        return (math.nan, math.nan, math.nan)
    rate = float(values.mean())
    if clusters is not None:
        labels = np.asarray(clusters)
        if labels.shape != values.shape:
            raise ValueError(f"clusters has shape {labels.shape}, indicators {values.shape}")
        n_clusters = len(np.unique(labels))
        if n_clusters < values.size:
            if n_clusters == 1 or np.ptp(values) == 0:
                return (rate, rate, rate)
            return (rate, *cluster_rate_ci(values, labels, n_resamples=n_resamples, confidence=confidence, seed=seed))
    low, high = interval_or_nan(bootstrap_ci, values, "mean", n_resamples=n_resamples, confidence=confidence, seed=seed)
    return (rate, low, high)


def target_ranks(scores: ArrayLike, targets: ArrayLike, *, ties_first: bool = False) -> np.ndarray:
    """1-based rank of one target passage per query among all passages.

    Args:
        scores: ``(n_queries, n_passages)``; higher ranks higher, ``-inf`` is
            filtered out.
        targets: index of each query's target passage, shape ``(n_queries,)``.
        ties_first: False (for the right passage): passages tied with the
            target rank above it. True (for a contradiction): the target
            ranks above passages it ties with. Both resolve ties against the
            retriever.

    Returns:
        Float ranks ``(n_queries,)``; ``inf`` where the target is filtered out.

    Raises:
        ValueError: wrong shapes, NaN, or a target index out of range.
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be (n_queries, n_passages), got shape {matrix.shape}")
    if np.isnan(matrix).any():
        raise ValueError("scores hold NaN; use -inf for a filtered passage")
    idx = np.asarray(targets)
    if idx.shape != (matrix.shape[0],) or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"targets must be {matrix.shape[0]} integer indices, got shape {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= matrix.shape[1]):
        raise ValueError(f"a target index is outside 0..{matrix.shape[1] - 1}")
    own = matrix[np.arange(matrix.shape[0]), idx]
    above = (matrix > own[:, None]).sum(axis=1)
    tied_others = (matrix == own[:, None]).sum(axis=1) - 1
    ranks = 1.0 + above + (0 if ties_first else tied_others)
    return np.where(np.isneginf(own), np.inf, ranks)


@dataclass(frozen=True)
class RankingSummary:
    """In-corpus ranking figures over queries.

    Attributes:
        n_queries: queries ranked.
        recall: k -> share of queries whose right passage ranks within the top k.
        mrr: mean reciprocal rank of the right passage (0 where it is filtered out).
        top1_contradiction: share of queries whose top-ranked passage is the contradiction.
    """

    n_queries: int
    recall: dict[int, float]
    mrr: float
    top1_contradiction: float


def ranking_summary(rank_correct: ArrayLike, rank_contradiction: ArrayLike, ks: Sequence[int] = constants.RECALL_KS) -> RankingSummary:
    """Recall@k, MRR and the top-1-contradiction share from per-query ranks.

    Args:
        rank_correct: rank of each query's right passage, shape ``(n,)`` (``inf`` = filtered).
        rank_contradiction: rank of its contradiction, shape ``(n,)``.
        ks: the cut-offs for recall.

    Returns:
        A :class:`RankingSummary`; its figures are NaN when ``n == 0``.

    Raises:
        ValueError: ranks below 1 or NaN, unequal lengths, or a k below 1.
    """
    right, contra = np.asarray(rank_correct, dtype=float), np.asarray(rank_contradiction, dtype=float)
    for arr, name in ((right, "rank_correct"), (contra, "rank_contradiction")):
        if arr.ndim != 1 or np.isnan(arr).any() or (arr < 1).any():
            raise ValueError(f"{name} must be 1-D ranks >= 1 (inf for filtered)")
    _same_length(right, contra)
    if any(k < 1 for k in ks):
        raise ValueError(f"every k must be at least 1, got {list(ks)}")
    if right.size == 0:
        return RankingSummary(0, {k: math.nan for k in ks}, math.nan, math.nan)
    return RankingSummary(
        n_queries=int(right.size),
        recall={k: float((right <= k).mean()) for k in ks},
        mrr=float((1.0 / right).mean()),
        top1_contradiction=float((contra == 1).mean()),
    )


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on paired binary outcomes.

    Attributes:
        a_only: units where only A succeeded (discordant).
        b_only: units where only B succeeded (discordant).
        pvalue: two-sided exact binomial p of a_only among the discordant units at 1/2;
            1.0 when no unit is discordant.
    """

    a_only: int
    b_only: int
    pvalue: float


def mcnemar_exact(outcome_a: ArrayLike, outcome_b: ArrayLike) -> McNemar:
    """McNemar's exact test: do A and B succeed on the same units equally often?

    Args:
        outcome_a: A's success per unit, shape ``(n,)``, booleans or 0/1.
        outcome_b: B's success on the same units, shape ``(n,)``.

    Returns:
        The discordant counts and ``scipy.stats.binomtest(a_only, a_only + b_only, 0.5)``'s p.

    Raises:
        ValueError: non-boolean values or unequal lengths.
    """
    from scipy.stats import binomtest

    a, b = _indicators(outcome_a, "outcome_a"), _indicators(outcome_b, "outcome_b")
    _same_length(a, b)
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    if a_only + b_only == 0:
        return McNemar(a_only, b_only, 1.0)
    return McNemar(a_only, b_only, float(binomtest(a_only, a_only + b_only, 0.5).pvalue))


def flips(before: np.ndarray, after: np.ndarray) -> tuple[int, int]:
    """(fixed, broken): units that succeed after and did not before, and the reverse.

    Args:
        before, after: success per unit under the plain cosine and under a mitigation, shape ``(n,)`` each.

    Raises:
        ValueError: shapes differ.
    """
    b, a = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    if b.shape != a.shape:
        raise ValueError(f"before and after differ in shape: {b.shape} and {a.shape}")
    return int((~b & a).sum()), int((b & ~a).sum())


def rate_difference_ci(
    outcome_a: ArrayLike,
    outcome_b: ArrayLike,
    *,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """Difference of two success rates on the same units, with a paired bootstrap interval.

    Args:
        outcome_a, outcome_b: successes per unit, shape ``(n,)`` each.

    Returns:
        ``(rate_a - rate_b, low, high)`` via :func:`core.stats.intervals.bootstrap_diff_ci`
        (units resampled together); all NaN for ``n == 0``.

    Raises:
        ValueError: non-boolean values or unequal lengths.
    """
    a, b = _indicators(outcome_a, "outcome_a").astype(float), _indicators(outcome_b, "outcome_b").astype(float)
    _same_length(a, b)
    if a.size == 0:
        return (math.nan, math.nan, math.nan)
    low, high = interval_or_nan(bootstrap_diff_ci, a, b, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return (float(a.mean() - b.mean()), low, high)


# ------------------------------------------------------------------ IR metrics on graded judgements (triples, BEIR)


def rank_order(scores: ArrayLike, ids: ArrayLike) -> np.ndarray:
    """Passages of each query, best first, exact ties broken as trec_eval (and so ``pytrec_eval``) breaks them.

    trec_eval sorts a query's run by score, then by document id in
    descending string order (``strcmp``, byte order, which for UTF-8 is
    code-point order: ``"d9"`` before ``"d10"``, ``"b"`` before ``"a"``).
    One rule for every judged ranking (triples and BEIR), so their figures
    equal ``pytrec_eval``'s on the same scores, duplicate passages included;
    :func:`decided_ties` counts the queries whose figures the rule decided.

    Args:
        scores: ``(n_queries, n_passages)``; higher ranks higher, ``-inf`` last.
        ids: each passage's id, ``(n_passages,)`` (one corpus for every
            query) or ``(n_queries, n_passages)``; compared as strings, or
            integers that are already each id's place in string order
            (:func:`id_places`, which a streamed merge computes once).

    Returns:
        Integer indices ``(n_queries, n_passages)``.

    Raises:
        ValueError: shapes differ or a score is NaN.
    """
    s = np.asarray(scores, dtype=float)
    keys = np.asarray(ids)
    if s.ndim != 2 or keys.shape not in (s.shape, s.shape[1:]):
        raise ValueError(
            f"scores must be (n_queries, n_passages) and ids (n_passages,) or of the scores' shape, got {s.shape} and {keys.shape}"
        )
    if np.isnan(s).any():
        raise ValueError("scores hold NaN; use -inf for a filtered passage")
    keys = keys if np.issubdtype(keys.dtype, np.integer) else keys.astype(str)
    # Each id's place in ascending string order (per row when the rows differ), negated below for descending.
    if np.issubdtype(keys.dtype, np.integer):
        place = np.broadcast_to(keys, s.shape)
    elif keys.ndim == 1:
        place = np.empty(keys.shape, dtype=np.int64)
        place[np.argsort(keys, kind="stable")] = np.arange(keys.size)
        place = np.broadcast_to(place, s.shape)
    else:
        place = np.empty(keys.shape, dtype=np.int64)
        np.put_along_axis(place, np.argsort(keys, axis=-1, kind="stable"), np.broadcast_to(np.arange(keys.shape[1]), keys.shape), axis=-1)
    # lexsort's last key is the primary one: score descending, then id descending.
    return np.lexsort((-place, -s), axis=-1)


def id_places(*ids: ArrayLike) -> list[np.ndarray]:
    """Each id's place in the string order of every id given, per array: integers :func:`rank_order` sorts by.

    Sorting the distinct ids once is far cheaper than sorting every query's
    row of ids (a BEIR merge holds each query's top passages and one shared chunk).

    Args:
        *ids: arrays of ids, any shapes.

    Returns:
        One integer array per argument, of its shape.
    """
    arrays = [np.asarray(i).astype(str) for i in ids]
    universe = np.unique(np.concatenate([a.ravel() for a in arrays])) if arrays else np.array([], dtype=str)
    return [np.searchsorted(universe, a) for a in arrays]


def decided_ties(ranked_scores: ArrayLike, ranked_gains: ArrayLike, depth: int = constants.IR_CUTOFF) -> np.ndarray:
    """Per query, whether the tie rule decided its figures.

    A query counts when a run of exactly equal scores that reaches into its
    top ``depth`` holds passages of different relevance (a judged and an
    unjudged copy of one text, say): another tie rule could have put the
    other one first.  Ties between passages of equal relevance change no
    figure and are not counted.

    Args:
        ranked_scores: ``(n_queries, width)`` scores in ranked order
            (:func:`rank_order`), ``width`` at least ``depth`` or the whole
            corpus; a run of ties is seen as far as ``width`` reaches.
        ranked_gains: the same passages' relevance, same shape.
        depth: the deepest cut-off a figure reads.

    Returns:
        Booleans ``(n_queries,)``.

    Raises:
        ValueError: shapes differ, or a depth below 1.
    """
    s, g = np.asarray(ranked_scores, dtype=float), np.asarray(ranked_gains, dtype=float)
    if s.ndim != 2 or s.shape != g.shape:
        raise ValueError(f"ranked scores and gains must be (n_queries, width) of one shape, got {s.shape} and {g.shape}")
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    if s.shape[1] < 2:
        return np.zeros(s.shape[0], dtype=bool)
    same = s[:, 1:] == s[:, :-1]
    # Equal scores sit next to each other once ranked, so a run is a stretch of `same`; number the runs per query.
    run = np.concatenate([np.zeros((s.shape[0], 1), dtype=np.int64), np.cumsum(~same, axis=1)], axis=1)
    last_shown = run[:, min(depth, s.shape[1]) - 1][:, None]
    mixed = same & (g[:, 1:] != g[:, :-1])
    return (mixed & (run[:, :-1] <= last_shown)).any(axis=1)


def ir_metrics(
    ranked_gains: ArrayLike,
    ideal_gains: Sequence[ArrayLike],
    ks: Sequence[int] = constants.IR_RECALL_KS,
    cutoff: int = constants.IR_CUTOFF,
    *,
    hit_recall: bool = False,
) -> dict[str, np.ndarray]:
    """Recall@k, MRR@cutoff and nDCG@cutoff per query, from the gains of its ranked passages.

    The definitions are trec_eval's (``recall_k``, ``recip_rank`` of a run cut
    at ``cutoff``, ``ndcg_cut`` with linear gains), so on passages ordered by
    :func:`rank_order` they equal ``pytrec_eval``'s.

    Args:
        ranked_gains: ``(n_queries, depth)``: the relevance of each query's
            passages in ranked order (at least ``max(ks + [cutoff])`` deep,
            or the whole corpus).
        ideal_gains: per query, every positive judgement it has (the
            relevant passages' gains, any order); its count is recall's
            denominator and its best ``cutoff`` give the ideal DCG.
        ks: recall cut-offs.
        cutoff: MRR's and nDCG's cut-off.
        hit_recall: True counts a query as recalled at k when any relevant
            passage is within the top k (the "success@k" of the in-corpus
            ranking, equal to recall for one relevant passage per query).

    Returns:
        ``{"recall_at_k": (n_queries,), …, "mrr_at_<cutoff>": …, "ndcg_at_<cutoff>": …}``.

    Raises:
        ValueError: a query without a positive judgement, a cut-off below 1,
            or ``ideal_gains`` of another length than the queries.
    """
    ranked = np.asarray(ranked_gains, dtype=float)
    if ranked.ndim != 2:
        raise ValueError(f"ranked_gains must be (n_queries, depth), got shape {ranked.shape}")
    if len(ideal_gains) != ranked.shape[0]:
        raise ValueError(f"ideal_gains has {len(ideal_gains)} entries for {ranked.shape[0]} queries")
    if min([*ks, cutoff]) < 1:
        raise ValueError(f"every cut-off must be at least 1, got ks={list(ks)}, cutoff={cutoff}")
    ideal = [np.sort(np.asarray(g, dtype=float)[np.asarray(g, dtype=float) > 0])[::-1] for g in ideal_gains]
    n_relevant = np.array([len(g) for g in ideal], dtype=float)
    if (n_relevant == 0).any():
        raise ValueError("every query needs at least one relevant passage")
    hits = ranked > 0
    out: dict[str, np.ndarray] = {}
    for k in ks:
        top = hits[:, :k]
        out[f"recall_at_{k}"] = top.any(axis=1).astype(float) if hit_recall else top.sum(axis=1) / n_relevant
    head = hits[:, :cutoff]
    first = np.where(head.any(axis=1), head.argmax(axis=1) + 1, 0)
    out[f"mrr_at_{cutoff}"] = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
    discounts = 1.0 / np.log2(np.arange(2, cutoff + 2))
    dcg = (ranked[:, :cutoff] * discounts[: ranked[:, :cutoff].shape[1]]).sum(axis=1)
    idcg = np.array([(g[:cutoff] * discounts[: len(g[:cutoff])]).sum() for g in ideal])
    out[f"ndcg_at_{cutoff}"] = dcg / idcg
    return out


def judged_figures(
    ranked_scores: ArrayLike, ranked_gains: ArrayLike, ideal_gains: Sequence[ArrayLike], *, hit_recall: bool = False
) -> dict[str, np.ndarray]:
    """:func:`ir_metrics` of passages ranked by :func:`rank_order`, with :func:`decided_ties` as ``tie_decided``.

    A passage scored ``-inf`` (a mitigation filtered it out) is not retrieved:
    its gain counts for nothing, wherever it sits.

    Args:
        ranked_scores: ``(n_queries, depth)`` scores in ranked order.
        ranked_gains: the same passages' relevance, same shape.
        ideal_gains, hit_recall: as :func:`ir_metrics`.

    Returns:
        ``ir_metrics``'s figures and ``tie_decided`` (booleans), per query.
    """
    s = np.asarray(ranked_scores, dtype=float)
    g = np.where(np.isneginf(s), 0.0, np.asarray(ranked_gains, dtype=float))
    return {**ir_metrics(g, ideal_gains, hit_recall=hit_recall), constants.COL_TIE_DECIDED: decided_ties(s, g)}
