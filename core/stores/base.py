"""What every store reader shares: the URI, the collection it reads, the handle it searches with, the one error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from core.files.texts import TEXT_COLUMNS
from core.files.vectors import PassageRows, PassageVectors, VectorsError, check_vector_memory
from core.messages import redact, register_secret

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
class StoredCollection(PassageVectors):
    """A collection as read (:class:`core.files.vectors.PassageVectors`: distinct passages, ids, unit float32 vectors)
    and the columns it was read from."""

    text_column: str = ""
    vector_column: str = ""


def rows_reader(expected: int, text_column: str, vector_column: str) -> PassageRows:
    """The collector a store's read fills batch by batch; ``expected``, the rows counted first, is checked against the memory cap.

    Raises:
        StoreError: ``expected`` rows of vectors would not fit :data:`core.files.vectors.MAX_VECTOR_BYTES`.
    """
    return PassageRows(expected, what="the store", text_column=text_column, vector_column=vector_column)


def check_rows(rows: int, dim: int) -> None:
    """Refuse a store whose vectors would not fit the memory cap, from its row count, before reading them.

    Raises:
        StoreError: one line, the cap in memory terms.
    """
    try:
        check_vector_memory(rows, dim, "the store")
    except VectorsError as exc:
        raise StoreError(str(exc)) from exc


def finish_rows(rows: PassageRows, text_column: str, vector_column: str) -> StoredCollection:
    """The collection read; the collector's refusals as :class:`StoreError`."""
    try:
        found = rows.finish()
    except VectorsError as exc:
        raise StoreError(str(exc)) from exc
    return StoredCollection(found.passages, found.ids, found.vectors, found.rows, found.notes, text_column, vector_column)


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
