"""Exact fp32 ONNX exports of the bundled torch models: made once, verified against torch, rebuilt when damaged.

One real export of all-MiniLM-L6-v2 is made per module (a few seconds) in the
session's cache folder; the torch reference is the shared ``minilm`` fixture
(the test session's default backend is torch, see conftest).
"""

from __future__ import annotations

import hashlib
import json
import math
import os

import numpy as np
import pytest

from core import constants
from core.cli import main as cli
from core.models import loading, onnx_export, registry
from core.models.bundled import bundle_path
from core.models.encode import encode_texts
from core.models.loaders import loader_for
from core.models.onnx_export import ExactOnnxBackend, ExportError, verify_export
from core.models.registry import MINILM_L3_ONNX, MINILM_L6, MPNET, REGISTRY
from core.papers.suites import load_suite
from core.probes.explain.forward import embed_ids, is_torch

BUNDLE = REGISTRY[MINILM_L6].bundle


@pytest.fixture(scope="module")
def exact(minilm):
    """MiniLM on its exact ONNX export, made and verified here once."""
    return loading.load_model(MINILM_L6, device="cpu", backend="onnx")


def _pair_cosines(vectors: dict[str, np.ndarray], pairs) -> np.ndarray:
    a = np.stack([vectors[t] for t in pairs["text_a"]]).astype(np.float64)
    b = np.stack([vectors[t] for t in pairs["text_b"]]).astype(np.float64)
    return np.einsum("ij,ij->i", a, b)


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------- fidelity


def test_the_export_reproduces_torch_on_the_failure_mode_suite(exact, minilm):
    pairs = load_suite(constants.SUITE_FAILURE_MODES)
    texts = sorted(set(pairs["text_a"]) | set(pairs["text_b"]))
    got = dict(zip(texts, exact.backend.embed(texts), strict=True))
    want = dict(zip(texts, minilm.backend.embed(texts), strict=True))
    diff = np.abs(_pair_cosines(got, pairs) - _pair_cosines(want, pairs))
    assert len(diff) == len(pairs) > 300
    assert diff.max() <= constants.ONNX_VERIFY_TOLERANCE
    # Exact, not merely close: float32 round-off is about 1e-7 (the notes measured 3.6e-7 at most).
    assert diff.max() < 1e-6


def test_long_texts_are_cut_where_torch_cuts_them(exact, minilm):
    long_text = " ".join(f"word{i}" for i in range(400))  # far past 256 tokens
    assert len(minilm.tokenizer.tokenize(long_text)) > 256
    got, want = exact.backend.embed([long_text, "short"]), minilm.backend.embed([long_text, "short"])
    assert np.abs(got - want).max() < 1e-6


def test_batch_size_and_order_do_not_change_a_vector(exact):
    texts = ["a", "The patient is not allergic to penicillin at all.", "two words", "Zürich 🙂", "x " * 40]
    whole = exact.backend.embed(texts)
    for size in (1, 2, 32):
        assert np.abs(exact.backend.embed(texts, batch_size=size) - whole).max() < 1e-6
    reversed_rows = exact.backend.embed(texts[::-1])[::-1]
    assert np.abs(reversed_rows - whole).max() < 1e-6
    assert np.allclose(np.linalg.norm(whole, axis=1), 1.0, atol=1e-6)
    assert exact.backend.embed([]).shape == (0, 384)


def test_verification_record_names_the_file_it_vouches_for(exact):
    record = onnx_export.read_verification(BUNDLE)
    path = onnx_export.export_folder(BUNDLE) / "model.onnx"
    assert record["onnx_sha256"] == _sha256(path)
    assert record["weights_sha256"] == onnx_export.BUNDLES[BUNDLE].sha256
    assert record["n_texts"] == len(onnx_export.VERIFY_TEXTS)
    assert 0.0 <= record["max_cosine_diff"] <= constants.ONNX_VERIFY_TOLERANCE
    assert record["opset"] == constants.ONNX_OPSET
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_VERIFIED


