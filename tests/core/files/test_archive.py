"""Unpacking an uploaded zip (issue 38): hostile and damaged zips end in one line naming the upload; nothing lands outside the folder."""

from __future__ import annotations

import io
import zipfile

import pytest

from core.files.archive import ZipLimits, unpack_zip
from core.files.beir import beir_from_zip, check_split, read_beir, unpack_beir_zip
from core.files.errors import PairsFileError

CORPUS = b'{"_id": "d1", "title": "", "text": "alpha"}\n{"_id": "d2", "title": "", "text": "beta"}\n'
QUERIES = b'{"_id": "q1", "text": "first"}\n'
QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"
BEIR = {"corpus.jsonl": CORPUS, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS}


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED, prefix: str = "", extra: list[zipfile.ZipInfo] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(prefix + name, data)
        for info, data in extra or []:
            zf.writestr(info, data)
    return out.getvalue()


def _link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o120777 << 16)  # S_IFLNK: what `zip -y` stores for a symbolic link
    return info, target.encode()


def _encrypted() -> bytes:
    """qrels/test.tsv flagged as encrypted (general purpose bit 0) in its local and central headers, as `zip -e` writes it."""
    data = bytearray(_zip(BEIR))
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = -1
        while (at := data.find(signature, at + 1)) >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at : name_at + len("qrels/test.tsv")] == b"qrels/test.tsv":
                data[at + flag_at] |= 0x1
    return bytes(data)


def _patched(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1
    return data.replace(old, new)


def _bad_crc() -> bytes:
    return _patched(_zip(BEIR), b"alpha", b"alphz")


def _bad_deflate() -> bytes:
    payload = b"".join(b'{"_id": "d%d", "text": "passage %d"}\n' % (i, i * 7919) for i in range(2000))
    data = bytearray(_zip({**BEIR, "corpus.jsonl": payload}, zipfile.ZIP_DEFLATED))
    start = data.index(b"corpus.jsonl") + len("corpus.jsonl") + 40  # inside the deflate stream, past its header
    data[start : start + 64] = bytes(64)
    return bytes(data)


def _size_lies() -> bytes:
    """corpus.jsonl's central-directory entry says 5 bytes: zipfile stops there and the CRC no longer matches."""
    data = bytearray(_zip(BEIR))
    central = data.index(b"PK\x01\x02")  # corpus.jsonl is the first entry
    data[central + 24 : central + 28] = (5).to_bytes(4, "little")
    return bytes(data)


def _truncated() -> bytes:
    return _zip(BEIR)[:-30]


MALFORMED = {
    "a symbolic link": (lambda: _zip(BEIR, extra=[_link("qrels/dev.tsv", "/etc/hostname")]), "symbolic link"),
    "an encrypted member": (_encrypted, "encrypted"),
    "a bad CRC": (_bad_crc, "damaged"),
    "a bad deflate stream": (_bad_deflate, "damaged"),
    "a size that lies": (_size_lies, "damaged"),
    "an absolute member": (lambda: _zip({**BEIR, "/etc/cron.d/x": b"x"}), "not a plain relative path"),
    "a '..' member": (lambda: _zip({**BEIR, "qrels/../../x.tsv": b"x"}), "not a plain relative path"),
    "a backslash member": (lambda: _zip({**BEIR, "..\\..\\x.tsv": b"x"}), "not a plain relative path"),
    "a truncated zip": (_truncated, "not a zip file"),
    "two folders side by side": (lambda: _zip({**{f"a/{k}": v for k, v in BEIR.items()}, **{f"b/{k}": v for k, v in BEIR.items()}}), "2 BEIR folders"),
    "no queries": (lambda: _zip({"corpus.jsonl": CORPUS, "qrels/test.tsv": QRELS}), "no queries.jsonl"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_zip_is_one_line_naming_the_upload_and_nothing_escapes(case, tmp_path):
    make, problem = MALFORMED[case]
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(PairsFileError) as raised:
        unpack_beir_zip(make(), "up.zip", into)
    message = str(raised.value)
    assert message.startswith("up.zip: ") and problem in message and "\n" not in message, message
    assert not any(p.is_symlink() for p in into.rglob("*"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["into"]


@pytest.mark.parametrize("prefix", ["", "scifact/", "export/scifact/"])
def test_the_beir_folder_is_found_at_the_top_or_inside_folders(prefix, tmp_path):
    # A macOS zip adds __MACOSX/ copies beside the folder: passed over.
    data = _zip(BEIR, prefix=prefix, extra=[(zipfile.ZipInfo(f"__MACOSX/{prefix}._corpus.jsonl"), b"\0\5")])
    into = tmp_path / "into"
    assert unpack_beir_zip(data, "up.zip", into) == ["test"]
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file()) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]
    assert read_beir(into).queries == {"q1": "first"}


def test_limits_on_entries_bytes_and_compression_ratio(tmp_path):
    def everything(files):
        return {p: p for p in files}

    with pytest.raises(PairsFileError, match="holds 3 entries, over the 2"):
        unpack_zip(_zip(BEIR), "up.zip", tmp_path / "a", everything, ZipLimits(max_members=2))
    with pytest.raises(PairsFileError, match="unpacks to 0 MB, over the 0 MB"):
        unpack_zip(_zip(BEIR), "up.zip", tmp_path / "b", everything, ZipLimits(max_bytes=10))
    bomb = _zip({"corpus.jsonl": bytes(4 << 20)}, zipfile.ZIP_DEFLATED)
    with pytest.raises(PairsFileError, match="times larger than it is stored"):
        unpack_zip(bomb, "up.zip", tmp_path / "c", everything)


def test_a_split_is_a_plain_name_never_a_path(tmp_path):
    into = tmp_path / "into"
    unpack_beir_zip(_zip(BEIR), "up.zip", into)
    (tmp_path / "x.tsv").write_bytes(QRELS)
    for split in ("/etc/hostname", "../x", "qrels/../../x", "..", ".hidden", "a\\b", ""):
        with pytest.raises(PairsFileError, match="not a path"):
            check_split(split)
        with pytest.raises(PairsFileError, match="not a path"):
            read_beir(into, split)
        with pytest.raises(PairsFileError, match="not a path"):
            beir_from_zip(_zip(BEIR), "up.zip", tmp_path / f"z{abs(hash(split))}", split)
    assert check_split("test") == "test" and check_split("dev-2024.v1") == "dev-2024.v1"
