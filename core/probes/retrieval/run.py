"""Run the retrieval probes: encode once per model, score, rescore with each mitigation, tabulate.

Three views of one suite, each before (``none``) and after every mitigation:

* adversarial win rate: per group, the anchor is the query and the passages
  are its paraphrase and every variant; a variant wins when it outranks the
  paraphrase;
* NevIR paired accuracy: queries ``[q1, q2]`` against ``[anchor, variant]``;
* in-corpus ranking: every query against every passage of the suite.

Corpus mode, a user's corpus and queries, is :mod:`core.probes.retrieval.corpus`;
how a mitigation is applied (the checks, a failure's one-line record) is
:mod:`core.probes.retrieval.rescoring`.  A model that fails to load or encode,
or a mitigation that fails on one model, is reported in ``errors``; the rest
still run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from core import constants
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.probes.retrieval import tables
from core.probes.retrieval.metrics import adversarial_wins, paired_correct, target_ranks
from core.probes.retrieval.origin import variant_sources
from core.probes.retrieval.records import ranked_settings, retrieval_pairs
from core.probes.retrieval.rescoring import check_names, checked_scores, cosine_matrix, record_failure
from core.probes.retrieval.suite import PASSAGE_COLUMNS, QUERY_COLUMNS, RetrievalSuite, tidy_suite
from core.scoring.result import HistoryRecord

if TYPE_CHECKING:  # for the hints only: the run takes any object with the protocol's name and rescore
    from core.probes.retrieval.mitigations import Mitigation


COST_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_MITIGATION,
    constants.COL_PARAPHRASES_LOST,
    "n_groups",
    constants.COL_CORRECT_LOST,
    constants.COL_N_QUERIES,
    constants.COL_MS_PER_QUERY,
]


@dataclass
class RetrievalResult:
    """Everything one retrieval run produced (tidy long tables).

    Attributes:
        scores: one row per model, mitigation and variant: group_id, domain,
            mode, anchor, paraphrase, variant, cosine_paraphrase,
            cosine_variant, score_paraphrase, score_variant, margin, win,
            rank_paraphrase, rank_variant (ranks among the group's paraphrase
            and variants), variant_source (rule-made or hand-written,
            :mod:`core.probes.retrieval.origin`).
        win_rates: model, mitigation, mode, n, wins, win_rate, ci_low, ci_high.
        paired_groups: one row per model, mitigation and NevIR group: the four
            scores, q1_right, q2_right, paired_correct.
        paired: model, mitigation, mode, n, paired_correct, paired_accuracy,
            ci_low, ci_high, random.
        ranks: one row per model, mitigation and query: rank_correct,
            rank_contradiction, top1_contradiction, top-1 passage.
        ranking: model, mitigation, n_queries, recall_at_1, recall_at_5, mrr,
            top1_contradiction.
        costs: model, mitigation, paraphrases_lost, n_groups, correct_lost,
            n_queries, ms_per_query.
        comparisons: model vs model per mitigation and mode (see
            :func:`tables.comparison_table`).
        errors: model (or ``model + mitigation``) -> one-line reason.
        reports: model -> encoding report.
        seconds: wall time.
        by_source: every mitigation's win rate on hand-written and on rule-made
            variants, ties apart (:func:`tables.source_table`).
    """

    scores: pd.DataFrame
    win_rates: pd.DataFrame
    paired_groups: pd.DataFrame
    paired: pd.DataFrame
    ranks: pd.DataFrame
    ranking: pd.DataFrame
    costs: pd.DataFrame
    comparisons: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0
    by_source: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=tables.SOURCE_COLUMNS))

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.scores[constants.COL_MODEL])) if not self.scores.empty else []

    @property
    def mitigations(self) -> list[str]:
        return list(dict.fromkeys(self.scores[constants.COL_MITIGATION])) if not self.scores.empty else []

    def summary(self) -> pd.DataFrame:
        """The before/after table: model × mitigation -> win rate, paired accuracy, ranking, costs."""
        churn = tables.churn_table(self.scores, self.paired_groups, self.ranks) if not self.scores.empty else None
        return tables.summary_table(self.win_rates, self.paired, self.ranking, self.costs, churn)

    def history_record(self, name: str) -> HistoryRecord:
        """Each group's paraphrase and variants as pairs with every mitigation's score beside the cosine
        (:func:`core.probes.retrieval.records.retrieval_pairs`), the summary and the backends."""
        return HistoryRecord(retrieval_pairs(self.scores, name), ranked_settings(self.reports, self.summary()))

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name (for CSV export)."""
        return {
            "scores": self.scores,
            "win_rates": self.win_rates,
            "paired_groups": self.paired_groups,
            "paired_accuracy": self.paired,
            "ranks": self.ranks,
            "ranking": self.ranking,
            "costs": self.costs,
            "comparisons": self.comparisons,
            "summary": self.summary(),
            "win_rates_by_source": self.by_source,
        }


