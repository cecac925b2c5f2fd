"""A batch function run over numbered rows on a pool of Ray actors, every row back exactly once, with the node that ran it.

The packages above hand their work here as a class and its keyword arguments
(:func:`map_on_actors`): each actor builds one instance (a model loads once
per actor) and calls it on each batch it is handed.  Ray Data spreads the
batches over the actors, restarts an actor whose node dies and runs its
batches again, so a node lost mid-run costs time, not rows; the driver then
checks that every row came back exactly once (a lost or repeated row is an
error, never a silent gap) and puts them back in input order.  Nothing here
knows models or texts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core import constants
from core.cluster.session import actor_pool_size, ray_session

_ROW = "_row"  # each row's position in the input: Ray does not keep row order
_NODE = "_node"  # the Ray node id of the actor that ran the row

BatchFn = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
"""What each actor builds once and calls per batch: columns of n rows in, columns of n rows out."""


@dataclass
class ActorRows:
    """What the actors returned, in input order.

    Attributes:
        columns: each output column, n rows.
        nodes: the Ray node id that ran each row (n).
        notes: one-line notes (actors capped to what the cluster holds).
    """

    columns: dict[str, np.ndarray]
    nodes: list[str]
    notes: list[str] = field(default_factory=list)


class _OnActor:
    """A Ray Data actor: builds ``make(**kwargs)`` once, then runs it on each batch and names its node."""

    def __init__(self, make: Callable[..., BatchFn], kwargs: Mapping[str, object]) -> None:
        self.fn = make(**kwargs)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        import ray

        rows = np.asarray(batch.pop(_ROW), dtype=np.int64)
        out = dict(self.fn(batch))
        out[_ROW] = rows
        out[_NODE] = np.array([ray.get_runtime_context().get_node_id()] * len(rows))
        return out


def map_on_actors(
    columns: Mapping[str, Sequence],
    make: Callable[..., BatchFn],
    kwargs: Mapping[str, object],
    *,
    actors: int | None = None,
    batch_rows: int = constants.RAY_BATCH_TEXTS,
    device: str = constants.DEVICE_CPU,
    gpus_per_actor: float = constants.RAY_GPUS_PER_ACTOR,
    env: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    quiet: bool = False,
) -> ActorRows:
    """Run ``make(**kwargs)`` on every batch of ``columns`` on a pool of Ray actors (the running Ray, else a new session).

    Args:
        columns: n >= 1 rows as named columns of equal length; batches of ``batch_rows`` consecutive rows.
        make: an importable class (or function) building the batch function; each actor calls it once.
        kwargs: its keyword arguments (pickled to every actor).
        actors: pool size (None: half the cluster's CPUs, at least one; more than it holds are capped, with a note).
        batch_rows: rows per batch (one block each, so batches spread over the actors).
        device: where the actors compute; on ``cuda`` each reserves ``gpus_per_actor`` GPUs.
        gpus_per_actor: GPUs each actor reserves on ``cuda``.
        env: environment variables every actor gets (a cluster's nodes do not share the driver's).
        progress: called on the driver with (rows back, n) as batches arrive.
        quiet: silence Ray's own log lines while it runs.

    Returns:
        An :class:`ActorRows` in input order.

    Raises:
        ValueError: no row, columns of different lengths, actors or batch_rows below 1, a negative GPU share.
        core.cluster.session.RayUnavailable: ``$RAY_ADDRESS`` names a cluster that cannot be reached or joined.
        RuntimeError: an actor failed (its error is the cause), or a row did not come back exactly once.
    """
    lengths = {len(v) for v in columns.values()}
    if len(lengths) != 1 or not next(iter(lengths)):
        raise ValueError("give at least one row, every column of the same length")
    if actors is not None and (isinstance(actors, bool) or actors < 1):
        raise ValueError(f"actors must be at least 1; got {actors}")
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1; got {batch_rows}")
    if gpus_per_actor < 0:
        raise ValueError(f"gpus_per_actor must not be negative; got {gpus_per_actor}")
    import pandas as pd

    n = lengths.pop()
    frames = [
        pd.DataFrame(
            {**{k: list(v[start : start + batch_rows]) for k, v in columns.items()}, _ROW: np.arange(start, min(n, start + batch_rows))}
        )
        for start in range(0, n, batch_rows)
    ]
    parts: list[dict[str, np.ndarray]] = []
    notes: list[str] = []
    with ray_session(quiet):
        import ray
        import ray.data

        pool, note = actor_pool_size(actors, ray.cluster_resources(), device, gpus_per_actor)
        if note:
            notes.append(note)
        results = ray.data.from_pandas(frames).map_batches(
            _OnActor,
            fn_constructor_kwargs={"make": make, "kwargs": dict(kwargs)},
            batch_format="numpy",
            batch_size=batch_rows,
            compute=ray.data.ActorPoolStrategy(size=pool),
            # One logical CPU per actor: a 2-CPU instance keeps one for reading and writing.
            num_cpus=1,
            num_gpus=gpus_per_actor if device == constants.DEVICE_CUDA else 0,
            runtime_env={"env_vars": dict(env)} if env else None,
        )
        done = 0
        try:
            for batch in results.iter_batches(batch_format="numpy", batch_size=None):
                parts.append({str(k): np.asarray(v) for k, v in batch.items()})
                done += len(batch[_ROW])
                if progress is not None:
                    progress(done, n)
        except Exception as exc:
            raise RuntimeError("an actor failed") from exc
    return _in_input_order(parts, n, notes)


def _in_input_order(parts: list[dict[str, np.ndarray]], n: int, notes: list[str]) -> ActorRows:
    """The batches that came back, sorted into input order; each of the n rows exactly once, else an error."""
    row = np.concatenate([p[_ROW] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    counts = np.bincount(row, minlength=n)
    if row.size != n or counts.size != n or not np.all(counts == 1):
        lost, twice = int(np.sum(counts[:n] == 0)), int(np.sum(counts > 1))
        raise RuntimeError(f"Ray returned {row.size} rows for {n} ({lost} missing, {twice} repeated)")
    order = np.argsort(row, kind="stable")
    names = [k for k in parts[0] if k not in (_ROW, _NODE)]
    columns = {k: np.concatenate([p[k] for p in parts])[order] for k in names}
    nodes = np.concatenate([p[_NODE] for p in parts])[order]
    return ActorRows(columns, [str(x) for x in nodes], notes)


def driver_env(*names: str) -> dict[str, str]:
    """The driver's values of these environment variables (the set ones), for the actors on every node."""
    return {name: os.environ[name].strip() for name in names if os.environ.get(name, "").strip()}
