"""The engines of the encode options: local, and Ray's actors filling the embedding cache, on the one local Ray instance.

The file is the shipped failure-mode suite read as a plain CSV file (its 381
real pairs, not the suite by name), scored by the bundled MiniLM-L3 through
the command: once locally, then twice with ``--engine ray`` into one fresh
cache.  Ray is the session's one instance (``ray_instance`` in
``tests/conftest.py``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.cluster import actors, session
from core.models.cache import EmbeddingCache
from core.models.engines import ENGINES, RayEngine, TextEncoder, engine_named
from core.models.loading import ModelUnavailable
from core.models.options import EncodeOptions
from core.models.registry import MINILM_L3_ONNX, MINILM_L6
from core.models.runs import model_runs
from core.models.warm import predicted_cache_key
from core.paths import SUITES_DIR

REAL_FILE = SUITES_DIR / "failure-modes.csv"
MISSING = "/no/such/model/folder"
OURS = ("note: ", "device: ", "error: ", "wrote ", "381 pairs × 2 models")


@dataclass
class Run:
    summary: dict
    err: str
    results: pd.DataFrame


class _Capture:
    """A block's stdout, and its stderr at the file descriptor too (Ray's C++ core writes to fd 2 directly)."""

    def __enter__(self):
        self._out, self._err, self._fd = io.StringIO(), io.StringIO(), tempfile.TemporaryFile()
        sys.stderr.flush()
        self._saved = os.dup(2)
        os.dup2(self._fd.fileno(), 2)
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(self._out))
        self._stack.enter_context(contextlib.redirect_stderr(self._err))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._fd.seek(0)
        self.out, self.err = self._out.getvalue(), self._err.getvalue() + self._fd.read().decode("utf-8", "replace")
        self._fd.close()


@pytest.fixture(scope="module")
def runs(ray_instance, tmp_path_factory) -> dict[str, Run]:
    """``run --json --quiet`` of the real file: local with no cache, then Ray twice into one fresh disk cache."""
    root = tmp_path_factory.mktemp("engines")
    done = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(constants.CACHE_ENV_VAR, str(root / "cache"))
        for label, engine in (("local", ["--engine", "local", "--no-cache"]), ("ray", ["--engine", "ray"]), ("again", ["--engine", "ray"])):
            argv = ["run", "--suite", str(REAL_FILE), "--models", MINILM_L3_ONNX, MISSING, "--out", str(root / label), "--quiet", "--json"]
            argv += ["--chunk-rows", "200"]  # two chunks: Ray fills the cache twice in one session, the notes said once
            with _Capture() as capture:
                code = cli.main([*argv, *engine])
            assert code == 0, capture.err
            # --json's stdout is one document, whatever Ray printed meanwhile.
            done[label] = Run(json.loads(capture.out), capture.err, pd.read_parquet(root / label / constants.RESULTS_PARQUET))
    return done


def test_ray_gives_the_local_engines_rows_exactly(runs):
    local, on_ray = runs["local"], runs["ray"]
    assert len(on_ray.results) == len(local.results) == len(pd.read_csv(REAL_FILE))
    # The same vectors scored by the same code: identical, cosines too, row for row in input order.
    pd.testing.assert_frame_equal(on_ray.results, local.results, check_exact=True)
    assert on_ray.summary["tables"] == local.summary["tables"]


def test_the_ray_run_fills_the_cache_and_a_second_run_is_served_from_it(runs):
    texts = pd.read_csv(REAL_FILE)
    unique = len(set(texts["text_a"]) | set(texts["text_b"]))
    first, again = runs["ray"].summary["encoding"][MINILM_L3_ONNX], runs["again"].summary["encoding"][MINILM_L3_ONNX]
    # Each chunk counts its own texts (a text of both would be encoded in the first and read from the cache in the second).
    assert first["encoded"] == unique and first["encoded"] + first["from_cache"] == first["unique_texts"]
    said = "the texts not in the embedding cache were encoded on Ray, by actors on 1 node(s)"
    assert [n for n in first["notes"] if "on Ray" in n] == [said]
    assert (again["encoded"], again["from_cache"]) == (0, first["unique_texts"])
    assert not any("on Ray" in note for note in again["notes"])
    pd.testing.assert_frame_equal(runs["again"].results, runs["ray"].results, check_exact=True)


def test_a_model_that_cannot_load_is_reported_and_the_other_still_runs(runs):
    summary, err = runs["ray"].summary, runs["ray"].err
    assert summary["models"] == [MINILM_L3_ONNX]
    assert "does not exist" in summary["errors"][MISSING]
    assert f"error: {MISSING}: folder {MISSING} does not exist" in err


def test_quiet_keeps_rays_own_log_lines_off_stderr(runs):
    assert [line for line in runs["ray"].err.splitlines() if line.strip() and not line.startswith(OURS)] == []


def test_audit_on_ray_equals_the_local_audit(ray_instance):
    """The audit on top of the same encoder, with no cache of the caller's: several batches over one actor, the local run's pairs.

    The full form (two nodes, one killed mid-run) is ``tests/core/audit/test_ray.py``, run by ``make bench``.
    """
    from core.audit.planted import planted_corpus
    from core.audit.run import audit_corpus

    passages = planted_corpus("dev").passages[:40]
    local = audit_corpus(passages, [MINILM_L3_ONNX], 0.7, cache=None)
    options = EncodeOptions(engine=RayEngine(actors=1, batch_texts=8, quiet=True))
    # No cache given: the vectors are handed over in one in memory for the run (RayEngine.cache_for).
    on_ray = audit_corpus(passages, [MINILM_L3_ONNX], 0.7, cache=None, options=options)
    assert not on_ray.errors
    report = on_ray.reports[on_ray.models[0]]
    assert "encoded on Ray, by actors on 1 node(s)" in report.notes[-1] and (report.n_encoded, report.n_cached) == (40, 0)
    pd.testing.assert_frame_equal(on_ray.pairs, local.pairs, check_exact=True)
    assert len(local.pairs) >= 5


def test_every_runner_gets_ray_the_triples_probe_too(ray_instance, cli):
    """``retrieval --triples`` with ``--engine ray``: another runner, no code of its own for Ray, the local run's numbers."""
    from core.paths import DATA_DIR

    argv = ["retrieval", "--triples", str(DATA_DIR / "samples" / "nli-triples.csv"), "--models", MINILM_L3_ONNX, "--json", "--quiet"]
    docs = {}
    for engine in constants.ENGINE_CHOICES:
        code, out, err = cli(*argv, "--no-cache", "--engine", engine)
        assert code == 0, err
        docs[engine] = json.loads(out)
    assert docs["ray"]["win_rates"] == docs["local"]["win_rates"] and docs["ray"]["ranking"] == docs["local"]["ranking"]
    assert not docs["ray"]["errors"] and docs["ray"]["n_triples"] == 24


