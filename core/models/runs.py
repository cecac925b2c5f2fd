"""The one "run these models" loop: each model in turn, its weights loaded only when a text is not cached.

Every runner (pairs, chunked, retrieval suite and corpus, triples, BEIR,
the audit) iterates :func:`model_runs`.  Each :class:`ModelRun` hands out a
model for the texts about to be encoded (:meth:`ModelRun.model_for`), after
the options' engine has filled the cache with the texts it lacks
(:mod:`core.models.engines`: nothing for the local engine, Ray actors for
the Ray engine):

* a model already in this process's memory is used as it is;
* when the embedding cache holds every text, a :class:`core.models.warm.CachedModel`
  (no weights read, torch not imported);
* otherwise the model loads once (:func:`core.models.loading.load_model`) and
  stays for the rest of the run.

A model that cannot load or fails while encoding is recorded in the run's
``errors`` (one line, :meth:`ModelRun.fail`, through the one redaction of
secrets, :func:`core.messages.redact`) and the loop goes on with the next
one, so one model's failure never stops the others.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np

from core.constants import DEVICE_AUTO, DEVICE_CPU
from core.messages import counted, redact, typed_first_line
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, encode_texts
from core.models.loading import LoadedModel, ModelUnavailable, availability, in_memory, load_model, load_step
from core.models.options import EncodeOptions
from core.models.warm import cached_model

ProgressFn = Callable[[float, str], None]
"""Progress callback: (fraction done in [0, 1], message)."""


def load(name: str, options: EncodeOptions) -> LoadedModel:
    """Load ``name`` (once per process) as ``options`` say: device, backend, remote code.

    Raises:
        ModelUnavailable: with a one-line reason.
    """
    return load_model(name, allow_remote_code=options.remote_code(name), device=options.device, backend=options.backend)


@dataclass
class ModelRun:
    """One model's turn in a run.

    Attributes:
        name: the model as the caller named it (name, alias, id or folder).
        index: its position in the run (0-based), of ``total``.
        weights_loaded: a model with its weights in memory served this run
            (loaded now, or already loaded in this process); False while every
            text came from the cache.
        failed: it could not load or encode; ``errors`` says why.
        label: the registry name once a model was handed out, else ``name``.
    """

    name: str
    index: int
    total: int
    options: EncodeOptions
    cache: EmbeddingCache | None
    errors: dict[str, str]
    progress: ProgressFn | None = None
    on_load: Callable[[str], None] | None = None
    weights_loaded: bool = False
    failed: bool = False
    label: str = ""
    _loaded: LoadedModel | None = field(default=None, repr=False)
    _done: float = field(default=0.0, repr=False)
    _resources: contextlib.ExitStack | None = field(default=None, repr=False)  # closed when the whole run ends
    _held: set[str] = field(default_factory=set, repr=False)  # names of what _resources holds, shared by the run's models
    _key: str | None = field(default=None, repr=False)  # the cache key the engine's vectors went under
    _elsewhere: int = field(default=0, repr=False)  # texts the engine encoded, not yet in a report
    _notes: list[str] = field(default_factory=list, repr=False)  # the engine's notes, not yet in a report

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    def note(self, fraction: float, message: str) -> None:
        """Report progress within this model's share of the run (``fraction`` in [0, 1]); it never goes back.

        A load in the middle of a model (a later chunk not cached) or a second
        encoding (corpus mode's variants) keeps the bar where it was.
        """
        self._done = max(self._done, min(1.0, max(0.0, fraction)))
        if self.progress is not None:
            self.progress(min(1.0, (self.index + self._done) / max(self.total, 1)), message)

    def model_for(self, texts: Sequence[str]) -> LoadedModel | None:
        """A model that can give a vector for each of ``texts``: in memory, served from the cache, or loaded now.

        Args:
            texts: the texts about to be encoded (without the prompt).

        Returns:
            The model, or None when it cannot load (recorded in ``errors``).

        Raises:
            core.cluster.session.RayUnavailable: the Ray engine cannot join its cluster.
        """
        if self.failed:
            return None
        # The engine fills the cache first (Ray's actors; nothing for the local engine): what follows reads it.
        if not self.options.engine.fill(self, texts):
            return None
        if self._loaded is not None:
            return self._loaded
        remote = self.options.remote_code(self.name)
        # A model already in memory costs nothing and carries its notes (where the load departed from the registry).
        self._loaded = in_memory(self.name, remote, self.options.device, self.options.backend)
        if self._loaded is not None:
            self.weights_loaded = True
            self.label = self._loaded.name
            return self._loaded
        warm = cached_model(
            self.name, texts, self.cache, allow_remote_code=remote, device=self.options.device, backend=self.options.backend
        )
        if warm is not None:
            self.label = warm.name
            return warm
        # Said only when weights really load: the step names a one-off ONNX export and its expected time.
        step = f"{load_step(self.name, self.options.device, self.options.backend)} ({self.index + 1}/{self.total})"
        self.note(0.0, step)
        if self.on_load is not None:
            self.on_load(step)
        try:
            self._loaded = load(self.name, self.options)
        except ModelUnavailable as exc:
            self.failed = True
            self.errors[self.name] = redact(exc)
            return None
        self.weights_loaded = True
        self.label = self._loaded.name
        return self._loaded

    def encode(self, texts: Sequence[str], *, share: float | None = 1.0) -> tuple[dict[str, np.ndarray], EncodeReport] | None:
        """Vectors for ``texts`` (through the cache), or None when the model failed (recorded in ``errors``).

        Args:
            texts: n texts, repeats allowed.
            share: the part of this model's progress the encoding takes (the rest is the caller's scoring);
                None reports none (a caller that encodes in chunks reports its own).

        Returns:
            text -> (dimension,) unit vector, and the encoding report; or None.
        """
        model = self.model_for(texts)
        if model is None:
            return None

        def encoded(done: int, total: int) -> None:
            if share is not None:
                self.note(share * done / max(total, 1), f"{model.name}: encoded {done}/{counted(total, 'new text')}")

        try:
            vectors, report = encode_texts(model, texts, self.cache, batch_size=self.options.batch_size, progress=encoded)
        except Exception as exc:  # noqa: BLE001 - a model's encode may raise anything; the others must still run
            self.fail(exc)
            return None
        return vectors, self.reported(report)

    def reported(self, report: EncodeReport) -> EncodeReport:
        """``report`` with what the engine did since the last report: the texts it encoded count as encoded, not
        as served from the cache, and its notes are added."""
        moved = min(self._elsewhere, report.n_cached)
        report.n_encoded += moved
        report.n_cached -= moved
        report.notes = (*report.notes, *(n for n in self._notes if n not in report.notes))
        self._elsewhere, self._notes = 0, []
        return report

    # What an engine reads and writes of the run (core.models.options.EngineRun).
    def known_key(self) -> str | None:
        """The cache key this model's vectors go under, once known (a loaded model's, or the engine's actors')."""
        return self._loaded.cache_key if self._loaded is not None else self._key

    def encoded_elsewhere(self, key: str, n: int, notes: Sequence[str]) -> None:
        """The engine stored ``n`` texts' vectors under ``key``; ``notes`` say how, for the next report."""
        self._key = key
        self._elsewhere += n
        self._notes += [note for note in notes if note not in self._notes]

    def failed_with(self, line: str) -> None:
        """Record that the model failed, in one line (redacted), before it encoded anything here."""
        self.failed = True
        self.errors[self.name] = redact(line)

    def keep(self, name: str, make: Callable[[], AbstractContextManager]) -> None:
        """Hold the resource ``make()`` opens (a Ray session) until the whole run ends, every model of it; opened at the
        first call under ``name``, later calls of any model of the run find it open."""
        if self._resources is None:
            raise RuntimeError("this run holds no resources: build it with model_runs")
        if name not in self._held:
            self._resources.enter_context(make())
            self._held.add(name)

    def fail(self, exc: BaseException) -> None:
        """Record that the model failed while encoding or scoring; the run goes on with the next model."""
        self.failed = True
        self.errors[self.label] = f"{self.label}: failed while encoding ({typed_first_line(exc)})"

    def check(self) -> bool:
        """Whether the model could load as the options say, checked without loading it (False is recorded in ``errors``).

        For runners that load elsewhere (Ray's actors): availability, then the backend choice on the device.
        """
        from core.models.loaders import loader_for

        avail = availability(self.name, allow_remote_code=self.options.remote_code(self.name))
        if not avail.available:
            self.failed = True
            self.errors[self.name] = redact(f"{avail.name}: {avail.reason}")
            return False
        try:
            meta = registry.resolve(self.name)
            device = DEVICE_CPU if self.options.device == DEVICE_AUTO else self.options.device
            loader_for(meta).backend(meta, self.options.backend, device)
        except ValueError as exc:
            self.failed = True
            self.errors[self.name] = redact(f"{self.name}: {exc}")
            return False
        return True


