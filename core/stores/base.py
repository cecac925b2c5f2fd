"""What every store reader shares: the URI, the collection it reads, the handle it searches with, the one error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from core.files.texts import TEXT_COLUMNS
from core.messages import redact, register_secret

# A collection larger than this is refused: the audit holds every vector in memory.
MAX_ROWS = 2_000_000
TEXT_CANDIDATES = (*TEXT_COLUMNS["corpus"], "chunk", "body", "page_content")
VECTOR_CANDIDATES = ("vector", "embedding", "embeddings", "vec", "emb")


class StoreError(ValueError):
    """A store that cannot be read as asked: the message is one line, already redacted."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(" ".join(str(message).split())))


@dataclass(frozen=True)
class StoreURI:
    """A parsed store URI: ``scheme://location?key=value``; ``display`` never holds a password.

    Attributes:
        scheme: ``lancedb``, ``chroma`` or ``postgresql``.
        location: a folder (lancedb, chroma) or ``host:port/db`` (postgresql).
        params: the query's keys (``table``, ``collection``), one value each.
        user, password, host, port, database: postgresql's parts (empty elsewhere).
    """

    scheme: str
    location: str
    params: dict[str, str] = field(default_factory=dict)
    user: str = ""
    password: str = field(default="", repr=False)
    host: str = ""
    port: int | None = None
    database: str = ""

    @property
    def display(self) -> str:
        """The URI as printed, written and recorded: no user-info at all."""
        query = "&".join(f"{k}={v}" for k, v in self.params.items())
        where = f"{self.host}:{self.port or 5432}/{self.database}" if self.host else self.location
        return f"{self.scheme}://{where}" + (f"?{query}" if query else "")


def parse_uri(text: str, schemes: Sequence[str]) -> StoreURI:
    """Parse a store URI; the password is registered with the redaction before anything else can print it.

    Raises:
        StoreError: an unknown scheme, a missing location, a repeated key.
    """
    if not isinstance(text, str) or not text.strip():
        raise StoreError("the store URI is empty; give e.g. lancedb://FOLDER?table=NAME")
    parts = urlsplit(text.strip())
    if parts.password:
        # Registered before any message can carry it: raw and decoded, as a user may type either.
        register_secret(parts.password)
        register_secret(unquote(parts.password))
    scheme = parts.scheme.lower()
    if scheme == "postgres":
        scheme = "postgresql"
    if scheme not in schemes:
        raise StoreError(f"unknown store {parts.scheme or text!r}: give a URI starting with {', '.join(s + '://' for s in schemes)}")
    query = parse_qs(parts.query, keep_blank_values=True)
    repeated = [k for k, v in query.items() if len(v) > 1]
    if repeated:
        raise StoreError(f"the store URI names {repeated[0]!r} more than once")
    params = {k: v[0] for k, v in query.items()}
    if scheme == "postgresql":
        try:
            port = parts.port
        except ValueError as exc:
            raise StoreError("the store URI's port is not a number from 1 to 65535") from exc
        return StoreURI(
            scheme,
            parts.netloc.rsplit("@", 1)[-1] + parts.path,
            params,
            unquote(parts.username or ""),
            unquote(parts.password or ""),
            parts.hostname or "",
            port,
            unquote(parts.path.lstrip("/")),
        )
    location = unquote(parts.netloc + parts.path)
    if not location:
        raise StoreError(f"the store URI names no folder: give {scheme}://FOLDER")
    return StoreURI(scheme, location, params)


@dataclass
class StoredCollection:
    """A collection as read: its passages (distinct, whitespace-normalised, store order) and their stored vectors.

    Attributes:
        passages: n distinct texts.
        ids: n ids (the store's, else the row number).
        vectors: (n, d) float32 stored vectors, in passage order.
        rows: rows the store holds (before repeats and blanks were dropped).
        text_column, vector_column: what was read.
        notes: what was dropped, one line each.
    """

    passages: list[str]
    ids: list[str]
    vectors: np.ndarray
    rows: int
    text_column: str
    vector_column: str
    notes: list[str] = field(default_factory=list)


