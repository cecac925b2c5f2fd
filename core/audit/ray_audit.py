"""The whole audit on Ray: a vectors file partitioned into k-means cells, each cell's pairs verified and classified by a Ray
task, the pairs streamed to Parquet.

The same search as :func:`core.audit.ivf.ivf_close_pairs`, cut where a
cluster can share it:

1. **centroids** (driver): the seeded training rows of :func:`core.audit.ivf.training_rows`
   read from the file, :func:`core.audit.ivf.train_centroids` on them: the
   local run's centroids exactly;
2. **assign** (Ray Data, the file read in blocks): each row's probe list
   (:func:`core.audit.ivf.assign`), and the row sent to each cell it probes,
   marked as at home in the first and a visitor in the others;
3. **verify and classify** (one Ray task per cell, ``groupby("cell").map_groups``):
   :func:`core.audit.ivf.cell_pairs` on the cell's rows, then the audit's one
   rule for each pair (:func:`core.audit.run.pair_rows`: kind, modes, changed
   words); a pair two cells both see is kept by one of them only, decided
   inside each cell, so no cell waits for another;
4. **stream** (driver): the pairs, as Ray hands back blocks, appended to one
   Parquet file (the driver's disk: a cluster needs no shared folder for it).

Ray re-runs the task of a node that dies and rebuilds what it held from
lineage, so a lost node costs time, not pairs; each block reaches the driver
once.  Rows are keyed by the file's ``id`` column (which must be unique: the
file has no other identity a block of it keeps).  The partition is the local
run's, so the pairs are the local run's, cosines equal to float32 rounding
(a cell's product is blocked differently) and each pair's kind identical.

``$RAY_ADDRESS`` joins a cluster unchanged (:func:`core.cluster.session.ray_session`);
the vectors file's path must then be one every node can read (a shared mount,
or a URI Ray Data reads, such as ``s3://``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.audit.ivf import (
    DEFAULT_PROBE,
    assign,
    cell_pairs,
    check_unit,
    default_cells,
    train_centroids,
    training_rows,
)
from core.audit.neighbours import ClosePairs
from core.cluster.session import ray_session, root_cause

ID, TEXT, VECTOR = "id", "text", "vector"
_CELL, _VISITOR, _HOME, _PROBE = "_cell", "_visitor", "_home", "_probe"
COL_NODE = "node"  # the Ray node that verified a pair's cell, kept in the output (where the work ran)
_READ_BATCH = 65_536


@dataclass
class RayAuditResult:
    """What the audit on Ray wrote.

    Attributes:
        pairs_file: the Parquet file of pairs (the audit's pair columns, ids as keys, plus ``node``).
        pairs: rows written.
        rows: rows of the vectors file.
        cells: k-means cells.
        probe: cells each row was compared with.
        nodes: node id -> pairs whose cell it verified.
        seconds: step -> seconds (``centroids``, ``search``).
    """

    pairs_file: Path
    pairs: int
    rows: int
    cells: int
    probe: int
    nodes: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def file_shape(path: Path) -> tuple[int, int]:
    """(rows, dimension) of a vectors Parquet file with ``id``, ``text`` and a fixed-size list ``vector`` column.

    Raises:
        ValueError: a column missing, or ``vector`` not a fixed-size list of floats.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    schema = file.schema_arrow
    missing = [c for c in (ID, TEXT, VECTOR) if c not in schema.names]
    if missing:
        raise ValueError(f"{path.name} has no {', '.join(missing)} column (it needs {ID}, {TEXT} and {VECTOR})")
    kind = schema.field(VECTOR).type
    if not pa.types.is_fixed_size_list(kind) or not pa.types.is_floating(kind.value_type):
        raise ValueError(f"{path.name}: the {VECTOR} column must be a fixed-size list of floats, got {kind}")
    return int(file.metadata.num_rows), int(kind.list_size)


def sample_rows(path: Path, rows: np.ndarray, dim: int) -> np.ndarray:
    """(len(rows), dim) float32: the vectors of the given (ascending) rows, the file read in batches by the driver."""
    import pyarrow.parquet as pq

    out = np.empty((rows.size, dim), dtype=np.float32)
    start = filled = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=_READ_BATCH, columns=[VECTOR]):
        end = start + batch.num_rows
        take = rows[(rows >= start) & (rows < end)] - start
        if take.size:
            flat = batch.column(VECTOR).flatten().to_numpy(zero_copy_only=False).reshape(batch.num_rows, dim)
            out[filled : filled + take.size] = flat[take]
            filled += take.size
        start = end
    return out


