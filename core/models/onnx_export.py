"""Exact fp32 ONNX exports of the bundled torch models: made once, verified, then used by default.

all-MiniLM-L6-v2 and all-mpnet-base-v2 ship as sentence-transformers
folders.  Their transformer is exported once with ``torch.onnx.export``
(the TorchScript exporter, ``dynamo=False``; opset 17; dynamic batch and
sequence axes; eager attention) into the cache folder::

    <cache>/onnx/<bundle>-<weights sha256[:12]>/model.onnx
    <cache>/onnx/<bundle>-<weights sha256[:12]>/verified.json

Before first use the export is checked against the torch model on a fixed set
of texts (:data:`VERIFY_TEXTS`: short and long, padded and truncated,
accented, CJK, emoji): every cosine between two of them must agree within
``ONNX_VERIFY_TOLERANCE`` (1e-5).  Only then is ``verified.json`` written,
recording the export's sha256; an export whose file no longer hashes to the
recorded value (damaged, half-written, replaced) is rebuilt and verified
again.  Nothing is quantized: the export computes what torch computes, in
fp32, to round-off (measured: max |cosine diff| 3.6e-7 MiniLM, 8.9e-7 mpnet).

:class:`ExactOnnxBackend` runs a verified export with onnxruntime (every graph
optimization, two intra-op threads) and the ``tokenizers`` library directly:
the bundled ``tokenizer.json`` files pad every text to 128 tokens and cut at
128, so padding is redone per batch (to the batch's longest text, with the
model's pad id) and truncation is reset to the model's ``max_seq_length``
(256 MiniLM, 384 mpnet).  Texts are sorted by length before batching, as
sentence-transformers does.  Encoding imports neither torch nor
transformers' models; gradients and hidden states (the explain probes) come
from the torch twin the loader hands in, loaded only when asked for.

The vectors equal the torch model's to float32 round-off, so both backends
share one embedding cache key (the weights' sha256).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.constants import BACKEND_AUTO, BACKEND_CHOICES, BACKEND_ENV_VAR, ONNX_EXPORT_FOLDER, ONNX_OPSET, ONNX_VERIFY_TOLERANCE
from core.messages import typed_first_line
from core.models.backends import HF_LOAD_LOCK, Backend, OnnxBackend, _l2_normalize, padded_ids
from core.models.bundled import BUNDLES, sha256_file, verify_file
from core.models.registry import BACKEND_ONNX, BACKEND_TORCH, SOURCE_BUNDLED, ModelMeta
from core.paths import cache_dir

# The bundles whose weights are a sentence-transformers folder (transformer + mean pooling + normalize).
EXPORTABLE_BUNDLES = ("minilm_l6", "mpnet")

STATUS_VERIFIED = "verified"
STATUS_MISSING = "not made yet"
STATUS_DAMAGED = "damaged: rebuilt at next use"
STATUS_NOT_EXPORTABLE = "-"

_MODEL_FILE = "model.onnx"
_RECORD_FILE = "verified.json"
_LONG_TEXT = " ".join(["the quick brown fox jumps over the lazy dog while the patient waits"] * 40)

# Fixed: changing it changes what "verified" means (old records stay valid, being about the file).
VERIFY_TEXTS: tuple[str, ...] = (
    "The patient is allergic to penicillin.",
    "The patient is not allergic to penicillin.",
    "A man is playing a guitar on stage.",
    "Nobody is playing any instrument.",
    "The cat sat on the mat.",
    "The mat sat on the cat.",
    "Yes.",
    "no",
    "   leading and trailing spaces   ",
    "Numbers 3.14159, 2026-11-23 and $1,000,000 are tokens too!",
    "Zürich, São Paulo and Kraków; a naïve café résumé.",
    "日本語のテキストも含まれます。",
    "emoji 🙂 and symbols © ™ ± ≥",
    "The zorbex quantumflux recalibrated the florpian manifold.",
    "Aspirin does not increase the risk of bleeding in most patients.",
    "The meeting was moved from Tuesday to Thursday afternoon because the room was booked.",
    "In 1905 Einstein published four papers that changed physics: on the photoelectric effect, Brownian motion, "
    "special relativity and the equivalence of mass and energy.",
    _LONG_TEXT,  # past every bundled model's max_seq_length: truncation must match
)


class ExportError(RuntimeError):
    """An export could not be made or did not reproduce the torch model; the message is one line."""


@dataclass(frozen=True)
class Verification:
    """How an export compared with the torch model on :data:`VERIFY_TEXTS`.

    Attributes:
        max_cosine_diff: largest |cosine(onnx) - cosine(torch)| over every pair of texts.
        max_embedding_diff: largest |component difference| of the normalized vectors.
        n_texts: texts compared (every pair of them is a cosine).
        tolerance: the bound ``max_cosine_diff`` must stay within.
    """

    max_cosine_diff: float
    max_embedding_diff: float
    n_texts: int
    tolerance: float = ONNX_VERIFY_TOLERANCE

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.max_cosine_diff) and self.max_cosine_diff <= self.tolerance)


# ------------------------------------------------------------- backend choice


def requested_backend(requested: str | None) -> str:
    """The backend choice in force: ``requested``, else ``$COSINE_PROBE_BACKEND``, else ``auto``.

    Raises:
        ValueError: a choice other than ``auto``, ``torch`` or ``onnx``.
    """
    choice = (requested or os.environ.get(BACKEND_ENV_VAR, "") or BACKEND_AUTO).strip().lower()
    if choice not in BACKEND_CHOICES:
        raise ValueError(f"backend must be one of {', '.join(BACKEND_CHOICES)}; got {choice!r}")
    return choice


def is_exportable(meta: ModelMeta) -> bool:
    """True for the bundled sentence-transformers models that get an exact ONNX export."""
    return meta.source == SOURCE_BUNDLED and meta.backend == BACKEND_TORCH and meta.bundle in EXPORTABLE_BUNDLES


# ------------------------------------------------------------- where and status


def export_folder(bundle: str) -> Path:
    """The folder of a bundle's export: named by the weights it was made from."""
    _check_bundle(bundle)
    return cache_dir() / ONNX_EXPORT_FOLDER / f"{bundle}-{BUNDLES[bundle].sha256[:12]}"