class _NoRay:
    """A model's turn in a run that fails the test if the engine starts Ray or encodes anything."""

    def __init__(self, name: str, cache: EmbeddingCache | None) -> None:
        self.name, self.cache, self.options = name, cache, EncodeOptions()

    def known_key(self) -> str | None:
        return None

    def __getattr__(self, attr: str):
        raise AssertionError(f"the engine used run.{attr} with every text cached")


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_engine_is_a_hashable_record_that_passes_through_a_full_cache(name, tmp_path):
    engine = ENGINES[name]
    assert engine.name == name and engine_named(name) == engine and tuple(ENGINES) == constants.ENGINE_CHOICES
    options = EncodeOptions(engine=engine)
    assert hash(options) == hash(EncodeOptions(engine=engine_named(name))) and options.engine is engine
    cache = EmbeddingCache(False)
    assert engine.cache_for(cache) is cache  # a run's own cache is the one filled and read
    texts = ["a cached text", "another cached text"]
    key = str(predicted_cache_key(MINILM_L3_ONNX))
    cache.put_many(key, texts, np.eye(2, 384, dtype=np.float32))
    assert engine.fill(_NoRay(MINILM_L3_ONNX, cache), texts) is True


def test_the_ray_engine_hands_vectors_over_in_a_cache_even_without_one_and_leaves_served_models_to_their_server():
    assert RayEngine().cache_for(None) is not None
    assert ENGINES[constants.ENGINE_LOCAL].cache_for(None) is None
    # An endpoint's server encodes: nothing is looked up or sent to actors, the run asks the server from here.
    assert RayEngine().fill(_NoRay("openai:text-embedding-3-small", None), ["a text"]) is True


def test_bad_engine_settings_are_refused_before_ray_starts(tmp_path, cli):
    for bad, match in (
        ({"actors": 0}, "actors must be at least 1"),
        ({"batch_texts": 0}, "batch_texts"),
        ({"gpus_per_actor": -1}, "negative"),
    ):
        with pytest.raises(ValueError, match=match):
            RayEngine(**bad)
    with pytest.raises(ValueError, match="engine must be an engine record"):
        EncodeOptions(engine="ray")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="engine must be one of local, ray"):
        engine_named("spark")
    assert engine_named("local", actors=3) == ENGINES["local"]  # --ray-actors without --engine ray changes nothing
    code, out, err = cli("run", "--suite", str(REAL_FILE), "--out", str(tmp_path / "o"), "--engine", "ray", "--ray-actors", "0", "--quiet")
    assert (code, out, err.strip()) == (2, "", "error: --ray-actors must be at least 1, got 0")


