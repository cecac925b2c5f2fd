"""Output files and folders a command will write, checked before any model runs.

A report that cannot be written must not cost the whole run first: every
``--out``, ``--csv``, ``--junit`` and ``--summary`` is tried here (the file
opened for writing without truncating it, or created and removed again), so
a read-only file, a read-only or full folder, a name the file system refuses
or a file where a folder is wanted is one ``error:`` line and exit 2 up front.

No output may land on a file the tool keeps: the run history (and its
write-ahead log) and the embedding cache are refused by every flag, whatever
path leads to them (``..``, a symbolic or hard link), since writing there
loses every stored run or cached vector.  A command that writes one kind of
file (``report``'s HTML) can also ask that an existing file be one it wrote
before, so it never replaces a Parquet export, a CSV or anything else.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
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


def output_file(path: str | None, flag: str, *, replaces: Callable[[Path], bool] | None = None, kind: str = "") -> Path | None:
    """The file a command will write, after proving it can be written; None when not asked for.

    Args:
        path: the file as the user gave it, or None.
        flag: the option that named it, for messages.
        replaces: when given, an existing file is overwritten only if this
            says it is one the command wrote before (``kind`` names it).
        kind: what ``replaces`` recognises, e.g. "a cosine-probe report".

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
        if out.exists() and replaces is not None and not replaces(out):
            raise CliError(f"{flag}: {out} exists and is not {kind}; writing there would replace it. Name another file, or delete it first")
        if out.exists():
            with open(out, "r+b"):  # opened for writing, left as it is until the run has something to say
                pass
        else:
            _create_and_remove(out)
    except OSError as exc:
        raise CliError(f"{flag}: cannot write {out} ({_reason(exc)})") from exc
    return out


def write_output(out: Path, text: str, flag: str) -> int:
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
    return len(data)


def output_folder(path: str | None, flag: str) -> Path | None:
    """A folder a command will write files into (made if missing), after proving it can be written.

    Raises:
        CliError: an existing file in its place, or a folder that cannot be made or written.
    """
    if path is None:
        return None
    out = Path(path).expanduser()
    try:
        if out.exists() and not out.is_dir():
            raise CliError(f"{flag}: {out} is a file, not a folder; give a folder name")
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