def _spread(batch, centroids: np.ndarray, probe: int):
    """A Ray Data task over a block of the file: each row's probe list, and one copy of the row per cell it probes."""
    import pyarrow as pa

    n = batch.num_rows
    column = batch.column(VECTOR)
    vectors = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    dim = vectors.type.list_size
    rows = vectors.flatten().to_numpy(zero_copy_only=False).reshape(n, dim)
    # check_unit wants two rows; a lone row is normalised the same way beside a copy of itself.
    unit = check_unit(rows) if n >= 2 else check_unit(np.vstack([rows, rows]))[:n]
    probes = assign(unit, centroids, probe)
    copies = np.repeat(np.arange(n), probe)
    return pa.table(
        {
            _CELL: pa.array(probes.reshape(-1), pa.int32()),
            _VISITOR: pa.array(np.tile(np.arange(probe) > 0, n)),
            ID: batch.column(ID).take(pa.array(copies)),
            TEXT: batch.column(TEXT).take(pa.array(copies)),
            VECTOR: pa.FixedSizeListArray.from_arrays(pa.array(unit[copies].reshape(-1), pa.float32()), dim),
            _HOME: pa.array(probes[copies, 0], pa.int32()),
            _PROBE: pa.FixedSizeListArray.from_arrays(pa.array(probes[copies].reshape(-1), pa.int32()), probe),
        }
    )


def _verify_cell(group, threshold: float, label: str):
    """A Ray task per cell: its close pairs (:func:`core.audit.ivf.cell_pairs`), classified by the audit's one rule."""
    import pyarrow as pa
    import ray

    from core.audit.run import COL_INDEX_A, COL_INDEX_B, pair_rows

    visitor = group.column(_VISITOR).to_numpy(zero_copy_only=False)
    n, dim = group.num_rows, group.schema.field(VECTOR).type.list_size
    vectors = group.column(VECTOR).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(n, dim)
    ids = np.asarray(group.column(ID).to_pylist(), dtype=object)
    texts = group.column(TEXT).to_pylist()
    probe = group.column(_PROBE).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(n, -1)
    homes = group.column(_HOME).to_numpy(zero_copy_only=False)
    at_home, visiting = np.flatnonzero(~visitor), np.flatnonzero(visitor)
    # Sorted by id inside each side: the cell's result does not depend on the order Ray delivered the rows in.
    at_home = at_home[np.argsort(ids[at_home].astype(str), kind="stable")]
    visiting = visiting[np.argsort(ids[visiting].astype(str), kind="stable")]
    keys = ids.astype(str)
    found = cell_pairs(vectors[at_home], keys[at_home], probe[at_home], vectors[visiting], keys[visiting], homes[visiting], threshold)
    first, second = found.keys(at_home, visiting)  # positions in the group
    # Each pair's ids in order, so a pair reads the same whichever cell kept it.
    swap = keys[first] > keys[second]
    a, b = np.where(swap, second, first), np.where(swap, first, second)
    rows = pair_rows(label, texts, [str(x) for x in ids], ClosePairs(a.astype(np.int64), b.astype(np.int64), found.cosine))
    rows = rows.drop(columns=[COL_INDEX_A, COL_INDEX_B])
    rows[COL_NODE] = ray.get_runtime_context().get_node_id()
    return pa.Table.from_pandas(rows, preserve_index=False)


