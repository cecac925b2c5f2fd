"""BEIR probe: recall@k, MRR@10 and nDCG@10 from the user's own relevance judgements, the corpus streamed in chunks.

For each model, the judged queries are encoded once; the corpus is read
``chunk_rows`` passages at a time (:meth:`core.files.beir.BeirFolder.corpus_chunks`),
encoded through the embedding cache (whose memory is emptied after each
chunk), scored against every query, and merged into each query's running
top ``depth`` passages.  Only ``(n_queries, depth + chunk_rows)`` scores are
held at once, so a corpus larger than memory runs.  Exact ties (a passage
text that occurs twice scores twice alike) are broken as trec_eval breaks
them, by passage id in descending string order
(:func:`core.probes.retrieval.metrics.rank_order`), so every figure equals
``pytrec_eval``'s on the same scores; ``tied_queries`` counts the queries
whose figures that rule decided (a run of ties reaching into the top 10 that
mixes relevant and other passages, seen over each query's top 20).  recall@k
is the share of a query's relevant passages in its top k.

With ``variants=True`` the perturbation rules (:func:`core.probes.perturb.perturb`)
make contradicting variants of each judged relevant passage, and the run
reports how often a variant outranks the passage it contradicts, per mode,
with 95% bootstrap intervals (queries resampled as clusters).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from core import constants
from core.files.beir import CORPUS_FILE, BeirFolder
from core.files.errors import PairsFileError
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, ProgressFn, model_runs
from core.probes.retrieval.corpus import CORPUS_RATE_COLUMNS, corpus_rates, variants_of
from core.probes.retrieval.metrics import flips, id_places, judged_figures, rank_order
from core.probes.retrieval.records import ranked_settings
from core.probes.retrieval.rescoring import check_names, checked_scores, record_failure
from core.scoring.result import HistoryRecord
from core.stats.similarity import cos_sim, pairwise_cos_sim

if TYPE_CHECKING:
    from core.probes.retrieval.mitigations import Mitigation

# A mitigation rescores the whole corpus at once (held in memory as float32: 50,000 x 768 is about 150 MB).
MAX_MITIGATED_PASSAGES = 50_000
# Queries rescored at a time under a mitigation: bounds the (queries x passages) block.
_QUERY_BLOCK = 256
RANKING_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_MITIGATION,
    constants.COL_N_QUERIES,
    constants.COL_N_PASSAGES,
    *constants.COL_IR_RECALL_AT.values(),
    constants.COL_MRR_AT,
    constants.COL_NDCG_AT,
    constants.COL_TIED_QUERIES,
]


@dataclass
class BeirResult:
    """What the BEIR probe found.

    Attributes:
        ranks: one row per model, mitigation and query: query_id, query, the per-query
            figures, top1_id, top1 (text), top1_score (its cosine), and a relevant passage beside it: relevant_id,
            relevant (text), relevant_rank (1-based; NaN when no relevant passage is among the top 20 kept).
        ranking: model, mitigation, n_queries, n_passages, recall_at_1/5/10, mrr_at_10, ndcg_at_10,
            tied_queries (queries whose figures the tie rule decided; ``tie_decided`` per query in ``ranks``).
        variant_pairs: with ``variants``: one row per model, query, relevant
            passage and variant: query, original, mode, rule, variant,
            score_original, score_variant, outranks.
        variant_rates: model, mitigation (``none``), mode (and ``all``), n,
            outranked, rate, ci_low, ci_high.
        errors: model -> one-line reason it produced nothing.
        reports: model -> encoding report of its last chunk.
        seconds: wall time.
    """

    ranks: pd.DataFrame
    ranking: pd.DataFrame
    variant_pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    variant_rates: pd.DataFrame = field(default_factory=pd.DataFrame)
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.ranking[constants.COL_MODEL])) if not self.ranking.empty else []

    @property
    def mitigations(self) -> list[str]:
        return list(dict.fromkeys(self.ranking[constants.COL_MITIGATION])) if not self.ranking.empty else []

    def demoted(self, mitigation: str) -> pd.DataFrame:
        """The queries whose best judged-relevant passage ``mitigation`` moved down (or out of the top 20) against the plain cosine.

        The contradiction guard, for one, penalises a relevant passage whose polarity differs from the query's
        ("Is aspirin recommended...?" answered by "Aspirin is not recommended..."): this is where a reader sees it.

        Returns:
            model, query_id, query, relevant, rank_before, rank_after (NaN: beyond the top 20), one row per such query;
            empty when the mitigation did not run.
        """
        columns = [constants.COL_MODEL, "query_id", constants.COL_QUERY, "relevant", "rank_before", "rank_after"]
        r = self.ranks
        if r.empty or "relevant_rank" not in r.columns or mitigation not in set(r[constants.COL_MITIGATION]):
            return pd.DataFrame(columns=columns)
        keys = [constants.COL_MODEL, "query_id"]
        before = r[r[constants.COL_MITIGATION] == constants.MITIGATION_NONE][[*keys, constants.COL_QUERY, "relevant", "relevant_rank"]]
        after = r[r[constants.COL_MITIGATION] == mitigation][[*keys, "relevant_rank"]]
        both = before.merge(after, on=keys, suffixes=("_before", "_after"))
        was, now = both["relevant_rank_before"], both["relevant_rank_after"]
        down = (was.notna() & (now.isna() | (now > was).fillna(False))).astype(bool)
        out = both[down].rename(columns={"relevant_rank_before": "rank_before", "relevant_rank_after": "rank_after"})
        return out[columns].reset_index(drop=True)

    def summary(self) -> pd.DataFrame:
        """One row per model and mitigation: the ranking figures, recall@1 with the queries each mitigation gained and lost beside it."""
        if self.ranking.empty:
            return self.ranking.assign(recall_gained=pd.Series(dtype=float), recall_lost=pd.Series(dtype=float))
        r = self.ranks
        first = r[constants.COL_IR_RECALL_AT[1]] > 0
        rows = []
        for model, mitigation in zip(self.ranking[constants.COL_MODEL], self.ranking[constants.COL_MITIGATION], strict=True):
            base = first[(r[constants.COL_MODEL] == model) & (r[constants.COL_MITIGATION] == constants.MITIGATION_NONE)].to_numpy()
            mine = first[(r[constants.COL_MODEL] == model) & (r[constants.COL_MITIGATION] == mitigation)].to_numpy()
            rows.append((model, mitigation, *flips(base, mine)))
        churn = pd.DataFrame(rows, columns=[constants.COL_MODEL, constants.COL_MITIGATION, "recall_gained", "recall_lost"])
        table = self.ranking.merge(churn, on=[constants.COL_MODEL, constants.COL_MITIGATION], how="left")
        at = list(table.columns).index(constants.COL_IR_RECALL_AT[1]) + 1
        order = [c for c in table.columns if c not in ("recall_gained", "recall_lost")]
        return table[[*order[:at], "recall_gained", "recall_lost", *order[at:]]]

    def history_record(self, name: str) -> HistoryRecord:
        """The pairs of :meth:`history_pairs`, the summary and the backends."""
        return HistoryRecord(self.history_pairs(name), ranked_settings(self.reports, self.summary()))

    def history_pairs(self, name: str) -> pd.DataFrame:
        """The run as tidy pair results for the run history (:meth:`history_record`).

        Per model and judged query: the query vs the passage it ranked first (category ``positive`` when that
        passage is judged relevant, ``hard_negative`` when an unjudged one outranked every relevant passage),
        its per-query recall/MRR/nDCG beside it; with variants, the query vs each rule-made contradiction of a
        relevant passage (category = its mode), ``outranks`` and the passage's own score beside it.
        """
        columns = list(constants.RESULT_COLUMNS)
        r = self.ranks
        if r.empty or constants.COL_QUERY not in r.columns:
            return pd.DataFrame(columns=columns)
        r = r[
            r[constants.COL_MITIGATION] == constants.MITIGATION_NONE
        ]  # the model's own top passages; a mitigation's figures stay in the summary
        figures = [c for c in (*constants.COL_IR_RECALL_AT.values(), constants.COL_MRR_AT, constants.COL_NDCG_AT) if c in r.columns]
        # MRR@10 is 1 exactly when the top passage is relevant (the reciprocal rank of the first relevant one).
        relevant = r[constants.COL_MRR_AT] >= 1.0
        tops = pd.DataFrame(
            {
                constants.COL_MODEL: r[constants.COL_MODEL],
                constants.COL_SUITE: name,
                constants.COL_CATEGORY: relevant.map({True: constants.CAT_POSITIVE, False: "hard_negative"}),
                constants.COL_PAIR_ID: "q-" + r["query_id"].astype(str) + "/top1",
                constants.COL_TEXT_A: r[constants.COL_QUERY],
                constants.COL_TEXT_B: r["top1"],
                constants.COL_COSINE: r["top1_score"].astype(float),
                **{c: r[c] for c in figures},
            }
        )
        v = self.variant_pairs
        if v.empty:
            return tops
        qid = r.drop_duplicates([constants.COL_MODEL, constants.COL_QUERY]).set_index([constants.COL_MODEL, constants.COL_QUERY])[
            "query_id"
        ]
        ids = pd.Series(list(zip(v[constants.COL_MODEL], v[constants.COL_QUERY], strict=True)), index=v.index).map(qid).astype(str)
        # A query's variants come in a fixed order (its relevant passages, then the rules), so the n-th pairs up across runs.
        nth = v.groupby([constants.COL_MODEL, constants.COL_QUERY], sort=False).cumcount().astype(str)
        variants = pd.DataFrame(
            {
                constants.COL_MODEL: v[constants.COL_MODEL],
                constants.COL_SUITE: name,
                constants.COL_CATEGORY: v[constants.COL_MODE],
                constants.COL_PAIR_ID: "q-" + ids + "/variant-" + nth + "/" + v[constants.COL_RULE].astype(str),
                constants.COL_TEXT_A: v[constants.COL_QUERY],
                constants.COL_TEXT_B: v[constants.COL_VARIANT],
                constants.COL_COSINE: v["score_variant"].astype(float),
                "score_original": v["score_original"],
                constants.COL_OUTRANKS: v[constants.COL_OUTRANKS],
            }
        )
        return pd.concat([tops, variants], ignore_index=True)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table by name (for CSV export)."""
        frames = {"beir_ranks": self.ranks, "beir_ranking": self.ranking}
        if not self.variant_pairs.empty:
            frames.update({"beir_variant_pairs": self.variant_pairs, "beir_variant_rates": self.variant_rates})
        return frames


