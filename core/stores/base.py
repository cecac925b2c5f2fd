"""What every store reader shares: the kind's record, the URI, the collection it reads, the handle it searches with, the one error."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from core.files.texts import TEXT_COLUMNS
from core.files.vectors import PassageRows, PassageVectors, VectorsError, check_vector_memory
from core.messages import redact, register_secret

TEXT_CANDIDATES = (*TEXT_COLUMNS["corpus"], "chunk", "body", "page_content")
VECTOR_CANDIDATES = ("vector", "embedding", "embeddings", "vec", "emb")
# Query keys that would carry a secret: refused by name, their values never printed (they are registered with the redaction).
SECRET_QUERY_KEYS = ("password", "passfile", "sslpassword")
# A string column named like these holds identifiers, never passages: it is not taken as the text unless named.
_ID_LIKE = re.compile(r"(?i)^_?(id|uuid|guid|pk|key|hash|row_?id|doc_?id)$|[_\-](id|uuid|key|hash)$")
# On a shared server an unknown filter column, a value of another type and a value no row holds say the same: the
# filter box is no oracle.
FILTER_SHARED = "the store holds fewer than 2 passages with a vector that this run may read"
# A scheme worth naming back: letters first, short (a mistyped secret is not echoed as a scheme).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]{0,19}$")


class StoreError(ValueError):
    """A store that cannot be read as asked: the message is one line, already redacted.

    Attributes:
        shared: the message a shared server may show a visitor (nothing that tells a server, folder, table,
            column or value apart from another); None: the store's generic line (:func:`core.stores.access.shared_message`).
    """

    def __init__(self, message: str, shared: str | None = None) -> None:
        super().__init__(redact(" ".join(str(message).split())))
        self.shared = None if shared is None else redact(" ".join(str(shared).split()))


@dataclass(frozen=True)
class StoreKind:
    """A kind of store, its behaviour on the record: adding a kind is its reader plus one of these (:mod:`core.stores.kinds`).

    Attributes:
        scheme: the URI's ``scheme://`` (``aliases``: other spellings read as it).
        name: the store's name in messages (``LanceDB``).
        label: the app's choice for it (``LanceDB folder``).
        client: the module its official client is imported as; ``package``: what to install for it.
        reader: the class opening one collection: ``reader(uri, text_column, vector_column, *, exact, filters, binary)``,
            a :class:`StoreHandle`.
        server: a server (``HOST:PORT/DB``, a user, a password) rather than a folder.
        collection_key: the query key naming the collection (``table``, ``collection``); ``collection_word`` its label.
        default_port: a server's port when the URI gives none.
        columns: its text and vector columns can be named (``--text-column``); else they are fixed.
        exact_search: it can search exactly (a flat scan) besides its index.
        binary_search: it can rank by the Hamming distance of sign bits at query time (``--store-search binary``).
        filter_on: what a filter names (``column``, ``metadata key``); ``filter_by``: how the store applies it, in words.
        password_hint: where the password goes instead of the URI (a server), for ``--help``, the docs and refusals.
    """

    scheme: str
    name: str
    label: str
    client: str
    package: str
    reader: Callable[..., StoreHandle]
    server: bool = False
    collection_key: str = "table"
    collection_word: str = "Table"
    aliases: tuple[str, ...] = ()
    default_port: int | None = None
    columns: bool = True
    exact_search: bool = True
    binary_search: bool = False
    filter_on: str = "column"
    filter_by: str = ""
    password_hint: str = ""

    @property
    def uri_form(self) -> str:
        """What a URI of this kind looks like: ``lancedb://FOLDER?table=NAME``, ``postgresql://USER@HOST:PORT/DB?table=NAME``."""
        where = "USER@HOST:PORT/DB" if self.server else "FOLDER"
        return f"{self.scheme}://{where}?{self.collection_key}=NAME"


@dataclass(frozen=True)
class StoreURI:
    """A parsed store URI: ``scheme://location?key=value``; ``display`` never holds a password.

    Attributes:
        scheme: the kind's scheme (an alias read as it).
        location: a folder (a folder kind) or ``host:port/db`` (a server).
        params: the collection's key (``table``, ``collection``) and its value: the only key a URI may hold.
        user, password, host, port, database: a server's parts (empty for a folder).
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
        """The URI as printed, written and recorded: no user-info, no query value but the collection's name."""
        query = "&".join(f"{k}={v}" for k, v in self.params.items())
        where = f"{self.host}:{self.port}/{self.database}" if self.host else self.location
        return f"{self.scheme}://{where}" + (f"?{query}" if query else "")