def ray_audit(
    vectors_path: Path,
    out: Path,
    threshold: float,
    *,
    cells: int | None = None,
    probe: int = DEFAULT_PROBE,
    seed: int = 0,
    label: str = "vectors",
    progress: Callable[[int, str], None] | None = None,
    quiet: bool = False,
) -> RayAuditResult:
    """Audit a vectors file on Ray (a local instance, or the cluster at ``$RAY_ADDRESS``): close pairs, classified, into ``out``.

    Args:
        vectors_path: Parquet with ``id`` (unique), ``text`` and ``vector`` (fixed-size list of floats) columns.
        out: the Parquet file of pairs to write (replaced).
        threshold: keep pairs strictly above this cosine, in [-1, 1].
        cells: k-means cells (None: :func:`core.audit.ivf.default_cells` of the file's rows).
        probe: cells each row is compared with.
        seed: the training sample's and k-means's seed (the local run's, for the same pairs).
        label: the model column's value (the vectors' model, when known).
        progress: called on the driver with (pairs written, message) as blocks of pairs arrive.
        quiet: silence Ray's own log lines while it runs.

    Returns:
        A :class:`RayAuditResult`.

    Raises:
        ValueError: a bad file, threshold, cells or probe.
        core.cluster.session.RayUnavailable: ``$RAY_ADDRESS`` names a cluster that cannot be reached or joined.
        RuntimeError: the run failed on Ray (one line from its deepest cause).
    """
    import pyarrow.parquet as pq

    if not np.isfinite(threshold) or not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    n, dim = file_shape(vectors_path)
    if n < 2:
        raise ValueError(f"{vectors_path.name} holds {n} row(s); an audit compares passages, so it needs at least 2")
    cells = default_cells(n) if cells is None else cells
    if not 1 <= cells <= n or not 1 <= probe <= cells:
        raise ValueError(f"need 1 <= cells <= rows ({n}) and 1 <= probe <= cells, got cells {cells}, probe {probe}")
    clock = time.perf_counter()
    centroids = train_centroids(check_unit(sample_rows(vectors_path, training_rows(n, cells, seed), dim)), cells, seed)
    result = RayAuditResult(out, 0, n, cells, probe, seconds={"centroids": time.perf_counter() - clock})
    clock = time.perf_counter()
    with ray_session(quiet):
        import ray.data
        from ray.data.context import ShuffleStrategy

        context = ray.data.DataContext.get_current()
        # A sort-based shuffle runs as tasks only, which Ray re-runs when a node dies (a hash shuffle's actors die with it).
        before, context.shuffle_strategy = context.shuffle_strategy, ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
        # Ray's stubs type a batch function as taking the batch alone; fn_kwargs hands it the rest.
        spread_fn: Any = _spread
        verify_fn: Any = _verify_cell
        spread = ray.data.read_parquet(str(vectors_path), columns=[ID, TEXT, VECTOR]).map_batches(
            spread_fn, fn_kwargs={"centroids": centroids, "probe": probe}, batch_format="pyarrow"
        )
        pairs = spread.groupby(_CELL, num_partitions=shuffle_partitions(n, probe, cells, ray.cluster_resources())).map_groups(
            verify_fn, fn_kwargs={"threshold": float(threshold), "label": label}, batch_format="pyarrow"
        )
        writer = None
        try:
            for block in cast(Iterable[Any], pairs.iter_batches(batch_format="pyarrow", batch_size=None)):
                if block.num_rows == 0:
                    continue
                writer = writer or pq.ParquetWriter(out, block.schema)
                writer.write_table(block.cast(writer.schema))
                result.pairs += block.num_rows
                for node, count in zip(*np.unique(block.column(COL_NODE).to_numpy(zero_copy_only=False), return_counts=True), strict=True):
                    result.nodes[str(node)] = result.nodes.get(str(node), 0) + int(count)
                if progress is not None:
                    progress(result.pairs, f"{result.pairs:,} close pairs verified and classified on Ray")
        except Exception as exc:
            raise RuntimeError(f"the audit failed on Ray ({root_cause(exc)})") from exc
        finally:
            context.shuffle_strategy = before
            if writer is not None:
                writer.close()
    if writer is None:
        _empty_pairs(out)
    result.seconds["search"] = time.perf_counter() - clock
    return result


def shuffle_partitions(rows: int, probe: int, cells: int, resources: dict) -> int:
    """How many blocks the rows are shuffled into by cell: about 200,000 row copies each (a cell's rows and visitors
    stay in one), at least two per CPU so every node gets work and a lost node loses little, at most one per cell."""
    cpus = max(1, int(resources.get("CPU", 1)))
    return max(1, min(cells, max(2 * cpus, rows * probe // 200_000)))


def _empty_pairs(out: Path) -> None:
    import pandas as pd

    from core.audit.run import COL_INDEX_A, COL_INDEX_B, PAIR_COLUMNS

    columns = [c for c in PAIR_COLUMNS if c not in (COL_INDEX_A, COL_INDEX_B)] + [COL_NODE]
    pd.DataFrame(columns=columns).to_parquet(out, index=False)
