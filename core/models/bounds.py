"""Cutting a very long text to what a model can use before it is tokenized.

A model keeps its first ``max_seq_length`` tokens, but a Hugging Face
tokenizer asked for the whole of a 4 MB cell builds every token, offset and
id first (about 2 GB and 20 s for MiniLM) and only then truncates.  So a
text longer than a window of characters is cut at a word boundary, and the
window doubles until the cut text holds comfortably more tokens than the
model keeps.  The tokens the model sees are then the same as for the whole
text (the pre-tokenizers of WordPiece, SentencePiece and byte-level BPE split
at whitespace before anything else), and the text is still reported as
truncated; its token count becomes a lower bound.

The window stops doubling at ``MAX_WINDOW_FACTOR`` times the first one.  A
text whose first that-many characters still hold fewer tokens than the model
keeps has no word boundary near (50 MB of ``a`` is one word, a single
``[UNK]`` to WordPiece): it is cut there by characters, so one pair never
costs minutes and gigabytes (measured before: 524 s and 3.1 GB for 50 MB).
The model then sees only that first part, and the text is reported as cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.models.tokens import token_counts

# A token is rarely longer than 8 characters of English, so the first window
# usually holds enough tokens; it doubles when it does not.
CHARS_PER_TOKEN = 8
# Tokens beyond the limit a cut text must hold: a cut inside an unbroken run
# of characters can change the last word's pieces, never the ones before.
MARGIN_TOKENS = 16
# Looking this far back from the window's end for whitespace to cut at.
_BOUNDARY_LOOKBACK = 256
# The window's largest size, in first windows: 64 x 8 characters per token (131,072 characters for a
# 256-token model), far beyond any text whose words a tokenizer splits into pieces.
MAX_WINDOW_FACTOR = 64


@dataclass(frozen=True)
class ModelInput:
    """What the model is given for one text.

    Attributes:
        text: the text to encode (the whole text, or its first part).
        n_tokens: tokens of ``text``, special tokens included.
        cut: True when ``text`` is only the first part of the original; then
            ``n_tokens`` is a lower bound of the original's tokens (above the
            model's limit, unless the text was cut by characters: see the module).
    """

    text: str
    n_tokens: int
    cut: bool = False


def _cut(text: str, n_chars: int) -> str:
    """``text[:n_chars]``, ending before the last whitespace of its tail when there is one."""
    head = text[:n_chars]
    tail_start = max(0, n_chars - _BOUNDARY_LOOKBACK)
    space = max(head.rfind(" ", tail_start), head.rfind("\n", tail_start), head.rfind("\t", tail_start))
    return head[:space] if space > 0 else head


def _bounded(tokenizer, text: str, max_tokens: int) -> ModelInput:
    window = max_tokens * CHARS_PER_TOKEN
    largest = window * MAX_WINDOW_FACTOR
    while window < len(text):
        head = _cut(text, window)
        n = token_counts(tokenizer, [head])[0]
        if n >= max_tokens + MARGIN_TOKENS or window >= largest:
            return ModelInput(head, n, cut=True)
        window = min(window * 2, largest)
    return ModelInput(text, token_counts(tokenizer, [text])[0])


def model_inputs(tokenizer, texts: Sequence[str], max_tokens: int) -> list[ModelInput]:
    """Each text as the model should be given it, with its token count.

    Texts up to ``max_tokens * CHARS_PER_TOKEN`` characters are counted
    whole, in one batch; longer ones are cut as the module says, so the
    memory and time spent on one text stay bounded by the model's limit
    rather than by the text's length.

    Args:
        tokenizer: a Hugging Face tokenizer.
        texts: n texts.
        max_tokens: tokens the model keeps (special tokens included).

    Returns:
        n :class:`ModelInput`, in order.

    Raises:
        ValueError: ``max_tokens`` is not positive.
    """
    if max_tokens <= 0:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    window = max_tokens * CHARS_PER_TOKEN
    short = [t for t in texts if len(t) <= window]
    counted = dict(zip(short, token_counts(tokenizer, short), strict=True))
    return [ModelInput(t, counted[t]) if t in counted else _bounded(tokenizer, t, max_tokens) for t in texts]
