"""One-line error messages: the first line of an exception's text, cut and with a fallback for a blank message."""

from __future__ import annotations


def first_line(exc: BaseException, limit: int | None = None, fallback: str | None = None) -> str:
    """The first line of ``exc``'s message, for an error that must stay on one line.

    Args:
        exc: the exception.
        limit: at most this many characters of the line (None: the whole line).
        fallback: what a blank message gives; None gives the exception's type name.

    Returns:
        The first line of the stripped message, cut to ``limit``.
    """
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__ if fallback is None else fallback
    return lines[0] if limit is None else lines[0][:limit]


def typed_first_line(exc: BaseException, limit: int | None = 300) -> str:
    """``Type: first line of the message`` (at most ``limit`` characters of the line), for a one-line error that names what failed."""
    return f"{type(exc).__name__}: {first_line(exc, limit, '')}"