# ------------------------------------------------------------------ the suite's structure


@dataclass(frozen=True)
class _Group:
    group_id: str
    domain: str
    anchor: str
    paraphrase: str
    variants: tuple[tuple[str, str], ...]  # (mode, text)


@dataclass(frozen=True)
class _NevirGroup:
    group_id: str
    domain: str
    query_mode: str
    q1: str
    q2: str
    anchor: str
    variant: str


@dataclass(frozen=True)
class _Layout:
    """The suite as index structures: groups, NevIR groups, and the ranking corpus."""

    groups: tuple[_Group, ...]
    nevir: tuple[_NevirGroup, ...]
    corpus: tuple[str, ...]
    queries: tuple[str, ...]
    correct: np.ndarray  # (n_queries, 2): corpus index of each right passage; column 0 the anchor or variant itself
    contradiction: np.ndarray  # (n_queries, 2): the contradicting ones, same layout
    query_rows: pd.DataFrame  # group_id, domain, query_mode, which, query

    def texts(self) -> list[str]:
        return list(dict.fromkeys([*self.corpus, *self.queries]))


def _layout(suite: RetrievalSuite, paraphrase_is_answer: bool = True) -> _Layout:
    # Plain records, not pandas groupby: this runs once per call on ~1,500 rows.
    by_group: dict[str, dict[str, Any]] = {}
    for row in suite.passages.to_dict("records"):
        g = by_group.setdefault(
            str(row[constants.COL_GROUP_ID]), {"domain": str(row[constants.COL_DOMAIN]), "anchor": None, "paraphrase": None, "variants": []}
        )
        role, text = row[constants.COL_ROLE], row[constants.COL_TEXT]
        if role == constants.ROLE_VARIANT:
            g["variants"].append((str(row[constants.COL_MODE]), text))
        elif role in (constants.ROLE_ANCHOR, constants.ROLE_PARAPHRASE) and g[role] is None:
            g[role] = text
    groups = tuple(
        _Group(gid, g["domain"], g["anchor"], g["paraphrase"], tuple(g["variants"]))
        for gid, g in by_group.items()
        if g["anchor"] is not None and g["paraphrase"] is not None and g["variants"]
    )
    corpus = tuple(dict.fromkeys(suite.passages[constants.COL_TEXT]))
    index = {t: i for i, t in enumerate(corpus)}
    queries: dict[str, dict[str, str]] = {}
    for row in suite.queries.to_dict("records"):
        q = queries.setdefault(
            str(row[constants.COL_GROUP_ID]), {"domain": str(row[constants.COL_DOMAIN]), "mode": str(row[constants.COL_QUERY_MODE])}
        )
        q[row[constants.COL_WHICH]] = row[constants.COL_TEXT]
    nevir, rows = [], []
    for gid, q in queries.items():
        found = by_group.get(gid)
        variants = dict(found["variants"]) if found is not None else {}
        if found is None or found["anchor"] is None or q["mode"] not in variants or not all(w in q for w in constants.QUERY_WHICH):
            continue
        anchor, variant = found["anchor"], variants[q["mode"]]
        nevir.append(_NevirGroup(gid, q["domain"], q["mode"], q[constants.COL_Q1], q[constants.COL_Q2], anchor, variant))
        # The paraphrase says what the anchor says: it answers q1 and contradicts q2 just as the anchor does.
        same = index[found["paraphrase"]] if paraphrase_is_answer and found["paraphrase"] is not None else index[anchor]
        rows.append(
            (gid, q["domain"], q["mode"], constants.COL_Q1, q[constants.COL_Q1], (index[anchor], same), (index[variant], index[variant]))
        )
        rows.append(
            (gid, q["domain"], q["mode"], constants.COL_Q2, q[constants.COL_Q2], (index[variant], index[variant]), (index[anchor], same))
        )
    columns = [constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_QUERY_MODE, constants.COL_WHICH, constants.COL_QUERY]
    query_rows = pd.DataFrame([r[:5] for r in rows], columns=columns)
    return _Layout(
        groups,
        tuple(nevir),
        corpus,
        tuple(query_rows[constants.COL_QUERY]),
        np.array([r[5] for r in rows], dtype=int).reshape(-1, 2),
        np.array([r[6] for r in rows], dtype=int).reshape(-1, 2),
        query_rows,
    )


