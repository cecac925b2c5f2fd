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
  Exact ties between different texts are broken by trec_eval's rule, the one
  the BEIR probe follows (:func:`metrics.rank_order`): a passage's id is its
  place in the corpus (positives by row, then negatives), and of two tied
  passages the larger id ranks first; ``tied_queries`` counts the anchors
  whose figures that rule decided.

Every distinct text is encoded once per model, through the embedding cache.
With ``mitigations`` (:mod:`core.probes.retrieval.mitigations`), both views
are recomputed on each mitigation's scores: per anchor, its distinct
positives and negatives are rescored together for the win rate, and the
whole corpus for the ranking.  The before/after table (:meth:`TriplesResult.summary`)
puts ties, fixed and broken counts beside each net figure.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from core import constants
from core.files.triples import Triples
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.probes.retrieval import tables
from core.probes.retrieval.metrics import flips, judged_figures, rank_order, rate_with_ci
from core.probes.retrieval.origin import variant_sources
from core.probes.retrieval.records import ranked_settings
from core.probes.retrieval.rescoring import check_names, checked_scores, cosine_matrix, record_failure
from core.scoring.result import HistoryRecord
from core.stats.similarity import cos_sim

if TYPE_CHECKING:
    from core.probes.retrieval.mitigations import Mitigation

_KEYS = [constants.COL_MODEL, constants.COL_MITIGATION]
WIN_RATE_COLUMNS = [
    *_KEYS,
    constants.COL_N,
    constants.COL_WINS,
    constants.COL_TIES,
    constants.COL_WIN_RATE,
    constants.COL_TIE_RATE,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
]
RANKING_COLUMNS = [
    *_KEYS,
    constants.COL_N_QUERIES,
    constants.COL_N_PASSAGES,
    *constants.COL_IR_RECALL_AT.values(),
    constants.COL_MRR_AT,
    constants.COL_NDCG_AT,
    constants.COL_TOP1_NEGATIVE,
    constants.COL_TIED_QUERIES,
]
# Beside the net figures of the before/after table: the negatives a mitigation fixed and broke,
# the anchors whose positive it put first or lost.
CHURN_COLUMNS = [*_KEYS, constants.COL_FIXED, constants.COL_BROKEN, "recall_gained", "recall_lost"]
# Queries scored against the whole corpus at once: bounds the (queries x passages) block in memory.
_QUERY_BLOCK = 512