@dataclass
class _TopK:
    """Each query's best ``depth`` passages so far: scores, gains and passage texts and ids."""

    scores: np.ndarray  # (n_queries, <= depth)
    gains: np.ndarray  # (n_queries, <= depth)
    ids: np.ndarray  # (n_queries, <= depth) object: passage ids
    texts: np.ndarray  # (n_queries, <= depth) object

    def merge(self, scores: np.ndarray, gains: np.ndarray, ids: list[str], texts: list[str], depth: int) -> _TopK:
        n = scores.shape[0]
        all_scores = np.concatenate([self.scores, scores], axis=1)
        all_gains = np.concatenate([self.gains, gains], axis=1)
        all_ids = np.concatenate([self.ids, np.broadcast_to(np.array(ids, dtype=object), (n, len(ids)))], axis=1)
        all_texts = np.concatenate([self.texts, np.broadcast_to(np.array(texts, dtype=object), (n, len(texts)))], axis=1)
        kept, fresh = id_places(self.ids, ids)
        order = rank_order(all_scores, np.concatenate([kept, np.broadcast_to(fresh, (n, len(ids)))], axis=1))[:, :depth]
        take = lambda a: np.take_along_axis(a, order, axis=1)  # noqa: E731 - four arrays, one indexing
        return _TopK(take(all_scores), take(all_gains), take(all_ids), take(all_texts))


