"""Index settings over given vectors (a store's, a vectors file's): scored as float16, int8, binary or truncated.

``index-settings --store URI`` and ``index-settings --vectors FILE`` both run
:func:`vectors_index_settings` on the passages and vectors their source gave
(:class:`core.files.vectors.PassageVectors`).  The named model is checked on
20 of the passages (:func:`core.models.check.encode_checked`), as the audit
does.  Two things are scored under each setting of
:mod:`core.probes.index_settings`:

* a user's **pairs**: each text's vector is the source's when it holds the
  text (:func:`core.words.passage_key`), else the named model's (a note
  counts them); failure rates, mean scores and own thresholds as for any pairs;
* the user's **queries** against the passages, as a retrieval corpus: each
  query's top ``k`` under each setting against its float32 top ``k`` over the
  given vectors (the share of queries whose top ``k`` changes, and
  recall@1/5/10 of the setting's top k against float32's, by the one
  :func:`core.stats.overlap.top_k_overlap`).

The int8 settings calibrate on every given vector, as an index calibrates on
its corpus.  Nothing is written anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.files.vectors import PassageVectors
from core.models.cache import EmbeddingCache
from core.models.check import ModelCheck, encode_checked
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.probes.index_settings import (
    FLOAT32_SETTING,
    TABLE_COLUMNS,
    IndexSetting,
    IndexSettingsResult,
    pair_setting_rows,
    setting_scores,
    settings_table,
    with_float32,
)
from core.stats import bootstrap_ci, interval_or_nan
from core.stats.overlap import top_k_overlap
from core.words import passage_key, passage_keys

PROBE_STORE_QUERIES = "store queries"
PROBE_VECTORS_QUERIES = "vectors queries"
PROBE_CORPUS = "corpus"
METRIC_TOP_CHANGED = f"top{constants.IR_CUTOFF}_changed"
# A bare corpus ranks its own passages over the rest: this many of them at most (seeded), so a 100k-passage corpus
# scores a (500, 100k) matrix per setting, not (100k, 100k).
CORPUS_SELF_QUERIES = 500


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Each row's ``k`` best columns, best first (ties by position, as every ranking here)."""
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def query_setting_rows(
    queries: np.ndarray,
    passages: np.ndarray,
    settings: Sequence[IndexSetting],
    *,
    model: str,
    probe: str = PROBE_STORE_QUERIES,
    own: np.ndarray | None = None,
    **bootstrap: Any,
) -> pd.DataFrame:
    """Each setting's top k of every query over the passages against float32's: share changed, recall@1/5/10, with intervals.

    Args:
        queries: ``(n_queries, d)`` query vectors.
        passages: ``(n_passages, d)`` the store's vectors (also the int8 calibration).
        settings: the settings (float32 is the reference; a truncation to ``d`` dimensions or more is left out).
        model: the rows' model label.
        probe: the rows' probe name.
        own: ``(n_queries,)`` when the queries are passages themselves: the row of each query's own passage, left out
            of its ranking (else every setting finds the query first and recall@1 says nothing).
        **bootstrap: ``n_resamples``, ``confidence``, ``seed``.

    Returns:
        Rows of :data:`core.probes.index_settings.TABLE_COLUMNS` without ``change``.

    Raises:
        ValueError: no query, or fewer passages than the deepest k.
    """
    from core.probes.retrieval.metrics import rate_with_ci

    deepest = constants.IR_CUTOFF
    if not len(queries):
        raise ValueError("give at least one query")
    available = len(passages) - (own is not None)
    if available < deepest:
        raise ValueError(f"there are {available} passages to rank; a top {deepest} needs at least {deepest}")

    def top(setting: IndexSetting) -> np.ndarray:
        scores = np.asarray(setting_scores(setting, queries, passages, passages), dtype=np.float64)
        if own is not None:
            scores[np.arange(len(own)), own] = -np.inf
        return _top(scores, deepest)

    exact = top(FLOAT32_SETTING)
    rows: list[tuple] = []
    for setting in settings:
        if setting.dims and setting.dims >= passages.shape[1]:
            continue
        got = top(setting)
        changed = np.array([set(g) != set(e) for g, e in zip(got, exact, strict=True)])
        rate, low, high = rate_with_ci(changed, **bootstrap)
        rows.append((setting.name, model, probe, METRIC_TOP_CHANGED, constants.MODE_ALL, rate, low, high, len(changed)))
        for k in constants.IR_RECALL_KS:
            overlap = top_k_overlap(got, exact, k)
            low, high = interval_or_nan(bootstrap_ci, overlap, **bootstrap)
            value = float(overlap.mean())
            rows.append((setting.name, model, probe, constants.COL_IR_RECALL_AT[k], constants.MODE_ALL, value, low, high, len(overlap)))
    return pd.DataFrame(rows, columns=TABLE_COLUMNS[:-1])


