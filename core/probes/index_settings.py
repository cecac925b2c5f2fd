"""Index settings: the probes scored with vectors as an index keeps them (``cosine-probe index-settings``, the Index settings page).

A vector store rarely compares the float32 vectors a model returns.  Each
setting is one record (:class:`IndexSetting`) that says how the index keeps a
passage's vector (:meth:`IndexSetting.kept`), how it takes a query
(:meth:`IndexSetting.query`) and how it scores the two, on which scale
(:attr:`IndexSetting.scale`):

==================  ======================================================================
setting             what the index keeps, and its score
==================  ======================================================================
``float32``         the vectors as encoded; the cosine (the exact figures, unchanged)
``float16``         each entry rounded to half precision, query too (pgvector ``halfvec``); the cosine
``int8``            faiss ``SQ8`` (``IndexScalarQuantizer``, ``QT_8bit``): each dimension's
                    min..max over the calibration vectors cut into 256 buckets, a code
                    decoded to its bucket's centre; the **float** query's inner product with
                    the decoded passage, as faiss searches (the cosine within the decoding error)
``int8-global``     the same with **one** min..max over every entry (``QT_8bit_uniform``)
``binary``          one sign bit per dimension (``> 0``), query too; ``1 - 2 h / d`` from
                    the Hamming distance ``h`` (the cosine of the ±1 vectors): **Hamming scale**
``binary-rescore``  a Hamming shortlist of ``RESCORE_MULTIPLIER × RESCORE_TOP_K`` passages
                    per query, rescored with the float query against the ±1 passage (the
                    ranking ``sentence_transformers``' rescoring gives), ``-inf`` outside:
                    **float-against-sign scale**
``dims:D``          the first ``D`` dimensions, renormalised (Matryoshka truncation), query too
==================  ======================================================================

A name is parsed once (:func:`parse_settings`); everything after holds the
record.  The records take matrices of vectors, so any source of vectors, a
model or a store, can feed them.  :func:`run_index_settings` runs the probes
through the existing runners: pairs tables (the failure-mode suite, a user's
pairs) give each category's failure rate and mean score; the retrieval suite
and a triples file go through :func:`core.probes.retrieval.run.run_retrieval`
and :func:`core.probes.retrieval.triples.run_triples` with each setting as a
rescoring (:class:`SettingRescorer`), so win rates, paired accuracy and
recall are computed by the very code that reports the exact figures, and the
float32 row *is* that code's ``none`` row.

The binary settings score on another scale than a cosine (on MiniLM-L6 a mode's mean
score sits 0.07 to 0.21 below its cosine): a failure rate at a cosine threshold would move with the
scale, not with what the index tells apart (positive pairs fall below it too).
So they get no rate at the cosine threshold, ever: their rates are at their
own threshold (Youden J on the positive and negative controls, when the pairs
hold them), and their win rates and recall compare ranks.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd

from core import constants
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, model_runs
from core.scoring.result import HistoryRecord
from core.stats import bootstrap_ci, failure_rate, failure_rate_ci, interval_or_nan
from core.stats.similarity import cos_sim, pairwise_cos_sim, unit_rows

if TYPE_CHECKING:
    from core.files.triples import Triples
    from core.probes.retrieval.run import RetrievalResult
    from core.probes.retrieval.suite import RetrievalSuite
    from core.probes.retrieval.triples import TriplesResult

FLOAT32, FLOAT16, INT8, INT8_GLOBAL, BINARY, BINARY_RESCORE = "float32", "float16", "int8", "int8-global", "binary", "binary-rescore"
DIMS_PREFIX = "dims:"
DEFAULT_DIMS = (256, 128, 64, 32)
RESCORE_TOP_K = constants.IR_CUTOFF  # the deepest cut-off the retrieval probes read (recall@10)
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
# Figures in the setting's own score units: against float32's they compare scales, not what the index tells apart.
SCORE_METRICS = (METRIC_MEAN_SCORE, METRIC_OWN_THRESHOLD)
TABLE_COLUMNS = ["setting", constants.COL_MODEL, "probe", "metric", constants.COL_MODE, "value", "ci_low", "ci_high", "n", "change"]


# ------------------------------------------------------------------ the records


@dataclass(frozen=True)
class Scale:
    """What a setting's scores are.

    Attributes:
        name: how the page and the CLI name it (``cosine``, ``Hamming`` ...).
        cosine: True when a cosine threshold means the same on it (its scores are cosines, or within a
            decoding error of one); False: rates only at the setting's own threshold, comparisons by rank.
    """

    name: str
    cosine: bool


COSINE_SCALE = Scale("cosine", True)
HAMMING_SCALE = Scale("Hamming", False)
SIGN_SCALE = Scale("float-against-sign", False)
NOT_MADE = "—"  # a figure a setting does not make (a binary setting at the cosine threshold)


def _checked(vectors: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(vectors)
    if arr.ndim != 2 or not arr.shape[1]:
        raise ValueError(f"{name} must be an (n, d) matrix, got shape {arr.shape}")
    return arr


@dataclass(frozen=True)
class IndexSetting(ABC):
    """One way an index keeps vectors and scores a query against a passage.

    A subclass says how it keeps a passage (:meth:`_kept`), how it takes a
    query (:meth:`_query`, by default as a passage) and, when it is not the
    cosine of the two, how it scores them (:meth:`_scores`,
    :meth:`_pair_scores`).  The public methods check shapes and call them.

    Attributes:
        name: the name it is parsed from and printed as (``parse_setting(s.name) == s``).
        dims: the dimensions kept (a truncation; 0: all of them).
        scale: what its scores are (:class:`Scale`).
        keeps: what the index keeps, in a few words (the CLI's help, the page, the docs).
    """

    name: str
    dims: int = 0
    scale: ClassVar[Scale] = COSINE_SCALE
    keeps: ClassVar[str] = ""

    def fits(self, dimension: int) -> bool:
        """True when the setting applies to vectors of ``dimension`` entries (a truncation must keep fewer)."""
        return True

    def kept(self, passages: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
        """The passages as the index keeps them, ``(n, d')`` (decoded to floats, or packed bits for binary).

        Args:
            passages: ``(n, d)`` vectors as the model returned them.
            calibration: ``(m, d)`` vectors a quantizer calibrates on (default: ``passages``).

        Raises:
            ValueError: not an ``(n, d)`` matrix, or a setting that does not fit ``d``.
        """
        arr = self._fitted(_checked(passages, "passages"))
        return self._kept(arr, arr if calibration is None else _checked(calibration, "calibration"))

    def scores(self, queries: np.ndarray, passages: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
        """Each query's score with each passage, ``(n_queries, n_passages)``; higher ranks higher.

        Args:
            queries: ``(n_queries, d)`` vectors.
            passages: ``(n_passages, d)`` vectors.
            calibration: ``(m, d)`` vectors a quantizer calibrates on (default: ``passages``, as an index on its corpus).

        Raises:
            ValueError: not two matrices of one ``d``, or a setting that does not fit ``d``.
        """
        q, p = _checked(queries, "queries"), _checked(passages, "passages")
        if q.shape[1] != p.shape[1]:
            raise ValueError(f"queries and passages must be (n, d) matrices of one d, got {q.shape} and {p.shape}")
        q, p = self._fitted(q), self._fitted(p)
        return self._scores(q, p, p if calibration is None else _checked(calibration, "calibration"))

    def pair_scores(self, a: np.ndarray, b: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
        """The score of each aligned pair, ``a_i`` taken as the query and ``b_i`` as the kept passage, shape ``(n,)``.

        Args:
            a: ``(n, d)`` vectors.
            b: ``(n, d)`` vectors.
            calibration: ``(m, d)`` vectors a quantizer calibrates on (default: ``a`` and ``b`` together).

        Raises:
            ValueError: not two matrices of one shape, or a setting that does not fit ``d``.
        """
        a_arr, b_arr = _checked(a, "a"), _checked(b, "b")
        if a_arr.shape != b_arr.shape:
            raise ValueError(f"a and b must be (n, d) matrices of one shape, got {a_arr.shape} and {b_arr.shape}")
        a_arr, b_arr = self._fitted(a_arr), self._fitted(b_arr)
        cal = np.concatenate([a_arr, b_arr]) if calibration is None else _checked(calibration, "calibration")
        return self._pair_scores(a_arr, b_arr, cal)

    def score_bound(self, calibration: np.ndarray) -> float:
        """The largest absolute score the setting can give unit vectors (1 for a cosine; more with a decoding error)."""
        return 1.0

    # -- what a setting defines

    def _fitted(self, vectors: np.ndarray) -> np.ndarray:
        if not self.fits(vectors.shape[1]):
            raise ValueError(f"{self.name}: the vectors have {vectors.shape[1]} dimensions; keep fewer")
        return vectors

    @abstractmethod
    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray: ...

    def _query(self, queries: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return self._kept(queries, calibration)

    def _scores(self, q: np.ndarray, p: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        # The one cosine (core.stats.similarity): float32 is then the exact runs' cosine to the last bit.
        return cos_sim(self._query(q, calibration), self._kept(p, calibration))

    def _pair_scores(self, a: np.ndarray, b: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return pairwise_cos_sim(self._query(a, calibration), self._kept(b, calibration))


@dataclass(frozen=True)
class Float32(IndexSetting):
    """The vectors as encoded: the cosine, exactly the figures of ``run`` and ``retrieval``."""

    name: str = FLOAT32
    keeps: ClassVar[str] = "the vectors as encoded"

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return passages  # unchanged: its cosine is the exact runs' to the last bit


@dataclass(frozen=True)
class Float16(IndexSetting):
    """Half precision, the query too (pgvector's ``halfvec`` casts the query to the column's type)."""

    name: str = FLOAT16
    keeps: ClassVar[str] = "half precision, the query too"

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return passages.astype(np.float16).astype(np.float64)


@dataclass(frozen=True)
class Int8(IndexSetting):
    """faiss' scalar quantizer: int8 codes of the passages, searched with the float query (asymmetric, as faiss ``SQ8``).

    Attributes:
        per_dimension: one min..max per dimension (``QT_8bit``, faiss ``SQ8``) or one for every entry (``QT_8bit_uniform``).
    """

    name: str = INT8
    per_dimension: bool = True
    keeps: ClassVar[str] = "int8 codes on each dimension's range, faiss SQ8; float query"

    def _codec(self, calibration: np.ndarray) -> Any:
        import faiss

        kind = faiss.ScalarQuantizer.QT_8bit if self.per_dimension else faiss.ScalarQuantizer.QT_8bit_uniform
        codec = faiss.ScalarQuantizer(calibration.shape[1], kind)
        # A store normalises for cosine search before it quantises: the codes are of unit vectors.
        codec.train(np.ascontiguousarray(unit_rows(np.asarray(calibration, dtype=np.float32))))
        return codec

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        codec = self._codec(calibration)
        units = np.ascontiguousarray(unit_rows(np.asarray(passages, dtype=np.float32)))
        return codec.decode(codec.compute_codes(units)).astype(np.float64)

    def _query(self, queries: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return unit_rows(np.asarray(queries, dtype=np.float64))  # the float query, not quantised: faiss' distance computer

    def _scores(self, q: np.ndarray, p: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        # faiss' inner product of the float query with the decoded passage, not renormalised (its ranking).
        return self._query(q, calibration) @ self._kept(p, calibration).T

    def _pair_scores(self, a: np.ndarray, b: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", self._query(a, calibration), self._kept(b, calibration))

    def score_bound(self, calibration: np.ndarray) -> float:
        """1 plus the longest decoding error: a decoded entry is at most half a bucket from the given one."""
        import faiss

        codec = self._codec(_checked(calibration, "calibration"))  # held: its ``trained`` is a view into it
        trained = faiss.vector_to_array(codec.trained)
        widths = np.abs(trained[len(trained) // 2 :]) / 255
        if not self.per_dimension:
            widths = np.full(calibration.shape[1], widths[0])
        return 1.0 + float(np.sqrt(np.sum((widths / 2) ** 2)))


@dataclass(frozen=True)
class Int8Global(Int8):
    """:class:`Int8` on **one** min..max for every entry (faiss ``QT_8bit_uniform``, as Qdrant's scalar quantization)."""

    name: str = INT8_GLOBAL
    per_dimension: bool = False
    keeps: ClassVar[str] = "int8 codes on one range for every dimension; float query"


def _signs(vectors: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(vectors) > 0, 1.0, -1.0)


def binary_codes(vectors: np.ndarray) -> np.ndarray:
    """Packed sign bits (bit = entry > 0), ``(n, ceil(d / 8))`` uint8: sentence-transformers' ``ubinary``, without its import."""
    return np.packbits(np.asarray(vectors) > 0, axis=1)


def hamming(a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
    """Hamming distance of every packed row of ``a_codes`` to every row of ``b_codes``, ``(n, m)`` ints."""
    out = np.empty((len(a_codes), len(b_codes)), dtype=np.int64)
    block = max(1, 4_000_000 // max(1, b_codes.size))  # bounds the (block, m, bytes) xor in memory
    for i in range(0, len(a_codes), block):
        out[i : i + block] = np.bitwise_count(a_codes[i : i + block, None, :] ^ b_codes[None, :, :]).sum(axis=-1)
    return out


@dataclass(frozen=True)
class Binary(IndexSetting):
    """One sign bit per dimension, the query too; ``1 - 2 h / d`` from the Hamming distance (the cosine of the ±1 vectors)."""

    name: str = BINARY
    scale: ClassVar[Scale] = HAMMING_SCALE
    keeps: ClassVar[str] = "one sign bit per dimension, the query too; Hamming distance"

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return binary_codes(passages)

    def _scores(self, q: np.ndarray, p: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return 1.0 - 2.0 * hamming(self._query(q, calibration), self._kept(p, calibration)) / q.shape[1]

    def _pair_scores(self, a: np.ndarray, b: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        distances = np.bitwise_count(self._query(a, calibration) ^ self._kept(b, calibration)).sum(axis=1)
        return 1.0 - 2.0 * distances / a.shape[1]


@dataclass(frozen=True)
class BinaryRescore(IndexSetting):
    """A Hamming shortlist per query, rescored with the float query against the ±1 passage (sentence-transformers' rescoring).

    Each query keeps its :data:`RESCORE_MULTIPLIER` × :data:`RESCORE_TOP_K`
    nearest passages by Hamming distance (ties by position); the rest score
    ``-inf``.  A pair has no shortlist: it is the float ``a`` against the ±1 ``b``.
    """

    name: str = BINARY_RESCORE
    scale: ClassVar[Scale] = SIGN_SCALE
    keeps: ClassVar[str] = "sign bits; a Hamming shortlist rescored with the float query"

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return _signs(passages)  # the bits, as ±1 for the float rescoring

    def _query(self, queries: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return queries

    def _scores(self, q: np.ndarray, p: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        scores = cos_sim(q, self._kept(p, calibration))
        keep = RESCORE_MULTIPLIER * RESCORE_TOP_K
        if p.shape[0] > keep:
            distances = hamming(binary_codes(q), binary_codes(p))
            order = np.argsort(distances, axis=1, kind="stable")[:, keep:]
            np.put_along_axis(scores, order, -np.inf, axis=1)
        return scores


@dataclass(frozen=True)
class Truncation(IndexSetting):
    """The first ``dims`` dimensions, renormalised (Matryoshka truncation), the query too."""

    keeps: ClassVar[str] = "the first D dimensions"

    def fits(self, dimension: int) -> bool:
        """A truncation keeps fewer dimensions than the vectors have."""
        return 0 < self.dims < dimension

    def _kept(self, passages: np.ndarray, calibration: np.ndarray) -> np.ndarray:
        return passages[:, : self.dims]


def truncation(dims: int) -> Truncation:
    """The setting that keeps the first ``dims`` dimensions (``dims:D``)."""
    if dims < 1:
        raise ValueError(f"dims:{dims}: dims:D needs a whole number of dimensions >= 1")
    return Truncation(f"{DIMS_PREFIX}{dims}", dims)


PRECISIONS: tuple[IndexSetting, ...] = (Float32(), Float16(), Int8(), Int8Global(), Binary(), BinaryRescore())
_BY_NAME = {s.name: s for s in PRECISIONS}
FLOAT32_SETTING = _BY_NAME[FLOAT32]
DEFAULT_SETTINGS: tuple[str, ...] = (*_BY_NAME, *(f"{DIMS_PREFIX}{d}" for d in DEFAULT_DIMS))


def parse_setting(name: str) -> IndexSetting:
    """The setting a name spells (``float32``, ``int8``, ``dims:128`` ..., any case, spaces around ignored).

    Raises:
        ValueError: an unknown name, or a ``dims:`` that is not a whole number >= 1.
    """
    text = str(name).strip().lower()
    if text.startswith(DIMS_PREFIX):
        digits = text[len(DIMS_PREFIX) :]
        if not digits.isdigit() or int(digits) < 1:
            raise ValueError(f"{name!r}: dims:D needs a whole number of dimensions >= 1")
        return truncation(int(digits))
    if text not in _BY_NAME:
        raise ValueError(f"unknown index setting {name!r}; choose from {', '.join(_BY_NAME)} or dims:D (e.g. dims:128)")
    return _BY_NAME[text]


def parse_settings(names: Sequence[str]) -> tuple[IndexSetting, ...]:
    """Settings from their names, in order, each once; blank names are skipped.

    Raises:
        ValueError: an unknown name, a ``dims:`` that is not a whole number >= 1, or no setting.
    """
    out: dict[str, IndexSetting] = {}
    for raw in names:
        if str(raw).strip():
            setting = parse_setting(raw)
            out.setdefault(setting.name, setting)
    if not out:
        raise ValueError("give at least one index setting")
    return tuple(out.values())


def setting_scores(setting: IndexSetting, queries: np.ndarray, passages: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
    """:meth:`IndexSetting.scores` (each query against each passage, ``(n_queries, n_passages)``)."""
    return setting.scores(queries, passages, calibration)


def pair_scores(setting: IndexSetting, a: np.ndarray, b: np.ndarray, calibration: np.ndarray | None = None) -> np.ndarray:
    """:meth:`IndexSetting.pair_scores` (each aligned pair, ``(n,)``)."""
    return setting.pair_scores(a, b, calibration)


def scale_matters(table: pd.DataFrame) -> bool:
    """Whether the table holds a figure read at a threshold (pairs, the retrieval suite, triples): only then does binary's
    scale need saying; a corpus's or a store's queries compare ranks, where binary is compared as any setting."""
    return bool(table["metric"].eq(METRIC_MEAN_SCORE).any() or table["probe"].isin([PROBE_RETRIEVAL, PROBE_TRIPLES]).any())


def off_scale(settings: Sequence[IndexSetting]) -> list[IndexSetting]:
    """The settings whose scores are not on the cosine scale (binary): never read at a cosine threshold."""
    return [s for s in settings if not s.scale.cosine]


def scale_note(settings: Sequence[IndexSetting]) -> str | None:
    """The one sentence the CLI and the page say when a binary setting ran, or None."""
    other = off_scale(settings)
    if not other:
        return None
    names = " and ".join(f"{s.name} ({s.scale.name} scale)" for s in other)
    return (
        f"{names} score on another scale than a cosine, so a cosine threshold would make their failures look fixed: "
        "their rates are at their own threshold (calibrated on the positive and negative controls), never at the cosine "
        "threshold, and their win rates and recall compare ranks."
    )


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
        return self.setting.scores(q, p, self._calibration[model])


def _has_controls(pairs: pd.DataFrame) -> bool:
    cats = set(_categories(pairs))
    return constants.CAT_POSITIVE in cats and constants.CAT_NEGATIVE in cats


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
    controls) and the rates at it.  A setting whose scores sit on another
    scale (binary) gets rates at its own threshold only, never at ``threshold``.

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
) -> dict[IndexSetting, np.ndarray]:
    """Each pair's score under each setting: setting -> ``(n,)`` scores aligned with ``pairs`` (``text_a`` the query).

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
    return {s: s.pair_scores(a, b, calibration) for s in settings if s.fits(a.shape[1])}


def _rate_rows(
    scores_by: Mapping[IndexSetting, np.ndarray], cats: np.ndarray, model: str, probe: str, threshold: float, bootstrap: Mapping[str, Any]
) -> pd.DataFrame:
    rows: list[tuple[Any, ...]] = []
    for setting, scores in scores_by.items():
        name = setting.name
        own = _own_threshold(scores, cats)
        for cat in dict.fromkeys(cats):
            s = scores[cats == cat]
            positive = cat in constants.PARAPHRASE_CATEGORIES
            # A cosine threshold on another scale moves every rate with the scale: no such rate is ever made.
            cuts = [(METRIC_MATCH_RATE if positive else METRIC_FAILURE_RATE, threshold)] if setting.scale.cosine else []
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


def _retrieval_rows(win_rates: pd.DataFrame, paired: pd.DataFrame, ranks: pd.DataFrame, probe: str, **bootstrap: Any) -> list[tuple]:
    """Win rates, paired accuracy (the suite's; none for triples) and recall@k (with intervals over groups) of a retrieval
    result's tables, mitigation -> setting."""
    from core.probes.retrieval.metrics import rate_with_ci

    rows: list[tuple] = []
    name = {constants.MITIGATION_NONE: FLOAT32}
    for r in win_rates.to_dict("records"):
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
    for (model, mitigation), part in ranks.groupby([constants.COL_MODEL, constants.COL_MITIGATION], sort=False) if not ranks.empty else ():
        if constants.COL_RANK_CORRECT in part:  # the suite: a group's two queries resampled together
            hits = {k: part[constants.COL_RANK_CORRECT].to_numpy(float) <= k for k in constants.RECALL_KS}
            clusters = part[constants.COL_GROUP_ID].to_numpy()
        else:  # triples: each anchor's hit at k, anchors independent
            hits = {k: part[column].to_numpy(float) > 0 for k, column in constants.COL_IR_RECALL_AT.items()}
            clusters = None
        for k, hit in hits.items():
            rate, low, high = rate_with_ci(hit, clusters, **bootstrap)
            setting = name.get(str(mitigation), str(mitigation))
            rows.append((setting, model, probe, f"recall_at_{k}", constants.MODE_ALL, rate, low, high, len(part)))
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
        reports: model -> encoding report (empty for given vectors).
    """

    table: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    settings: tuple[str, ...] = ()
    seconds: float = 0.0
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    reports: dict[str, EncodeReport] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        """The models the table holds a figure of, in run order."""
        return list(dict.fromkeys(self.table[constants.COL_MODEL])) if not self.table.empty else []

    def summary(self) -> pd.DataFrame:
        """The tidy long table (:data:`TABLE_COLUMNS`)."""
        return self.table

    def history_record(self, name: str) -> HistoryRecord:
        """The pairs with the float32 ``cosine`` and each setting's ``score_<setting>`` beside it, the settings it ran and
        its whole table (NaN as null). A run that scored no pairs (the retrieval suite or triples alone) gives none: the
        history stores pairs, and such a run's figures are its table (printed, and written to ``--out`` when given)."""
        import json

        table = json.loads(self.table.to_json(orient="records"))
        return HistoryRecord(
            self.pairs,
            {"index_settings": list(self.settings), "table": table},
            nothing="the run scored no pairs (a retrieval or triples run's figures are its table, not pairs to compare)",
        )


def with_change(table: pd.DataFrame) -> pd.DataFrame:
    """The table with ``change``: each value minus the float32 value of its model, probe, metric and mode.

    NaN without a float32 value, and for a score figure (mean score, own threshold) of a setting on another scale:
    the difference of two scales says nothing about what the index tells apart.
    """
    keys = [constants.COL_MODEL, "probe", "metric", constants.COL_MODE]
    base = table[table["setting"] == FLOAT32].set_index(keys)["value"]
    joined = table.join(base.rename("_float32"), on=keys)
    out = table.copy()
    on_scale = {name: parse_setting(name).scale.cosine for name in dict.fromkeys(table["setting"])}
    comparable = table["setting"].map(on_scale).astype(bool) | ~table["metric"].isin(SCORE_METRICS)
    out["change"] = (joined["value"] - joined["_float32"]).where(comparable)
    return out[TABLE_COLUMNS]


def with_float32(settings: Sequence[IndexSetting] | None) -> list[IndexSetting]:
    """The settings a run scores: ``settings`` (None: :data:`DEFAULT_SETTINGS`) in their order, float32 first when not
    among them: every ``change`` is against it."""
    chosen = list(parse_settings(DEFAULT_SETTINGS) if settings is None else settings)
    return chosen if FLOAT32_SETTING in chosen else [FLOAT32_SETTING, *chosen]


def settings_table(frames: Sequence[pd.DataFrame], chosen: Sequence[IndexSetting]) -> pd.DataFrame:
    """The rows (:data:`TABLE_COLUMNS` without ``change``) as one table with their change against float32, in the order
    the settings were asked for; empty frames are left out."""
    kept = [f for f in frames if not f.empty]
    table = with_change(pd.concat(kept, ignore_index=True)) if kept else pd.DataFrame(columns=TABLE_COLUMNS)
    order = {s.name: i for i, s in enumerate(chosen)}
    return table.sort_values("setting", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def run_index_settings(
    models: Sequence[str],
    *,
    settings: Sequence[IndexSetting] | None = None,
    pairs: Mapping[str, pd.DataFrame] | None = None,
    retrieval: RetrievalSuite | None = None,
    triples: Triples | None = None,
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
    chosen = with_float32(settings)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    texts = probe_texts(pairs, retrieval, triples)
    errors: dict[str, str] = {}
    notes: list[str] = []
    vectors: dict[str, dict[str, np.ndarray]] = {}
    calibration: dict[str, np.ndarray] = {}
    frames: list[pd.DataFrame] = []
    scored: list[pd.DataFrame] = []
    reports: dict[str, EncodeReport] = {}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(texts, share=0.9)
        if encoded is None:
            continue
        vectors[run.label], reports[run.label] = encoded
        calibration[run.label] = embedding_matrix(encoded[0], texts)
        dimension = calibration[run.label].shape[1]
        skipped = [s.name for s in chosen if not s.fits(dimension)]
        if skipped:
            notes.append(f"{run.label}: {', '.join(skipped)} skipped: the model has {dimension} dimensions")
        for probe, frame in pairs.items():
            run.note(0.95, f"{run.label}: {probe}")
            uncalibrated = [s.name for s in off_scale(chosen) if not _has_controls(frame)]
            if uncalibrated and run.label == next(iter(vectors)):
                notes.append(
                    f"{probe}: no failure rate for {', '.join(uncalibrated)}: their scores are not cosines and these pairs hold no "
                    "positive and negative controls to calibrate their own threshold; compare them by rank (retrieval, triples)"
                )
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
            rescorers = [SettingRescorer(s, vectors, calibration) for s in chosen if s != FLOAT32_SETTING and s.fits(dimension)]
            result, paired = _retrieval_result(probe, source, [model], rescorers, cache, options, boot)
            errors.update(result.errors)
            rows += _retrieval_rows(result.win_rates, paired, result.ranks, probe, **boot)
    if rows:
        frames.append(pd.DataFrame(rows, columns=TABLE_COLUMNS[:-1]))
    table = settings_table(frames, chosen)
    every = pd.concat(scored, ignore_index=True) if scored else pd.DataFrame()
    return IndexSettingsResult(table, errors, notes, tuple(s.name for s in chosen), time.perf_counter() - start, every, reports)


def probe_texts(
    pairs: Mapping[str, pd.DataFrame] | None = None,
    retrieval: RetrievalSuite | None = None,
    triples: Triples | None = None,
    corpus: Mapping[str, Sequence[str]] | None = None,
    queries: Sequence[str] = (),
) -> list[str]:
    """Every text the probes of :func:`run_index_settings` (and :func:`core.probes.vector_settings.corpus_index_settings`)
    score, each once: what a model encodes (and a run's estimate counts).

    Args:
        pairs: probe name -> pairs table (``text_a``, ``text_b``).
        retrieval: the retrieval suite, or None.
        triples: a triples table, or None.
        corpus: probe name -> passages, or None.
        queries: the queries ranked over the corpus.
    """
    pairs = pairs or {}
    texts: list[str] = []
    for frame in pairs.values():
        texts += [*frame[constants.COL_TEXT_A].astype(str), *frame[constants.COL_TEXT_B].astype(str)]
    if retrieval is not None:
        texts += [*retrieval.passages[constants.COL_TEXT], *retrieval.queries[constants.COL_TEXT]]
    if triples is not None:
        from core.probes.retrieval.triples import corpus_of

        ranked = corpus_of(triples)
        texts += [*ranked.queries, *ranked.passages]
    for passages in (corpus or {}).values():
        texts += [*passages, *queries]
    return list(dict.fromkeys(texts))


def _scored_pairs(frame: pd.DataFrame, scores_by: Mapping[IndexSetting, np.ndarray], model: str, probe: str) -> pd.DataFrame:
    """The pairs with the float32 cosine and each setting's score (``score_<setting>``), for the run history."""
    out = frame.reset_index(drop=True).copy()
    out.insert(0, constants.COL_MODEL, model)
    out[constants.COL_SUITE] = probe
    if constants.COL_CATEGORY not in out:
        out[constants.COL_CATEGORY] = constants.MODE_ALL
    out[constants.COL_COSINE] = scores_by[FLOAT32_SETTING]
    for setting, scores in scores_by.items():
        if setting != FLOAT32_SETTING:
            out[f"score_{setting.name}"] = scores
    return out


def _retrieval_result(
    probe: str,
    source: RetrievalSuite | Triples,
    models: list[str],
    rescorers: list[SettingRescorer],
    cache: EmbeddingCache | None,
    options: EncodeOptions,
    boot: Mapping[str, Any],
) -> tuple[RetrievalResult | TriplesResult, pd.DataFrame]:
    """The probe's run under every setting and its NevIR paired accuracy (the suite's; triples have no query pairs)."""
    # The vectors are in the cache (or the model in memory) from the encode above: this run reads them, it does not encode again.
    if probe == PROBE_RETRIEVAL:
        from core.probes.retrieval.run import run_retrieval

        suite = run_retrieval(cast("RetrievalSuite", source), models, cache=cache, mitigations=rescorers, options=options, **boot)
        return suite, suite.paired
    from core.probes.retrieval.triples import run_triples

    return run_triples(cast("Triples", source), models, cache=cache, mitigations=rescorers, options=options, **boot), pd.DataFrame()


def _cell(value: float, low: float, high: float) -> str:
    if pd.isna(value):
        return "n/a"
    if pd.isna(low) or low == high == value:  # no interval, or one no resample can widen (a rate of 0 or 1)
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def wide_table(table: pd.DataFrame, short_name: Callable[[str], str] = str) -> pd.DataFrame:
    """The long table for reading: one row per model, probe, metric and mode, one column per setting, ``value [low, high]``.

    A cell a setting has no figure for (a binary setting at the cosine threshold) reads ``NOT_MADE``.

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
    wide = wide.reindex(columns=list(dict.fromkeys(table["setting"]))).fillna(NOT_MADE)
    return wide.reset_index().rename_axis(columns=None)


# ------------------------------------------------------------------ what changed, in words

_METRIC_WORDS = {
    METRIC_FAILURE_RATE: "failure rate",
    METRIC_MATCH_RATE: "match rate",
    METRIC_FAILURE_RATE_OWN: "failure rate at its own threshold",
    METRIC_MATCH_RATE_OWN: "match rate at its own threshold",
    METRIC_WIN_RATE: "win rate",
    METRIC_PAIRED_ACCURACY: "paired accuracy",
    METRIC_MEAN_SCORE: "mean score",
    METRIC_OWN_THRESHOLD: "own threshold",
}
CHANGE_COLUMNS = [constants.COL_MODEL, "probe", "metric", constants.COL_MODE, "setting", FLOAT32, "value", "ci_low", "ci_high", "change"]


def metric_words(metric: str) -> str:
    """A metric as a reader says it (``recall_at_5`` -> ``recall@5``, ``failure_rate_own_threshold`` -> ...)."""
    if metric in _METRIC_WORDS:
        return _METRIC_WORDS[metric]
    if metric.startswith("recall_at_"):
        return f"recall@{metric.removeprefix('recall_at_')}"
    return metric.replace("_", " ").replace("top", "top ", 1) if metric.startswith("top") else metric.replace("_", " ")


def changed_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The figures a setting moved beyond the intervals: each outside the other's 95% interval (a point without one).

    Only rates, win rates and recall (never a score figure, whose units differ between scales), largest move first.

    Args:
        table: :attr:`IndexSettingsResult.table` (with ``change``).

    Returns:
        Columns :data:`CHANGE_COLUMNS`: the cell's keys, the setting, float32's value, the setting's value with its interval
        and the change; empty when nothing moved.
    """
    keys = [constants.COL_MODEL, "probe", "metric", constants.COL_MODE]
    if table.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    base = table[table["setting"] == FLOAT32][[*keys, "value", "ci_low", "ci_high"]]
    base = base.rename(columns={"value": FLOAT32, "ci_low": "_f_low", "ci_high": "_f_high"})
    others = table[(table["setting"] != FLOAT32) & table["change"].notna() & ~table["metric"].isin(SCORE_METRICS)]
    merged = others.merge(base, on=keys, how="inner")
    low, high = merged["ci_low"].fillna(merged["value"]), merged["ci_high"].fillna(merged["value"])
    f_low, f_high = merged["_f_low"].fillna(merged[FLOAT32]), merged["_f_high"].fillna(merged[FLOAT32])
    outside = ((merged[FLOAT32] < low) | (merged[FLOAT32] > high)) & ((merged["value"] < f_low) | (merged["value"] > f_high))
    moved = merged[outside]
    moved = moved.iloc[np.argsort(-moved["change"].abs().to_numpy(), kind="stable")]
    return moved[CHANGE_COLUMNS].reset_index(drop=True)


# A rate at the cosine threshold and the same rate at the setting's own threshold: what a setting on another scale shows instead.
OWN_THRESHOLD_TWIN = {METRIC_FAILURE_RATE: METRIC_FAILURE_RATE_OWN, METRIC_MATCH_RATE: METRIC_MATCH_RATE_OWN}
CHART_CELL_COLUMNS = ["setting", constants.COL_MODE, "metric", "value", "change", "moved", "own_threshold"]


def chart_cells(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Each setting's figure per mode for a chart of ``metric``, a setting on another scale read at its own threshold.

    A binary setting makes no rate at the cosine threshold (its scores are not cosines); where ``metric`` is such a
    rate, its cell is the same rate at its own calibrated threshold, and its change is against float32's rate at
    float32's own threshold (two rates at calibrated thresholds), never against float32 at the cosine one.

    Args:
        table: rows of :attr:`IndexSettingsResult.table` (with ``change``) for one model and probe.
        metric: the figure charted (``failure_rate``, ``win_rate``, ``mean_score`` ...).

    Returns:
        Columns :data:`CHART_CELL_COLUMNS`, one row per setting other than float32 and mode that has the figure:
        ``metric`` the row read, ``moved`` whether it moved beyond the intervals (:func:`changed_cells`),
        ``own_threshold`` whether it is read at the setting's own threshold in place of ``metric``.

    Raises:
        ValueError: ``metric`` is not in ``table``.
    """
    if metric not in set(table["metric"]):
        raise ValueError(f"no figure {metric!r} in this table; it has {', '.join(map(repr, dict.fromkeys(table['metric'])))}")
    keys = ["setting", constants.COL_MODE]
    rows = table[(table["metric"] == metric) & (table["setting"] != FLOAT32)]
    twin = OWN_THRESHOLD_TWIN.get(metric)
    if twin is not None:
        off = {name for name in dict.fromkeys(table["setting"]) if not parse_setting(name).scale.cosine}
        own = table[(table["metric"] == twin) & table["setting"].isin(off)]
        rows = pd.concat([rows, own[~own.set_index(keys).index.isin(rows.set_index(keys).index)]])
    moved = changed_cells(table)
    marked = set(zip(moved["setting"], moved[constants.COL_MODE], moved["metric"], strict=True))
    out = rows.assign(
        moved=[cell in marked for cell in zip(rows["setting"], rows[constants.COL_MODE], rows["metric"], strict=True)],
        own_threshold=rows["metric"] != metric,
    )
    return out[CHART_CELL_COLUMNS].reset_index(drop=True)


def findings(table: pd.DataFrame, short_name: Callable[[str], str] = str) -> list[str]:
    """One sentence per model: which settings moved a figure beyond its interval against float32, and the largest move.

    Args:
        table: :attr:`IndexSettingsResult.table` (with ``change``).
        short_name: how a model is named (e.g. the registry's short name).
    """
    out: list[str] = []
    moved_all = changed_cells(table)
    for model in dict.fromkeys(table[constants.COL_MODEL]):
        ran = [s for s in dict.fromkeys(table.loc[table[constants.COL_MODEL] == model, "setting"]) if s != FLOAT32]
        if not ran:
            continue
        moved = moved_all[moved_all[constants.COL_MODEL] == model]
        if moved.empty:
            out.append(
                f"{short_name(model)}: no index setting ({', '.join(ran)}) moves a failure rate, win rate or recall "
                "beyond its 95% interval against float32."
            )
            continue
        parts = []
        for setting, rows in list(moved.groupby("setting", sort=False))[:3]:
            top = rows.iloc[0]
            mode = "" if top[constants.COL_MODE] == constants.MODE_ALL else f" on {top[constants.COL_MODE]}"
            figures = f"{len(rows)} figure{'s' if len(rows) > 1 else ''}"
            most = f"{metric_words(top['metric'])}{mode} ({top[FLOAT32]:.2f} to {top['value']:.2f})"
            parts.append(f"{setting} moves {figures}, most the {most}")
        steady = [s for s in ran if s not in set(moved["setting"])]
        rest = len(set(moved["setting"])) - len(parts)
        tail = f"; {rest} more setting{'s move' if rest > 1 else ' moves'} figures too" if rest > 0 else ""
        still = f"; {', '.join(steady)} move{'s' if len(steady) == 1 else ''} nothing beyond the intervals" if steady else ""
        out.append(f"{short_name(model)}: {'; '.join(parts)}{tail}{still}.")
    return out