def test_verify_export_against_a_hand_computation():
    class Fixed:
        def __init__(self, rows):
            self.rows = np.asarray(rows, dtype=np.float32)

        def embed(self, texts, batch_size=None):
            return self.rows

    s = 1 / math.sqrt(2)
    reference = Fixed([[1, 0], [0, 1], [s, s]])
    candidate = Fixed([[1, 0], [0, 1], [1, 0]])
    check = verify_export(candidate, reference, texts=("a", "b", "c"))
    # cos(b, c): torch s, export 0; cos(a, c): s vs 1 (1 - s is smaller). Largest component gap: |0 - s|.
    assert check.max_cosine_diff == pytest.approx(s, abs=1e-6)
    assert check.max_embedding_diff == pytest.approx(s, abs=1e-6)
    assert not check.ok
    assert verify_export(reference, reference, texts=("a", "b", "c")).max_cosine_diff == 0.0
    with pytest.raises(ValueError, match="at least two texts"):
        verify_export(reference, reference, texts=("a",))


# ------------------------------------------------------------- damage and rebuild


def test_a_damaged_export_is_detected_and_rebuilt(exact, minilm):
    folder = onnx_export.export_folder(BUNDLE)
    path = folder / "model.onnx"
    before = onnx_export.read_verification(BUNDLE)["onnx_sha256"]
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(4096)  # same size, other bytes: a flipped block on disk
    path.write_bytes(bytes(data))
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_DAMAGED

    built: list[str] = []
    rebuilt = onnx_export.verified_export(BUNDLE, bundle_path(BUNDLE), 256, reference=lambda: minilm.backend, on_build=built.append)
    assert built, "a damaged export must be rebuilt, not used"
    assert _sha256(rebuilt) == onnx_export.read_verification(BUNDLE)["onnx_sha256"]
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_VERIFIED
    # The torch exporter is deterministic here: the rebuilt file is the first one.
    assert _sha256(rebuilt) == before
    again = ExactOnnxBackend(rebuilt, bundle_path(BUNDLE), 256)
    assert np.abs(again.embed(["The cat sat on the mat."]) - minilm.backend.embed(["The cat sat on the mat."])).max() < 1e-6


