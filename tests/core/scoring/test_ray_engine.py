"""``run --engine ray``: the same results as the local engine, on a local 2-CPU Ray instance and a real file.

The file is the shipped failure-mode suite read as a plain CSV file (its 381
real pairs, not the suite by name). Ray starts once for the module and is shut
down after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.cluster import session
from core.models.loading import ModelUnavailable
from core.models.options import EncodeOptions
from core.models.registry import MINILM_L3_ONNX, MINILM_L6
from core.models.runs import model_runs
from core.paths import SUITES_DIR
from core.scoring import ray_engine
from core.scoring.chunked import stage_pairs

ray = pytest.importorskip("ray")

REAL_FILE = SUITES_DIR / "failure-modes.csv"
MISSING = "/no/such/model/folder"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def both_engines(local_ray, minilm, tmp_path_factory):
    """The CLI's run of the real file on each engine: (summary, stderr, results) per engine."""
    out = tmp_path_factory.mktemp("engines")
    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(constants.HISTORY_ENV_VAR, "off")
        capture = _Capture()
        for engine in constants.ENGINE_CHOICES:
            with capture:
                code = cli.main(
                    [
                        "run",
                        "--suite",
                        str(REAL_FILE),
                        "--models",
                        MINILM_L6,
                        MISSING,
                        "--out",
                        str(out / engine),
                        "--quiet",
                        "--json",
                        "--engine",
                        engine,
                        "--no-cache",
                    ]
                )
            assert code == 0, capture.err
            runs[engine] = (json.loads(capture.out), capture.err, pd.read_parquet(out / engine / constants.RESULTS_PARQUET))
    return runs


class _Capture:
    """stdout and stderr of a block (capsys is function-scoped; the runs are shared by the module)."""

    def __enter__(self):
        import contextlib
        import io

        self._out, self._err = io.StringIO(), io.StringIO()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(self._out))
        self._stack.enter_context(contextlib.redirect_stderr(self._err))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        self.out, self.err = self._out.getvalue(), self._err.getvalue()


def test_a_real_ray_cluster_passes_the_gcs_check(local_ray):
    """The check that refuses a web server at $RAY_ADDRESS lets Ray's own GCS through (it answers HTTP/2 SETTINGS)."""
    address = ray.get_runtime_context().gcs_address
    session.check_reachable(address, timeout=5)


def test_ray_gives_the_local_engines_rows_within_1e6(both_engines):
    _, _, local = both_engines[constants.ENGINE_LOCAL]
    _, _, on_ray = both_engines[constants.ENGINE_RAY]
    n_pairs = len(pd.read_csv(REAL_FILE))
    assert len(on_ray) == len(local) == n_pairs
    assert list(on_ray.columns) == list(local.columns)
    assert np.abs(on_ray[constants.COL_COSINE].to_numpy() - local[constants.COL_COSINE].to_numpy()).max() <= 1e-6
    # Everything but the cosine is computed from the texts alone: identical, row for row, in input order.
    assert on_ray.drop(columns=constants.COL_COSINE).equals(local.drop(columns=constants.COL_COSINE))
    assert list(on_ray[constants.COL_PAIR_ID]) == list(pd.read_csv(REAL_FILE)["pair_id"])


def test_ray_cosines_are_the_models_own(both_engines, minilm):
    _, _, on_ray = both_engines[constants.ENGINE_RAY]
    rows = on_ray.sample(20, random_state=0)
    a = minilm.backend.embed(list(rows[constants.COL_TEXT_A])).astype(np.float64)
    b = minilm.backend.embed(list(rows[constants.COL_TEXT_B])).astype(np.float64)
    expected = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.abs(rows[constants.COL_COSINE].to_numpy() - expected).max() <= 1e-6


def test_a_model_that_cannot_load_is_reported_and_the_other_still_runs(both_engines):
    summary, err, _ = both_engines[constants.ENGINE_RAY]
    assert summary["models"] == [MINILM_L6]
    assert MISSING in summary["errors"] and "does not exist" in summary["errors"][MISSING]
    assert f"error: {MISSING}: folder {MISSING} does not exist" in err
    encoding = summary["encoding"][MINILM_L6]
    texts = pd.read_csv(REAL_FILE)
    assert encoding["unique_texts"] == len(set(texts["text_a"]) | set(texts["text_b"]))
    assert encoding["backend"] == "torch" and encoding["device"] == "cpu"  # the test session's default backend reached the actors
    assert any("no embedding cache" in note for note in encoding["notes"])


def test_the_summary_tables_match_the_local_engines(both_engines):
    local, _, _ = both_engines[constants.ENGINE_LOCAL]
    on_ray, _, _ = both_engines[constants.ENGINE_RAY]
    assert local["tables"].keys() == on_ray["tables"].keys()
    for name in local["tables"]:
        a, b = pd.DataFrame(local["tables"][name]), pd.DataFrame(on_ray["tables"][name])
        pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-6, rtol=0)


def test_ray_work_files_are_removed(both_engines, tmp_path_factory):
    summary, _, _ = both_engines[constants.ENGINE_RAY]
    out = Path(summary["results"]["parquet"]).parent
    assert not (out / ".ray").exists()


