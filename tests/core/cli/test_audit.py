"""``audit``: the corpus audit through the in-process CLI: outputs, queries, BEIR, and one line for each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from core import lexicon
from core.models.registry import MINILM_L6

CORPUS = [
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The patient has diabetes.",
    "The patient does not have diabetes.",
    "Paris is the capital of France.",
    "Bananas are rich in potassium.",
]


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "kb.txt"
    path.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    return path


def test_audit_writes_pairs_and_summary(cli, corpus_file, tmp_path, minilm):
    out = tmp_path / "out"
    queries = tmp_path / "q.txt"
    queries.write_text("How much of the drug should I take?\nDoes the patient have diabetes?\n", encoding="utf-8")
    code, stdout, stderr = cli(
        "audit",
        "--corpus",
        str(corpus_file),
        "--queries",
        str(queries),
        "--threshold",
        "0.6",
        "--models",
        MINILM_L6,
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0, stderr
    assert "66.7% of the 6 passages have a confusable twin above 0.60 for MiniLM-L6" in stdout
    assert "Worst pair (" in stdout
    pairs = pd.read_parquet(out / "close-pairs.parquet")
    assert {"model", "text_a", "text_b", "cosine", "kind", "mode", "id_a", "id_b", "changed_a", "changed_b"} <= set(pairs.columns)
    assert (pairs["cosine"] > 0.6).all()
    twins = pairs[pairs["kind"] == "twin"].set_index("mode")
    assert twins.loc["numerical", "text_a"] == CORPUS[0] and twins.loc["negation", "text_b"] == CORPUS[3]
    # Every twin carries its mode, its modes and the words that differ on each side.
    assert (twins.index != "").all() and (twins["modes"] != "").all()
    assert ((twins["changed_a"] != "") | (twins["changed_b"] != "")).all()
    assert twins.loc["negation", "changed_b"] == "does not have"
    assert len(pd.read_csv(out / "close-pairs.csv")) == len(pairs)
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["n_passages"] == 6 and doc["n_queries"] == 2 and doc["threshold"] == 0.6
    overall = next(r for r in doc["summary"] if r["mode"] == "all")
    assert overall["twin_pairs"] == 2 and overall["query_twin_top5"] == 1.0
    assert doc["sources"][0]["sha256"]


def test_audit_json_and_beir(cli, tmp_path, minilm):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(CORPUS)))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "Does the patient have diabetes?"}) + "\n")
    # The judged answer is the "does not have" passage; MiniLM ranks its twin ("has diabetes", 0.88 vs 0.81) first.
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\n")
    code, stdout, stderr = cli("audit", "--beir", str(root), "--threshold", "0.6", "--models", MINILM_L6, "--json", "--quiet")
    assert code == 0, stderr
    doc = json.loads(stdout)
    overall = next(r for r in doc["summary"] if r["mode"] == "all")
    assert overall["n_queries"] == 1
    assert overall["twin_first"] == 1.0
    assert overall["query_twin_top5"] == 1.0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "the file is empty"),
        (b"\n \n\n", "is empty"),
        (b"Only one passage here.\n", "one distinct passage"),
        (b"Same text.\nSame text.\nSame text.\n", "one distinct passage"),
        (b"\x00\x01\x02\xff\xfe" * 100, "binary"),
    ],
)
def test_bad_corpus_is_one_line(cli, tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    code, stdout, stderr = cli("audit", "--corpus", str(path), "--models", MINILM_L6, "--quiet")
    assert code == 2
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], stderr
    assert "Traceback" not in stderr


def test_usage_errors_before_any_work(cli, corpus_file, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for argv, message in (
        (["--corpus", str(corpus_file), "--out", str(blocker)], "is a file, not a folder"),
        (["--corpus", str(corpus_file), "--split", "dev"], "--split needs a --beir"),
        (["--corpus", str(corpus_file), "--max-pairs", "0"], "--max-pairs must be at least 1"),
        (["--corpus", str(tmp_path / "missing.txt")], "missing.txt"),
    ):
        code, _, stderr = cli("audit", *argv, "--quiet")
        assert code == 2 and message in stderr, stderr


def test_no_close_pair_and_too_many(cli, corpus_file, minilm):
    code, stdout, stderr = cli("audit", "--corpus", str(corpus_file), "--threshold", "0.99", "--models", MINILM_L6, "--quiet")
    assert code == 0, stderr
    assert "No two of the 6 passages are confusable twins above 0.99 for MiniLM-L6." in stdout
    code, _, stderr = cli("audit", "--corpus", str(corpus_file), "--threshold", "-1", "--max-pairs", "3", "--models", MINILM_L6, "--quiet")
    assert code == 2 and "more than 3 pairs score above -1; raise the threshold" in stderr


def test_audit_is_recorded_in_the_history(cli, corpus_file, tmp_path, monkeypatch, minilm):
    from core import constants
    from core.history import store

    history = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history))
    code, _, stderr = cli("audit", "--corpus", str(corpus_file), "--threshold", "0.6", "--models", MINILM_L6, "--quiet")
    assert code == 0 and "stored as run" in stderr, stderr
    runs = store.list_runs(history)
    assert runs["command"].tolist() == ["audit"]
    stored = store.load_run(int(runs["run_id"].iloc[0]), history)
    assert set(stored.results["category"]) >= {"numerical", "negation"}
    assert stored.settings["threshold"] == 0.6
    # The HTML report of the stored audit leads with the audit's own findings.
    out = tmp_path / "report.html"
    code, _, stderr = cli("report", str(int(runs["run_id"].iloc[0])), "--out", str(out))
    assert code == 0, stderr
    page = out.read_text(encoding="utf-8")
    first = page.index("<p class='finding'>")
    assert page[first:].startswith("<p class='finding'>66.7% of the 6 passages have a confusable twin above 0.60 for MiniLM-L6")
    findings = page[page.index("<h2>Findings</h2>") : page.index("<h2>Charts</h2>")]
    assert "<th>share of passages with a twin</th>" in findings and "66.7% (4)" in findings  # the table of every model, once
    assert stored.settings["findings_table"][0]["model"] == "MiniLM-L6"


def test_planted_heldout_prints_recall_and_precision_per_mode(cli, minilm):
    code, stdout, stderr = cli("audit", "--planted", "heldout", "--threshold", "0.7", "--models", MINILM_L6, "--quiet")
    assert code == 0, stderr
    assert "Planted twins (heldout split)" in stdout
    for mode in ("all", *lexicon.FAILURE_MODES):
        assert f"MiniLM-L6 {mode}: recall " in stdout
    line = next(x for x in stdout.splitlines() if "MiniLM-L6 all: recall" in x)
    recall = float(line.split("recall ")[1].split(" = ")[1].split(",")[0])
    assert recall >= 0.95, line


def test_judge_that_cannot_load_is_one_note_and_the_audit_runs(cli, corpus_file, tmp_path, minilm):
    out = tmp_path / "out"
    code, stdout, stderr = cli(
        "audit",
        "--corpus",
        str(corpus_file),
        "--threshold",
        "0.6",
        "--models",
        MINILM_L6,
        "--judge",
        str(tmp_path / "no-such-nli"),
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0, stderr
    notes = [line for line in stderr.splitlines() if "judge" in line]
    assert (
        len(notes) == 1
        and notes[0].startswith("note: The judge")
        and "could not run here" in notes[0]
        and "the audit ran without it" in notes[0]
    )
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["judge"]["error"] and doc["summary"][0]["twin_pairs"] == 2


def test_judge_reads_every_twin_pair(cli, corpus_file, tmp_path, minilm):
    from cross_encoder_support import NLI_LABELS, direct_logits, tiny_cross_encoder

    folder = tmp_path / "tiny-nli"
    model, tokenizer = tiny_cross_encoder(folder, 3, NLI_LABELS)
    out = tmp_path / "out"
    code, stdout, stderr = cli(
        "audit",
        "--corpus",
        str(corpus_file),
        "--threshold",
        "0.6",
        "--models",
        MINILM_L6,
        "--judge",
        str(folder),
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0, stderr
    pairs = pd.read_parquet(out / "close-pairs.parquet")
    twins = pairs[pairs["kind"] == "twin"]
    expected = [
        NLI_LABELS[int(i)] for i in direct_logits(model, tokenizer, list(zip(twins.text_a, twins.text_b, strict=True))).argmax(axis=1)
    ]
    assert twins["judge"].tolist() == expected
    assert (pairs.loc[pairs["kind"] != "twin", "judge"] == "").all()
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["judge"]["summary"][0]["twin_pairs_judged"] == 2
    assert doc["judge"]["summary"][0]["contradictions"] == expected.count("contradiction")
    assert f"reads {expected.count('contradiction')} of 2 twin pairs" in stdout


def test_approximate_search_prints_its_recall(cli, corpus_file, tmp_path, minilm):
    out = tmp_path / "out"
    code, stdout, stderr = cli(
        "audit", "--corpus", str(corpus_file), "--threshold", "0.6", "--models", MINILM_L6, "--approximate", "--out", str(out), "--quiet"
    )
    assert code == 0, stderr
    # The sampled recall with its Wilson interval (2 of 2: 0.3424 to 1), the neighbour cap apart from the index.
    assert (
        "MiniLM-L6: close pairs by approximate (faiss HNSW, k=32); recall against exact search on a sample of 6 passages (2 exact "
        "pairs): 100.0% (95% Wilson interval 34.2% to 100.0%); the neighbour cap (each passage's 32 nearest) leaves 0 of the 2 "
        "exact pairs out of reach of any 32-neighbour search, exact or not (0 sampled passages with more than 32 neighbours above "
        "the threshold); the index found 100.0% of the 2 within the cap." in stdout
    )
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["search"][MINILM_L6]["recall"] == 1.0
    assert doc["search"][MINILM_L6]["recall_ci"] == pytest.approx([0.3424, 1.0], abs=1e-4)
    assert doc["summary"][0]["twin_pairs"] == 2


def test_a_huge_passage_is_cut_and_said(cli, tmp_path, minilm):
    path = tmp_path / "kb.txt"
    huge = "The patient has diabetes and " + "a very long history of symptoms " * 6_000
    path.write_text("\n".join([huge, *CORPUS]) + "\n", encoding="utf-8")
    code, stdout, stderr = cli("audit", "--corpus", str(path), "--threshold", "0.6", "--models", MINILM_L6, "--quiet")
    assert code == 0, stderr
    assert "note: MiniLM-L6: 1 passage(s) are longer than the 256 tokens it reads; each was compared by its first part only" in stderr
    assert "of the 7 passages" in stdout


def test_engine_ray_bad_options_are_one_line(cli, corpus_file, monkeypatch):
    """An unreachable Ray cluster and a bad actor count end in one line each, before any model loads."""
    code, _, stderr = cli("audit", "--corpus", str(corpus_file), "--engine", "ray", "--ray-actors", "0", "--quiet")
    assert code == 2 and stderr.strip() == "error: --ray-actors must be at least 1, got 0"
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    code, _, stderr = cli("audit", "--corpus", str(corpus_file), "--engine", "ray", "--models", MINILM_L6, "--no-cache", "--quiet")
    assert code == 2, stderr
    assert stderr.strip().startswith("error: cannot reach the Ray cluster at $RAY_ADDRESS=127.0.0.1:1")
    assert len(stderr.strip().splitlines()) == 1


def test_the_judge_decides_the_kinds_when_asked(cli, corpus_file, tmp_path, minilm):
    from cross_encoder_support import NLI_LABELS, direct_logits, tiny_cross_encoder

    folder = tmp_path / "tiny-nli"
    model, tokenizer = tiny_cross_encoder(folder, 3, NLI_LABELS)
    out = tmp_path / "out"
    args = ["audit", "--corpus", str(corpus_file), "--threshold", "0.6", "--models", MINILM_L6, "--judge", str(folder), "--quiet"]
    code, stdout, stderr = cli(*args, "--judge-decides", "--out", str(out))
    assert code == 0, stderr
    twins = [(CORPUS[0], CORPUS[1]), (CORPUS[2], CORPUS[3])]
    labels = [NLI_LABELS[int(i)] for i in direct_logits(model, tokenizer, twins).argmax(axis=1)]
    kept = labels.count("contradiction")
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert doc["judge"]["decides"] is True
    assert doc["summary"][0]["twin_pairs"] == kept
    assert doc["judge"]["summary"][0]["twin_precision"] == kept / 2
    pairs = pd.read_parquet(out / "close-pairs.parquet")
    overruled = pairs[(pairs["judge"] != "") & (pairs["judge"] != "contradiction")]
    assert len(overruled) == len(twins) - kept
    assert (overruled["kind"] == "other").all() and (overruled["mode"] == "").all()
    assert f"the twin precision it implies is {kept / 2:.3f}" in stdout


def test_judge_decides_needs_a_judge(cli, corpus_file):
    code, _stdout, stderr = cli("audit", "--corpus", str(corpus_file), "--judge-decides", "--quiet")
    assert code != 0
    assert stderr.strip().splitlines()[-1].endswith("--judge-decides needs --judge MODEL (an NLI cross-encoder)")
