"""PostgreSQL + pgvector (``postgresql://USER@HOST:PORT/DB?table=NAME``), read with ``psycopg`` and ``pgvector``.

The password comes from ``PGPASSWORD`` or ``~/.pgpass`` (libpq reads them when the URI has none), so it stays off
the command line, or from the URI's ``USER:PASSWORD@`` (percent-encoded).

The session is read-only twice over: ``default_transaction_read_only`` is set
when it connects and the connection's transactions are ``READ ONLY``
(:attr:`psycopg.Connection.read_only`), so no statement of ours can write.
The store's own search is ``ORDER BY vector <op> %s LIMIT k`` with the
operator of the column's index (``<=>`` cosine, ``<->`` L2, ``<#>`` inner
product; cosine without an index); ``exact`` turns index scans off for the
transaction, so PostgreSQL scans every row (pgvector's exact search).
``binary`` ranks as pgvector's binary quantization does: by the Hamming
distance ``<~>`` between ``binary_quantize(vector)::bit(d)`` and the quantized
query (pgvector >= 0.7), an expression computed at query time, so nothing is
written (a sequential scan, or the user's own index on that expression);
``binary-rescore`` reorders that Hamming shortlist of ``RESCORE_MULTIPLIER × k``
rows by the cosine of the stored float vectors, as pgvector's documentation
shows for re-ranking.

Filters (``--store-filter``) are ``WHERE col::text = %s AND ...``: each column
a :class:`psycopg.sql.Identifier` (checked against the table's columns first),
each value a bound parameter, in the read and the search alike.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from core.files.vectors import BATCH_ROWS, VectorsError
from core.messages import first_line
from core.stores.base import (
    TEXT_CANDIDATES,
    StoredCollection,
    StoreError,
    StoreURI,
    check_filter_columns,
    check_rows,
    finish_rows,
    pick_column,
    pick_vector_column,
    rows_reader,
)

_OPERATORS = {"vector_cosine_ops": ("<=>", "cosine"), "vector_l2_ops": ("<->", "L2"), "vector_ip_ops": ("<#>", "inner product")}
_INDEX = re.compile(r"USING (hnsw|ivfflat) \((\S+) (vector_\w+_ops)", re.IGNORECASE)
CONNECT_TIMEOUT = 10
# A shared app's visitor connects with what they typed only, never the server's own credentials: libpq would
# otherwise take PGPASSWORD (an empty password stops that), the password file, the server's client certificate or its
# Kerberos ticket. Password authentication (or none, a server that asks for nothing) is all it may answer.
VISITOR_CONNECTION = {
    "passfile": os.devnull,
    "sslcertmode": "disable",
    "gssencmode": "disable",
    "require_auth": "password,md5,scram-sha-256,none",
}
# Vector-like column types not read yet (information_schema's udt_name -> the type as written in SQL).
_UNREAD = {"halfvec": "halfvec", "sparsevec": "sparsevec", "_float4": "real[]", "_float8": "double precision[]", "_numeric": "numeric[]"}
# The binary-rescore shortlist per row asked for: the oversampling of core.probes.index_settings' binary-rescore.
RESCORE_MULTIPLIER = 2
BINARY_SEARCHES = ("binary", "binary-rescore")


class PgvectorStore:
    """One table with a ``vector`` column, in a read-only session."""

    def __init__(
        self,
        uri: StoreURI,
        text_column: str | None = None,
        vector_column: str | None = None,
        *,
        exact: bool = False,
        binary: str = "",
        filters: dict[str, str] | None = None,
        visitor: bool = False,
    ) -> None:
        import psycopg
        from pgvector.psycopg import register_vector
        from psycopg import sql

        if binary and binary not in BINARY_SEARCHES:
            raise StoreError(f"unknown binary search {binary!r}: give one of {', '.join(BINARY_SEARCHES)}")
        self.uri, self.exact, self.binary, self._sql, self.filters = uri, exact, binary, sql, dict(filters or {})
        table = uri.params.get("table")
        if not table:
            raise StoreError("name the table: postgresql://USER@HOST:PORT/DB?table=NAME")
        if not uri.host or not uri.database:
            raise StoreError("the store URI needs a host and a database: postgresql://USER@HOST:PORT/DB?table=NAME")
        schema, _, name = table.rpartition(".")
        params: dict[str, Any] = {
            "host": uri.host,
            "port": uri.port,
            "dbname": uri.database,
            "user": uri.user or None,
            "password": uri.password or ("" if visitor else None),
            "connect_timeout": CONNECT_TIMEOUT,
            "options": "-c default_transaction_read_only=on",
            **(VISITOR_CONNECTION if visitor else {}),
        }
        try:
            self.conn = psycopg.connect(**params)
            self.conn.read_only = True
            register_vector(self.conn)
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {uri.display}: {first_line(exc)}") from exc
        except Exception as exc:  # noqa: BLE001 - pgvector's register raises its own errors where the extension is missing
            raise StoreError(f"cannot read vectors at {uri.display}: {first_line(exc)} (is the pgvector extension installed?)") from exc
        self.table = sql.Identifier(schema, name) if schema else sql.Identifier(name)
        columns = self.conn.execute(
            "SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = %s AND table_schema = COALESCE(NULLIF(%s, "
            "''), current_schema()) ORDER BY ordinal_position",
            (name, schema),
        ).fetchall()
        if not columns:
            self.close()
            raise StoreError(f"the database {uri.database!r} has no table {table!r} this user can read")
        vectors = [c for c, t in columns if t == "vector"]
        unread = {c: _UNREAD[t] for c, t in columns if t in _UNREAD}
        texts = [c for c, t in columns if t in ("text", "varchar", "bpchar")]
        try:
            self.vector_column = pick_vector_column(vector_column, vectors, unread, "pgvector's vector")
            self.text_column = pick_column("text", text_column, texts, TEXT_CANDIDATES, "--text-column", skip_ids=True)
            check_filter_columns(self.filters, [c for c, _ in columns], "column")
        except StoreError:
            self.close()
            raise
        self.id_column = "id" if "id" in [c for c, _ in columns] and "id" not in (self.text_column, self.vector_column) else None
        self.index, self.operator, self.distance = None, "<=>", "cosine"
        self.index_used: bool | None = None
        for (indexdef,) in self.conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND schemaname = COALESCE(NULLIF(%s, ''), current_schema())",
            (name, schema),
        ).fetchall():
            match = _INDEX.search(indexdef)
            if match and match.group(2).strip('"') == self.vector_column and match.group(3) in _OPERATORS:
                self.index = match.group(1).lower()
                self.operator, self.distance = _OPERATORS[match.group(3)]
        self.conn.rollback()

    def _where(self):
        """``WHERE col::text = %s AND ...`` (empty without filters): identifiers quoted by psycopg, values bound, never formatted in."""
        sql = self._sql
        if not self.filters:
            return sql.SQL("")
        terms = [sql.SQL("{}::text = %s").format(sql.Identifier(column)) for column in self.filters]
        return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(terms)

    def read(self) -> StoredCollection:
        sql = self._sql
        columns = [sql.Identifier(c) for c in (self.id_column, self.text_column, self.vector_column) if c]
        bound = tuple(self.filters.values()) or None
        query = sql.SQL("SELECT {} FROM {}").format(sql.SQL(", ").join(columns), self.table) + self._where()
        count = (
            sql.SQL("SELECT count(*), max(vector_dims({})) FROM {}").format(sql.Identifier(self.vector_column), self.table) + self._where()
        )
        try:
            # Counted first, so a table too large is refused before any vector is read.
            expected, dim = self.conn.execute(count, bound).fetchone() or (0, None)
            if dim:
                check_rows(int(expected), int(dim))
            rows = rows_reader(int(expected), self.text_column, self.vector_column)
            # A server-side cursor in binary: pgvector's binary loader gives each vector as a float32 array, a batch at a time.
            with self.conn.cursor(name="cosine_probe_read", binary=True) as cursor:
                cursor.execute(query, bound)
                while batch := cursor.fetchmany(BATCH_ROWS):
                    if self.id_column:
                        ids, texts, vectors = zip(*batch, strict=True)
                    else:
                        ids, (texts, vectors) = None, zip(*batch, strict=True)
                    rows.add_rows(ids, texts, [v.to_numpy() if hasattr(v, "to_numpy") else v for v in vectors])
        except VectorsError as exc:
            raise StoreError(str(exc)) from exc
        finally:
            self.conn.rollback()
        return finish_rows(rows, self.text_column, self.vector_column)

    def search_method(self) -> str:
        if self.binary:
            how = "Hamming distance <~> of binary_quantize(vector), sequential scan"
            if self.binary == "binary-rescore":
                how += f", its {RESCORE_MULTIPLIER} x k shortlist rescored by {self.distance} distance of the stored vectors"
            return f"pgvector binary quantization ({how})"
        if self.exact or self.index is None:
            return f"pgvector exact scan (no index scan), {self.distance} distance"
        if self.index_used is False:
            # PostgreSQL's planner chose a sequential scan (a small table): the search was exact although an index exists.
            return f"pgvector sequential scan (the planner did not use the {self.index} index), {self.distance} distance"
        return f"pgvector {self.index} index, {self.distance} distance"

    def _binary_query(self, dimension: int):
        sql = self._sql
        bits = sql.SQL("binary_quantize({vector})::bit({d}) <~> binary_quantize(%s)::bit({d})").format(
            vector=sql.Identifier(self.vector_column), d=sql.Literal(dimension)
        )
        if self.binary == "binary":
            return (
                sql.SQL("SELECT {text} FROM {table}").format(text=sql.Identifier(self.text_column), table=self.table)
                + self._where()
                + sql.SQL(" ORDER BY {bits} LIMIT %s").format(bits=bits)
            )
        shortlist = (
            sql.SQL("SELECT {text}, {vector} FROM {table}").format(
                text=sql.Identifier(self.text_column), vector=sql.Identifier(self.vector_column), table=self.table
            )
            + self._where()
            + sql.SQL(" ORDER BY {bits} LIMIT %s").format(bits=bits)
        )
        return sql.SQL("SELECT {text} FROM ({shortlist}) AS shortlist ORDER BY {vector} " + self.operator + " %s LIMIT %s").format(
            text=sql.Identifier(self.text_column), shortlist=shortlist, vector=sql.Identifier(self.vector_column)
        )

    def _search_binary(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        vectors = np.asarray(vectors, dtype=np.float32)
        query = self._binary_query(vectors.shape[1] if vectors.ndim == 2 else 0)
        bound = tuple(self.filters.values())
        out = []
        with self.conn.transaction():
            for vector in vectors:
                # The WHERE's values come first in the shortlist, before its ORDER BY's vector and LIMIT.
                params = (*bound, vector, k) if self.binary == "binary" else (*bound, vector, RESCORE_MULTIPLIER * k, vector, k)
                out.append([str(r[0]) for r in self.conn.execute(query, params).fetchall()])
        return out

    def search(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        if self.binary:
            return self._search_binary(vectors, k)
        sql = self._sql
        # The operator is one of _OPERATORS' three constants, never user text.
        query = (
            sql.SQL("SELECT {text} FROM {table}").format(text=sql.Identifier(self.text_column), table=self.table)
            + self._where()
            + sql.SQL(" ORDER BY {vector} " + self.operator + " %s LIMIT %s").format(vector=sql.Identifier(self.vector_column))
        )
        bound = tuple(self.filters.values())
        out = []
        with self.conn.transaction():
            if self.exact:
                # Both: a server tuned to avoid sequential scans must still scan every row here.
                self.conn.execute("SET LOCAL enable_indexscan = off")
                self.conn.execute("SET LOCAL enable_seqscan = on")
            if len(vectors):
                plan = self.conn.execute(sql.SQL("EXPLAIN ") + query, (*bound, np.asarray(vectors[0], dtype=np.float32), k)).fetchall()
                self.index_used = any("Index Scan" in str(row[0]) for row in plan)
            for vector in np.asarray(vectors, dtype=np.float32):
                out.append([str(r[0]) for r in self.conn.execute(query, (*bound, vector, k)).fetchall()])
        return out

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()  # idempotent
