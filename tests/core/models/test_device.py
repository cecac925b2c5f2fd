"""The user's hardware: device resolution with the GPU's presence faked, batch sizes,
ONNX providers, and the CLI's ``--device`` / ``--batch-size`` on this GPU-less machine."""

from __future__ import annotations

import json

import pytest

from core.cli import main as cli
from core.models import device as dev
from core.models import loaders, loading
from core.models.device import CPU_PROVIDER, CUDA_PROVIDER, DeviceUnavailable, VisibleDevices
from core.models.encode import encode_texts
from core.models.loading import LoadedModel
from core.models.protocols import BackendDefaults
from core.models.registry import MINILM_L3_ONNX, MINILM_L6

CPU_ONLY = VisibleDevices()
WITH_CUDA = VisibleDevices(cuda=True, onnx_providers=(CUDA_PROVIDER, CPU_PROVIDER))
WITH_MPS = VisibleDevices(mps=True)
CUDA_AND_MPS = VisibleDevices(cuda=True, mps=True)


# ------------------------------------------------------------- resolution


@pytest.mark.parametrize(
    ("visible", "expected"),
    [(CPU_ONLY, "cpu"), (WITH_CUDA, "cuda"), (WITH_MPS, "mps"), (CUDA_AND_MPS, "cuda")],
    ids=["nothing", "cuda", "mps", "cuda-before-mps"],
)
def test_auto_takes_cuda_then_mps_then_cpu(visible, expected):
    assert dev.resolve_device("auto", visible) == expected


@pytest.mark.parametrize("visible", [CPU_ONLY, WITH_CUDA, WITH_MPS], ids=["nothing", "cuda", "mps"])
def test_cpu_is_always_cpu(visible):
    assert dev.resolve_device("cpu", visible) == "cpu"


def test_an_explicit_device_is_used_when_visible():
    assert dev.resolve_device("cuda", WITH_CUDA) == "cuda"
    assert dev.resolve_device(" MPS ", WITH_MPS) == "mps"


@pytest.mark.parametrize(
    ("requested", "visible", "message"), [("cuda", CPU_ONLY, dev.NO_CUDA), ("cuda", WITH_MPS, dev.NO_CUDA), ("mps", WITH_CUDA, dev.NO_MPS)]
)
def test_an_explicit_device_that_is_not_visible_is_refused_not_replaced(requested, visible, message):
    with pytest.raises(DeviceUnavailable) as info:
        dev.resolve_device(requested, visible)
    assert str(info.value) == message


@pytest.mark.parametrize("bad", ["gpu", "cuda:0", "", "tpu"])
def test_unknown_device_names_are_refused(bad):
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda, mps"):
        dev.resolve_device(bad, WITH_CUDA)


def test_this_machine_has_no_gpu_so_auto_is_the_cpu():
    """The probe itself: the test machine has no GPU (torch is not even asked: no GPU device file)."""
    seen = dev.visible_devices()
    assert seen.cuda is False and seen.mps is False
    assert dev.choose_device("auto") == "cpu"


# ------------------------------------------------------- onnx and batches


def test_onnx_runs_on_cuda_only_with_a_gpu_and_the_cuda_provider():
    assert dev.onnx_providers("cuda", WITH_CUDA) == [CUDA_PROVIDER, CPU_PROVIDER]
    # A GPU torch sees, but the CPU-only onnxruntime wheel: ONNX stays on the CPU.
    assert dev.onnx_providers("cuda", VisibleDevices(cuda=True)) == [CPU_PROVIDER]
    assert dev.onnx_providers("cpu", WITH_CUDA) == [CPU_PROVIDER]
    assert dev.onnx_providers("mps", WITH_MPS) == [CPU_PROVIDER]
    with pytest.raises(ValueError, match="resolved device"):
        dev.onnx_providers("auto", WITH_CUDA)


def test_provider_device_reads_the_first_provider():
    assert dev.provider_device([CUDA_PROVIDER, CPU_PROVIDER]) == "cuda"
    assert dev.provider_device([CPU_PROVIDER]) == "cpu"