def _gains(qrels: list[dict[str, int]], ids: list[str]) -> np.ndarray:
    column = {d: j for j, d in enumerate(ids)}
    out = np.zeros((len(qrels), len(ids)))
    for i, judged in enumerate(qrels):
        for doc, rel in judged.items():
            j = column.get(doc)
            if j is not None:
                out[i, j] = rel
    return out


def _relevant_columns(top: _TopK, qrels: list[dict[str, int]], judged_texts: Mapping[str, str]) -> dict[str, Any]:
    """Each query's relevant passage beside its top one: the judged-relevant passage ranked highest (its 1-based rank), else
    the most relevant judged passage with no rank (it is not among the passages kept per query)."""
    ids, texts, ranks = [], [], []
    for i, judged in enumerate(qrels):
        found = np.flatnonzero(top.gains[i] > 0)
        if found.size:
            ids.append(str(top.ids[i, found[0]]))
            texts.append(str(top.texts[i, found[0]]))
            ranks.append(float(found[0] + 1))
            continue
        best = max((d for d, rel in judged.items() if rel > 0 and d in judged_texts), key=lambda d: judged[d], default=None)
        ids.append(best or "")
        texts.append(judged_texts.get(best, "") if best is not None else "")
        ranks.append(float("nan"))
    # A rank is a whole number; none (not among the top kept) is missing, not NaN shown as "nan".
    return {"relevant_id": ids, "relevant": texts, "relevant_rank": pd.array([None if r != r else int(r) for r in ranks], dtype="Int64")}


