"""The whole audit on a real three-node Ray cluster on this machine, a worker node killed mid-run: the local run's pairs.

A head node (1 CPU) and two worker nodes (1 CPU each) are started with
``ray.cluster_utils.Cluster``; the vectors file is read by Ray Data in
blocks, spread to its cells, and each cell's pairs verified and classified by
a Ray task (:func:`core.audit.ray_audit.ray_audit`).  When the first block of
pairs reaches the driver, one worker node is killed (its raylet and every
process on it, not gracefully).  Ray re-runs the lost tasks elsewhere and
rebuilds what the node held from lineage; the pairs must then be the local
run's (:func:`core.audit.ivf.ivf_close_pairs` with the same cells), none
lost, none doubled, each with the same kind.

Three Ray nodes on 2 shared cores take minutes, more than ``make test``'s
budget, so ``make test`` runs the lighter form (``test_ray_audit.py``, the
local instance) and this runs in ``make bench`` (``python -m bench
audit_ray_partitions`` sets ``$COSINE_PROBE_RAY_CLUSTER_TEST=1``).
"""

from __future__ import annotations

import os
import time

import pandas as pd
import pytest

from core.audit.ray_audit import ray_audit
from tests.core.audit.test_ray_audit import CELLS, PROBE, THRESHOLD, assert_same_pairs, local_pairs
from tests.core.audit.vectors_files import write_vectors_file

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.skipif(
    os.environ.get("COSINE_PROBE_RAY_CLUSTER_TEST") != "1", reason="a three-node Ray cluster: make bench (COSINE_PROBE_RAY_CLUSTER_TEST=1)"
)
ROWS = 2_000
# The dead node is noticed in about 2 s instead of Ray's default 30 s: the test waits on it.
FAST_FAILURE = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_failure_threshold": 4}


@pytest.fixture(scope="module")
def cluster():
    made = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False, "_system_config": FAST_FAILURE}
    )
    workers = [made.add_node(num_cpus=1), made.add_node(num_cpus=1)]
    made.wait_for_nodes()
    ray.init(address=made.address, log_to_driver=False, logging_level="WARNING")
    yield made, workers
    ray.shutdown()
    made.shutdown()


def test_a_worker_node_killed_mid_run_loses_and_doubles_no_pair(cluster, tmp_path):
    made, workers = cluster
    matrix, ids, texts = write_vectors_file(tmp_path / "v.parquet", ROWS, twins=30)
    local = local_pairs(matrix, ids, texts)
    assert len(ray.nodes()) == 3
    killed: list[str] = []

    def kill_once(pairs: int, _message: str) -> None:
        if not killed:
            killed.append(workers[0].node_id)
            made.remove_node(workers[0], allow_graceful=False)

    result = ray_audit(tmp_path / "v.parquet", tmp_path / "pairs.parquet", THRESHOLD, cells=CELLS, probe=PROBE, progress=kill_once)
    assert killed, "no block of pairs arrived before the end: nothing was killed mid-run"
    assert_same_pairs(pd.read_parquet(tmp_path / "pairs.parquet"), local)
    assert result.pairs == len(local)
    # The head marks the node dead after its health checks fail (seconds, longer on busy cores).
    deadline = time.monotonic() + 120
    while killed[0] in (alive := {n["NodeID"] for n in ray.nodes() if n["Alive"]}) and time.monotonic() < deadline:
        time.sleep(1)
    assert killed[0] not in alive and len(alive) == 2
