"""Run the retrieval probes: encode once per model, score, rescore with each mitigation, tabulate.

Three views of one suite, each before (``none``) and after every mitigation:

* adversarial win rate: per group, the anchor is the query and the passages
  are its paraphrase and every variant; a variant wins when it outranks the
  paraphrase;
* NevIR paired accuracy: queries ``[q1, q2]`` against ``[anchor, variant]``;
* in-corpus ranking: every query against every passage of the suite.

Corpus mode (:func:`run_corpus_probe`) takes a user's corpus and queries,
adds the adversarial variants of each query's top passage, and counts how
often a variant outranks it.

A mitigation is any object with a ``name`` and
``rescore(queries, passages, dense, *, model) -> scores`` (the protocol of
``core.probes.retrieval.mitigations``): ``dense`` is the
``(n_queries, n_passages)`` cosine matrix, the result has the same shape,
higher ranks higher and ``-inf`` filters a passage out.  A model that fails
to load or encode, or a mitigation that fails on one model, is reported in
``errors``; the rest still run.
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
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, first_line, model_runs
from core.probes.retrieval import tables
from core.probes.retrieval.metrics import adversarial_wins, paired_correct, rate_with_ci, target_ranks
from core.probes.retrieval.origin import variant_sources
from core.probes.retrieval.suite import PASSAGE_COLUMNS, QUERY_COLUMNS, RetrievalSuite, tidy_suite

if TYPE_CHECKING:  # for the hints only: the run takes any object with the protocol's name and rescore
    from core.probes.retrieval.mitigations import Mitigation


COST_COLUMNS = [
    constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_PARAPHRASES_LOST, "n_groups",
    constants.COL_CORRECT_LOST, constants.COL_N_QUERIES, constants.COL_MS_PER_QUERY,
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
        return tables.summary_table(self.win_rates, self.paired, self.ranking, self.costs)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name (for CSV export)."""
        return {
            "scores": self.scores, "win_rates": self.win_rates, "paired_groups": self.paired_groups, "paired_accuracy": self.paired,
            "ranks": self.ranks, "ranking": self.ranking, "costs": self.costs, "comparisons": self.comparisons, "summary": self.summary(),
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
        g = by_group.setdefault(str(row[constants.COL_GROUP_ID]), {"domain": str(row[constants.COL_DOMAIN]), "anchor": None, "paraphrase": None, "variants": []})
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
        q = queries.setdefault(str(row[constants.COL_GROUP_ID]), {"domain": str(row[constants.COL_DOMAIN]), "mode": str(row[constants.COL_QUERY_MODE])})
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
        rows.append((gid, q["domain"], q["mode"], constants.COL_Q1, q[constants.COL_Q1], (index[anchor], same), (index[variant], index[variant])))
        rows.append((gid, q["domain"], q["mode"], constants.COL_Q2, q[constants.COL_Q2], (index[variant], index[variant]), (index[anchor], same)))
    columns = [constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_QUERY_MODE, constants.COL_WHICH, constants.COL_QUERY]
    query_rows = pd.DataFrame([r[:5] for r in rows], columns=columns)
    return _Layout(
        groups, tuple(nevir), corpus, tuple(query_rows[constants.COL_QUERY]),
        np.array([r[5] for r in rows], dtype=int).reshape(-1, 2), np.array([r[6] for r in rows], dtype=int).reshape(-1, 2), query_rows,
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


def _cos(vectors: dict[str, np.ndarray], queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    if not queries or not passages:
        return np.zeros((len(queries), len(passages)))
    q = embedding_matrix(vectors, list(queries)).astype(np.float64)
    p = embedding_matrix(vectors, list(passages)).astype(np.float64)
    # Vectors are unit length, so the dot product is the cosine.
    return np.clip(q @ p.T, -1.0, 1.0)


def _dense_blocks(layout: _Layout, vectors: dict[str, np.ndarray]) -> _Blocks:
    win = [_cos(vectors, [g.anchor], [g.paraphrase, *(t for _, t in g.variants)]) for g in layout.groups]
    paired = [_cos(vectors, [n.q1, n.q2], [n.anchor, n.variant]) for n in layout.nevir]
    return _Blocks(win, paired, _cos(vectors, list(layout.queries), list(layout.corpus)))


def _checked(out: Any, dense: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(out, dtype=float)
    if arr.shape != dense.shape:
        raise ValueError(f"{name}.rescore returned shape {arr.shape}, expected {dense.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name}.rescore returned NaN")
    return arr


def _rescored_blocks(layout: _Layout, dense: _Blocks, mitigation: Mitigation, model: str) -> _Blocks:
    calls: list[tuple[list[str], list[str], np.ndarray]] = []
    calls += [([g.anchor], [g.paraphrase, *(t for _, t in g.variants)], d) for g, d in zip(layout.groups, dense.win, strict=True)]
    calls += [([n.q1, n.q2], [n.anchor, n.variant], d) for n, d in zip(layout.nevir, dense.paired, strict=True)]
    if len(layout.queries):
        calls.append((list(layout.queries), list(layout.corpus), dense.ranking))
    start = time.perf_counter()
    out = [_checked(mitigation.rescore(q, p, d, model=model), d, mitigation.name) for q, p, d in calls]
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
                    **keys, constants.COL_GROUP_ID: g.group_id, constants.COL_DOMAIN: g.domain, constants.COL_MODE: mode,
                    constants.COL_ANCHOR: g.anchor, constants.COL_PARAPHRASE: g.paraphrase, constants.COL_VARIANT: text,
                    "cosine_paraphrase": float(c[0]), "cosine_variant": float(c[j + 1]),
                    constants.COL_SCORE_PARAPHRASE: float(s[0]), constants.COL_SCORE_VARIANT: float(s[j + 1]),
                    "margin": float(s[j + 1] - s[0]) if both_finite else math.nan,
                    constants.COL_WIN: bool(wins[j]), "rank_paraphrase": rank_para, "rank_variant": float(var_ranks[j]),
                }
            )
    return pd.DataFrame(rows)


def _paired_rows(layout: _Layout, blocks: _Blocks, keys: dict[str, str]) -> pd.DataFrame:
    rows = []
    for n, s in zip(layout.nevir, blocks.paired, strict=True):
        ok = bool(paired_correct([s[0, 0]], [s[0, 1]], [s[1, 0]], [s[1, 1]])[0])
        rows.append(
            {
                **keys, constants.COL_GROUP_ID: n.group_id, constants.COL_DOMAIN: n.domain, constants.COL_QUERY_MODE: n.query_mode,
                constants.COL_Q1: n.q1, constants.COL_Q2: n.q2, constants.COL_ANCHOR: n.anchor, constants.COL_VARIANT: n.variant,
                "q1_anchor": float(s[0, 0]), "q1_variant": float(s[0, 1]), "q2_anchor": float(s[1, 0]), "q2_variant": float(s[1, 1]),
                "q1_right": bool(s[0, 0] > s[0, 1]), "q2_right": bool(s[1, 1] > s[1, 0]), constants.COL_PAIRED_CORRECT: ok,
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
        **keys, constants.COL_PARAPHRASES_LOST: lost_para, "n_groups": len(layout.groups), constants.COL_CORRECT_LOST: lost_right,
        constants.COL_N_QUERIES: len(layout.queries), constants.COL_MS_PER_QUERY: ms,
    }


# ------------------------------------------------------------------ public API


def _mitigation_failed(errors: dict[str, str], model: str, mitigation: str, exc: BaseException) -> None:
    """Record a mitigation that failed on one model; the others, and the other models, still run."""
    errors[f"{model} + {mitigation}"] = f"{model} + {mitigation}: {first_line(exc)}"


def _mitigation_names(mitigations: Sequence[Mitigation]) -> None:
    names = [getattr(m, "name", None) for m in mitigations]
    if any(not isinstance(n, str) or not n for n in names):
        raise ValueError("every mitigation needs a non-empty name")
    if constants.MITIGATION_NONE in names or len(set(names)) < len(names):
        raise ValueError(f"mitigation names must be unique and not {constants.MITIGATION_NONE!r}: {names}")


def _empty_result(errors: dict[str, str], seconds: float) -> RetrievalResult:
    empty = pd.DataFrame
    return RetrievalResult(
        empty(columns=[constants.COL_MODEL, constants.COL_MITIGATION]), empty(columns=tables.WIN_RATE_COLUMNS), empty(), empty(columns=tables.PAIRED_COLUMNS),
        empty(), empty(columns=tables.RANKING_COLUMNS), empty(columns=COST_COLUMNS), empty(columns=tables.COMPARISON_COLUMNS), errors, {}, seconds,
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
        mitigations: objects with ``name`` and ``rescore`` (module docstring);
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
    _mitigation_names(mitigations)
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
                    _mitigation_failed(errors, run.label, label, exc)
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
        paired=tables.paired_table(paired_groups, **boot) if constants.COL_PAIRED_CORRECT in paired_groups else pd.DataFrame(columns=tables.PAIRED_COLUMNS),
        ranks=ranks,
        ranking=tables.ranking_table(ranks) if constants.COL_RANK_CORRECT in ranks else pd.DataFrame(columns=tables.RANKING_COLUMNS),
        costs=pd.DataFrame(costs, columns=COST_COLUMNS),
        comparisons=tables.comparison_table(scores, **boot) if not scores.empty else pd.DataFrame(columns=tables.COMPARISON_COLUMNS),
        errors=errors,
        reports=reports,
        seconds=time.perf_counter() - start,
        by_source=tables.source_table(scores, **boot) if not scores.empty else pd.DataFrame(columns=tables.SOURCE_COLUMNS),
    )


# ------------------------------------------------------------------ corpus mode


CORPUS_RATE_COLUMNS = [constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_MODE, constants.COL_N, "outranked", "rate", constants.COL_CI_LOW, constants.COL_CI_HIGH]


@dataclass
class CorpusResult:
    """What corpus mode found.

    Attributes:
        pairs: one row per model, mitigation, query and variant of the query's
            top passage: query, original, mode, rule, variant, score_original,
            score_variant, outranks, rank_original (its rank in the corpus with
            the variants added).
        rates: model, mitigation, mode (and ``all``), n, outranked, rate,
            ci_low, ci_high (queries resampled as clusters).
        no_variant: model -> queries whose top passage no perturbation rule applies to (every model that ranked the corpus).
        errors: model (or ``model + mitigation``) -> one-line reason.
        seconds: wall time.
    """

    pairs: pd.DataFrame
    rates: pd.DataFrame
    no_variant: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def models(self) -> list[str]:
        """Models that ranked the corpus, including those for which no rule made a variant (their ``no_variant`` says why)."""
        scored = list(self.pairs[constants.COL_MODEL]) if not self.pairs.empty else []
        return list(dict.fromkeys([*scored, *self.no_variant]))


def _variants_of(passages: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
    """passage -> [(mode, rule, variant text)] from the perturbation rules."""
    from core.probes.perturb import perturb

    out: dict[str, list] = {}
    for text in dict.fromkeys(passages):
        try:
            report = perturb(text)
        except ValueError:
            out[text] = []
            continue
        out[text] = [(v.mode, v.rule, v.text) for v in report.variants]
    return out


def _corpus_rows(queries: Sequence[str], corpus: list[str], top: np.ndarray, variants: dict, scores: np.ndarray, keys: dict[str, str]) -> list[dict]:
    index = {t: i for i, t in enumerate(corpus)}
    rows = []
    for qi, query in enumerate(queries):
        original = corpus[top[qi]]
        rank = float(target_ranks(scores[qi : qi + 1], np.array([top[qi]]))[0])
        for mode, rule, text in variants[original]:
            s_orig, s_var = scores[qi, top[qi]], scores[qi, index[text]]
            rows.append(
                {
                    **keys, constants.COL_QUERY: query, "original": original, constants.COL_MODE: mode, constants.COL_RULE: rule,
                    constants.COL_VARIANT: text, "score_original": float(s_orig), "score_variant": float(s_var),
                    constants.COL_OUTRANKS: bool(s_var > s_orig), "rank_original": rank,
                }
            )
    return rows


def _corpus_rates(pairs: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    rows = []
    for (model, mitigation), frame in pairs.groupby([constants.COL_MODEL, constants.COL_MITIGATION], sort=False):
        present = set(frame[constants.COL_MODE])
        for mode in [*(m for m in constants.ADVERSARIAL_CATEGORIES if m in present), constants.MODE_ALL]:
            part = frame if mode == constants.MODE_ALL else frame[frame[constants.COL_MODE] == mode]
            rate, low, high = rate_with_ci(part[constants.COL_OUTRANKS].to_numpy(bool), part[constants.COL_QUERY].to_numpy(), **bootstrap)
            rows.append((model, mitigation, mode, len(part), int(part[constants.COL_OUTRANKS].sum()), rate, low, high))
    return pd.DataFrame(rows, columns=CORPUS_RATE_COLUMNS)


def run_corpus_probe(
    corpus: Sequence[str],
    queries: Sequence[str],
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    mitigations: Sequence[Mitigation] = (),
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
) -> CorpusResult:
    """Does an adversarial variant of a query's top passage outrank it?

    For each model: rank the corpus for every query by cosine, take each
    query's top passage, generate its variants with
    :func:`core.probes.perturb.perturb`, add them to the corpus and score
    again (then rescore with each mitigation).  The top passage is chosen by
    the dense model, so every mitigation is asked about the same passages.

    Args:
        corpus: passages, shape ``(n_passages,)``; repeats are dropped.
        queries: queries, shape ``(n_queries,)``; repeats are dropped.
        models: model names, Hugging Face ids or folders.
        cache: vector cache, or None.
        mitigations: as for :func:`run_retrieval`.
        options: device, batch size, backend and remote-code opt-ins.
        progress: called with (fraction done, message).
        seed, n_resamples, confidence: of the bootstrap intervals.

    Returns:
        A :class:`CorpusResult`.

    Raises:
        ValueError: an empty corpus or query list, a non-string text, no
            model, or mitigations without unique names.
    """
    start = time.perf_counter()
    for label, texts in (("corpus", corpus), ("queries", queries)):
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"{label} must be a sequence of strings")
    corpus = list(dict.fromkeys(t for t in corpus if t.strip()))
    queries = list(dict.fromkeys(t for t in queries if t.strip()))
    if not corpus:
        raise ValueError("the corpus is empty; give at least one passage")
    if not queries:
        raise ValueError("there is no query; give at least one")
    if not models:
        raise ValueError("give at least one model")
    _mitigation_names(mitigations)
    errors: dict[str, str] = {}
    rows: list[dict] = []
    no_variant: dict[str, int] = {}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode([*corpus, *queries], share=0.6)
        if encoded is None:
            continue
        vectors, _report = encoded
        top = _cos(vectors, queries, corpus).argmax(axis=1)
        variants = _variants_of([corpus[t] for t in top])
        extended = list(dict.fromkeys([*corpus, *(v for vs in variants.values() for _, _, v in vs)]))
        if len(extended) > len(corpus):
            more = run.encode(extended[len(corpus) :], share=0.8)
            if more is None:
                continue
            vectors.update(more[0])
        # Set once the model has scored everything: a model here ran, even when no rule made a variant.
        no_variant[run.label] = sum(1 for t in top if not variants[corpus[t]])
        dense = _cos(vectors, queries, extended)
        for mitigation in [None, *mitigations]:
            label = constants.MITIGATION_NONE if mitigation is None else mitigation.name
            try:
                scores = dense if mitigation is None else _checked(mitigation.rescore(queries, extended, dense, model=run.label), dense, label)
            except Exception as exc:  # noqa: BLE001 - a mitigation may raise anything; the others must still run
                _mitigation_failed(errors, run.label, label, exc)
                continue
            rows += _corpus_rows(queries, extended, top, variants, scores, {constants.COL_MODEL: run.label, constants.COL_MITIGATION: label})
    pairs = pd.DataFrame(rows)
    rates = _corpus_rates(pairs, n_resamples=n_resamples, confidence=confidence, seed=seed) if rows else pd.DataFrame(columns=CORPUS_RATE_COLUMNS)
    return CorpusResult(pairs, rates, no_variant, errors, time.perf_counter() - start)