@dataclass
class TriplesResult:
    """What the triples probe found (tidy long tables).

    Attributes:
        scores: one row per model, mitigation and triple: row, anchor, positive, negative,
            negative_column, cosine_positive, cosine_negative, margin
            (negative minus positive), win, tie; under a mitigation
            score_positive and score_negative are its scores and margin,
            win and tie follow them.
        win_rates: model, mitigation, n, wins, ties, win_rate, tie_rate, ci_low, ci_high
            (anchors resampled as clusters).
        ranks: one row per model, mitigation and anchor: n_relevant, rank_positive (best
            rank of a positive), top1 (the top passage's text), top1_negative,
            the per-query figures of the ranking and tie_decided.
        ranking: model, mitigation, n_queries, n_passages, recall_at_1/5/10, mrr_at_10,
            ndcg_at_10, top1_negative, tied_queries.
        errors: model -> one-line reason it produced nothing.
        reports: model -> encoding report.
        seconds: wall time.
        by_source: with mitigations, every mitigation's win rate on the hand-written
            negatives (the ones the perturbation rules, and so the guard, never wrote:
            the held-out figure) and on the rule-made ones (:func:`tables.source_table`).
    """

    scores: pd.DataFrame
    win_rates: pd.DataFrame
    ranks: pd.DataFrame
    ranking: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0
    by_source: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=tables.SOURCE_COLUMNS))

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.scores[constants.COL_MODEL])) if not self.scores.empty else []

    @property
    def mitigations(self) -> list[str]:
        return list(dict.fromkeys(self.win_rates[constants.COL_MITIGATION])) if not self.win_rates.empty else []

    def summary(self) -> pd.DataFrame:
        """One row per model and mitigation: win rate and the in-corpus ranking.

        Ties, fixed and broken stand beside the win rate; recall@1's gains and losses beside the ranking.
        """
        columns = [*WIN_RATE_COLUMNS, *RANKING_COLUMNS[2:], *CHURN_COLUMNS[2:]]
        if self.win_rates.empty:
            return pd.DataFrame(columns=columns)
        table = self.win_rates.merge(self.ranking, on=_KEYS, how="left").merge(_churn(self.scores, self.ranks), on=_KEYS, how="left")
        after = {
            constants.COL_TIES: [constants.COL_FIXED, constants.COL_BROKEN],
            constants.COL_IR_RECALL_AT[1]: ["recall_gained", "recall_lost"],
        }
        order: list[str] = []
        for c in table.columns:
            if c not in CHURN_COLUMNS[2:]:
                order += [c, *after.get(c, [])]
        return table[order]

    def history_record(self, name: str) -> HistoryRecord:
        """The pairs of :meth:`history_pairs`, the summary and the backends."""
        return HistoryRecord(self.history_pairs(name), ranked_settings(self.reports, self.summary()))

    def history_pairs(self, name: str) -> pd.DataFrame:
        """The run as tidy pair results for the run history (:meth:`history_record`).

        Per model and source row: anchor vs positive (category ``positive``) and
        anchor vs each negative (category ``contradiction`` for an NLI
        contradiction column, ``hard_negative`` otherwise), ``win`` and
        ``margin`` beside the negatives' cosines.  ``cosine`` is the model's
        own; each mitigation's score of the same passage rides beside it as
        ``score[<mitigation>]`` (as a suite run's pairs keep them).
        """
        every = self.scores
        s = every[every[constants.COL_MITIGATION] == constants.MITIGATION_NONE] if constants.COL_MITIGATION in every.columns else every
        # Each mitigation scored the plain rows in their order, per model: the n-th row of one is the n-th of the other.
        extra_p: dict[str, np.ndarray] = {}
        extra_n: dict[str, np.ndarray] = {}
        for mitigation in [m for m in dict.fromkeys(every.get(constants.COL_MITIGATION, [])) if m != constants.MITIGATION_NONE]:
            mine = every[every[constants.COL_MITIGATION] == mitigation]
            key = ["score_positive", "score_negative"]
            aligned = (
                s[[constants.COL_MODEL]]
                .assign(_nth=s.groupby(constants.COL_MODEL).cumcount())
                .merge(
                    mine[[constants.COL_MODEL, *key]].assign(_nth=mine.groupby(constants.COL_MODEL).cumcount()),
                    on=[constants.COL_MODEL, "_nth"],
                    how="left",
                )
            )
            extra_p[f"score[{mitigation}]"], extra_n[f"score[{mitigation}]"] = aligned[key[0]].to_numpy(), aligned[key[1]].to_numpy()
        if s.empty:
            return pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
        row = "row-" + s[constants.COL_SOURCE_ROW].astype(str)
        contradiction = s[constants.COL_NEGATIVE_COLUMN].str.lower().str.startswith(("contradict", "contradiction"))
        positives = pd.DataFrame(
            {
                constants.COL_MODEL: s[constants.COL_MODEL],
                constants.COL_SUITE: name,
                constants.COL_CATEGORY: constants.CAT_POSITIVE,
                constants.COL_PAIR_ID: row + "/positive",
                constants.COL_TEXT_A: s[constants.COL_ANCHOR],
                constants.COL_TEXT_B: s[constants.COL_POSITIVE],
                constants.COL_COSINE: s["cosine_positive"],
                **extra_p,
            }
        ).drop_duplicates([constants.COL_MODEL, constants.COL_PAIR_ID])
        negatives = pd.DataFrame(
            {
                constants.COL_MODEL: s[constants.COL_MODEL],
                constants.COL_SUITE: name,
                constants.COL_CATEGORY: contradiction.map({True: constants.CAT_CONTRADICTION, False: "hard_negative"}),
                constants.COL_PAIR_ID: row + "/" + s[constants.COL_NEGATIVE_COLUMN].astype(str),
                constants.COL_TEXT_A: s[constants.COL_ANCHOR],
                constants.COL_TEXT_B: s[constants.COL_NEGATIVE],
                constants.COL_COSINE: s["cosine_negative"],
                constants.COL_WIN: s[constants.COL_WIN],
                "margin": s["margin"],
                **extra_n,
            }
        )
        return pd.concat([positives, negatives], ignore_index=True)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name (for CSV export)."""
        return {
            "triples_scores": self.scores,
            "triples_win_rates": self.win_rates,
            "triples_ranks": self.ranks,
            "triples_ranking": self.ranking,
            "triples_summary": self.summary(),
            "triples_by_source": self.by_source,
        }


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
    out.insert(0, constants.COL_MITIGATION, constants.MITIGATION_NONE)
    out.insert(0, constants.COL_MODEL, model)
    return out


def _rescored_win_rows(dense: pd.DataFrame, vectors: dict[str, np.ndarray], mitigation: Mitigation, model: str) -> pd.DataFrame:
    """The plain rows rescored: per anchor, its distinct positives and negatives ranked together by ``mitigation``."""
    score_p, score_n = np.empty(len(dense)), np.empty(len(dense))
    for anchor, part in dense.groupby(constants.COL_ANCHOR, sort=False):
        passages = list(dict.fromkeys([*part[constants.COL_POSITIVE], *part[constants.COL_NEGATIVE]]))
        cosines = cosine_matrix(vectors, [str(anchor)], passages)
        scores = checked_scores(mitigation.rescore([str(anchor)], passages, cosines, model=model), cosines, mitigation.name)[0]
        at = {t: i for i, t in enumerate(passages)}
        rows = dense.index.get_indexer(part.index)
        score_p[rows] = scores[[at[t] for t in part[constants.COL_POSITIVE]]]
        score_n[rows] = scores[[at[t] for t in part[constants.COL_NEGATIVE]]]
    both = np.isfinite(score_p) & np.isfinite(score_n)
    out = dense.assign(score_positive=score_p, score_negative=score_n, margin=np.where(both, score_n - score_p, np.nan))
    out[constants.COL_MITIGATION] = mitigation.name
    out[constants.COL_WIN] = score_n > score_p
    out[constants.COL_TIE] = score_n == score_p
    return out


def _rank_rows(corpus: _Corpus, vectors: dict[str, np.ndarray], model: str, mitigation: Mitigation | None = None) -> pd.DataFrame:
    passages = embedding_matrix(vectors, list(corpus.passages)).astype(np.float64)
    text_ids = {t: i for i, t in enumerate(dict.fromkeys(corpus.passages))}
    passage_ids = np.array([text_ids[t] for t in corpus.passages])
    # A passage's id is its place in the corpus, zero-padded so string order (trec_eval's) is number order.
    ids = np.array([f"{i:09d}" for i in range(len(corpus.passages))])
    parts = []
    for start in range(0, len(corpus.queries), _QUERY_BLOCK):
        stop = min(start + _QUERY_BLOCK, len(corpus.queries))
        queries = embedding_matrix(vectors, list(corpus.queries[start:stop])).astype(np.float64)
        scores = cos_sim(queries, passages)
        if mitigation is not None:
            scores = checked_scores(
                mitigation.rescore(list(corpus.queries[start:stop]), list(corpus.passages), scores, model=model), scores, mitigation.name
            )
        gains = np.array([np.isin(passage_ids, [text_ids[t] for t in corpus.positives[q]]) for q in range(start, stop)], dtype=float)
        negative = np.array([np.isin(passage_ids, [text_ids[t] for t in corpus.negatives[q] if t in text_ids]) for q in range(start, stop)])
        order = rank_order(scores, ids)
        ranked = np.take_along_axis(gains, order, axis=1)
        ranked_scores = np.take_along_axis(scores, order, axis=1)
        figures = judged_figures(ranked_scores, ranked, list(gains), hit_recall=True)
        top = order[:, 0]
        retrieved = np.isfinite(ranked_scores[:, 0])
        parts.append(
            pd.DataFrame(
                {
                    constants.COL_MODEL: model,
                    constants.COL_MITIGATION: constants.MITIGATION_NONE if mitigation is None else mitigation.name,
                    constants.COL_ANCHOR: corpus.queries[start:stop],
                    "n_relevant": gains.sum(axis=1).astype(int),
                    "rank_positive": _first_rank((ranked > 0) & np.isfinite(ranked_scores)),
                    "top1": [corpus.passages[i] if ok else "" for i, ok in zip(top, retrieved, strict=True)],
                    constants.COL_TOP1_NEGATIVE: negative[np.arange(len(top)), top] & retrieved,
                    **figures,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _first_rank(hits: np.ndarray) -> np.ndarray:
    """1-based rank of each query's first hit; NaN where a mitigation filtered out every positive."""
    return np.where(hits.any(axis=1), hits.argmax(axis=1) + 1.0, np.nan)