def corpus_setting_rows(
    passages: np.ndarray,
    settings: Sequence[IndexSetting],
    *,
    model: str,
    probe: str,
    queries: np.ndarray | None = None,
    **bootstrap: Any,
) -> pd.DataFrame:
    """:func:`query_setting_rows` over a corpus: its queries when given, else its own passages each ranked over the rest.

    Without queries a corpus is probed as a store is with them: up to :data:`CORPUS_SELF_QUERIES` of its passages
    (drawn with the bootstrap seed) are the queries, each left out of its own ranking, so recall@k is how many of a
    passage's float32 nearest neighbours the setting still finds.

    Args:
        passages: ``(n_passages, d)`` the corpus's unit vectors (also the int8 calibration).
        settings: as for :func:`query_setting_rows`.
        model: the rows' model label.
        probe: the rows' probe name.
        queries: ``(n_queries, d)`` query vectors, or None.
        **bootstrap: ``n_resamples``, ``confidence``, ``seed``.

    Raises:
        ValueError: fewer passages than a top k needs.
    """
    if queries is not None and len(queries):
        return query_setting_rows(queries, passages, settings, model=model, probe=probe, **bootstrap)
    rows = np.arange(len(passages))
    if len(rows) > CORPUS_SELF_QUERIES:
        rng = np.random.default_rng(bootstrap.get("seed", constants.BOOTSTRAP_SEED))
        rows = np.sort(rng.choice(rows, CORPUS_SELF_QUERIES, replace=False))
    return query_setting_rows(passages[rows], passages, settings, model=model, probe=probe, own=rows, **bootstrap)


