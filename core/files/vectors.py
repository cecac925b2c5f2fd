"""Passages with their vectors, however they arrive: the one collector, the memory cap, and a vectors file read in batches.

Every source of vectors (a vector store, a vectors file) gives the same
:class:`PassageVectors`: distinct passages (:func:`core.words.passage_key`:
a text repeated, in any spacing, is kept once, its first row's vector), their
ids, and one ``(n, d)`` float32 matrix of unit rows.  :class:`PassageRows`
builds it from batches of rows as they are read, so the vectors are held
once, as float32, never as a Python float per component; its size is
checked against :data:`MAX_VECTOR_BYTES` from the row count *before* the
bulk read (:func:`check_vector_memory`).

A vectors file (``--vectors FILE``) is a Parquet or Arrow IPC file with a
text column, a vector column (a list or fixed-size list of floats, as
pipelines and LanceDB write them) and optionally an id column, read in record
batches with pyarrow; or a ``.npy`` ``(n, d)`` matrix with a text file of the
same name beside it (``FILE.txt``: line *i* is the passage of row *i*), read
memory-mapped.  A bad file is refused in one line: no text or vector column,
vectors of different lengths, a NaN, no row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.stats.similarity import unit_rows
from core.words import passage_key

# The vectors one read may hold: every source's vectors stay in memory as float32 for the exact search and the model
# check (2,000,000 x 384 is 2.9 GiB).  Checked from the row count before any vector is read.
MAX_VECTOR_BYTES = 3 * 2**30
BATCH_ROWS = 8_192
MIN_PASSAGES = 2
TEXT_CANDIDATES = ("text", "passage", "passages", "content", "document", "documents", "chunk", "body", "page_content", "sentence")
VECTOR_CANDIDATES = ("vector", "embedding", "embeddings", "vec", "emb")
ID_CANDIDATES = ("id", "_id", "doc_id", "passage_id", "chunk_id")
VECTOR_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow", ".npy": "npy"}


class VectorsError(ValueError):
    """Vectors that cannot be read as asked: one line saying which row or column and why."""


@dataclass
class PassageVectors:
    """Passages and their vectors, as every source gives them.

    Attributes:
        passages: n distinct passages (:func:`core.words.passage_key`), in source order.
        ids: n ids (the source's, else the 1-based row number).
        vectors: (n, d) float32, each row of unit length.
        rows: rows the source held (before repeats and blanks were dropped).
        notes: what was dropped, one line each.
    """

    passages: list[str]
    ids: list[str]
    vectors: np.ndarray
    rows: int
    notes: list[str] = field(default_factory=list)


def memory_words(n_bytes: float) -> str:
    """Bytes in words for a message: ``2.9 GiB``, ``153.6 MiB``."""
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def check_vector_memory(rows: int, dim: int, what: str, max_bytes: int | None = None) -> None:
    """Refuse, before reading them, more vectors than fit the cap as float32 (``max_bytes``, default :data:`MAX_VECTOR_BYTES`).

    Raises:
        VectorsError: ``rows x dim x 4`` bytes above ``max_bytes`` (one line with both in memory terms).
    """
    max_bytes = MAX_VECTOR_BYTES if max_bytes is None else max_bytes
    need = rows * dim * 4
    if need > max_bytes:
        raise VectorsError(
            f"{what} holds {rows:,} rows of {dim} dimensions: {memory_words(need)} of float32 vectors, above the "
            f"{memory_words(max_bytes)} the audit keeps in memory (at {dim} dimensions, {max_bytes // (dim * 4):,} rows); "
            "filter it or sample it"
        )


class PassageRows:
    """Rows arriving in batches, kept as distinct passages and one float32 matrix of unit rows.

    ``strict`` (a file): a missing, non-finite or zero vector is an error naming its row.  Otherwise (a store,
    whose rows a user cannot edit here) such rows are dropped with a note, as blanks and repeats always are.
    """

    def __init__(
        self,
        expected: int,
        *,
        what: str,
        text_column: str = "text",
        vector_column: str = "vector",
        strict: bool = False,
        max_bytes: int | None = None,
    ) -> None:
        self.expected, self.what, self.strict, self.max_bytes = max(int(expected), 0), what, strict, max_bytes
        self.text_column, self.vector_column = text_column, vector_column
        self.seen: dict[str, int] = {}
        self.ids: list[str] = []
        self.rows = 0
        self.dim: int | None = None
        self.buffer = np.zeros((0, 0), dtype=np.float32)
        self.dropped = {"blank or not text": 0, "repeated text": 0, "no vector or a non-finite one": 0}
        self._lengths: list[np.ndarray] = []

    def _start(self, dim: int) -> None:
        if dim < 1:
            self._refuse(self.rows, "its vector is empty")
        self.dim = dim
        check_vector_memory(self.expected, dim, self.what, self.max_bytes)
        self.buffer = np.empty((self.expected, dim), dtype=np.float32)

    def _refuse(self, row: int, why: str) -> None:
        raise VectorsError(f"row {row + 1:,} of {self.what}: {why}")

    def add_rows(self, ids: Sequence[object] | None, texts: Sequence[object], vectors: Sequence[Any]) -> None:
        """A batch of rows, each vector a sequence of floats or None (a store's rows): stacked, then :meth:`add`."""
        present = np.array([v is not None for v in vectors], dtype=bool)
        sizes = {np.size(v) for v in vectors if v is not None}
        if len(sizes) > 1 or (self.dim is not None and sizes and sizes != {self.dim}):
            have = sorted(sizes | ({self.dim} if self.dim is not None else set()))
            raise VectorsError(
                f"the column {self.vector_column!r} holds vectors of {have[0]} and of {have[-1]} dimensions; give one model's vectors"
            )
        dim = sizes.pop() if sizes else (self.dim or 0)
        block = np.zeros((len(vectors), dim), dtype=np.float32)
        for r, vector in enumerate(vectors):
            if vector is not None:
                block[r] = np.asarray(vector, dtype=np.float32).reshape(-1)
        self.add(ids, texts, block, present)

    def add(self, ids: Sequence[object] | None, texts: Sequence[object], block: np.ndarray, present: np.ndarray | None = None) -> None:
        """A batch: ``ids`` (None: row numbers), ``texts``, ``block`` (b, d) floats, ``present`` (b,) False where a row has no vector.

        Raises:
            VectorsError: a dimension other than the first batch's, more rows than counted, or (strict) a bad vector.
        """
        block = np.asarray(block)
        if block.ndim != 2 or block.shape[0] != len(texts):
            raise VectorsError(f"{self.what}: {len(texts)} texts and vectors of shape {block.shape}")
        if self.dim is None and len(texts):
            self._start(block.shape[1])
        if len(texts) and block.shape[1] != self.dim:
            raise VectorsError(
                f"the column {self.vector_column!r} holds vectors of {self.dim} and of {block.shape[1]} dimensions; "
                "give one model's vectors"
            )
        block = block.astype(np.float32, copy=False)
        good = np.isfinite(block).all(axis=1) & block.any(axis=1)
        if present is not None:
            good &= present
        keep_rows: list[int] = []
        for r, text in enumerate(texts):
            row = self.rows + r
            if not good[r] and self.strict:
                if present is not None and not present[r]:
                    self._refuse(row, f"no vector in {self.vector_column!r}")
                self._refuse(row, "its vector holds NaN or infinity" if not np.isfinite(block[r]).all() else "its vector is all zeros")
            key = passage_key(text) if isinstance(text, str) else ""
            if not key:
                self.dropped["blank or not text"] += 1
            elif key in self.seen:
                self.dropped["repeated text"] += 1
            elif not good[r]:
                self.dropped["no vector or a non-finite one"] += 1
            else:
                self.seen[key] = len(self.ids)
                self.ids.append(str(ids[r]) if ids is not None else str(row + 1))
                keep_rows.append(r)
        if keep_rows:
            start, stop = len(self.ids) - len(keep_rows), len(self.ids)
            if stop > self.buffer.shape[0]:
                # More rows than counted (a store written to during the read): grow, still checked against the cap.
                check_vector_memory(stop, self.dim or 0, self.what, self.max_bytes)
                grown = np.empty((max(stop, 2 * self.buffer.shape[0]), self.dim or 0), dtype=np.float32)
                grown[:start] = self.buffer[:start]
                self.buffer = grown
            kept = block[keep_rows]
            # Lengths as stored, before the rows are made unit: a store's own float32 search fails on lengths far from 1.
            self._lengths.append(np.linalg.norm(kept.astype(np.float64), axis=1))
            self.buffer[start:stop] = unit_rows(kept)
        self.rows += len(texts)

    @property
    def lengths(self) -> np.ndarray:
        """(n,) the kept rows' vector lengths as they arrived, in the order of :attr:`ids`."""
        return np.concatenate(self._lengths) if self._lengths else np.zeros(0)

    def finish(self) -> PassageVectors:
        """The passages read.

        Raises:
            VectorsError: fewer than two passages left (or no row at all).
        """
        if self.rows == 0 and self.strict:
            # A file with no row is a bad file; a store (or its filter) with none is counted as passages, as a store says it.
            raise VectorsError(f"{self.what} holds no row")
        if len(self.seen) < MIN_PASSAGES:
            raise VectorsError(
                f"{self.what} holds {len(self.seen)} passage(s) with a vector in {self.text_column!r}/{self.vector_column!r}; "
                f"an audit needs at least {MIN_PASSAGES}"
            )
        n = len(self.ids)
        vectors = self.buffer
        if vectors.shape[0] != n:
            # Rows dropped: the tail is given back in place where numpy owns the buffer, else copied once.
            try:
                vectors.resize((n, vectors.shape[1]), refcheck=False)
            except ValueError:
                vectors = vectors[:n].copy()
        notes = [f"{k:,} row(s) dropped: {why}" for why, k in self.dropped.items() if k]
        return PassageVectors(list(self.seen), self.ids, vectors, self.rows, notes)


def _pick(kind: str, given: str | None, found: Sequence[str], candidates: Sequence[str], flag: str, what: str) -> str:
    if given is not None:
        if given not in found:
            raise VectorsError(f"{what} has no {kind} column {given!r}; its {kind} columns: {', '.join(found) or 'none'}")
        return given
    for name in candidates:
        if name in found:
            return name
    if len(found) == 1:
        return found[0]
    if not found:
        raise VectorsError(f"{what} has no {kind} column; name one with {flag}")
    raise VectorsError(f"{what} has several {kind} columns ({', '.join(found)}); name one with {flag}")


def _id_like(name: str) -> bool:
    return name.lower() in ID_CANDIDATES or name.lower().endswith("_id")


def _arrow_batches(path: Path, kind: str) -> tuple[Any, int | None, Callable[[list[str]], Iterator[Any]]]:
    """(schema, row count or None, a function of columns giving record batches) of a Parquet or Arrow file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "parquet":
        # Read, not memory-mapped (mapped pages count in resident memory), with buffers from the system allocator, which
        # gives freed batches back: Arrow's default allocator kept about 2 GB of them at a million 384-d rows.
        pa.set_memory_pool(pa.system_memory_pool())
        parquet = pq.ParquetFile(path, memory_map=False, pre_buffer=False)
        return (
            parquet.schema_arrow,
            parquet.metadata.num_rows,
            lambda cols: parquet.iter_batches(batch_size=BATCH_ROWS, columns=cols, use_threads=False),
        )
    source = pa.memory_map(str(path), "r")
    try:
        reader = pa.ipc.open_file(source)
        rows = sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
        return reader.schema, rows, lambda cols: (reader.get_batch(i).select(cols) for i in range(reader.num_record_batches))
    except pa.ArrowInvalid:
        source.seek(0)
        stream = pa.ipc.open_stream(source)
        return stream.schema, None, lambda cols: (b.select(cols) for b in stream)


def vector_block(column: Any, name: str, first_row: int) -> tuple[np.ndarray, np.ndarray]:
    """A batch's vector column as ((b, d) float array, (b,) present mask); ragged lists refused naming the row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    present = np.logical_not(np.asarray(col.is_null().to_numpy(zero_copy_only=False)))
    if pa.types.is_fixed_size_list(col.type):
        dim = col.type.list_size
        values = col.flatten() if col.null_count == 0 else pc.list_flatten(col.fill_null(pa.scalar([0.0] * dim, col.type)))
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(col), dim), present
    lengths = np.asarray(pc.list_value_length(col).fill_null(-1).to_numpy(zero_copy_only=False))
    sizes = np.unique(lengths[present])
    if sizes.size > 1:
        odd = int(np.flatnonzero(present & (lengths != sizes[np.argmax([np.sum(lengths == s) for s in sizes])]))[0])
        raise VectorsError(
            f"row {first_row + odd + 1:,}: the column {name!r} holds vectors of {int(sizes.min())} and of {int(sizes.max())} "
            "dimensions (ragged lists); give one model's vectors"
        )
    dim = int(sizes[0]) if sizes.size else 0
    block = np.zeros((len(col), dim), dtype=np.float32)
    if present.any():
        values = np.asarray(pc.list_flatten(col.filter(pa.array(present))).to_numpy(zero_copy_only=False), dtype=np.float32)
        block[present] = values.reshape(-1, dim)
    return block, present


def _is_float_list(field_type: Any) -> bool:
    import pyarrow as pa

    lists = pa.types.is_list(field_type) or pa.types.is_large_list(field_type) or pa.types.is_fixed_size_list(field_type)
    return bool(lists and pa.types.is_floating(field_type.value_type))


def read_vectors_file(
    path: str | Path,
    *,
    text_column: str | None = None,
    vector_column: str | None = None,
    max_bytes: int | None = None,
) -> PassageVectors:
    """A vectors file's passages and vectors (Parquet, Arrow IPC, or ``.npy`` with ``FILE.txt`` beside it), read in batches.

    Args:
        path: the file.
        text_column, vector_column: the columns to read (default: by name, else the one string / float-list column).
        max_bytes: refuse more vectors than this as float32, from the row count, before reading them.

    Returns:
        :class:`PassageVectors`; the id column (``id`` and the like) gives the ids when there is one.

    Raises:
        VectorsError: one line: an unknown suffix, an unreadable file, a missing column, ragged or non-finite
            vectors, no row, fewer than two passages.
    """
    path = Path(path)
    name = path.name
    kind = VECTOR_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise VectorsError(
            f"{name}: a vectors file is .parquet, .arrow or .feather (an id, a text and a vector column), "
            f"or .npy with {path.stem}.txt beside it"
        )
    if not path.is_file():
        raise VectorsError(f"no vectors file at {path}")
    if kind == "npy":
        return _read_npy(path, max_bytes)
    import pyarrow as pa

    try:
        schema, rows, batches = _arrow_batches(path, kind)
    except (pa.ArrowException, OSError) as exc:
        raise VectorsError(f"{name} is not a readable {kind} file: {' '.join(str(exc).split())[:200]}") from exc
    what = f"the vectors file {name}"
    strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    floats = [f.name for f in schema if _is_float_list(f.type)]
    texts_found = [s for s in strings if not _id_like(s)] if text_column is None else strings
    vector = _pick("vector", vector_column, floats, VECTOR_CANDIDATES, "--vector-column", what)
    text = _pick("text", text_column, texts_found, TEXT_CANDIDATES, "--text-column", what)
    id_col = next((c for c in ID_CANDIDATES if c in schema.names and c not in (text, vector)), None)
    field_type = schema.field(vector).type
    if pa.types.is_fixed_size_list(field_type) and rows is not None:
        check_vector_memory(rows, field_type.list_size, what, max_bytes)
    collector = PassageRows(rows or 0, what=what, text_column=text, vector_column=vector, strict=True, max_bytes=max_bytes)
    columns = [c for c in (id_col, text, vector) if c]
    try:
        for batch in batches(columns):
            block, present = vector_block(batch.column(vector), vector, collector.rows)
            ids = batch.column(id_col).to_pylist() if id_col else None
            collector.add(ids, batch.column(text).to_pylist(), block, present)
    except pa.ArrowException as exc:
        raise VectorsError(f"{name} cannot be read: {' '.join(str(exc).split())[:200]}") from exc
    return collector.finish()


def _read_npy(path: Path, max_bytes: int | None) -> PassageVectors:
    name = path.name
    texts_path = path.with_suffix(".txt")
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise VectorsError(f"{name} is not a readable .npy matrix: {' '.join(str(exc).split())[:200]}") from exc
    if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.number):
        raise VectorsError(f"{name} holds a {matrix.ndim}-D {matrix.dtype} array; give an (n, d) matrix of floats, one row a passage")
    if not texts_path.is_file():
        raise VectorsError(f"{name} needs its passages beside it: {texts_path.name}, one per line, line i the text of row i")
    try:
        lines = texts_path.read_text(encoding="utf-8").splitlines()
    except (UnicodeDecodeError, OSError) as exc:
        raise VectorsError(f"{texts_path.name} cannot be read as UTF-8 text: {' '.join(str(exc).split())[:200]}") from exc
    if len(lines) != matrix.shape[0]:
        raise VectorsError(f"{name} has {matrix.shape[0]:,} rows and {texts_path.name} {len(lines):,} lines: give one line per row")
    what = f"the vectors file {name}"
    check_vector_memory(matrix.shape[0], matrix.shape[1], what, max_bytes)
    collector = PassageRows(matrix.shape[0], what=what, text_column=texts_path.name, vector_column=name, strict=True, max_bytes=max_bytes)
    for start in range(0, matrix.shape[0], BATCH_ROWS):
        collector.add(None, lines[start : start + BATCH_ROWS], np.asarray(matrix[start : start + BATCH_ROWS], dtype=np.float32))
    return collector.finish()


def read_vectors_bytes(
    data: bytes, name: str, *, text_column: str | None = None, vector_column: str | None = None, max_bytes: int | None = None
) -> PassageVectors:
    """:func:`read_vectors_file` of an uploaded file's bytes (Parquet or Arrow; a ``.npy`` needs its text file beside it).

    Args:
        data: the file's bytes.
        name: its name (the suffix picks the reader).
        text_column, vector_column, max_bytes: as for :func:`read_vectors_file`.

    Raises:
        VectorsError: one line, as :func:`read_vectors_file`; a ``.npy`` alone (its passages are a second file).
    """
    import tempfile

    suffix = Path(name).suffix.lower()
    if VECTOR_SUFFIXES.get(suffix) == "npy":
        raise VectorsError(
            f"{name}: a .npy matrix needs its passages beside it; give a Parquet or Arrow file with a text and a vector column"
        )
    # pyarrow reads Parquet and Arrow IPC from a file; the bytes go to a private temporary folder, removed after reading.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (Path(name).name or "vectors")
        path.write_bytes(data)
        return read_vectors_file(path, text_column=text_column, vector_column=vector_column, max_bytes=max_bytes)
