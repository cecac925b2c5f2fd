"""The Retrieval page's uploads of a pairs file, a corpus and its queries: kept across page switches, parsed once per file.

State: uploaded bytes live in ``rt_<kind>_bytes``/``rt_<kind>_name`` (kinds ``pairs``, ``corpus``, ``queries``,
through ``ui/uploads.py``) and the last file that parsed in ``rt_<kind>_parsed``, so both survive page switches;
a file that does not parse shows an error and leaves the parsed one and the results in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from core import constants
from core.files.texts import TEXT_COLUMNS, parse_texts
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.retrieval.suite_files import suite_from_bytes
from ui import uploads, widgets

UPLOAD_TYPES = ["csv", "tsv", "txt", "jsonl", "json"]

ss = st.session_state


def keys(kind: str) -> dict[str, str]:
    return {k: f"rt_{kind}_{k}" for k in ("tried", "parsed", "digest", "error")}


def parsed(kind: str) -> tuple[str, Any] | None:
    """The last file of ``kind`` that parsed: (its name, what it parsed to), or None."""
    return ss.get(keys(kind)["parsed"])


def digest(kind: str) -> str:
    """The digest of the last file of ``kind`` that parsed."""
    return ss[keys(kind)["digest"]]


def uploader(kind: str, label: str, types: list[str], help_text: str) -> uploads.Upload | None:
    """``kind``'s uploader and its kept file (``ui/uploads.py``); a new file is read even when its bytes match an earlier one."""
    upload, new = uploads.uploader(label, f"rt_{kind}_uploader", f"rt_{kind}", types, help=help_text)
    if new:
        ss[keys(kind)["tried"]] = None
    return upload


def _ingest(kind: str, parse: Callable[[bytes, str], Any]) -> None:
    """Parse ``kind``'s bytes when new; a file that does not parse leaves the last good one in place."""
    k = keys(kind)
    upload = uploads.kept(f"rt_{kind}", f"{kind}.csv")
    if upload is None:
        return
    data, name, digest = upload.data, upload.name, upload.digest
    if digest == ss.get(k["tried"]):
        return
    # The digest is stored once the bytes parsed or were refused, so a crash is retried, never skipped as seen.
    try:
        content = parse(data, name)
    except ValueError as exc:  # RetrievalSuiteError and PairsFileError are ValueErrors
        ss[k["tried"]] = digest
        ss[k["error"]] = (name, str(exc))
        return
    ss[k["tried"]] = digest
    ss[k["parsed"]] = (name, content)
    ss[k["digest"]] = digest
    ss[k["error"]] = None


def _box(kind: str, label: str, help_text: str, parse: Callable[[bytes, str], Any]) -> tuple[str, Any] | None:
    """An uploader for ``kind`` and any error (the previous file is kept); what parsed last, or None."""
    uploader(kind, label, UPLOAD_TYPES, help_text)
    _ingest(kind, parse)
    found = parsed(kind)
    error = ss.get(keys(kind)["error"])
    if error:
        bad, message = error
        kept = f" {widgets.md_escape(found[0])} is kept." if found is not None else ""
        st.error(f"Could not use {widgets.md_escape(bad)}: {widgets.md_escape(message.rstrip('.'))}.{kept}", icon="⛔")
    return found


def _notes(notes: Sequence[str]) -> None:
    for note in notes:
        st.info(widgets.md_escape(note), icon="ℹ️")


def suite_box(kind: str, label: str, help_text: str) -> None:
    """A pairs file's uploader, read as a retrieval suite, and what it holds."""
    found = _box(kind, label, help_text, suite_from_bytes)
    if found is None:
        return
    name, content = found
    suite: RetrievalSuite = content
    groups, queries = len(suite.group_ids), suite.queries[constants.COL_WHICH].eq(constants.COL_Q1).sum()
    pairs = f", {queries} query pair(s)" if queries else ""
    st.caption(f"{widgets.md_escape(name)}: {groups} anchor group(s), {len(suite.passages)} passages{pairs}")
    _notes(suite.notes)


def texts_box(kind: str, label: str, help_text: str, noun: str) -> None:
    """A file of texts' uploader (a corpus, its queries), one text per row, and how many it holds."""
    found = _box(kind, label, help_text, lambda data, name: parse_texts(data, name, TEXT_COLUMNS[kind], what=kind))
    if found is None:
        return
    name, content = found
    st.caption(f"{widgets.md_escape(name)}: {len(content.texts)} {noun}")
    _notes(content.notes)
