"""Command-line arguments that are not valid UTF-8.

Python decodes ``argv`` bytes it cannot read as UTF-8 into lone surrogates
(``caf\\xe9`` becomes ``'caf\\udce9'``); such a string cannot be encoded, so
it would crash a tokenizer, a file name or a JSON dump far from where it came
in.  The CLI checks every argument first and stops with one line instead.
"""

from __future__ import annotations

from collections.abc import Sequence

_SURROGATES = range(0xD800, 0xE000)


def _has_surrogate(text: str) -> bool:
    return any(ord(ch) in _SURROGATES for ch in text)


def undecodable_argument(argv: Sequence[str]) -> str | None:
    """The message for the first argument that is not valid UTF-8, or None when all are.

    Args:
        argv: the arguments as Python decoded them (``sys.argv[1:]``).

    Returns:
        ``argument N ('caf\\xe9') is not valid UTF-8: …`` naming the raw bytes,
        or None.
    """
    for number, arg in enumerate(argv, start=1):
        if not isinstance(arg, str):
            raise TypeError(f"argument {number} is {type(arg).__name__}, not str")
        if _has_surrogate(arg):
            raw = arg.encode("utf-8", "surrogateescape") if all(0xDC80 <= ord(c) <= 0xDCFF for c in arg if ord(c) in _SURROGATES) else None
            shown = repr(raw)[2:-1] if raw is not None else ascii(arg)[1:-1]
            return (
                f"argument {number} ('{shown}') is not valid UTF-8: give text and paths in UTF-8 "
                "(check the terminal's or the script's encoding, e.g. LANG=C.UTF-8)"
            )
    return None
