"""Which stores a shared app may open, and what its visitors are told when one cannot be read.

A visitor of a shared app types a folder or a host: the server would read any
folder it can and reach any host and port, and the store's errors would tell
"connection refused" from "timed out", "not PostgreSQL" from "no such
folder", and list a folder's tables or a table's columns.  So the app opens a
store only where the operator allows it (:func:`parse_store_allowlist`,
``$COSINE_PROBE_STORES``: folders under which stores may be opened, and
``HOST:PORT`` servers), and a store opened there says what went wrong in
words that tell nothing apart (:class:`SharedHandle`, :func:`shared_message`).
The CLI, run by the owner of the files and the password, keeps the full errors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core import constants
from core.stores.base import StoredCollection, StoreError, StoreHandle, StoreKind, StoreURI

STORES_ENV = constants.ENV_STORES.name
_SERVER = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.\-]*):(?P<port>[0-9]{1,5})$")


@dataclass(frozen=True)
class StoreAllowlist:
    """Where a shared app may open stores.

    Attributes:
        folders: resolved folders (no link left in them); a folder store is allowed inside one of them.
        servers: ``(host, port)`` pairs, the host lower-cased as the operator wrote it (no name resolution).
    """

    folders: tuple[Path, ...] = ()
    servers: frozenset[tuple[str, int]] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.folders or self.servers)


def parse_store_allowlist(text: str | Iterable[str]) -> StoreAllowlist:
    """The operator's allow-list: absolute folders and ``HOST:PORT`` servers, separated by commas or spaces.

    Args:
        text: ``$COSINE_PROBE_STORES``'s value, e.g. ``/srv/stores 127.0.0.1:5432, db.internal:6543``, or its items.

    Raises:
        StoreError: an item that is neither an absolute folder nor ``HOST:PORT`` (a port from 1 to 65535).
    """
    items = text.replace(",", " ").split() if isinstance(text, str) else [str(i).strip() for i in text if str(i).strip()]
    folders: list[Path] = []
    servers: set[tuple[str, int]] = set()
    for item in items:
        if item.startswith("/"):
            folders.append(Path(os.path.realpath(item)))
            continue
        match = _SERVER.match(item)
        if match is None or not 1 <= int(match["port"]) <= 65535:
            raise StoreError(f"${STORES_ENV}: each item is an absolute folder or HOST:PORT, got {item[:80]!r}")
        servers.add((match["host"].strip("[]").lower(), int(match["port"])))
    return StoreAllowlist(tuple(folders), frozenset(servers))


def allowlist_from_env() -> StoreAllowlist:
    """``$COSINE_PROBE_STORES`` read now (the server's configuration, never a visitor's input).

    Raises:
        StoreError: the variable holds an item that is not a folder or ``HOST:PORT``.
    """
    return parse_store_allowlist(os.environ.get(STORES_ENV, ""))


def refused(kind: StoreKind) -> str:
    """The one line for a store outside the allow-list: the same whether it exists, answers or not."""
    where = "server" if kind.server else "folder"
    return f"this server does not open {kind.name} stores at that {where}: its operator allows stores with ${STORES_ENV} (docs/stores.md)"


def check_allowed(uri: StoreURI, kind: StoreKind, allowed: StoreAllowlist) -> None:
    """Refuse a store the allow-list does not hold, before anything is opened or resolved on the network.

    A folder is allowed when its resolved path (links followed) is one of the allowed folders or inside one;
    a server when its host (as typed, lower-cased) and port are an allowed pair.

    Raises:
        StoreError: the store is not allowed (:func:`refused`, one line whatever is there).
    """
    if kind.server:
        if (uri.host.lower(), uri.port) not in allowed.servers:
            raise StoreError(refused(kind), shared=refused(kind))
        return
    folder = Path(os.path.realpath(os.path.expanduser(uri.location)))
    if not any(folder == root or root in folder.parents for root in allowed.folders):
        raise StoreError(refused(kind), shared=refused(kind))


def shared_message(exc: BaseException, kind: StoreKind, uri: StoreURI) -> str:
    """What a visitor of a shared app reads for a store error: its ``shared`` line, else one line for every failure.

    A folder that is not there, a server that refuses, times out or speaks another protocol, a table that is not
    there, a client that fails on a damaged folder: all read the same.
    """
    if isinstance(exc, StoreError) and exc.shared is not None:
        return exc.shared
    return (
        f"cannot read the {kind.name} {kind.collection_key} at {uri.display}: it is not there, cannot be reached or is not "
        f"a {kind.name} store this server can read"
    )


class SharedHandle:
    """A store handle whose every error is said as :func:`shared_message` says it (a shared app's visitor sees nothing more)."""

    def __init__(self, handle: StoreHandle, kind: StoreKind) -> None:
        self._handle, self._kind = handle, kind
        self.uri, self.exact, self.filters = handle.uri, handle.exact, handle.filters

    def _say(self, exc: BaseException) -> StoreError:
        said = shared_message(exc, self._kind, self.uri)
        return StoreError(said, shared=said)

    def __getattr__(self, name: str) -> Any:
        # Whatever else a reader offers (a count, a batched read) is wrapped the same way.
        found = getattr(self._handle, name)
        if not callable(found):
            return found

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return found(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - as read
                raise self._say(exc) from exc

        return wrapped

    def read(self) -> StoredCollection:
        try:
            return self._handle.read()
        except Exception as exc:  # noqa: BLE001 - each client raises its own kinds; a visitor reads one line that tells none apart
            raise self._say(exc) from exc

    def search_method(self) -> str:
        return self._handle.search_method()

    def search(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        try:
            return self._handle.search(vectors, k)
        except Exception as exc:  # noqa: BLE001 - as read
            raise self._say(exc) from exc

    def close(self) -> None:
        self._handle.close()
