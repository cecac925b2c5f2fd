"""The one place that holds Streamlit's cache wrappers.

Models and the embedding cache are process-wide resources shared by every
session (``st.cache_resource``); availability checks and data files are cached
values (``st.cache_data``).  Pages call these, never ``core`` loaders directly,
so a model is loaded once per server.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.models.cache import EmbeddingCache
from core.models.loading import Availability, LoadedModel, availability, load_model, load_tokenizer
from core.papers import reference, suites


@st.cache_resource(show_spinner=False)
def embedding_cache() -> EmbeddingCache:
    """The shared two-layer embedding cache (memory + sqlite)."""
    return EmbeddingCache()


@st.cache_resource(show_spinner="Loading model…")
def model(name: str, allow_remote_code: bool = False) -> LoadedModel:
    """A loaded model, shared by all sessions (raises ModelUnavailable)."""
    return load_model(name, allow_remote_code=allow_remote_code)


@st.cache_data(ttl=60, show_spinner=False)
def model_availability(name: str, allow_remote_code: bool = False) -> Availability:
    """Whether a model can load here; re-checked at most once a minute."""
    return availability(name, allow_remote_code=allow_remote_code)


@st.cache_data(show_spinner=False)
def suite(name: str) -> pd.DataFrame:
    """A shipped suite, expanded as the runner expects."""
    return suites.load_suite(name)


@st.cache_data(show_spinner=False)
def suite_rows(name: str) -> pd.DataFrame:
    """A shipped suite file as written (one row per pair or OOV item)."""
    return suites.read_suite_file(name)


@st.cache_data(show_spinner=False)
def published(paper: str | None = None) -> pd.DataFrame:
    """The papers' published figures (tidy long)."""
    return reference.load_reference(paper)


@st.cache_data(show_spinner=False)
def failure_examples() -> pd.DataFrame:
    """The failure paper's section 4.6 example pairs and published scores."""
    return reference.load_failure_examples()


@st.cache_data(show_spinner=False)
def oov_entities() -> pd.DataFrame:
    """OOV paper Table 2: entities, replacements and their published splits."""
    return reference.load_oov_entities()


@st.cache_resource(show_spinner=False)
def tokenizer(name: str):
    """A model's tokenizer, without its weights when possible (raises ModelUnavailable)."""
    return load_tokenizer(name)