def _as_suite(suite_or_frames: RetrievalSuite | pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]) -> RetrievalSuite:
    if isinstance(suite_or_frames, RetrievalSuite):
        return suite_or_frames
    if isinstance(suite_or_frames, pd.DataFrame):
        return tidy_suite(suite_or_frames)
    if isinstance(suite_or_frames, tuple) and len(suite_or_frames) == 2:
        passages, queries = suite_or_frames
        for frame, columns, what in ((passages, PASSAGE_COLUMNS, "passages"), (queries, QUERY_COLUMNS, "queries")):
            missing = [c for c in columns if c not in getattr(frame, "columns", ())]
            if missing:
                raise ValueError(f"the {what} table lacks columns {missing}")
        return RetrievalSuite("custom", passages, queries)
    raise ValueError("give a RetrievalSuite, the wide retrieval table, or a (passages, queries) pair of tables")


# ------------------------------------------------------------------ scoring blocks


@dataclass
class _Blocks:
    """Score matrices of one model under one mitigation (dense cosines for ``none``)."""

    win: list[np.ndarray]  # per group: (1, 1 + n_variants): paraphrase first
    paired: list[np.ndarray]  # per NevIR group: (2, 2): [q1, q2] x [anchor, variant]
    ranking: np.ndarray  # (n_queries, n_corpus)
    seconds: float = 0.0
    n_queries: int = 0


def _dense_blocks(layout: _Layout, vectors: dict[str, np.ndarray]) -> _Blocks:
    win = [cosine_matrix(vectors, [g.anchor], [g.paraphrase, *(t for _, t in g.variants)]) for g in layout.groups]
    paired = [cosine_matrix(vectors, [n.q1, n.q2], [n.anchor, n.variant]) for n in layout.nevir]
    return _Blocks(win, paired, cosine_matrix(vectors, list(layout.queries), list(layout.corpus)))


def _rescored_blocks(layout: _Layout, dense: _Blocks, mitigation: Mitigation, model: str) -> _Blocks:
    calls: list[tuple[list[str], list[str], np.ndarray]] = []
    calls += [([g.anchor], [g.paraphrase, *(t for _, t in g.variants)], d) for g, d in zip(layout.groups, dense.win, strict=True)]
    calls += [([n.q1, n.q2], [n.anchor, n.variant], d) for n, d in zip(layout.nevir, dense.paired, strict=True)]
    if len(layout.queries):
        calls.append((list(layout.queries), list(layout.corpus), dense.ranking))
    start = time.perf_counter()
    out = [checked_scores(mitigation.rescore(q, p, d, model=model), d, mitigation.name) for q, p, d in calls]
    seconds = time.perf_counter() - start
    n_win, n_pair = len(layout.groups), len(layout.nevir)
    ranking = out[-1] if len(layout.queries) else dense.ranking
    return _Blocks(out[:n_win], out[n_win : n_win + n_pair], ranking, seconds, sum(len(q) for q, _, _ in calls))


# ------------------------------------------------------------------ rows


def _score_rows(layout: _Layout, blocks: _Blocks, dense: _Blocks, keys: dict[str, str]) -> pd.DataFrame:
    rows = []
    for g, scores, cosines in zip(layout.groups, blocks.win, dense.win, strict=True):
        s, c = scores[0], cosines[0]
        rank_para = float(target_ranks(s[None, :], np.array([0]))[0])
        var_ranks = target_ranks(np.repeat(s[None, :], len(g.variants), axis=0), np.arange(1, len(s)), ties_first=True)
        wins = adversarial_wins(np.full(len(g.variants), s[0]), s[1:])
        for j, (mode, text) in enumerate(g.variants):
            both_finite = math.isfinite(s[0]) and math.isfinite(s[j + 1])
            rows.append(
                {
                    **keys,
                    constants.COL_GROUP_ID: g.group_id,
                    constants.COL_DOMAIN: g.domain,
                    constants.COL_MODE: mode,
                    constants.COL_ANCHOR: g.anchor,
                    constants.COL_PARAPHRASE: g.paraphrase,
                    constants.COL_VARIANT: text,
                    "cosine_paraphrase": float(c[0]),
                    "cosine_variant": float(c[j + 1]),
                    constants.COL_SCORE_PARAPHRASE: float(s[0]),
                    constants.COL_SCORE_VARIANT: float(s[j + 1]),
                    "margin": float(s[j + 1] - s[0]) if both_finite else math.nan,
                    constants.COL_WIN: bool(wins[j]),
                    "rank_paraphrase": rank_para,
                    "rank_variant": float(var_ranks[j]),
                }
            )
    return pd.DataFrame(rows)


