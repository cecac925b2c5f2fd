"""What a run scored, for its history settings: a shipped suite by name, or a file by path and SHA-256."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core import constants
from core.papers.suites import SUITE_FILES

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def bytes_sha256(data: bytes) -> str:
    """Hex SHA-256 of uploaded bytes."""
    return hashlib.sha256(data).hexdigest()


def suite_source(name_or_path: str) -> dict[str, Any]:
    """``{"suite": name, "sha256": …}`` for a shipped suite (its CSV's hash, so an edited suite shows),
    ``{"file": path, "sha256": …}`` for a file, ``{"suite": name}`` when neither can be hashed.

    ``all`` lists no hash (it is three files); use one entry per suite for that.
    """
    if name_or_path in SUITE_FILES:
        return {"suite": name_or_path, "sha256": file_sha256(SUITE_FILES[name_or_path])}
    if name_or_path == constants.SUITE_ALL or name_or_path == constants.SUITE_RETRIEVAL:
        return {"suite": name_or_path}
    path = Path(name_or_path).expanduser()
    try:
        return {"file": str(path.resolve()), "sha256": file_sha256(path)}
    except OSError:
        return {"suite": name_or_path}


def mitigation_settings(mitigations: Sequence[Any]) -> list[dict[str, Any]]:
    """What each mitigation ran with: its name and its plain settings (numbers, text, per-model thresholds), for the history.

    Sorted by name: each mitigation rescores on its own, so the set is what ran, and one set picked
    in another order (typed on the CLI, ticked on the page) records the same settings.
    """
    out = []
    for m in mitigations:
        own = {k: v for k, v in vars(m).items() if not k.startswith("_") and _plain(v)} if hasattr(m, "__dict__") else {}
        out.append({"name": str(getattr(m, "name", m)), **own})
    return sorted(out, key=lambda setting: setting["name"])


def _plain(value: Any) -> bool:
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return False
