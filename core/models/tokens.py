"""How a model's tokenizer sees a text: subword splits, counts, [UNK], cut-off.

Works with any Hugging Face tokenizer (WordPiece, SentencePiece, BPE).  Word
splits tokenize each whitespace/punctuation-separated word on its own, which
for WordPiece is exactly how the sentence is split (BERT's pre-tokenizer
splits on whitespace and punctuation before WordPiece runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.messages import redact
from core.models import registry
from core.models.loading import ModelUnavailable, load_tokenizer, max_seq_length
from core.models.protocols import Tokenizer
from core.words import pretokenizer_words


@dataclass(frozen=True)
class WordSplit:
    """One word and its subword pieces.

    Attributes:
        word: the word as typed.
        pieces: subword tokens, e.g. ``["x", "##yl", "##op", "##hri", "##x"]``.
        in_vocab: the word is a single vocabulary entry (one piece, not [UNK]).
        n_unk: pieces that are the unknown token.
    """

    word: str
    pieces: tuple[str, ...]
    in_vocab: bool
    n_unk: int


@dataclass(frozen=True)
class Tokenization:
    """A text as one model's tokenizer sees it.

    Attributes:
        text: the input text.
        tokens: subword tokens without special tokens.
        n_tokens: ``len(tokens)``.
        n_with_special: tokens the model receives ([CLS], [SEP] included).
        max_tokens: what the model keeps.
        n_past_max: tokens cut off (0 when the text fits).
        n_unk: [UNK] tokens.
        words: per-word splits.
    """

    text: str
    tokens: tuple[str, ...]
    n_tokens: int
    n_with_special: int
    max_tokens: int
    n_past_max: int
    n_unk: int
    words: tuple[WordSplit, ...]

    @property
    def truncated(self) -> bool:
        return self.n_past_max > 0


_LOCKS: dict[int, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def tokenizer_lock(tokenizer) -> threading.RLock:
    """The lock serializing calls on one tokenizer object.

    Hugging Face fast tokenizers reset their padding/truncation state on every
    call, so two threads using one instance can corrupt each other's batch.
    """
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(tokenizer), threading.RLock())


def token_counts(tokenizer, texts: Sequence[str]) -> list[int]:
    """Tokens each text becomes, special tokens included (batched, fast)."""
    if not texts:
        return []
    with tokenizer_lock(tokenizer):
        enc = tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)
    return [len(ids) for ids in enc["input_ids"]]


def _unk(tokenizer) -> str | None:
    return getattr(tokenizer, "unk_token", None)


def word_pieces(tokenizer, word: str) -> list[str]:
    """Subword pieces of one word (no special tokens)."""
    with tokenizer_lock(tokenizer):
        return list(tokenizer.tokenize(word))


def is_vocab_entry(tokenizer, word: str) -> bool:
    """True when ``word`` is a single vocabulary entry of this tokenizer.

    SentencePiece/BPE tokenizers mark a word start (``▁word``, ``Ġword``);
    that marker still counts as one entry.
    """
    pieces = word_pieces(tokenizer, word)
    return len(pieces) == 1 and pieces[0] != _unk(tokenizer)


def split_word(tokenizer, word: str) -> WordSplit:
    """The :class:`WordSplit` of one word."""
    pieces = tuple(word_pieces(tokenizer, word))
    unk = _unk(tokenizer)
    n_unk = sum(1 for p in pieces if p == unk)
    return WordSplit(word, pieces, len(pieces) == 1 and n_unk == 0, n_unk)


def tokenize(tokenizer, text: str, max_tokens: int) -> Tokenization:
    """Tokenize a text the way the model will, and say what gets cut.

    Args:
        tokenizer: a Hugging Face tokenizer.
        text: any text.
        max_tokens: the model's maximum sequence length (specials included).
    """
    with tokenizer_lock(tokenizer):
        tokens = tuple(tokenizer.tokenize(text))
    n_special = token_counts(tokenizer, [text])[0]
    unk = _unk(tokenizer)
    words = tuple(split_word(tokenizer, w) for w in pretokenizer_words(text))
    return Tokenization(
        text=text,
        tokens=tokens,
        n_tokens=len(tokens),
        n_with_special=n_special,
        max_tokens=max_tokens,
        n_past_max=max(0, n_special - max_tokens),
        n_unk=sum(1 for t in tokens if t == unk),
        words=words,
    )


def identical_splits(splits: dict[str, Sequence[str]]) -> bool:
    """True when every model split a text into the same tokens.

    Word-start markers (``▁``, ``Ġ``) and WordPiece's ``##`` are ignored, so
    tokenizers of different families compare by where they cut, not by how
    they spell a cut.
    """

    def norm(tokens: Sequence[str]) -> tuple[str, ...]:
        return tuple(t.replace("##", "", 1).lstrip("▁Ġ").lower() for t in tokens)

    forms = {norm(t) for t in splits.values()}
    return len(forms) <= 1


def piece_counts(tokenizer, words: Sequence[str]) -> dict[str, int]:
    """Subword pieces each word becomes under ``tokenizer`` (no special tokens).

    Used for the OOV paper's Table 2/10 counts: ``{"Bitcoin": 3, "Google": 1}``
    under MiniLM's WordPiece.
    """
    return {w: len(word_pieces(tokenizer, w)) for w in dict.fromkeys(words)}


def load_tokenizers(
    names: Sequence[str], loader: Callable[[str], Tokenizer] = load_tokenizer
) -> tuple[list[tuple[str, Tokenizer]], dict[str, str]]:
    """Every model's tokenizer that loads, and why the others did not.

    Args:
        names: model names, aliases, hub ids or folders, in the order wanted.
        loader: name -> tokenizer; pages pass their cached
            ``ui.resources.tokenizer`` so a tokenizer loads once per server.

    Returns:
        ``(loaded, errors)``: ``loaded`` holds ``(registry name, tokenizer)``
        in the order of ``names`` (length ``<= len(names)``); ``errors`` maps
        each name that failed, as given, to its one-line reason.
    """
    loaded: list[tuple[str, Tokenizer]] = []
    errors: dict[str, str] = {}
    for name in names:
        try:
            loaded.append((registry.resolve(name).name, loader(name)))
        except (ModelUnavailable, ValueError) as exc:
            errors[name] = redact(exc)
    return loaded, errors


def token_rows(
    tokenizers: Sequence[tuple[str, Tokenizer]], texts: Sequence[str], max_tokens: Callable[[str], int] = max_seq_length
) -> list[dict[str, Any]]:
    """How each model's tokenizer cuts each text, one row per model and text.

    Args:
        tokenizers: ``(model, tokenizer)`` pairs as :func:`load_tokenizers` gives them.
        texts: the texts, each tokenized once per model (repeats are kept).
        max_tokens: model -> tokens the model keeps (specials included).

    Returns:
        ``len(tokenizers) * len(texts)`` rows, models outer and texts inner,
        each with ``model``, ``text``, ``tokens`` (list), ``n_tokens``,
        ``n_with_special``, ``max_tokens``, ``n_past_max``, ``n_unk``,
        ``identical_across_models`` (every model cut this text alike, see
        :func:`identical_splits`) and ``words`` (a list of ``{word, pieces,
        in_vocab, n_unk}``).
    """
    unique = list(dict.fromkeys(texts))
    splits = {model: {text: tokenize(tok, text, max_tokens(model)) for text in unique} for model, tok in tokenizers}
    same = {text: identical_splits({model: by_text[text].tokens for model, by_text in splits.items()}) for text in unique}
    return [_token_row(model, splits[model][text], same[text]) for model, _ in tokenizers for text in texts]


def _token_row(model: str, t: Tokenization, identical: bool) -> dict[str, Any]:
    return {
        "model": model,
        "text": t.text,
        "tokens": list(t.tokens),
        "n_tokens": t.n_tokens,
        "n_with_special": t.n_with_special,
        "max_tokens": t.max_tokens,
        "n_past_max": t.n_past_max,
        "n_unk": t.n_unk,
        "identical_across_models": identical,
        "words": [{"word": w.word, "pieces": list(w.pieces), "in_vocab": w.in_vocab, "n_unk": w.n_unk} for w in t.words],
    }
