"""Unpacking an uploaded zip: hostile and damaged zips end in one line naming the upload; nothing lands outside the folder."""

from __future__ import annotations

import zipfile

import pytest
from zip_support import BEIR, MALFORMED, QRELS, make_zip

from core.files.archive import ZipLimits, unpack_zip
from core.files.beir import beir_from_zip, check_split, read_beir, unpack_beir_zip
from core.files.errors import PairsFileError


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
    data = make_zip(BEIR, prefix=prefix, extra=[(zipfile.ZipInfo(f"__MACOSX/{prefix}._corpus.jsonl"), b"\0\5")])
    into = tmp_path / "into"
    assert unpack_beir_zip(data, "up.zip", into) == ["test"]
    assert sorted(p.relative_to(into).as_posix() for p in into.rglob("*") if p.is_file()) == [
        "corpus.jsonl",
        "qrels/test.tsv",
        "queries.jsonl",
    ]
    assert read_beir(into).queries == {"q1": "first"}


def test_limits_on_entries_bytes_and_compression_ratio(tmp_path):
    def everything(files):
        return {p: p for p in files}

    with pytest.raises(PairsFileError, match="holds 3 entries, over the 2"):
        unpack_zip(make_zip(BEIR), "up.zip", tmp_path / "a", everything, ZipLimits(max_members=2))
    with pytest.raises(PairsFileError, match="unpacks to 0 MB, over the 0 MB"):
        unpack_zip(make_zip(BEIR), "up.zip", tmp_path / "b", everything, ZipLimits(max_bytes=10))
    bomb = make_zip({"corpus.jsonl": bytes(4 << 20)}, zipfile.ZIP_DEFLATED)
    with pytest.raises(PairsFileError, match="times larger than it is stored"):
        unpack_zip(bomb, "up.zip", tmp_path / "c", everything)


def test_a_split_is_a_plain_name_never_a_path(tmp_path):
    into = tmp_path / "into"
    unpack_beir_zip(make_zip(BEIR), "up.zip", into)
    (tmp_path / "x.tsv").write_bytes(QRELS)
    for split in ("/etc/hostname", "../x", "qrels/../../x", "..", ".hidden", "a\\b", ""):
        with pytest.raises(PairsFileError, match="not a path"):
            check_split(split)
        with pytest.raises(PairsFileError, match="not a path"):
            read_beir(into, split)
        with pytest.raises(PairsFileError, match="not a path"):
            beir_from_zip(make_zip(BEIR), "up.zip", tmp_path / f"z{abs(hash(split))}", split)
    assert check_split("test") == "test" and check_split("dev-2024.v1") == "dev-2024.v1"


def test_the_cli_refuses_a_split_that_is_a_path_in_one_line(cli, tmp_path):
    into = tmp_path / "beir"
    unpack_beir_zip(make_zip(BEIR), "up.zip", into)
    (tmp_path / "outside.tsv").write_bytes(b"password\tapikey\tnote\nx\ty\tz\n")
    for split in (str(tmp_path / "outside"), "../../outside"):
        code, out, err = cli("retrieval", "--beir", str(into), "--split", split, "--models", "sentence-transformers/all-MiniLM-L6-v2")
        assert code == 2 and err.startswith("error: ") and "not a path" in err and len(err.strip().splitlines()) == 1
        assert "password" not in out + err