def _paired_rows(layout: _Layout, blocks: _Blocks, keys: dict[str, str]) -> pd.DataFrame:
    rows = []
    for n, s in zip(layout.nevir, blocks.paired, strict=True):
        ok = bool(paired_correct([s[0, 0]], [s[0, 1]], [s[1, 0]], [s[1, 1]])[0])
        rows.append(
            {
                **keys,
                constants.COL_GROUP_ID: n.group_id,
                constants.COL_DOMAIN: n.domain,
                constants.COL_QUERY_MODE: n.query_mode,
                constants.COL_Q1: n.q1,
                constants.COL_Q2: n.q2,
                constants.COL_ANCHOR: n.anchor,
                constants.COL_VARIANT: n.variant,
                "q1_anchor": float(s[0, 0]),
                "q1_variant": float(s[0, 1]),
                "q2_anchor": float(s[1, 0]),
                "q2_variant": float(s[1, 1]),
                "q1_right": bool(s[0, 0] > s[0, 1]),
                "q2_right": bool(s[1, 1] > s[1, 0]),
                constants.COL_PAIRED_CORRECT: ok,
            }
        )
    return pd.DataFrame(rows)


def _best_rank(scores: np.ndarray, targets: np.ndarray, *, ties_first: bool = False) -> np.ndarray:
    """Per query, the best rank among its target passages: (n_queries,) from targets (n_queries, k)."""
    return np.min([target_ranks(scores, targets[:, j], ties_first=ties_first) for j in range(targets.shape[1])], axis=0)


def _rank_rows(layout: _Layout, blocks: _Blocks, keys: dict[str, str]) -> pd.DataFrame:
    if not len(layout.queries):
        return pd.DataFrame()
    s = blocks.ranking
    right = _best_rank(s, layout.correct)
    contra = _best_rank(s, layout.contradiction, ties_first=True)
    top = s.argmax(axis=1)
    rows = layout.query_rows.assign(**keys)
    rows["score_correct"] = s[np.arange(len(s)), layout.correct[:, 0]]
    rows["score_contradiction"] = s[np.arange(len(s)), layout.contradiction[:, 0]]
    rows[constants.COL_RANK_CORRECT] = right
    rows[constants.COL_RANK_CONTRADICTION] = contra
    rows[constants.COL_TOP1_CONTRADICTION] = contra == 1
    rows["top1"] = [layout.corpus[i] for i in top]
    rows["correct"] = [layout.corpus[i] for i in layout.correct[:, 0]]
    rows["contradiction"] = [layout.corpus[i] for i in layout.contradiction[:, 0]]
    return rows[[*keys, *[c for c in rows.columns if c not in keys]]]


def _paraphrase_first(blocks: _Blocks) -> np.ndarray:
    """Per group: the paraphrase is finite and strictly above every variant."""
    return np.array([math.isfinite(s[0, 0]) and bool((s[0, 1:] < s[0, 0]).all()) for s in blocks.win], dtype=bool)


def _costs(layout: _Layout, before: _Blocks, after: _Blocks, keys: dict[str, str]) -> dict[str, Any]:
    lost_para = int((_paraphrase_first(before) & ~_paraphrase_first(after)).sum()) if layout.groups else 0
    if len(layout.queries):
        top_before = _best_rank(before.ranking, layout.correct) == 1
        top_after = _best_rank(after.ranking, layout.correct) == 1
        lost_right = int((top_before & ~top_after).sum())
    else:
        lost_right = 0
    ms = 1000.0 * after.seconds / after.n_queries if after.n_queries else 0.0
    return {
        **keys,
        constants.COL_PARAPHRASES_LOST: lost_para,
        "n_groups": len(layout.groups),
        constants.COL_CORRECT_LOST: lost_right,
        constants.COL_N_QUERIES: len(layout.queries),
        constants.COL_MS_PER_QUERY: ms,
    }


# ------------------------------------------------------------------ public API


def _empty_result(errors: dict[str, str], seconds: float) -> RetrievalResult:
    empty = pd.DataFrame
    return RetrievalResult(
        empty(columns=[constants.COL_MODEL, constants.COL_MITIGATION]),
        empty(columns=tables.WIN_RATE_COLUMNS),
        empty(),
        empty(columns=tables.PAIRED_COLUMNS),
        empty(),
        empty(columns=tables.RANKING_COLUMNS),
        empty(columns=COST_COLUMNS),
        empty(columns=tables.COMPARISON_COLUMNS),
        errors,
        {},
        seconds,
    )


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[constants.COL_MODEL, constants.COL_MITIGATION])


