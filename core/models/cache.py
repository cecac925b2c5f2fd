"""Embedding cache: an in-process dict in front of a sqlite file.

Keys are ``(model key, sha256 of the text)``, where the model key carries the
model name, a fingerprint of the weights it was loaded from and the prompt
(:attr:`LoadedModel.cache_key`), so changed weights or a new prompt never
serve stale vectors.  Like MTEB's cache wrapper, callers ask for many texts
at once and encode only the misses.

Nothing read back from disk is trusted: each row carries a blake2b checksum
of its key and bytes, and a row whose length, dimension (the model's, as the
caller states it), checksum, finiteness or norm is wrong is dropped and
counted in one warning, so the caller encodes those texts again.  The
checksum is what catches a row overwritten with a different unit vector of
the right size: no check on the row alone can tell such a vector is wrong.
It guards against damage and stray writes, not against someone who rewrites
rows and recomputes their checksums on purpose.

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
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.constants import EMBEDDING_CACHE_FILE
from core.paths import cache_dir
from core.stats.similarity import UNIT_NORM_TOLERANCE

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_key TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    checksum BLOB,
    PRIMARY KEY (model_key, text_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS model_fingerprints (
    model TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL
) WITHOUT ROWID;
"""
_SQL_CHUNK = 500  # stay under sqlite's bound-parameter limit
# Stored vectors are L2-normalised float32; float32 rounding keeps |norm - 1| near 1e-7.
NORM_TOLERANCE = UNIT_NORM_TOLERANCE
_FLOAT_BYTES = 4


class CacheWarning(UserWarning):
    """The disk cache was rebuilt or disabled, or some of its rows were damaged."""


_REASONS = {
    "length": "of the wrong length",
    "dimension": "of the wrong dimension",
    "checksum": "failing the checksum",
    "non-finite": "with NaN or infinite values",
    "norm": "not of unit length",
}


def _add_checksum_column(conn: sqlite3.Connection) -> None:
    """Give a cache file from before row checksums its column; its old rows then fail the check once."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(embeddings)")}
    if "checksum" not in columns:
        try:
            conn.execute("ALTER TABLE embeddings ADD COLUMN checksum BLOB")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):  # another process added it first
                raise


def text_hash(text: str) -> str:
    """sha256 hex digest of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def row_checksum(model_key: str, text_digest: str, vector: bytes) -> bytes:
    """blake2b-128 of a row's key and vector bytes: a row moved to another key or text fails it too."""
    h = hashlib.blake2b(digest_size=16)
    h.update(model_key.encode("utf-8", "surrogatepass") + b"\0" + text_digest.encode("ascii", "replace") + b"\0")
    h.update(vector)
    return h.digest()


def row_problem(
    model_key: str, text_digest: str, dim: object, blob: object, checksum: object, *, dimension: int | None = None, unit_norm: bool = False
) -> str | None:
    """Why a stored row cannot be served, or None when it passes every check.

    Args:
        model_key, text_digest: the row's key.
        dim: its ``dim`` column; blob: its vector bytes; checksum: its checksum.
        dimension: the model's embedding size; None checks the row against
            its own ``dim`` column only.
        unit_norm: the vectors are L2-normalised (within :data:`NORM_TOLERANCE`).

    Returns:
        ``length``, ``dimension``, ``checksum``, ``non-finite``, ``norm`` or None.
    """
    if not isinstance(blob, bytes) or not isinstance(dim, int) or len(blob) != dim * _FLOAT_BYTES or dim <= 0:
        return "length"
    if dimension is not None and dim != dimension:
        return "dimension"
    if not isinstance(checksum, bytes) or checksum != row_checksum(model_key, text_digest, blob):
        return "checksum"
    vector = np.frombuffer(blob, dtype=np.float32)
    if not np.isfinite(vector).all():
        return "non-finite"
    if unit_norm and abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) > NORM_TOLERANCE:
        return "norm"
    return None


