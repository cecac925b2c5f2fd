"""One slice of the shipped public corpus with MiniLM's vectors, and one PostgreSQL + pgvector server, for the whole session."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from store_support import CANARY, corpus_slice, start_pg

N_PASSAGES = 120


@pytest.fixture(scope="session")
def stored(minilm) -> tuple[list[str], np.ndarray]:
    """The first 120 WordNet glosses and MiniLM-L6's vectors of them, encoded once into the session's cache (the CLI then finds them)."""
    from core.models.cache import EmbeddingCache
    from core.models.encode import embedding_matrix, encode_texts

    texts = corpus_slice(N_PASSAGES)
    cache = EmbeddingCache(None)
    try:
        vectors, _ = encode_texts(minilm, texts, cache)
    finally:
        cache.close()
    return texts, embedding_matrix(vectors, texts).astype(np.float32)


@pytest.fixture(scope="session")
def pg():
    """A PostgreSQL + pgvector server on a free loopback port, its password the canary; stopped and removed after the session."""
    server = start_pg(CANARY)
    yield server
    server.stop()
    shutil.rmtree(server.data.parent, ignore_errors=True)