def _register_userinfo(text: str) -> None:
    """Register every password the text could hold before anything parses (and could print) it.

    The user-info ends at the last ``@``: a password holding an unencoded ``/``, ``?`` or ``#`` ends the URI's
    authority early for :func:`urllib.parse.urlsplit`, so its ``password`` would miss it.
    """
    _, sep, rest = text.partition("://")
    if sep and "@" in rest:
        _, colon, password = rest.rpartition("@")[0].partition(":")
        if colon and password:
            register_secret(password)
            register_secret(unquote(password))


def _hint(kind: StoreKind) -> str:
    return f"; {kind.password_hint}" if kind.password_hint else ""


def _check_query(kind: StoreKind, query: dict[str, list[str]]) -> dict[str, str]:
    """The URI's query: the collection's key once; a secret's key refused by name (its value registered, never shown); no other key."""
    for key, values in query.items():
        if key.strip().lower() in SECRET_QUERY_KEYS:
            for value in values:
                register_secret(value)
                register_secret(unquote(value))
    for key in query:
        if key.strip().lower() in SECRET_QUERY_KEYS:
            raise StoreError(
                f"the store URI's query holds {key.strip()[:20]!r}: a URI is printed and recorded, so what would keep a "
                f"password in it is not read{_hint(kind)}"
            )
    repeated = [k for k, v in query.items() if len(v) > 1]
    if repeated:
        raise StoreError(f"the store URI names {repeated[0][:40]!r} more than once")
    others = [k for k in query if k != kind.collection_key]
    if others:
        # Only the key is named: a value other than the collection's name is never printed.
        raise StoreError(
            f"the store URI's query holds {others[0][:40]!r}, which a {kind.name} URI does not take: give only "
            f"{kind.collection_key}=NAME ({kind.uri_form})"
        )
    return {k: v[0] for k, v in query.items()}


def parse_uri(text: str, kinds: Mapping[str, StoreKind]) -> StoreURI:
    """Parse a store URI by its kind's record; every password it could hold is registered with the redaction first.

    Args:
        text: the URI as typed.
        kinds: the known kinds by scheme (:data:`core.stores.kinds.STORE_KINDS`).

    Raises:
        StoreError: an unknown scheme, a missing folder or host, a query key other than the collection's (a secret's key
            named, never its value), a repeated key, a user-info that cannot be read (said without echoing the URI), a bad port.
    """
    if not isinstance(text, str) or not text.strip():
        raise StoreError(f"the store URI is empty; give e.g. {next(iter(kinds.values())).uri_form}")
    text = text.strip()
    _register_userinfo(text)
    try:
        parts = urlsplit(text)
    except ValueError as exc:  # e.g. an unbalanced '[' in the host
        raise StoreError("the store URI cannot be read as scheme://LOCATION?KEY=NAME") from exc
    if parts.password:
        # Registered before any message can carry it: raw and decoded, as a user may type either.
        register_secret(parts.password)
        register_secret(unquote(parts.password))
    by_scheme = {name: kind for kind in kinds.values() for name in (kind.scheme, *kind.aliases)}
    kind = by_scheme.get(parts.scheme.lower())
    if kind is None:
        named = f" {parts.scheme!r}" if _SCHEME.match(parts.scheme) else ""
        raise StoreError(f"unknown store{named}: give a URI starting with {', '.join(k.scheme + '://' for k in kinds.values())}")
    if kind.server and "@" in parts.path + parts.query + parts.fragment:
        # The user-info ended early: a '/' or '?' in the password. The URI is not echoed, it holds the password.
        raise StoreError(
            "the store URI's user and password cannot be read: an '@' follows the host, so the password holds an unencoded "
            f"'/', '?' or '#' (percent-encode them: %2F, %3F, %23; an '@' in the database or table name: %40){_hint(kind)}"
        )
    if parts.fragment or text.endswith("#"):
        raise StoreError(f"the store URI holds a '#': percent-encode it as %23 ({kind.uri_form})")
    params = _check_query(kind, parse_qs(parts.query, keep_blank_values=True))
    if kind.server:
        try:
            port = parts.port
        except ValueError as exc:
            raise StoreError(f"the store URI's port is not a number from 1 to 65535{_hint(kind)}") from exc
        return StoreURI(
            kind.scheme,
            parts.netloc.rsplit("@", 1)[-1] + parts.path,
            params,
            unquote(parts.username or ""),
            unquote(parts.password or ""),
            parts.hostname or "",
            port or kind.default_port,
            unquote(parts.path.lstrip("/")),
        )
    location = unquote(parts.netloc + parts.path)
    if not location:
        raise StoreError(f"the store URI names no folder: give {kind.uri_form}")
    return StoreURI(kind.scheme, location, params)


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
    """The collection read; the collector's refusals as :class:`StoreError`, vectors no float32 search can square refused.

    Raises:
        StoreError: fewer than two passages with a vector (saying why vectors were dropped, and, on a shared server, only
            that), or stored vectors far from unit length (:func:`check_lengths`).
    """
    try:
        found = rows.finish()
    except VectorsError as exc:
        dropped = rows.dropped["no vector or a non-finite one"]
        why = f" ({dropped:,} row(s) had {_NO_VECTOR})" if dropped else ""
        raise StoreError(f"{exc}{why}", shared=FILTER_SHARED) from exc
    check_lengths(rows.lengths, vector_column)
    notes = [*found.notes, *id_notes(found.ids)]
    return StoredCollection(found.passages, found.ids, found.vectors, found.rows, notes, text_column, vector_column)


