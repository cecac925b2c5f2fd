"""Fixes a retriever can apply after the dense score, measured on the same probes.

Every mitigation rescores a query-by-passage matrix of cosines::

    scores = mitigation.rescore(queries, passages, dense, model=name)

``dense`` has shape ``(n_queries, n_passages)``; the result has the same
shape, higher ranks higher, and ``-inf`` means filtered out (an entry that
comes in as ``-inf`` stays ``-inf``).  Constructing one is cheap: indexes and
models are built or loaded inside ``rescore``, whose time the caller measures.

============================  =========================================================
``--mitigate`` name           what it does
============================  =========================================================
``bm25``, ``bm25-rrf``        BM25 (``bm25s``) over the given passages, fused with the
                              dense score by reciprocal rank fusion, k = 60
``bm25-weighted:W``           ``W * minmax(BM25) + (1 - W) * minmax(dense)`` per query,
                              ``W`` in [0, 1] the weight of the lexical score
``guard``                     the contradiction guard (:mod:`.guard`): demotes
                              near-top passages the perturbation rules say contradict
                              the query
``calibrated``                each model's calibrated threshold as a filter
``reranker:ID``               a cross-encoder or NLI model by Hugging Face id or
                              folder (:mod:`.reranker`)
============================  =========================================================

:mod:`core.probes.retrieval.specs` turns the comma list (or the page's
widgets) into typed specs and these objects, and :func:`sweep_bm25_weights`
runs a caller's evaluation over the weights 0, 0.1, ..., 1 of the weighted
fusion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from core import constants
from core.probes.retrieval.guard import contradiction_flags
from core.probes.retrieval.reranker import CrossEncoderReranker
from core.words import overlap_words

FUSION_RRF = "rrf"
FUSION_WEIGHTED = "weighted"
FUSIONS = (FUSION_RRF, FUSION_WEIGHTED)
BM25_WEIGHT_GRID: tuple[float, ...] = tuple(
    round(i * constants.BM25_WEIGHT_STEP, 10) for i in range(int(round(1 / constants.BM25_WEIGHT_STEP)) + 1)
)


@runtime_checkable
class Mitigation(Protocol):
    """A rescoring of the dense query-passage scores.

    Attributes:
        name: How the tables and ``--mitigate`` name it (``bm25-rrf``, ``guard``, ...).
    """

    name: str

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """New scores, shape ``(n_queries, n_passages)``: higher ranks higher, ``-inf`` is filtered out."""
        ...


# ------------------------------------------------------------------ input checks


def _checked_dense(queries: Sequence[str], passages: Sequence[str], dense: np.ndarray) -> np.ndarray:
    """``dense`` as a float matrix after checking it matches the texts; NaN and +inf are refused."""
    for name, texts in (("queries", queries), ("passages", passages)):
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{name} must be a sequence of strings")
    matrix = np.asarray(dense, dtype=float)
    if matrix.shape != (len(queries), len(passages)):
        raise ValueError(f"dense has shape {matrix.shape}; expected (n_queries, n_passages) = ({len(queries)}, {len(passages)})")
    if np.isnan(matrix).any() or np.isposinf(matrix).any():
        raise ValueError("dense holds NaN or +inf; scores must be finite, or -inf for a filtered passage")
    return matrix


def check_weight(weight: float | str) -> float:
    """``weight`` as a float in [0, 1] (a number or its text, as ``--mitigate bm25-weighted:W`` gives it).

    Raises:
        ValueError: not a number, or outside [0, 1].
    """
    try:
        value = float(weight)
    except (TypeError, ValueError):
        raise ValueError(f"the BM25 weight must be a number between 0 and 1, got {weight!r}") from None
    if not np.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"the BM25 weight must be between 0 and 1, got {weight!r}")
    return value


# ------------------------------------------------------------------ BM25 and fusion


def bm25_scores(queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """BM25 score of every passage for every query, the index built over ``passages``.

    Words are :func:`core.words.overlap_words` (lowercase, digits kept) with
    no stop-word list: the probes hinge on "not", "all", "before", which a
    stop-word list drops.  ``bm25s`` defaults, the Lucene variant with
    k1 = 1.5 and b = 0.75: for each query word,
    ``idf * tf / (tf + k1 * (1 - b + b * len / avg_len))`` with
    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, summed over the query's
    distinct words: a word the query repeats counts once (Okapi's query-term
    factor with k3 = 0).  The queries here are whole sentences (anchors,
    questions) scored with no stop-word list, so counting "the" or "a" twice
    because a sentence says them twice would weigh grammar, not content;
    ``bm25s`` itself sums every id it is given, so the ids are made distinct.

    Args:
        queries: ``n_queries`` texts.
        passages: ``n_passages`` texts, the whole collection (IDF comes from it).

    Returns:
        Scores, shape ``(n_queries, n_passages)``, each >= 0; a query sharing
        no word with the collection scores 0 everywhere.

    Raises:
        ValueError: If either argument is not a sequence of strings.
    """
    for name, texts in (("queries", queries), ("passages", passages)):
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{name} must be a sequence of strings")
    out = np.zeros((len(queries), len(passages)))
    corpus = [overlap_words(p) for p in passages]
    if not any(corpus):
        return out
    import bm25s

    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    for i, query in enumerate(queries):
        ids = index.get_tokens_ids(list(dict.fromkeys(overlap_words(query))))
        if ids:  # bm25s cannot score an empty query
            out[i] = index.get_scores_from_ids(ids)
    return out


def _competition_ranks(row: np.ndarray) -> np.ndarray:
    """Rank 1 for the highest finite score, ties sharing their best rank; 0 for ``-inf``."""
    from scipy.stats import rankdata

    ranks = np.zeros(row.shape)
    finite = np.isfinite(row)
    if finite.any():
        ranks[finite] = rankdata(-row[finite], method="min")
    return ranks


def reciprocal_rank_fusion(scores: Sequence[np.ndarray], k: float = constants.RRF_K) -> np.ndarray:
    """Reciprocal rank fusion: ``sum_r 1 / (k + rank_r)`` per query and passage.

    Ranks are per query (row), 1 for the best score; tied scores share the
    best rank of their tie.  An entry that is ``-inf`` in any input was
    filtered out and stays ``-inf``.

    Args:
        scores: Score matrices, each of shape ``(n_queries, n_passages)``.
        k: Damping constant (60 in Cormack, Clarke and Büttcher 2009); > 0.

    Returns:
        Fused scores, shape ``(n_queries, n_passages)``.

    Raises:
        ValueError: If no matrix is given, shapes differ, an entry is NaN or ``k`` <= 0.
    """
    if not scores:
        raise ValueError("give at least one score matrix to fuse")
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"k must be a positive number, got {k}")
    mats = [np.asarray(s, dtype=float) for s in scores]
    if any(m.ndim != 2 or m.shape != mats[0].shape for m in mats):
        raise ValueError(f"score matrices must be 2-D and of one shape, got {[m.shape for m in mats]}")
    if any(np.isnan(m).any() for m in mats):
        raise ValueError("score matrices hold NaN")
    fused = np.zeros(mats[0].shape)
    for m in mats:
        ranks = np.apply_along_axis(_competition_ranks, 1, m) if m.size else np.zeros(m.shape)
        fused += np.where(ranks > 0, 1.0 / (k + np.maximum(ranks, 1)), 0.0)
    filtered = np.logical_or.reduce([np.isneginf(m) for m in mats])
    return np.where(filtered, -np.inf, fused)


def minmax_rows(scores: np.ndarray) -> np.ndarray:
    """Each row rescaled to [0, 1] over its finite entries; a constant row becomes 0; ``-inf`` stays.

    Args:
        scores: Shape ``(n_queries, n_passages)``.

    Returns:
        Shape ``(n_queries, n_passages)``.
    """
    mat = np.asarray(scores, dtype=float)
    out = np.full(mat.shape, -np.inf)
    for i, row in enumerate(mat):
        finite = np.isfinite(row)
        if not finite.any():
            continue
        low, high = row[finite].min(), row[finite].max()
        out[i, finite] = (row[finite] - low) / (high - low) if high > low else 0.0
    return out


def weighted_fusion(lexical: np.ndarray, dense: np.ndarray, weight: float) -> np.ndarray:
    """``weight * minmax(lexical) + (1 - weight) * minmax(dense)``, min-max per query (row).

    Args:
        lexical: BM25 scores, shape ``(n_queries, n_passages)``.
        dense: Cosines, same shape; ``-inf`` entries stay ``-inf``.
        weight: Weight of the lexical score, in [0, 1] (0 = dense order, 1 = BM25 order).

    Returns:
        Fused scores in [0, 1] (or ``-inf``), shape ``(n_queries, n_passages)``.

    Raises:
        ValueError: If the shapes differ or ``weight`` is outside [0, 1].
    """
    w = check_weight(weight)
    lex, den = np.asarray(lexical, dtype=float), np.asarray(dense, dtype=float)
    if lex.shape != den.shape or lex.ndim != 2:
        raise ValueError(f"lexical and dense must be 2-D and of one shape, got {lex.shape} and {den.shape}")
    filtered = np.isneginf(lex) | np.isneginf(den)
    lex_n, den_n = minmax_rows(np.where(filtered, -np.inf, lex)), minmax_rows(np.where(filtered, -np.inf, den))
    return np.where(filtered, -np.inf, w * np.where(filtered, 0.0, lex_n) + (1 - w) * np.where(filtered, 0.0, den_n))


class HybridBM25:
    """Lexical + dense: BM25 over the passages, fused with the cosines (see the module table)."""

    def __init__(self, fusion: str = FUSION_RRF, weight: float | None = None, k: float = constants.RRF_K):
        """Args:
        fusion: ``rrf`` or ``weighted``.
        weight: The lexical weight in [0, 1]; required for ``weighted``, refused for ``rrf``.
        k: The RRF constant.

        Raises:
            ValueError: For an unknown fusion or a missing or bad weight.
        """
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
        if fusion == FUSION_WEIGHTED:
            if weight is None:
                raise ValueError(
                    f"{constants.MITIGATION_BM25_WEIGHTED} needs the lexical weight, e.g. {constants.MITIGATION_BM25_WEIGHTED}:0.3"
                )
            self.weight: float | None = check_weight(weight)
            self.name = f"{constants.MITIGATION_BM25_WEIGHTED}:{self.weight:g}"
        else:
            if weight is not None:
                raise ValueError("reciprocal rank fusion takes no weight; use bm25-weighted:W for a weighted sum")
            self.weight = None
            self.name = constants.MITIGATION_BM25_RRF
        self.fusion = fusion
        self.k = k

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """Fused scores, shape ``(n_queries, n_passages)``; ``model`` is not used."""
        matrix = _checked_dense(queries, passages, dense)
        lexical = bm25_scores(queries, passages)
        if self.fusion == FUSION_RRF:
            return reciprocal_rank_fusion([matrix, lexical], k=self.k)
        return weighted_fusion(lexical, matrix, float(self.weight))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"HybridBM25({self.name!r})"


def sweep_bm25_weights(
    evaluate: Callable[[Mitigation], float | Mapping[str, float]],
    weights: Sequence[float] = BM25_WEIGHT_GRID,
) -> pd.DataFrame:
    """Evaluate the weighted BM25 fusion at each weight (default 0, 0.1, ..., 1).

    Args:
        evaluate: Called once per weight with a ``bm25-weighted:W`` mitigation;
            returns one number or a mapping of metric name to number.
        weights: Lexical weights, each in [0, 1].

    Returns:
        One row per weight: ``bm25_weight``, ``mitigation`` (its name), then
        the metrics (``score`` when ``evaluate`` returns one number).

    Raises:
        ValueError: If ``weights`` is empty or holds a weight outside [0, 1].
    """
    checked = [check_weight(w) for w in weights]
    if not checked:
        raise ValueError("give at least one weight to sweep")
    rows = []
    for w in checked:
        mitigation = HybridBM25(FUSION_WEIGHTED, w)
        result = evaluate(mitigation)
        metrics = dict(result) if isinstance(result, Mapping) else {"score": float(result)}
        rows.append({constants.COL_BM25_WEIGHT: w, constants.COL_MITIGATION: mitigation.name, **metrics})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ contradiction guard


@lru_cache(maxsize=1 << 16)
def _flags(text_a: str, text_b: str) -> frozenset[str]:
    # Symmetric, so one cache entry serves both orders.
    return frozenset(contradiction_flags(*sorted((text_a, text_b))))


def candidates(row: np.ndarray, gap: float, floor: float, limit: int) -> np.ndarray:
    """Indices of the passages the guard inspects for one query, best first.

    A passage is a candidate when its score is within ``gap`` of the best or
    above ``floor``; at most ``limit`` of them, the highest scoring.

    Args:
        row: One query's scores, shape ``(n_passages,)``; ``-inf`` never qualifies.
        gap: Distance from the best score, >= 0.
        floor: Absolute score above which a passage always qualifies.
        limit: Most candidates kept, >= 1.

    Returns:
        Passage indices, shape ``(n_candidates,)``.
    """
    finite = np.flatnonzero(np.isfinite(row))
    if finite.size == 0:
        return finite
    best = row[finite].max()
    keep = finite[(row[finite] >= best - gap) | (row[finite] > floor)]
    return keep[np.argsort(-row[keep], kind="stable")][:limit]


def guard_demotions(query: str, texts: Sequence[str]) -> list[bool]:
    """Which of one query's candidate passages the guard demotes.

    The guard compares the query with each candidate
    (:func:`contradiction_flags`) and the candidates with each other.  A
    question rarely matches its answer's surface form (it has no number,
    "which drug" stands where the passage names one), so a flag between
    query and passage alone is weak evidence.  A candidate ``p`` is demoted
    when the query disagrees with it on a mode ``m`` *and* another candidate
    differs from ``p`` on ``m`` while agreeing with the query on ``m``: the
    corpus holds a rival that says what the query says where ``p`` does not,
    which is what a contradiction next to the truth looks like.  A lone
    candidate has no rival, so the query's flag alone decides.

    Args:
        query: The query text.
        texts: The candidate passages, ``n`` of them.

    Returns:
        ``n`` booleans, True for a demoted candidate.
    """
    query_flags = [_flags(query, t) for t in texts]
    if len(texts) == 1:
        return [bool(query_flags[0])]
    out = []
    for i, text in enumerate(texts):
        demote = False
        for mode in query_flags[i]:
            demote = any(mode not in query_flags[j] and mode in _flags(text, texts[j]) for j in range(len(texts)) if j != i)
            if demote:
                break
        out.append(demote)
    return out


class ContradictionGuard:
    """Demote near-top passages that contradict the query by a perturbation rule (:func:`guard_demotions`)."""

    name = constants.MITIGATION_GUARD

    def __init__(
        self,
        penalty: float = constants.GUARD_PENALTY,
        gap: float = constants.GUARD_FLOOR_GAP,
        floor: float = constants.GUARD_FLOOR_MIN,
        limit: int = constants.GUARD_MAX_CANDIDATES,
    ):
        """Args:
        penalty: Subtracted from a demoted passage's score, > 0.
        gap: A candidate scores within ``gap`` of the query's best ...
        floor: ... or above ``floor``.
        limit: At most this many candidates per query (the comparisons grow with its square).

        Raises:
            ValueError: For a non-positive penalty or limit, or a negative gap.
        """
        if not np.isfinite(penalty) or penalty <= 0:
            raise ValueError(f"penalty must be a positive number, got {penalty}")
        if not np.isfinite(gap) or gap < 0:
            raise ValueError(f"gap must be a number >= 0, got {gap}")
        if int(limit) < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.penalty, self.gap, self.floor, self.limit = float(penalty), float(gap), float(floor), int(limit)

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """Dense scores with ``penalty`` subtracted from each demoted candidate; ``model`` is not used."""
        out = _checked_dense(queries, passages, dense).copy()
        for i, query in enumerate(queries):
            picked = candidates(out[i], self.gap, self.floor, self.limit)
            demoted = guard_demotions(query, [passages[j] for j in picked])
            out[i, picked[np.asarray(demoted, dtype=bool)]] -= self.penalty
        return out

    def __repr__(self) -> str:
        return f"ContradictionGuard(penalty={self.penalty}, gap={self.gap}, floor={self.floor}, limit={self.limit})"


# ------------------------------------------------------------------ calibrated threshold


class CalibratedFilter:
    """Each model's calibrated threshold as a filter: a passage scoring at or below it becomes ``-inf``.

    "Above" is strict, as everywhere in cosine-probe (``core.probes.calibration``).
    """

    name = constants.MITIGATION_CALIBRATED

    def __init__(self, thresholds: Mapping[str, float]):
        """Args:
        thresholds: ``{model: threshold}``, e.g. ``thresholds_by_model(calibrate(results))``.

        Raises:
            ValueError: If ``thresholds`` is empty or holds a non-finite value.
        """
        if not thresholds:
            raise ValueError("calibrated needs each model's threshold; calibrate the models on the control pairs first")
        bad = {m: t for m, t in thresholds.items() if not np.isfinite(float(t))}
        if bad:
            raise ValueError(f"thresholds must be finite numbers, got {bad}")
        self.thresholds = {str(m): float(t) for m, t in thresholds.items()}

    def threshold(self, model: str) -> float:
        """The threshold of ``model`` (a registry name or alias of a calibrated model).

        Raises:
            ValueError: If the model was not calibrated.
        """
        if model in self.thresholds:
            return self.thresholds[model]
        from core.models.registry import resolve

        try:
            name = resolve(model).name
        except ValueError:
            name = model
        if name in self.thresholds:
            return self.thresholds[name]
        raise ValueError(f"no calibrated threshold for {model!r}; calibrated models: {sorted(self.thresholds)}")

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """``dense`` where it is above the model's threshold, ``-inf`` elsewhere."""
        matrix = _checked_dense(queries, passages, dense)
        return np.where(matrix > self.threshold(model), matrix, -np.inf)

    def __repr__(self) -> str:
        return f"CalibratedFilter({self.thresholds})"


__all__ = [
    "BM25_WEIGHT_GRID",
    "CalibratedFilter",
    "ContradictionGuard",
    "CrossEncoderReranker",
    "HybridBM25",
    "Mitigation",
    "bm25_scores",
    "candidates",
    "check_weight",
    "guard_demotions",
    "minmax_rows",
    "reciprocal_rank_fusion",
    "sweep_bm25_weights",
    "weighted_fusion",
]