def model_runs(
    names: Sequence[str],
    options: EncodeOptions,
    *,
    cache: EmbeddingCache | None,
    errors: dict[str, str],
    progress: ProgressFn | None = None,
    on_load: Callable[[str], None] | None = None,
) -> Iterator[ModelRun]:
    """Each model of a run in turn, with progress scaled to its share; failures go to ``errors``.

    Args:
        names: model names, aliases, Hugging Face ids or folders (n).
        options: how every model loads and encodes.
        cache: the embedding cache, or None.
        errors: filled with model -> one-line reason for each model that fails.
        progress: called with (fraction of the whole run done, message).
        on_load: called with a one-line step (e.g. "loading MiniLM-L6 (bundled weights) (1/2)")
            just before a model's weights load; never for a model served from the cache.

    Yields:
        n :class:`ModelRun` values; the caller asks each for its model or its vectors, and passes its own encoding
        reports through :meth:`ModelRun.reported`.  Their ``cache`` is ``cache``, or the one the options' engine needs
        to hand its vectors over in (the Ray engine's, in memory, when ``cache`` is None).
    """
    cache = options.engine.cache_for(cache)
    # What the engine keeps open for the whole run (a Ray instance) closes when the last model is done.
    held: set[str] = set()
    with contextlib.ExitStack() as resources:
        for i, name in enumerate(names):
            run = ModelRun(name, i, len(names), options, cache, errors, progress, on_load, _resources=resources, _held=held)
            run.note(0.0, f"{name}: looking in the embedding cache")
            yield run
            if not run.failed:
                run.note(1.0, f"{run.label}: done")