def test_what_an_engine_keeps_open_is_opened_once_per_run_and_closed_when_the_run_ends():
    events: list[str] = []

    @contextlib.contextmanager
    def session():
        events.append("open")
        yield
        events.append("close")

    for run in model_runs(["first", "second"], EncodeOptions(), cache=None, errors={}):
        for _chunk in range(3):  # every chunk of every model asks; one Ray session serves them all
            run.keep("ray", session)
        assert events == ["open"]
    assert events == ["open", "close"]


def test_a_row_lost_or_repeated_on_the_actors_is_an_error():
    def part(rows):
        return {"_row": np.array(rows), "_node": np.array(["n"] * len(rows)), "v": np.array(rows) * 10}

    back = actors._in_input_order([part([2, 0]), part([1])], 3, [])
    assert back.columns["v"].tolist() == [0, 10, 20] and back.nodes == ["n"] * 3
    with pytest.raises(RuntimeError, match=r"3 rows for 3 \(1 missing, 1 repeated\)"):
        actors._in_input_order([part([0, 1]), part([1])], 3, [])


def test_the_backend_preference_reaches_the_actors_and_an_explicit_torch_refuses_onnx_only_models(monkeypatch):
    monkeypatch.setenv(constants.BACKEND_ENV_VAR, "torch")  # the test session's preference, as conftest sets it
    assert actors.driver_env(constants.BACKEND_ENV_VAR) == {constants.BACKEND_ENV_VAR: "torch"}
    errors: dict[str, str] = {}
    assert all(run.check() for run in model_runs([MINILM_L3_ONNX], EncodeOptions(), cache=None, errors=errors))
    assert not any(run.check() for run in model_runs([MINILM_L3_ONNX], EncodeOptions(backend="torch"), cache=None, errors=errors))
    assert "exists only as ONNX" in errors[MINILM_L3_ONNX]
    monkeypatch.delenv(constants.BACKEND_ENV_VAR)
    assert actors.driver_env(constants.BACKEND_ENV_VAR) == {}


def test_the_actors_encoder_takes_the_options(minilm):
    # What each actor builds (in its own process; here, in this one).
    encoder = TextEncoder(MINILM_L6, EncodeOptions(device="cpu", batch_size=3, backend="torch"))
    assert (encoder.model.meta.backend, encoder.batch_size) == ("torch", 3)
    out = encoder({"text": np.array(["A cat sat.", "A dog sat."])})
    assert out["vector"].shape == (2, 384) and set(out["cache_key"]) == {minilm.cache_key}


def test_root_cause_finds_the_models_own_message():
    def cause(exc):
        return session.root_cause(exc, (ModelUnavailable,))

    try:
        try:
            raise ModelUnavailable("org/x: failed to load (OSError: no weights)")
        except ModelUnavailable as exc:
            raise RuntimeError("wrapped by Ray") from exc
    except RuntimeError as outer:
        assert cause(outer) == "org/x: failed to load (OSError: no weights)"
    # Ray's task errors carry the actor's traceback as text, not as a cause.
    flat = RuntimeError(
        "ray.exceptions.ActorDiedError: the actor died\n  File ...\ncore.models.loading.ModelUnavailable: org/x: no such folder"
    )
    assert cause(flat) == "org/x: no such folder"
    assert cause(OSError("disk full")) == "OSError: disk full"


def test_a_real_ray_instance_passes_the_gcs_check(ray_instance):
    """The check that refuses a web server at $RAY_ADDRESS lets Ray's own GCS through (it answers HTTP/2 SETTINGS)."""
    session.check_reachable(ray_instance.get_runtime_context().gcs_address, timeout=5)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_raylet_warning_printed_during_a_session_stays_off_stdout(ray_instance, capsys, quiet):
    # Ray's driver prints raylet warnings to sys.stdout whatever log_to_driver says; a --json run's stdout is its document.
    with session.ray_session(quiet=quiet):
        print("(raylet) WARNING: 8 PYTHON worker processes have been started")
    print("{}")
    out, err = capsys.readouterr()
    assert out == "{}\n"
    assert ("(raylet) WARNING" in err) is not quiet
