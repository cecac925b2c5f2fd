"""A real Hugging Face hub cache, written offline, holding tiny stand-ins under the papers' model ids.

The papers' models cannot be downloaded here, so the tests save a tiny,
randomly initialised sentence-transformers model (BERT, 2 layers, hidden 32,
the bundled MiniLM WordPiece vocabulary) with the configuration files its
real repository has (pooling, maximum length, prompts, in the legacy formats
those repositories still use), and install it in a temporary ``HF_HOME``
exactly as ``huggingface_hub`` lays out a download
(https://huggingface.co/docs/huggingface_hub/guides/manage-cache)::

    <HF_HOME>/hub/models--ORG--NAME/
        blobs/<etag>                      file contents; etag = sha256 for LFS files, git blob sha1 otherwise
        refs/main                         the commit ``main`` points at (no newline)
        snapshots/<commit>/<path>         relative symlinks to ../../blobs/<etag>
        trees/<commit>.json               the file listing huggingface_hub >= 1.x keeps to tell a complete
                                          snapshot from a partial one

Tests check the layout with ``huggingface_hub.scan_cache_dir``.  Nothing
here is collected as a test.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.models import loading, sources
from core.models.bundled import tokenizer_path

HIDDEN = 32
LFS_SUFFIXES = (".safetensors", ".bin", ".onnx", ".h5", ".msgpack")
# A commit that is not any registry pin: "the snapshot the user's cache holds".
OTHER_COMMIT = hashlib.sha1(b"a snapshot the registry did not pin").hexdigest()
UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: connections are refused at once


@dataclass(frozen=True)
class StandIn:
    """How one stand-in is configured, mirroring its real repository's sentence-transformers files.

    Attributes:
        repo_id: the papers' Hugging Face id it stands in for.
        pooling: ``cls`` or ``mean`` (written as the legacy ``pooling_mode_*`` flags).
        max_seq_length: tokens kept (``sentence_bert_config.json``).
        normalize: a ``Normalize`` module follows the pooling.
        prompts: ``config_sentence_transformers.json`` prompts.
        default_prompt_name: its ``default_prompt_name``.
        seed: torch seed of the random weights.
    """

    repo_id: str
    pooling: str
    max_seq_length: int = 512
    normalize: bool = True
    prompts: dict[str, str] = field(default_factory=dict)
    default_prompt_name: str | None = None
    seed: int = 0


def build_standin(spec: StandIn, folder: Path) -> Path:
    """Save a tiny random sentence-transformers model configured like ``spec`` into ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path("minilm_l6")))
    # At BERT's usual initializer range (0.02) every CLS state of a random model is nearly the same
    # vector (cosines of 0.99999 between any two sentences); at 0.2 they spread like a real model's.
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        initializer_range=0.2,
    )
    torch.manual_seed(spec.seed)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if spec.normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        (folder / "2_Normalize").mkdir(exist_ok=True)
    _write_json(folder / "modules.json", modules)
    _write_json(folder / "sentence_bert_config.json", {"max_seq_length": spec.max_seq_length, "do_lower_case": False})
    (folder / "1_Pooling").mkdir(exist_ok=True)
    _write_json(
        folder / "1_Pooling" / "config.json",
        {
            "word_embedding_dimension": HIDDEN,
            "pooling_mode_cls_token": spec.pooling == "cls",
            "pooling_mode_mean_tokens": spec.pooling == "mean",
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
    )
    st_config: dict = {"__version__": {"sentence_transformers": "2.2.2", "transformers": "4.28.1", "pytorch": "1.13.0"}}
    if spec.prompts:
        st_config |= {"prompts": spec.prompts, "default_prompt_name": spec.default_prompt_name}
    _write_json(folder / "config_sentence_transformers.json", st_config)
    return folder


def _write_json(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=2) + "\n")


