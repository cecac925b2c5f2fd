"""Index settings through a store (``index-settings --store``): the collection read, then the one index-settings run over given vectors.

The scoring itself is :func:`core.probes.vector_settings.vectors_index_settings`,
the same for a vectors file; the store is only read (read-only, as every
store here).
"""

from __future__ import annotations

from typing import Any

from core.models.check import ModelCheck
from core.probes.index_settings import IndexSettingsResult
from core.probes.vector_settings import METRIC_TOP_CHANGED, PROBE_STORE_QUERIES, query_setting_rows, vectors_index_settings
from core.stores.audit import read_collection
from core.stores.base import StoreHandle

__all__ = ["METRIC_TOP_CHANGED", "PROBE_STORE_QUERIES", "query_setting_rows", "store_index_settings"]


def store_index_settings(handle: StoreHandle, model: str, settings: Any, **options: Any) -> tuple[IndexSettingsResult, ModelCheck]:
    """:func:`core.probes.vector_settings.vectors_index_settings` of the store's collection (its keyword options as there).

    Raises:
        ValueError: no pairs and no queries; StoreError: the store cannot be read; ModelMismatch: the model did not make its vectors.
    """
    return vectors_index_settings(read_collection(handle), model, settings, what="stored", probe=PROBE_STORE_QUERIES, **options)
