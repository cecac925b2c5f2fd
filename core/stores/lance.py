"""LanceDB (``lancedb://FOLDER?table=NAME``): an embedded folder, read with the official ``lancedb`` client.

Reading and searching never write: the table is read whole (``to_arrow``) and
searched with ``table.search(vector).distance_type("cosine")``; with an
index on the vector column the store's search uses it, ``exact`` bypasses it
(``bypass_vector_index``: a flat scan, LanceDB's exact search).  Filters
(``--store-filter``) are LanceDB's own ``where``, built with its type-safe
expressions (``lancedb.expr.col(c) == lit(v)``) rather than SQL text, so a
value is a literal whatever quotes it holds; the read and the search both
pass through it, prefiltered (the search ranks only the matching rows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from core.files.vectors import BATCH_ROWS, VectorsError, vector_block
from core.stores.base import (
    TEXT_CANDIDATES,
    VECTOR_CANDIDATES,
    StoredCollection,
    StoreError,
    StoreURI,
    check_filter_columns,
    check_rows,
    finish_rows,
    pick_column,
    rows_reader,
)

# Query vectors per search call.
_BLOCK = 256


class LanceStore:
    """One LanceDB table, opened for reading."""

    def __init__(
        self,
        uri: StoreURI,
        text_column: str | None = None,
        vector_column: str | None = None,
        *,
        exact: bool = False,
        filters: dict[str, str] | None = None,
    ) -> None:
        import lancedb

        self.uri, self.exact, self.filters = uri, exact, dict(filters or {})
        folder = Path(uri.location).expanduser()
        if not folder.is_dir():
            raise StoreError(f"no LanceDB folder at {folder}")
        name = uri.params.get("table")
        db = lancedb.connect(str(folder))
        tables = list(db.list_tables().tables) if hasattr(db, "list_tables") else list(db.table_names())
        if not name:
            if len(tables) != 1:
                raise StoreError(f"name the table: lancedb://{folder}?table=NAME (the folder holds {', '.join(tables) or 'no table'})")
            name = tables[0]
        if name not in tables:
            raise StoreError(f"the LanceDB folder {folder} has no table {name!r}; it holds {', '.join(tables) or 'no table'}")
        self.table = db.open_table(name)
        schema = self.table.schema
        vectors = [f.name for f in schema if pa.types.is_fixed_size_list(f.type) or pa.types.is_list(f.type)]
        texts = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        self.vector_column = pick_column("vector", vector_column, vectors, VECTOR_CANDIDATES, "--vector-column")
        self.text_column = pick_column("text", text_column, texts, TEXT_CANDIDATES, "--text-column")
        self.id_column = "id" if "id" in schema.names and "id" not in (self.text_column, self.vector_column) else None
        check_filter_columns(self.filters, schema.names, "column")

    def _where(self, query: Any) -> Any:
        """The filters as LanceDB expressions (no SQL text: a value is a literal whatever it holds)."""
        from lancedb.expr import col, lit

        for column, value in self.filters.items():
            query = query.where(col(column) == lit(value))
        return query

    def read(self) -> StoredCollection:
        columns = [c for c in (self.id_column, self.text_column, self.vector_column) if c]
        # Counted first (a plain count, or the filtered rows' one smallest column streamed): refused before any vector is read.
        if self.filters:
            probe = self.id_column or self.text_column
            expected = sum(b.num_rows for b in self._where(self.table.search()).select([probe]).to_batches(BATCH_ROWS))
        else:
            expected = self.table.count_rows()
        field = self.table.schema.field(self.vector_column).type
        if pa.types.is_fixed_size_list(field):
            check_rows(expected, field.list_size)
        rows = rows_reader(expected, self.text_column, self.vector_column)
        try:
            # A plain query with no limit returns every matching row, in Arrow batches: the vectors arrive as float32 arrays.
            for batch in self._where(self.table.search()).select(columns).to_batches(BATCH_ROWS):
                block, present = vector_block(batch.column(self.vector_column), self.vector_column, rows.rows)
                ids = batch.column(self.id_column).to_pylist() if self.id_column else None
                rows.add(ids, batch.column(self.text_column).to_pylist(), block, present)
        except VectorsError as exc:
            raise StoreError(str(exc)) from exc
        return finish_rows(rows, self.text_column, self.vector_column)

    def _indexed(self) -> str | None:
        for index in self.table.list_indices():
            if self.vector_column in list(index.columns):
                return str(index.index_type)
        return None

    def search_method(self) -> str:
        index = self._indexed()
        if self.exact or index is None:
            return "LanceDB flat scan (exact), cosine distance"
        return f"LanceDB {index} index, cosine distance"

    def search(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        queries = np.asarray(vectors, dtype=np.float32)
        out: list[list[str]] = [[] for _ in range(len(queries))]
        # Many query vectors in one search (LanceDB adds ``query_index``): one call per block, not one per passage.
        for start in range(0, len(queries), _BLOCK):
            block = list(queries[start : start + _BLOCK])
            # A vector search's builder (typed as the base builder, which has no distance_type).
            query: Any = self.table.search(block if len(block) > 1 else block[0], vector_column_name=self.vector_column)
            query = self._where(query.distance_type("cosine"))
            if self.exact:
                query = query.bypass_vector_index()
            # The distance asked for by name: LanceDB adds it anyway today and warns that it will stop.
            columns = [self.text_column, "_distance", *(["query_index"] if len(block) > 1 else [])]
            rows = query.select([self.text_column, "_distance"]).limit(k).to_arrow().select(columns).to_pydict()
            which = rows["query_index"] if len(block) > 1 else [0] * len(rows[self.text_column])
            order = sorted(range(len(which)), key=lambda r: (which[r], rows["_distance"][r]))
            for r in order:
                out[start + which[r]].append(str(rows[self.text_column][r]))
        return out

    def close(self) -> None:
        """Nothing to release: LanceDB holds no connection open for a read table."""