def run_retrieval(
    suite_or_frames: RetrievalSuite | pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame],
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    mitigations: Sequence[Mitigation] = (),
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    paraphrase_is_answer: bool = True,
) -> RetrievalResult:
    """Win rate, paired accuracy and in-corpus ranking per model, before and after each mitigation.

    Every distinct text (passages and queries) is encoded once per model,
    through ``cache``.

    Args:
        suite_or_frames: a :class:`RetrievalSuite`, the wide retrieval table,
            or a ``(passages, queries)`` pair in the suite's long layout.
        models: model names, Hugging Face ids or folders.
        cache: vector cache, or None.
        mitigations: objects with ``name`` and ``rescore`` (:class:`core.probes.retrieval.mitigations.Mitigation`);
            ``none`` (the dense cosines) always runs first.
        options: device, batch size, backend and remote-code opt-ins.
        progress: called with (fraction done, message).
        seed, n_resamples, confidence: of every bootstrap interval.
        paraphrase_is_answer: in the in-corpus ranking, a group's paraphrase
            counts as a right passage for q1 and as a contradiction for q2,
            like the anchor it restates. False ranks only the NevIR pair
            itself as right/contradicting, so a retriever that puts the
            paraphrase first is counted wrong for q1.

    Returns:
        A :class:`RetrievalResult`.

    Raises:
        ValueError: no model, a suite without any group to score, or
            mitigations without unique names.
    """
    start = time.perf_counter()
    if not models:
        raise ValueError("give at least one model")
    check_names(mitigations)
    layout = _layout(_as_suite(suite_or_frames), paraphrase_is_answer)
    if not layout.groups and not layout.nevir:
        raise ValueError("the suite has no group with an anchor, a paraphrase and a variant")
    errors: dict[str, str] = {}
    reports: dict[str, EncodeReport] = {}
    parts: dict[str, list[pd.DataFrame]] = {"scores": [], "paired": [], "ranks": []}
    costs: list[dict[str, Any]] = []
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(layout.texts(), share=0.8)
        if encoded is None:
            continue
        vectors, reports[run.label] = encoded
        dense = _dense_blocks(layout, vectors)
        for j, mitigation in enumerate([None, *mitigations]):
            label = constants.MITIGATION_NONE if mitigation is None else mitigation.name
            run.note(0.8 + 0.2 * j / (len(mitigations) + 1), f"{run.label}: {label}")
            if mitigation is None:
                blocks = dense
            else:
                try:
                    blocks = _rescored_blocks(layout, dense, mitigation, run.label)
                except Exception as exc:  # noqa: BLE001 - a mitigation may raise anything; the others must still run
                    record_failure(errors, run.label, label, exc)
                    continue
            keys = {constants.COL_MODEL: run.label, constants.COL_MITIGATION: label}
            parts["scores"].append(_score_rows(layout, blocks, dense, keys))
            parts["paired"].append(_paired_rows(layout, blocks, keys))
            parts["ranks"].append(_rank_rows(layout, blocks, keys))
            costs.append(_costs(layout, dense, blocks, keys))
    if not costs:
        return _empty_result(errors, time.perf_counter() - start)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    scores, paired_groups, ranks = (_concat(parts[k]) for k in ("scores", "paired", "ranks"))
    if not scores.empty:
        scores[constants.COL_VARIANT_SOURCE] = variant_sources(scores[constants.COL_ANCHOR], scores[constants.COL_VARIANT])
    return RetrievalResult(
        scores=scores,
        win_rates=tables.win_rate_table(scores, **boot) if not scores.empty else pd.DataFrame(columns=tables.WIN_RATE_COLUMNS),
        paired_groups=paired_groups,
        paired=tables.paired_table(paired_groups, **boot)
        if constants.COL_PAIRED_CORRECT in paired_groups
        else pd.DataFrame(columns=tables.PAIRED_COLUMNS),
        ranks=ranks,
        ranking=tables.ranking_table(ranks) if constants.COL_RANK_CORRECT in ranks else pd.DataFrame(columns=tables.RANKING_COLUMNS),
        costs=pd.DataFrame(costs, columns=COST_COLUMNS),
        comparisons=tables.comparison_table(scores, **boot) if not scores.empty else pd.DataFrame(columns=tables.COMPARISON_COLUMNS),
        errors=errors,
        reports=reports,
        seconds=time.perf_counter() - start,
        by_source=tables.source_table(scores, **boot) if not scores.empty else pd.DataFrame(columns=tables.SOURCE_COLUMNS),
    )
