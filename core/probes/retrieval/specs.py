"""Mitigation specs: which mitigation to run and its plain settings, shared by the command line and the page.

A :class:`MitigationSpec` is frozen and hashable, so the page's cached runs
can key on it; its :attr:`~MitigationSpec.name` is the table and
``--mitigate`` code (``bm25-rrf``, ``bm25-weighted:0.3``, ``guard``,
``calibrated``, ``reranker:ID``).  The command line parses its comma list
with :func:`parse_mitigation_specs`; the page builds specs from its widgets;
both turn them into :class:`~core.probes.retrieval.mitigations.Mitigation`
objects with :func:`build_mitigations`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from core import constants
from core.probes.retrieval.mitigations import (
    FUSION_RRF,
    FUSION_WEIGHTED,
    CalibratedFilter,
    ContradictionGuard,
    HybridBM25,
    Mitigation,
    check_weight,
)
from core.probes.retrieval.reranker import CrossEncoderReranker

KINDS = (
    constants.MITIGATION_BM25_RRF,
    constants.MITIGATION_BM25_WEIGHTED,
    constants.MITIGATION_GUARD,
    constants.MITIGATION_CALIBRATED,
    constants.MITIGATION_RERANKER,
)
ACCEPTED = (
    f"{constants.MITIGATION_BM25} (= {constants.MITIGATION_BM25_RRF}), {constants.MITIGATION_BM25_RRF}, "
    f"{constants.MITIGATION_BM25_WEIGHTED}:W (W in [0, 1]), {constants.MITIGATION_GUARD}, {constants.MITIGATION_CALIBRATED}, "
    f"{constants.MITIGATION_RERANKER}:ID (a Hugging Face id or folder of a cross-encoder)"
)


@dataclass(frozen=True)
class MitigationSpec:
    """One mitigation by kind and its plain settings.

    Attributes:
        kind: one of :data:`KINDS`.
        weight: the lexical weight in [0, 1], kept to the 6 significant digits
            its name shows; ``bm25-weighted`` only.
        model_id: the cross-encoder's Hugging Face id or folder; ``reranker`` only.
        thresholds: ``((model, threshold), ...)`` sorted by model; ``calibrated``
            only, and empty until the models are calibrated (a mapping or
            unsorted pairs are accepted and normalised).

    Raises:
        ValueError: an unknown kind, a setting the kind does not take, a
            missing or bad weight or id, or a non-finite threshold.
    """

    kind: str
    weight: float | None = None
    model_id: str | None = None
    thresholds: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown mitigation kind {self.kind!r}; use one of {KINDS}")
        weighted = self.kind == constants.MITIGATION_BM25_WEIGHTED
        reranker = self.kind == constants.MITIGATION_RERANKER
        if weighted != (self.weight is not None):
            raise ValueError(
                f"{constants.MITIGATION_BM25_WEIGHTED} needs the lexical weight, e.g. {constants.MITIGATION_BM25_WEIGHTED}:0.3"
                if weighted
                else f"{self.kind} takes no weight"
            )
        if weighted:
            # The weight its name shows (6 significant digits): a slider's 0.7000000000000001 is the CLI's 0.7, one spec, one history entry.
            object.__setattr__(self, "weight", float(f"{check_weight(self.weight):g}"))  # type: ignore[arg-type]
        model_id = self.model_id.strip() if isinstance(self.model_id, str) else self.model_id
        if reranker != bool(model_id):
            raise ValueError(
                f"name the cross-encoder, e.g. {constants.MITIGATION_RERANKER}:cross-encoder/ms-marco-MiniLM-L6-v2"
                if reranker
                else f"{self.kind} takes no model id"
            )
        object.__setattr__(self, "model_id", model_id or None)
        pairs = tuple(self.thresholds.items()) if isinstance(self.thresholds, Mapping) else tuple(self.thresholds)
        if pairs and self.kind != constants.MITIGATION_CALIBRATED:
            raise ValueError(f"{self.kind} takes no thresholds")
        checked = tuple(sorted((str(m), float(t)) for m, t in pairs))
        bad = {m: t for m, t in checked if not np.isfinite(t)}
        if bad:
            raise ValueError(f"thresholds must be finite numbers, got {bad}")
        object.__setattr__(self, "thresholds", checked)

    @property
    def name(self) -> str:
        """The table and ``--mitigate`` code: ``bm25-weighted:0.3``, ``reranker:ID``, else the kind."""
        if self.kind == constants.MITIGATION_BM25_WEIGHTED:
            return f"{self.kind}:{self.weight:g}"
        if self.kind == constants.MITIGATION_RERANKER:
            return f"{self.kind}:{self.model_id}"
        return self.kind


def _parse_one(item: str) -> MitigationSpec:
    head, sep, arg = item.partition(":")
    key = head.strip().lower()
    arg = arg.strip()
    if key in (constants.MITIGATION_BM25, constants.MITIGATION_BM25_RRF) and not sep:
        return MitigationSpec(constants.MITIGATION_BM25_RRF)
    if key == constants.MITIGATION_BM25_WEIGHTED:
        if not arg:
            raise ValueError(f"{item!r}: give the lexical weight, e.g. {constants.MITIGATION_BM25_WEIGHTED}:0.3")
        return MitigationSpec(key, weight=check_weight(arg))
    if key in (constants.MITIGATION_GUARD, constants.MITIGATION_CALIBRATED) and not sep:
        return MitigationSpec(key)
    if key == constants.MITIGATION_RERANKER:
        if not arg:
            raise ValueError(f"{item!r}: name the cross-encoder, e.g. {constants.MITIGATION_RERANKER}:cross-encoder/ms-marco-MiniLM-L6-v2")
        return MitigationSpec(key, model_id=arg)
    raise ValueError(f"unknown mitigation {item!r}; accepted: {ACCEPTED}")


def parse_mitigation_specs(text: str) -> tuple[MitigationSpec, ...]:
    """The specs of a ``--mitigate`` comma list such as ``"bm25,guard,calibrated,reranker:cross-encoder/ms-marco-MiniLM-L6-v2"``.

    Args:
        text: comma-separated names (see :mod:`core.probes.retrieval.mitigations`);
            case-insensitive except for a reranker's id; blank items are skipped.

    Returns:
        The specs in the order given; ``()`` for a blank list.  A
        ``calibrated`` spec has no thresholds yet (:func:`with_thresholds`).

    Raises:
        ValueError: an unknown name, a bad or missing weight or id, or a
            mitigation listed twice; the message lists what is accepted.
    """
    if not isinstance(text, str):
        raise ValueError(f"the mitigation list must be a string such as 'bm25,guard', got {type(text).__name__}")  # noqa: TRY004 - input errors are ValueErrors here
    out: list[MitigationSpec] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        spec = _parse_one(item)
        if any(s.name == spec.name for s in out):
            raise ValueError(f"mitigation {spec.name!r} is listed twice")
        out.append(spec)
    return tuple(out)


def with_thresholds(specs: Iterable[MitigationSpec], thresholds: Mapping[str, float]) -> tuple[MitigationSpec, ...]:
    """The specs with each model's calibrated threshold given to ``calibrated`` (the others as they are)."""
    return tuple(replace(s, thresholds=tuple(thresholds.items())) if s.kind == constants.MITIGATION_CALIBRATED else s for s in specs)


