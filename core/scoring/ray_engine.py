"""``run --engine ray``: the same scoring job on Ray Data, on this machine or on a cluster.

The checked pairs staged by ``run`` (:func:`core.scoring.chunked.stage_pairs`)
are numbered and read as a Ray dataset; each model then runs ``map_batches``
over it with a pool of actors (:class:`PairScorer`: each actor loads the model
once and scores batches of ``RAY_BATCH_PAIRS`` pairs with
:func:`core.scoring.runner.score_pairs`, so a row is computed exactly as the
local engine computes it), and Ray writes the scored rows as Parquet, one
folder per model, under ``<out>/.ray/``.  The driver then puts each model's
rows back in input order and writes ``pairs.parquet`` and ``pairs.csv`` as
the local engine does (:func:`core.scoring.chunked._assemble`).

Ray starts a local instance by default (``address="local"``: never a cluster
found by accident); ``$RAY_ADDRESS`` (e.g. ``ray://head:10001`` or
``head:6379``) joins a cluster instead.  On a cluster the output folder must
be one every node reads and writes (a shared mount), and every node needs
the project installed (``make setup``).  With ``device="cuda"`` each actor
reserves ``gpus_per_actor`` GPUs.

``audit --engine ray`` uses :func:`encode_on_ray`: the corpus's texts as a
Ray dataset of numbered batches, a :class:`TextEncoder` actor pool, each
vector back with its row, node and cache key; the driver checks every text
came back exactly once and the audit stores the vectors in its cache
(:mod:`core.audit.run`).  Ray Data restarts an actor whose node dies and runs
its batches again, so a node lost mid-run costs time, not rows.

What differs from the local engine (``run``): no embedding cache (actors on other
machines cannot share the sqlite file), so every text is encoded, a text in
several batches perhaps more than once; and one model's results pass through
the driver's memory (as Arrow) when they are put back in order.  Vectors are
the local engine's up to batch composition (padding), so cosines agree within
1e-6.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core import constants
from core.cluster.session import actor_pool_size, ray_session, root_cause
from core.messages import redact
from core.models.encode import encode_texts
from core.models.loading import ModelUnavailable
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.registry import resolve
from core.models.runs import load, model_runs
from core.scoring.chunked import ChunkedResult, ChunkProgress, ModelTally, _assemble, _Silent
from core.scoring.runner import score_pairs

_ROW = "_row"  # the pair's position in the input: Ray does not keep row order
_DEVICE, _BACKEND = "device", "backend"  # where each row was scored, kept in Ray's Parquet output
_TEXT, _VECTOR, _NODE, _KEY = "text", "vector", "node", "cache_key"  # columns of the audit's encoding on Ray
_WORK_FOLDER = ".ray"
_NO_CACHE_NOTE = "the Ray engine uses no embedding cache: every text was encoded by the actors"


class PairScorer:
    """A Ray Data actor: loads one model once, then scores each batch of pairs it is handed.

    Args:
        name: model name.
        options: the run's options; the device is resolved on the actor's node, and a
            backend of None follows the actor's ``$COSINE_PROBE_BACKEND`` (the driver's,
            passed on), else auto.
    """

    def __init__(self, name: str, options: EncodeOptions) -> None:
        self.model = load(name, options)
        self.batch_size = options.batch_size

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Score n pairs: the local engine's n result rows, plus ``device`` and ``backend``."""
        frame, _report = score_pairs(self.model, batch.reset_index(drop=True), cache=None, batch_size=self.batch_size)
        frame[_DEVICE] = self.model.device
        frame[_BACKEND] = self.model.meta.backend
        return frame


