"""Zips for the upload tests: a small BEIR folder, and every malformed or hostile zip the page must refuse in one line.

Nothing here is collected as a test (the file name does not start with ``test_``).
"""

from __future__ import annotations

import io
import zipfile

CORPUS = b'{"_id": "d1", "title": "", "text": "alpha"}\n{"_id": "d2", "title": "", "text": "beta"}\n'
QUERIES = b'{"_id": "q1", "text": "first"}\n'
QRELS = b"query-id\tcorpus-id\tscore\nq1\td1\t1\n"
BEIR = {"corpus.jsonl": CORPUS, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS}


def make_zip(
    members: dict[str, bytes], method: int = zipfile.ZIP_STORED, prefix: str = "", extra: list[tuple[zipfile.ZipInfo, bytes]] | None = None
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(prefix + name, data)
        for info, data in extra or []:
            zf.writestr(info, data)
    return out.getvalue()


def _link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o120777 << 16  # S_IFLNK: what `zip -y` stores for a symbolic link
    return info, target.encode()


def _encrypted() -> bytes:
    """qrels/test.tsv flagged as encrypted (general purpose bit 0) in its local and central headers, as `zip -e` writes it."""
    data = bytearray(make_zip(BEIR))
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
    return _patched(make_zip(BEIR), b"alpha", b"alphz")


def _bad_deflate() -> bytes:
    payload = b"".join(b'{"_id": "d%d", "text": "passage %d"}\n' % (i, i * 7919) for i in range(2000))
    data = bytearray(make_zip({**BEIR, "corpus.jsonl": payload}, zipfile.ZIP_DEFLATED))
    start = data.index(b"corpus.jsonl") + len("corpus.jsonl") + 40  # inside the deflate stream, past its header
    data[start : start + 64] = bytes(64)
    return bytes(data)


def _size_lies() -> bytes:
    """corpus.jsonl's central-directory entry says 5 bytes: zipfile stops there and the CRC no longer matches."""
    data = bytearray(make_zip(BEIR))
    central = data.index(b"PK\x01\x02")  # corpus.jsonl is the first entry
    data[central + 24 : central + 28] = (5).to_bytes(4, "little")
    return bytes(data)


def _truncated() -> bytes:
    return make_zip(BEIR)[:-30]


MALFORMED = {
    "a symbolic link": (lambda: make_zip(BEIR, extra=[_link("qrels/dev.tsv", "/etc/hostname")]), "symbolic link"),
    "an encrypted member": (_encrypted, "encrypted"),
    "a bad CRC": (_bad_crc, "damaged"),
    "a bad deflate stream": (_bad_deflate, "damaged"),
    "a size that lies": (_size_lies, "damaged"),
    "an absolute member": (lambda: make_zip({**BEIR, "/etc/cron.d/x": b"x"}), "not a plain relative path"),
    "a '..' member": (lambda: make_zip({**BEIR, "qrels/../../x.tsv": b"x"}), "not a plain relative path"),
    "a backslash member": (lambda: make_zip({**BEIR, "..\\..\\x.tsv": b"x"}), "not a plain relative path"),
    "a truncated zip": (_truncated, "not a zip file"),
    "two folders side by side": (
        lambda: make_zip({**{f"a/{k}": v for k, v in BEIR.items()}, **{f"b/{k}": v for k, v in BEIR.items()}}),
        "2 BEIR folders",
    ),
    "no queries": (lambda: make_zip({"corpus.jsonl": CORPUS, "qrels/test.tsv": QRELS}), "no queries.jsonl"),
}
