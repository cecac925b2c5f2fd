"""read_beir: a BEIR folder's queries and qrels, the corpus streamed in chunks; refusals name the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.files.beir import read_beir
from core.files.errors import PairsFileError


def _folder(tmp_path: Path, corpus: list[dict], queries: list[dict], qrels: str, split: str = "test") -> Path:
    (tmp_path / "qrels").mkdir(parents=True, exist_ok=True)
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    (tmp_path / "qrels" / f"{split}.tsv").write_text(qrels)
    return tmp_path


CORPUS = [{"_id": f"d{i}", "title": "T" if i == 0 else "", "text": f"passage {i}"} for i in range(5)]
QUERIES = [{"_id": "q1", "text": "first"}, {"_id": "q2", "text": "second"}, {"_id": "q3", "text": "unjudged"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td0\t2\nq1\td3\t1\nq2\td4\t1\nq2\td1\t0\n"


def test_judged_queries_positive_qrels_and_chunks(tmp_path):
    folder = read_beir(_folder(tmp_path, CORPUS, QUERIES, QRELS))
    assert folder.queries == {"q1": "first", "q2": "second"}
    assert folder.qrels == {"q1": {"d0": 2, "d3": 1}, "q2": {"d4": 1}}
    chunks = list(folder.corpus_chunks(2))
    assert [c.ids for c in chunks] == [["d0", "d1"], ["d2", "d3"], ["d4"]]
    assert chunks[0].texts[0] == "T passage 0" and chunks[-1].fraction == 1.0


def test_missing_split_lists_the_splits(tmp_path):
    root = _folder(tmp_path, CORPUS, QUERIES, QRELS, split="dev")
    with pytest.raises(PairsFileError, match="no qrels/test.tsv; splits there: dev"):
        read_beir(root)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [("q\td\ts\nq1\td0\t1\n", "the header must be"), ("query-id\tcorpus-id\tscore\nq1\td0\thigh\n", "the score is not a whole number on line")],
)
def test_bad_qrels_name_the_file(tmp_path, qrels, message):
    with pytest.raises(PairsFileError, match=rf"qrels/test\.tsv: {message}"):
        read_beir(_folder(tmp_path, CORPUS, QUERIES, qrels))


def test_bad_corpus_lines_name_the_file(tmp_path):
    root = _folder(tmp_path, [*CORPUS, {"_id": "d1", "text": "again"}], QUERIES, QRELS)
    with pytest.raises(PairsFileError, match="corpus.jsonl: the id 'd1' appears twice"):
        list(read_beir(root).corpus_chunks(10))
    (root / "corpus.jsonl").write_text('{"_id": "d0", "text": {"deep": 1}}\n')
    with pytest.raises(PairsFileError, match="corpus.jsonl: 'text' holds JSON objects"):
        list(read_beir(root).corpus_chunks(10))
    (root / "corpus.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(PairsFileError, match=r"corpus\.jsonl \(lines 1-1\): .*nested too deeply"):
        list(read_beir(root).corpus_chunks(10))


def test_not_a_beir_folder(tmp_path):
    with pytest.raises(PairsFileError, match="not a folder"):
        read_beir(tmp_path / "absent")
    with pytest.raises(PairsFileError, match="no corpus.jsonl"):
        read_beir(tmp_path)


def test_zip_upload_unpacks_only_the_beir_files_under_the_target(tmp_path):
    import io
    import zipfile

    from core.files.beir import beir_from_zip

    source = _folder(tmp_path / "src", CORPUS, QUERIES, QRELS)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            zf.write(source / name, f"scifact/{name}")
        zf.writestr("scifact/README.md", "x")
    target = tmp_path / "into"
    folder = beir_from_zip(out.getvalue(), "scifact.zip", target)
    assert folder.queries == {"q1": "first", "q2": "second"}
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]
    assert not (tmp_path / "escape.txt").exists()
    with pytest.raises(PairsFileError, match="scifact.zip: not a zip file"):
        beir_from_zip(b"nope", "scifact.zip", tmp_path / "x")
    with pytest.raises(PairsFileError, match="scifact.zip: unpacks to"):
        beir_from_zip(out.getvalue(), "scifact.zip", tmp_path / "y", max_bytes=10)
