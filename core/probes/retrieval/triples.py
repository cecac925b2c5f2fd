"""Triples probe: does a negative outrank the positive, and where does the positive rank among every passage of the file?

Two views of a :class:`~core.files.triples.Triples` table, per model:

* win rate: per (anchor, positive, negative), the negative *wins* when
  ``cos(anchor, negative) > cos(anchor, positive)``; an exact tie is counted
  apart (``ties``), never as a win;
* in-corpus ranking: every distinct anchor is a query and every positive and
  negative of the file a passage, one passage per source row and cell even
  when two rows hold the same text (the corpus is as large as the file says).
  A passage is relevant to an anchor when its text is one of the anchor's
  positives, a negative of it when its text is one of its negatives; since
  relevance goes by text, copies of one text never decide a tie.  Reported:
  recall@1/@5/@10 (share of anchors with a positive in the top k), MRR@10,
  nDCG@10 and the share of anchors whose top passage is one of their negatives.
  Ties are resolved against the retriever (:func:`metrics.rank_order`).

Every distinct text is encoded once per model, through the embedding cache.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.files.triples import Triples
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.probes.retrieval.metrics import ir_metrics, rank_order, rate_with_ci

WIN_RATE_COLUMNS = [
    constants.COL_MODEL, constants.COL_N, constants.COL_WINS, constants.COL_TIES, constants.COL_WIN_RATE, constants.COL_TIE_RATE,
    constants.COL_CI_LOW, constants.COL_CI_HIGH,
]
RANKING_COLUMNS = [
    constants.COL_MODEL, constants.COL_N_QUERIES, constants.COL_N_PASSAGES, *constants.COL_IR_RECALL_AT.values(),
    constants.COL_MRR_AT, constants.COL_NDCG_AT, constants.COL_TOP1_NEGATIVE,
]
# Queries scored against the whole corpus at once: bounds the (queries x passages) block in memory.
_QUERY_BLOCK = 512


@dataclass
class TriplesResult:
    """What the triples probe found (tidy long tables).

    Attributes:
        scores: one row per model and triple: row, anchor, positive, negative,
            negative_column, cosine_positive, cosine_negative, margin
            (negative minus positive), win, tie.
        win_rates: model, n, wins, ties, win_rate, tie_rate, ci_low, ci_high
            (anchors resampled as clusters).
        ranks: one row per model and anchor: n_relevant, rank_positive (best
            rank of a positive), top1 (the top passage's text), top1_negative,
            and the per-query figures of the ranking.
        ranking: model, n_queries, n_passages, recall_at_1/5/10, mrr_at_10,
            ndcg_at_10, top1_negative.
        errors: model -> one-line reason it produced nothing.
        reports: model -> encoding report.
        seconds: wall time.
    """

    scores: pd.DataFrame
    win_rates: pd.DataFrame
    ranks: pd.DataFrame
    ranking: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.scores[constants.COL_MODEL])) if not self.scores.empty else []

    def summary(self) -> pd.DataFrame:
        """One row per model: win rate (ties apart) beside the in-corpus ranking."""
        if self.win_rates.empty:
            return pd.DataFrame(columns=[*WIN_RATE_COLUMNS, *RANKING_COLUMNS[1:]])
        return self.win_rates.merge(self.ranking, on=constants.COL_MODEL, how="left")

    def history_pairs(self, name: str) -> pd.DataFrame:
        """The run as tidy pair results for the run history (``core.history.sources.retrieval_record``'s hook).

        Per model and source row: anchor vs positive (category ``positive``) and
        anchor vs each negative (category ``contradiction`` for an NLI
        contradiction column, ``hard_negative`` otherwise), ``win`` and
        ``margin`` beside the negatives' cosines.
        """
        s = self.scores
        if s.empty:
            return pd.DataFrame(columns=[constants.COL_MODEL, constants.COL_SUITE, constants.COL_CATEGORY, constants.COL_PAIR_ID,
                                         constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE])
        row = "row-" + s[constants.COL_SOURCE_ROW].astype(str)
        contradiction = s[constants.COL_NEGATIVE_COLUMN].str.lower().str.startswith(("contradict", "contradiction"))
        positives = pd.DataFrame({
            constants.COL_MODEL: s[constants.COL_MODEL], constants.COL_SUITE: name, constants.COL_CATEGORY: constants.CAT_POSITIVE,
            constants.COL_PAIR_ID: row + "/positive", constants.COL_TEXT_A: s[constants.COL_ANCHOR], constants.COL_TEXT_B: s[constants.COL_POSITIVE],
            constants.COL_COSINE: s["cosine_positive"],
        }).drop_duplicates([constants.COL_MODEL, constants.COL_PAIR_ID])
        negatives = pd.DataFrame({
            constants.COL_MODEL: s[constants.COL_MODEL], constants.COL_SUITE: name,
            constants.COL_CATEGORY: contradiction.map({True: constants.CAT_CONTRADICTION, False: "hard_negative"}),
            constants.COL_PAIR_ID: row + "/" + s[constants.COL_NEGATIVE_COLUMN].astype(str), constants.COL_TEXT_A: s[constants.COL_ANCHOR],
            constants.COL_TEXT_B: s[constants.COL_NEGATIVE], constants.COL_COSINE: s["cosine_negative"], constants.COL_WIN: s[constants.COL_WIN],
            "margin": s["margin"],
        })
        return pd.concat([positives, negatives], ignore_index=True)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name (for CSV export)."""
        return {"triples_scores": self.scores, "triples_win_rates": self.win_rates, "triples_ranks": self.ranks,
                "triples_ranking": self.ranking, "triples_summary": self.summary()}


@dataclass(frozen=True)
class _Corpus:
    """The file as passages (one per source row and cell) and queries (distinct anchors)."""

    passages: tuple[str, ...]
    queries: tuple[str, ...]
    positives: tuple[frozenset[str], ...]  # per query: its positive texts
    negatives: tuple[frozenset[str], ...]  # per query: its negative texts that are not also positives


def corpus_of(triples: Triples) -> _Corpus:
    """Passages and queries of the in-corpus ranking (see the module docstring)."""
    frame = triples.frame
    by_row = frame.drop_duplicates(constants.COL_SOURCE_ROW)
    passages = (*by_row[constants.COL_POSITIVE], *frame[constants.COL_NEGATIVE])
    queries = tuple(dict.fromkeys(frame[constants.COL_ANCHOR]))
    pos = frame.groupby(constants.COL_ANCHOR, sort=False)[constants.COL_POSITIVE].agg(frozenset)
    neg = frame.groupby(constants.COL_ANCHOR, sort=False)[constants.COL_NEGATIVE].agg(frozenset)
    positives = tuple(pos[q] for q in queries)
    return _Corpus(tuple(passages), queries, positives, tuple(neg[q] - p for q, p in zip(queries, positives, strict=True)))


def _win_rows(frame: pd.DataFrame, vectors: dict[str, np.ndarray], model: str) -> pd.DataFrame:
    a = embedding_matrix(vectors, list(frame[constants.COL_ANCHOR])).astype(np.float64)
    p = embedding_matrix(vectors, list(frame[constants.COL_POSITIVE])).astype(np.float64)
    n = embedding_matrix(vectors, list(frame[constants.COL_NEGATIVE])).astype(np.float64)
    cos_p, cos_n = np.clip((a * p).sum(axis=1), -1, 1), np.clip((a * n).sum(axis=1), -1, 1)
    out = frame.assign(cosine_positive=cos_p, cosine_negative=cos_n, margin=cos_n - cos_p)
    out[constants.COL_WIN] = cos_n > cos_p
    out[constants.COL_TIE] = cos_n == cos_p
    out.insert(0, constants.COL_MODEL, model)
    return out


def _rank_rows(corpus: _Corpus, vectors: dict[str, np.ndarray], model: str) -> pd.DataFrame:
    passages = embedding_matrix(vectors, list(corpus.passages)).astype(np.float64)
    text_ids = {t: i for i, t in enumerate(dict.fromkeys(corpus.passages))}
    passage_ids = np.array([text_ids[t] for t in corpus.passages])
    parts = []
    for start in range(0, len(corpus.queries), _QUERY_BLOCK):
        stop = min(start + _QUERY_BLOCK, len(corpus.queries))
        queries = embedding_matrix(vectors, list(corpus.queries[start:stop])).astype(np.float64)
        scores = np.clip(queries @ passages.T, -1.0, 1.0)
        gains = np.array([np.isin(passage_ids, [text_ids[t] for t in corpus.positives[q]]) for q in range(start, stop)], dtype=float)
        negative = np.array([np.isin(passage_ids, [text_ids[t] for t in corpus.negatives[q] if t in text_ids]) for q in range(start, stop)])
        order = rank_order(scores, gains)
        ranked = np.take_along_axis(gains, order, axis=1)
        figures = ir_metrics(ranked, list(gains), hit_recall=True)
        top = order[:, 0]
        parts.append(
            pd.DataFrame(
                {
                    constants.COL_MODEL: model, constants.COL_ANCHOR: corpus.queries[start:stop],
                    "n_relevant": gains.sum(axis=1).astype(int), "rank_positive": ranked.argmax(axis=1) + 1,
                    "top1": [corpus.passages[i] for i in top], constants.COL_TOP1_NEGATIVE: negative[np.arange(len(top)), top],
                    **figures,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _ranking_row(ranks: pd.DataFrame, model: str, n_passages: int) -> dict:
    means = ranks[[*constants.COL_IR_RECALL_AT.values(), constants.COL_MRR_AT, constants.COL_NDCG_AT, constants.COL_TOP1_NEGATIVE]].astype(float).mean()
    return {constants.COL_MODEL: model, constants.COL_N_QUERIES: len(ranks), constants.COL_N_PASSAGES: n_passages, **means.to_dict()}


def _win_rate_row(scores: pd.DataFrame, model: str, **bootstrap) -> dict:
    wins, ties = scores[constants.COL_WIN].to_numpy(bool), scores[constants.COL_TIE].to_numpy(bool)
    rate, low, high = rate_with_ci(wins, scores[constants.COL_ANCHOR].to_numpy(), **bootstrap)
    return {
        constants.COL_MODEL: model, constants.COL_N: len(wins), constants.COL_WINS: int(wins.sum()), constants.COL_TIES: int(ties.sum()),
        constants.COL_WIN_RATE: rate, constants.COL_TIE_RATE: float(ties.mean()), constants.COL_CI_LOW: low, constants.COL_CI_HIGH: high,
    }


def run_triples(
    triples: Triples,
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
) -> TriplesResult:
    """Win rate and in-corpus ranking of a triples file, per model (module docstring).

    Args:
        triples: what :func:`core.files.triples.read_triples` read.
        models: model names, Hugging Face ids or folders.
        cache: vector cache, or None.
        options: device, batch size, backend and remote-code opt-ins.
        progress: called with (fraction done, message).
        seed, n_resamples, confidence: of the win rate's bootstrap interval (n_resamples None: the current setting).

    Returns:
        A :class:`TriplesResult`; a model that fails to load or encode is in
        ``errors`` and the others still run.

    Raises:
        ValueError: no model, or ``triples`` is not a :class:`Triples`.
    """
    start = time.perf_counter()
    if not isinstance(triples, Triples):
        raise ValueError(f"triples must be a Triples table (core.files.triples.read_triples), got {type(triples).__name__}")  # noqa: TRY004
    if not models:
        raise ValueError("give at least one model")
    corpus = corpus_of(triples)
    texts = list(dict.fromkeys([*corpus.queries, *corpus.passages]))
    errors: dict[str, str] = {}
    reports: dict[str, EncodeReport] = {}
    scores, ranks, win_rows, rank_rows = [], [], [], []
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(texts, share=0.8)
        if encoded is None:
            continue
        vectors, reports[run.label] = encoded
        run.note(0.85, f"{run.label}: ranking {len(corpus.queries)} anchors over {len(corpus.passages)} passages")
        scored, ranked = _win_rows(triples.frame, vectors, run.label), _rank_rows(corpus, vectors, run.label)
        scores.append(scored)
        ranks.append(ranked)
        win_rows.append(_win_rate_row(scored, run.label, **boot))
        rank_rows.append(_ranking_row(ranked, run.label, len(corpus.passages)))
    return TriplesResult(
        pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(columns=[constants.COL_MODEL]),
        pd.DataFrame(win_rows, columns=WIN_RATE_COLUMNS),
        pd.concat(ranks, ignore_index=True) if ranks else pd.DataFrame(columns=[constants.COL_MODEL]),
        pd.DataFrame(rank_rows, columns=RANKING_COLUMNS),
        errors, reports, time.perf_counter() - start,
    )