def export_status(bundle: str) -> str:
    """``verified``, ``not made yet`` or ``damaged…`` for an exportable bundle, ``-`` for any other.

    Hashes the export in full once per process (rehashed when its size, mtime or ctime moves, like the weights).
    """
    if bundle not in EXPORTABLE_BUNDLES:
        return STATUS_NOT_EXPORTABLE
    folder = export_folder(bundle)
    record = _read_record(folder)
    if record is None or not (folder / _MODEL_FILE).is_file():
        return STATUS_MISSING
    return STATUS_VERIFIED if _record_matches(folder, record, bundle) else STATUS_DAMAGED


def read_verification(bundle: str) -> dict | None:
    """The record of a bundle's verified export (hashes, versions, the measured differences), or None."""
    return _read_record(export_folder(bundle))


def _check_bundle(bundle: str) -> None:
    if bundle not in EXPORTABLE_BUNDLES:
        raise ValueError(f"bundle {bundle!r} has no ONNX export; exportable: {', '.join(EXPORTABLE_BUNDLES)}")


def _read_record(folder: Path) -> dict | None:
    try:
        record = json.loads((folder / _RECORD_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _record_matches(folder: Path, record: dict, bundle: str) -> bool:
    """The record is about these weights and the file on disk still hashes to the verified value."""
    if record.get("weights_sha256") != BUNDLES[bundle].sha256 or not isinstance(record.get("onnx_sha256"), str):
        return False
    try:
        return verify_file(folder / _MODEL_FILE, record["onnx_sha256"])
    except OSError:
        return False


# ------------------------------------------------------------- export and verify

_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


def verified_export(
    bundle: str,
    model_folder: Path,
    max_seq_length: int,
    reference: Callable[[], Backend],
    *,
    on_build: Callable[[str], None] | None = None,
) -> Path:
    """The verified export of a bundled model, made (or remade) and verified first when needed.

    Args:
        bundle: an exportable bundle key (``minilm_l6``, ``mpnet``).
        model_folder: the bundle's sentence-transformers folder (verified weights).
        max_seq_length: tokens the model keeps, specials included.
        reference: builds the torch model the export is checked against; called
            only when an export is made.
        on_build: told one line before an export starts (the CLI prints it).

    Returns:
        Path of ``model.onnx``, recorded as verified.

    Raises:
        ValueError: a bundle with no export.
        ExportError: the export failed, its cosines departed from torch's by
            more than ``ONNX_VERIFY_TOLERANCE``, or the cache folder cannot hold it.
    """
    _check_bundle(bundle)
    if max_seq_length < 1:
        raise ValueError(f"max_seq_length must be at least 1; got {max_seq_length}")
    folder = export_folder(bundle)
    with _PROCESS_LOCKS_GUARD:
        lock = _PROCESS_LOCKS.setdefault(bundle, threading.Lock())
    try:
        with lock, _folder_lock(folder):
            record = _read_record(folder)
            if record is not None and (folder / _MODEL_FILE).is_file() and _record_matches(folder, record, bundle):
                return folder / _MODEL_FILE
            if on_build is not None:
                on_build(f"making the exact ONNX export of {bundle} (once; verified against torch before use)")
            return _build(bundle, folder, model_folder, max_seq_length, reference)
    except OSError as exc:  # an unusable cache folder (a file, read-only, full) must not take the model down
        raise ExportError(f"cannot keep the ONNX export of {bundle} in {folder} ({exc.strerror or exc})") from exc


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """One process at a time makes a bundle's export (where the OS offers file locks)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: two processes may both export; the atomic rename keeps either result whole
        yield
        return
    with open(folder / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(bundle: str, folder: Path, model_folder: Path, max_seq_length: int, reference: Callable[[], Backend]) -> Path:
    target = folder / _MODEL_FILE
    (folder / _RECORD_FILE).unlink(missing_ok=True)  # no record may outlive the file it vouches for
    staged = folder / f".{_MODEL_FILE}.{os.getpid()}.tmp"
    start = time.perf_counter()
    try:
        export_transformer(model_folder, staged)
        export_seconds = time.perf_counter() - start
        check = verify_export(ExactOnnxBackend(staged, model_folder, max_seq_length), reference())
    except ExportError:
        staged.unlink(missing_ok=True)
        raise
    except Exception as exc:  # noqa: BLE001 - torch's exporter and onnxruntime raise anything
        staged.unlink(missing_ok=True)
        raise ExportError(f"ONNX export of {bundle} failed ({typed_first_line(exc)})") from exc
    if not check.ok:
        staged.unlink(missing_ok=True)
        raise ExportError(
            f"the ONNX export of {bundle} does not reproduce torch: max |cosine diff| {check.max_cosine_diff:.2e} > {check.tolerance:.0e}"
        )
    os.replace(staged, target)
    _write_record(folder, bundle, check, export_seconds, time.perf_counter() - start)
    return target


def _write_record(folder: Path, bundle: str, check: Verification, export_seconds: float, total_seconds: float) -> None:
    import onnxruntime
    import torch

    record = {
        "bundle": bundle,
        "weights_sha256": BUNDLES[bundle].sha256,
        "onnx_sha256": sha256_file(folder / _MODEL_FILE),
        "opset": ONNX_OPSET,
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        **asdict(check),
        "export_seconds": round(export_seconds, 2),
        "seconds": round(total_seconds, 2),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    staged = folder / f".{_RECORD_FILE}.tmp"
    staged.write_text(json.dumps(record, indent=1))
    os.replace(staged, folder / _RECORD_FILE)
    verify_file(folder / _MODEL_FILE, record["onnx_sha256"])  # remember the hash: the next load does not rehash


def export_transformer(model_folder: Path, target: Path) -> None:
    """Export a sentence-transformers folder's transformer to ONNX: ``last_hidden_state`` of (batch, sequence).

    Inputs are ``input_ids`` and ``attention_mask`` (int64, shape (batch,
    sequence), both axes dynamic); ``token_type_ids`` is left to BERT's
    all-zeros default (mpnet has none).  The example batch is padded, so a
    masked position is traced as masked.

    Raises:
        ExportError: the folder holds no transformer the exporter can trace.
    """
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    if not (model_folder / "config.json").is_file():
        raise ExportError(f"{model_folder} has no config.json: not a transformer folder")
    with HF_LOAD_LOCK:
        hf_logging.disable_progress_bar()  # its "Loading weights" bar is no output of ours
        # Eager attention: sdpa's kernel is not traced as attention, and mpnet supports only eager.
        transformer = AutoModel.from_pretrained(str(model_folder), attn_implementation="eager").eval()
    ids = torch.tensor([[101, 2023, 2003, 1037, 3231, 102], [101, 7592, 102, 0, 0, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    axes = {0: "batch", 1: "sequence"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's warnings are about Python branches that do not apply here
        torch.onnx.export(
            _keyword_forward(transformer),
            (ids, mask),
            str(target),
            dynamo=False,
            opset_version=ONNX_OPSET,
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
            do_constant_folding=True,
        )


def _keyword_forward(transformer):
    """The transformer as a module of (input_ids, attention_mask) -> last_hidden_state.

    transformers 5's ``forward`` takes more than these two positional inputs,
    so the tracer must call it by keyword.
    """
    import torch

    class KeywordForward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return KeywordForward()


def verify_export(candidate: Backend, reference: Backend, texts: Sequence[str] = VERIFY_TEXTS) -> Verification:
    """Compare two backends on ``texts``: every pairwise cosine and every vector component.

    Args:
        candidate: the export under test.
        reference: the torch model.
        texts: n >= 2 texts.

    Returns:
        The largest differences over the (n, n) cosine matrices and the (n, dimension) vectors.

    Raises:
        ValueError: fewer than two texts, or backends of different dimension.
    """
    if len(texts) < 2:
        raise ValueError(f"verification needs at least two texts; got {len(texts)}")
    got = np.asarray(candidate.embed(list(texts)), dtype=np.float64)
    want = np.asarray(reference.embed(list(texts)), dtype=np.float64)
    if got.shape != want.shape:
        raise ValueError(f"the export gives vectors of shape {got.shape}, torch {want.shape}")
    cos_diff = np.abs(got @ got.T - want @ want.T)
    return Verification(float(cos_diff.max()), float(np.abs(got - want).max()), len(texts))


# ------------------------------------------------------------- the backend


class ExactOnnxBackend(OnnxBackend):
    """A verified fp32 export of a sentence-transformers model, mean-pooled and normalized as the model does.

    Attributes:
        kind: ``onnx``.
        has_torch: True when a torch twin was handed in (gradients and
            hidden states come from it: :attr:`model`, :attr:`torch_model`).
    """

    kind = BACKEND_ONNX

    def __init__(
        self,
        onnx_path: Path,
        model_folder: Path,
        max_seq_length: int,
        providers: list[str] | None = None,
        torch_twin: Callable[[], Backend] | None = None,
    ) -> None:
        super().__init__(onnx_path, model_folder, max_seq_length, providers=providers)
        if self._fast is None:
            raise ValueError(f"{model_folder}: an exact export encodes with its tokenizer.json, and it is missing")
        self._twin_factory = torch_twin
        self._twin: Backend | None = None
        self._twin_lock = threading.Lock()
        self.has_torch = torch_twin is not None

    @property
    def torch_model(self) -> Any:  # a property: the twin loads on first read
        """The torch twin's sentence-transformers model (loaded on first read); None without a twin."""
        return self.model if self._twin_factory is not None else None

    @property
    def model(self):
        """The torch twin's sentence-transformers model (loaded on first use).

        Raises:
            ValueError: no twin was handed in.
        """
        if self._twin_factory is None:
            raise ValueError("this ONNX export has no torch twin: load the model with backend='torch'")
        with self._twin_lock:
            if self._twin is None:
                self._twin = self._twin_factory()
        return self._twin.model  # type: ignore[attr-defined]

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Encode texts, ``batch_size`` per run; returns (n, dimension) L2-normalized float32."""
        size = batch_size or self.batch_size
        if size < 1:
            raise ValueError(f"batch_size must be at least 1; got {size}")
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        ids = [e.ids for e in self._fast.encode_batch(list(texts))]
        # Longest first, as sentence-transformers orders them: each batch pads little.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.empty((len(ids), self.dimension), dtype=np.float32)
        for start in range(0, len(order), size):
            chosen = order[start : start + size]
            batch_ids, mask = padded_ids([ids[i] for i in chosen], self._pad_id)
            (hidden,) = self.session.run([self._token_output], {"input_ids": batch_ids, "attention_mask": mask})
            out[chosen] = _mean_pool(hidden, mask)
        return _l2_normalize(out)


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mask-weighted mean of (batch, sequence, dimension) token states: (batch, dimension), as sentence-transformers pools."""
    weights = mask[..., None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