@dataclass
class CacheStats:
    """Counters since the cache was created (or :meth:`reset`)."""

    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    writes: int = 0
    damaged: int = 0

    def reset(self) -> None:
        self.memory_hits = self.disk_hits = self.misses = self.writes = self.damaged = 0


class EmbeddingCache:
    """Two-layer vector cache, safe to share between threads.

    Args:
        path: sqlite file; ``None`` uses ``<cache dir>/embeddings.sqlite``;
            ``False`` keeps the cache in memory only.
    """

    def __init__(self, path: Path | str | None | bool = None) -> None:
        self._memory: dict[tuple[str, str], np.ndarray] = {}
        self._fingerprints: dict[str, str] = {}
        self._lock = threading.RLock()
        self.stats = CacheStats()
        self.warning: str | None = None
        self._conn: sqlite3.Connection | None = None
        self.path: Path | None = None
        if path is False:
            return
        self.path = Path(path) if isinstance(path, (str, Path)) and path else cache_dir() / EMBEDDING_CACHE_FILE
        self._open()

    # ------------------------------------------------------------ disk layer
    def _open(self) -> None:
        assert self.path is not None, "the disk layer needs a path"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
        except OSError as exc:
            self._disable(f"cannot use the embedding cache {self.path} ({exc}); caching in memory only")

    def _connect(self) -> sqlite3.Connection:
        assert self.path is not None, "the disk layer needs a path"
        conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(_SCHEMA)
        _add_checksum_column(conn)
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

    def _disk_get(self, model_key: str, hashes: Sequence[str], dimension: int | None, unit_norm: bool) -> dict[str, np.ndarray]:
        if self._conn is None or not hashes:
            return {}
        found: dict[str, np.ndarray] = {}
        damaged: dict[str, str] = {}
        try:
            for start in range(0, len(hashes), _SQL_CHUNK):
                chunk = list(hashes[start : start + _SQL_CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT text_hash, dim, vector, checksum FROM embeddings WHERE model_key=? AND text_hash IN ({marks})",
                    [model_key, *chunk],
                ).fetchall()
                for h, dim, blob, checksum in rows:
                    problem = row_problem(model_key, h, dim, blob, checksum, dimension=dimension, unit_norm=unit_norm)
                    if problem is None:
                        found[h] = np.frombuffer(blob, dtype=np.float32)
                    else:
                        damaged[h] = problem
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
            return {}
        if damaged:
            self._drop_damaged(model_key, damaged)
        return found

    def _drop_damaged(self, model_key: str, damaged: dict[str, str]) -> None:
        """Delete rows that failed their checks and say so once, counting them by reason."""
        self.stats.damaged += len(damaged)
        counts = Counter(damaged.values())
        reasons = ", ".join(f"{n} {_REASONS[r]}" for r, n in sorted(counts.items()))
        conn, hashes = self._conn, list(damaged)
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                for start in range(0, len(hashes), _SQL_CHUNK):
                    chunk = hashes[start : start + _SQL_CHUNK]
                    conn.execute(
                        f"DELETE FROM embeddings WHERE model_key=? AND text_hash IN ({','.join('?' * len(chunk))})", [model_key, *chunk]
                    )
        self._warn(
            f"embedding cache {self.path}: {len(damaged)} stored vector(s) of {model_key.split('@')[0]} failed their checks "
            f"({reasons}); dropped them, and their texts are encoded again"
        )

    def _disk_put(self, model_key: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        if self._conn is None:
            return
        rows = []
        for h, v in items:
            blob = np.ascontiguousarray(v, dtype=np.float32).tobytes()
            rows.append((model_key, h, int(v.shape[0]), blob, row_checksum(model_key, h, blob)))
        try:
            # One transaction: a crash leaves either all rows or none.
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model_key, text_hash, dim, vector, checksum) VALUES (?,?,?,?,?)", rows
            )
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
    def get_many(
        self, model_key: str, texts: Sequence[str], *, dimension: int | None = None, unit_norm: bool = False
    ) -> dict[str, np.ndarray]:
        """Vectors already cached for ``texts``, keyed by text; counts hits and misses.

        Rows read from disk are checked (:func:`row_problem`); a row that
        fails is deleted, counted in ``stats.damaged`` and in one
        :class:`CacheWarning` per call, and reported as a miss.

        Args:
            model_key: the model's cache key.
            texts: texts to look up.
            dimension: the model's embedding size: rows of any other size fail.
            unit_norm: rows must be L2-normalised.

        Returns:
            text -> (dimension,) float32 vector, for the texts found intact.
        """
        if dimension is not None and dimension <= 0:
            raise ValueError(f"dimension must be positive, got {dimension}")
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
            disk = self._disk_get(model_key, [hashes[t] for t in missing], dimension, unit_norm)
            for t in missing:
                vec = disk.get(hashes[t])
                if vec is not None:
                    self._memory[(model_key, hashes[t])] = vec
                    out[t] = vec
                    self.stats.disk_hits += 1
                else:
                    self.stats.misses += 1
            return out

    def count_cached(self, model_key: str, texts: Sequence[str]) -> int:
        """How many distinct ``texts`` have a row under ``model_key`` (memory or disk), without reading a vector.

        For estimates before a run: the rows are not checked (a damaged one
        counts here and is encoded again by the run) and the hit and miss
        counters are left alone.
        """
        with self._lock:
            hashes = list(dict.fromkeys(text_hash(t) for t in texts))
            missing = [h for h in hashes if (model_key, h) not in self._memory]
            found = len(hashes) - len(missing)
            if self._conn is None or not missing:
                return found
            try:
                for start in range(0, len(missing), _SQL_CHUNK):
                    chunk = missing[start : start + _SQL_CHUNK]
                    row = self._conn.execute(
                        f"SELECT count(*) FROM embeddings WHERE model_key=? AND text_hash IN ({','.join('?' * len(chunk))})",
                        [model_key, *chunk],
                    ).fetchone()
                    found += int(row[0])
            except sqlite3.DatabaseError:
                pass  # an estimate only: the run itself recovers the file
            return found

    def put_many(self, model_key: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text, in memory and on disk.

        A vector with a NaN or infinite entry, or all zeros, is not stored: it
        could never be served (a zero vector has no direction), and the text
        is better encoded again.
        """
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        with self._lock:
            items = [(text_hash(t), np.asarray(v, dtype=np.float32)) for t, v in zip(texts, vectors, strict=True)]
            items = [(h, v) for h, v in items if v.ndim == 1 and np.isfinite(v).all() and v.any()]
            for h, v in items:
                self._memory[(model_key, h)] = v
            self._disk_put(model_key, items)

    def record_fingerprint(self, model: str, fingerprint: str) -> str | None:
        """Remember which weights ``model`` had; return the previous fingerprint when it differs.

        Args:
            model: the model's name and prompt, without a fingerprint.
            fingerprint: what identifies its weights now.

        Returns:
            The fingerprint recorded before (in this process or in the
            sqlite file) when it is not ``fingerprint``, else None.
        """
        if not model or not fingerprint:
            raise ValueError("model and fingerprint must be non-empty")
        with self._lock:
            previous = self._fingerprints.get(model)
            if previous is None and self._conn is not None:
                try:
                    row = self._conn.execute("SELECT fingerprint FROM model_fingerprints WHERE model=?", (model,)).fetchone()
                except sqlite3.DatabaseError:
                    row = None
                previous = row[0] if row else None
            self._fingerprints[model] = fingerprint
            if previous != fingerprint and self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("INSERT OR REPLACE INTO model_fingerprints VALUES (?, ?)", (model, fingerprint))
            return previous if previous not in (None, fingerprint) else None

    @property
    def memory_vectors(self) -> int:
        """How many vectors the in-process layer holds."""
        return len(self._memory)

    def clear_memory(self) -> None:
        """Forget the in-process layer (the disk layer stays)."""
        with self._lock:
            self._memory.clear()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
