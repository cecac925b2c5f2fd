"""Every store kind, one record each: its URI scheme, the official client it needs, its reader (``open_store``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.stores.base import StoreError, StoreHandle, parse_uri


@dataclass(frozen=True)
class StoreKind:
    """A kind of store: its ``scheme://``, its name, the client module it reads with (``package`` to install), its reader class by name."""

    scheme: str
    name: str
    client: str
    package: str
    reader: str

    def opener(self) -> Callable[..., StoreHandle]:
        module, _, cls = self.reader.rpartition(".")
        return getattr(importlib.import_module(module), cls)


STORE_KINDS: dict[str, StoreKind] = {
    kind.scheme: kind
    for kind in (
        StoreKind("lancedb", "LanceDB", "lancedb", "lancedb", "core.stores.lance.LanceStore"),
        StoreKind("chroma", "Chroma", "chromadb", "chromadb", "core.stores.chroma.ChromaStore"),
        StoreKind(
            "postgresql",
            "PostgreSQL + pgvector",
            "pgvector.psycopg",
            "psycopg and pgvector",
            "core.stores.pgvector.PgvectorStore",
        ),
    )
}


def open_store(
    uri: str,
    *,
    text_column: str | None = None,
    vector_column: str | None = None,
    exact: bool = False,
    binary: str = "",
    filters: Mapping[str, str] | None = None,
) -> StoreHandle:
    """Open the store a URI names, read-only, with its official client.

    Args:
        uri: ``lancedb://FOLDER?table=NAME``, ``chroma://FOLDER?collection=NAME`` or
            ``postgresql://USER:PASSWORD@HOST:PORT/DB?table=NAME``.
        text_column, vector_column: the columns to read (default: found by type and name).
        exact: search without the store's index (LanceDB, pgvector; Chroma has only its HNSW index).
        binary: ``binary`` or ``binary-rescore``: rank by the Hamming distance of the sign bits (pgvector's
            ``binary_quantize``, computed at query time), rescored or not; pgvector only.
        filters: ``{column: value}`` equalities (values as text, :func:`core.stores.base.parse_filters`) the read and the
            store's search both apply, through the store's own filter (LanceDB ``where``, Chroma metadata ``where``,
            a bound SQL ``WHERE``): the exact path and the store's search see the same rows.

    Raises:
        StoreError: one redacted line: a bad URI, a missing client, a store, table or filtered column that is not there.
    """
    parsed = parse_uri(uri, tuple(STORE_KINDS))
    kind = STORE_KINDS[parsed.scheme]
    if binary and parsed.scheme != "postgresql":
        raise StoreError(f"--store-search {binary} is pgvector's binary_quantize search; {kind.name} has no query-time binary search")
    try:
        importlib.import_module(kind.client)
    except ImportError as exc:
        raise StoreError(f"{kind.name} needs its client: pip install {kind.package} (make setup installs it)") from exc
    try:
        extra = {"binary": binary} if binary else {}
        return kind.opener()(parsed, text_column, vector_column, exact=exact, filters=dict(filters or {}), **extra)
    except StoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; the user gets one line
        from core.messages import first_line

        raise StoreError(f"cannot open {parsed.display}: {first_line(exc)}") from exc
