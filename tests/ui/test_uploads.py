"""ui/uploads.py: the one upload helper (Your data, Your corpus, Retrieval, Tune) keeps a file across page switches as an Upload."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ui.uploads import Upload

VIEWS = Path(__file__).resolve().parents[2] / "views"


def test_upload_digest_covers_name_and_bytes():
    one = Upload.of("pairs.csv", b"a,b\n")
    assert one.digest == hashlib.sha256(b"pairs.csv\0a,b\n").hexdigest()
    assert Upload.of("pairs.csv", bytearray(b"a,b\n")) == one and isinstance(Upload.of("p", bytearray(b"x")).data, bytes)
    assert len({one.digest, Upload.of("pairs.tsv", b"a,b\n").digest, Upload.of("pairs.csv", b"a,c\n").digest}) == 3


def test_pages_that_keep_uploads_use_the_one_helper():
    # Retrieval's BEIR zip is unpacked, never kept as bytes (ui/beir_upload.py), so it is the one direct uploader there.
    # The Retrieval page's sources are the modules of ui/retrieval/ (one per source behind its registry).
    retrieval = [VIEWS / "retrieval.py", *sorted((VIEWS.parent / "ui" / "retrieval").glob("*.py"))]
    pages = (
        ("your_data", [VIEWS / "your_data.py"], 0),
        ("tune", [VIEWS / "tune.py"], 0),
        ("your_corpus", [VIEWS / "your_corpus.py"], 0),
        ("retrieval", retrieval, 1),
    )
    for page, files, direct in pages:
        text = "".join(path.read_text() for path in files)
        assert text.count("st.file_uploader(") == direct and "uploads.uploader(" in text, page
