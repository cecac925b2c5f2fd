"""Applying mitigations to score matrices, for every retrieval run (suite, corpus).

A mitigation is any object with a ``name`` and
``rescore(queries, passages, dense, *, model) -> scores`` (the protocol is
:class:`core.probes.retrieval.mitigations.Mitigation`): ``dense`` is the
``(n_queries, n_passages)`` cosine matrix, the result has the same shape,
higher ranks higher and ``-inf`` filters a passage out.  Here: the cosine
matrix itself, the check of what a mitigation returned, the check of a
mitigation list, and the one-line record of a mitigation that failed on one
model (the others, and the other models, still run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from core import constants
from core.messages import typed_first_line
from core.models.encode import embedding_matrix
from core.stats.similarity import cos_sim


def cosine_matrix(vectors: dict[str, np.ndarray], queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """Cosine of each query with each passage, shape ``(n_queries, n_passages)``, from unit vectors by text."""
    if not queries or not passages:
        return np.zeros((len(queries), len(passages)))
    # The one cosine (core.stats.similarity), normalising inside.
    return cos_sim(embedding_matrix(vectors, list(queries)), embedding_matrix(vectors, list(passages)))


def checked_scores(out: Any, dense: np.ndarray, name: str) -> np.ndarray:
    """What mitigation ``name`` returned, as floats of ``dense``'s shape.

    Raises:
        ValueError: another shape, or NaN.
    """
    arr = np.asarray(out, dtype=float)
    if arr.shape != dense.shape:
        raise ValueError(f"{name}.rescore returned shape {arr.shape}, expected {dense.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name}.rescore returned NaN")
    return arr


def check_names(mitigations: Sequence[Any]) -> None:
    """Refuse mitigations without a name, with a repeated name, or named ``none`` (the dense scores).

    Raises:
        ValueError: naming the problem.
    """
    names = [getattr(m, "name", None) for m in mitigations]
    if any(not isinstance(n, str) or not n for n in names):
        raise ValueError("every mitigation needs a non-empty name")
    if constants.MITIGATION_NONE in names or len(set(names)) < len(names):
        raise ValueError(f"mitigation names must be unique and not {constants.MITIGATION_NONE!r}: {names}")


def record_failure(errors: dict[str, str], model: str, mitigation: str, exc: BaseException) -> None:
    """Record a mitigation that failed on one model, under ``model + mitigation``, in one line."""
    errors[f"{model} + {mitigation}"] = f"{model} + {mitigation}: {typed_first_line(exc)}"
