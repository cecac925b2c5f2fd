"""The two sentences of a pair as token ids, with the tokens and words an explanation names.

A side keeps the exact ids the model receives (prompt and special tokens
included, cut at the model's maximum length) and marks which of them are the
text's own tokens: only those are occluded or attributed.  Words come from the
fast tokenizer's pre-tokenizer (``word_ids``), so a word is what the model's
tokenizer split before WordPiece: punctuation is a word of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import constants


@dataclass(frozen=True)
class Side:
    """One sentence of a pair as the model sees it.

    Attributes:
        side: ``A`` or ``B``.
        text: the sentence as given (without the prompt).
        input_ids: every id the model receives, specials and prompt included: (L,).
        positions: indices into ``input_ids`` of the text's own tokens: (T,).
        tokens: the token strings at ``positions``: (T,).
        word_of: the word number of each of those tokens: (T,).
        words: the words of the text, by word number: (W,).
        truncated: the text was longer than the model keeps.
    """

    side: str
    text: str
    input_ids: tuple[int, ...]
    positions: tuple[int, ...]
    tokens: tuple[str, ...]
    word_of: tuple[int, ...]
    words: tuple[str, ...]
    truncated: bool

    def word_positions(self, word: int) -> tuple[int, ...]:
        """Indices into ``input_ids`` of every token of word number ``word``."""
        return tuple(p for p, w in zip(self.positions, self.word_of, strict=True) if w == word)


def tokenize_side(tokenizer, text: str, side: str, *, prompt: str = "", max_length: int = 512) -> Side:
    """Tokenize one sentence and map its tokens to words.

    Args:
        tokenizer: a fast Hugging Face tokenizer (offsets and ``word_ids`` are needed).
        text: the sentence.
        side: ``A`` or ``B``.
        prompt: the model's prefix; its tokens are fed to the model but never explained.
        max_length: tokens kept, specials included; the rest is cut as the model cuts it.

    Raises:
        ValueError: for an empty text, an unknown side, or a slow tokenizer.
    """
    if side not in (constants.SIDE_A, constants.SIDE_B):
        raise ValueError(f"side must be {constants.SIDE_A!r} or {constants.SIDE_B!r}, got {side!r}")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"sentence {side} is empty: nothing to explain")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("explanations need a fast tokenizer (token offsets and word ids)")
    return _tokenize(tokenizer, text, side, prompt, max_length)


def _tokenize(tokenizer, text: str, side: str, prompt: str, max_length: int) -> Side:
    full = prompt + text
    enc = tokenizer(full, truncation=True, max_length=max_length, return_offsets_mapping=True, return_special_tokens_mask=True)
    n_all = len(tokenizer(full, truncation=False, verbose=False)["input_ids"])
    ids = list(enc["input_ids"])
    pieces = tokenizer.convert_ids_to_tokens(ids)
    word_ids = enc.word_ids()
    start_of_text = len(prompt)
    spans: dict[int, list[int]] = {}
    kept: list[tuple[int, int]] = []
    for pos, (special, (start, end), word) in enumerate(zip(enc["special_tokens_mask"], enc["offset_mapping"], word_ids, strict=True)):
        if special or word is None or start < start_of_text:
            continue
        kept.append((pos, word))
        span = spans.setdefault(word, [start, end])
        span[1] = max(span[1], end)
    order = {w: i for i, w in enumerate(spans)}
    words = tuple(full[s:e] for s, e in spans.values())
    return Side(
        side=side,
        text=text,
        input_ids=tuple(ids),
        positions=tuple(p for p, _ in kept),
        tokens=tuple(pieces[p] for p, _ in kept),
        word_of=tuple(order[w] for _, w in kept),
        words=words,
        truncated=n_all > len(ids),
    )
