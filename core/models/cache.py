"""Embedding cache: an in-process dict in front of a sqlite file.

Keys are ``(model key, sha256 of the text)``, where the model key carries the
model name, pinned revision and prompt (:attr:`ModelMeta.cache_key`), so a
new revision or prompt never serves stale vectors.  Like MTEB's cache
wrapper, callers ask for many texts at once and encode only the misses.

sqlite gives atomic, crash-safe writes (a process killed mid-write leaves the
last committed state) and safe access from several processes.  A file that
is not a readable database is moved aside and rebuilt with a warning; a
folder that cannot be written degrades the cache to memory only, also with a
warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.paths import cache_dir

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_key TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_key, text_hash)
) WITHOUT ROWID;
"""
_SQL_CHUNK = 500  # stay under sqlite's bound-parameter limit


class CacheWarning(UserWarning):
    """The disk cache was rebuilt or disabled."""


def text_hash(text: str) -> str:
    """sha256 hex digest of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class CacheStats:
    """Counters since the cache was created (or :meth:`reset`)."""

    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    writes: int = 0

    def reset(self) -> None:
        self.memory_hits = self.disk_hits = self.misses = self.writes = 0


class EmbeddingCache:
    """Two-layer vector cache, safe to share between threads.

    Args:
        path: sqlite file; ``None`` uses ``<cache dir>/embeddings.sqlite``;
            ``False`` keeps the cache in memory only.
    """

    def __init__(self, path: Path | str | None | bool = None) -> None:
        self._memory: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.RLock()
        self.stats = CacheStats()
        self.warning: str | None = None
        self._conn: sqlite3.Connection | None = None
        if path is False:
            self.path = None
            return
        self.path = Path(path) if path else cache_dir() / "embeddings.sqlite"
        self._open()

    # ------------------------------------------------------------ disk layer
    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
        except OSError as exc:
            self._disable(f"cannot use the embedding cache {self.path} ({exc}); caching in memory only")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        conn.execute("SELECT count(*) FROM embeddings LIMIT 1").fetchone()
        return conn

    def _recover(self, exc: BaseException) -> None:
        """Move a corrupt database aside and start a fresh one."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        try:
            for suffix in ("", "-wal", "-shm"):
                src = Path(f"{self.path}{suffix}")
                if src.exists():
                    src.replace(Path(f"{self.path}{suffix}.corrupt-{stamp}"))
            self._conn = self._connect()
            self._warn(f"embedding cache {self.path} was unreadable ({exc}); moved it aside and started a new one")
        except (OSError, sqlite3.Error) as exc2:
            self._disable(f"embedding cache {self.path} is unusable ({exc2}); caching in memory only")

    def _disable(self, message: str) -> None:
        self._conn = None
        self._warn(message)

    def _warn(self, message: str) -> None:
        self.warning = message
        warnings.warn(message, CacheWarning, stacklevel=3)

    @property
    def on_disk(self) -> bool:
        """True while the sqlite layer is in use."""
        return self._conn is not None

    def _disk_get(self, model_key: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if self._conn is None or not hashes:
            return {}
        found: dict[str, np.ndarray] = {}
        try:
            for start in range(0, len(hashes), _SQL_CHUNK):
                chunk = list(hashes[start : start + _SQL_CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT text_hash, dim, vector FROM embeddings WHERE model_key=? AND text_hash IN ({marks})",
                    [model_key, *chunk],
                ).fetchall()
                for h, dim, blob in rows:
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape == (dim,):
                        found[h] = vec
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
            return {}
        return found

    def _disk_put(self, model_key: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        if self._conn is None:
            return
        rows = [(model_key, h, int(v.shape[0]), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for h, v in items]
        try:
            # One transaction: a crash leaves either all rows or none.
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?,?,?,?)", rows)
            self._conn.execute("COMMIT")
            self.stats.writes += len(rows)
        except sqlite3.OperationalError as exc:
            self._rollback()
            if "readonly" in str(exc) or "disk" in str(exc):
                self._disable(f"cannot write the embedding cache {self.path} ({exc}); caching in memory only")
        except sqlite3.DatabaseError as exc:
            self._rollback()
            self._recover(exc)

    def _rollback(self) -> None:
        try:
            if self._conn is not None and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # ------------------------------------------------------------ public API
    def get_many(self, model_key: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors already cached for ``texts``, keyed by text; counts hits and misses."""
        with self._lock:
            hashes = {t: text_hash(t) for t in texts}
            out: dict[str, np.ndarray] = {}
            missing: list[str] = []
            for t, h in hashes.items():
                vec = self._memory.get((model_key, h))
                if vec is None:
                    missing.append(t)
                else:
                    out[t] = vec
            self.stats.memory_hits += len(out)
            disk = self._disk_get(model_key, [hashes[t] for t in missing])
            for t in missing:
                vec = disk.get(hashes[t])
                if vec is not None:
                    self._memory[(model_key, hashes[t])] = vec
                    out[t] = vec
                    self.stats.disk_hits += 1
                else:
                    self.stats.misses += 1
            return out

    def put_many(self, model_key: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, in memory and on disk."""
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        with self._lock:
            items = [(text_hash(t), np.asarray(v, dtype=np.float32)) for t, v in zip(texts, vectors, strict=True)]
            for h, v in items:
                self._memory[(model_key, h)] = v
            self._disk_put(model_key, items)

    def clear_memory(self) -> None:
        """Forget the in-process layer (the disk layer stays)."""
        with self._lock:
            self._memory.clear()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
