"""Corpus mode: does an adversarial variant of a query's top passage outrank it, in the user's own corpus?

For each model: rank the corpus for every query by cosine, take each query's
top passage, generate its variants with :func:`core.probes.perturb.perturb`,
add them to the corpus and score again (then rescore with each mitigation).
The variants and the rates by mode are shared with the BEIR probe
(:mod:`core.probes.retrieval.beir`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.files.vectors import PassageVectors
from core.models.cache import EmbeddingCache
from core.models.check import Checked
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.probes.retrieval.metrics import flips, rate_with_ci, target_ranks
from core.probes.retrieval.records import corpus_pairs, ranked_settings
from core.probes.retrieval.rescoring import check_names, checked_scores, record_failure
from core.scoring.result import HistoryRecord
from core.stats.similarity import cos_sim

if TYPE_CHECKING:  # for the hints only: the run takes any object with the protocol's name and rescore
    from core.probes.retrieval.mitigations import Mitigation


# How each query's first passage was chosen: by exact search over the vectors, or by a store's own search.
SEARCH_EXACT, SEARCH_STORE = "exact", "store"
CORPUS_RATE_COLUMNS = [
    constants.COL_MODEL,
    constants.COL_MITIGATION,
    constants.COL_MODE,
    constants.COL_N,
    "outranked",
    constants.COL_TIES,
    constants.COL_FIXED,
    constants.COL_BROKEN,
    "rate",
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
]


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
        reports: model -> encoding report of the corpus and queries (empty for given vectors).
    """

    pairs: pd.DataFrame
    rates: pd.DataFrame
    no_variant: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    reports: dict[str, EncodeReport] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        """Models that ranked the corpus, including those for which no rule made a variant (their ``no_variant`` says why)."""
        scored = list(self.pairs[constants.COL_MODEL]) if not self.pairs.empty else []
        return list(dict.fromkeys([*scored, *self.no_variant]))

    def summary(self) -> pd.DataFrame:
        """The outrank rates: model, mitigation, mode (and ``all``), n, outranked, rate and its interval."""
        return self.rates

    def history_record(self, name: str) -> HistoryRecord:
        """Each query vs its top passage and vs each rule-made variant of it as pairs
        (:func:`core.probes.retrieval.records.corpus_pairs`), the rates and the backends."""
        return HistoryRecord(
            corpus_pairs(self.pairs, name),
            ranked_settings(self.reports, self.rates),
            nothing="no variant was made, so there is nothing to compare",
        )


