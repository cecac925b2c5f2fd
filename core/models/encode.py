"""Cached, deduplicated encoding of texts by one loaded model."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.models.bounds import model_inputs
from core.models.cache import EmbeddingCache
from core.models.loading import LoadedModel
from core.models.registry import SOURCE_LOCAL
from core.stats.similarity import UnnormalizableRows, unit_checked


@dataclass(frozen=True)
class Truncation:
    """A text longer than the model keeps.

    Attributes:
        text: the text as given (without the model's prompt).
        n_tokens: its token count, special tokens and prompt included; a
            lower bound when ``counted_part`` is set.
        max_tokens: what the model keeps; the rest is cut.
        counted_part: the text was so long that only its first part was
            tokenized and encoded (:mod:`core.models.bounds`); the model keeps
            the same tokens either way.
    """

    text: str
    n_tokens: int
    max_tokens: int
    counted_part: bool = False


@dataclass
class EncodeReport:
    """What one :func:`encode_texts` call did.

    ``device`` and ``batch_size`` say where and how many texts per forward
    pass; ``notes`` carries the model's departures from the registry
    (:attr:`LoadedModel.notes`) so they travel with the results.
    """

    model: str
    device: str = "cpu"
    backend: str = ""  # torch or onnx: what encoded (a bundled torch model may run on its exact ONNX export)
    batch_size: int = 0
    notes: tuple[str, ...] = ()
    n_unique: int = 0
    n_encoded: int = 0
    n_cached: int = 0
    seconds: float = 0.0
    token_counts: dict[str, int] = field(default_factory=dict)
    truncated: list[Truncation] = field(default_factory=list)
    # text -> the first part of it the model was given, for texts cut before tokenizing (core.models.bounds).
    model_parts: dict[str, str] = field(default_factory=dict)
    # Tokens an endpoint reported for this call's requests (0 when all came from the cache); None for local models.
    api_tokens: int | None = None


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def encode_texts(
    model: LoadedModel,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    *,
    batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, np.ndarray], EncodeReport]:
    """Encode each distinct text once, serving what the cache already has.

    The model's prompt is prepended before encoding; misses are sorted by
    length so each batch pads little, and encoded under the model's lock.

    Args:
        model: a loaded model.
        texts: texts in any order, repeats allowed.
        cache: vector cache, or None to encode everything.
        batch_size: texts per forward pass; None uses the model's device default.
        progress: called with (texts encoded so far, texts to encode).

    Returns:
        A mapping text -> (dimension,) L2-normalized float32 vector, and a
        report with counts, timing, token counts and truncations.

    Raises:
        ValueError: ``batch_size`` below 1.
    """
    start = time.perf_counter()
    unique = _unique(texts)
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1; got {batch_size}")
    size = batch_size or model.batch_size
    report = EncodeReport(
        model=model.name, device=model.device, backend=model.meta.backend, batch_size=size, notes=tuple(model.notes), n_unique=len(unique)
    )
    prompt = model.meta.prompt
    limit = model.max_seq_length
    # The tokenizer is shared with encoding and is not safe to call concurrently
    # (a call resets its padding/truncation state), so it goes through the lock too.
    with model.lock:
        # A text far past the limit is cut before tokenizing (core.models.bounds): bounded memory per text.
        inputs = dict(zip(unique, model_inputs(model.tokenizer, [prompt + t for t in unique], limit), strict=True))
    report.token_counts = {t: i.n_tokens for t, i in inputs.items()}
    report.truncated = [Truncation(t, i.n_tokens, limit, i.cut) for t, i in inputs.items() if i.n_tokens > limit]
    report.model_parts = {t: i.text[len(prompt) :] for t, i in inputs.items() if i.cut}

    key = model.cache_key
    found, cache_notes = _read_cache(model, cache, unique) if cache is not None else ({}, ())
    report.notes = (*report.notes, *cache_notes)
    misses = sorted((t for t in unique if t not in found), key=lambda t: report.token_counts[t], reverse=True)
    report.n_cached = len(unique) - len(misses)
    usage_before = model.backend.usage_tokens
    try:
        begin = 0
        requeued: set[str] = set()  # texts encoded again once already: a second time means the model flips sizes
        while begin < len(misses):
            batch = misses[begin : begin + size]
            begin += len(batch)
            with model.lock:
                vectors, norms = _embed(model, [inputs[t].text for t in batch])
            if norms.size:
                note = _norm_note(model, norms)
                if note not in report.notes:
                    report.notes = (*report.notes, note)
            stale = [t for t, v in found.items() if v.shape[0] != vectors.shape[1]]
            if requeued.intersection(stale):
                raise ValueError(
                    f"{model.name} returned vectors of {found[stale[0]].shape[0]} and {vectors.shape[1]} dimensions within one run"
                )
            requeued.update(stale)
            if stale:
                # The model now answers at another size than its cached vectors: say so, and encode those texts again
                # (their rows are overwritten), so no result ever mixes two sizes.
                report.notes = (
                    *report.notes,
                    _dimension_note(model, sorted({found[t].shape[0] for t in stale}), int(vectors.shape[1]), len(stale)),
                )
                for t in stale:
                    del found[t]
                misses.extend(stale)
                report.n_cached -= len(stale)
            # Only whole answered batches are stored: a batch that failed leaves nothing behind.
            if cache is not None:
                cache.put_many(key, batch, vectors)
            found.update(zip(batch, vectors, strict=True))
            report.n_encoded += len(batch)
            if progress is not None:
                progress(report.n_encoded, len(misses))
    finally:
        if usage_before is not None:
            report.api_tokens = int(model.backend.usage_tokens or 0) - int(usage_before)
    report.seconds = time.perf_counter() - start
    if report.n_encoded:
        from core.models.estimate import record_throughput  # the next run's estimate uses this model's real speed here

        record_throughput(model.name, report.n_encoded, report.seconds)
    return found, report


def _read_cache(model: LoadedModel, cache: EmbeddingCache, unique: list[str]) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Serve the cached vectors only when they can be trusted, with the notes that say why some were not.

    Returns:
        A mapping text -> (dimension,) cached vector, and notes on changed weights or mixed sizes.
    """
    changed = _model_change_note(model, cache)
    notes: tuple[str, ...] = (changed,) if changed else ()
    found = cache.get_many(model.cache_key, unique, dimension=model.backend.dimension, unit_norm=True)
    if len({v.shape[0] for v in found.values()}) > 1:
        # Cached under one key at two sizes (a server whose model changed between runs): none of them can be trusted.
        notes = (*notes, _dimension_note(model, sorted({v.shape[0] for v in found.values()}), None, len(found)))
        found = {}
    return found, notes


def _short_fingerprint(fingerprint: str) -> str:
    kind, _, value = fingerprint.partition(":")
    return f"{kind}:{value[:12]}" if value else kind[:12]


def _model_change_note(model: LoadedModel, cache: EmbeddingCache) -> str | None:
    """A note when the cache last saw this model with other weights (their vectors are never served)."""
    if not model.fingerprint:
        return None
    previous = cache.record_fingerprint(f"{model.name}|{model.meta.prompt}", model.fingerprint)
    if previous is None:
        return None
    where = f"the model at {model.name}" if model.meta.source == SOURCE_LOCAL else f"the model {model.name}"
    return (
        f"{where} changed since its vectors were cached (weights {_short_fingerprint(previous)}, now "
        f"{_short_fingerprint(model.fingerprint)}): its texts are encoded again, none is served from the cache"
    )


def _dimension_note(model: LoadedModel, cached: list[int], now: int | None, n: int) -> str:
    """A note that a model's vectors changed size since they were cached (an endpoint's server swapped its model)."""
    sizes = " and ".join(f"{d}-dimensional" for d in cached)
    said = f"now returns {now}-dimensional vectors, its cached ones are {sizes}" if now else f"has cached vectors of two sizes ({sizes})"
    return f"{model.name} {said}: the model behind it changed; its {n} cached text(s) are encoded again, never mixed with the new ones"


def _norm_note(model: LoadedModel, norms: np.ndarray) -> str:
    """A note that a backend returned vectors that were not of unit length, and what was done about them."""
    return (
        f"{model.name} returned vectors not of unit length (norms {float(norms.min()):.3g} to {float(norms.max()):.3g}): "
        "they were normalised before caching and scoring, so its scores are cosines, not dot products"
    )


def _embed(model: LoadedModel, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One forward pass over ``texts``, each fresh row's norm checked (:func:`core.stats.similarity.unit_checked`).

    A chunk larger than the backend's own batch gets its size passed on.

    Returns:
        (unit float32 rows, norms of the rows that were not unit and were normalised here).

    Raises:
        ValueError: a row with no direction (all zeros, NaN, infinity), or not one row per text.
    """
    try:
        raw = model.backend.embed(texts) if len(texts) <= model.batch_size else model.backend.embed(texts, batch_size=len(texts))
        if np.ndim(raw) != 2 or len(raw) != len(texts):
            raise ValueError(f"{model.name} returned vectors of shape {np.shape(raw)} for {len(texts)} text(s); expected one row per text")
        return unit_checked(raw)
    except UnnormalizableRows as exc:
        # Nothing of this batch is cached: a vector with no direction has no cosine.
        named = "; ".join(repr(texts[i][:60]) for i in exc.rows[:3]) + (" …" if len(exc.rows) > 3 else "")
        raise ValueError(
            f"{model.name} gave {len(exc.rows)} vector(s) that are all zeros or not finite, which have no direction "
            f"and no cosine; refused, nothing cached: {named}"
        ) from None


def embedding_matrix(vectors: dict[str, np.ndarray], texts: Sequence[str]) -> np.ndarray:
    """Stack the vectors of ``texts`` in order: (len(texts), dimension)."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([vectors[t] for t in texts])