class TextEncoder:
    """A Ray Data actor: loads one model once, then encodes each batch of texts it is handed, as the local encoder does.

    Args:
        name: model name.
        options: the run's options (device resolved on the actor's node).
    """

    def __init__(self, name: str, options: EncodeOptions) -> None:
        self.model = load(name, options)
        self.batch_size = options.batch_size

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A batch's vectors, its rows' positions, and the node and cache key that made them."""
        import ray

        texts = [str(t) for t in batch[_TEXT]]
        vectors, _report = encode_texts(self.model, texts, None, batch_size=self.batch_size)
        n = len(texts)
        return {
            _ROW: np.asarray(batch[_ROW], dtype=np.int64),
            _VECTOR: np.stack([vectors[t] for t in texts]).astype(np.float32),
            _NODE: np.array([ray.get_runtime_context().get_node_id()] * n),
            _KEY: np.array([self.model.cache_key] * n),
        }


@dataclass
class RayVectors:
    """Vectors encoded on Ray: one row per text, in the order given.

    Attributes:
        vectors: (n, d) float32 unit vectors.
        cache_key: the embedding cache key of the model the actors loaded.
        nodes: the Ray node id that encoded each text (n).
        notes: one-line notes (actors capped to what the cluster holds).
    """

    vectors: np.ndarray
    cache_key: str
    nodes: list[str]
    notes: list[str] = field(default_factory=list)


def encode_on_ray(
    texts: Sequence[str],
    name: str,
    options: EncodeOptions = DEFAULT_OPTIONS,
    *,
    actors: int | None = None,
    batch_texts: int = constants.RAY_BATCH_TEXTS,
    progress: Callable[[int, int], None] | None = None,
    quiet: bool = False,
) -> RayVectors:
    """Encode ``texts`` with ``name`` on Ray Data (an actor pool), for a corpus too large for one machine's encoder.

    Ray Data restarts an actor whose node dies and runs its batches again, so a node lost mid-run costs time,
    not rows; every text is then checked to come back exactly once (a lost or repeated row is an error, never a
    silent gap).

    Args:
        texts: n >= 1 texts (distinct, as the audit gives them).
        name: model name, id or folder (loaded by each actor).
        options: device, batch size, backend and remote-code opt-ins of every actor.
        actors: actors (None: half the cluster's CPUs, at least one; more than it holds are capped, with a note).
        batch_texts: texts per Ray batch (one block each, so batches spread over the actors).
        progress: called on the driver with (texts back, n) as batches arrive.
        quiet: silence Ray's own log lines while it runs.

    Returns:
        A :class:`RayVectors`.

    Raises:
        ValueError: no text, actors or batch_texts below 1.
        RayUnavailable: ``$RAY_ADDRESS`` names a cluster that cannot be reached or joined.
        RuntimeError: the actors failed, or a text did not come back exactly once.
    """
    if not texts:
        raise ValueError("give at least one text to encode")
    if actors is not None and (isinstance(actors, bool) or actors < 1):
        raise ValueError(f"actors must be at least 1; got {actors}")
    if batch_texts < 1:
        raise ValueError(f"batch_texts must be at least 1; got {batch_texts}")
    n = len(texts)
    rows: list[np.ndarray] = []
    vectors: list[np.ndarray] = []
    nodes: list[str] = []
    keys: set[str] = set()
    notes: list[str] = []
    with ray_session(quiet):
        import ray
        import ray.data

        frames = [
            pd.DataFrame({_TEXT: list(texts[start : start + batch_texts]), _ROW: np.arange(start, min(n, start + batch_texts))})
            for start in range(0, n, batch_texts)
        ]
        pool, note = actor_pool_size(actors, ray.cluster_resources(), options.device)
        if note:
            notes.append(note)
        encoded = ray.data.from_pandas(frames).map_batches(
            TextEncoder,
            fn_constructor_kwargs={"name": name, "options": options},
            batch_format="numpy",
            batch_size=batch_texts,
            compute=ray.data.ActorPoolStrategy(size=pool),
            num_cpus=1,
            num_gpus=constants.RAY_GPUS_PER_ACTOR if options.device == constants.DEVICE_CUDA else 0,
            runtime_env=_preference_env(),
        )
        done = 0
        try:
            for batch in encoded.iter_batches(batch_format="numpy", batch_size=None):
                rows.append(np.asarray(batch[_ROW]))
                vectors.append(np.asarray(batch[_VECTOR]))
                nodes += [str(x) for x in batch[_NODE]]
                keys.update(str(k) for k in batch[_KEY])
                done += len(batch[_ROW])
                if progress is not None:
                    progress(done, n)
        except Exception as exc:
            raise RuntimeError(f"{name}: failed on Ray ({_root_cause(exc)})") from exc
    row = np.concatenate(rows)
    counts = np.bincount(row, minlength=n)
    if row.size != n or counts.size != n or not np.all(counts == 1):
        lost, twice = int(np.sum(counts[:n] == 0)), int(np.sum(counts > 1))
        raise RuntimeError(f"{name}: Ray returned {row.size} vectors for {n} texts ({lost} missing, {twice} repeated)")
    if len(keys) != 1:
        raise RuntimeError(f"{name}: Ray's actors loaded {len(keys)} different versions of the model")
    order = np.argsort(row, kind="stable")
    return RayVectors(np.concatenate(vectors)[order], keys.pop(), [nodes[i] for i in order], notes)


def model_folder(name: str) -> str:
    """The output folder name of a model: its name with ``/`` written as ``__``."""
    return name.replace("/", "__").replace("\\", "__")


def score_staged_ray(
    staged: Path,
    models: Sequence[str],
    out_dir: Path,
    *,
    options: EncodeOptions = DEFAULT_OPTIONS,
    actors: int | None = None,
    gpus_per_actor: float = constants.RAY_GPUS_PER_ACTOR,
    progress: ChunkProgress | None = None,
    write_csv: bool = True,
    quiet: bool = False,
) -> ChunkedResult:
    """Score staged pairs with each model on Ray Data into ``pairs.parquet`` (and ``pairs.csv``), as the local engine does.

    Args:
        staged: checked pairs written by :func:`core.scoring.chunked.stage_pairs` (n rows).
        models: model names, ids or folders; one's failure never stops the others.
        out_dir: folder for the results; Ray's own Parquet goes to ``out_dir/.ray`` meanwhile
            (on a cluster, a folder every node can read and write).
        options: device (resolved on each actor's node), batch size, backend and
            remote-code opt-ins of every actor.
        actors: actors per model (None: half the cluster's CPUs, at least one).
        gpus_per_actor: GPUs each actor reserves when ``device`` is ``cuda``.
        progress: told when each model starts and ends.
        write_csv: also write ``pairs.csv``.
        quiet: silence Ray's own log lines (its Python loggers and its C++ core, which writes to
            file descriptor 2) while it runs; the run's errors are reported afterwards.

    Returns:
        A :class:`~core.scoring.chunked.ChunkedResult`; the files hold ``n * len(result.models)``
        rows, models in order, pairs in input order.  ``actors`` beyond what the cluster can
        hold are capped, with a note.

    Raises:
        ValueError: actors below 1 or a negative GPU share.
        RayUnavailable: ``$RAY_ADDRESS`` names a cluster that cannot be reached or joined.
    """
    import pyarrow.parquet as pq

    if actors is not None and (isinstance(actors, bool) or actors < 1):
        raise ValueError(f"actors must be at least 1; got {actors}")
    if gpus_per_actor < 0:
        raise ValueError(f"gpus_per_actor must not be negative; got {gpus_per_actor}")
    start = time.perf_counter()
    result = ChunkedResult(parquet=out_dir / constants.RESULTS_PARQUET, csv=out_dir / constants.RESULTS_CSV if write_csv else None)
    result.n_pairs = pq.ParquetFile(staged).metadata.num_rows
    # Checked on the driver, before any actor starts: the actors load, the driver only iterates.
    runnable = [run.name for run in model_runs(models, options, cache=None, errors=result.errors) if run.check()]
    work = out_dir / _WORK_FOLDER
    try:
        parts = (
            _score_on_ray(
                staged,
                work,
                runnable,
                result,
                progress=progress or _Silent(),
                options=options,
                actors=actors,
                gpus_per_actor=gpus_per_actor,
                quiet=quiet,
            )
            if runnable
            else []
        )
        result.n_rows = _assemble(parts, result.parquet, result.csv)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.seconds = time.perf_counter() - start
    return result


def _score_on_ray(
    staged: Path,
    work: Path,
    models: list[str],
    result: ChunkedResult,
    *,
    progress: ChunkProgress,
    options: EncodeOptions,
    actors: int | None,
    gpus_per_actor: float,
    quiet: bool = False,
) -> list[Path]:
    """Each model over the staged pairs on Ray; the part files (input order) of the models that ran."""
    work.mkdir(parents=True, exist_ok=True)
    numbered = _numbered(staged, work / "input.parquet")
    parts = []
    with ray_session(quiet):
        import ray
        import ray.data

        dataset = ray.data.read_parquet(str(numbered))
        device = options.device
        pool, note = actor_pool_size(actors, ray.cluster_resources(), device, gpus_per_actor)
        if note:
            result.notes_extra.append(note)
        for i, name in enumerate(models):
            progress.start(name, result.n_pairs)
            part = work / f"part-{i}.parquet"
            try:
                dataset.map_batches(
                    PairScorer,
                    fn_constructor_kwargs={"name": name, "options": options},
                    batch_format="pandas",
                    batch_size=constants.RAY_BATCH_PAIRS,
                    compute=ray.data.ActorPoolStrategy(size=pool),
                    # One logical CPU per actor (it runs two threads): a 2-CPU instance keeps one for reading and writing.
                    num_cpus=1,
                    num_gpus=gpus_per_actor if device == constants.DEVICE_CUDA else 0,
                    # The driver's backend preference reaches actors on every node (a cluster's do not share its environment).
                    runtime_env=_preference_env(),
                ).write_parquet(str(work / model_folder(name)))
                model, tally = _in_input_order(work / model_folder(name), part, name, result.n_pairs)
                tally.batch_size = options.batch_size or constants.BATCH_SIZE_BY_DEVICE.get(tally.device, constants.ENCODE_BATCH_SIZE)
            except Exception as exc:  # noqa: BLE001 - a model failing on Ray must not stop the others
                result.errors[name] = redact(f"{name}: failed on Ray ({_root_cause(exc)})")
                progress.finish(name)
                continue
            progress.advance(name, result.n_pairs)
            progress.finish(name)
            result.models.append(model)
            result.tallies[model] = tally
            parts.append(part)
    return parts


def _preference_env() -> dict | None:
    """``$COSINE_PROBE_BACKEND`` for the actors, when the driver has it set."""
    preference = os.environ.get(constants.BACKEND_ENV_VAR, "").strip()
    return {"env_vars": {constants.BACKEND_ENV_VAR: preference}} if preference else None


def _numbered(staged: Path, target: Path) -> Path:
    """A copy of the staged pairs with each pair's position in ``_row``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, done = None, 0
    try:
        for batch in pq.ParquetFile(staged).iter_batches():
            table = pa.Table.from_batches([batch]).append_column(_ROW, pa.array(range(done, done + batch.num_rows), pa.int64()))
            writer = writer or pq.ParquetWriter(target, table.schema)
            writer.write_table(table)
            done += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    return target


def _in_input_order(folder: Path, part: Path, name: str, n_pairs: int) -> tuple[str, ModelTally]:
    """Ray's output for one model, sorted back into input order and written as the local engine's part file; (model, tally)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(folder).sort_by(_ROW)
    if table.num_rows != n_pairs:
        raise RuntimeError(f"Ray returned {table.num_rows} rows for {n_pairs} pairs")
    first = table.slice(0, 1).to_pylist()[0] if n_pairs else {}
    model = str(first.get(constants.COL_MODEL, name))
    texts = pa.chunked_array(table[constants.COL_TEXT_A].chunks + table[constants.COL_TEXT_B].chunks)
    tokens = pa.chunked_array(table[constants.COL_TOKENS_A].chunks + table[constants.COL_TOKENS_B].chunks)
    limit = _max_tokens(model)
    unique = len(pc.unique(texts))
    tally = ModelTally(
        unique_texts=unique,
        encoded=unique,
        device=str(first.get(_DEVICE, "")),
        backend=str(first.get(_BACKEND, "")),
        notes=[_NO_CACHE_NOTE],
        weights_loaded=True,
        truncated=len(pc.unique(pc.filter(texts, pc.greater(tokens, limit)))) if limit else 0,
    )
    table = table.drop_columns([_ROW, _DEVICE, _BACKEND])
    # Ray may write text as large_string; the parts are copied into one file, so they share the local engine's types.
    schema = pa.schema([f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f for f in table.schema])
    pq.write_table(table.cast(schema), part)
    return model, tally


def _max_tokens(name: str) -> int:
    try:
        return int(resolve(name).max_seq_length or 0)
    except ValueError:
        return 0


def _root_cause(exc: BaseException) -> str:
    return root_cause(exc, (ModelUnavailable,))