def _ranking_row(ranks: pd.DataFrame, model: str, mitigation: str, n_passages: int) -> dict:
    means = (
        ranks[[*constants.COL_IR_RECALL_AT.values(), constants.COL_MRR_AT, constants.COL_NDCG_AT, constants.COL_TOP1_NEGATIVE]]
        .astype(float)
        .mean()
    )
    return {
        constants.COL_MODEL: model,
        constants.COL_MITIGATION: mitigation,
        constants.COL_N_QUERIES: len(ranks),
        constants.COL_N_PASSAGES: n_passages,
        **means.to_dict(),
        constants.COL_TIED_QUERIES: int(ranks[constants.COL_TIE_DECIDED].sum()),
    }


def _win_rate_row(scores: pd.DataFrame, model: str, mitigation: str, **bootstrap) -> dict:
    wins, ties = scores[constants.COL_WIN].to_numpy(bool), scores[constants.COL_TIE].to_numpy(bool)
    rate, low, high = rate_with_ci(wins, scores[constants.COL_ANCHOR].to_numpy(), **bootstrap)
    return {
        constants.COL_MODEL: model,
        constants.COL_MITIGATION: mitigation,
        constants.COL_N: len(wins),
        constants.COL_WINS: int(wins.sum()),
        constants.COL_TIES: int(ties.sum()),
        constants.COL_WIN_RATE: rate,
        constants.COL_TIE_RATE: float(ties.mean()),
        constants.COL_CI_LOW: low,
        constants.COL_CI_HIGH: high,
    }