def test_bad_options_are_refused_before_ray_starts(tmp_path):
    staged = tmp_path / "staged.parquet"
    stage_pairs([pd.DataFrame({constants.COL_TEXT_A: ["a"], constants.COL_TEXT_B: ["b"]})], staged)
    with pytest.raises(ValueError, match="actors must be at least 1"):
        ray_engine.score_staged_ray(staged, [MINILM_L6], tmp_path, actors=0)
    with pytest.raises(ValueError, match="must not be negative"):
        ray_engine.score_staged_ray(staged, [MINILM_L6], tmp_path, gpus_per_actor=-1)
    with pytest.raises(ValueError, match="backend must be one of"):
        ray_engine.score_staged_ray(staged, [MINILM_L6], tmp_path, options=EncodeOptions(backend="tensorrt"))
    assert (
        cli.main(["run", "--suite", str(REAL_FILE), "--out", str(tmp_path / "o"), "--engine", "ray", "--ray-actors", "0", "--quiet"])
        == cli.EXIT_USAGE
    )


def test_the_backend_preference_leaves_onnx_only_models_alone_and_an_explicit_torch_refuses_them(monkeypatch):
    monkeypatch.setenv(constants.BACKEND_ENV_VAR, "torch")  # the test session's preference, as conftest sets it
    errors: dict[str, str] = {}
    assert all(run.check() for run in model_runs([MINILM_L3_ONNX], EncodeOptions(), cache=None, errors=errors))
    assert ray_engine._preference_env() == {"env_vars": {constants.BACKEND_ENV_VAR: "torch"}}
    assert not any(run.check() for run in model_runs([MINILM_L3_ONNX], EncodeOptions(backend="torch"), cache=None, errors=errors))
    assert "exists only as ONNX" in errors[MINILM_L3_ONNX]
    monkeypatch.delenv(constants.BACKEND_ENV_VAR)
    assert ray_engine._preference_env() is None


def test_root_cause_finds_the_models_own_message():
    try:
        try:
            raise ModelUnavailable("org/x: failed to load (OSError: no weights)")
        except ModelUnavailable as exc:
            raise RuntimeError("wrapped by Ray") from exc
    except RuntimeError as outer:
        assert ray_engine._root_cause(outer) == "org/x: failed to load (OSError: no weights)"
    # Ray's task errors carry the actor's traceback as text, not as a cause.
    flat = RuntimeError(
        "ray.exceptions.ActorDiedError: the actor died\n  File ...\ncore.models.loading.ModelUnavailable: org/x: no such folder"
    )
    assert ray_engine._root_cause(flat) == "org/x: no such folder"
    assert ray_engine._root_cause(OSError("disk full")) == "OSError: disk full"
    assert ray_engine.model_folder("org/name") == "org__name"


def test_quiet_keeps_rays_own_log_lines_off_stderr(local_ray, minilm, tmp_path, capfd, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("text_a,text_b\nA quiet ray cat,A quiet ray dog\n", encoding="utf-8")
    capfd.readouterr()
    code = cli.main(
        ["run", "--suite", str(pairs), "--models", MINILM_L6, "--out", str(tmp_path / "out"), "--engine", "ray", "--quiet", "--no-cache"]
    )
    err = capfd.readouterr().err
    assert code == 0, err
    ours = ("note: ", "device: ", "1 pairs × 1 models")
    assert [line for line in err.splitlines() if line.strip() and not line.startswith(ours)] == []


def test_audit_on_ray_equals_the_local_audit(local_ray, tmp_path):
    """``audit --engine ray``'s lighter form: the local Ray instance, several batches over two actors, equal to local.

    The full form (two nodes, one killed mid-run) is ``tests/core/audit/test_ray.py``, run by ``make bench``.
    """
    from core.audit.planted import planted_corpus
    from core.audit.run import audit_corpus
    from core.models.cache import EmbeddingCache
    from core.models.warm import predicted_cache_key

    passages = planted_corpus("dev").passages[:40]
    local = audit_corpus(passages, [MINILM_L3_ONNX], 0.7, cache=None)
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    on_ray = audit_corpus(passages, [MINILM_L3_ONNX], 0.7, cache=cache, engine=constants.ENGINE_RAY, ray_actors=1, ray_batch=8)
    assert not on_ray.errors
    assert "40 texts encoded on Ray" in on_ray.reports[on_ray.models[0]].notes[-1]
    mine = {(r.index_a, r.index_b): (r.kind, r.mode, r.cosine) for r in local.pairs.itertuples()}
    theirs = {(r.index_a, r.index_b): (r.kind, r.mode, r.cosine) for r in on_ray.pairs.itertuples()}
    assert len(mine) >= 5 and mine.keys() == theirs.keys()
    assert all(theirs[p][:2] == mine[p][:2] and abs(theirs[p][2] - mine[p][2]) < 1e-6 for p in mine)
    # The actors' vectors are in the cache under the key a local load gives: a later local run encodes nothing.
    assert cache.count_cached(str(predicted_cache_key(MINILM_L3_ONNX)), passages) == 40


@pytest.mark.parametrize("quiet", [False, True])
def test_a_raylet_warning_printed_during_a_session_stays_off_stdout(local_ray, capsys, quiet):
    # Ray's driver prints raylet warnings to sys.stdout whatever log_to_driver says; a --json run's stdout is its document.
    with session.ray_session(quiet=quiet):
        print("(raylet) WARNING: 8 PYTHON worker processes have been started")
    print("{}")
    out, err = capsys.readouterr()
    assert out == "{}\n"
    assert ("(raylet) WARNING" in err) is not quiet
