"""Streamlit layer: cache wrappers, shared state and widgets. Pages import from here."""