def variants_of(passages: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
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


def _corpus_rows(
    queries: Sequence[str], corpus: list[str], top: np.ndarray, variants: dict, scores: np.ndarray, keys: dict[str, str]
) -> list[dict]:
    index = {t: i for i, t in enumerate(corpus)}
    rows = []
    for qi, query in enumerate(queries):
        original = corpus[top[qi]]
        rank = float(target_ranks(scores[qi : qi + 1], np.array([top[qi]]))[0])
        for mode, rule, text in variants[original]:
            s_orig, s_var = scores[qi, top[qi]], scores[qi, index[text]]
            rows.append(
                {
                    **keys,
                    constants.COL_QUERY: query,
                    "original": original,
                    constants.COL_MODE: mode,
                    constants.COL_RULE: rule,
                    constants.COL_VARIANT: text,
                    "score_original": float(s_orig),
                    "score_variant": float(s_var),
                    constants.COL_OUTRANKS: bool(s_var > s_orig),
                    "rank_original": rank,
                }
            )
    return rows


def corpus_rates(pairs: pd.DataFrame, **bootstrap) -> pd.DataFrame:
    """Per model, mitigation and mode (and ``all``): how often a variant outranked its original, with a bootstrap interval over queries.

    Beside each rate, as in the suite's before/after table: ``ties`` (variant and
    original scored alike: no win, and no fix), and against the plain cosine's rows of the same pairs
    ``fixed`` (the original is strictly first now and was not) and ``broken`` (the reverse); 0 for ``none``.
    """
    keys = [constants.COL_MODEL, constants.COL_MITIGATION]
    # Every mitigation scores one model's pairs in one order, so the n-th pair of one is the n-th of the plain cosine's.
    nth = pairs.groupby(keys, sort=False).cumcount()
    first = pd.Series(pairs["score_original"].to_numpy(float) > pairs["score_variant"].to_numpy(float), index=pairs.index)
    plain = pairs[constants.COL_MITIGATION] == constants.MITIGATION_NONE
    before = pd.Series(first[plain].to_numpy(), index=pd.MultiIndex.from_arrays([pairs.loc[plain, constants.COL_MODEL], nth[plain]]))
    rows = []
    for (model, mitigation), frame in pairs.groupby(keys, sort=False):
        present = set(frame[constants.COL_MODE])
        was = before.reindex(pd.MultiIndex.from_arrays([frame[constants.COL_MODEL], nth[frame.index]])).to_numpy()
        for mode in [*(m for m in lexicon.ADVERSARIAL_CATEGORIES if m in present), constants.MODE_ALL]:
            at = np.ones(len(frame), dtype=bool) if mode == constants.MODE_ALL else (frame[constants.COL_MODE] == mode).to_numpy()
            part = frame[at]
            rate, low, high = rate_with_ci(part[constants.COL_OUTRANKS].to_numpy(bool), part[constants.COL_QUERY].to_numpy(), **bootstrap)
            ties = int((part["score_variant"].to_numpy(float) == part["score_original"].to_numpy(float)).sum())
            known = ~pd.isna(was[at])
            fixed, broken = flips(was[at][known].astype(bool), first[part.index].to_numpy()[known])
            rows.append((model, mitigation, mode, len(part), int(part[constants.COL_OUTRANKS].sum()), ties, fixed, broken, rate, low, high))
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
        mitigations: as for :func:`core.probes.retrieval.run.run_retrieval`.
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
    check_names(mitigations)
    errors: dict[str, str] = {}
    rows: list[dict] = []
    no_variant: dict[str, int] = {}
    reports: dict[str, EncodeReport] = {}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode([*corpus, *queries], share=0.6)
        if encoded is None:
            continue
        vectors, reports[run.label] = encoded
        query_matrix = embedding_matrix(vectors, queries)
        passage_matrix = embedding_matrix(vectors, corpus)
        top = cos_sim(query_matrix, passage_matrix).argmax(axis=1)

        def encode(texts: list[str], run=run) -> np.ndarray | None:
            more = run.encode(texts, share=0.8)
            return None if more is None else embedding_matrix(more[0], texts)

        found = corpus_on_vectors(
            run.label, corpus, passage_matrix, queries, query_matrix, {SEARCH_EXACT: top}, encode, mitigations=mitigations, errors=errors
        )
        if found is None:
            continue
        # Set once the model has scored everything: a model here ran, even when no rule made a variant.
        no_variant[run.label] = found.no_variant
        rows += found.rows[SEARCH_EXACT]
    pairs = pd.DataFrame(rows)
    rates = (
        corpus_rates(pairs, n_resamples=n_resamples, confidence=confidence, seed=seed)
        if rows
        else pd.DataFrame(columns=CORPUS_RATE_COLUMNS)
    )
    return CorpusResult(pairs, rates, no_variant, errors, time.perf_counter() - start, reports)


@dataclass
class VectorsCorpus:
    """Corpus mode on given vectors: its rows per way the first passages were chosen, and the queries no rule could vary."""

    rows: dict[str, list[dict]]
    no_variant: int


def corpus_on_vectors(
    label: str,
    passages: list[str],
    passage_matrix: np.ndarray,
    queries: list[str],
    query_matrix: np.ndarray,
    tops: Mapping[str, np.ndarray],
    encode: Callable[[list[str]], np.ndarray | None],
    *,
    mitigations: Sequence[Mitigation] = (),
    errors: dict[str, str] | None = None,
) -> VectorsCorpus | None:
    """Corpus mode over given vectors (a model's now, a store's, a file's): do variants of each query's first passage outrank it?

    The one body of corpus mode, whatever holds the vectors: the rule-made variants
    (:func:`variants_of`) of every first passage are encoded once (``encode``), added to the passages, and
    each query's scores over them give the rows (:func:`corpus_rows`), for each way the first passages were
    chosen (``tops``: exact search, a store's own search, ...) and each mitigation.

    Args:
        label: the model named in every row.
        passages: n distinct passages; passage_matrix: their (n, d) vectors.
        queries: q queries; query_matrix: their (q, d) vectors.
        tops: way -> (q,) index of each query's first passage.
        encode: the variants' texts -> their (m, d) vectors, or None when the model failed (the run stops, as for a model).
        mitigations, errors: as for :func:`run_corpus_probe` (a failing mitigation is recorded in ``errors``).

    Returns:
        The rows per way (keys ``model``, ``mitigation``), or None when ``encode`` failed.
    """
    variants = variants_of([passages[i] for top in tops.values() for i in top])
    known = set(passages)
    texts = list(dict.fromkeys(v for vs in variants.values() for _, _, v in vs if v not in known))
    extra = encode(texts) if texts else np.zeros((0, passage_matrix.shape[1]), dtype=passage_matrix.dtype)
    if extra is None:
        return None
    extended = [*passages, *texts]
    dense = cos_sim(query_matrix, np.vstack([passage_matrix, extra]) if texts else passage_matrix)
    rows: dict[str, list[dict]] = {}
    for way, top in tops.items():
        rows[way] = []
        for mitigation in [None, *mitigations]:
            name = constants.MITIGATION_NONE if mitigation is None else mitigation.name
            try:
                scores = (
                    dense if mitigation is None else checked_scores(mitigation.rescore(queries, extended, dense, model=label), dense, name)
                )
            except Exception as exc:  # noqa: BLE001 - a mitigation may raise anything; the others must still run
                record_failure(errors if errors is not None else {}, label, name, exc)
                continue
            rows[way] += corpus_rows(queries, extended, top, variants, scores, {constants.COL_MODEL: label, constants.COL_MITIGATION: name})
    first = next(iter(tops.values()))
    return VectorsCorpus(rows, sum(1 for t in first if not variants[passages[t]]))


def corpus_rows(
    queries: Sequence[str], corpus: list[str], top: np.ndarray, variants: dict, scores: np.ndarray, keys: dict[str, str]
) -> list[dict]:
    """Corpus mode's rows: each query's first passage (``top``) against each of its variants, scored by ``scores`` over ``corpus``."""
    return _corpus_rows(queries, corpus, top, variants, scores, keys)


def corpus_probe_on_vectors(
    source: PassageVectors,
    queries: Sequence[str],
    checked: Checked,
    *,
    mitigations: Sequence[Mitigation] = (),
    seed: int = constants.BOOTSTRAP_SEED,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
) -> CorpusResult:
    """Corpus mode over given vectors (``retrieval --vectors FILE``): the passages' vectors are the file's, the queries and the
    variants are encoded by the checked model (:func:`core.models.check.encode_checked`, which already encoded ``queries``).

    Raises:
        ValueError: no query, or mitigations without unique names.
    """
    start = time.perf_counter()
    query_texts = list(dict.fromkeys(q for q in queries if q.strip()))
    if not query_texts:
        raise ValueError("there is no query; give at least one")
    check_names(mitigations)
    errors: dict[str, str] = {}
    query_matrix = embedding_matrix(checked.vectors, query_texts)
    top = cos_sim(query_matrix, source.vectors).argmax(axis=1)

    def encode(texts: list[str]) -> np.ndarray | None:
        more = checked.run.encode(texts, share=0.8)
        return None if more is None else embedding_matrix(more[0], texts)

    found = corpus_on_vectors(
        checked.label,
        source.passages,
        source.vectors,
        query_texts,
        query_matrix,
        {SEARCH_EXACT: top},
        encode,
        mitigations=mitigations,
        errors=errors,
    )
    rows = found.rows[SEARCH_EXACT] if found is not None else []
    pairs = pd.DataFrame(rows)
    rates = (
        corpus_rates(pairs, n_resamples=n_resamples, confidence=confidence, seed=seed)
        if rows
        else pd.DataFrame(columns=CORPUS_RATE_COLUMNS)
    )
    no_variant = {checked.label: found.no_variant} if found is not None else {}
    return CorpusResult(pairs, rates, no_variant, errors, time.perf_counter() - start)
