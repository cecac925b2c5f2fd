"""The cache key carries a fingerprint of the weights actually loaded.

Folder fingerprints are checked on a copy of the bundled MiniLM folder:
unchanged files give the same digest; a rewritten weights file, a config
edit, or weights swapped in with the old size and modification time give a
new one; computing it imports no torch.  The cache then treats changed
weights as a miss, with a note.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from core.models.bundled import BUNDLES, bundle_path
from core.models.cache import EmbeddingCache
from core.models.encode import encode_texts
from core.models.fingerprint import folder_fingerprint, safetensors_header
from core.models.loading import LoadedModel
from core.models.registry import MINILM_L6, MPNET, SOURCE_LOCAL, resolve
from core.models.sources import model_fingerprint
from core.paths import PROJECT_ROOT

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def minilm_folder():
    return bundle_path("minilm_l6")


@pytest.fixture
def copy(minilm_folder, tmp_path):
    """A copy of the bundled MiniLM folder (timestamps kept, as ``cp -p`` keeps them)."""
    target = tmp_path / "minilm-copy"
    shutil.copytree(minilm_folder, target)
    return target


def test_a_copy_with_its_timestamps_has_the_same_fingerprint(minilm_folder, copy):
    assert folder_fingerprint(copy) == folder_fingerprint(minilm_folder)
    assert len(folder_fingerprint(copy)) == 32


def test_rewriting_the_weights_changes_it(copy):
    before = folder_fingerprint(copy)
    weights = copy / "model.safetensors"
    weights.write_bytes(weights.read_bytes())  # same bytes, new modification time
    assert folder_fingerprint(copy) != before


def test_other_weights_with_the_old_size_and_time_change_it(copy):
    weights = copy / "model.safetensors"
    stat = weights.stat()
    before = folder_fingerprint(copy)
    data = bytearray(weights.read_bytes())
    header_end = 8 + int.from_bytes(data[:8], "little")
    # Fine-tuned weights differ everywhere; flip every byte after the header, keep size and mtime.
    body = np.frombuffer(bytes(data[header_end:]), dtype=np.uint8) ^ 0x5A
    weights.write_bytes(bytes(data[:header_end]) + body.tobytes())
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size and weights.stat().st_mtime_ns == stat.st_mtime_ns
    assert folder_fingerprint(copy) != before


def test_a_config_edit_changes_it(copy):
    before = folder_fingerprint(copy)
    config = copy / "sentence_bert_config.json"
    stat = config.stat()
    config.write_text(config.read_text().replace("256", "128"))
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert folder_fingerprint(copy) != before


def test_hidden_folders_do_not_count(copy):
    before = folder_fingerprint(copy)
    (copy / ".git").mkdir()
    (copy / ".git" / "index").write_bytes(b"noise")
    assert folder_fingerprint(copy) == before


def test_a_symlink_loop_inside_the_folder_does_not_trap_it(copy):
    (copy / "loop").symlink_to(copy / "loop")
    (copy / "sub").symlink_to(copy, target_is_directory=True)
    assert len(folder_fingerprint(copy)) == 32


def test_safetensors_header_is_its_json(minilm_folder):
    header = safetensors_header(minilm_folder / "model.safetensors")
    assert header.startswith(b"{") and b'"embeddings.word_embeddings.weight"' in header


def test_not_a_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a folder"):
        folder_fingerprint(tmp_path / "nothing")


def test_model_fingerprints_by_source(copy, tmp_path):
    assert model_fingerprint(resolve(MINILM_L6)) == f"sha256:{BUNDLES['minilm_l6'].sha256}"
    assert model_fingerprint(resolve(MPNET)) == f"sha256:{BUNDLES['mpnet'].sha256}"
    assert model_fingerprint(resolve(str(copy))) == f"folder:{folder_fingerprint(copy)}"
    hub = resolve("intfloat/e5-small-v2")
    assert model_fingerprint(hub, snapshot=tmp_path / "snapshots" / "abc123") == "commit:abc123"
    assert model_fingerprint(replace(hub, revision="feed")) == "revision:feed"  # not in the local Hugging Face cache


def test_fingerprinting_imports_no_torch_and_is_cheap(copy):
    code = (
        "import sys, time; t = time.perf_counter()\n"
        "from core.models.sources import model_fingerprint\nfrom core.models.registry import resolve\n"
        f"fp = model_fingerprint(resolve({str(copy)!r}))\n"
        "print(fp.startswith('folder:'), 'torch' in sys.modules, 'transformers' in sys.modules, time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120, check=True)
    is_folder, torch, transformers, seconds = out.stdout.split()
    assert (is_folder, torch, transformers) == ("True", "False", "False")
    assert float(seconds) < 5.0  # import of numpy/pandas included; the digest itself reads ~1 MB


def test_the_loaded_model_carries_its_fingerprint_in_its_key(minilm):
    assert minilm.fingerprint == f"sha256:{BUNDLES['minilm_l6'].sha256}"
    assert minilm.cache_key == f"{MINILM_L6}@sha256:{BUNDLES['minilm_l6'].sha256}|"


def test_changed_weights_are_a_miss_with_a_note(minilm, tmp_path):
    """Two loads of one folder name with different weights: the second never gets the first's vectors."""
    meta = replace(minilm.meta, name=str(tmp_path / "model"), source=SOURCE_LOCAL, local_path=str(tmp_path / "model"), bundle=None)
    old = LoadedModel(meta=meta, backend=minilm.backend, load_seconds=0.0, fingerprint="folder:" + "a" * 32)
    new = LoadedModel(meta=meta, backend=minilm.backend, load_seconds=0.0, fingerprint="folder:" + "b" * 32)
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    _, first = encode_texts(old, [A, B], cache)
    assert first.n_encoded == 2 and not first.notes

    reopened = EmbeddingCache(tmp_path / "e.sqlite")  # a later process
    _, second = encode_texts(new, [A, B], reopened)
    assert (second.n_encoded, second.n_cached) == (2, 0)
    (note,) = second.notes
    assert note.startswith(
        f"the model at {meta.name} changed since its vectors were cached (weights folder:aaaaaaaaaaaa, now folder:bbbbbbbbbbbb)"
    )
    _, third = encode_texts(new, [A, B], reopened)
    assert third.n_cached == 2 and not third.notes  # said once, then served from the new key
    cache.close()
    reopened.close()


def test_one_byte_outside_the_header_and_every_sampled_block_changes_it(copy):
    from core.models import fingerprint

    weights = copy / "model.safetensors"
    stat = weights.stat()
    before = folder_fingerprint(copy)
    step = (stat.st_size - fingerprint._SAMPLE_BYTES) // (fingerprint._SAMPLES - 1)
    offset = step + fingerprint._SAMPLE_BYTES + 100  # between the second and third sampled block, far past the header
    assert offset > 8 + len(safetensors_header(weights))
    with open(weights, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0x01]))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size and weights.stat().st_mtime_ns == stat.st_mtime_ns
    assert folder_fingerprint(copy) != before