# A vector this long (or this short, its inverse) has squared components beyond float32's normal numbers: a store
# computing its distances in float32 gets inf, NaN or 0 for it and finds nothing near it (LanceDB, pgvector), or
# keeps NaN or zeros for it (Chroma normalises cosine vectors as it stores them).
FLOAT32_SAFE_LENGTH = 1e19
_NO_VECTOR = (
    "no vector, a zero or a non-finite one: a vector stored far from unit length "
    f"(above {FLOAT32_SAFE_LENGTH:.0e} or below {1 / FLOAT32_SAFE_LENGTH:.0e}) reads back so from a store that normalises in float32"
)


def check_lengths(lengths: np.ndarray, vector_column: str) -> None:
    """Refuse stored vectors whose length a float32 search cannot square: the store's own search would return nothing for them.

    Args:
        lengths: (n,) the stored vectors' lengths as read, before they are made unit (``PassageRows.lengths``).
        vector_column: the column they came from, for the message.

    Raises:
        StoreError: some vector is at least :data:`FLOAT32_SAFE_LENGTH` long or at most its inverse, saying how many and why.
    """
    lengths = np.asarray(lengths, dtype=np.float64)
    far = (lengths >= FLOAT32_SAFE_LENGTH) | (lengths <= 1 / FLOAT32_SAFE_LENGTH)
    if far.any():
        raise StoreError(
            f"{int(far.sum()):,} of the {len(lengths):,} stored vectors in {vector_column!r} have lengths far from 1 "
            f"({lengths[far].min():.1e} to {lengths[far].max():.1e}): squared in float32, as the store computes its distances, they "
            "overflow or vanish, so the store's own search returns nothing for them; store the model's vectors as it makes them"
        )


def id_notes(ids: Sequence[object]) -> list[str]:
    """A note when ids repeat: rows are matched by their text, so each text is kept once whatever its id."""
    counts: dict[str, int] = {}
    for row_id in ids:
        counts[str(row_id)] = counts.get(str(row_id), 0) + 1
    repeated = sum(1 for n in counts.values() if n > 1)
    if not repeated:
        return []
    return [f"{repeated:,} id(s) name more than one row: rows are matched by their text, never their id, so each text is read once"]


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


