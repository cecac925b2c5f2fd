"""What is wrong with, or worth knowing about, a sentence a user typed.

The Compare page (and anything else that scores typed text) asks
:func:`check_text` before encoding.  A text with nothing visible in it is not
scored: two such texts become the same empty token sequence for most models
and score a meaningless cosine of 1.0.  Control characters (other than tab,
newline and carriage return) carry no meaning in a sentence and usually come
from pasting out of terminals or PDFs, so they are removed before scoring;
the widget keeps what the user typed.  Invisible formatting characters
(zero-width spaces and joiners, direction marks) do carry meaning in some
scripts and emoji sequences, so they are kept and scored as typed, with a
note, because tokenizers disagree about them and they can shift the cosine.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.messages import counted

_KEPT_CONTROLS = frozenset("\t\n\r")
_LINE_BREAKS = frozenset("\n\r\v\f\x85\u2028\u2029")
_MAX_LISTED = 5


@dataclass(frozen=True)
class TextCheck:
    """One typed text, checked.

    Attributes:
        label: how messages name the text (``Sentence A``, ``Line 3``).
        text: the text as typed.
        cleaned: the text to score: ``text`` without control characters.
        problem: why the text cannot be scored, or None when it can.
        notes: things the user should know about a text that is scored.
    """

    label: str
    text: str
    cleaned: str
    problem: str | None
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the text can be scored."""
        return self.problem is None


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc" and ch not in _KEPT_CONTROLS


def _is_invisible_format(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf"


def describe_char(ch: str) -> str:
    """``U+200B ZERO WIDTH SPACE``; control characters have no name, only the code."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}".rstrip()


def _listing(chars: list[str]) -> str:
    distinct = list(dict.fromkeys(chars))
    shown = ", ".join(describe_char(c) for c in distinct[:_MAX_LISTED])
    more = len(distinct) - _MAX_LISTED
    return f"{shown}, and {more} more" if more > 0 else shown


def _unusable(text: str) -> tuple[str | None, str]:
    """(Why nothing in ``text`` can be scored, or None; ``text`` without control characters)."""
    if not text:
        return "is empty", text
    if text.isspace():
        return ("holds only line breaks" if set(text) <= _LINE_BREAKS else "holds only whitespace"), text
    cleaned = "".join(c for c in text if not _is_control(c))
    if all(c.isspace() or _is_invisible_format(c) for c in cleaned):
        hidden = [c for c in text if _is_control(c) or _is_invisible_format(c)]
        return f"holds only invisible characters ({_listing(hidden)}), nothing a model could read", cleaned
    return None, cleaned


def _is_readable(ch: str) -> bool:
    return not (ch.isspace() or _is_control(ch) or _is_invisible_format(ch))


def unusable_reason(text: str) -> str | None:
    """Why nothing in ``text`` can be scored (empty, only whitespace, only invisible characters), or None.

    The same rule :func:`check_text` applies to typed text, for cells read
    from files; it stops at the first readable character, so a long cell
    costs nothing.
    """
    if any(_is_readable(ch) for ch in text):
        return None
    return _unusable(text)[0]


def _lone_surrogates(text: str) -> list[str]:
    return [c for c in text if "\ud800" <= c <= "\udfff"]


def check_text(text: str | None, label: str) -> TextCheck:
    """Decide whether a typed text can be scored and what to tell the user.

    Args:
        text: the text as typed (None counts as empty).
        label: the name messages use for it, e.g. ``"Sentence A"``.

    Returns:
        A :class:`TextCheck`; ``problem`` is set for an empty text, one of
        only whitespace, only line breaks, or only invisible characters.
    """
    text = text or ""
    reason, cleaned = _unusable(text)
    if reason is not None:
        return TextCheck(label, text, cleaned, f"{label} {reason}: type a sentence to compare.", ())
    halves = _lone_surrogates(text)
    if halves:
        # No tokenizer can encode these (they are not characters), so refusing beats a crash.
        problem = (
            f"{label} contains {_listing(halves)}, half of a character that is not valid Unicode (a lone surrogate): type or paste it "
            "again."
        )
        return TextCheck(label, text, cleaned, problem, ())
    notes: list[str] = []
    controls = [c for c in text if _is_control(c)]
    if controls:
        notes.append(
            f"{label}: removed {counted(len(controls), 'control character')} ({_listing(controls)}) before scoring; "
            "they carry no meaning in a sentence. What you typed is left as it was."
        )
    formats = [c for c in text if _is_invisible_format(c)]
    if formats:
        notes.append(
            f"{label} contains {counted(len(formats), 'invisible character')} ({_listing(formats)}), scored as typed: "
            "some tokenizers drop them and others keep them, so they can change the cosine."
        )
    if unicodedata.normalize("NFC", cleaned) != cleaned:
        notes.append(
            f"{label} writes some letters as a base letter plus a combining mark (not Unicode NFC), scored as typed: "
            "a model can score them differently from the same letters typed precomposed."
        )
    return TextCheck(label, text, cleaned, None, tuple(notes))


def check_lines(text: str | None, label: str = "Line") -> tuple[list[str], list[str]]:
    """Sentences from a one-per-line text box, cleaned, with what to tell the user.

    Blank lines separate sentences and are skipped silently; a line with only
    invisible characters is skipped with a note; every other line is cleaned
    as :func:`check_text` cleans it.

    Args:
        text: the box's content.
        label: prefix for messages; lines are numbered from 1 as typed.

    Returns:
        (sentences to score, stripped of surrounding whitespace; notes).
    """
    sentences: list[str] = []
    notes: list[str] = []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        name = f"{label} {number}"
        reason, _ = _unusable(line)
        if reason is not None:
            notes.append(f"{name} {reason}: skipped.")
            continue
        check = check_text(line, name)
        sentences.append(check.cleaned.strip())
        notes.extend(check.notes)
    return sentences, notes


def unknown_token_note(model_label: str, label: str, n_unknown: int, n_tokens: int) -> str | None:
    """A warning when a tokenizer turned part of a text into its unknown token.

    Every unknown token is the same token to the model, so texts that differ
    only in what became unknown (two different emoji, say) score as equal.

    Args:
        model_label: the model's display name.
        label: the text's display name, e.g. ``"Sentence A"``.
        n_unknown: unknown tokens in the text.
        n_tokens: all its tokens, special tokens excluded.
    """
    if n_unknown <= 0:
        return None
    return (
        f"{model_label}: {n_unknown} of {n_tokens} tokens of {label} are [UNK] (characters or words this tokenizer "
        "does not know). The model sees every [UNK] as the same token, so different unknown text can score as identical."
    )
