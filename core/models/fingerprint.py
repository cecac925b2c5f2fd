"""Fingerprints of the weights a model is loaded from, for the embedding cache key.

A model name alone does not say which weights produced a vector: a local
folder can be overwritten in place, and an unpinned hub id resolves to
whatever snapshot the local Hugging Face cache holds.  The cache key
therefore carries a fingerprint of the weights actually used:

* a bundled model: the sha256 its weights are verified against
  (:mod:`core.models.bundled` refuses to load any other file);
* a hub model: the commit of the resolved snapshot (the snapshot folder's
  name in the Hugging Face cache);
* a local folder: a digest of its small files (configs, tokenizer) and, for
  each weights file, its size, modification time and its whole contents when
  it is under ``_WHOLE_WEIGHTS_BYTES`` (512 MiB: every bundled-size model);
  a bigger one gives its safetensors header and a few sampled blocks.

Each source's record (:mod:`core.models.sources`) picks its fingerprint from
these digests.  Everything here reads files only: no torch, no transformers, so a warm run
can compute a key without loading a model.  A folder fingerprint hashes a
weights file under 512 MiB whole (blake2b, about 1 GB/s: 0.1 s for MiniLM,
0.4 s for mpnet), once per process and again only when the file's size,
mtime, ctime or inode moves; a bigger file costs 64 KiB of samples.
"""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

from core.models.registry import ModelMeta

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".onnx_data", ".h5", ".msgpack", ".pt", ".pth", ".ckpt", ".gguf")
_WHOLE_FILE_BYTES = 4 * 1024 * 1024  # configs and tokenizers are hashed whole below this size
_WHOLE_WEIGHTS_BYTES = 512 * 1024 * 1024  # weights files up to this size are hashed whole
_SAMPLES = 16  # blocks read from each weights file above it
_SAMPLE_BYTES = 4096
_MAX_HEADER_BYTES = 100 * 1024 * 1024  # safetensors caps its JSON header at 100 MB
_MAX_FILES = 5000  # a folder with more files than a model has is hashed partially, never walked forever


def hub_snapshot(meta: ModelMeta) -> Path | None:
    """The local Hugging Face cache snapshot a hub model loads from, or None.

    The pinned revision first; a cache made without it still serves offline
    users, so then whatever snapshot the cache has.
    """
    from huggingface_hub import constants as hf_constants

    repo = meta.hf_id or meta.name
    # No cache folder for the repository: nothing to find. Said without importing snapshot_download (0.6 s of imports
    # in the first page's sidebar, which asks this of every hub model).
    if not (Path(hf_constants.HF_HUB_CACHE) / f"models--{repo.replace('/', '--')}").is_dir():
        return None
    from huggingface_hub import snapshot_download

    for revision in dict.fromkeys((meta.revision, None)):
        try:
            return Path(snapshot_download(repo, revision=revision, local_files_only=True))
        except Exception:  # noqa: BLE001 - any failure means "not cached"
            continue
    return None


def safetensors_header(path: Path) -> bytes:
    """The JSON header of a ``.safetensors`` file (tensor names, dtypes, shapes, offsets).

    Returns the first 64 KiB instead when the file is too short or its
    length prefix is implausible, so a damaged file still fingerprints.
    """
    with open(path, "rb") as fh:
        prefix = fh.read(8)
        if len(prefix) == 8:
            (length,) = struct.unpack("<Q", prefix)
            if 0 < length <= _MAX_HEADER_BYTES:
                header = fh.read(length)
                if len(header) == length:
                    return header
        fh.seek(0)
        return fh.read(65536)


_CONTENT_DIGESTS: dict[str, tuple[tuple[int, int, int, int, int], bytes]] = {}  # path -> (stat identity, digest)


def _content_digest(path: Path, stat: os.stat_result) -> bytes:
    """blake2b of a whole file, remembered for this process while its size, mtime, ctime, inode and device stay."""
    identity = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)
    known = _CONTENT_DIGESTS.get(str(path))
    if known is not None and known[0] == identity:
        return known[1]
    digest = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    _CONTENT_DIGESTS[str(path)] = (identity, digest.digest())
    return digest.digest()


def _sampled_blocks(path: Path, size: int) -> bytes:
    """``_SAMPLES`` blocks spread over a file: a rewrite that keeps size and mtime still shows."""
    if size <= _SAMPLES * _SAMPLE_BYTES:
        return path.read_bytes()
    step = (size - _SAMPLE_BYTES) // (_SAMPLES - 1)
    blocks = []
    with open(path, "rb") as fh:
        for i in range(_SAMPLES):
            fh.seek(i * step)
            blocks.append(fh.read(_SAMPLE_BYTES))
    return b"".join(blocks)


def _folder_files(folder: Path) -> list[Path]:
    """Files under a model folder, sorted; hidden folders (``.git``, ``.cache``) and symlinked folders skipped."""
    files: list[Path] = []
    # followlinks=False: a symlink loop inside the folder cannot trap the walk.
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files.extend(Path(root) / n for n in names if not n.startswith("."))
        if len(files) >= _MAX_FILES:
            break
    return sorted(files)[:_MAX_FILES]


def _file_record(path: Path, relative: str) -> bytes:
    stat = path.stat()
    head = f"{relative}\0{stat.st_size}\0".encode("utf-8", "surrogateescape")
    if path.name.endswith(WEIGHT_SUFFIXES):
        if stat.st_size <= _WHOLE_WEIGHTS_BYTES:
            return head + f"{stat.st_mtime_ns}\0whole\0".encode() + _content_digest(path, stat)
        body = f"{stat.st_mtime_ns}\0".encode() + _sampled_blocks(path, stat.st_size)
        if path.suffix == ".safetensors":
            body += safetensors_header(path)
        return head + body
    if stat.st_size <= _WHOLE_FILE_BYTES:
        return head + path.read_bytes()
    return head + f"{stat.st_mtime_ns}".encode()


def folder_fingerprint(folder: str | Path) -> str:
    """Digest of a local model folder's weights and configs (32 hex characters).

    Args:
        folder: a sentence-transformers or transformers model folder.

    Returns:
        blake2b-128 hex digest over every file's relative path and size; the
        contents of files up to 4 MiB; and each weights file's modification
        time and whole contents (up to 512 MiB; above, its safetensors header
        and 16 sampled 4 KiB blocks).  A file that
        cannot be read contributes its error instead, so the digest changes
        when a file becomes unreadable.

    Raises:
        ValueError: ``folder`` is not a folder.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    digest = hashlib.blake2b(digest_size=16)
    for path in _folder_files(root):
        relative = path.relative_to(root).as_posix()
        try:
            digest.update(_file_record(path, relative))
        except OSError as exc:
            digest.update(f"{relative}\0unreadable: {exc.errno}".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
