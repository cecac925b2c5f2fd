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

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from core.files.vectors import BATCH_ROWS, VectorsError, vector_block
from core.stores.base import (
    FILTER_SHARED,
    TEXT_CANDIDATES,
    StoredCollection,
    StoreError,
    StoreURI,
    check_filter_columns,
    check_rows,
    filter_value,
    finish_rows,
    pick_column,
    pick_vector_column,
    rows_reader,
)

# Query vectors per search call.
_BLOCK = 256
# The Rust source location LanceDB's errors end with (", /root/.cargo/registry/src/.../utils.rs:172:20"): not the user's concern.
_RUST_PLACE = re.compile(r",?\s*/\S*\.rs:\d+:\d+\S*")
T = TypeVar("T")


@contextmanager
def lance_errors(folder: object) -> Iterator[None]:
    """LanceDB's failures on a damaged or unreadable folder as one line naming the folder, its Rust panics included.

    A panic inside LanceDB's Rust code reaches Python as pyo3's ``PanicException`` (a ``BaseException``, "rust future
    panicked"), which ``except Exception`` lets through as a traceback.
    """
    try:
        yield
    except StoreError:
        raise
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException is a BaseException
        from core.messages import first_line

        said = _RUST_PLACE.sub("", first_line(exc)).strip() or type(exc).__name__
        raise StoreError(f"LanceDB cannot read the folder {folder}: {said[:300]}") from exc


def _one_line(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def wrapped(self: LanceStore, *args: Any, **kwargs: Any) -> T:
        with lance_errors(self.uri.location):
            return method(self, *args, **kwargs)

    return wrapped


def _holds(arrow_type: Any) -> str | None:
    """What a filter on a column of this Arrow type compares: text, integers, numbers, booleans (None: none of them)."""
    import pyarrow as pa

    for test, holds in (
        (pa.types.is_boolean, "booleans"),
        (pa.types.is_integer, "integers"),
        (pa.types.is_floating, "numbers"),
        (pa.types.is_string, "text"),
        (pa.types.is_large_string, "text"),
    ):
        if test(arrow_type):
            return holds
    return None


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
        with lance_errors(folder):
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
        # LanceDB searches fixed-size lists of floats; a variable-size list (list<double>) fails only at search time.
        vectors = [f.name for f in schema if pa.types.is_fixed_size_list(f.type) and pa.types.is_floating(f.type.value_type)]
        unread = {
            f.name: str(f.type).replace("item: ", "")
            for f in schema
            if f.name not in vectors and (pa.types.is_list(f.type) or pa.types.is_large_list(f.type) or pa.types.is_fixed_size_list(f.type))
        }
        texts = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        self.vector_column = pick_vector_column(vector_column, vectors, unread, "LanceDB fixed_size_list<float>")
        self.text_column = pick_column("text", text_column, texts, TEXT_CANDIDATES, "--text-column", skip_ids=True)
        self.id_column = "id" if "id" in schema.names and "id" not in (self.text_column, self.vector_column) else None
        check_filter_columns(self.filters, schema.names, "column")
        self._values = {column: self._typed(column, value, schema.field(column).type) for column, value in self.filters.items()}

    @staticmethod
    def _typed(column: str, value: str, arrow_type: Any) -> Any:
        holds = _holds(arrow_type)
        if holds is None:
            raise StoreError(
                f"the store filter: {column!r} holds {arrow_type}; a filter compares text, numbers and booleans", shared=FILTER_SHARED
            )
        return filter_value(column, value, holds)

    def _where(self, query: Any) -> Any:
        """The filters as LanceDB expressions (no SQL text: a value is a literal whatever it holds)."""
        from lancedb.expr import col, lit

        for column, value in self._values.items():
            query = query.where(col(column) == lit(value))
        return query

    @_one_line
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

    @_one_line
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