def test_batch_size_is_larger_on_a_gpu_and_the_override_wins():
    assert dev.batch_size_for("cpu") == 32
    assert dev.batch_size_for("mps") == 64
    assert dev.batch_size_for("cuda") == 128
    assert dev.batch_size_for("cpu", 7) == 7 and dev.batch_size_for("cuda", 500) == 500
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="at least 1"):
            dev.batch_size_for("cpu", bad)
    with pytest.raises(ValueError, match="resolved device"):
        dev.batch_size_for("auto")


# ------------------------------------------- loading with the GPU faked


class _Recorder(BackendDefaults):
    """Stands in for a backend class: records how the loader built it."""

    calls: list[dict] = []

    def __init__(self, *args, **kwargs):
        type(self).calls.append({"args": args, **kwargs})
        self.device = kwargs.get("device", "cpu")
        self.batch_size = dev.batch_size_for(self.device)
        self.tokenizer, self.max_seq_length, self.dimension, self.pooling = None, 256, 384, "mean"


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch 'sees' a CUDA GPU and onnxruntime has its CUDA provider; backends record instead of loading."""
    monkeypatch.setattr(dev, "visible_devices", lambda: WITH_CUDA)
    monkeypatch.setattr(dev, "may_have_gpu", lambda: True)
    torch_recorder = type("TorchRecorder", (_Recorder,), {"calls": []})
    onnx_recorder = type("OnnxRecorder", (_Recorder,), {"calls": []})
    monkeypatch.setattr(loading, "TorchBackend", torch_recorder)
    monkeypatch.setattr(loaders, "TorchBackend", torch_recorder)
    monkeypatch.setattr(loaders, "OnnxBackend", onnx_recorder)
    monkeypatch.setattr(loading, "OnnxBackend", onnx_recorder, raising=False)  # read as fake_gpu.OnnxBackend below
    monkeypatch.setattr(loading, "visible_devices", lambda: WITH_CUDA)
    monkeypatch.setattr(loaders, "visible_devices", lambda: WITH_CUDA)
    monkeypatch.setattr(loading, "_LOADED", {})
    monkeypatch.setattr(loading, "LOAD_COUNTS", {})
    return loading


def test_auto_loads_torch_models_on_the_visible_gpu_with_gpu_batches(fake_gpu):
    model = loading.load_model(MINILM_L6, device="auto")
    (call,) = fake_gpu.TorchBackend.calls
    assert call["device"] == "cuda"
    assert model.device == "cuda" and model.batch_size == 128
    assert (MINILM_L6, False, "cuda") in fake_gpu._LOADED


def test_auto_gives_onnx_models_the_cuda_provider_first(fake_gpu):
    loading.load_model(MINILM_L3_ONNX, device="auto")
    (call,) = fake_gpu.OnnxBackend.calls
    assert call["providers"] == [CUDA_PROVIDER, CPU_PROVIDER]


def test_each_device_gets_its_own_instance(fake_gpu):
    on_gpu = loading.load_model(MINILM_L6, device="cuda")
    on_cpu = loading.load_model(MINILM_L6, device="cpu")
    assert on_gpu is not on_cpu and (on_gpu.device, on_cpu.device) == ("cuda", "cpu")
    assert loading.load_model(MINILM_L6, device="auto") is on_gpu


def test_a_device_that_is_not_visible_is_a_model_unavailable_line():
    with pytest.raises(loading.ModelUnavailable, match=f"^{dev.NO_CUDA}$"):
        loading.load_model(MINILM_L6, device="cuda")


# ------------------------------------------------------------- batch sizes


class _BatchSpy(BackendDefaults):
    """A real backend's encoder, recording the texts and batch size of each call."""

    def __init__(self, inner, batch_size: int):
        self.inner, self.batch_size = inner, batch_size
        self.tokenizer, self.max_seq_length, self.dimension = inner.tokenizer, inner.max_seq_length, inner.dimension
        self.calls: list[tuple[int, int | None]] = []

    def embed(self, texts, batch_size=None):
        self.calls.append((len(texts), batch_size))
        return self.inner.embed(texts, batch_size=batch_size)


