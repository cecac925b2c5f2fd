"""The two ways a model turns texts into vectors: sentence-transformers and ONNX.

Both meet :class:`core.models.protocols.Backend` (every member declared
there): ``embed`` returns L2-normalized float32 rows, ``tokenizer`` meets
:class:`core.models.protocols.Tokenizer`, and ``max_seq_length`` is the
number of tokens (specials included) kept per text, always finite.  The real
backends also say what they observed on loading, which may differ from the
registry: ``device`` (where they run), ``batch_size`` (texts per forward
pass on that device), ``pooling`` and ``default_prompt`` (the prompt
sentence-transformers would add by default; never added here, callers
prepend the prompt they mean).

A sentence-transformers model of static embeddings (``StaticEmbedding``,
model2vec's kind: a mean of per-token vectors, no transformer) has no limit
of its own (sentence-transformers says ``math.inf``) and its tokenizer is a
``tokenizers.Tokenizer`` that adds no special tokens: it keeps what its
``tokenizer.json`` truncates at, else ``STATIC_MAX_TOKENS`` (set on its
tokenizer here, so the model really keeps no more), and is tokenized here
exactly as it encodes (:class:`core.models.fast_tokenizer.FastTokenizer`
without special tokens).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.constants import BATCH_SIZE_BY_DEVICE, DEVICE_CPU, ENCODE_BATCH_SIZE
from core.models.device import CPU_PROVIDER, provider_device
from core.models.fast_tokenizer import FastFirstTokenizer, FastTokenizer
from core.models.protocols import Backend, BackendDefaults, Tokenizer
from core.stats.similarity import normalize_rows

# Two cores: more threads than that only fight each other.
_THREADS = max(1, min(2, os.cpu_count() or 1))

# transformers 5 imports its classes lazily, on first use, and those first
# imports are not thread-safe: two threads running ``from transformers import
# AutoTokenizer`` at once (an ONNX model loading in one Streamlit session while
# another loads a tokenizer) fail with "ImportError: cannot import name
# 'AutoTokenizer' from 'transformers'", and ``from_pretrained`` imports more
# classes the same way.  So every construction of Hugging Face objects in the
# process (backends here, standalone tokenizers in core.models) holds this
# lock.  Encoding does not: it only uses what a load already imported.
HF_LOAD_LOCK = threading.RLock()


__all__ = ["HF_LOAD_LOCK", "STATIC_MAX_TOKENS", "Backend", "OnnxBackend", "TorchBackend"]

# Tokens a static-embedding model keeps when its tokenizer.json sets no truncation: it has no limit of its own,
# and a bound keeps a many-megabyte cell's cost bounded (core.models.bounds) as for every model.
STATIC_MAX_TOKENS = 8192


def _l2_normalize(x: np.ndarray) -> np.ndarray:
    """Unit rows by the one safe normalisation (:func:`core.stats.similarity.normalize_rows`); a zero or non-finite row is refused."""
    return normalize_rows(x).astype(np.float32)


def _hub_tokenizer(folder: Path | str) -> Any:
    """transformers' tokenizer of a folder, under the process-wide load lock."""
    with HF_LOAD_LOCK:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(folder))


def _truncating(file: Path, max_length: int) -> Any:
    """A ``tokenizer.json`` that pads nothing and cuts at ``max_length`` (special tokens included), as a model encodes."""
    from tokenizers import Tokenizer as _Tokenizer

    fast = _Tokenizer.from_file(str(file))
    # The shipped files pad every text to 128 and cut at 128: padding is done per batch instead.
    fast.no_padding()
    fast.enable_truncation(max_length=max_length)
    return fast


