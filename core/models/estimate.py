"""How long a run will take, before it starts: texts not cached yet × seconds per text, per model.

A run that takes minutes must say so before it starts and give an
ETA while it runs.  The estimate per model is

    texts not in the cache × seconds per text  (+ the load, when its weights are not in memory)
    + every text × the cost of serving a cached one

where "not in the cache" is counted under the key a load would give
(:func:`core.models.warm.predicted_cache_key`, no weights read) and the
seconds per text are this process's measurement of the model
(:func:`record_throughput`, fed by every encoding), else the figure recorded
for the bundled models by ``make bench`` on a 2-core CPU
(``bench/results.json``, ``full_suites_cold``), else a cautious default.
An estimate is a guide, never a promise: the pages say "about".
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.loading import in_memory
from core.models.options import EncodeOptions
from core.models.warm import predicted_cache_key

# Seconds per text encoded, measured by `make bench` (full_suites_cold: the suites' 951 texts, exact ONNX exports,
# 2-core CPU, quiet machine); a busy machine is slower, which this process's own measurement then corrects.
RECORDED_SECONDS_PER_TEXT: dict[str, float] = {
    registry.MINILM_L6: 1 / 281.1,
    registry.MPNET: 1 / 37.8,
    registry.MINILM_L3_ONNX: 1 / 513.0,
    registry.MINILM_L6_INT8: 1 / 269.5,
    registry.E5_SMALL_Q4: 1 / 85.0,
}
DEFAULT_SECONDS_PER_TEXT = 0.05  # a model we have never timed: about a base-size model under load
# Loading weights (and the ONNX session) on the same machine; a model already in memory costs nothing.
RECORDED_LOAD_SECONDS: dict[str, float] = {registry.MPNET: 6.0}
DEFAULT_LOAD_SECONDS = 3.0
CACHED_SECONDS_PER_TEXT = 0.0005  # a cached text: read, tokenized for its token count, scored
_MIN_TIMED_TEXTS = 16  # fewer texts time the call's overhead, not the model
_MEASURED: dict[str, float] = {}
_MEASURED_LOCK = threading.Lock()


@dataclass(frozen=True)
class ModelEstimate:
    """One model's share of a run: texts, those to encode, the seconds expected."""

    model: str
    n_texts: int
    n_to_encode: int
    seconds: float
    loads: bool


@dataclass(frozen=True)
class RunEstimate:
    """A whole run's estimate: its models in turn (they run one after another)."""

    models: tuple[ModelEstimate, ...] = field(default_factory=tuple)

    @property
    def seconds(self) -> float:
        return sum(m.seconds for m in self.models)

    @property
    def n_to_encode(self) -> int:
        return sum(m.n_to_encode for m in self.models)

    def fastest_first(self) -> list[str]:
        """The models ordered by expected seconds (ties keep their order): the fastest answer is never behind the slowest."""
        return [m.model for m in sorted(self.models, key=lambda m: m.seconds)]


def record_throughput(name: str, n_texts: int, seconds: float) -> None:
    """Remember how fast ``name`` encoded in this process (ignored for a handful of texts)."""
    if n_texts >= _MIN_TIMED_TEXTS and seconds > 0:
        with _MEASURED_LOCK:
            _MEASURED[registry.resolve(name).name] = seconds / n_texts


def seconds_per_text(name: str) -> float:
    """Seconds to encode one text with ``name``: measured in this process, else recorded, else the default."""
    key = registry.resolve(name).name
    with _MEASURED_LOCK:
        measured = _MEASURED.get(key)
    return measured if measured is not None else RECORDED_SECONDS_PER_TEXT.get(key, DEFAULT_SECONDS_PER_TEXT)


def estimate_run(models: Sequence[str], texts: Sequence[str], cache: EmbeddingCache | None, options: EncodeOptions) -> RunEstimate:
    """Seconds a run of ``models`` over ``texts`` should take, from what the cache holds and each model's speed.

    Args:
        models: model names, aliases, ids or folders (n).
        texts: every text the run encodes (repeats allowed).
        cache: the embedding cache the run will use, or None (everything is encoded).
        options: how the models load (their remote-code opt-ins and device).

    Returns:
        A :class:`RunEstimate` with n model estimates, in the order given.
    """
    unique = list(dict.fromkeys(texts))
    out = []
    for name in models:
        remote = options.remote_code(name)
        loaded = in_memory(name, remote, options.device, options.backend)
        key = loaded.cache_key if loaded is not None else predicted_cache_key(name, remote)
        cached = cache.count_cached(key, unique) if cache is not None and key is not None else 0
        n_new = max(0, len(unique) - cached)
        loads = n_new > 0 and loaded is None
        canonical = registry.resolve(name).name
        seconds = n_new * seconds_per_text(name) + len(unique) * CACHED_SECONDS_PER_TEXT
        if loads:
            seconds += RECORDED_LOAD_SECONDS.get(canonical, DEFAULT_LOAD_SECONDS)
        out.append(ModelEstimate(name, len(unique), n_new, seconds, loads))
    return RunEstimate(tuple(out))


def about(seconds: float) -> str:
    """An expected duration as a person reads it, rounded as the estimate deserves: "under 5 s", "about 40 s", "about 3 min"."""
    if seconds < 5:
        return "under 5 s"
    if seconds < 60:
        return f"about {int(round(seconds / 5) * 5)} s"
    return f"about {max(1, round(seconds / 60))} min"
