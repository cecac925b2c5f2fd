"""Output files and folders a command will write, checked before any model runs.

A report that cannot be written must not cost the whole run first: every
``--out``, ``--csv``, ``--junit`` and ``--summary`` is tried here (the file
opened for writing without truncating it, or created and removed again), so
a read-only file, a read-only or full folder, a name the file system refuses
or a file where a folder is wanted is one ``error:`` line and exit 2 up front.

No output may land on a file the tool keeps: the run history (and its
write-ahead log) and the embedding cache are refused by every flag, whatever
path leads to them (``..``, a symbolic or hard link), since writing there
loses every stored run or cached vector.

One rule for every existing file an output would replace: a command
replaces only a file that the same command wrote and nobody changed since.
Each file a command writes is remembered by its path, the command and its
SHA-256 in the cache folder (:func:`remember_written`); any other existing
file is refused up front, naming it, so a CSV, a Parquet export or a note of
the user's is never lost, and ``report`` never replaces ``history export``'s
Parquet.  ``report`` also recognises its own HTML by its marker (reports
written before this record existed).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from core import constants
from core.cli.common import CliError
from core.paths import cache_dir, same_file


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _create_and_remove(path: Path) -> None:
    """Prove a new file can be made at ``path``, leaving nothing behind."""
    with open(path, "xb"):
        pass
    path.unlink()


def kept_file(path: Path) -> str | None:
    """Which file the tool keeps ``path`` names (the run history, the embedding cache), in words; None for any other file."""
    from core.history.store import history_files, history_path

    folder = cache_dir()
    histories = {folder / constants.HISTORY_FILE, *filter(None, [history_path()])}
    kept = [(f, "the run history itself; writing there would destroy every stored run") for h in histories for f in history_files(h)]
    cache = folder / constants.EMBEDDING_CACHE_FILE
    kept += [
        (cache.with_name(cache.name + end), "the embedding cache itself; writing there would destroy every cached vector")
        for end in ("", "-wal", "-shm", "-journal")
    ]
    return next((what for file, what in kept if same_file(path, file)), None)


_LEDGER_FILE = "outputs-written.sqlite"


def _ledger() -> Path:
    return cache_dir() / _LEDGER_FILE


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _key(path: Path) -> str:
    return str(path.resolve())


def remember_written(by: str, *paths: Path) -> None:
    """Record that command ``by`` wrote ``paths`` as they are now, so a later run of it may replace them (and only them).

    A ledger that cannot be written leaves the files unremembered: a later run then refuses to replace
    them and says so, which loses nothing.
    """
    with contextlib.suppress(OSError, sqlite3.Error):
        rows = [(_key(p), by, _digest(p)) for p in paths if p.is_file()]
        _ledger().parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(_ledger(), timeout=10)) as con, con:
            con.execute("CREATE TABLE IF NOT EXISTS written (path TEXT PRIMARY KEY, command TEXT NOT NULL, sha256 TEXT NOT NULL)")
            con.executemany("INSERT OR REPLACE INTO written VALUES (?, ?, ?)", rows)


def wrote_it(by: str, path: Path) -> bool:
    """Whether command ``by`` wrote the file at ``path`` and nobody changed it since (False when the ledger cannot be read)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{_ledger()}?mode=ro", uri=True, timeout=10)) as con:
            row = con.execute("SELECT command, sha256 FROM written WHERE path = ?", [_key(path)]).fetchone()
        return row is not None and row[0] == by and row[1] == _digest(path)
    except (OSError, sqlite3.Error):
        return False


def _refuse_unless_ours(path: Path, flag: str, by: str, replaces: Callable[[Path], bool] | None = None, kind: str = "") -> None:
    if path.is_file() and not wrote_it(by, path) and not (replaces is not None and replaces(path)):
        what = kind or f"a file `cosine-probe {by}` wrote (or it was changed since)"
        raise CliError(f"{flag}: {path} exists and is not {what}; writing there would replace it. Name another file, or delete it first")


