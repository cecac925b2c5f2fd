"""Index settings as a probe: the same suites scored with vectors as an index stores them (issue 36.3).

A vector store rarely compares the float32 vectors a model returns.  Each
setting here is one way an index keeps them, and the score it gives a query
and a passage:

==================  ======================================================================
setting             what the index stores, and its score
==================  ======================================================================
``float32``         the vectors as encoded; the cosine (the exact figures, unchanged)
``float16``         each entry rounded to half precision (pgvector ``halfvec``); the cosine
``int8``            scalar quantization, **per-dimension** calibration: each dimension's
                    min..max over the calibration vectors cut into 256 buckets
                    (``sentence_transformers.quantize_embeddings``), decoded to the
                    bucket's centre as faiss ``SQ8`` does; the cosine of the decoded rows
``int8-global``     the same with **one** min..max over every entry (Qdrant-style)
``binary``          one sign bit per dimension (``> 0``); the Hamming similarity
                    ``1 - 2 h / d``, which is the cosine of the ±1 vectors
``binary-rescore``  a Hamming shortlist of ``RESCORE_MULTIPLIER × RESCORE_TOP_K`` passages
                    per query, rescored with the float query against the ±1 passage (the
                    ranking ``sentence_transformers``' rescoring gives); ``-inf`` outside
``dims:D``          the first ``D`` dimensions, renormalised (Matryoshka truncation)
==================  ======================================================================

The arithmetic takes matrices of vectors (:func:`setting_scores`,
:func:`pair_scores`), so any source of vectors, a model or a store, can feed
it.  :func:`run_index_settings` runs the probes through the existing
runners: pairs tables (the failure-mode suite, a user's pairs) give each
category's failure rate at the threshold, its mean score, and (when the pairs hold
positive and negative controls) the rates at the setting's own threshold; the retrieval suite and a triples
file go through :func:`core.probes.retrieval.run.run_retrieval` and
:func:`core.probes.retrieval.triples.run_triples` with each setting as a
rescoring (:class:`SettingRescorer`), so win rates, paired accuracy and
recall are computed by the very code that reports the exact figures, and the
float32 row *is* that code's ``none`` row.

Binary and ``binary-rescore`` scores are on another scale than a cosine: a
failure rate at a cosine threshold (0.7) moves with the scale as well as with
the ranking (the rates at the setting's own threshold allow for that); win rates
and recall compare ranks and are comparable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.models.cache import EmbeddingCache
from core.models.encode import embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.stats import bootstrap_ci, failure_rate, failure_rate_ci, interval_or_nan
from core.stats.similarity import cos_sim, pairwise_cos_sim

FLOAT32, FLOAT16, INT8, INT8_GLOBAL, BINARY, BINARY_RESCORE = "float32", "float16", "int8", "int8-global", "binary", "binary-rescore"
DIMS_PREFIX = "dims:"
PRECISIONS = (FLOAT32, FLOAT16, INT8, INT8_GLOBAL, BINARY, BINARY_RESCORE)
DEFAULT_DIMS = (256, 128, 64, 32)
DEFAULT_SETTINGS: tuple[str, ...] = (*PRECISIONS, *(f"{DIMS_PREFIX}{d}" for d in DEFAULT_DIMS))
RESCORE_TOP_K = 10  # the deepest cut-off the retrieval probes read (recall@10)
_UNIT_TOLERANCE = 1e-5  # float32 rounding of a unit vector's norm is far below this
RESCORE_MULTIPLIER = 2  # sentence_transformers.quantization.semantic_search_*'s default oversampling

PROBE_RETRIEVAL = constants.SUITE_RETRIEVAL
PROBE_TRIPLES = "triples"

METRIC_FAILURE_RATE = "failure_rate"
METRIC_MATCH_RATE = "match_rate"  # a pair that should match, above the threshold
METRIC_MEAN_SCORE = "mean_score"
# At the setting's own threshold (Youden J on the positive vs negative controls): binary scores sit on another scale than cosines.
METRIC_OWN_THRESHOLD = "own_threshold"
METRIC_FAILURE_RATE_OWN = "failure_rate_own_threshold"
METRIC_MATCH_RATE_OWN = "match_rate_own_threshold"
METRIC_WIN_RATE = "win_rate"
METRIC_PAIRED_ACCURACY = "paired_accuracy"
TABLE_COLUMNS = ["setting", constants.COL_MODEL, "probe", "metric", constants.COL_MODE, "value", "ci_low", "ci_high", "n", "change"]


@dataclass(frozen=True)
class IndexSetting:
    """How an index keeps vectors: a precision, or a truncation to ``dims`` dimensions.

    Attributes:
        name: one of :data:`PRECISIONS`, or ``dims:D``.
        dims: the dimensions kept (``dims:D`` only, else 0).
    """

    name: str
    dims: int = 0


def parse_settings(names: Sequence[str]) -> tuple[IndexSetting, ...]:
    """Settings from their names (``float32``, ``int8``, ``dims:128`` ...), in order, each once.

    Raises:
        ValueError: an unknown name, a ``dims:`` that is not a whole number >= 1, or no setting.
    """
    out: dict[str, IndexSetting] = {}
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        if name.startswith(DIMS_PREFIX):
            text = name[len(DIMS_PREFIX) :]
            if not text.isdigit() or int(text) < 1:
                raise ValueError(f"{raw!r}: dims:D needs a whole number of dimensions >= 1")
            out.setdefault(f"{DIMS_PREFIX}{int(text)}", IndexSetting(f"{DIMS_PREFIX}{int(text)}", int(text)))
        elif name in PRECISIONS:
            out.setdefault(name, IndexSetting(name))
        else:
            raise ValueError(f"unknown index setting {raw!r}; choose from {', '.join(PRECISIONS)} or dims:D (e.g. dims:128)")
    if not out:
        raise ValueError("give at least one index setting")
    return tuple(out.values())


# ------------------------------------------------------------------ codes


def int8_ranges(calibration: np.ndarray, per_dimension: bool = True) -> np.ndarray:
    """The ``(2, d)`` min and max rows a scalar quantizer calibrates on: per dimension, or one range for all."""
    cal = np.asarray(calibration, dtype=np.float32)
    if cal.ndim != 2 or not len(cal):
        raise ValueError(f"calibration must be a non-empty (n, d) matrix, got shape {cal.shape}")
    if per_dimension:
        return np.stack([cal.min(axis=0), cal.max(axis=0)])
    return np.stack([np.full(cal.shape[1], cal.min()), np.full(cal.shape[1], cal.max())])


def int8_codes(vectors: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """int8 codes of ``vectors`` under ``ranges`` (sentence-transformers' scalar quantizer, values outside clipped)."""
    from sentence_transformers.util.quantization import quantize_embeddings

    return np.asarray(quantize_embeddings(np.asarray(vectors, dtype=np.float32), "int8", ranges=ranges))


def int8_decode(codes: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """float64 vectors back from int8 codes: each code's bucket centre, ``start + (code + 128 + 0.5) * step``."""
    start = ranges[0].astype(np.float64)
    step = (ranges[1].astype(np.float64) - start) / 255
    step = np.where(step == 0, 1.0, step)  # as the quantizer: a constant dimension has one bucket
    return start + (codes.astype(np.float64) + 128.0 + 0.5) * step


def binary_codes(vectors: np.ndarray) -> np.ndarray:
    """Packed sign bits (bit = entry > 0), ``(n, ceil(d / 8))`` uint8, as sentence-transformers' ``ubinary``."""
    from sentence_transformers.util.quantization import quantize_embeddings

    return np.asarray(quantize_embeddings(np.asarray(vectors, dtype=np.float32), "ubinary"))


def hamming(a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """Hamming distance of every packed row of ``a_codes`` to every row of ``b_codes``, ``(n, m)`` ints."""
    out = np.empty((len(a_codes), len(b_codes)), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, b_codes.size))  # bounds the (block, m, bytes) xor in memory
    for i in range(0, len(a_codes), block):
        out[i : i + block] = np.bitwise_count(a_codes[i : i + block, None, :] ^ b_codes[None, :, :]).sum(axis=-1)
    return out


def _signs(vectors: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(vectors) > 0, 1.0, -1.0)


def _units(matrix: np.ndarray) -> np.ndarray:
    from core.stats.similarity import unit_rows

    return unit_rows(np.asarray(matrix, dtype=np.float64))


def stored_vectors(setting: IndexSetting, vectors: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
    """The vectors as the index compares them: unit float64 rows (float32: unit vectors as given, so their figures stay exact).

    Args:
        setting: the index setting.
        vectors: ``(n, d)`` vectors as the model returned them.
        calibration: ``(m, d)`` vectors the int8 ranges come from (default: ``vectors``).

    Raises:
        ValueError: ``dims`` not below ``d``, or vectors that are not a 2-D matrix.
    """
    arr = np.asarray(vectors)
    if arr.ndim != 2:
        raise ValueError(f"vectors must be an (n, d) matrix, got shape {arr.shape}")
    if setting.name == FLOAT32:
        # A model's vectors are unit length, and kept as they are so float32 is the exact figure; a store may hold others.
        return arr if np.allclose(np.linalg.norm(arr, axis=1), 1.0, rtol=0, atol=_UNIT_TOLERANCE) else _units(arr)
    if setting.name == FLOAT16:
        return _units(arr.astype(np.float16))
    if setting.name in (INT8, INT8_GLOBAL):
        ranges = int8_ranges(arr if calibration is None else calibration, per_dimension=setting.name == INT8)
        return _units(int8_decode(int8_codes(arr, ranges), ranges))
    if setting.name in (BINARY, BINARY_RESCORE):
        return _units(_signs(arr))
    if not 0 < setting.dims < arr.shape[1]:
        raise ValueError(f"{setting.name}: the vectors have {arr.shape[1]} dimensions; keep fewer")
    return _units(arr[:, : setting.dims])


def setting_scores(setting: IndexSetting, queries: np.ndarray, passages: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
    """Each query's score with each passage under ``setting``, ``(n_queries, n_passages)``; higher ranks higher.

    Every setting but ``binary`` is the one cosine
    (:func:`core.stats.similarity.cos_sim`) of the vectors as the index
    stores them, so float32 equals the retrieval runs' scores exactly.  ``binary`` is ``1 - 2 h / d``
    from the Hamming distance ``h`` of the packed sign bits.  ``binary-rescore``
    keeps each query's :data:`RESCORE_MULTIPLIER` × :data:`RESCORE_TOP_K`
    nearest passages by Hamming distance (ties by position) and scores them
    with the float query against the ±1 passage; the rest get ``-inf``.

    Args:
        setting: the index setting.
        queries: ``(n_queries, d)`` vectors.
        passages: ``(n_passages, d)`` vectors.
        calibration: vectors for the int8 ranges (default: queries and passages together).
    """
    q, p = np.asarray(queries), np.asarray(passages)
    if q.ndim != 2 or p.ndim != 2 or q.shape[1] != p.shape[1]:
        raise ValueError(f"queries and passages must be (n, d) matrices of one d, got {q.shape} and {p.shape}")
    if setting.name in (BINARY, BINARY_RESCORE):
        distances = hamming(binary_codes(q), binary_codes(p))
        if setting.name == BINARY:
            return 1.0 - 2.0 * distances / q.shape[1]
        keep = RESCORE_MULTIPLIER * RESCORE_TOP_K
        scores = cos_sim(q, stored_vectors(setting, p))
        if p.shape[0] > keep:
            order = np.argsort(distances, axis=1, kind="stable")[:, keep:]
            np.put_along_axis(scores, order, -np.inf, axis=1)
        return scores
    if setting.name in (INT8, INT8_GLOBAL) and calibration is None:
        calibration = np.concatenate([q, p])
    # The one cosine (core.stats.similarity): float32 is then the exact runs' cosine to the last bit.
    return cos_sim(stored_vectors(setting, q, calibration), stored_vectors(setting, p, calibration))


def pair_scores(setting: IndexSetting, a: np.ndarray, b: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
    """The score of each aligned pair ``(a_i, b_i)`` under ``setting``, shape ``(n,)``.

    Every setting but ``binary`` is the one cosine
    (:func:`core.stats.similarity.pairwise_cos_sim`) of the stored vectors, as
    :func:`core.scoring.runner.score_pairs` scores, so float32's failure rates
    equal the exact ones.  ``binary-rescore`` has no shortlist
    for one passage: it is the float ``a`` against the ±1 ``b``.
    """
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.ndim != 2 or a_arr.shape != b_arr.shape:
        raise ValueError(f"a and b must be (n, d) matrices of one shape, got {a_arr.shape} and {b_arr.shape}")
    if setting.name == BINARY:
        distances = np.bitwise_count(binary_codes(a_arr) ^ binary_codes(b_arr)).sum(axis=1)
        return 1.0 - 2.0 * distances / a_arr.shape[1]
    if setting.name == BINARY_RESCORE:
        sa, sb = a_arr, stored_vectors(setting, b_arr)
    else:
        if setting.name in (INT8, INT8_GLOBAL) and calibration is None:
            calibration = np.concatenate([a_arr, b_arr])
        sa, sb = stored_vectors(setting, a_arr, calibration), stored_vectors(setting, b_arr, calibration)
    return pairwise_cos_sim(sa, sb)


# ------------------------------------------------------------------ the probes


def _matrix(vectors: Mapping[str, np.ndarray], texts: Sequence[str]) -> np.ndarray:
    """The vectors of ``texts`` stacked in order (a mapping of any kind: a model's vectors or a store's)."""
    return np.stack([vectors[t] for t in texts])


class SettingRescorer:
    """An index setting as a retrieval rescoring (:class:`core.probes.retrieval.mitigations.Mitigation`).

    The retrieval runs hand it texts; it looks their vectors up in the ones
    already encoded for the model and scores them with :func:`setting_scores`.
    """

    def __init__(
        self, setting: IndexSetting, vectors: Mapping[str, Mapping[str, np.ndarray]], calibration: Mapping[str, np.ndarray]
    ) -> None:
        self.setting = setting
        self.name = setting.name
        self._vectors = vectors
        self._calibration = calibration

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """The setting's scores of ``queries`` against ``passages`` (``dense`` only gives the shape)."""
        if not len(queries) or not len(passages):
            return np.zeros(np.shape(dense))
        vectors = self._vectors[model]
        q, p = _matrix(vectors, queries), _matrix(vectors, passages)
        return setting_scores(self.setting, q, p, self._calibration[model])


def _fits(setting: IndexSetting, dimension: int) -> bool:
    return setting.dims < dimension


def _own_threshold(scores: np.ndarray, cats: np.ndarray) -> float | None:
    """The setting's own Youden threshold from the positive vs negative controls, when the pairs hold both."""
    from core.probes.calibration import youden_threshold

    positive, negative = scores[cats == constants.CAT_POSITIVE], scores[cats == constants.CAT_NEGATIVE]
    if not positive.size or not negative.size:
        return None
    return youden_threshold(positive, negative).threshold


def pair_setting_rows(
    pairs: pd.DataFrame,
    vectors: Mapping[str, np.ndarray],
    settings: Sequence[IndexSetting],
    *,
    model: str,
    probe: str,
    threshold: float = constants.DEFAULT_THRESHOLD,
    calibration: np.ndarray | None = None,
    **bootstrap: Any,
) -> pd.DataFrame:
    """Each category's failure rate (match rate for pairs that should match) and mean score under each setting, with intervals.

    When the pairs hold positive and negative controls (the failure-mode suite
    does), each setting also gets its own threshold (Youden J on the
    controls) and the rates at it, so a setting whose scores sit on another
    scale (binary) is judged at a threshold that suits it.

    Args:
        pairs: ``text_a``, ``text_b`` and optionally ``category`` (missing: one category ``all``).
        vectors: text -> vector for every text of ``pairs`` (a model's or a store's).
        settings: the settings; a truncation to as many dimensions as the vectors have, or more, is skipped.
        model, probe: the labels of the rows.
        threshold: a pair above it (strictly) is retrieved as a match.
        calibration: vectors for the int8 ranges (default: every vector of ``pairs``).
        **bootstrap: ``n_resamples``, ``confidence``, ``seed`` of :func:`core.stats.failure_rate_ci`.

    Returns:
        Rows of :data:`TABLE_COLUMNS` without ``change``.
    """
    return _rate_rows(pair_setting_scores(pairs, vectors, settings, calibration), _categories(pairs), model, probe, threshold, bootstrap)


def _categories(pairs: pd.DataFrame) -> np.ndarray:
    if constants.COL_CATEGORY in pairs:
        return pairs[constants.COL_CATEGORY].astype(str).to_numpy()
    return np.full(len(pairs), constants.MODE_ALL)


def pair_setting_scores(
    pairs: pd.DataFrame,
    vectors: Mapping[str, np.ndarray],
    settings: Sequence[IndexSetting],
    calibration: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Each pair's score under each setting: setting name -> ``(n,)`` scores aligned with ``pairs``.

    Args:
        pairs: ``text_a`` and ``text_b``.
        vectors: text -> vector for every text of ``pairs`` (a model's or a store's).
        settings: the settings; a truncation to as many dimensions as the vectors have, or more, is left out.
        calibration: vectors for the int8 ranges (default: every vector of ``pairs``).

    Raises:
        ValueError: ``pairs`` lacks a text column, or a text has no vector.
    """
    missing = {constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs table lacks columns {sorted(missing)}")
    texts_a, texts_b = list(pairs[constants.COL_TEXT_A].astype(str)), list(pairs[constants.COL_TEXT_B].astype(str))
    absent = [t for t in dict.fromkeys([*texts_a, *texts_b]) if t not in vectors]
    if absent:
        raise ValueError(f"{len(absent)} text(s) have no vector, e.g. {absent[0][:60]!r}")
    if not len(pairs):
        return {}
    a, b = _matrix(vectors, texts_a), _matrix(vectors, texts_b)
    if calibration is None:
        calibration = _matrix(vectors, list(dict.fromkeys([*texts_a, *texts_b])))
    return {s.name: pair_scores(s, a, b, calibration) for s in settings if _fits(s, a.shape[1])}


def _rate_rows(
    scores_by: Mapping[str, np.ndarray], cats: np.ndarray, model: str, probe: str, threshold: float, bootstrap: Mapping[str, Any]
) -> pd.DataFrame:
    rows: list[tuple[Any, ...]] = []
    for name, scores in scores_by.items():
        own = _own_threshold(scores, cats)
        for cat in dict.fromkeys(cats):
            s = scores[cats == cat]
            positive = cat in constants.PARAPHRASE_CATEGORIES
            cuts = [(METRIC_MATCH_RATE if positive else METRIC_FAILURE_RATE, threshold)]
            if own is not None:
                cuts.append((METRIC_MATCH_RATE_OWN if positive else METRIC_FAILURE_RATE_OWN, own))
            for metric, cut in cuts:
                low, high = interval_or_nan(failure_rate_ci, s, cut, **bootstrap)
                rows.append((name, model, probe, metric, cat, failure_rate(s, cut), low, high, len(s)))
            low, high = interval_or_nan(bootstrap_ci, s, **bootstrap)
            rows.append((name, model, probe, METRIC_MEAN_SCORE, cat, float(np.mean(s)), low, high, len(s)))
        if own is not None:  # after the rates: the failure rate is what a reader looks for first
            rows.append((name, model, probe, METRIC_OWN_THRESHOLD, constants.MODE_ALL, own, np.nan, np.nan, len(scores)))
    return pd.DataFrame(rows, columns=TABLE_COLUMNS[:-1])


def _retrieval_rows(result: Any, probe: str, **bootstrap: Any) -> list[tuple]:
    """Win rates, paired accuracy and recall@k (with intervals over groups) of a retrieval result, mitigation -> setting."""
    from core.probes.retrieval.metrics import rate_with_ci

    rows: list[tuple] = []
    name = {constants.MITIGATION_NONE: FLOAT32}
    for r in result.win_rates.to_dict("records"):
        mode = r.get(constants.COL_MODE, constants.MODE_ALL)
        rows.append(
            (
                name.get(r["mitigation"], r["mitigation"]),
                r["model"],
                probe,
                METRIC_WIN_RATE,
                mode,
                r["win_rate"],
                r["ci_low"],
                r["ci_high"],
                r["n"],
            )
        )
    paired = getattr(result, "paired", pd.DataFrame())
    for r in paired.to_dict("records"):
        rows.append(
            (
                name.get(r["mitigation"], r["mitigation"]),
                r["model"],
                probe,
                METRIC_PAIRED_ACCURACY,
                r["mode"],
                r["paired_accuracy"],
                r["ci_low"],
                r["ci_high"],
                r["n"],
            )
        )
    ranks = result.ranks
    for (model, mitigation), part in ranks.groupby([constants.COL_MODEL, constants.COL_MITIGATION], sort=False) if not ranks.empty else ():
        if constants.COL_RANK_CORRECT in part:  # the suite: a group's two queries resampled together
            hits = {k: part[constants.COL_RANK_CORRECT].to_numpy(float) <= k for k in constants.RECALL_KS}
            clusters = part[constants.COL_GROUP_ID].to_numpy()
        else:  # triples: each anchor's hit at k, anchors independent
            hits = {k: part[column].to_numpy(float) > 0 for k, column in constants.COL_IR_RECALL_AT.items()}
            clusters = None
        for k, hit in hits.items():
            rate, low, high = rate_with_ci(hit, clusters, **bootstrap)
            rows.append((name.get(mitigation, mitigation), model, probe, f"recall_at_{k}", constants.MODE_ALL, rate, low, high, len(part)))
    return rows


@dataclass
class IndexSettingsResult:
    """What :func:`run_index_settings` produced.

    Attributes:
        table: the tidy long table (:data:`TABLE_COLUMNS`): one row per setting, model,
            probe, metric and mode; ``change`` is the value minus float32's.
        errors: model (or ``model + setting``) -> one-line reason.
        notes: settings skipped for a model, and why.
        settings: the settings asked for, in order.
        seconds: wall time.
        pairs: every pairs probe's pairs per model with the float32 ``cosine`` and each
            setting's ``score_<setting>`` (what the run history stores).
    """

    table: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    settings: tuple[str, ...] = ()
    seconds: float = 0.0
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)


def with_change(table: pd.DataFrame) -> pd.DataFrame:
    """The table with ``change``: each value minus the float32 value of its model, probe, metric and mode (NaN without one)."""
    keys = [constants.COL_MODEL, "probe", "metric", constants.COL_MODE]
    base = table[table["setting"] == FLOAT32].set_index(keys)["value"]
    joined = table.join(base.rename("_float32"), on=keys)
    out = table.copy()
    out["change"] = joined["value"] - joined["_float32"]
    return out[TABLE_COLUMNS]


def run_index_settings(
    models: Sequence[str],
    *,
    settings: Sequence[IndexSetting] | None = None,
    pairs: Mapping[str, pd.DataFrame] | None = None,
    retrieval: Any = None,
    triples: Any = None,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    threshold: float = constants.DEFAULT_THRESHOLD,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> IndexSettingsResult:
    """Score the probes under every index setting, per model; every text is encoded once per model.

    Args:
        models: model names, Hugging Face ids or folders.
        settings: the index settings (None: :data:`DEFAULT_SETTINGS`; float32 always runs: it is the baseline of ``change``).
        pairs: probe name -> pairs table (the failure-mode suite, a user's pairs): failure rates per category.
        retrieval: a :class:`core.probes.retrieval.suite.RetrievalSuite`: win rate by mode, paired accuracy, recall@1/5.
        triples: a :class:`core.files.triples.Triples`: win rate and recall@1/5/10 over its passages.
        cache: vector cache, or None.
        options: device, batch size, backend.
        progress: called with (fraction done, message).
        threshold: the failure rates' threshold.
        n_resamples, confidence, seed: of every bootstrap interval.

    Returns:
        An :class:`IndexSettingsResult`; the int8 settings calibrate on every vector the run
        encoded for the model (the suites' or the user's texts), as an index calibrates on its corpus.

    Raises:
        ValueError: no model, or no probe.
    """
    start = time.perf_counter()
    if not models:
        raise ValueError("give at least one model")
    pairs = dict(pairs or {})
    if not pairs and retrieval is None and triples is None:
        raise ValueError("give at least one probe: pairs, the retrieval suite or a triples file")
    chosen = list(parse_settings(DEFAULT_SETTINGS) if settings is None else settings)
    if all(s.name != FLOAT32 for s in chosen):
        chosen.insert(0, IndexSetting(FLOAT32))
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    texts: list[str] = []
    for frame in pairs.values():
        texts += [*frame[constants.COL_TEXT_A].astype(str), *frame[constants.COL_TEXT_B].astype(str)]
    if retrieval is not None:
        texts += [*retrieval.passages[constants.COL_TEXT], *retrieval.queries[constants.COL_TEXT]]
    if triples is not None:
        from core.probes.retrieval.triples import corpus_of

        corpus = corpus_of(triples)
        texts += [*corpus.queries, *corpus.passages]
    texts = list(dict.fromkeys(texts))
    errors: dict[str, str] = {}
    notes: list[str] = []
    vectors: dict[str, dict[str, np.ndarray]] = {}
    calibration: dict[str, np.ndarray] = {}
    frames: list[pd.DataFrame] = []
    scored: list[pd.DataFrame] = []
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(texts, share=0.9)
        if encoded is None:
            continue
        vectors[run.label] = encoded[0]
        calibration[run.label] = embedding_matrix(encoded[0], texts)
        dimension = calibration[run.label].shape[1]
        skipped = [s.name for s in chosen if not _fits(s, dimension)]
        if skipped:
            notes.append(f"{run.label}: {', '.join(skipped)} skipped: the model has {dimension} dimensions")
        for probe, frame in pairs.items():
            run.note(0.95, f"{run.label}: {probe}")
            scores_by = pair_setting_scores(frame, vectors[run.label], chosen, calibration[run.label])
            frames.append(_rate_rows(scores_by, _categories(frame), run.label, probe, threshold, boot))
            scored.append(_scored_pairs(frame, scores_by, run.label, probe))
    ran = list(vectors)
    rows: list[tuple] = []
    for probe, source in ((PROBE_RETRIEVAL, retrieval), (PROBE_TRIPLES, triples)):
        if source is None or not ran:
            continue
        for model in ran:
            dimension = calibration[model].shape[1]
            rescorers = [SettingRescorer(s, vectors, calibration) for s in chosen if s.name != FLOAT32 and _fits(s, dimension)]
            result = _retrieval_result(probe, source, [model], rescorers, cache, options, boot)
            errors.update(result.errors)
            rows += _retrieval_rows(result, probe, **boot)
    if rows:
        frames.append(pd.DataFrame(rows, columns=TABLE_COLUMNS[:-1]))
    frames = [f for f in frames if not f.empty]
    table = with_change(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=TABLE_COLUMNS)
    order = {s.name: i for i, s in enumerate(chosen)}
    table = table.sort_values("setting", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    every = pd.concat(scored, ignore_index=True) if scored else pd.DataFrame()
    return IndexSettingsResult(table, errors, notes, tuple(s.name for s in chosen), time.perf_counter() - start, every)


def _scored_pairs(frame: pd.DataFrame, scores_by: Mapping[str, np.ndarray], model: str, probe: str) -> pd.DataFrame:
    """The pairs with the float32 cosine and each setting's score (``score_<setting>``), for the run history."""
    out = frame.reset_index(drop=True).copy()
    out.insert(0, constants.COL_MODEL, model)
    out[constants.COL_SUITE] = probe
    if constants.COL_CATEGORY not in out:
        out[constants.COL_CATEGORY] = constants.MODE_ALL
    out[constants.COL_COSINE] = scores_by[FLOAT32]
    for name, scores in scores_by.items():
        if name != FLOAT32:
            out[f"score_{name}"] = scores
    return out


def _retrieval_result(probe: str, source: Any, models: list[str], rescorers: list[SettingRescorer], cache, options, boot) -> Any:
    # The vectors are in the cache (or the model in memory) from the encode above: this run reads them, it does not encode again.
    if probe == PROBE_RETRIEVAL:
        from core.probes.retrieval.run import run_retrieval

        return run_retrieval(source, models, cache=cache, mitigations=rescorers, options=options, **boot)
    from core.probes.retrieval.triples import run_triples

    return run_triples(source, models, cache=cache, mitigations=rescorers, options=options, **boot)


def _cell(value: float, low: float, high: float) -> str:
    if pd.isna(value):
        return "n/a"
    if pd.isna(low) or low == high == value:  # no interval, or one no resample can widen (a rate of 0 or 1)
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def wide_table(table: pd.DataFrame, short_name: Callable[[str], str] = str) -> pd.DataFrame:
    """The long table for reading: one row per model, probe, metric and mode, one column per setting, ``value [low, high]``.

    Args:
        table: :attr:`IndexSettingsResult.table` (or any part of it).
        short_name: how a model is named in the rows (e.g. the registry's short name).
    """
    keys = [constants.COL_MODEL, "probe", "metric", constants.COL_MODE]
    if table.empty:
        return pd.DataFrame(columns=keys)
    shown = table.assign(
        cell=[_cell(v, lo, hi) for v, lo, hi in zip(table["value"], table["ci_low"], table["ci_high"], strict=True)],
        model=table[constants.COL_MODEL].map(short_name),
    )
    wide = shown.pivot_table(index=keys, columns="setting", values="cell", aggfunc="first", sort=False)
    return wide.reindex(columns=list(dict.fromkeys(table["setting"]))).reset_index().rename_axis(columns=None)
