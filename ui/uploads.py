"""The one upload helper of the pages that take files (Your data, Your corpus and its dedup run, Retrieval, Tune).

Streamlit's uploader forgets its file on a page switch, so a new file's name and bytes are copied once into session
state under ``PREFIX_id``, ``PREFIX_name`` and ``PREFIX_bytes`` and read back as an :class:`Upload`: what the
pages parse, key caches by (``digest``) and record in the history.  A file refused by its parser leaves the previous
upload's parsed result in place (each page keeps that), so nothing the user had is lost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from core import constants


@dataclass(frozen=True)
class Upload:
    """A file the user gave: its name (the suffix picks the parser), its bytes, and a digest of both."""

    name: str
    data: bytes
    digest: str

    @classmethod
    def of(cls, name: str, data: bytes) -> Upload:
        """An upload of ``data`` named ``name``; the digest (SHA-256 of the name, a NUL and the bytes) is what caches key on."""
        data = bytes(data)
        return cls(name, data, hashlib.sha256(name.encode("utf-8", "replace") + b"\0" + data).hexdigest())


def receive(uploaded, prefix: str) -> bool:
    """Copy a new uploader file (``st.file_uploader``'s value) under ``prefix``; True when it is a new file.

    A new file is new even when its bytes equal an earlier one: the caller then reads it again.
    """
    ss = st.session_state
    if uploaded is None or uploaded.file_id == ss.get(f"{prefix}_id"):
        return False
    ss[f"{prefix}_id"], ss[f"{prefix}_bytes"], ss[f"{prefix}_name"] = uploaded.file_id, uploaded.getvalue(), uploaded.name
    return True


def kept(prefix: str, default_name: str = "upload.csv") -> Upload | None:
    """The upload kept under ``prefix`` (by :func:`receive`, or bytes a page put there itself, e.g. pasted text), or None."""
    ss = st.session_state
    data = ss.get(f"{prefix}_bytes")
    if data is None:
        return None
    return Upload.of(ss.get(f"{prefix}_name") or default_name, data)


def uploader(label: str, key: str, prefix: str, types: Sequence[str], help: str | None = None) -> tuple[Upload | None, bool]:
    """A file uploader (at most ``MAX_UPLOAD_MB``) whose file outlives page switches: (the kept upload, whether it is new)."""
    uploaded = st.file_uploader(label, type=list(types), key=key, max_upload_size=constants.MAX_UPLOAD_MB, help=help)
    new = receive(uploaded, prefix)
    return kept(prefix), new
