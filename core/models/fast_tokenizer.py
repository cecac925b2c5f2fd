"""A ``tokenizer.json`` run by the ``tokenizers`` library alone, behind the :class:`core.models.protocols.Tokenizer` interface."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


class FastTokenizer:
    """A ``tokenizer.json`` run by the ``tokenizers`` library alone: no transformers, no torch.

    It answers the two calls scoring makes of a Hugging Face fast tokenizer
    built from the same file, with the same results: ``tokenizer(texts,
    add_special_tokens=True, truncation=False)["input_ids"]`` (token counts)
    and ``tokenizer.tokenize(text)`` (pieces for token Jaccard).  Loading it
    takes milliseconds, so a run whose vectors are all cached loads no weights.

    The bundled ``tokenizer.json`` files ship ``padding: Fixed(128)`` and
    truncation at 128: both are switched off, as a counting tokenizer must.

    A model that never receives special tokens (sentence-transformers'
    ``StaticEmbedding`` encodes with ``add_special_tokens=False``) gets
    ``special_tokens=False``: its counts are then the ids the model really
    receives, whatever the caller asks.

    Args:
        path: a ``tokenizer.json`` file.
        special_tokens: the model receives the file's special tokens ([CLS], [SEP], ...).

    Raises:
        ValueError: the file is missing or not a tokenizer the library reads.
    """

    def __init__(self, path: str | Path, *, special_tokens: bool = True) -> None:
        from tokenizers import Tokenizer as _Tokenizer

        try:
            tok = _Tokenizer.from_file(str(path))
        except Exception as exc:  # noqa: BLE001 - the Rust side raises plain Exception for any bad file
            raise ValueError(f"{path}: not a tokenizer.json the tokenizers library reads ({exc})") from exc
        self._setup(tok, special_tokens)

    @classmethod
    def of(cls, tokenizer: Any, *, special_tokens: bool = True) -> FastTokenizer:
        """A copy of a loaded ``tokenizers.Tokenizer`` (the model's own is left as it is: its truncation is the model's).

        Args:
            tokenizer: a ``tokenizers.Tokenizer``.
            special_tokens: as for the constructor.
        """
        from tokenizers import Tokenizer as _Tokenizer

        made = cls.__new__(cls)
        made._setup(_Tokenizer.from_str(tokenizer.to_str()), special_tokens)
        return made

    def _setup(self, tok: Any, special_tokens: bool) -> None:
        padding = tok.padding
        self.pad_id: int | None = int(padding["pad_id"]) if padding else None  # the file's own, before padding is switched off
        tok.no_padding()
        tok.no_truncation()
        self._tok = tok
        self._special = special_tokens
        self.unk_token: str | None = getattr(tok.model, "unk_token", None)

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True, **_ignored: object) -> dict[str, list]:
        """``{"input_ids": [ids per text]}``; padding and truncation never apply."""
        batch = [texts] if isinstance(texts, str) else list(texts)
        ids = [enc.ids for enc in self._tok.encode_batch(batch, add_special_tokens=add_special_tokens and self._special)]
        return {"input_ids": ids[0] if isinstance(texts, str) else ids}

    def tokenize(self, text: str, *_args: object, **_kwargs: object) -> list[str]:
        """Subword pieces of ``text`` without special tokens."""
        return list(self._tok.encode(text, add_special_tokens=False).tokens)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of token ids (what occlusion embeds for a backend without an id path)."""
        return str(self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens))


# The keyword arguments of the counting call scoring makes (core.models.tokens.token_counts): nothing that pads or cuts.
_COUNTING_KWARGS = frozenset({"add_special_tokens", "truncation", "verbose"})


class FastFirstTokenizer:
    """A model's Hugging Face tokenizer whose counting calls are answered by its ``tokenizer.json`` alone.

    Scoring asks a tokenizer for token counts and pieces, which :class:`FastTokenizer` gives from the same file
    with the same results. An ONNX model needs neither transformers nor torch to encode, yet its load built
    transformers' AutoTokenizer for those two calls: importing both holds the GIL for about 2 s of CPU, which a
    page drawn meanwhile waited for. Those calls go to :class:`FastTokenizer`; every other call or attribute
    (the explanations' offsets, ids, decoding) goes to the Hugging Face tokenizer, built on first use by ``load_hub``.

    Args:
        path: the model's ``tokenizer.json``.
        load_hub: builds the Hugging Face tokenizer of the same folder (called once, on first use).

    Raises:
        ValueError: the file is missing or not a tokenizer the library reads.
    """

    def __init__(self, path: str | Path, load_hub: Callable[[], Any]) -> None:
        self._path = Path(path)
        self._fast = FastTokenizer(path)
        self._load_hub = load_hub
        self._hub: Any = None
        self._hub_lock = threading.Lock()
        self.unk_token: str | None = self._fast.unk_token
        self.pad_id = self._fast.pad_id

    @property
    def hub(self) -> Any:
        """The Hugging Face tokenizer (built on first read)."""
        with self._hub_lock:
            if self._hub is None:
                self._hub = self._load_hub()
        return self._hub

    def __call__(self, texts: Any, *args: Any, **kwargs: Any) -> Any:
        """The counting call (``add_special_tokens``, no truncation) by the file alone; any other by the Hugging Face tokenizer."""
        if not args and set(kwargs) <= _COUNTING_KWARGS and not kwargs.get("truncation", False):
            return self._fast(texts, add_special_tokens=bool(kwargs.get("add_special_tokens", True)))
        return self.hub(texts, *args, **kwargs)

    def tokenize(self, text: str, *args: Any, **kwargs: Any) -> list[str]:
        """Subword pieces without special tokens (by the file alone when asked nothing more)."""
        if not args and not kwargs:
            return self._fast.tokenize(text)
        return list(self.hub.tokenize(text, *args, **kwargs))

    def __deepcopy__(self, _memo: dict) -> FastFirstTokenizer:
        """A fresh instance over the same file (its own Hugging Face tokenizer, built on first use, as a copy would be)."""
        return FastFirstTokenizer(self._path, self._load_hub)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never reached for the members set in __init__; keeps copy and pickle from building the hub
            raise AttributeError(name)
        return getattr(self.hub, name)
