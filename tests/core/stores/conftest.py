"""The store tests' shared fixtures (defined in tests/store_support.py): the corpus slice with MiniLM's vectors, one pgvector server."""

from store_support import pg, stored  # noqa: F401 - fixtures, found by name
