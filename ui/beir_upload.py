"""A BEIR folder uploaded as a zip: one unpacked folder per session, replaced by the next good upload.

The zip is unpacked once, by :func:`core.files.beir.unpack_beir_zip`
(no links, no paths out of the folder, limits), into a temporary folder the
session owns; its bytes are not kept.  A new upload that unpacks replaces the
folder and removes the old one; one that does not is one error line and the
earlier folder (and the results run on it) stay.  The folder is removed when
the session that holds it is dropped, or when the server exits
(``weakref.finalize``), so twenty uploads leave one folder, not twenty.
The split is picked from the ``qrels/*.tsv`` the zip holds, never typed.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import weakref
from pathlib import Path

import streamlit as st

from core.files.beir import DEFAULT_SPLIT, unpack_beir_zip
from core.files.errors import PairsFileError

KEY_UNPACKED = "rt_beir_unpacked"
KEY_UPLOAD_ID = "rt_beir_upload_id"
KEY_ERROR = "rt_beir_error"
FOLDER_PREFIX = "cosine-probe-beir-"


class UnpackedBeir:
    """A session's unpacked BEIR zip: its upload's name and digest, its folder, the splits it holds.

    The folder goes with the object (``weakref.finalize``) or with :meth:`remove`.
    """

    def __init__(self, name: str, digest: str, folder: Path, splits: list[str]) -> None:
        self.name, self.digest, self.folder = name, digest, folder
        self.splits = sorted(splits, key=lambda s: (s != DEFAULT_SPLIT, s))  # the default split first, then by name
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(folder), True)

    def remove(self) -> None:
        """Remove the folder now (idempotent)."""
        self._finalizer()


def _unpack(name: str, data: bytes) -> UnpackedBeir:
    digest = hashlib.sha256(name.encode("utf-8", "replace") + b"\0" + data).hexdigest()
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    try:
        splits = unpack_beir_zip(data, name, folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return UnpackedBeir(name, digest, folder, splits)


def receive(uploaded) -> UnpackedBeir | None:
    """The session's unpacked folder after taking in ``uploaded`` (a new upload is unpacked once).

    A refused upload leaves its one-line reason under :data:`KEY_ERROR` (see
    :func:`error`) and the earlier folder in place.
    """
    ss = st.session_state
    if uploaded is not None and uploaded.file_id != ss.get(KEY_UPLOAD_ID):
        ss[KEY_UPLOAD_ID] = uploaded.file_id
        try:
            fresh = _unpack(uploaded.name, uploaded.getvalue())
        except PairsFileError as exc:
            ss[KEY_ERROR] = (uploaded.name, str(exc).removeprefix(f"{uploaded.name}: "))  # the page names the upload itself
        else:
            old = ss.get(KEY_UNPACKED)
            ss[KEY_UNPACKED], ss[KEY_ERROR] = fresh, None
            if old is not None:
                old.remove()
    return ss.get(KEY_UNPACKED)


def error() -> tuple[str, str] | None:
    """(upload name, one-line reason) of the last upload that was refused, or None."""
    return st.session_state.get(KEY_ERROR)
