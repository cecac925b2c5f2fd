"""The one error a pairs file can end in."""

from __future__ import annotations


class PairsFileError(ValueError):
    """A pairs file cannot be read; the message says why and what to do."""