def build_mitigation(spec: MitigationSpec) -> Mitigation:
    """The :class:`~core.probes.retrieval.mitigations.Mitigation` a spec describes (cheap: nothing is loaded).

    Raises:
        ValueError: ``calibrated`` without thresholds.
    """
    if spec.kind == constants.MITIGATION_BM25_RRF:
        return HybridBM25(FUSION_RRF)
    if spec.kind == constants.MITIGATION_BM25_WEIGHTED:
        return HybridBM25(FUSION_WEIGHTED, spec.weight)
    if spec.kind == constants.MITIGATION_GUARD:
        return ContradictionGuard()
    if spec.kind == constants.MITIGATION_CALIBRATED:
        if not spec.thresholds:
            raise ValueError("calibrated needs each model's calibrated threshold, and none was given")
        return CalibratedFilter(dict(spec.thresholds))
    return CrossEncoderReranker(str(spec.model_id))


def build_mitigations(specs: Sequence[MitigationSpec]) -> list[Mitigation]:
    """:func:`build_mitigation` of each spec, in order.

    Raises:
        ValueError: a spec that is not a :class:`MitigationSpec`, or as :func:`build_mitigation`.
    """
    bad = [type(s).__name__ for s in specs if not isinstance(s, MitigationSpec)]
    if bad:
        raise ValueError(f"mitigations must be MitigationSpecs, got {bad}")
    return [build_mitigation(s) for s in specs]