def output_file(path: str | None, flag: str, by: str, *, replaces: Callable[[Path], bool] | None = None, kind: str = "") -> Path | None:
    """The file a command will write, after proving it can be written; None when not asked for.

    Args:
        path: the file as the user gave it, or None.
        flag: the option that named it, for messages.
        by: the command that writes it (the ledger's key with the path).
        replaces: recognises a file the command wrote before the ledger of written files
            existed (``report``'s marker); an existing file is replaced only when the ledger
            (:func:`wrote_it`) or this says it is the tool's own.
        kind: what ``replaces`` recognises, e.g. "a cosine-probe report", for the message.

    Raises:
        CliError: no such folder, a folder given, one of the tool's own files
            (:func:`kept_file`), an existing file ``replaces`` refuses, or the
            file cannot be opened for writing.
    """
    if path is None:
        return None
    out = Path(path).expanduser()
    try:
        if not out.parent.is_dir():
            raise CliError(f"{flag}: no folder {out.parent} to write {out.name} into")
        if out.is_dir():
            raise CliError(f"{flag}: {out} is a folder; give a file name")
        kept = kept_file(out)
        if kept is not None:
            raise CliError(f"{flag}: {out} is {kept}. Name another file")
        _refuse_unless_ours(out, flag, by, replaces, kind)
        if out.exists():
            with open(out, "r+b"):  # opened for writing, left as it is until the run has something to say
                pass
        else:
            _create_and_remove(out)
    except OSError as exc:
        raise CliError(f"{flag}: cannot write {out} ({_reason(exc)})") from exc
    return out


def write_output(out: Path, text: str, flag: str, by: str) -> int:
    """Write ``text`` to ``out`` (checked by :func:`output_file`) whole or not at all; the bytes written.

    The text goes to a file beside the target and is renamed over it, so a
    full disk or a failed write leaves an earlier file as it was; a symbolic
    link is followed (its target is replaced, the link kept).

    Raises:
        CliError: the write failed (one line naming the file and the reason).
    """
    target = out.resolve() if out.is_symlink() else out
    # A short name of its own (not the target's name plus a suffix, which a 250-byte name would push past the limit).
    staged = target.with_name(f".cosine-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}.part")
    data = text.encode("utf-8")
    try:
        staged.write_bytes(data)
        os.replace(staged, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            staged.unlink()
        raise CliError(f"{flag}: cannot write {out} ({_reason(exc)})") from exc
    remember_written(by, target)
    return len(data)


def output_folder(path: str | None, flag: str, by: str, writes: Iterable[str] = ()) -> Path | None:
    """A folder a command will write files into (made if missing), after proving it can be written.

    Args:
        path: the folder as the user gave it, or None.
        flag: the option that named it, for messages.
        by: the command that writes there.
        writes: the names (or glob patterns, for tables named at run time) of the files the command
            writes there; an existing one that is not the tool's own (:func:`wrote_it`) is refused.

    Raises:
        CliError: an existing file in its place, a file the command would replace that is not its
            own, or a folder that cannot be made or written.
    """
    if path is None:
        return None
    out = Path(path).expanduser()
    try:
        if out.exists() and not out.is_dir():
            raise CliError(f"{flag}: {out} is a file, not a folder; give a folder name")
        if out.is_dir():
            patterns = list(writes)
            for existing in sorted(out.iterdir()):
                if any(fnmatch.fnmatchcase(existing.name, p) for p in patterns):
                    _refuse_unless_ours(existing, flag, by)
        out.mkdir(parents=True, exist_ok=True)
        _create_and_remove(out / f".cosine-probe-write-test-{os.getpid()}")
    except OSError as exc:
        raise CliError(f"{flag}: cannot write into {out} ({_reason(exc)})") from exc
    return out


@contextlib.contextmanager
def exclusive_folder(folder: Path, flag: str, command: str) -> Iterator[None]:
    """Hold ``folder`` for one command at a time: a second one into the same folder is refused at once.

    Two runs into one folder would overwrite each other's results (and used
    to delete each other's staging files); the second is told which process
    holds the folder.  Where the OS has no ``fcntl`` the lock is skipped and
    only the per-run staging names keep the runs apart.

    Raises:
        CliError: another process holds the folder.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    lock_path = folder / ".cosine-probe.lock"
    try:
        handle = open(lock_path, "a+")  # noqa: SIM115 - held for the whole block below
    except OSError as exc:
        raise CliError(f"{flag}: cannot write into {folder} ({_reason(exc)})") from exc
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise CliError(
                f"{flag}: another `{command}` ({holder}) is writing into {folder}; wait for it to finish or give another {flag}"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)
