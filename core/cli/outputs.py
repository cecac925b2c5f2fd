"""Output files and folders a command will write, checked before any model runs.

A report that cannot be written must not cost the whole run first: every
``--out``, ``--csv``, ``--junit`` and ``--summary`` is tried here (the file
opened for writing without truncating it, or created and removed again), so
a read-only file, a read-only or full folder, a name the file system refuses
or a file where a folder is wanted is one ``error:`` line and exit 2 up front.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from core.cli.common import CliError


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _create_and_remove(path: Path) -> None:
    """Prove a new file can be made at ``path``, leaving nothing behind."""
    with open(path, "xb"):
        pass
    path.unlink()


def output_file(path: str | None, flag: str) -> Path | None:
    """The file a command will write, after proving it can be written; None when not asked for.

    Raises:
        CliError: no such folder, a folder given, or the file cannot be opened for writing.
    """
    if path is None:
        return None
    out = Path(path).expanduser()
    try:
        if not out.parent.is_dir():
            raise CliError(f"{flag}: no folder {out.parent} to write {out.name} into")
        if out.is_dir():
            raise CliError(f"{flag}: {out} is a folder; give a file name")
        if out.exists():
            with open(out, "r+b"):  # opened for writing, left as it is until the run has something to say
                pass
        else:
            _create_and_remove(out)
    except OSError as exc:
        raise CliError(f"{flag}: cannot write {out} ({_reason(exc)})") from exc
    return out


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
            raise CliError(f"{flag}: another `{command}` ({holder}) is writing into {folder}; wait for it to finish or give another {flag}") from None
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
