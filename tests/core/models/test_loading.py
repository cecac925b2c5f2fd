"""Model availability (fast, with reasons), failure isolation and one load per process."""

from __future__ import annotations

import json
import socket
import threading
import time

import numpy as np
import pandas as pd
import pytest
from apptest_support import CrashingBackend

from core import constants
from core.models import loading, sources
from core.models.encode import encode_texts
from core.models.loading import LoadedModel, ModelUnavailable, availability, load_model
from core.models.registry import BGE_LARGE, BUNDLED, MINILM_L6, NOMIC, REGISTRY, ModelMeta
from core.scoring.runner import run_pairs

UNKNOWN = "no-such-org/no-such-model-xyz"


@pytest.fixture
def hub_refuses(monkeypatch):
    """A hub endpoint that refuses connections at once, and no remembered probe."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sources, "_HUB_STATE", {})


@pytest.fixture
def hub_hangs(monkeypatch):
    """A hub whose TCP connect never answers (like a hanging DNS lookup)."""
    released = threading.Event()

    def hang(*args, **kwargs):
        released.wait(60)
        raise OSError("simulated hang")

    monkeypatch.setenv("HF_ENDPOINT", "https://hub.cosine-probe-test.invalid")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(sources, "_HUB_STATE", {})
    monkeypatch.setattr(socket, "create_connection", hang)
    yield
    released.set()


def _timed_availability(name: str, **kwargs):
    start = time.perf_counter()
    avail = availability(name, **kwargs)
    return avail, time.perf_counter() - start


@pytest.mark.parametrize("name", [BGE_LARGE, UNKNOWN])
def test_unreachable_hub_model_is_unavailable_within_5_seconds(hub_refuses, name):
    avail, elapsed = _timed_availability(name)
    assert elapsed < 5.0
    assert not avail.available
    assert avail.status == "unavailable"
    assert "not in the local Hugging Face cache" in avail.reason
    assert "unreachable" in avail.reason


def test_hanging_hub_is_reported_within_5_seconds(hub_hangs):
    avail, elapsed = _timed_availability(BGE_LARGE)
    assert elapsed < 5.0, f"availability took {elapsed:.2f} s"
    assert not avail.available
    assert "unreachable" in avail.reason and "no answer" in avail.reason


def test_hub_answer_is_remembered(hub_refuses):
    availability(BGE_LARGE)
    _, elapsed = _timed_availability(UNKNOWN)
    assert elapsed < 1.0
    assert len(sources._HUB_STATE) == 1


def test_offline_mode_is_honoured(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    avail, elapsed = _timed_availability(BGE_LARGE)
    assert not avail.available and "HF_HUB_OFFLINE" in avail.reason
    assert elapsed < 5.0


def test_without_probe_hub_uncached_model_is_unavailable():
    avail = availability(UNKNOWN, probe_hub=False)
    assert (avail.available, avail.status) == (False, "unavailable")
    assert "cache" in avail.reason


def test_bundled_models_are_available():
    for name in BUNDLED:
        avail = availability(name)
        assert (avail.available, avail.status) == (True, "bundled"), avail


def test_local_folder_without_weights(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    avail = availability(str(tmp_path))
    assert not avail.available and avail.status == "unavailable"
    assert "weights" in avail.reason
    with pytest.raises(ModelUnavailable, match="weights"):
        load_model(str(tmp_path))


def test_local_folder_problems(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no modules.json or config.json" in availability(str(empty)).reason
    assert "does not exist" in availability(str(tmp_path / "nope")).reason
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert "is a file" in availability(str(a_file)).reason


def test_local_sentence_transformers_folder_is_available():
    from core.models.bundled import bundle_path

    folder = bundle_path("minilm_l6")
    avail = availability(str(folder))
    assert (avail.available, avail.status) == (True, "local")


def test_empty_name():
    avail = availability("")
    assert not avail.available and "empty" in avail.reason
    with pytest.raises(ModelUnavailable, match="empty"):
        load_model("  ")


def test_remote_code_model_needs_opt_in(hub_refuses):
    assert REGISTRY[NOMIC].trust_remote_code
    avail = availability(NOMIC)
    assert (avail.available, avail.status) == (False, "needs-opt-in")
    assert "opt in" in avail.reason
    with pytest.raises(ModelUnavailable, match="opt in"):
        load_model(NOMIC)
    # Opting in moves on to the ordinary checks (here: the hub is unreachable).
    opted = availability(NOMIC, allow_remote_code=True)
    assert opted.status == "unavailable" and "unreachable" in opted.reason


def test_run_reports_unknown_model_and_runs_the_rest(hub_refuses, minilm):
    pairs = pd.DataFrame({constants.COL_TEXT_A: ["A model test sentence"], constants.COL_TEXT_B: ["Another model test sentence"]})
    result = run_pairs(pairs, [MINILM_L6, "no-such-org/x"])
    assert result.models == [MINILM_L6]
    assert len(result.results) == 1
    assert set(result.errors) == {"no-such-org/x"}
    assert "unreachable" in result.errors["no-such-org/x"]


def test_model_failing_while_encoding_is_isolated(monkeypatch, minilm):
    name = "fake-org/encoder-that-crashes"
    meta = ModelMeta(name=name, short_name="crashes", hf_id=name)
    monkeypatch.setitem(
        loading._LOADED, (name, False, "cpu"), LoadedModel(meta=meta, backend=CrashingBackend(minilm.backend), load_seconds=0.0)
    )
    pairs = pd.DataFrame(
        {constants.COL_TEXT_A: ["Crash test one", "Crash test two"], constants.COL_TEXT_B: ["Crash test uno", "Crash test dos"]}
    )

    result = run_pairs(pairs, [name, MINILM_L6])

    assert result.models == [MINILM_L6]
    assert len(result.results) == 2
    assert set(result.errors) == {name}
    assert "failed while encoding" in result.errors[name]
    assert "simulated encoder crash" in result.errors[name] and "second line" not in result.errors[name]
    assert name not in result.reports


def test_concurrent_loads_load_once(monkeypatch):
    # Start from an empty model registry so the threads race for a real load.
    monkeypatch.setattr(loading, "_LOADED", {})
    monkeypatch.setattr(loading, "_LOAD_LOCKS", {})
    monkeypatch.setattr(loading, "LOAD_COUNTS", {})
    texts = ["Concurrency test: the river is wide", "Concurrency test: the road is long", "Concurrency test: a"]
    n = 8
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            model = load_model(MINILM_L6)
            # Texts of different lengths per thread: the shared tokenizer's
            # padding/truncation state must not leak between threads.
            for k in range(15):
                encode_texts(model, [f"thread {i} pass {k} " * (k % 5 + 1), texts[k % 3]], cache=None)
            vectors, _ = encode_texts(model, texts, cache=None)
            results[i] = (model, np.stack([vectors[t] for t in texts]))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)

    assert not errors, errors
    assert loading.LOAD_COUNTS == {MINILM_L6: 1}
    first_model, first_vectors = results[0]
    for model, vectors in results[1:]:
        assert model is first_model
        np.testing.assert_allclose(vectors, first_vectors, atol=1e-6)


def test_loaded_model_is_shared(minilm):
    assert load_model(MINILM_L6) is minilm
    assert load_model("MiniLM-L6") is minilm  # alias
    assert loading.max_seq_length(MINILM_L6) == 256


def test_in_memory_finds_the_instance_a_load_would_return_without_loading(minilm):
    torch_kind = loading.load_model(MINILM_L6, device="cpu", backend="torch")
    assert loading.in_memory(MINILM_L6, device="cpu", backend="torch") is torch_kind
    assert loading.in_memory("MiniLM-L6", backend="torch") is torch_kind  # alias, any device for auto
    assert loading.in_memory(MINILM_L6, device="cuda", backend="torch") is None  # another device is another instance
    assert loading.in_memory("no/such-model-here") is None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loading, "_LOADED", {k: v for k, v in loading._LOADED.items() if len(k) == 3})  # only the torch instances
        # The exact ONNX export is asked for: the torch twin in memory does not stand in for it.
        assert loading.in_memory(MINILM_L6, device="cpu", backend="onnx") is None


def test_load_step_names_the_model_and_the_one_off_export(monkeypatch, tmp_path):
    """The first run's progress line names the model and, on a fresh cache, the export it makes and its expected time."""
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setenv(constants.BACKEND_ENV_VAR, "auto")
    monkeypatch.setattr(loading, "_LOADED", {})
    step = loading.load_step(MINILM_L6, constants.DEVICE_CPU)
    expected = constants.ONNX_EXPORT_EXPECTED_SECONDS["minilm_l6"]
    assert step == f"MiniLM-L6: making its exact ONNX export once (about {expected} s; later runs skip this)"
    monkeypatch.setenv(constants.BACKEND_ENV_VAR, "torch")
    assert loading.load_step(MINILM_L6, constants.DEVICE_CPU) == "loading MiniLM-L6 (bundled weights)"
    monkeypatch.setattr(loading, "_LOADED", {(MINILM_L6, False, "cpu"): object()})
    assert loading.load_step(MINILM_L6, constants.DEVICE_CPU) == "MiniLM-L6: already in memory"
    assert loading.load_step("", constants.DEVICE_CPU) == "loading "  # no model named: the load itself says why
