"""Cached, deduplicated encoding of texts by one loaded model."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.constants import ENCODE_BATCH_SIZE
from core.models.cache import EmbeddingCache
from core.models.loading import LoadedModel
from core.models.tokens import token_counts


@dataclass(frozen=True)
class Truncation:
    """A text longer than the model keeps.

    Attributes:
        text: the text as given (without the model's prompt).
        n_tokens: its token count, special tokens and prompt included.
        max_tokens: what the model keeps; the rest is cut.
    """

    text: str
    n_tokens: int
    max_tokens: int


@dataclass
class EncodeReport:
    """What one :func:`encode_texts` call did."""

    model: str
    n_unique: int = 0
    n_encoded: int = 0
    n_cached: int = 0
    seconds: float = 0.0
    token_counts: dict[str, int] = field(default_factory=dict)
    truncated: list[Truncation] = field(default_factory=list)


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def encode_texts(
    model: LoadedModel,
    texts: Sequence[str],
    cache: EmbeddingCache | None = None,
    *,
    batch_size: int = ENCODE_BATCH_SIZE,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, np.ndarray], EncodeReport]:
    """Encode each distinct text once, serving what the cache already has.

    The model's prompt is prepended before encoding; misses are sorted by
    length so each batch pads little, and encoded under the model's lock.

    Args:
        model: a loaded model.
        texts: texts in any order, repeats allowed.
        cache: vector cache, or None to encode everything.
        batch_size: texts per forward pass.
        progress: called with (texts encoded so far, texts to encode).

    Returns:
        A mapping text -> (dimension,) L2-normalized float32 vector, and a
        report with counts, timing, token counts and truncations.
    """
    start = time.perf_counter()
    unique = _unique(texts)
    report = EncodeReport(model=model.name, n_unique=len(unique))
    prompt = model.meta.prompt
    # The tokenizer is shared with encoding and is not safe to call concurrently
    # (a call resets its padding/truncation state), so it goes through the lock too.
    with model.lock:
        counts = token_counts(model.tokenizer, [prompt + t for t in unique])
    report.token_counts = dict(zip(unique, counts, strict=True))
    limit = model.max_seq_length
    report.truncated = [Truncation(t, n, limit) for t, n in report.token_counts.items() if n > limit]

    key = model.meta.cache_key
    found = cache.get_many(key, unique) if cache is not None else {}
    misses = sorted((t for t in unique if t not in found), key=lambda t: report.token_counts[t], reverse=True)
    report.n_cached = len(unique) - len(misses)
    for begin in range(0, len(misses), batch_size):
        batch = misses[begin : begin + batch_size]
        with model.lock:
            vectors = model.backend.embed([prompt + t for t in batch])
        if cache is not None:
            cache.put_many(key, batch, vectors)
        found.update(zip(batch, vectors, strict=True))
        report.n_encoded += len(batch)
        if progress is not None:
            progress(report.n_encoded, len(misses))
    report.seconds = time.perf_counter() - start
    return found, report


def embedding_matrix(vectors: dict[str, np.ndarray], texts: Sequence[str]) -> np.ndarray:
    """Stack the vectors of ``texts`` in order: (len(texts), dimension)."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([vectors[t] for t in texts])
