"""The run history: round trips, Parquet export, a crash mid-write, two writer processes, a busy file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.history import store
from core.models.registry import MINILM_L6, MPNET, REGISTRY
from core.paths import PROJECT_ROOT


def _results(n: int = 6, models=(MINILM_L6, MPNET), seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for model in models:
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "suite": "failure-modes",
                    "category": ["negation", "positive"] * (n // 2),
                    "pair_id": [f"p{i}" for i in range(n)],
                    "text_a": [f"sentence {i} a" for i in range(n)],
                    "text_b": [f'sentence {i} b, "quoted" | piped' for i in range(n)],
                    "cosine": rng.uniform(-0.2, 1.0, n),
                    "n_tokens_a": rng.integers(3, 30, n),
                    "n_tokens_b": rng.integers(3, 30, n),
                    "truncated": [False] * (n - 1) + [True],
                    "domain": "medical",
                    "token_jaccard": rng.uniform(0, 1, n),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


SETTINGS = {"threshold": 0.8, "sources": [{"suite": "failure-modes", "sha256": "ab" * 32}], "note": "ünïcode"}


def test_round_trip_keeps_every_column_and_value(tmp_path):
    path = tmp_path / "h.duckdb"
    results = _results()
    run_id = store.record_run(
        results, command="run", origin=constants.ORIGIN_CLI, settings=SETTINGS, errors={"no/such": "no/such: not found"}, path=path
    )
    assert run_id == 1
    run = store.load_run(run_id, path)
    assert (run.run_id, run.origin, run.command, run.threshold, run.source) == (1, "cli", "run", 0.8, "failure-modes")
    assert run.settings == SETTINGS
    pd.testing.assert_frame_equal(run.results[list(results.columns)], results, check_dtype=False)
    models = run.models.set_index("model")
    assert models.loc[MINILM_L6, "revision"] == REGISTRY[MINILM_L6].revision
    assert models.loc[MINILM_L6, "backend"] == REGISTRY[MINILM_L6].backend
    assert models.loc[MINILM_L6, "n_results"] == 6 and models.loc[MINILM_L6, "status"] == "ok"
    assert models.loc["no/such", "status"] == "error" and models.loc["no/such", "error"] == "no/such: not found"
    assert run.thresholds() == {MINILM_L6: 0.8, MPNET: 0.8}


def test_runs_are_listed_newest_first_with_their_models(tmp_path):
    path = tmp_path / "h.duckdb"
    assert store.list_runs(path).empty
    store.record_run(_results(models=(MINILM_L6,)), command="compare", origin="cli", settings={"threshold": 0.7}, path=path)
    store.record_run(_results(), command="failure-modes", origin="app", settings=SETTINGS, path=path)
    runs = store.list_runs(path)
    assert list(runs["run_id"]) == [2, 1]
    assert list(runs["command"]) == ["failure-modes", "compare"]
    assert runs.loc[0, "models"] == ", ".join(sorted([MINILM_L6, MPNET]))
    assert list(runs["n_pairs"]) == [6, 6]
    assert pd.api.types.is_datetime64_any_dtype(runs["created_at"])


def test_per_model_thresholds_and_nan_cells(tmp_path):
    path = tmp_path / "h.duckdb"
    results = _results()
    results.loc[0, "token_jaccard"] = np.nan
    run_id = store.record_run(
        results, command="check", origin="cli", settings={"threshold": 0.7, "thresholds": {MINILM_L6: 0.31}}, path=path
    )
    run = store.load_run(run_id, path)
    assert run.thresholds() == {MINILM_L6: 0.31, MPNET: 0.7}
    assert np.isnan(run.results.loc[0, "token_jaccard"])


def test_export_writes_parquet_with_run_and_model_columns(tmp_path):
    path = tmp_path / "h.duckdb"
    results = _results()
    run_id = store.record_run(results, command="run", origin="cli", settings=SETTINGS, path=path)
    out = store.export_run(run_id, tmp_path / "run.parquet", path)
    frame = pd.read_parquet(out)
    assert len(frame) == len(results)
    assert set(frame["run_id"]) == {run_id} and set(frame["command"]) == {"run"}
    assert dict(zip(frame["model"], frame["revision"], strict=True))[MPNET] == REGISTRY[MPNET].revision
    np.testing.assert_allclose(frame["cosine"].to_numpy(), results["cosine"].to_numpy())
    with pytest.raises(ValueError, match="no folder"):
        store.export_run(run_id, tmp_path / "missing" / "x.parquet", path)


def test_bad_arguments_are_refused(tmp_path):
    path = tmp_path / "h.duckdb"
    with pytest.raises(ValueError, match="origin"):
        store.record_run(_results(), command="run", origin="web", path=path)
    with pytest.raises(ValueError, match="command"):
        store.record_run(_results(), command=" ", origin="cli", path=path)
    with pytest.raises(ValueError, match="lack columns"):
        store.record_run(pd.DataFrame({"model": ["m"]}), command="run", origin="cli", path=path)
    with pytest.raises(ValueError, match="not JSON"):
        store.record_run(_results(), command="run", origin="cli", settings={("a", "b"): 1}, path=path)
    with pytest.raises(ValueError, match="no run 3"):
        store.load_run(3, path)
    with pytest.raises(ValueError, match="whole number"):
        store.load_run(0, path)


def test_recording_off_and_unopenable_files(tmp_path, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    assert store.history_path() is None
    with pytest.raises(store.HistoryError, match="off"):
        store.list_runs()
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "custom.duckdb"))
    assert store.history_path() == tmp_path / "custom.duckdb"
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(store.HistoryError, match="cannot open the run history"):
        store.list_runs(junk)


def _python(code: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_crash_mid_write_leaves_the_history_readable(tmp_path):
    path = tmp_path / "h.duckdb"
    store.record_run(_results(), command="run", origin="cli", settings=SETTINGS, path=path)
    # The child inserts the run and its models, then dies (no exception, no cleanup) while inserting the pairs.
    code = f"""
        import os
        import pandas as pd
        from core.history import store
        real = store._insert_frame
        def crash(con, table, frame):
            if table == "pair_results":
                real(con, table, frame.head(3))
                os._exit(9)
            real(con, table, frame)
        store._insert_frame = crash
        frame = pd.DataFrame({{"model": ["m"] * 5, "text_a": list("abcde"), "text_b": list("vwxyz"), "cosine": [0.1] * 5}})
        store.record_run(frame, command="run", origin="cli", path={str(path)!r})
    """
    proc = _python(code)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 9, err
    runs = store.list_runs(path)
    assert list(runs["run_id"]) == [1]  # the half-written run is not there
    assert len(store.load_run(1, path).results) == 12
    assert store.record_run(_results(), command="run", origin="cli", path=path) == 2  # and the history still takes runs


def test_two_processes_writing_at_once_both_land(tmp_path):
    path = tmp_path / "h.duckdb"
    code = f"""
        import sys
        import pandas as pd
        from core.history import store
        tag = sys.argv[1]
        for i in range(12):
            frame = pd.DataFrame({{"model": [tag] * 40, "text_a": [f"{{tag}} {{i}} {{j}}" for j in range(40)],
                                   "text_b": ["b"] * 40, "cosine": [i / 12] * 40}})
            store.record_run(frame, command=f"writer-{{tag}}", origin="cli", settings={{"i": i}}, path={str(path)!r})
    """
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), tag], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for tag in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    runs = store.list_runs(path)
    assert len(runs) == 24 and sorted(runs["run_id"]) == list(range(1, 25))
    assert runs["command"].value_counts().to_dict() == {"writer-a": 12, "writer-b": 12}
    for run_id in (1, 24):
        run = store.load_run(run_id, path)
        assert len(run.results) == 40 and set(run.results["model"]) == {run.command[-1]}


def test_a_held_file_makes_the_writer_wait_then_say_so(tmp_path):
    path = tmp_path / "h.duckdb"
    store.list_runs(path)  # create it
    holder = _python(f"""
        import sys, time
        import duckdb
        con = duckdb.connect({str(path)!r})
        print("holding", flush=True)
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 4)
        con.close()
    """)
    assert holder.stdout.readline().strip() == "holding"
    start = time.monotonic()
    with pytest.raises(store.HistoryBusy, match="in use by another process") as info:
        store.record_run(_results(), command="run", origin="cli", path=path, timeout=0.6)
    waited = time.monotonic() - start
    assert 0.5 <= waited < 3.5, waited
    assert constants.HISTORY_ENV_VAR in str(info.value)
    # With a longer wait the same write lands once the holder lets go.
    assert store.record_run(_results(), command="run", origin="cli", path=path, timeout=30) == 1
    holder.wait(timeout=30)
    assert json.loads(json.dumps(store.list_runs(path)["run_id"].tolist())) == [1]


# ---------------------------------------------------------------- Content digests, names, pins, deletion


def _pairs(texts_a: list[str], suite: str, cosines: list[float] | None = None) -> pd.DataFrame:
    n = len(texts_a)
    frame = pd.DataFrame(
        {
            "model": "m",
            "suite": suite,
            "pair_id": [f"{suite}-{i}" for i in range(n)],
            "text_a": texts_a,
            "text_b": [f"other {i}" for i in range(n)],
            "cosine": cosines or [0.5] * n,
        }
    )
    return pd.concat([frame, frame.assign(model="n")], ignore_index=True)


def test_runs_of_the_same_pairs_share_a_digest_whatever_their_source_is_called(tmp_path):
    import hashlib

    path = tmp_path / "h.duckdb"
    a = store.record_run(_pairs(["x", "y"], "mine"), command="run", origin="cli", path=path)
    b = store.record_run(_pairs(["x", "y"], "uploaded", [0.6, 0.7]).query("model == 'n'"), command="your-data", origin="app", path=path)
    c = store.record_run(_pairs(["x", "z"], "mine"), command="run", origin="cli", path=path)
    d = store.record_run(_pairs(["x:", "y"], "mine"), command="run", origin="cli", path=path)  # a separator inside a text cannot collide
    digests = store.list_runs(path).set_index("run_id")["pairs_digest"]
    assert digests[a] == digests[b] and len({digests[a], digests[c], digests[d]}) == 3
    # The definition: SHA-256 of the first model's length-prefixed texts in row order.
    assert digests[a] == hashlib.sha256(b"1:x7:other 0|1:y7:other 1").hexdigest()
    assert store.load_run(a, path).comparable_with(store.load_run(b, path))
    assert not store.load_run(a, path).comparable_with(store.load_run(c, path))


def test_an_older_history_file_gains_digests_names_and_pins(tmp_path):
    import duckdb

    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    for statement in store._SCHEMA:  # schema 1: the runs table without the three new columns
        con.execute(statement)
    con.execute("INSERT INTO runs VALUES (1, now(), 'cli', 'run', 0.7, 's', 1, '{}', NULL)")
    con.execute("INSERT INTO run_models VALUES (1, 'm', NULL, 'torch', NULL, 'ok', NULL, 1)")
    con.execute("INSERT INTO pair_results VALUES (1, 0, 'm', 's', 'negation', 'p', NULL, 'x', 'other 0', 0.5, NULL, NULL, NULL, NULL)")
    con.close()
    runs = store.list_runs(path)
    assert (
        runs.loc[0, "pairs_digest"]
        == store.load_run(
            store.record_run(_pairs(["x"], "s").query("model == 'm'"), command="run", origin="cli", path=path), path
        ).pairs_digest
    )
    assert not runs.loc[0, "pinned"] and pd.isna(runs.loc[0, "name"])


def test_runs_can_be_named_pinned_and_deleted(tmp_path):
    path = tmp_path / "h.duckdb"
    first = store.record_run(_pairs(["x"], "s"), command="run", origin="cli", path=path)
    second = store.record_run(_pairs(["x"], "s"), command="run", origin="cli", path=path)
    store.name_run(first, "  baseline before the upgrade ", path)
    store.pin_run(first, path=path)
    run = store.load_run(first, path)
    assert (run.name, run.pinned) == ("baseline before the upgrade", True)
    with pytest.raises(ValueError, match="is pinned; unpin it first"):
        store.delete_run(first, path)
    with pytest.raises(ValueError, match="one line of at most 80"):
        store.name_run(first, "x" * 81, path)
    with pytest.raises(ValueError, match="no run 9"):
        store.pin_run(9, path=path)
    store.delete_run(second, path)
    assert list(store.list_runs(path)["run_id"]) == [first]
    with pytest.raises(ValueError, match="no run 2"):
        store.load_run(second, path)
    store.pin_run(first, False, path)
    store.name_run(first, None, path)
    store.delete_run(first, path)
    assert store.list_runs(path).empty


def test_the_default_comparison_is_the_two_latest_runs_that_share_pairs(tmp_path):
    path = tmp_path / "h.duckdb"
    ids = [store.record_run(_pairs(texts, "s"), command="run", origin="cli", path=path) for texts in (["a"], ["b"], ["a"], ["b"], ["c"])]
    assert store.comparable(store.list_runs(path)) == (ids[1], ids[3])  # run 5 shares nothing; 4 and 2 share "b"
    store.pin_run(ids[0], path=path)
    store.record_run(_pairs(["a"], "s"), command="run", origin="cli", path=path)  # run 6, like 1 and 3
    assert store.comparable(store.list_runs(path)) == (ids[0], 6)  # the pinned run wins over the newer 3
    assert store.comparable(store.list_runs(path).query("run_id == 5")) is None


def test_a_nan_threshold_is_stored_as_none(tmp_path):
    path = tmp_path / "h.duckdb"
    run_id = store.record_run(
        _pairs(["x"], "s"), command="retrieval", origin="cli", settings={"threshold": float("nan"), "x": [float("inf")]}, path=path
    )
    run = store.load_run(run_id, path)
    assert run.threshold is None and run.settings == {"threshold": None, "x": [None]}
    assert store.list_runs(path)["threshold"].isna().all()


def test_an_old_run_is_re_read_at_its_own_threshold_not_todays_default(tmp_path, monkeypatch, cli):
    """A run keeps every setting it used; a later default (here the threshold) never re-reads it."""
    from core.history.report import run_report

    path = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    results = _results()
    results[constants.COL_COSINE] = 0.6
    run_id = store.record_run(results, command="run", origin="cli", settings={"threshold": 0.55}, path=path)
    monkeypatch.setattr(constants, "DEFAULT_THRESHOLD", 0.9)  # the default moves after the run was stored
    run = store.load_run(run_id, path)
    assert run.threshold == 0.55 and set(run.thresholds().values()) == {0.55}
    code, out, err = cli("history", "show", str(run_id), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["threshold"] == 0.55 and {row["share_above"] for row in doc["categories"]} == {1.0}  # 0.6 > 0.55, not > 0.9
    assert "0.55" in run_report(run_id, str(path))