def collection_from_rows(
    ids: Sequence[object], texts: Sequence[object], vectors: Sequence[object], text_column: str, vector_column: str
) -> StoredCollection:
    """Keep each distinct text's first row; drop blanks, non-text values and missing or non-finite vectors (with notes).

    Raises:
        StoreError: vectors of different lengths, or fewer than two passages left.
    """
    if len(ids) > MAX_ROWS:
        raise StoreError(f"the store holds {len(ids):,} rows; the audit keeps every vector in memory and reads at most {MAX_ROWS:,}")
    seen: dict[str, int] = {}
    keep_ids: list[str] = []
    keep_vectors: list[np.ndarray] = []
    dropped = {"blank or not text": 0, "repeated text": 0, "no vector or a non-finite one": 0}
    dim = None
    for row_id, text, vector in zip(ids, texts, vectors, strict=True):
        if not isinstance(text, str) or not text.split():
            dropped["blank or not text"] += 1
            continue
        norm = " ".join(text.split())
        if norm in seen:
            dropped["repeated text"] += 1
            continue
        arr = None if vector is None else np.asarray(vector, dtype=np.float32).reshape(-1)
        if arr is None or arr.size == 0 or not np.isfinite(arr).all() or not np.any(arr):
            dropped["no vector or a non-finite one"] += 1
            continue
        if dim is None:
            dim = arr.size
        elif arr.size != dim:
            raise StoreError(f"the column {vector_column!r} holds vectors of {dim} and of {arr.size} dimensions; give one model's vectors")
        seen[norm] = len(keep_vectors)
        keep_ids.append(str(row_id))
        keep_vectors.append(arr)
    if len(seen) < 2:
        raise StoreError(
            f"the store holds {len(seen)} passage(s) with a vector in {text_column!r}/{vector_column!r}; an audit needs at least 2"
        )
    notes = [f"{n:,} row(s) dropped: {why}" for why, n in dropped.items() if n]
    return StoredCollection(list(seen), keep_ids, np.stack(keep_vectors), len(ids), text_column, vector_column, notes)


def parse_filters(items: Sequence[str] | None) -> dict[str, str]:
    """``COLUMN=VALUE`` items (``--store-filter``, the page's filter box) as ``{column: value}``: equality only, the value as text.

    The value is kept exactly as given (quotes, ``;``, unicode): each store receives it as a value, never as query text.

    Raises:
        StoreError: an item without ``=`` or a column, or a column named twice.
    """
    filters: dict[str, str] = {}
    for item in items or ():
        column, sep, value = str(item).partition("=")
        column = column.strip()
        if not sep or not column:
            raise StoreError(f"a store filter is COLUMN=VALUE, got {item!r}")
        if column in filters:
            raise StoreError(f"the store filter names {column!r} more than once (filters are equalities joined by AND)")
        filters[column] = value
    return filters


def filter_words(filters: dict[str, str]) -> str:
    """The filters in words for notes and reports: ``source = 'a' and lang = 'en'``."""
    return " and ".join(f"{column} = {value!r}" for column, value in filters.items())


def check_filter_columns(filters: dict[str, str], columns: Sequence[str], what: str) -> None:
    """Every filtered column must exist: one line naming the columns there are.

    Raises:
        StoreError: a filter names a column (or metadata key) the collection does not have.
    """
    for column in filters:
        if column not in columns:
            raise StoreError(f"the store filter names {column!r}, which is not a {what}; its {what}s: {', '.join(columns) or 'none'}")


def pick_column(kind: str, given: str | None, found: Sequence[str], candidates: Sequence[str], flag: str) -> str:
    """The column the user named (it must exist), else the one candidate found, else one line saying which flag to use.

    Raises:
        StoreError: the named column is not there, or no/several columns fit.
    """
    if given is not None:
        if given not in found:
            raise StoreError(f"the store has no {kind} column {given!r}; its {kind} columns: {', '.join(found) or 'none'}")
        return given
    if len(found) == 1:
        return found[0]
    for name in candidates:
        if name in found:
            return name
    if not found:
        raise StoreError(f"the store has no {kind} column; name one with {flag}")
    raise StoreError(f"the store has several {kind} columns ({', '.join(found)}); name one with {flag}")


class StoreHandle(Protocol):
    """An open store: read once, then searched with its own index and distance."""

    uri: StoreURI
    exact: bool
    filters: dict[str, str]

    def read(self) -> StoredCollection:
        """The whole collection."""
        ...

    def search_method(self) -> str:
        """How :meth:`search` ranks, in words (index, distance), for the report."""
        ...

    def search(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        """The texts of each query vector's ``k`` nearest rows by the store's own search, best first."""
        ...

    def close(self) -> None:
        """Release the client."""
        ...
