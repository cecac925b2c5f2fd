"""Recording the app's suite runs in the run history (``core.history``), and reading it for the History page.

A page calls :func:`record` after a run that produced results.  Writing the
history must never break a run: any failure is one warning on the page and
the results stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from core import constants
from core.audit.findings import AuditFindings, history_settings
from core.history import store
from core.history.sources import bytes_sha256, mitigation_settings, suite_source
from core.probes.retrieval.specs import MitigationSpec, build_mitigations
from core.scoring.result import ProbeResult
from ui.state import Selection
from ui.widgets import md_escape


def suite_sources(*names: str) -> list[dict[str, Any]]:
    """History ``sources`` entries for shipped suites (name and file hash)."""
    return [suite_source(n) for n in names]


def archive_sources(archive: str, archive_digest: str, folder: Path, members: Sequence[Path]) -> list[dict[str, Any]]:
    """History ``sources`` entries for files unpacked from an upload (a BEIR zip): each member by its path inside the
    upload and its SHA-256 (as the CLI records a folder's files), each naming the upload, by which the History names the run."""
    entries = suite_sources(*map(str, members))
    return [
        {**entry, "file": str(Path(member).relative_to(folder)), "archive": archive, "archive_digest": archive_digest}
        for entry, member in zip(entries, members, strict=True)
    ]


def upload_source(name: str, data: bytes | None) -> list[dict[str, Any]]:
    """The history ``sources`` entry for an uploaded or pasted file: its name and SHA-256 (None: bytes not at hand)."""
    return [{"file": name, "sha256": bytes_sha256(bytes(data))} if data is not None else {"file": name}]


def _warn(exc: Exception) -> None:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")


def _recorded(command: str, result: ProbeResult, name: str, selection: Selection, settings: Mapping[str, Any]) -> int | None:
    """Store any of the app's results through ``core.history.store.record_result`` with the sidebar's models and device;
    its id, or None (after one warning when the history cannot be written; silently when the record holds nothing to store)."""
    try:
        if store.history_path() is None:
            return None
        ran = {"models_selected": list(selection.models), "device": selection.device}
        return store.record_result(result, name, command=command, origin=constants.ORIGIN_APP, settings={**ran, **settings})
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        _warn(exc)
        return None


def record(page: str, result: ProbeResult, selection: Selection, sources: Sequence[Mapping[str, Any]], **settings: Any) -> int | None:
    """Store one of the app's suite or file runs (its devices and backends come with its record); its id, or None.

    Args:
        page: the page's url path (``failure-modes``, ``oov``, ``your-data``).
        result: what ``ui.state.run`` returned.
        selection: the sidebar selection it ran with.
        sources: what was scored (:func:`suite_sources`, :func:`upload_source`).
        **settings: anything else worth keeping (column mapping, readings).
    """
    return _recorded(page, result, page, selection, {"threshold": selection.threshold, "sources": list(sources), **settings})


def record_retrieval(
    page: str,
    result: ProbeResult,
    selection: Selection,
    name: str,
    sources: Sequence[Mapping[str, Any]],
    mitigations: Sequence[MitigationSpec] = (),
    **settings: Any,
) -> int | None:
    """Store a retrieval run of the app (suite, file, corpus mode, triples, BEIR) as the CLI's: the dense cosines as pairs,
    each mitigation's scores beside them, the summary, no threshold, and each mitigation the specs describe with its plain
    settings (``mitigation_settings``, as the CLI records ``--mitigate``). Its id, or None."""
    ran = {"mitigations": mitigation_settings(build_mitigations(mitigations)), "sources": list(sources)}
    return _recorded(page, result, name, selection, {**ran, **settings})


def record_tune(result: ProbeResult, selection: Selection, sources: Sequence[Mapping[str, Any]], **settings: Any) -> int | None:
    """Store a tune run of the app as the CLI stores it: every setting's cosine(anchor, variant) as pairs, the training
    config. Its id, or None."""
    return _recorded("tune", result, "tune", selection, {"sources": list(sources), **settings})


def record_index_settings(result: ProbeResult, selection: Selection, sources: Sequence[Mapping[str, Any]]) -> int | None:
    """Store an Index settings run of the app as the CLI stores it: the pairs with the float32 cosine and each setting's
    score, the settings and the table. A run without pairs (the retrieval suite) is not stored. Its id, or None."""
    return _recorded("index-settings", result, "index-settings", selection, {"threshold": selection.threshold, "sources": list(sources)})


def record_audit(
    result: ProbeResult, said: AuditFindings, threshold: float, selection: Selection, sources: Sequence[Mapping[str, Any]]
) -> int | None:
    """Store a Your corpus audit as the CLI's ``audit`` stores it: its close pairs (the page passes those above its
    threshold) and the findings with their table (``core.audit.findings.history_settings``). Its id, or None."""
    name = str(sources[0].get("file", "corpus")) if sources else "corpus"
    return _recorded("audit", result, name, selection, {"sources": list(sources), **history_settings(said, threshold)})
