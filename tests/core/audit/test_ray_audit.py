"""The whole audit on Ray over a vectors file, on the local Ray instance: the local IVF run's pairs, each once, kinds alike.

The full form (a three-node cluster on this machine, a worker node killed
mid-run) is ``tests/core/audit/test_ray_audit_cluster.py``, run by ``make bench``
(``python -m bench audit_ray_partitions``).
"""

from __future__ import annotations

import pandas as pd
import pytest

from core.audit.ivf import ivf_close_pairs
from core.audit.ray_audit import COL_NODE, file_shape, ray_audit
from core.audit.run import pair_rows
from tests.core.audit.vectors_files import write_vectors_file

pytest.importorskip("ray")

THRESHOLD = 0.8
ROWS, CELLS, PROBE = 600, 12, 3


def local_pairs(matrix, ids, texts) -> pd.DataFrame:
    """The local run of the same search: :func:`ivf_close_pairs` with the same cells, probe and seed, classified alike."""
    found, _ = ivf_close_pairs(matrix.copy(), THRESHOLD, cells=CELLS, probe=PROBE, recall_sample=0)
    return pair_rows("vectors", texts, ids, found)


def by_pair(frame: pd.DataFrame) -> dict:
    return {frozenset((r.id_a, r.id_b)): (r.kind, r.mode, r.cosine) for r in frame.itertuples()}


def assert_same_pairs(ray_frame: pd.DataFrame, local: pd.DataFrame) -> None:
    mine, theirs = by_pair(local), by_pair(ray_frame)
    assert len(ray_frame) == len(theirs), "a pair was written twice"
    assert theirs.keys() == mine.keys()
    assert all(theirs[p][:2] == mine[p][:2] and abs(theirs[p][2] - mine[p][2]) < 1e-6 for p in mine)
    assert (ray_frame["id_a"] < ray_frame["id_b"]).all()


def test_the_audit_on_ray_lists_the_local_runs_pairs_once_each(ray_instance, tmp_path):
    matrix, ids, texts = write_vectors_file(tmp_path / "v.parquet", ROWS, twins=10)
    local = local_pairs(matrix, ids, texts)
    assert (local["kind"] == "twin").sum() >= 10 and len(local) > 50
    said: list[int] = []
    result = ray_audit(
        tmp_path / "v.parquet", tmp_path / "pairs.parquet", THRESHOLD, cells=CELLS, probe=PROBE, progress=lambda n, _m: said.append(n)
    )
    got = pd.read_parquet(tmp_path / "pairs.parquet")
    assert_same_pairs(got, local)
    assert result.pairs == len(got) and sum(result.nodes.values()) == len(got) and set(got[COL_NODE]) == set(result.nodes)
    assert said and said[-1] == len(got)
    assert got["cosine"].min() > THRESHOLD


def test_a_file_without_the_vector_column_is_refused_in_one_line(tmp_path):
    pd.DataFrame({"id": ["a", "b"], "text": ["x", "y"]}).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match="has no vector column"):
        file_shape(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match="threshold"):
        ray_audit(tmp_path / "bad.parquet", tmp_path / "out.parquet", 1.5)


def test_the_command_runs_the_whole_audit_on_ray(ray_instance, tmp_path, cli):
    """``audit --vectors FILE.parquet --engine ray --out DIR``: the Ray audit behind the command, its pairs in DIR."""
    import json

    matrix, ids, texts = write_vectors_file(tmp_path / "v.parquet", ROWS, twins=10)
    code, out, err = cli("audit", "--vectors", str(tmp_path / "v.parquet"), "--engine", "ray", "--threshold", str(THRESHOLD), "--json")
    assert (code, out) == (2, "") and "give --out DIR" in err
    code, out, err = cli(
        "audit",
        "--vectors",
        str(tmp_path / "v.parquet"),
        "--engine",
        "ray",
        "--threshold",
        str(THRESHOLD),
        "--out",
        str(tmp_path / "o"),
        "--json",
        "--quiet",
    )
    assert code == 0, err
    doc = json.loads(out)
    got = pd.read_parquet(tmp_path / "o" / "close-pairs.parquet")
    assert doc["pairs"] == len(got) == sum(doc["kinds"].values()) and doc["rows"] == ROWS
    assert doc["kinds"].get("twin", 0) >= 10
