"""How a command or a page run loads and encodes its models: one frozen value passed to every runner.

The CLI builds it from ``--device``, ``--batch-size``, ``--backend``,
``--trust-remote-code`` and ``--engine`` (:func:`core.cli.common.run_options`), the pages from
the sidebar; every runner (pairs, chunked, audit, retrieval, triples, BEIR)
takes it whole and hands it to :mod:`core.models.runs`, so a choice made once
reaches every model a run loads, with no module-level default in between.
It is hashable, so the pages' cached wrappers key on it.

Its ``engine`` says where the texts a cache lacks are encoded: in this
process (:class:`LocalEngine`, the default) or on a pool of Ray actors
(:class:`core.models.engines.RayEngine`), which fills the same embedding
cache the run then reads; everything after the encoding is the same code
whatever the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from core.constants import BACKEND_CHOICES, DEVICE_AUTO, DEVICE_CHOICES, ENGINE_LOCAL
from core.models.cache import EmbeddingCache


class EngineRun(Protocol):
    """What an engine reads and writes of one model's turn in a run (:class:`core.models.runs.ModelRun`)."""

    name: str
    options: EncodeOptions
    cache: EmbeddingCache | None

    def check(self) -> bool: ...

    def note(self, fraction: float, message: str) -> None: ...

    def failed_with(self, line: str) -> None: ...

    def encoded_elsewhere(self, key: str, n: int, notes: Sequence[str]) -> None: ...

    def known_key(self) -> str | None: ...

    def keep(self, name: str, make: Callable[[], AbstractContextManager]) -> None: ...


class Engine(Protocol):
    """Where the texts the embedding cache lacks are encoded: one record per engine, carrying its behaviour."""

    @property
    def name(self) -> str:
        """What ``--engine`` calls it."""
        ...

    def cache_for(self, cache: EmbeddingCache | None) -> EmbeddingCache | None:
        """The cache a run reads: the caller's, or one this engine needs to hand its vectors over in."""
        ...

    def fill(self, run: EngineRun, texts: Sequence[str]) -> bool:
        """Encode the texts of ``run``'s model its cache lacks into the cache; False when the model failed (recorded)."""
        ...


@dataclass(frozen=True)
class LocalEngine:
    """Encode in this process: the run's own encoder encodes what the cache lacks, nothing beforehand."""

    name: str = field(default=ENGINE_LOCAL, init=False)

    def cache_for(self, cache: EmbeddingCache | None) -> EmbeddingCache | None:
        return cache

    def fill(self, run: EngineRun, texts: Sequence[str]) -> bool:
        return True


LOCAL_ENGINE = LocalEngine()


@dataclass(frozen=True)
class EncodeOptions:
    """Where and how models load and encode.

    Attributes:
        device: ``auto``, ``cpu``, ``cuda`` or ``mps``; each model's report says
            where it really ran.
        batch_size: texts per forward pass, or None for each model's device default.
        backend: ``auto``, ``torch`` or ``onnx``; None follows ``$COSINE_PROBE_BACKEND``
            (a preference an ONNX-only model ignores), then ``auto``.
        allow_remote_code: names of the models the user opted in to run remote code for.
        engine: where the texts the cache lacks are encoded (:class:`LocalEngine`, or
            :class:`core.models.engines.RayEngine`); the run reads them from the cache either way.
    """

    device: str = DEVICE_AUTO
    batch_size: int | None = None
    backend: str | None = None
    allow_remote_code: frozenset[str] = field(default_factory=frozenset)
    engine: Engine = LOCAL_ENGINE

    def __post_init__(self) -> None:
        if self.device not in DEVICE_CHOICES:
            raise ValueError(f"device must be one of {', '.join(DEVICE_CHOICES)}; got {self.device!r}")
        if self.batch_size is not None and (
            isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1
        ):
            raise ValueError(f"batch_size must be a whole number of at least 1; got {self.batch_size!r}")
        if self.backend is not None and self.backend.strip().lower() not in BACKEND_CHOICES:
            raise ValueError(f"backend must be one of {', '.join(BACKEND_CHOICES)}; got {self.backend!r}")
        remote = self.allow_remote_code
        if isinstance(remote, str) or not isinstance(remote, Iterable):
            raise ValueError(f"allow_remote_code must be a collection of model names, got {type(remote).__name__}")  # noqa: TRY004 - input errors are ValueErrors here
        # A list or set from a caller becomes a frozenset: the value stays hashable and equal whatever the order.
        object.__setattr__(self, "allow_remote_code", frozenset(str(name) for name in remote))
        if not all(callable(getattr(self.engine, m, None)) for m in ("fill", "cache_for")):
            raise ValueError(f"engine must be an engine record (LocalEngine, RayEngine); got {self.engine!r}")

    def remote_code(self, name: str) -> bool:
        """Whether the user opted in to ``name``'s remote code (by the name they gave)."""
        return name in self.allow_remote_code


DEFAULT_OPTIONS = EncodeOptions()
"""Auto device and backend, each model's batch size, no remote code, this process: what a runner uses when given no options."""