# What a filtered column or metadata key holds, and how its text value is read as that (a store compares types:
# Chroma's $eq never matches the text '1' against the number 1, LanceDB refuses a string against a boolean).
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def filter_value(column: str, value: str, holds: str) -> str | int | float | bool:
    """A filter's text value read as the type its column holds.

    Args:
        column: the column (or metadata key), for the message.
        value: the value as typed.
        holds: ``text``, ``integers``, ``numbers`` or ``booleans``.

    Raises:
        StoreError: the value cannot be read as that type ("page holds integers; 'x' is not one").
    """
    try:
        if holds == "integers":
            number = float(value.strip())
            if not number.is_integer():
                raise ValueError(value)
            return int(number)
        if holds == "numbers":
            return float(value.strip())
        if holds == "booleans":
            word = value.strip().lower()
            if word not in _TRUE + _FALSE:
                raise ValueError(value)
            return word in _TRUE
    except ValueError:
        one = "true or false" if holds == "booleans" else "one"
        raise StoreError(f"the store filter: {column!r} holds {holds}; {value!r} is not {one}", shared=FILTER_SHARED) from None
    return value


def filter_words(filters: dict[str, str]) -> str:
    """The filters in words for notes and reports: ``source = 'a' and lang = 'en'``."""
    return " and ".join(f"{column} = {value!r}" for column, value in filters.items())


def check_filter_columns(filters: dict[str, str], columns: Sequence[str], what: str) -> None:
    """Every filtered column must exist: one line naming the columns there are (none on a shared server).

    Raises:
        StoreError: a filter names a column (or metadata key) the collection does not have.
    """
    for column in filters:
        if column not in columns:
            raise StoreError(
                f"the store filter names {column!r}, which is not a {what}; its {what}s: {', '.join(columns) or 'none'}",
                shared=FILTER_SHARED,
            )


def id_like(column: str) -> bool:
    """A column named as identifiers are (``id``, ``doc_id``, ``uuid``, ``chunk-key``): never taken as the passages unless named."""
    return bool(_ID_LIKE.search(column))


def pick_column(kind: str, given: str | None, found: Sequence[str], candidates: Sequence[str], flag: str, *, skip_ids: bool = False) -> str:
    """The column the user named (it must exist), else the one candidate found, else one line saying which flag to use.

    Args:
        kind: ``text`` or ``vector``, for messages.
        given: the column the user named, or None.
        found: the columns of the right type, in table order.
        candidates: preferred names, best first.
        flag: the flag naming one (``--text-column``).
        skip_ids: leave out id-like columns (:func:`id_like`) unless named: an id is never read as a passage.

    Raises:
        StoreError: the named column is not there, or no/several columns fit.
    """
    if given is not None:
        if given not in found:
            raise StoreError(
                f"the store has no {kind} column {given!r}; its {kind} columns: {', '.join(found) or 'none'}",
                shared=f"the store has no {kind} column {given!r} that this run may read",
            )
        return given
    usable = [c for c in found if not (skip_ids and id_like(c))]
    if len(usable) == 1:
        return usable[0]
    for name in candidates:
        if name in usable:
            return name
    if not usable and len(usable) != len(found):
        raise StoreError(
            f"the store has no {kind} column (string columns: {', '.join(found)}); name one with {flag}",
            shared=f"the store has no {kind} column; name one",
        )
    if not usable:
        raise StoreError(f"the store has no {kind} column; name one with {flag}", shared=f"the store has no {kind} column; name one")
    raise StoreError(
        f"the store has several {kind} columns ({', '.join(usable)}); name one with {flag}", shared=f"the store has several {kind} columns"
    )


def pick_vector_column(given: str | None, readable: Sequence[str], unread: Mapping[str, str], reads: str) -> str:
    """:func:`pick_column` for vectors, said before any row is read when the column's type is one the reader does not read yet.

    Args:
        given: the column the user named, or None.
        readable: the columns of a type the reader reads.
        unread: ``{column: type}`` of vector-like columns of another type (``halfvec``, ``real[]``, ``list<double>``).
        reads: what the reader reads, in words (``pgvector's vector``).

    Raises:
        StoreError: the named column, or the only vector-like ones, are of a type not read yet; or :func:`pick_column`'s.
    """
    column = given if given in unread else (next(iter(unread)) if given is None and not readable and unread else None)
    if column is not None:
        raise StoreError(
            f"the vector column {column!r} is {unread[column]}, which is not read yet: the store's vectors are read from {reads} columns",
            shared=f"the vector column is of a type not read yet: the store's vectors are read from {reads} columns",
        )
    return pick_column("vector", given, readable, VECTOR_CANDIDATES, "--vector-column")


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
