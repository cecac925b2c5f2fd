"""Every store kind, one record each (:class:`core.stores.base.StoreKind`), and ``open_store``.

A kind's behaviour is on its record: its URI (scheme, folder or server, the
query key naming its collection), its client, its reader class, what it can
do (name its columns, search exactly, binary search) and how it filters.
The CLI's help, the app's fields and ``open_store`` are built from the
records, and ``tests/core/stores/test_common_kinds.py`` runs every record
through the same checks: a fourth kind is its reader plus its record here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from core.messages import first_line
from core.stores.access import SharedHandle, StoreAllowlist, check_allowed, shared_message
from core.stores.base import StoreError, StoreHandle, StoreKind, parse_uri
from core.stores.chroma import ChromaStore
from core.stores.lance import LanceStore
from core.stores.pgvector import PgvectorStore

STORE_KINDS: dict[str, StoreKind] = {
    kind.scheme: kind
    for kind in (
        StoreKind(
            "lancedb",
            "LanceDB",
            "LanceDB folder",
            "lancedb",
            "lancedb",
            LanceStore,
            filter_by="LanceDB's where, built with lancedb.expr",
        ),
        StoreKind(
            "chroma",
            "Chroma",
            "Chroma folder",
            "chromadb",
            "chromadb",
            ChromaStore,
            collection_key="collection",
            collection_word="Collection",
            columns=False,
            exact_search=False,
            filter_on="metadata key",
            filter_by="Chroma's metadata where",
        ),
        StoreKind(
            "postgresql",
            "PostgreSQL + pgvector",
            "PostgreSQL + pgvector",
            "pgvector.psycopg",
            "psycopg and pgvector",
            PgvectorStore,
            server=True,
            aliases=("postgres",),
            default_port=5432,
            binary_search=True,
            filter_by="a bound SQL WHERE",
            password_hint="PGPASSWORD or ~/.pgpass keep the password off the command line",
        ),
    )
}


def kinds_that(capability: str) -> list[StoreKind]:
    """The kinds whose record has ``capability`` (``exact_search``, ``binary_search``, ``columns``, ``server``) set."""
    return [kind for kind in STORE_KINDS.values() if getattr(kind, capability)]


def open_store(
    uri: str,
    *,
    text_column: str | None = None,
    vector_column: str | None = None,
    exact: bool = False,
    binary: str = "",
    filters: Mapping[str, str] | None = None,
    allowed: StoreAllowlist | None = None,
) -> StoreHandle:
    """Open the store a URI names, read-only, with its official client.

    Args:
        uri: one of the kinds' URIs (:attr:`StoreKind.uri_form`): ``lancedb://FOLDER?table=NAME``,
            ``chroma://FOLDER?collection=NAME``, ``postgresql://USER@HOST:PORT/DB?table=NAME`` (the password from
            ``PGPASSWORD`` or ``~/.pgpass``, or percent-encoded as ``USER:PASSWORD@``).
        text_column, vector_column: the columns to read (default: found by type and name; a kind whose record says
            ``columns=False`` has fixed ones).
        exact: search without the store's index (kinds with ``exact_search``).
        binary: ``binary`` or ``binary-rescore``: rank by the Hamming distance of the sign bits, computed at query time,
            rescored or not (kinds with ``binary_search``).
        filters: ``{column: value}`` equalities (:func:`core.stores.base.parse_filters`) the read and the store's search
            both apply through the store's own filter (the record's ``filter_by``): both sides see the same rows.
        allowed: a shared app's allow-list (:mod:`core.stores.access`): the store must be in it, and every error of
            opening, reading and searching is said in words that tell nothing apart. None: the CLI, full errors.

    Raises:
        StoreError: one redacted line: a bad URI, a missing client, a store, table or filtered column that is not there.
    """
    parsed = parse_uri(uri, STORE_KINDS)
    kind = STORE_KINDS[parsed.scheme]
    if allowed is not None:
        check_allowed(parsed, kind, allowed)
    if binary and not kind.binary_search:
        able = ", ".join(k.name for k in kinds_that("binary_search"))
        raise StoreError(f"--store-search {binary} is a query-time binary search ({able}); {kind.name} has no query-time binary search")
    try:
        importlib.import_module(kind.client)
    except ImportError as exc:
        raise StoreError(f"{kind.name} needs its client: pip install {kind.package} (make setup installs it)") from exc
    try:
        extra: dict = {"binary": binary} if binary else {}
        if allowed is not None and kind.server:
            extra["visitor"] = True  # the visitor's own credentials only, never the server's
        handle = kind.reader(parsed, text_column, vector_column, exact=exact, filters=dict(filters or {}), **extra)
    except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; the user gets one line
        if allowed is not None:
            said = shared_message(exc, kind, parsed)
            raise StoreError(said, shared=said) from exc
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"cannot open {parsed.display}: {first_line(exc)}") from exc
    return handle if allowed is None else SharedHandle(handle, kind)