def _tabulate(
    top: _TopK,
    keys: dict[str, str],
    folder: BeirFolder,
    qids: list[str],
    qrels: list[dict[str, int]],
    n_passages: int,
    ranks: list[pd.DataFrame],
    rows: list[dict],
    judged_texts: Mapping[str, str],
) -> None:
    """Append one model and mitigation's per-query rows to ``ranks`` and its ranking row to ``rows``."""
    figures = judged_figures(top.scores, top.gains, [np.array(list(q.values()), dtype=float) for q in qrels])
    retrieved = np.isfinite(top.scores[:, 0])
    ranks.append(
        pd.DataFrame(
            {
                **keys,
                "query_id": qids,
                constants.COL_QUERY: [folder.queries[q] for q in qids],
                **figures,
                "top1_id": np.where(retrieved, top.ids[:, 0], ""),
                "top1": np.where(retrieved, top.texts[:, 0], ""),
                "top1_score": top.scores[:, 0],
                **_relevant_columns(top, qrels, judged_texts),
            }
        )
    )
    tied = int(figures.pop(constants.COL_TIE_DECIDED).sum())
    means = {k: float(v.mean()) for k, v in figures.items()}
    rows.append(
        {**keys, constants.COL_N_QUERIES: len(qids), constants.COL_N_PASSAGES: n_passages, **means, constants.COL_TIED_QUERIES: tied}
    )


def _mitigated_top(
    mitigation: Mitigation,
    model: str,
    texts: list[str],
    queries: np.ndarray,
    qrels: list[dict[str, int]],
    held: list[tuple[list[str], list[str], np.ndarray]],
    depth: int,
) -> _TopK:
    """Each query's best ``depth`` passages after ``mitigation`` rescored the whole corpus (held in memory), queries in blocks."""
    ids = [d for chunk_ids, _, _ in held for d in chunk_ids]
    passages = [t for _, chunk_texts, _ in held for t in chunk_texts]
    matrix = np.concatenate([m for _, _, m in held]).astype(np.float64) if held else np.empty((0, queries.shape[1]))
    parts = []
    for start in range(0, len(texts), _QUERY_BLOCK):
        stop = min(start + _QUERY_BLOCK, len(texts))
        dense = cos_sim(queries[start:stop], matrix) if len(matrix) else np.empty((stop - start, 0))
        scores = checked_scores(mitigation.rescore(texts[start:stop], passages, dense, model=model), dense, mitigation.name)
        empty = np.empty((stop - start, 0))
        parts.append(
            _TopK(empty, empty, empty.astype(object), empty.astype(object)).merge(
                scores, _gains(qrels[start:stop], ids), ids, passages, depth
            )
        )
    return _TopK(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("scores", "gains", "ids", "texts")))