def padded_ids(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(batch, longest) int64 ids padded with ``pad_id`` on the right, and the matching attention mask."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


class TorchBackend(BackendDefaults):
    """A sentence-transformers model (honours the model's own pooling config)."""

    kind = "torch"

    def __init__(
        self,
        name_or_path: str,
        *,
        revision: str | None = None,
        trust_remote_code: bool = False,
        local_files_only: bool = False,
        device: str = DEVICE_CPU,
    ) -> None:
        with HF_LOAD_LOCK:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            # transformers draws a "Loading weights" bar per load; the CLI's output and a server's log are no place for it.
            hf_logging.disable_progress_bar()
            if torch.get_num_threads() > _THREADS:
                torch.set_num_threads(_THREADS)
            self.model = SentenceTransformer(
                name_or_path,
                device=device,
                revision=revision,
                trust_remote_code=trust_remote_code,
                local_files_only=local_files_only,
            )
        self.device = device
        self.batch_size = BATCH_SIZE_BY_DEVICE.get(device, ENCODE_BATCH_SIZE)
        self.tokenizer, self.max_seq_length, static = _tokenizer_and_limit(self.model)
        # Gradients and hidden states come from a transformer; a static model's mean of token vectors has neither.
        self.has_torch = not static
        self.torch_model = self.model
        dim_fn = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(dim_fn() or 0)
        self.pooling = _pooling_of(self.model)
        default_name = getattr(self.model, "default_prompt_name", None)
        self.default_prompt = (getattr(self.model, "prompts", None) or {}).get(default_name, "") if default_name else ""

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        vecs = self.model.encode(
            texts,
            batch_size=batch_size or self.batch_size,
            # Callers prepend the prompt themselves (so token counts and cache keys see it);
            # an explicit empty prompt stops sentence-transformers adding the model's default on top.
            prompt="",
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)


def _tokenizer_and_limit(model: Any) -> tuple[Tokenizer, int, bool]:
    """(tokenizer, tokens kept, is static) of a sentence-transformers model.

    A transformer's tokenizer is Hugging Face's and its limit the model's.  A
    static-embedding model's tokenizer is a raw ``tokenizers.Tokenizer`` that
    adds no special tokens and its limit ``math.inf``: it keeps what its
    tokenizer truncates at, else :data:`STATIC_MAX_TOKENS`, which is then set
    on that tokenizer so the model keeps no more than it is said to.
    """
    from tokenizers import Tokenizer as RawTokenizer

    raw = model.tokenizer
    limit = model.max_seq_length
    if not isinstance(raw, RawTokenizer):
        return raw, int(limit or 512), False
    if limit is None or not math.isfinite(limit):
        truncation = raw.truncation
        if truncation and truncation.get("max_length"):
            limit = int(truncation["max_length"])
        else:
            limit = STATIC_MAX_TOKENS
            raw.enable_truncation(max_length=limit)
    return FastTokenizer.of(raw, special_tokens=False), int(limit), True


def _pooling_of(model) -> str:
    """The pooling a sentence-transformers model applies (``cls``, ``mean``, ``max``+``mean``, …), or ``unknown``."""
    for module in model:
        bag_mode = getattr(getattr(module, "embedding", None), "mode", None)  # a static model pools in its EmbeddingBag: mean, sum or max
        if isinstance(bag_mode, str):
            return bag_mode
        mode = getattr(module, "pooling_mode", None)
        if mode:
            return mode if isinstance(mode, str) else "+".join(mode)
    return "unknown"


class OnnxBackend(BackendDefaults):
    """An ONNX export run by onnxruntime, mean-pooled with the attention mask."""

    kind = "onnx"
    pooling = "mean"
    default_prompt = ""

    def __init__(self, onnx_path: Path, tokenizer_dir: Path, max_seq_length: int, providers: list[str] | None = None) -> None:
        with HF_LOAD_LOCK:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = _THREADS
            opts.inter_op_num_threads = 1
            # Every graph optimization (onnxruntime's default, stated): fusions are exact in fp32.
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # ORT's worker threads spin after each run by default; on two cores that
            # spinning starves the torch models encoding right after (3x slower).
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.session = ort.InferenceSession(str(onnx_path), opts, providers=providers or [CPU_PROVIDER])
            self.onnx_session = self.session
        # Encoding and counting read tokenizer.json by the tokenizers library; transformers (and the torch it imports)
        # loads only when an explanation asks the Hugging Face tokenizer for more.
        self._fast: Any = None
        self._pad_id = 0
        file = Path(tokenizer_dir) / "tokenizer.json"
        if file.is_file():
            self.tokenizer = FastFirstTokenizer(file, lambda: _hub_tokenizer(tokenizer_dir))
            self._fast = _truncating(file, max_seq_length)
            self._pad_id = self.tokenizer.pad_id or 0
        else:
            self.tokenizer = _hub_tokenizer(tokenizer_dir)
        # What the session really got: onnxruntime drops a provider it cannot start.
        self.device = provider_device(self.session.get_providers())
        self.batch_size = BATCH_SIZE_BY_DEVICE[self.device]
        self.max_seq_length = max_seq_length
        self._inputs = {i.name for i in self.session.get_inputs()}
        # The first output is the token-level hidden state for the int8 export;
        # the L3 export's token states are the 3-D output among several.
        self._token_output = next(o.name for o in self.session.get_outputs() if len(o.shape) == 3)
        self.dimension = int(self.session.get_outputs()[0].shape[-1]) if self._token_output == self.session.get_outputs()[0].name else 384
        for out in self.session.get_outputs():
            if out.name == self._token_output and isinstance(out.shape[-1], int):
                self.dimension = out.shape[-1]

    def _encoded(self, batch: list[str]) -> dict[str, np.ndarray]:
        """Ids, attention mask and token types of a batch, padded to its longest text and cut at the model's limit."""
        if self._fast is None:
            enc = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_seq_length, return_tensors="np")
            return {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        ids, mask = padded_ids([e.ids for e in self._fast.encode_batch(list(batch))], self._pad_id)
        # One sentence per input: every token type is 0, as the Hugging Face tokenizer gives.
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        batch_size = batch_size or self.batch_size
        rows = []
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            enc = self._encoded(batch)
            feed = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in self._inputs}
            (hidden,) = self.session.run([self._token_output], feed)
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            rows.append(pooled)
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return _l2_normalize(np.concatenate(rows, axis=0))