def corpus_index_settings(
    models: Sequence[str],
    passages: Sequence[str],
    *,
    name: str = PROBE_CORPUS,
    settings: Sequence[IndexSetting] | None = None,
    queries: Sequence[str] = (),
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> IndexSettingsResult:
    """A user's corpus encoded by each model and ranked as a store's vectors are (:func:`corpus_setting_rows`).

    Args:
        models: model names, Hugging Face ids or folders.
        passages: the corpus's passages (each a row of the index; the int8 settings calibrate on them).
        name: the rows' probe name (the corpus file's).
        settings: the index settings (None: the defaults; float32 always runs: it is the reference).
        queries: ranked over the passages; none: the passages themselves, each over the rest.
        cache, options, progress: as for :func:`core.probes.index_settings.run_index_settings`.
        n_resamples, confidence, seed: of every bootstrap interval (the seed also draws the passages used as queries).

    Returns:
        The :class:`core.probes.index_settings.IndexSettingsResult` (no pairs: its figures are ranks).

    Raises:
        ValueError: no model, or fewer passages than a top 10 needs.
    """
    start = time.perf_counter()
    if not models:
        raise ValueError("give at least one model")
    passages, queries = list(passages), list(queries)
    deepest = constants.IR_CUTOFF + (0 if queries else 1)  # without queries a passage is ranked over the others
    if len(passages) < deepest:
        raise ValueError(f"{name} holds {len(passages)} passages; ranking a top {constants.IR_CUTOFF} needs at least {deepest}")
    chosen = with_float32(settings)
    boot: dict[str, Any] = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    errors: dict[str, str] = {}
    notes: list[str] = []
    frames: list[pd.DataFrame] = []
    reports = {}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode([*passages, *queries], share=0.9)
        if encoded is None:
            continue
        vectors, reports[run.label] = encoded
        matrix = embedding_matrix(vectors, passages)
        skipped = [s.name for s in chosen if not s.fits(matrix.shape[1])]
        if skipped:
            notes.append(f"{run.label}: {', '.join(skipped)} skipped: the model has {matrix.shape[1]} dimensions")
        run.note(0.95, f"{run.label}: {name}")
        ranked = embedding_matrix(vectors, queries) if queries else None
        frames.append(corpus_setting_rows(matrix, chosen, model=run.label, probe=name, queries=ranked, **boot))
    table = settings_table(frames, chosen)
    return IndexSettingsResult(table, errors, notes, tuple(s.name for s in chosen), time.perf_counter() - start, reports=reports)


def vectors_index_settings(
    source: PassageVectors,
    model: str,
    settings: Sequence[IndexSetting],
    *,
    what: str = "stored",
    probe: str = PROBE_STORE_QUERIES,
    pairs: Mapping[str, pd.DataFrame] | None = None,
    queries: Sequence[str] = (),
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    threshold: float = constants.DEFAULT_THRESHOLD,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> tuple[IndexSettingsResult, ModelCheck]:
    """Score pairs and queries under each setting with given vectors (a store's, a vectors file's).

    Args:
        source: the passages and their unit vectors.
        model: the model that made the vectors (checked on 20 passages; it encodes the texts the source lacks).
        settings: the index settings (float32 is added first when missing: it is the baseline).
        what: how the vectors are named in notes and the model check's message (``stored``, ``given``).
        probe: the queries' rows' probe name.
        pairs: probe name -> pairs table (``text_a``, ``text_b``, optionally ``category``).
        queries: queries ranked over the passages under each setting.
        cache, options, progress: as for :func:`core.audit.run.audit_corpus`.
        threshold: the pairs' failure threshold.
        n_resamples, confidence, seed: of every bootstrap interval.

    Returns:
        The :class:`core.probes.index_settings.IndexSettingsResult` and the model check.

    Raises:
        ValueError: no pairs and no queries; ModelMismatch: the model did not make the vectors.
    """
    start = time.perf_counter()
    pairs = dict(pairs or {})
    query_texts = passage_keys(list(queries))
    if not pairs and not query_texts:
        raise ValueError(f"give pairs or queries to score against the {what} vectors")
    chosen = with_float32(settings)
    boot: dict[str, Any] = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    held = {text: source.vectors[i] for i, text in enumerate(source.passages)}
    pair_texts = list(
        dict.fromkeys(passage_key(t) for f in pairs.values() for c in (constants.COL_TEXT_A, constants.COL_TEXT_B) for t in f[c])
    )
    missing = [t for t in pair_texts if t not in held]
    checked = encode_checked(
        source.passages, source.vectors, model, [*missing, *query_texts], what=what, cache=cache, options=options, progress=progress
    )
    from core.models.registry import short_name

    notes = list(source.notes)
    if missing:
        notes.append(
            f"{len(missing):,} of the {len(pair_texts):,} pair texts are not in the {'store' if what == 'stored' else 'vectors file'}: "
            f"their vectors are {short_name(checked.label)}'s, encoded now; "
            f"the other {len(pair_texts) - len(missing):,} are the {what} vectors"
        )
    dimension = source.vectors.shape[1]
    skipped = [s.name for s in chosen if s.dims and s.dims >= dimension]
    if skipped:
        notes.append(f"{short_name(checked.label)}: {', '.join(skipped)} skipped: the {what} vectors have {dimension} dimensions")
    frames = []
    for name, frame in pairs.items():
        by_text: dict[str, np.ndarray] = {}
        for text in [*frame[constants.COL_TEXT_A].astype(str), *frame[constants.COL_TEXT_B].astype(str)]:
            key = passage_key(text)
            by_text[text] = held[key] if key in held else checked.vectors[key]
        frames.append(
            pair_setting_rows(
                frame, by_text, chosen, model=checked.label, probe=name, threshold=threshold, calibration=source.vectors, **boot
            )
        )
    if query_texts:
        query_matrix = embedding_matrix(checked.vectors, query_texts)
        frames.append(query_setting_rows(query_matrix, source.vectors, chosen, model=checked.label, probe=probe, **boot))
    table = settings_table(frames, chosen)
    return IndexSettingsResult(table, {}, notes, tuple(s.name for s in chosen), time.perf_counter() - start), checked.check


def vectors_file_index_settings(
    source: PassageVectors, model: str, settings: Sequence[IndexSetting], **options: Any
) -> tuple[IndexSettingsResult, ModelCheck]:
    """:func:`vectors_index_settings` of a vectors file's passages (``index-settings --vectors FILE`` and the Index settings page).

    Args:
        source: the file's passages and vectors (:func:`core.files.vectors.read_vectors_file`).
        model: the model that made them.
        settings: the index settings.
        **options: the keyword options of :func:`vectors_index_settings` but ``what`` and ``probe``.

    Raises:
        ValueError: no pairs and no queries; ModelMismatch: the model did not make the vectors.
    """
    return vectors_index_settings(source, model, settings, what="given", probe=PROBE_VECTORS_QUERIES, **options)
