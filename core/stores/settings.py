"""Index settings through a store: its stored vectors scored as float16, int8, binary or truncated (``index-settings --store``).

The store's vectors are read once and the named model is checked on 20 of
its passages (:func:`core.stores.audit.encode_checked`), as ``audit --store``
does.  Two things are scored under each setting of
:mod:`core.probes.index_settings`:

* a user's **pairs**: each text's vector is the store's when the store holds
  the text (whitespace-normalised), else the named model's (a note counts
  them); failure rates, mean scores and own thresholds as for any pairs;
* the user's **queries** against the store's passages, as a retrieval corpus:
  each query's top ``k`` under each setting against its float32 top ``k``
  over the stored vectors (the share of queries whose top ``k`` changes,
  and recall@1/5/10 of the setting's top k against float32's).

The int8 settings calibrate on every stored vector, as an index calibrates on
its corpus.  Nothing is written to the store.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.models.cache import EmbeddingCache
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn
from core.probes.index_settings import (
    FLOAT32_SETTING,
    TABLE_COLUMNS,
    IndexSetting,
    IndexSettingsResult,
    pair_setting_rows,
    setting_scores,
    with_change,
)
from core.stats import bootstrap_ci, interval_or_nan
from core.stores.audit import encode_checked, read_collection
from core.stores.base import StoreHandle

PROBE_STORE_QUERIES = "store queries"
QUERY_KS = (1, 5, 10)
METRIC_TOP_CHANGED = f"top{max(QUERY_KS)}_changed"


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Each row's ``k`` best columns, best first (ties by position, as every ranking here)."""
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def query_setting_rows(
    queries: np.ndarray,
    passages: np.ndarray,
    settings: Sequence[IndexSetting],
    *,
    model: str,
    **bootstrap: Any,
) -> pd.DataFrame:
    """Each setting's top k of every query over the passages against float32's: share changed, recall@1/5/10, with intervals.

    Args:
        queries: ``(n_queries, d)`` query vectors.
        passages: ``(n_passages, d)`` the store's vectors (also the int8 calibration).
        settings: the settings (float32 is the reference; a truncation to ``d`` dimensions or more is left out).
        model: the rows' model label.
        **bootstrap: ``n_resamples``, ``confidence``, ``seed``.

    Returns:
        Rows of :data:`core.probes.index_settings.TABLE_COLUMNS` without ``change``.

    Raises:
        ValueError: no query, or fewer passages than the deepest k.
    """
    from core.probes.retrieval.metrics import rate_with_ci

    deepest = max(QUERY_KS)
    if not len(queries):
        raise ValueError("give at least one query")
    if len(passages) < deepest:
        raise ValueError(f"the store holds {len(passages)} passages; ranking a top {deepest} needs at least {deepest}")
    exact = _top(setting_scores(FLOAT32_SETTING, queries, passages), deepest)
    rows: list[tuple] = []
    for setting in settings:
        if setting.dims and setting.dims >= passages.shape[1]:
            continue
        got = _top(setting_scores(setting, queries, passages, passages), deepest)
        changed = np.array([set(g) != set(e) for g, e in zip(got, exact, strict=True)])
        rate, low, high = rate_with_ci(changed, **bootstrap)
        rows.append((setting.name, model, PROBE_STORE_QUERIES, METRIC_TOP_CHANGED, constants.MODE_ALL, rate, low, high, len(changed)))
        for k in QUERY_KS:
            overlap = np.array([len(set(g[:k]) & set(e[:k])) / k for g, e in zip(got, exact, strict=True)])
            low, high = interval_or_nan(bootstrap_ci, overlap, **bootstrap)
            value = float(overlap.mean())
            rows.append((setting.name, model, PROBE_STORE_QUERIES, f"recall_at_{k}", constants.MODE_ALL, value, low, high, len(overlap)))
    return pd.DataFrame(rows, columns=TABLE_COLUMNS[:-1])


def store_index_settings(
    handle: StoreHandle,
    model: str,
    settings: Sequence[IndexSetting],
    *,
    pairs: Mapping[str, pd.DataFrame] | None = None,
    queries: Sequence[str] = (),
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    threshold: float = constants.DEFAULT_THRESHOLD,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> tuple[IndexSettingsResult, Any]:
    """Score pairs and queries under each setting with the store's vectors.

    Args:
        handle: an open store (:func:`core.stores.kinds.open_store`).
        model: the model that made the stored vectors (checked on 20 passages; it encodes the texts the store lacks).
        settings: the index settings (float32 is added first when missing: it is the baseline).
        pairs: probe name -> pairs table (``text_a``, ``text_b``, optionally ``category``).
        queries: queries ranked over the store's passages under each setting.
        cache, options, progress: as for :func:`core.stores.audit.audit_store`.
        threshold: the pairs' failure threshold.
        n_resamples, confidence, seed: of every bootstrap interval.

    Returns:
        The :class:`core.probes.index_settings.IndexSettingsResult` and the model check.

    Raises:
        ValueError: no pairs and no queries; StoreError: the store cannot be read, or the model did not make its vectors.
    """
    start = time.perf_counter()
    pairs = dict(pairs or {})
    query_texts = list(dict.fromkeys(q for q in (_norm(q) for q in queries) if q))
    if not pairs and not query_texts:
        raise ValueError("give pairs or queries to score against the store")
    chosen = list(settings)
    if FLOAT32_SETTING not in chosen:
        chosen.insert(0, FLOAT32_SETTING)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    collection = read_collection(handle)
    stored = {text: collection.vectors[i] for i, text in enumerate(collection.passages)}
    pair_texts = list(dict.fromkeys(_norm(t) for f in pairs.values() for c in (constants.COL_TEXT_A, constants.COL_TEXT_B) for t in f[c]))
    missing = [t for t in pair_texts if t not in stored]
    checked = encode_checked(collection, model, [*missing, *query_texts], cache=cache, options=options, progress=progress)
    from core.models.registry import short_name

    notes = list(collection.notes)
    if missing:
        notes.append(
            f"{len(missing):,} of the {len(pair_texts):,} pair texts are not in the store: their vectors are "
            f"{short_name(checked.label)}'s, encoded now; the other {len(pair_texts) - len(missing):,} are the stored vectors"
        )
    dimension = collection.vectors.shape[1]
    skipped = [s.name for s in chosen if s.dims and s.dims >= dimension]
    if skipped:
        notes.append(f"{short_name(checked.label)}: {', '.join(skipped)} skipped: the stored vectors have {dimension} dimensions")
    frames = []
    for probe, frame in pairs.items():
        by_text: dict[str, np.ndarray] = {}
        for text in [*frame[constants.COL_TEXT_A].astype(str), *frame[constants.COL_TEXT_B].astype(str)]:
            norm = _norm(text)
            by_text[text] = stored[norm] if norm in stored else checked.vectors[norm]
        frames.append(
            pair_setting_rows(
                frame, by_text, chosen, model=checked.label, probe=probe, threshold=threshold, calibration=collection.vectors, **boot
            )
        )
    if query_texts:
        frames.append(
            query_setting_rows(embedding_matrix(checked.vectors, query_texts), collection.vectors, chosen, model=checked.label, **boot)
        )
    table = with_change(pd.concat(frames, ignore_index=True))
    order = {s.name: i for i, s in enumerate(chosen)}
    table = table.sort_values("setting", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    return IndexSettingsResult(table, {}, notes, tuple(s.name for s in chosen), time.perf_counter() - start), checked.check
