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
from core.audit.findings import history_settings
from core.history import store
from core.history.sources import (
    audit_pairs,
    bytes_sha256,
    index_settings_record,
    mitigation_settings,
    retrieval_record,
    suite_source,
    tune_record,
)
from core.probes.retrieval.specs import MitigationSpec, build_mitigations
from core.scoring.runner import RunResult
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


def record(page: str, result: RunResult, selection: Selection, sources: Sequence[Mapping[str, Any]], **settings: Any) -> int | None:
    """Store one of the app's runs; its id, or None (after a warning) when the history cannot be written.

    Args:
        page: the page's url path (``failure-modes``, ``oov``, ``your-data``).
        result: what ``ui.state.run`` returned.
        selection: the sidebar selection it ran with.
        sources: what was scored (:func:`suite_sources`, :func:`upload_source`).
        **settings: anything else worth keeping (column mapping, readings).
    """
    try:
        if store.history_path() is None:
            return None
        return store.record_run(
            result.results,
            command=page,
            origin=constants.ORIGIN_APP,
            errors=result.errors,
            settings={
                "threshold": selection.threshold,
                "sources": list(sources),
                "models_selected": list(selection.models),
                "device": selection.device,
                "devices": result.devices,
                "backends": result.backends,
                **settings,
            },
        )
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")
        return None


def record_retrieval(
    page: str,
    result: Any,
    selection: Selection,
    name: str,
    sources: Sequence[Mapping[str, Any]],
    mitigations: Sequence[MitigationSpec] = (),
    **settings: Any,
) -> int | None:
    """Store a retrieval run of the app (suite, file or corpus mode) through ``core.history.sources.retrieval_record``,
    like the CLI's: the dense cosines as pairs, each mitigation's scores beside them, the summary, no threshold, and
    each mitigation the specs describe with its plain settings (``mitigation_settings``, as the CLI records ``--mitigate``).

    Returns its id, or None (after a warning) when the history cannot be written.
    """
    try:
        if store.history_path() is None:
            return None
        pairs, own = retrieval_record(result, name)
        ran = {"mitigations": mitigation_settings(build_mitigations(mitigations))}
        return store.record_run(
            pairs,
            command=page,
            origin=constants.ORIGIN_APP,
            errors=result.errors,
            settings={
                **own,
                **ran,
                "sources": list(sources),
                "models_selected": list(selection.models),
                "device": selection.device,
                **settings,
            },
        )
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")
        return None


def record_tune(result: Any, selection: Selection, sources: Sequence[Mapping[str, Any]], **settings: Any) -> int | None:
    """Store a tune run of the app as the CLI stores it (``core.history.sources.tune_record``): every setting's
    cosine(anchor, variant) as pairs, the training config.

    Returns its id, or None (after a warning) when the history cannot be written.
    """
    try:
        if store.history_path() is None:
            return None
        pairs, own = tune_record(result)
        return store.record_run(
            pairs,
            command="tune",
            origin=constants.ORIGIN_APP,
            settings={**own, "sources": list(sources), "models_selected": list(selection.models), "device": selection.device, **settings},
        )
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")
        return None


def record_index_settings(result: Any, selection: Selection, sources: Sequence[Mapping[str, Any]]) -> int | None:
    """Store an Index settings run of the app as the CLI stores it (``core.history.sources.index_settings_record``):
    the pairs with the float32 cosine and each setting's score, the settings and the table. A run without pairs
    (the retrieval suite) is not stored.

    Returns its id, or None (after a warning) when the history cannot be written.
    """
    try:
        if store.history_path() is None or result.pairs.empty:
            return None
        pairs, own = index_settings_record(result)
        return store.record_run(
            pairs,
            command="index-settings",
            origin=constants.ORIGIN_APP,
            errors=result.errors,
            settings={
                **own,
                "threshold": selection.threshold,
                "sources": list(sources),
                "models_selected": list(selection.models),
                "device": selection.device,
            },
        )
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")
        return None


def record_audit(
    pairs: Any, said: Any, threshold: float, errors: Mapping[str, str], selection: Selection, sources: Sequence[Mapping[str, Any]]
) -> int | None:
    """Store a Your corpus audit as the CLI's ``audit`` stores it: its close pairs above the page's threshold
    (``core.history.sources.audit_pairs``) and the findings with their table (``core.audit.findings.history_settings``).

    Returns its id, or None (after a warning) when the history cannot be written.
    """
    try:
        if store.history_path() is None:
            return None
        name = str(sources[0].get("file", "corpus")) if sources else "corpus"
        return store.record_run(
            audit_pairs(pairs, name),
            command="audit",
            origin=constants.ORIGIN_APP,
            errors=errors,
            settings={
                "sources": list(sources),
                **history_settings(said, threshold),
                "models_selected": list(selection.models),
                "device": selection.device,
            },
        )
    except Exception as exc:  # noqa: BLE001 - the promise: history never breaks a run
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        st.warning(f"This run was not added to the run history: {md_escape(reason)}. The results below are unaffected.", icon="🗂️")
        return None
