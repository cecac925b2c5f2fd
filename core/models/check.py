"""The named model checked against vectors it did not just make (a store's, a file's): 20 passages re-encoded.

Given vectors are audited without a model; a model is needed only to encode
what the vectors lack (queries, texts a store does not hold, variants of a
passage).  Before its vectors are mixed with the given ones, the model
re-encodes a seeded sample of :data:`CHECK_SAMPLE` passages and each fresh
vector must have a cosine of at least :data:`MIN_CHECK_COSINE` with the given
one: otherwise another model made them, and the run stops in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, ProgressFn, model_runs
from core.stats.similarity import unit_rows

CHECK_SAMPLE = 20
# The same model through another backend (torch vs ONNX, another batch size) agrees to 1e-4; another model is far below.
MIN_CHECK_COSINE = 0.99


class ModelMismatch(ValueError):
    """The named model did not make the given vectors, or did not load: one line."""


@dataclass(frozen=True)
class ModelCheck:
    """The named model re-encoding a seeded sample of the given passages: cosine of each fresh vector with its given one.

    Attributes:
        model: the model checked.
        cosines: one per sampled passage.
        rows: passages the sample was drawn from.
    """

    model: str
    cosines: tuple[float, ...]
    rows: int = 0

    @property
    def passed(self) -> bool:
        return bool(self.cosines) and min(self.cosines) >= MIN_CHECK_COSINE

    def sentence(self, where: str, what: str = "stored", name: Callable[[str], str] | None = None) -> str:
        """The check in words, CLI and page alike: "MiniLM-L6 re-encoded 20 of 299 stored passages of <where>: cosine with
        their stored vectors 0.9999 to 1.0000" (how many it checked of how many, which the pages and CLI said two ways).

        Args:
            where: the store or file the passages are of, as shown (no credentials).
            what: how the given vectors are named (``stored``, ``given``).
            name: a model's name as shown; None = the registry's short name.
        """
        from core.models import registry

        shown = (name or registry.short_name)(self.model)
        return (
            f"{shown} re-encoded {len(self.cosines)} of {self.rows:,} {what} passages of {where}: cosine with their {what} vectors "
            f"{min(self.cosines):.4f} to {max(self.cosines):.4f}"
        )

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "sample": len(self.cosines),
            "of_passages": self.rows,
            "min_cosine": min(self.cosines),
            "mean_cosine": float(np.mean(self.cosines)),
        }


def check_sample(n: int, size: int = CHECK_SAMPLE, seed: int = 0) -> np.ndarray:
    """A seeded sample of passage indices (all of them when there are fewer), sorted."""
    return np.sort(np.random.default_rng(seed).choice(n, size=min(size, n), replace=False))


def check_model(model: str, given: np.ndarray, fresh: np.ndarray, what: str = "stored", rows: int = 0) -> ModelCheck:
    """Compare the model's fresh vectors of the sample with the given ones.

    Args:
        model: the model's name.
        given: (s, d) the sample's given vectors; fresh: (s, d') the model's.
        what: how the given vectors are named in a message (``stored``, ``given``).
        rows: passages the sample was drawn from (for the record).

    Raises:
        ModelMismatch: other dimensions, or a cosine below ``MIN_CHECK_COSINE`` (one line: another model made the vectors).
    """
    from core.models import registry

    name = registry.short_name(model)
    if given.shape[1] != fresh.shape[1]:
        raise ModelMismatch(
            f"the {what} vectors have {given.shape[1]} dimensions and {name} makes {fresh.shape[1]}: "
            "name the model that made them with --models"
        )
    cosines = np.einsum("ij,ij->i", unit_rows(given.astype(np.float64)), unit_rows(fresh.astype(np.float64)))
    check = ModelCheck(model, tuple(round(float(c), 6) for c in cosines), rows)
    if not check.passed:
        raise ModelMismatch(
            f"the {what} vectors were not made by {name}: re-encoding {len(cosines)} {what} passages gives cosines "
            f"{min(cosines):.3f} to {max(cosines):.3f} with their {what} vectors (the same model gives >= {MIN_CHECK_COSINE}); "
            "name the model that made them with --models"
        )
    return check


@dataclass
class Checked:
    """The named model, checked on a sample of the given passages, and its vectors of the texts it was asked for."""

    label: str
    vectors: dict[str, np.ndarray]
    report: EncodeReport
    check: ModelCheck
    run: ModelRun


def encode_checked(
    passages: Sequence[str],
    given: np.ndarray,
    model: str,
    texts: Sequence[str],
    *,
    what: str = "stored",
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
) -> Checked:
    """Encode a seeded sample of 20 of ``passages`` and ``texts`` with ``model``; refuse when the sample's vectors do not match.

    Args:
        passages: the n passages the vectors belong to; given: their (n, d) vectors.
        model: the model named as their maker.
        texts: more texts to encode with it (queries, texts the vectors lack).
        what: how the given vectors are named in a message.

    Raises:
        ModelMismatch: the model failed to load or encode, or it did not make the given vectors (:func:`check_model`).
    """
    sample = check_sample(len(passages))
    sample_texts = [passages[i] for i in sample]
    errors: dict[str, str] = {}
    for run in model_runs([model], options, cache=cache, errors=errors, progress=progress):
        encoded = run.encode(list(dict.fromkeys([*sample_texts, *texts])), share=0.3)
        if encoded is None:
            break
        vectors, report = encoded
        check = check_model(run.label, np.asarray(given[sample]), embedding_matrix(vectors, sample_texts), what, len(passages))
        return Checked(run.label, vectors, report, check, run)
    raise ModelMismatch(next(iter(errors.values()), f"{model} did not load"))
