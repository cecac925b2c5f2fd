"""Unpacking an uploaded zip without trusting it: the one place a zip is opened.

A zip comes from whoever uploads it, so nothing it says is taken on faith:

* member names are plain relative paths: an absolute name, a drive letter, a
  ``..`` part or a backslash path is refused, and each file is written under
  the target folder by the parts we checked, never by the zip's own string;
* a symbolic link, an encrypted member or a compression method zipfile cannot
  read is refused, with the member named;
* the member count, the bytes unpacked (counted while writing, so a member
  whose declared size lies is caught too) and each member's compression ratio
  have limits (:class:`ZipLimits`);
* every error zipfile and zlib raise (bad CRC, a broken deflate stream, a
  truncated file) ends in one :class:`~core.files.errors.PairsFileError` line
  naming the upload.

Only the members ``pick`` chooses are unpacked; the others are never read.
"""

from __future__ import annotations

import io
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from core.files.errors import PairsFileError
from core.messages import first_line

# A member's bytes are copied this many at a time, so a lying size is caught before it fills the disk.
_CHUNK = 1 << 20
# Compression ratios are only judged on members larger than this (a tiny file compresses any way it likes).
_RATIO_FLOOR_BYTES = 1 << 20
_ZIP_FLAG_ENCRYPTED = 0x1


@dataclass(frozen=True)
class ZipLimits:
    """What an uploaded zip may hold.

    Attributes:
        max_members: entries in the zip (files and folders).
        max_bytes: bytes unpacked in all, counted as they are written.
        max_ratio: unpacked size over compressed size of one member (a zip bomb's is in the thousands).
    """

    max_members: int = 10_000
    max_bytes: int = 512 * 1024 * 1024
    max_ratio: float = 200.0


def _plain_parts(name: str) -> tuple[str, ...] | None:
    """The member name's parts when it is a plain relative path, else None."""
    if not name or "\\" in name or name.startswith("/") or "\0" in name:
        return None
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if not parts or any(p == ".." for p in parts) or ":" in parts[0]:
        return None
    return parts


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _member_problem(info: zipfile.ZipInfo, limits: ZipLimits) -> str | None:
    """Why a member we would unpack is refused, or None."""
    shown = info.filename[:120]
    if _is_symlink(info):
        return f"{shown!r} is a symbolic link; zip the files themselves"
    if info.flag_bits & _ZIP_FLAG_ENCRYPTED:
        return f"{shown!r} is encrypted; zip it without a password"
    if info.file_size > _RATIO_FLOOR_BYTES and info.file_size > limits.max_ratio * max(info.compress_size, 1):
        return (
            f"{shown!r} unpacks {info.file_size / max(info.compress_size, 1):,.0f} times larger than it is stored (the limit is "
            f"{limits.max_ratio:g})"
        )
    return None


Picker = Callable[[list[tuple[str, ...]]], dict[tuple[str, ...], tuple[str, ...]]]


def unpack_zip(data: bytes, name: str, into: str | Path, pick: Picker, limits: ZipLimits | None = None) -> list[tuple[str, ...]]:
    """Unpack the members ``pick`` chooses from an uploaded zip into ``into`` (module docstring).

    Args:
        data: the zip's bytes.
        name: the upload's name, for messages.
        into: an existing, empty folder the files go under.
        pick: given every file member's checked parts, maps the parts of each
            member to unpack to the parts it is written as under ``into``
            (e.g. with a top folder dropped); it may raise PairsFileError.
        limits: what the zip may hold (:class:`ZipLimits` by default).

    Returns:
        The parts written, in the zip's order.

    Raises:
        PairsFileError: not a zip, a member refused (unsafe name, symbolic link,
            encrypted), a limit passed, or a member that does not unpack; one
            line naming the upload.  Files written before the error stay in
            ``into`` for the caller to remove with the folder.
    """
    limits = limits or ZipLimits()
    target = Path(into)
    try:
        archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise PairsFileError(f"{name}: not a zip file ({first_line(exc, 120)})") from None
    with archive:
        members = archive.infolist()
        if len(members) > limits.max_members:
            raise PairsFileError(f"{name}: holds {len(members):,} entries, over the {limits.max_members:,} an upload may")
        files: dict[tuple[str, ...], zipfile.ZipInfo] = {}
        for info in members:
            parts = _plain_parts(info.filename)
            if parts is None:
                raise PairsFileError(
                    f"{name}: the entry {info.filename[:120]!r} is not a plain relative path (absolute, '..' or '\\'); "
                    "zip the folder itself"
                )
            if _is_symlink(info):  # refused wherever it sits: a link is never followed or written
                raise PairsFileError(f"{name}: {_member_problem(info, limits)}")
            if not info.is_dir():
                files.setdefault(parts, info)  # a repeated name: the first one counts, as zipfile reads it
        chosen = pick(list(files))
        plan: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
        for parts, dest in chosen.items():
            checked = _plain_parts("/".join(dest))
            if parts not in files or checked is None:
                raise ValueError(f"pick returned {parts!r} -> {dest!r}, not a member of the zip and a plain relative path")
            problem = _member_problem(files[parts], limits)
            if problem:
                raise PairsFileError(f"{name}: {problem}")
            plan.append((files[parts], checked))
        declared = sum(info.file_size for info, _ in plan)
        if declared > limits.max_bytes:
            raise PairsFileError(
                f"{name}: unpacks to {declared / 2**20:,.0f} MB, over the {limits.max_bytes / 2**20:,.0f} MB an upload may"
            )
        written = 0
        for info, dest in plan:
            written = _copy_member(archive, info, target.joinpath(*dest), name, written, limits.max_bytes)
    return [dest for _, dest in plan]


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, name: str, written: int, max_bytes: int) -> int:
    """Copy one member chunk by chunk, counting what is really unpacked; returns the running total."""
    shown = info.filename[:120]
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        # "xb": never through a file or link that is already there.
        with archive.open(info) as src, open(dest, "xb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise PairsFileError(
                        f"{name}: unpacks to more than the {max_bytes / 2**20:,.0f} MB an upload may ({shown!r} is larger than it says)"
                    )
                out.write(chunk)
    except PairsFileError:
        raise
    except RuntimeError as exc:  # zipfile's "File is encrypted, password required"
        raise PairsFileError(f"{name}: {shown!r} cannot be read ({first_line(exc, 120)})") from None
    except NotImplementedError as exc:
        raise PairsFileError(
            f"{name}: {shown!r} uses a compression this app cannot read ({first_line(exc, 120)}); zip it with deflate"
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise PairsFileError(f"{name}: {shown!r} is damaged ({first_line(exc, 120)}); zip the folder again") from None
    except OSError as exc:
        raise PairsFileError(f"{name}: {shown!r} could not be unpacked ({first_line(exc, 120)})") from None
    return written