def _churn(scores: pd.DataFrame, ranks: pd.DataFrame) -> pd.DataFrame:
    """Per model and mitigation: the negatives and anchors a mitigation fixed and broke.

    Negatives whose positive became / stopped being strictly first, anchors whose positive became / stopped being top.
    """
    rows = []
    for (model, mitigation), part in scores.groupby(_KEYS, sort=False):
        plain = scores[(scores[constants.COL_MODEL] == model) & (scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE)]
        fixed, broken = flips(
            ~(plain[constants.COL_WIN] | plain[constants.COL_TIE]).to_numpy(bool),
            ~(part[constants.COL_WIN] | part[constants.COL_TIE]).to_numpy(bool),
        )
        mine = ranks[(ranks[constants.COL_MODEL] == model) & (ranks[constants.COL_MITIGATION] == mitigation)]
        base = ranks[(ranks[constants.COL_MODEL] == model) & (ranks[constants.COL_MITIGATION] == constants.MITIGATION_NONE)]
        gained, lost = flips(base[constants.COL_IR_RECALL_AT[1]].to_numpy() > 0, mine[constants.COL_IR_RECALL_AT[1]].to_numpy() > 0)
        rows.append((model, mitigation, fixed, broken, gained, lost))
    return pd.DataFrame(rows, columns=CHURN_COLUMNS)


