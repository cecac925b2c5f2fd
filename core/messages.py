"""One-line error messages, counts in words, and the one redaction every message leaving the process passes.

:func:`counted` says a count with its noun in the right number ("1 pair", "2 pairs").

``first_line`` and ``typed_first_line`` cut an exception's text to one line,
with a fallback for a blank message.  :func:`redact` removes secrets from any
text before it is printed, written or shown: the value of every key this
process read (:func:`register_secret`, called where a key is read from the
environment), in full, in halves, percent- or JSON-encoded; any bearer
token or Authorization header value; the user-info (``user:password@``) of any URL, percent-encoded
or not; a masked key a server echoes (``sk-…****abcd``); anything shaped like
an OpenAI key.  Exception texts are redacted here, so every one-line error is;
the CLI's output streams (:mod:`core.cli.main`), the run history, model-run
errors (:mod:`core.models.runs`), the page's error lines and log records
(:func:`redact_logs`) pass the same function.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import unquote

REDACTED = "[redacted]"
# A key shorter than this is not removed piecewise: its halves would match ordinary words.
_MIN_PART = 6
_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()
_PATTERNS: list[re.Pattern[str]] = []
_LOGS_REDACTED = False

# A masked key: a prefix such as "sk-" or "key_", then a run of asterisks ("sk-proj-****abcd"); "***" or "***NOTE***" is left alone.
_MASKED = re.compile(r"(?<![\w\-])[A-Za-z0-9]+[-_][\w\-.…]*\*{3,}[\w\-]*")
_AUTH = re.compile(r"(?i)\b(bearer)(\s+|%20|\+)(?!\[redacted\])[^\s'\",;<>)\]}]{4,}")
# An Authorization value with its scheme ("Authorization: Basic dXNl…"); a bare key is caught as a key.
_AUTH_HEADER = re.compile(r"(?i)\b(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer|basic|token|digest|apikey|key)\s+[^'\"\s,;]+")
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}")
# scheme://authority, the authority up to the path; decoded, an '@' in it means credentials.
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/\s?#'\"<>\\]*)")
_ENCODED_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*%3A%2F%2F)([^/\s?#'\"<>\\]*?%40)")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, the noun plural unless ``n`` is 1: "1 pair", "0 pairs", "1,200 texts".

    Args:
        n: the count.
        noun: the singular noun (may be several words: "new text").
        plural: the plural when it is not the noun plus "s" ("entries").
    """
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {plural or noun + 's'}"


def first_line(exc: BaseException, limit: int | None = None, fallback: str | None = None) -> str:
    """The first line of ``exc``'s message, for an error that must stay on one line, secrets redacted.

    Args:
        exc: the exception.
        limit: at most this many characters of the line (None: the whole line).
        fallback: what a blank message gives; None gives the exception's type name.

    Returns:
        The first line of the stripped message (:func:`redact`-ed), cut to ``limit``.
    """
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__ if fallback is None else fallback
    # Redacted before cutting, so a cut never leaves a piece of a key the whole would have matched.
    line = redact(lines[0])
    return line if limit is None else line[:limit]


def typed_first_line(exc: BaseException, limit: int | None = 300) -> str:
    """``Type: first line of the message`` (at most ``limit`` characters of the line), for a one-line error that names what failed."""
    return f"{type(exc).__name__}: {first_line(exc, limit, '')}"


# C0 and C1 controls but tab, newline and carriage return (the progress line's): an escape sequence in a stored
# name, a file's text or a server's answer would otherwise recolour, move or clear the user's terminal.
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` with every control character a terminal would act on shown as its escape (``\\x1b``), tab and line breaks kept."""
    return _TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def register_secret(value: str | None) -> None:
    """Remember a secret this process holds (a key read from the environment): :func:`redact` removes it from then on."""
    text = (value or "").strip()
    if len(text) < _MIN_PART:
        return
    with _SECRETS_LOCK:
        if text in _SECRETS:
            return
        _SECRETS.add(text)
        parts = {p for p in (text, text[: len(text) // 2], text[len(text) // 2 :]) if len(p) >= _MIN_PART}
        alternatives = "|".join(_spelled(p) for p in sorted(parts, key=len, reverse=True))
        _PATTERNS.append(re.compile(alternatives, re.IGNORECASE))


def _spelled(text: str) -> str:
    """A pattern for ``text`` with each character as itself, percent-encoded or JSON-escaped (a key inside a URL or a JSON string)."""
    out = []
    for char in text:
        forms = [re.escape(char), "".join(f"%{b:02X}" for b in char.encode("utf-8"))]
        if char in '"\\':
            forms.append(re.escape("\\" + char))
        elif char == " ":
            forms.append(r"\+")
        out.append(f"(?:{'|'.join(forms)})")
    return "".join(out)


def _url_credentials(match: re.Match[str]) -> str:
    scheme, authority = match.group(1), match.group(2)
    decoded = unquote(authority)
    if "@" not in decoded:
        return match.group(0)
    return f"{scheme}{REDACTED}@{decoded.rsplit('@', 1)[1]}"


def redact(text: object) -> str:
    """``text`` (any object, as ``str``) with every secret this module knows replaced by ``[redacted]``.

    Removed: each registered secret (:func:`register_secret`) in full, its
    halves, and their percent- and JSON-encoded forms; bearer tokens and
    Authorization header values; a URL's user-info, percent-encoded or not; masked keys
    (``sk-ab****wxyz``); strings shaped like an OpenAI key (``sk-`` and 12 or
    more characters).
    """
    out = str(text)
    with _SECRETS_LOCK:
        patterns = list(_PATTERNS)
    for pattern in patterns:
        out = pattern.sub(REDACTED, out)
    out = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{REDACTED}", out)
    out = _AUTH.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", out)
    out = _URL.sub(_url_credentials, out)
    out = _ENCODED_URL.sub(lambda m: f"{m.group(1)}{REDACTED}%40", out)
    out = _OPENAI_KEY.sub(REDACTED, out)
    return _MASKED.sub(REDACTED, out)


def redact_logs() -> None:
    """Make every log record of this process pass :func:`redact` (the HTTP clients log headers and bodies at debug level); idempotent."""
    global _LOGS_REDACTED  # noqa: PLW0603 - one factory for the process, installed once
    with _SECRETS_LOCK:
        if _LOGS_REDACTED:
            return
        _LOGS_REDACTED = True
    make_record = logging.getLogRecordFactory()

    def redacted_record(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's to report, as before
            return record
        record.msg, record.args = redact(message), None
        return record

    logging.setLogRecordFactory(redacted_record)