def _rank_chunks(
    run: ModelRun,
    folder: BeirFolder,
    queries: np.ndarray,
    qrels: list[dict[str, int]],
    judged: set[str],
    chunk_rows: int,
    depth: int,
    cache: EmbeddingCache | None,
    reports: dict[str, EncodeReport],
    *,
    hold: bool,
) -> tuple[_TopK, int, dict[str, str], list[tuple[list[str], list[str], np.ndarray]]] | None:
    """Encode and score the corpus a chunk at a time, so memory holds one chunk's vectors and each query's top ``depth``.

    Args:
        queries: (q, d) query vectors, float64.
        hold: keep every chunk's vectors (up to :data:`MAX_MITIGATED_PASSAGES` passages) for the mitigations.

    Returns:
        The top passages per query, the passages ranked, the judged passages' texts by id and the held chunks
        (ids, texts, (n, d) vectors); None when the model failed (its error is recorded by ``run``).
    """
    empty = np.empty((len(queries), 0))
    top = _TopK(empty, empty, empty.astype(object), empty.astype(object))
    n_passages, relevant = 0, {}
    held: list[tuple[list[str], list[str], np.ndarray]] = []  # (ids, texts, vectors) per chunk, for the mitigations
    for chunk in folder.corpus_chunks(chunk_rows):
        # A passage with neither title nor text cannot be embedded; it cannot be retrieved either.
        keep = [j for j, t in enumerate(chunk.texts) if t]
        ids, texts = [chunk.ids[j] for j in keep], [chunk.texts[j] for j in keep]
        if not ids:
            continue
        got = run.encode(texts, share=None)
        if got is None:
            return None
        vectors, reports[run.label] = got
        # Judged passages' texts are kept (a few per query): the per-query table shows a relevant one beside the top one.
        relevant.update({d: t for d, t in zip(ids, texts, strict=True) if d in judged})
        matrix = embedding_matrix(vectors, texts)
        if hold and n_passages + len(ids) <= MAX_MITIGATED_PASSAGES:
            held.append((ids, texts, matrix))
        scores = cos_sim(queries, matrix)
        top = top.merge(scores, _gains(qrels, ids), ids, texts, depth)
        n_passages += len(ids)
        if cache is not None:
            cache.clear_memory()
        run.note(chunk.fraction, f"{run.label}: ranked {n_passages:,} passages")
    return top, n_passages, relevant, held


def _apply_mitigation(
    mitigation: Mitigation,
    run: ModelRun,
    folder: BeirFolder,
    qids: list[str],
    qrels: list[dict[str, int]],
    queries: np.ndarray,
    held: list[tuple[list[str], list[str], np.ndarray]],
    depth: int,
    n_passages: int,
    ranks: list[pd.DataFrame],
    rows: list[dict],
    relevant: dict[str, str],
    errors: dict[str, str],
) -> None:
    """Rescore the whole corpus with one mitigation and tabulate it; a failure goes to ``errors`` so the others still run."""
    keys = {constants.COL_MODEL: run.label, constants.COL_MITIGATION: mitigation.name}
    if n_passages > MAX_MITIGATED_PASSAGES:
        errors[f"{run.label} + {mitigation.name}"] = (
            f"{run.label} + {mitigation.name}: not applied: the corpus has {n_passages:,} passages, more than the "
            f"{MAX_MITIGATED_PASSAGES:,} a mitigation rescores at once"
        )
        return
    run.note(1.0, f"{run.label}: {mitigation.name}")
    try:
        mitigated = _mitigated_top(mitigation, run.label, [folder.queries[q] for q in qids], queries, qrels, held, depth)
    except Exception as exc:  # noqa: BLE001 - a mitigation may raise anything; the others must still run
        record_failure(errors, run.label, mitigation.name, exc)
        return
    _tabulate(mitigated, keys, folder, qids, qrels, n_passages, ranks, rows, relevant)