def run_triples(
    triples: Triples,
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    mitigations: Sequence[Mitigation] = (),
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
) -> TriplesResult:
    """Win rate and in-corpus ranking of a triples file, per model, before and after each mitigation (module docstring).

    Args:
        triples: what :func:`core.files.triples.read_triples` read.
        models: model names, Hugging Face ids or folders.
        cache: vector cache, or None.
        mitigations: objects with ``name`` and ``rescore`` (:class:`core.probes.retrieval.mitigations.Mitigation`);
            ``none`` (the plain cosine) always runs first.
        options: device, batch size, backend and remote-code opt-ins.
        progress: called with (fraction done, message).
        seed, n_resamples, confidence: of the win rate's bootstrap interval (n_resamples None: the current setting).

    Returns:
        A :class:`TriplesResult`; a model that fails to load or encode, or a
        mitigation that fails on one model, is in ``errors`` and the others still run.

    Raises:
        ValueError: no model, ``triples`` is not a :class:`Triples`, or mitigations without unique names.
    """
    start = time.perf_counter()
    if not isinstance(triples, Triples):
        raise ValueError(f"triples must be a Triples table (core.files.triples.read_triples), got {type(triples).__name__}")  # noqa: TRY004
    if not models:
        raise ValueError("give at least one model")
    check_names(mitigations)
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
        dense = _win_rows(triples.frame, vectors, run.label)
        for j, mitigation in enumerate([None, *mitigations]):
            label = constants.MITIGATION_NONE if mitigation is None else mitigation.name
            run.note(
                0.85 + 0.15 * j / (len(mitigations) + 1),
                f"{run.label}: {label}: ranking {len(corpus.queries)} anchors over {len(corpus.passages)} passages",
            )
            try:
                scored = dense if mitigation is None else _rescored_win_rows(dense, vectors, mitigation, run.label)
                ranked = _rank_rows(corpus, vectors, run.label, mitigation)
            except Exception as exc:
                if mitigation is None:
                    raise
                record_failure(errors, run.label, label, exc)  # a mitigation may raise anything; the others must still run
                continue
            scores.append(scored)
            ranks.append(ranked)
            win_rows.append(_win_rate_row(scored, run.label, label, **boot))
            rank_rows.append(_ranking_row(ranked, run.label, label, len(corpus.passages)))
    every = pd.concat(scores, ignore_index=True) if scores else pd.DataFrame(columns=_KEYS)
    return TriplesResult(
        every,
        pd.DataFrame(win_rows, columns=WIN_RATE_COLUMNS),
        pd.concat(ranks, ignore_index=True) if ranks else pd.DataFrame(columns=_KEYS),
        pd.DataFrame(rank_rows, columns=RANKING_COLUMNS),
        errors,
        reports,
        time.perf_counter() - start,
        by_source=_by_source(every, **boot) if mitigations and not every.empty else pd.DataFrame(columns=tables.SOURCE_COLUMNS),
    )


def _by_source(scores: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """Win rate per model, mitigation and negative source, hand-written first (anchors resampled as clusters).

    The guard is the perturbation rules run in reverse, so on a negative those
    rules write word for word it is measured on its own output; the
    hand-written negatives are the figure that holds on data it was not built
    from.
    """
    plain = (scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE).to_numpy()
    frame = scores.copy()
    frame[constants.COL_GROUP_ID] = scores[constants.COL_ANCHOR]
    frame[constants.COL_VARIANT_SOURCE] = variant_sources(scores[constants.COL_ANCHOR], scores[constants.COL_NEGATIVE])
    frame[constants.COL_SCORE_VARIANT] = np.where(plain, scores["cosine_negative"], scores.get("score_negative", scores["cosine_negative"]))
    frame[constants.COL_SCORE_PARAPHRASE] = np.where(
        plain, scores["cosine_positive"], scores.get("score_positive", scores["cosine_positive"])
    )
    return tables.source_table(frame, **bootstrap)


def score_vectors(triples: Triples, vectors: dict[str, np.ndarray], label: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The triples probe on vectors already computed: per triple (win, tie) and per anchor (the ranking's figures).

    For callers that hold a model this module cannot load by name (``tune``'s
    models in training), so they are judged by the same rules as
    :func:`run_triples`.

    Args:
        triples: what :func:`core.files.triples.read_triples` read.
        vectors: text -> unit vector, for every anchor, positive and negative of ``triples``.
        label: the model's name in the tables.

    Returns:
        ``(scores, ranks)`` as in :class:`TriplesResult`: one row per triple,
        then one row per distinct anchor in the order the anchors first occur.

    Raises:
        ValueError: ``triples`` is not a :class:`Triples`, or a text has no vector.
    """
    if not isinstance(triples, Triples):
        raise ValueError(f"triples must be a Triples table (core.files.triples.read_triples), got {type(triples).__name__}")  # noqa: TRY004
    corpus = corpus_of(triples)
    missing = [t for t in dict.fromkeys([*corpus.queries, *corpus.passages]) if t not in vectors]
    if missing:
        raise ValueError(f"{len(missing)} text(s) have no vector, e.g. {missing[0][:60]!r}")
    return _win_rows(triples.frame, vectors, label), _rank_rows(corpus, vectors, label)
