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

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from core.files.vectors import VectorsError
from core.stores.base import StoredCollection, StoreError, StoreURI, check_filter_columns, check_rows, finish_rows, rows_reader

_PAGE = 5_000
_BLOCK = 100


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
            shutil.copytree(folder, self._copy / "store")
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
            if self.filters:
                check_filter_columns(self.filters, self._metadata_keys(), "metadata key")
        except BaseException:
            shutil.rmtree(self._copy, ignore_errors=True)
            raise
        self.text_column, self.vector_column = "documents", "embeddings"

    def _metadata_keys(self) -> list[str]:
        """The metadata keys the collection's rows carry (Chroma has no schema: read from the rows, page by page)."""
        keys: dict[str, None] = {}
        for offset in range(0, self.collection.count(), _PAGE):
            page = self.collection.get(include=["metadatas"], limit=_PAGE, offset=offset)
            for meta in page["metadatas"] or []:
                keys.update(dict.fromkeys(meta or {}))
        return sorted(keys)

    def _where(self) -> dict | None:
        """The filters as Chroma's metadata ``where``: values bound by its client, never query text."""
        terms: list = [{column: {"$eq": value}} for column, value in self.filters.items()]
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