TEXTS = [f"sentence number {i} about penicillin" for i in range(10)]


def test_encoding_follows_the_device_batch_and_the_override(minilm):
    gpu_like = _BatchSpy(minilm.backend, batch_size=4)  # a device whose batch is 4
    model = LoadedModel(meta=minilm.meta, backend=gpu_like, load_seconds=0.0)
    _, report = encode_texts(model, TEXTS, None)
    assert [n for n, _ in gpu_like.calls] == [4, 4, 2] and report.batch_size == 4
    # An override larger than the backend's own batch reaches the forward pass in one piece.
    gpu_like.calls.clear()
    vectors, report = encode_texts(model, TEXTS, None, batch_size=10)
    assert gpu_like.calls == [(10, 10)] and report.batch_size == 10
    reference, _ = encode_texts(minilm, TEXTS, None)
    for text in TEXTS:
        assert vectors[text] == pytest.approx(reference[text], abs=1e-5)
    with pytest.raises(ValueError, match="at least 1"):
        encode_texts(model, TEXTS, None, batch_size=0)


# --------------------------------------------------------------------- CLI


def test_cli_device_cuda_here_is_one_clear_line(capsys):
    code = cli.main(["compare", "a cat", "a dog", "--models", MINILM_L6, "--device", "cuda"])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_USAGE
    assert err.strip().splitlines() == [f"error: {dev.NO_CUDA}"]
    assert out == ""


def test_cli_run_device_cuda_fails_before_writing_anything(capsys, tmp_path):
    out_dir = tmp_path / "out"
    code = cli.main(["run", "--suite", "baseline", "--out", str(out_dir), "--models", MINILM_L6, "--device", "cuda", "--quiet"])
    _, err = capsys.readouterr()
    assert code == cli.EXIT_USAGE and err.strip().splitlines() == [f"error: {dev.NO_CUDA}"]
    assert not out_dir.exists()


