"""Each close pair's kind and differing words, kept on disk next to the embedding cache: a warm audit classifies nothing again.

Classifying a close pair (:func:`core.audit.kinds.pair_kind`: lemmas, tenses,
numbers) costs about 0.3 ms, so at 100,000 passages and 222,063 close pairs
it was a minute of a warm run.  A pair's kind depends only on its two texts
and on the rules, so each is stored under a hash of both texts and of the
rules' own source (:func:`rules_version`: every file of ``core/lexicon/``,
``core/audit/kinds.py``, ``core/words.py``, ``core/stats/overlap.py`` and the
lemmatiser's version): a change to any rule makes every stored kind unreachable
and the pairs are classified again.  A file that is not a database is replaced
by an empty one; any other sqlite error turns the store off for the run (the
audit then classifies every pair, as without it); it never fails an audit.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path

KIND_CACHE_FILE = "pair-kinds.sqlite"
_CORE = Path(__file__).resolve().parent.parent
_RULE_SOURCES = ("lexicon", "audit/kinds.py", "words.py", "stats/overlap.py")
_SQL_CHUNK = 500  # under sqlite's bound-parameter limit
_SCHEMA = "CREATE TABLE IF NOT EXISTS kinds (key BLOB PRIMARY KEY, kind TEXT, mode TEXT, modes TEXT, changed_a TEXT, changed_b TEXT)"
Kind = tuple[str, str, str, str, str]
"""(kind, mode, modes joined by ";", changed words of a, changed words of b)."""


@lru_cache(maxsize=1)
def rules_version() -> str:
    """A hash of everything that decides a pair's kind: the rules' source files and the lemmatiser's version."""
    digest = hashlib.sha256()
    for name in _RULE_SOURCES:
        path = _CORE / name
        for file in sorted(path.rglob("*") if path.is_dir() else [path]):
            if file.is_file() and "__pycache__" not in file.parts:
                digest.update(file.relative_to(_CORE).as_posix().encode() + b"\0" + file.read_bytes())
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(metadata.version("lemminflect").encode())
    return digest.hexdigest()


def pair_key(text_a: str, text_b: str) -> bytes:
    """The store's key of one ordered pair under the current rules."""
    joined = "\0".join((rules_version(), text_a, text_b))
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class KindCache:
    """Pair kinds on disk (one sqlite file); off for the run after any sqlite error.

    Args:
        path: the sqlite file (created with its folder when missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        try:
            self._open()
        except sqlite3.DatabaseError:
            # Not a database (a damaged file): only stored kinds are lost, so it is replaced by an empty one.
            self.close()
            with contextlib.suppress(OSError):
                for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                    stale.unlink(missing_ok=True)
                self._open()
        except (sqlite3.Error, OSError):
            self.close()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, Kind]:
        """The stored kinds of ``keys`` (those found)."""
        found: dict[bytes, Kind] = {}
        if self._conn is None:
            return found
        try:
            for start in range(0, len(keys), _SQL_CHUNK):
                chunk = list(keys[start : start + _SQL_CHUNK])
                rows = self._conn.execute(
                    f"SELECT key, kind, mode, modes, changed_a, changed_b FROM kinds WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                found.update((row[0], tuple(row[1:])) for row in rows)
        except sqlite3.Error:
            self.close()
            return {}
        return found

    def put_many(self, items: Iterable[tuple[bytes, Kind]]) -> None:
        """Store kinds, in one transaction."""
        if self._conn is None:
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany("INSERT OR REPLACE INTO kinds VALUES (?,?,?,?,?,?)", [(k, *v) for k, v in items])
            self._conn.execute("COMMIT")
        except sqlite3.Error:
            self.close()

    def close(self) -> None:
        """Close the file; the store stays off."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None
