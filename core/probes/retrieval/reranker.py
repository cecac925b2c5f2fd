"""A cross-encoder or NLI model as a reranker, by Hugging Face id or local folder.

A bi-encoder scores query and passage apart; a cross-encoder reads them
together, which is what NevIR found separates a negated passage from its
original (paired accuracy 50.6% for the best cross-encoder against 6.8-11.1%
for bi-encoders).  Two kinds of model are accepted:

* a relevance cross-encoder (one output, e.g. ``cross-encoder/ms-marco-MiniLM-L6-v2``):
  the score is its logit for the pair ``(query, passage)``;
* an NLI model (labels contradiction / entailment / neutral, e.g.
  ``cross-encoder/nli-deberta-v3-small``): the passage is the premise and the
  query the hypothesis, and the score is the entailment logit minus the
  contradiction logit, so a passage that contradicts the query sinks.

The model is found where the user has it, as any model is
(``core.models.loading.availability``): a local folder, the local Hugging
Face cache, or the hub, probed for at most ``HUB_TIMEOUT_SECONDS``; a model
found nowhere raises :class:`~core.models.loading.ModelUnavailable` with the
reason, never a hang.  Nothing is loaded until the first ``rescore``, and a
loaded model is shared by the process.

Only each query's ``RERANK_TOP_K`` best passages by cosine are read by the
model (a cross-encoder costs one forward pass per pair); the others keep
their cosine order below every reranked passage.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from core import constants
from core.models.loading import Availability, ModelUnavailable, availability
from core.models.registry import SOURCE_BUNDLED, SOURCE_LOCAL, resolve

NLI_ENTAILMENT = "entailment"
NLI_CONTRADICTION = "contradiction"
KIND_RELEVANCE = "relevance"
KIND_NLI = "nli"

_LOADED: dict[str, tuple[Any, str]] = {}
_LOCK = threading.Lock()


def model_kind(num_labels: int, id2label: dict[int, str] | None) -> str:
    """``relevance`` for one output, ``nli`` for labels that include entailment and contradiction.

    Raises:
        ValueError: For any other head, which this reranker cannot turn into one score.
    """
    labels = {str(v).lower() for v in (id2label or {}).values()}
    if num_labels == 1:
        return KIND_RELEVANCE
    if {NLI_ENTAILMENT, NLI_CONTRADICTION} <= labels:
        return KIND_NLI
    raise ValueError(
        f"a model with {num_labels} outputs labelled {sorted(labels)} is neither a relevance cross-encoder (one output) "
        f"nor an NLI model ({NLI_ENTAILMENT}/{NLI_CONTRADICTION} labels)"
    )


def nli_score(logits: np.ndarray, id2label: dict[int, str]) -> np.ndarray:
    """Entailment logit minus contradiction logit.

    Args:
        logits: Shape ``(n_pairs, n_labels)``.
        id2label: Column index -> label name (case-insensitive).

    Returns:
        Shape ``(n_pairs,)``.
    """
    index = {str(v).lower(): int(k) for k, v in id2label.items()}
    return logits[:, index[NLI_ENTAILMENT]] - logits[:, index[NLI_CONTRADICTION]]


def _load(model_id: str) -> tuple[Any, str]:
    """The CrossEncoder for ``model_id`` and its kind, loaded once per process.

    Raises:
        ModelUnavailable: If it cannot be found or loaded, or is not a reranker.
    """
    with _LOCK:
        if model_id in _LOADED:
            return _LOADED[model_id]
        found = reranker_availability(model_id)
        if not found.available:
            raise ModelUnavailable(f"{model_id}: {found.reason}")
        meta = resolve(model_id)
        from core.models.backends import HF_LOAD_LOCK

        try:
            with HF_LOAD_LOCK:
                from sentence_transformers import CrossEncoder

                if meta.source == SOURCE_LOCAL:
                    model = CrossEncoder(meta.local_path or meta.name, local_files_only=True)
                else:
                    model = CrossEncoder(meta.hf_id or meta.name, local_files_only=found.status == "cached")
        except Exception as exc:  # noqa: BLE001 - third-party loaders raise anything
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            raise ModelUnavailable(f"{model_id}: failed to load as a cross-encoder ({type(exc).__name__}: {first})") from exc
        try:
            kind = model_kind(model.num_labels, getattr(model.config, "id2label", None))
        except ValueError as exc:
            raise ModelUnavailable(f"{model_id}: {exc}") from exc
        _LOADED[model_id] = (model, kind)
        return model, kind


def reranker_availability(model_id: str) -> Availability:
    """Whether a cross-encoder can be loaded here, and why not, within ``HUB_TIMEOUT_SECONDS``.

    The bundled models are bi-encoders, so naming one is refused here.
    """
    try:
        meta = resolve(model_id)
    except ValueError as exc:
        return Availability(model_id or "", False, "unavailable", str(exc))
    if meta.source == SOURCE_BUNDLED:
        return Availability(meta.name, False, "unavailable", "a bundled embedding model (bi-encoder), not a cross-encoder")
    return availability(model_id)


def nli_labels(model_id: str, pairs: Sequence[tuple[str, str]], batch_size: int = constants.ENCODE_BATCH_SIZE) -> list[str]:
    """An NLI model's label (its highest logit, lower case: ``contradiction``, ``entailment``, ...) for each (premise, hypothesis) pair.

    The corpus audit's optional judge: how many confusable twins a cross-encoder reads as contradictions.

    Raises:
        ModelUnavailable: the model cannot be found or loaded here, or is not an NLI model.
    """
    model, kind = _load(model_id)
    if kind != KIND_NLI:
        raise ModelUnavailable(f"{model_id}: a relevance cross-encoder (one output), not an NLI model with a contradiction label")
    if not pairs:
        return []
    import torch

    logits = np.asarray(
        model.predict(
            list(pairs), batch_size=batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False, convert_to_numpy=True
        ),
        dtype=float,
    ).reshape(len(pairs), -1)
    names = {int(k): str(v).lower() for k, v in model.config.id2label.items()}
    return [names[int(i)] for i in np.argmax(logits, axis=1)]


class CrossEncoderReranker:
    """Rescore each query's best passages with a cross-encoder or NLI model (see the module docstring)."""

    def __init__(self, model_id: str, top_k: int = constants.RERANK_TOP_K, batch_size: int = constants.ENCODE_BATCH_SIZE):
        """Args:
        model_id: Hugging Face id or local folder of the cross-encoder.
        top_k: Passages per query the model reads, >= 1.
        batch_size: Pairs per forward pass.

        Raises:
            ValueError: For an empty id or a ``top_k`` below 1.
        """
        if not isinstance(model_id, str) or not model_id.strip():
            raise ValueError("the reranker needs a model id or folder, e.g. reranker:cross-encoder/ms-marco-MiniLM-L6-v2")
        if int(top_k) < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        self.model_id = model_id.strip()
        self.top_k = int(top_k)
        self.batch_size = int(batch_size)
        self.name = f"{constants.MITIGATION_RERANKER}:{self.model_id}"

    def availability(self) -> Availability:
        """Whether the model can be loaded here (bounded wait; loads nothing)."""
        return reranker_availability(self.model_id)

    def pair_scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The model's score of each (query, passage) pair, shape ``(n_pairs,)``.

        Raises:
            ModelUnavailable: If the model cannot be loaded.
        """
        model, kind = _load(self.model_id)
        if not pairs:
            return np.zeros(0)
        import torch

        ordered = [(p, q) for q, p in pairs] if kind == KIND_NLI else list(pairs)
        logits = np.asarray(
            model.predict(
                ordered, batch_size=self.batch_size, activation_fn=torch.nn.Identity(), show_progress_bar=False, convert_to_numpy=True
            ),
            dtype=float,
        )
        if kind == KIND_NLI:
            return nli_score(logits.reshape(len(pairs), -1), model.config.id2label)
        return logits.reshape(len(pairs))

    def rescore(self, queries: Sequence[str], passages: Sequence[str], dense: np.ndarray, *, model: str) -> np.ndarray:
        """Cross-encoder scores for each query's ``top_k`` passages, the rest below in cosine order.

        ``model`` (the bi-encoder) only chose the candidates through ``dense``.

        Raises:
            ValueError: If ``dense`` does not match the texts.
            ModelUnavailable: If the cross-encoder cannot be loaded.
        """
        matrix = np.asarray(dense, dtype=float)
        if matrix.shape != (len(queries), len(passages)):
            raise ValueError(f"dense has shape {matrix.shape}; expected ({len(queries)}, {len(passages)})")
        if np.isnan(matrix).any() or np.isposinf(matrix).any():
            raise ValueError("dense holds NaN or +inf; scores must be finite, or -inf for a filtered passage")
        picks = []
        for row in matrix:
            finite = np.flatnonzero(np.isfinite(row))
            picks.append(finite[np.argsort(-row[finite], kind="stable")][: self.top_k])
        scores = self.pair_scores([(queries[i], passages[j]) for i, pick in enumerate(picks) for j in pick])
        out = np.full(matrix.shape, -np.inf)
        at = 0
        for i, pick in enumerate(picks):
            reranked = scores[at : at + len(pick)]
            at += len(pick)
            rest = np.setdiff1d(np.flatnonzero(np.isfinite(matrix[i])), pick)
            out[i, pick] = reranked
            if rest.size:
                # Below the lowest reranked score, still in cosine order (cosines lie in [-1, 1]).
                base = reranked.min() if reranked.size else 0.0
                out[i, rest] = base - 2.0 + matrix[i, rest] / 2.0
        return out

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.model_id!r}, top_k={self.top_k})"