def test_cli_auto_encodes_on_the_cpu_and_says_so(capsys, minilm):
    code = cli.main(["compare", "a cat sat", "a cat was sitting", "--models", MINILM_L6, "--json", "--no-cache"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["device"] == "cpu"
    code = cli.main(["compare", "a cat sat", "a cat was sitting", "--models", MINILM_L6, "--no-cache"])
    _, err = capsys.readouterr()
    assert "device: cpu" in err.splitlines()


def test_cli_batch_size_reaches_the_summary(capsys, tmp_path, minilm):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("text_a,text_b\na cat sat,a cat was sitting\nprices rose,prices fell\n")
    out_dir = tmp_path / "out"
    code = cli.main(
        ["run", "--suite", str(pairs), "--out", str(out_dir), "--models", MINILM_L6, "--batch-size", "3", "--quiet", "--no-cache"]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    encoding = json.loads((out_dir / "summary.json").read_text())["encoding"][MINILM_L6]
    assert (encoding["device"], encoding["batch_size"], encoding["encoded"]) == ("cpu", 3, 4)
    assert "device: cpu" in err.splitlines()


@pytest.mark.parametrize("bad", ["0", "-2"])
def test_cli_batch_size_below_one_is_refused(capsys, bad):
    code = cli.main(["compare", "a", "b", "--models", MINILM_L6, "--batch-size", bad])
    _, err = capsys.readouterr()
    assert code == cli.EXIT_USAGE and err.strip() == f"error: --batch-size must be at least 1, got {bad}"


def test_cli_stores_the_device_with_the_run(capsys, tmp_path, monkeypatch, minilm):
    from core.history import store

    history = tmp_path / "history.duckdb"
    monkeypatch.setenv("COSINE_PROBE_HISTORY", str(history))
    code = cli.main(["compare", "a cat sat", "a cat was sitting", "--models", MINILM_L6, "--json", "--no-cache"])
    _, err = capsys.readouterr()
    assert code == 0, err
    (run_id,) = store.list_runs(history)["run_id"]
    settings = store.load_run(int(run_id), history).settings
    assert settings["device"] == "auto" and settings["devices"] == {MINILM_L6: "cpu"}


# ------------------------------------------- auto without torch, and what a warm run reports


def test_may_have_gpu_reads_device_files_and_cuda_visible_devices(monkeypatch, tmp_path):
    monkeypatch.setattr(dev.sys, "platform", "linux")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(dev, "GPU_DEVICE_FILES", (str(tmp_path / "nvidiactl"),))
    assert dev.may_have_gpu() is False
    (tmp_path / "nvidiactl").touch()
    assert dev.may_have_gpu() is True
    for hidden in ("", "-1"):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", hidden)
        assert dev.may_have_gpu() is False
    monkeypatch.setattr(dev.sys, "platform", "darwin")
    monkeypatch.setattr(dev.platform, "machine", lambda: "arm64")
    assert dev.may_have_gpu() is True  # MPS needs no device file


def test_auto_asks_torch_only_when_a_gpu_may_be_there(monkeypatch):
    def torch_asked():
        raise AssertionError("torch was asked on a machine that cannot have a GPU")

    monkeypatch.setattr(dev, "visible_devices", torch_asked)
    monkeypatch.delitem(dev.sys.modules, "torch", raising=False)
    monkeypatch.setattr(dev, "may_have_gpu", lambda: False)
    assert dev.choose_device("auto") == "cpu"
    # Nor once torch is imported (or being imported by another thread, whose import lock a page would wait on).
    monkeypatch.setitem(dev.sys.modules, "torch", object())
    assert dev.choose_device("auto") == "cpu"
    monkeypatch.setattr(dev, "visible_devices", lambda: WITH_CUDA)
    monkeypatch.setattr(dev, "may_have_gpu", lambda: True)
    assert dev.choose_device("auto") == "cuda"


def test_the_probe_imports_torch_only_where_a_gpu_may_be(monkeypatch):
    monkeypatch.setattr(dev, "may_have_gpu", lambda: False)
    monkeypatch.setitem(dev.sys.modules, "torch", None)  # an import of torch now raises
    seen = dev.visible_devices.__wrapped__()
    assert (seen.cuda, seen.mps) == (False, False) and CPU_PROVIDER in seen.onnx_providers


def test_a_warm_run_reports_the_device_and_backend_a_cold_run_would(minilm, tmp_path, monkeypatch):
    """With a GPU visible, ``auto`` served from the cache says cuda and torch, as the load does.

    An ONNX model stays on the CPU without the CUDA provider.
    """
    from core.models.cache import EmbeddingCache
    from core.models.warm import cached_model

    cache = EmbeddingCache(tmp_path / "c.sqlite")
    texts = ["A warm gpu report", "is the cold one"]
    encode_texts(minilm, texts, cache)
    l3 = loading.load_model(MINILM_L3_ONNX)
    encode_texts(l3, texts, cache)
    assert cached_model(MINILM_L6, texts, cache).device == "cpu"  # this machine: no GPU

    monkeypatch.setattr(dev, "visible_devices", lambda: WITH_CUDA)
    monkeypatch.setattr(dev, "may_have_gpu", lambda: True)
    warm = cached_model(MINILM_L6, texts, cache, backend="auto")
    assert (warm.device, warm.meta.backend) == ("cuda", "torch")  # the exact ONNX export is for the CPU
    warm_l3 = cached_model(MINILM_L3_ONNX, texts, cache)
    assert (warm_l3.device, warm_l3.meta.backend) == ("cuda", "onnx")  # onnxruntime's CUDA provider is installed (WITH_CUDA)
    monkeypatch.setattr(dev, "visible_devices", lambda: VisibleDevices(cuda=True))
    assert cached_model(MINILM_L3_ONNX, texts, cache).device == "cpu"  # no CUDA provider: onnxruntime runs on the CPU
    monkeypatch.setattr(dev, "visible_devices", lambda: VisibleDevices())
    assert cached_model(MINILM_L6, texts, cache, device="cuda") is None  # not here: the load says why, as for a cold run