def _flip_keeping_size_and_mtime(path) -> None:
    """Negate one float's sign bit in the middle of the file and restore its modification time."""
    stat = path.stat()
    with open(path, "r+b") as fh:
        fh.seek(stat.st_size // 2)
        byte = fh.read(1)
        fh.seek(stat.st_size // 2)
        fh.write(bytes([byte[0] ^ 0x80]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_a_same_size_same_mtime_bit_flip_is_never_used_nor_cached(exact, minilm, fresh_cache, capsys, monkeypatch):
    path = onnx_export.export_folder(BUNDLE) / "model.onnx"
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_VERIFIED
    _flip_keeping_size_and_mtime(path)
    assert _sha256(path) != onnx_export.read_verification(BUNDLE)["onnx_sha256"]
    # `models --json` must not vouch for it ...
    assert cli.main(["models", "--json"]) == 0
    listed = {m["model"]: m for m in json.loads(capsys.readouterr().out)}
    assert listed[MINILM_L6]["onnx_export"] == onnx_export.STATUS_DAMAGED
    # ... and a fresh load rebuilds it before a vector is computed, so the shared cache gets torch's vectors.
    monkeypatch.setattr(loading, "_LOADED", {k: v for k, v in loading._LOADED.items() if len(k) == 3})
    monkeypatch.setattr(loading, "_LOAD_LOCKS", {})
    reloaded = loading.load_model(MINILM_L6, device="cpu", backend="onnx")
    assert any("made its exact ONNX export" in note for note in reloaded.notes)
    texts = ["The patient is allergic to penicillin.", "The patient is not allergic to penicillin."]
    encode_texts(reloaded, texts, fresh_cache)
    cached = fresh_cache.get_many(reloaded.cache_key, texts)
    want = minilm.backend.embed(texts)
    assert np.abs(np.stack([cached[t] for t in texts]) - want).max() < 1e-6
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_VERIFIED


def test_a_record_for_other_weights_or_a_missing_file_is_not_trusted(exact, monkeypatch):
    folder = onnx_export.export_folder(BUNDLE)
    record = json.loads((folder / "verified.json").read_text())
    monkeypatch.setattr(onnx_export, "_read_record", lambda _folder: {**record, "weights_sha256": "0" * 64})
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_DAMAGED
    monkeypatch.setattr(onnx_export, "_read_record", lambda _folder: None)
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_MISSING
    assert onnx_export.export_status(REGISTRY[MINILM_L3_ONNX].bundle) == onnx_export.STATUS_NOT_EXPORTABLE


def test_an_export_that_cannot_run_leaves_nothing_behind(tmp_path, monkeypatch, minilm):
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(onnx_export, "export_transformer", lambda folder, target: target.write_bytes(b"not onnx"))
    with pytest.raises(ExportError, match="ONNX export of minilm_l6 failed"):
        onnx_export.verified_export(BUNDLE, bundle_path(BUNDLE), 256, reference=lambda: minilm.backend)
    assert [p.name for p in onnx_export.export_folder(BUNDLE).iterdir() if p.name != ".lock"] == []


def test_an_export_that_departs_from_torch_is_refused_and_removed(tmp_path, monkeypatch):
    class Fixed:
        def __init__(self, *args, rows=None):
            self.rows = np.asarray(rows if rows is not None else [[1, 0], [0, 1]], dtype=np.float32)

        def embed(self, texts, batch_size=None):
            return self.rows

    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path))
    monkeypatch.setattr(onnx_export, "export_transformer", lambda folder, target: target.write_bytes(b"stand-in export"))
    monkeypatch.setattr(onnx_export, "ExactOnnxBackend", Fixed)
    s = 1 / math.sqrt(2)
    # Cosine of the two texts: 0 under the "export", s under "torch".
    with pytest.raises(ExportError, match=r"does not reproduce torch: max \|cosine diff\| 7.07e-01 > 1e-05"):
        onnx_export.verified_export(BUNDLE, bundle_path(BUNDLE), 256, reference=lambda: Fixed(rows=[[1, 0], [s, s]]))
    assert [p.name for p in onnx_export.export_folder(BUNDLE).iterdir() if p.name != ".lock"] == []
    assert onnx_export.export_status(BUNDLE) == onnx_export.STATUS_MISSING


# ------------------------------------------------------------- choosing the backend


def resolve_backend(meta, requested, device):
    """The backend a load picks: the model's loader's record decides."""
    return loader_for(meta).backend(meta, requested, device)


@pytest.mark.parametrize(
    ("name", "requested", "device", "expected"),
    [
        (MINILM_L6, "auto", "cpu", "onnx"),
        (MINILM_L6, None, "cpu", "onnx"),
        (MPNET, "auto", "cpu", "onnx"),
        (MINILM_L6, "auto", "cuda", "torch"),
        (MINILM_L6, "torch", "cpu", "torch"),
        (MINILM_L6, "ONNX ", "cuda", "onnx"),
        (MINILM_L3_ONNX, "auto", "cpu", "onnx"),
        (MINILM_L3_ONNX, "onnx", "cpu", "onnx"),
        (registry.BGE_LARGE, "auto", "cpu", "torch"),
    ],
)
def test_resolve_backend(monkeypatch, name, requested, device, expected):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    assert resolve_backend(REGISTRY[name], requested, device) == expected


def test_resolve_backend_refuses_what_a_model_does_not_have(monkeypatch):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    with pytest.raises(ValueError, match="exists only as ONNX"):
        resolve_backend(REGISTRY[MINILM_L3_ONNX], "torch", "cpu")
    with pytest.raises(ValueError, match="no exact ONNX export"):
        resolve_backend(REGISTRY[registry.BGE_LARGE], "onnx", "cpu")
    with pytest.raises(ValueError, match="backend must be one of"):
        resolve_backend(REGISTRY[MINILM_L6], "tensorrt", "cpu")
    monkeypatch.setenv(constants.BACKEND_ENV_VAR, "torch")
    assert resolve_backend(REGISTRY[MINILM_L6], None, "cpu") == "torch"
    assert resolve_backend(REGISTRY[MINILM_L6], "onnx", "cpu") == "onnx"  # an explicit choice beats the environment


def test_auto_uses_the_verified_export_and_shares_it_with_an_explicit_onnx(exact, monkeypatch):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    auto = loading.load_model(MINILM_L6, device="cpu")
    assert auto is exact
    assert isinstance(auto.backend, ExactOnnxBackend) and auto.meta.backend == "onnx"
    # Same weights, same vectors: the cache key does not depend on the backend.
    assert auto.cache_key == loading.load_model(MINILM_L6, device="cpu", backend="torch").cache_key


def test_a_failed_export_falls_back_to_torch_under_auto_and_fails_under_onnx(minilm, monkeypatch):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    monkeypatch.setattr(loading, "_LOADED", {k: v for k, v in loading._LOADED.items() if len(k) == 3})
    monkeypatch.setattr(loading, "_LOAD_LOCKS", {})

    def broken(*args, **kwargs):
        raise ExportError("the ONNX export of minilm_l6 does not reproduce torch: max |cosine diff| 1.00e-02 > 1e-05")

    monkeypatch.setattr(onnx_export, "verified_export", broken)
    with pytest.raises(loading.ModelUnavailable, match="does not reproduce torch"):
        loading.load_model(MINILM_L6, device="cpu", backend="onnx")
    fallback = loading.load_model(MINILM_L6, device="cpu")
    assert fallback.meta.backend == "torch" and not isinstance(fallback.backend, ExactOnnxBackend)
    assert any("does not reproduce torch" in note and "running on torch" in note for note in fallback.notes)


def test_an_unusable_cache_folder_leaves_the_model_on_torch(minilm, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(blocker))
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    monkeypatch.setattr(loading, "_LOADED", {k: v for k, v in loading._LOADED.items() if len(k) == 3})
    monkeypatch.setattr(loading, "_LOAD_LOCKS", {})
    with pytest.raises(ExportError, match="cannot keep the ONNX export"):
        onnx_export.verified_export(BUNDLE, bundle_path(BUNDLE), 256, reference=lambda: minilm.backend)
    model = loading.load_model(MINILM_L6, device="cpu")
    assert model.meta.backend == "torch"
    assert any("cannot keep the ONNX export" in note for note in model.notes)
    vector = model.backend.embed(["The cat sat on the mat."])
    assert np.abs(vector - minilm.backend.embed(["The cat sat on the mat."])).max() < 1e-6


# ------------------------------------------------------------- explain needs torch: the twin


def test_explain_probes_reach_the_torch_twin_and_occlusion_stays_on_onnx(exact, minilm):
    assert is_torch(exact)
    assert exact.backend.model is minilm.backend.model  # the shared torch instance, not a second copy
    ids = minilm.tokenizer("The cat sat on the mat.")["input_ids"]
    got = embed_ids(exact, [ids])
    want = minilm.backend.embed(["The cat sat on the mat."])
    assert np.abs(got - want).max() < 1e-6


# ------------------------------------------------------------- the CLI


def _run_summary(cli_args, tmp_path, capsys) -> dict:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("text_a\ttext_b\nThe backend test cat sat\tThe backend test cat slept\nA red car\tA blue car\n", encoding="utf-8")
    code = cli.main(
        ["run", "--suite", str(pairs), "--models", MINILM_L6, "--out", str(tmp_path / "out"), "--no-cache", "--quiet", "--json", *cli_args]
    )
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_cli_backend_torch_bypasses_the_export(exact, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")

    def forbidden(*args, **kwargs):
        raise AssertionError("--backend torch must not touch the ONNX export")

    monkeypatch.setattr(onnx_export, "verified_export", forbidden)
    monkeypatch.setattr(onnx_export, "ExactOnnxBackend", forbidden)
    summary = _run_summary(["--backend", "torch"], tmp_path, capsys)
    assert summary["encoding"][MINILM_L6]["backend"] == "torch"


def test_cli_default_runs_the_export_and_scores_as_torch(exact, minilm, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(constants.BACKEND_ENV_VAR, raising=False)
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    summary = _run_summary([], tmp_path, capsys)
    assert summary["encoding"][MINILM_L6]["backend"] == "onnx"
    import pandas as pd

    rows = pd.read_csv(tmp_path / "out" / "pairs.csv")
    want = minilm.backend.embed(list(rows["text_a"]) + list(rows["text_b"]))
    n = len(rows)
    expected = np.einsum("ij,ij->i", want[:n].astype(np.float64), want[n:].astype(np.float64))
    assert np.abs(rows["cosine"].to_numpy() - expected).max() < 1e-6


def test_models_export_onnx_reports_each_export(exact, capsys, monkeypatch):
    monkeypatch.setattr(registry, "BUNDLED", (MINILM_L6, MINILM_L3_ONNX))  # mpnet's export would cost half a minute here
    assert cli.main(["models", "--export-onnx", "--json"]) == 0
    captured = capsys.readouterr()
    rows = {r["model"]: r for r in json.loads(captured.out)}
    assert rows[MINILM_L6]["onnx_export"] == onnx_export.STATUS_VERIFIED
    assert rows[MINILM_L3_ONNX]["onnx_export"] == onnx_export.STATUS_NOT_EXPORTABLE
    assert "exact ONNX export of MiniLM-L6: verified" in captured.err
    assert "MiniLM-L3" not in captured.err
