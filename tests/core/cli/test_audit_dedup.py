"""``audit --dedup``: a dedup run read beside the corpus from the CLI: keep.csv, the table, the worst clusters, the JSON;
one line for each bad input, before any model runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from core.models.registry import MINILM_L6

CORPUS = pd.DataFrame(
    {
        "id": ["p1", "p2", "p3", "p4", "p5", "p6"],
        "text": [
            "The patient has diabetes.",
            "the patient has diabetes",
            "The patient does not have diabetes.",
            "Take 5 mg of the drug twice a day.",
            "Take 500 mg of the drug twice a day.",
            "Paris is the capital of France.",
        ],
    }
)


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    corpus, decisions = tmp_path / "kb.csv", tmp_path / "clusters.parquet"
    CORPUS.to_csv(corpus, index=False)
    pd.DataFrame({"id": ["p1", "p2", "p3", "p4", "p5"], "cluster_id": [0, 0, 0, 1, 1]}).to_parquet(decisions, index=False)
    return corpus, decisions


def test_dedup_writes_keep_csv_and_shows_what_the_run_deletes(cli, files, tmp_path, minilm):
    corpus, decisions = files
    out = tmp_path / "out"
    code, stdout, stderr = cli(
        "audit", "--corpus", str(corpus), "--dedup", str(decisions), "--models", MINILM_L6, "--out", str(out), "--quiet"
    )
    assert code == 0, stderr
    # p2 is a copy of p1 (removed), p3 its negation and p5 a numerical twin of p4 (both kept by the guard).
    assert pd.read_csv(out / "keep.csv")["id"].tolist() == ["p1", "p3", "p4", "p5", "p6"]
    assert "The dedup run removes 3 passage(s) from 2 cluster(s); 2 of them (67%)" in stdout
    assert "keep.csv keeps 5 passages where the run keeps 3" in stdout
    assert "deletes p3 (twin, negation; cosine 0." in stdout
    assert "keeps   p1: The patient [has] diabetes." in stdout
    assert re.search(r"^\s*twin\s+numerical\s+1\s+1\s+0\.333$", stdout, re.MULTILINE), stdout
    removals = pd.read_csv(out / "dedup-removals.csv", keep_default_na=False)
    assert removals.set_index("removed_id")["kind"].to_dict() == {"p2": "near-duplicate", "p3": "twin", "p5": "twin"}
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["dedup"]["removals"] == 3 and doc["dedup"]["guard_keeps"] == 5 and doc["dedup"]["shape"] == "cluster_id"
    assert {(r["kind"], r["mode"]): r["removals"] for r in doc["dedup"]["summary"]} == {
        ("twin", "negation"): 1,
        ("twin", "numerical"): 1,
        ("near-duplicate", ""): 1,
    }
    # The audit's pairs carry the corpus's own ids, so they name the passages the dedup file names.
    pairs = pd.read_parquet(out / "close-pairs.parquet")
    assert set(pairs.id_a) | set(pairs.id_b) <= set(CORPUS.id)


def test_dedup_json_is_one_document(cli, files, tmp_path, monkeypatch, minilm):
    corpus, decisions = files
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = cli("audit", "--corpus", str(corpus), "--dedup", str(decisions), "--models", MINILM_L6, "--json", "--quiet")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["dedup"]["worst"][0]["kind"] == "twin"
    assert (tmp_path / "keep.csv").exists() and "wrote keep.csv" in stderr


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "kb.csv", "corpus file kb.csv has columns ['text']; the dedup guard needs an id column"),
        (lambda d: d / "unknown.csv", "dedup file unknown.csv names 1 id(s) the corpus does not hold ('zz')"),
        (lambda d: d / "mixed.csv", "has both a 'cluster_id' and a 'duplicate_of' column"),
        (lambda d: d / "garbage.parquet", "dedup file garbage.parquet: cannot be read as Parquet"),
    ],
)
def test_bad_dedup_inputs_are_one_line(cli, files, tmp_path, make, message):
    corpus, decisions = files
    (tmp_path / "unknown.csv").write_text("id,cluster_id\np1,a\nzz,a\n", encoding="utf-8")
    (tmp_path / "mixed.csv").write_text("id,cluster_id,duplicate_of\np1,a,\n", encoding="utf-8")
    (tmp_path / "garbage.parquet").write_bytes(b"not parquet at all")
    bad = make(tmp_path)
    if bad.name == "kb.csv":
        bad.write_text("text\n" + "\n".join(CORPUS.text) + "\n", encoding="utf-8")
        args = ("--corpus", str(bad), "--dedup", str(decisions))
    else:
        args = ("--corpus", str(corpus), "--dedup", str(bad))
    code, _, stderr = cli("audit", *args, "--models", "no-such-model", "--out", str(tmp_path / "o"), "--quiet")
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], stderr


def test_dedup_needs_a_corpus_and_never_replaces_a_keep_csv(cli, files, tmp_path, monkeypatch):
    corpus, decisions = files
    for source in (("--planted", "dev"), ("--store", "lancedb://nowhere/table")):
        code, _, stderr = cli("audit", *source, "--dedup", str(decisions), "--quiet")
        assert code == 2 and "--dedup goes with --corpus FILE" in stderr, stderr
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.csv").write_text("mine\n", encoding="utf-8")
    code, _, stderr = cli("audit", "--corpus", str(corpus), "--dedup", str(decisions), "--quiet")
    assert code == 2 and "keep.csv exists and is not a file `cosine-probe audit` wrote" in stderr
    assert (tmp_path / "keep.csv").read_text(encoding="utf-8") == "mine\n"
