"""Where a run's missing vectors are encoded: this process, or a pool of Ray actors that fills the embedding cache.

An engine is a record on :class:`core.models.options.EncodeOptions`
(``engine``), so every runner that goes through :func:`core.models.runs.model_runs`
(pairs, chunked ``run``, the audit, retrieval, triples, BEIR, ...) can use
it with no code of its own.  Before a model's texts are encoded,
:meth:`ModelRun.model_for <core.models.runs.ModelRun.model_for>` asks the
engine to ``fill`` the cache with the ones it lacks:

* :class:`~core.models.options.LocalEngine` does nothing: the run's own
  encoder encodes them here, as always;
* :class:`RayEngine` encodes them on Ray actors (:func:`core.cluster.actors.map_on_actors`:
  a local instance, or the cluster at ``$RAY_ADDRESS``; a lost node's
  batches run again) and stores them in the cache under the key a load of
  the model gives.  The run then reads every vector from the cache, with no
  weights loaded here when the model's key can be predicted
  (:mod:`core.models.warm`), and scores them with the same code as a local
  run.  A second run, local or Ray, finds them in the cache.

With no cache given (``--no-cache``) the Ray engine hands its vectors over in
one in memory for the run (:meth:`RayEngine.cache_for`).  The actors encode
with :func:`core.models.encode.encode_texts` (no cache of their own: actors
on other machines cannot share the sqlite file), handed the texts in the
local encoder's order (most tokens first) in batches of a multiple of its
batch size, so each forward pass holds the texts a local run's would, padded
alike: the vectors, and every cosine, are the local run's (identical on
MiniLM-L3 under ONNX and MiniLM-L6 under torch, measured on the failure-mode
suite).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core import constants
from core.cluster.actors import driver_env, map_on_actors
from core.cluster.session import RayUnavailable, ray_session, root_cause
from core.models.cache import EmbeddingCache
from core.models.encode import encode_texts
from core.models.loading import ModelUnavailable, load_model
from core.models.options import LOCAL_ENGINE, EncodeOptions, Engine, EngineRun

_TEXT, _VECTOR, _KEY = "text", "vector", "cache_key"


class TextEncoder:
    """The Ray encoder's batch function: built once per actor (the model loads once), then called on each batch of texts.

    Args:
        name: model name.
        options: the run's options (device resolved on the actor's node; a backend of None follows the actor's
            ``$COSINE_PROBE_BACKEND``, which the driver passes on).
    """

    def __init__(self, name: str, options: EncodeOptions) -> None:
        self.model = load_model(name, allow_remote_code=options.remote_code(name), device=options.device, backend=options.backend)
        self.batch_size = options.batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """n texts in; their (n, d) float32 unit vectors and the cache key of the model that made them out."""
        texts = [str(t) for t in batch[_TEXT]]
        vectors, _report = encode_texts(self.model, texts, None, batch_size=self.batch_size)
        return {
            _VECTOR: np.stack([vectors[t] for t in texts]).astype(np.float32),
            _KEY: np.array([self.model.cache_key] * len(texts)),
        }


@dataclass(frozen=True)
class RayEngine:
    """Encode the texts the cache lacks on a pool of Ray actors per model, into the cache.

    Attributes:
        actors: actors per model (None: half the cluster's CPUs; more than it holds are capped, with a note).
        batch_texts: texts per Ray batch (one block each, so batches spread over the actors); a multiple of the
            encode batch size (the default, 512, is one of 32, 64 and 128) keeps the vectors the local run's to the bit.
        gpus_per_actor: GPUs each actor reserves under ``device="cuda"``.
        quiet: keep Ray's own log lines off stderr (they never reach stdout).
    """

    actors: int | None = None
    batch_texts: int = constants.RAY_BATCH_TEXTS
    gpus_per_actor: float = constants.RAY_GPUS_PER_ACTOR
    quiet: bool = False
    name: str = field(default=constants.ENGINE_RAY, init=False)

    def __post_init__(self) -> None:
        if self.actors is not None and (isinstance(self.actors, bool) or not isinstance(self.actors, int) or self.actors < 1):
            raise ValueError(f"actors must be at least 1; got {self.actors}")
        if isinstance(self.batch_texts, bool) or not isinstance(self.batch_texts, int) or self.batch_texts < 1:
            raise ValueError(f"batch_texts must be at least 1; got {self.batch_texts}")
        if self.gpus_per_actor < 0:
            raise ValueError(f"gpus_per_actor must not be negative; got {self.gpus_per_actor}")

    def cache_for(self, cache: EmbeddingCache | None) -> EmbeddingCache | None:
        """The caller's cache, else one in memory for the run: the actors' vectors reach the run through it."""
        return cache if cache is not None else EmbeddingCache(False)

    def fill(self, run: EngineRun, texts: Sequence[str]) -> bool:
        """Encode on Ray the texts ``run.cache`` lacks for ``run``'s model, and store them there.

        Returns:
            True when every text is now cached; False when the model failed (recorded in the run's errors).

        Raises:
            RayUnavailable: ``$RAY_ADDRESS`` names a cluster that cannot be reached or joined (every model would fail alike).
        """
        from core.models.warm import predicted_cache_key

        if _served(run.name):
            return True  # a server encodes it whichever engine: the run asks it from here, as a local run does
        cache = run.cache
        if cache is None:  # model_runs gives one (cache_for); a caller building runs by hand may not
            raise ValueError("the Ray engine hands its vectors over in the embedding cache: give the run one")
        unique = list(dict.fromkeys(texts))
        key = run.known_key() or predicted_cache_key(run.name, run.options.remote_code(run.name))
        found = cache.get_many(key, unique, unit_norm=True) if key is not None else {}
        missing = [t for t in unique if t not in found]
        if not missing:
            return True
        if not run.check():
            return False
        missing = _in_encode_order(run.name, missing)
        run.note(0.0, f"{run.name}: encoding {len(missing):,} texts on Ray")

        def arrived(done: int, total: int) -> None:
            run.note(0.6 * done / max(total, 1), f"{run.name}: encoded {done:,}/{total:,} texts on Ray")

        # One Ray session for the whole run (every chunk and model; Ray's lines kept off stdout throughout, where --json
        # prints its document), started only when a text is missing.
        run.keep("ray", lambda: ray_session(self.quiet))
        try:
            got = map_on_actors(
                {_TEXT: missing},
                TextEncoder,
                {"name": run.name, "options": run.options},
                actors=self.actors,
                batch_rows=self.batch_texts,
                device=run.options.device,
                gpus_per_actor=self.gpus_per_actor,
                env=driver_env(constants.BACKEND_ENV_VAR),
                progress=arrived,
                quiet=self.quiet,
            )
        except RayUnavailable:
            raise
        except (RuntimeError, ValueError) as exc:
            run.failed_with(f"{run.name}: failed on Ray ({root_cause(exc, (ModelUnavailable,))})")
            return False
        keys = set(got.columns[_KEY].tolist())
        if len(keys) != 1:
            run.failed_with(f"{run.name}: Ray's actors loaded {len(keys)} different versions of the model")
            return False
        actual = str(keys.pop())
        cache.put_many(actual, missing, got.columns[_VECTOR])
        # Without counts, so a run of many chunks says it once; the report's counts say how many were encoded.
        said = f"the texts not in the embedding cache were encoded on Ray, by actors on {len(set(got.nodes))} node(s)"
        run.encoded_elsewhere(actual, len(missing), [*got.notes, said])
        return True


def _served(name: str) -> bool:
    """Whether a server encodes the model (an endpoint): actors would only relay its requests, with none of its settings."""
    from core.models import registry
    from core.models.loaders import loader_for

    try:
        return not loader_for(registry.resolve(name)).weights_here
    except ValueError:
        return False


def _in_encode_order(name: str, texts: list[str]) -> list[str]:
    """``texts`` in the order the local encoder takes them (most tokens first, ties as given), so that Ray batches of a
    multiple of the encode batch size hold the same forward passes as a local run, padded alike: the same vectors.
    Unchanged when the model's tokenizer cannot be read without loading the model."""
    from core.models import registry
    from core.models.bounds import model_inputs
    from core.models.warm import fast_tokenizer

    try:
        meta = registry.resolve(name)
        tokenizer = fast_tokenizer(meta)
    except (ValueError, OSError):
        return texts
    if tokenizer is None or not meta.max_seq_length:
        return texts
    counts = [i.n_tokens for i in model_inputs(tokenizer, [meta.prompt + t for t in texts], int(meta.max_seq_length))]
    return [texts[i] for i in sorted(range(len(texts)), key=counts.__getitem__, reverse=True)]


ENGINES: dict[str, Engine] = {LOCAL_ENGINE.name: LOCAL_ENGINE, constants.ENGINE_RAY: RayEngine()}
"""Every engine by the name ``--engine`` gives, with its defaults."""


def engine_named(name: str, **settings: object) -> Engine:
    """The engine ``name`` (``local``, ``ray``), its defaults replaced by the ``settings`` it takes (the Ray engine's
    ``actors``, ``quiet``, ...); one it does not take is ignored (``--ray-actors`` with the local engine).

    Raises:
        ValueError: an unknown name, or a setting the engine refuses.
    """
    import dataclasses

    if name not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")
    engine = ENGINES[name]
    taken = {f.name for f in dataclasses.fields(engine) if f.init}  # type: ignore[arg-type]
    return dataclasses.replace(engine, **{k: v for k, v in settings.items() if k in taken})  # type: ignore[type-var]