def run_beir(
    folder: BeirFolder,
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    chunk_rows: int = 2048,
    variants: bool = False,
    mitigations: Sequence[Mitigation] = (),
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
) -> BeirResult:
    """Rank a BEIR corpus for its judged queries, per model (module docstring).

    Args:
        folder: what :func:`core.files.beir.read_beir` read.
        models: model names, Hugging Face ids or folders.
        cache: vector cache, or None.
        options: device, batch size, backend and remote-code opt-ins.
        progress: called with (fraction done, message), once per chunk.
        chunk_rows: corpus passages read, encoded and scored at a time.
        variants: also ask whether rule-made contradictions of each relevant passage outrank it.
        mitigations: objects with ``name`` and ``rescore`` (:class:`core.probes.retrieval.mitigations.Mitigation`):
            each rescores the whole corpus for every query (a mitigation needs
            every passage at once: BM25's word statistics, the guard's rivals, the
            fusion's ranks), so a corpus of more than
            :data:`MAX_MITIGATED_PASSAGES` passages gets a one-line reason in
            ``errors`` instead; the variants are the plain cosine's.
        seed, n_resamples, confidence: of the variant rates' bootstrap intervals.

    Returns:
        A :class:`BeirResult`; a model that fails to load or encode, or a
        mitigation that fails or cannot run, is in ``errors``.

    Raises:
        ValueError: no model, a chunk size below 1, ``folder`` not a :class:`BeirFolder`, or mitigations without unique names.
        PairsFileError: a malformed corpus line (the message names the lines).
    """
    start = time.perf_counter()
    if not isinstance(folder, BeirFolder):
        raise ValueError(f"folder must be a BeirFolder (core.files.beir.read_beir), got {type(folder).__name__}")  # noqa: TRY004
    if not models:
        raise ValueError("give at least one model")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    check_names(mitigations)
    # Twice the deepest cut-off: a run of ties that straddles the 10th passage is seen beyond it (decided_ties).
    depth = 2 * max(*constants.IR_RECALL_KS, constants.IR_CUTOFF)
    qids = list(folder.queries)
    qrels = [folder.qrels[q] for q in qids]
    errors: dict[str, str] = {}
    reports: dict[str, EncodeReport] = {}
    ranks: list[pd.DataFrame] = []
    rows: list[dict] = []
    variant_rows: list[dict] = []
    judged = {d for q in qrels for d in q}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        # Each chunk is served from the cache when it can be: the weights load at the first chunk that needs them.
        encoded = run.encode([folder.queries[q] for q in qids], share=None)
        if encoded is None:
            continue
        queries = embedding_matrix(encoded[0], [folder.queries[q] for q in qids]).astype(np.float64)
        ranked = _rank_chunks(run, folder, queries, qrels, judged, chunk_rows, depth, cache, reports, hold=bool(mitigations))
        if ranked is None:
            continue
        top, n_passages, relevant, held = ranked
        if not n_passages:  # read_beir refuses an empty corpus; this one was emptied since it was read
            raise PairsFileError(f"{CORPUS_FILE} holds no passage to rank")
        keys = {constants.COL_MODEL: run.label, constants.COL_MITIGATION: constants.MITIGATION_NONE}
        _tabulate(top, keys, folder, qids, qrels, n_passages, ranks, rows, relevant)
        for mitigation in mitigations:
            _apply_mitigation(mitigation, run, folder, qids, qrels, queries, held, depth, n_passages, ranks, rows, relevant, errors)
        if variants:
            made = _variant_rows(run, [folder.queries[q] for q in qids], qrels, relevant)
            if made is not None:
                variant_rows += made
    pairs = pd.DataFrame(variant_rows)
    rates = (
        corpus_rates(pairs, n_resamples=n_resamples, confidence=confidence, seed=seed)
        if variant_rows
        else pd.DataFrame(columns=CORPUS_RATE_COLUMNS)
    )
    return BeirResult(
        pd.concat(ranks, ignore_index=True) if ranks else pd.DataFrame(columns=[constants.COL_MODEL]),
        pd.DataFrame(rows, columns=RANKING_COLUMNS),
        pairs,
        rates,
        errors,
        reports,
        time.perf_counter() - start,
    )


def _variant_rows(run: ModelRun, queries: list[str], qrels: list[dict[str, int]], relevant: dict[str, str]) -> list[dict] | None:
    """Per query and relevant passage, each rule-made variant's score against the passage's own."""
    variants = variants_of(list(relevant.values()))
    texts = list(dict.fromkeys([*queries, *relevant.values(), *(v for vs in variants.values() for _, _, v in vs)]))
    got = run.encode(texts, share=None)
    if got is None:
        return None
    vectors = got[0]
    rows = []
    for query, judged in zip(queries, qrels, strict=True):
        q = vectors[query]
        for doc in judged:
            original = relevant.get(doc)
            if original is None:
                continue
            s_orig = float(pairwise_cos_sim(q, vectors[original])[0])
            for mode, rule, text in variants[original]:
                s_var = float(pairwise_cos_sim(q, vectors[text])[0])
                rows.append(
                    {
                        constants.COL_MODEL: run.label,
                        constants.COL_MITIGATION: constants.MITIGATION_NONE,
                        constants.COL_QUERY: query,
                        "original": original,
                        constants.COL_MODE: mode,
                        constants.COL_RULE: rule,
                        constants.COL_VARIANT: text,
                        "score_original": s_orig,
                        "score_variant": s_var,
                        constants.COL_OUTRANKS: s_var > s_orig,
                    }
                )
    return rows