def git_blob_sha1(data: bytes) -> str:
    """The id git gives a file's contents (what the hub reports as ``blob_id`` and uses as a non-LFS etag)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _lfs_pointer(data: bytes) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\nsize {len(data)}\n".encode()


def install(hub: Path, repo_id: str, model_folder: Path, commit: str, ref: str | None = "main") -> Path:
    """Put a model folder into a hub cache as ``repo_id`` at ``commit``, as a download would.

    Args:
        hub: the hub cache folder (``$HF_HOME/hub``).
        repo_id: ``ORG/NAME``.
        model_folder: the files to install.
        commit: 40 hex characters, the snapshot's name.
        ref: a ref (``main``) to point at the commit, or None for none.

    Returns:
        The snapshot folder.
    """
    storage = hub / f"models--{repo_id.replace('/', '--')}"
    snapshot = storage / "snapshots" / commit
    (storage / "blobs").mkdir(parents=True, exist_ok=True)
    entries = {}
    for path in sorted(p for p in model_folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        relative = path.relative_to(model_folder).as_posix()
        lfs = path.name.endswith(LFS_SUFFIXES)
        etag = hashlib.sha256(data).hexdigest() if lfs else git_blob_sha1(data)
        blob = storage / "blobs" / etag
        if not blob.exists():
            blob.write_bytes(data)
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
        entries[relative] = (
            len(data),
            git_blob_sha1(_lfs_pointer(data) if lfs else data),
            hashlib.sha256(data).hexdigest() if lfs else None,
        )
    if ref is not None:
        (storage / "refs").mkdir(parents=True, exist_ok=True)
        (storage / "refs" / ref).write_text(commit)
    _write_tree_listing(storage, commit, entries)
    return snapshot


def _write_tree_listing(storage: Path, commit: str, entries: dict[str, tuple[int, str, str | None]]) -> None:
    """``trees/<commit>.json`` through huggingface_hub's own writer, when this version keeps one."""
    try:
        from huggingface_hub._tree_cache import TreeCacheEntry, write_tree_cache
    except ImportError:  # older clients keep no listing; the layout is complete without it
        return
    listing = {
        path: TreeCacheEntry(size=size, blob_id=blob_id, lfs_sha256=sha256, lfs_size=size if sha256 else None)
        for path, (size, blob_id, sha256) in entries.items()
    }
    write_tree_cache(str(storage), commit, listing)


def use_hf_home(monkeypatch, home: Path) -> Path:
    """Point this process (and subprocesses) at ``home`` as ``HF_HOME``, the hub unreachable; returns the hub folder.

    huggingface_hub reads its cache folder into module constants at import,
    so those are patched too; the remembered hub probe is forgotten so the
    refusing endpoint is what availability sees.
    """
    from huggingface_hub import constants

    hub = home / "hub"
    hub.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_ENDPOINT", UNREACHABLE_HUB)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(sources, "_HUB_STATE", {})
    return hub


def forget(*names: str) -> None:
    """Drop loaded instances and tokenizers of these models, so the next load reads the cache again."""
    with loading._REGISTRY_LOCK:
        for key in [k for k in loading._LOADED if k[0] in names]:
            del loading._LOADED[key]
    for name in names:
        loading._TOKENIZERS.pop(name, None)


# ------------------------------------------------------------ hand computation


def hand_vectors(folder: Path, texts: list[str], max_seq_length: int) -> dict[str, np.ndarray]:
    """CLS and mean-pooled vectors, L2-normalised, computed from the transformer's hidden states by hand.

    Returns:
        ``{"cls": (n, HIDDEN), "mean": (n, HIDDEN)}`` float64 arrays.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_seq_length, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**enc).last_hidden_state.double().numpy()  # (n, tokens, HIDDEN)
    mask = enc["attention_mask"].numpy()[..., None].astype(np.float64)  # (n, tokens, 1)
    cls = hidden[:, 0, :]
    mean = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
    return {"cls": _unit(cls), "mean": _unit(mean)}


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)
