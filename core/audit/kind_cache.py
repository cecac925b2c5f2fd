"""Each close pair's kind and differing words, kept on disk next to the embedding cache: a warm audit classifies nothing again.

Classifying a close pair (:func:`core.audit.kinds.pair_kind`: lemmas, tenses,
numbers) costs about 0.3 ms, so at 100,000 passages and 222,063 close pairs
it was a minute of a warm run.  A pair's kind depends only on its two texts
and on the rules, so each is stored under a hash of both texts and of the
rules' own source (:func:`rules_version`: every file of ``core/lexicon/``,
``core/audit/kinds.py``, ``core/words.py``, ``core/stats/overlap.py`` and the
lemmatiser's version): a change to any rule makes every stored kind unreachable
and the pairs are classified again (the antonym list the negation rule reads,
``data/lexicon/``, counts as a rule file).  A file that is not a database is replaced
by an empty one; any other sqlite error turns the store off for the run (the
audit then classifies every pair, as without it); it never fails an audit.

Nothing read back is trusted, as in the embedding cache
(:mod:`core.models.cache`): each row carries a blake2b checksum of its key
and its values, and a row whose checksum fails, whose kind is not one of
:data:`core.audit.kinds.KINDS`, or whose mode or modes are not failure modes
(or do not fit its kind: a twin has a mode among its modes, any other kind
none) is dropped and counted in one warning, so its pair is classified
again.  Like the embedding cache's, the checksum guards against damage and
stray edits, not against someone who rewrites rows and their checksums on
purpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import warnings
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from core import lexicon
from core.audit.kinds import KIND_TWIN, KINDS
from core.paths import DATA_DIR

KIND_CACHE_FILE = "pair-kinds.sqlite"
_CORE = Path(__file__).resolve().parent.parent
_RULE_SOURCES = ("lexicon", "audit/kinds.py", "words.py", "stats/overlap.py")
_RULE_DATA = (DATA_DIR / "lexicon",)
# Raised by hand when the meaning of a stored row changes without a rule file changing (a new kind, a new column).
_RULES_EPOCH = b"pair kinds 2: aligned edits, several differences, checked rows"
_SQL_CHUNK = 500  # under sqlite's bound-parameter limit
# A new table name with the checksum column: rows of the unchecked table before it are never read.
_TABLE = "pair_kinds"
_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} "
    "(key BLOB PRIMARY KEY, kind TEXT, mode TEXT, modes TEXT, changed_a TEXT, changed_b TEXT, checksum BLOB)"
)
_KNOWN_MODES = frozenset(lexicon.FAILURE_MODES)


_REASONS = {
    "type": "of the wrong type",
    "checksum": "failing the checksum",
    "kind": "of no known kind",
    "mode": "with a mode that is none or does not fit",
}


class KindCacheWarning(UserWarning):
    """Some stored pair kinds failed their check and were classified again."""


Kind = tuple[str, str, str, str, str]
"""(kind, mode, modes joined by ";", changed words of a, changed words of b)."""


@lru_cache(maxsize=1)
def rules_version() -> str:
    """A hash of everything that decides a pair's kind: the rules' source files and the lemmatiser's version."""
    digest = hashlib.sha256(_RULES_EPOCH)
    for path in (*(_CORE / name for name in _RULE_SOURCES), *_RULE_DATA):
        for file in sorted(path.rglob("*") if path.is_dir() else [path]):
            if file.is_file() and "__pycache__" not in file.parts:
                digest.update(file.name.encode() + b"\0" + file.read_bytes())
    with contextlib.suppress(metadata.PackageNotFoundError):
        digest.update(metadata.version("lemminflect").encode())
    return digest.hexdigest()


def pair_key(text_a: str, text_b: str) -> bytes:
    """The store's key of one ordered pair under the current rules."""
    joined = "\0".join((rules_version(), text_a, text_b))
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def row_checksum(key: bytes, value: Kind) -> bytes:
    """The blake2b checksum of one stored row: its key and its five values."""
    h = hashlib.blake2b(digest_size=16)
    h.update(key + b"\0" + "\0".join(value).encode("utf-8", "surrogatepass"))
    return h.digest()


def row_problem(key: object, value: tuple, checksum: object) -> str | None:
    """Why a stored row cannot be trusted ("checksum", "kind", "mode"), or None for a good row."""
    if not isinstance(key, bytes) or len(value) != 5 or not all(isinstance(v, str) for v in value):
        return "type"
    if not isinstance(checksum, bytes) or checksum != row_checksum(key, value):
        return "checksum"
    kind, mode, modes = value[0], value[1], [m for m in value[2].split(";") if m]
    if kind not in KINDS:
        return "kind"
    if kind == KIND_TWIN:
        fits = mode in _KNOWN_MODES and mode in modes and set(modes) <= _KNOWN_MODES and len(set(modes)) == len(modes)
    else:
        fits = mode == "" and not modes
    return None if fits else "mode"


class KindCache:
    """Pair kinds on disk (one sqlite file); off for the run after any sqlite error.

    Args:
        path: the sqlite file (created with its folder when missing).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warning: str | None = None
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
        bad: dict[str, int] = {}
        try:
            for start in range(0, len(keys), _SQL_CHUNK):
                chunk = list(keys[start : start + _SQL_CHUNK])
                rows = self._conn.execute(
                    f"SELECT key, kind, mode, modes, changed_a, changed_b, checksum FROM {_TABLE} "  # noqa: S608 - a constant name
                    f"WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for row in rows:
                    value = tuple(row[1:6])
                    problem = row_problem(row[0], value, row[6])
                    if problem is None:
                        found[row[0]] = value
                    else:
                        bad[problem] = bad.get(problem, 0) + 1
        except sqlite3.Error:
            self.close()
            return {}
        if bad:
            reasons = ", ".join(f"{n:,} {_REASONS[p]}" for p, n in sorted(bad.items()))
            self.warning = f"pair-kind store {self.path}: {sum(bad.values()):,} stored kinds were not trusted ({reasons}); classified again"
            warnings.warn(self.warning, KindCacheWarning, stacklevel=2)
        return found

    def put_many(self, items: Iterable[tuple[bytes, Kind]]) -> None:
        """Store kinds, in one transaction."""
        if self._conn is None:
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                f"INSERT OR REPLACE INTO {_TABLE} VALUES (?,?,?,?,?,?,?)", [(k, *v, row_checksum(k, v)) for k, v in items]
            )
            self._conn.execute("COMMIT")
        except sqlite3.Error:
            self.close()

    def close(self) -> None:
        """Close the file; the store stays off."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None
