"""Chroma (``chroma://FOLDER?collection=NAME``): a persistent folder, read with the official ``chromadb`` client.

Chroma's persistent client writes to its folder whenever it opens one (its
sqlite log, migrations), so the user's folder is never opened: the client
opens a private copy in a temporary folder, removed on close.  Chroma
searches with its HNSW index only, in the collection's own space (``cosine``,
``l2`` or ``ip``) and ``ef_search``; there is no flat search to ask for.
Filters (``--store-filter``) are Chroma's own metadata ``where``
(``{"col": {"$eq": "value"}}``, ``$and`` for several), a dict its client
binds as values, given to the read (``get``) and the search (``query``) alike.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from core.files.vectors import VectorsError
from core.stores.base import (
    FILTER_SHARED,
    StoredCollection,
    StoreError,
    StoreURI,
    check_filter_columns,
    check_rows,
    filter_value,
    finish_rows,
    rows_reader,
)

_PAGE = 5_000
_BLOCK = 100
# What a Chroma folder holds that its client reads: the sqlite database (with its journal) and one folder per vector
# segment, named by its id; anything else (backups, other data, links) is not copied.
_DATABASE = re.compile(r"^chroma\.sqlite3(-wal|-shm|-journal)?$")
_SEGMENT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# A metadata value's Python type, as a filter reads its text (bool before int: a bool is an int in Python).
_HOLDS = ((bool, "booleans"), (int, "integers"), (float, "numbers"), (str, "text"))


def copy_store(folder: Path, into: Path) -> None:
    """Copy the Chroma database and its segment folders, regular files only: no link is followed or copied.

    Raises:
        StoreError: the folder's database is a link (nothing would be copied that the client could open).
    """
    if (folder / "chroma.sqlite3").is_symlink():
        raise StoreError(f"no Chroma folder at {folder} (its chroma.sqlite3 is a link, which is not followed)")
    into.mkdir()
    for entry in folder.iterdir():
        if entry.is_symlink():
            continue
        if entry.is_file() and _DATABASE.match(entry.name):
            shutil.copyfile(entry, into / entry.name)
        elif entry.is_dir() and _SEGMENT.match(entry.name):
            (into / entry.name).mkdir()
            for item in entry.iterdir():
                if item.is_file() and not item.is_symlink():
                    shutil.copyfile(item, into / entry.name / item.name)


class ChromaStore:
    """One Chroma collection, read from a private copy of its folder."""

    def __init__(
        self,
        uri: StoreURI,
        text_column: str | None = None,
        vector_column: str | None = None,
        *,
        exact: bool = False,
        filters: dict[str, str] | None = None,
    ) -> None:
        if text_column is not None or vector_column is not None:
            raise StoreError(
                "a Chroma collection has one text (its documents) and one vector (its embeddings): leave out --text-column and "
                "--vector-column"
            )
        import chromadb
        from chromadb.config import Settings

        self.uri, self.exact, self.filters = uri, exact, dict(filters or {})
        folder = Path(uri.location).expanduser()
        if not (folder / "chroma.sqlite3").is_file():
            raise StoreError(f"no Chroma folder at {folder} (no chroma.sqlite3 in it)")
        self._copy = Path(tempfile.mkdtemp(prefix="cosine-probe-chroma-"))
        try:
            copy_store(folder, self._copy / "store")
            self.client = chromadb.PersistentClient(
                path=str(self._copy / "store"), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
            names = [c if isinstance(c, str) else c.name for c in self.client.list_collections()]
            name = uri.params.get("collection")
            if not name:
                if len(names) != 1:
                    raise StoreError(
                        f"name the collection: chroma://{folder}?collection=NAME (the folder holds {', '.join(names) or 'none'})"
                    )
                name = names[0]
            if name not in names:
                raise StoreError(f"the Chroma folder {folder} has no collection {name!r}; it holds {', '.join(names) or 'none'}")
            self.collection = self.client.get_collection(name)
            self._values: dict[str, list] = {}
            if self.filters:
                holds = self._metadata_types()
                check_filter_columns(self.filters, sorted(holds), "metadata key")
                self._values = {column: self._typed(column, value, holds[column]) for column, value in self.filters.items()}
        except BaseException:
            shutil.rmtree(self._copy, ignore_errors=True)
            raise
        self.text_column, self.vector_column = "documents", "embeddings"

    def _metadata_types(self) -> dict[str, set[str]]:
        """Each metadata key the rows carry and what its values hold (Chroma has no schema: read from the rows, page by page)."""
        keys: dict[str, set[str]] = {}
        for offset in range(0, self.collection.count(), _PAGE):
            page = self.collection.get(include=["metadatas"], limit=_PAGE, offset=offset)
            for meta in page["metadatas"] or []:
                for key, value in (meta or {}).items():
                    keys.setdefault(key, set()).add(next((h for t, h in _HOLDS if isinstance(value, t)), "other"))
        return keys

    @staticmethod
    def _typed(column: str, value: str, holds: set[str]) -> list:
        """The value as each type the key holds that it reads as (Chroma's ``$eq`` matches a value of the same type only)."""
        typed: list = []
        problem = None
        for _, kind in _HOLDS:
            if kind in holds:
                try:
                    typed.append(filter_value(column, value, kind))
                except StoreError as exc:
                    problem = exc
        if not typed:
            raise problem or StoreError(
                f"the store filter: {column!r} holds {', '.join(sorted(holds))}; a filter compares text, numbers and booleans",
                shared=FILTER_SHARED,
            )
        return typed

    def _where(self) -> dict | None:
        """The filters as Chroma's metadata ``where``: values bound by its client, never query text; a key of several types
        matches the value read as each of them."""
        terms: list = []
        for column, values in self._values.items():
            each = [{column: {"$eq": v}} for v in values]
            terms.append(each[0] if len(each) == 1 else {"$or": each})
        if not terms:
            return None
        return terms[0] if len(terms) == 1 else {"$and": terms}

    def read(self) -> StoredCollection:
        where = self._where()
        # Counted first (the filtered rows' ids only), so a collection too large is refused before any vector is read.
        total = self.collection.count()
        expected = total
        if where is not None:
            expected = sum(len(self.collection.get(include=[], where=where, limit=_PAGE, offset=o)["ids"]) for o in range(0, total, _PAGE))
        first = self.collection.get(include=["embeddings"], where=where, limit=1)["embeddings"]
        if first is not None and len(first):
            check_rows(expected, len(first[0]))  # one vector read: its length sizes the whole read
        rows = rows_reader(expected, "documents", "embeddings")
        try:
            for offset in range(0, total, _PAGE):
                page = self.collection.get(include=["documents", "embeddings"], where=where, limit=_PAGE, offset=offset)
                if not page["ids"]:
                    break
                documents = page["documents"]
                texts: list[Any] = list(documents) if documents else [None] * len(page["ids"])
                embeddings = page["embeddings"]
                rows.add_rows(page["ids"], texts, list(embeddings) if embeddings is not None else [None] * len(page["ids"]))
        except VectorsError as exc:
            raise StoreError(str(exc)) from exc
        return finish_rows(rows, "documents", "embeddings")

    def _hnsw(self) -> dict:
        config = getattr(self.collection, "configuration", None) or {}
        hnsw = config.get("hnsw") if isinstance(config, dict) else None
        return dict(hnsw or {})

    def search_method(self) -> str:
        hnsw = self._hnsw()
        return f"Chroma HNSW index (its only search), {hnsw.get('space', 'l2')} distance, ef_search {hnsw.get('ef_search', 100)}"

    def search(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        queries = np.asarray(vectors, dtype=np.float32)
        out: list[list[str]] = []
        # In blocks: one query of 2,000 vectors exceeds the SQL variables Chroma's sqlite layer allows.
        for start in range(0, len(queries), _BLOCK):
            found = self.collection.query(
                query_embeddings=queries[start : start + _BLOCK], n_results=k, where=self._where(), include=["documents"]
            )
            out += [[str(t) for t in docs] for docs in found["documents"] or []]
        return out

    def close(self) -> None:
        shutil.rmtree(self._copy, ignore_errors=True)
