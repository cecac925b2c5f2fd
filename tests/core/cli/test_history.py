"""``cosine-probe history list|show|diff|export`` and the runs ``compare`` and ``run`` store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.history import store
from core.models.registry import MINILM_L6


@pytest.fixture
def history_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    return path


def _frame(shift: float) -> pd.DataFrame:
    cos = np.array([0.65, 0.72, 0.9, 0.3])
    return pd.DataFrame(
        {
            "model": MINILM_L6,
            "suite": "s",
            "category": ["negation", "negation", "negation", "negative"],
            "pair_id": ["a", "b", "c", "d"],
            "text_a": ["A1", "B1", "C1", "D1"],
            "text_b": ["A2", "B2", "C2", "D2"],
            "cosine": cos + shift,
        }
    )


@pytest.fixture
def two_runs(history_file) -> tuple[int, int]:
    first = store.record_run(_frame(0.0), command="run", origin="cli", settings={"threshold": 0.7, "sources": [{"suite": "s"}]})
    second = store.record_run(_frame(0.1), command="failure-modes", origin="app", settings={"threshold": 0.7})
    return first, second


def test_list_json_is_one_document(two_runs, capsys):
    assert cli.main(["history", "list", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in runs] == [2, 1]
    assert runs[1]["command"] == "run" and runs[1]["source"] == "s" and runs[0]["origin"] == "app"
    assert cli.main(["history", "list", "--limit", "1"]) == 0
    text = capsys.readouterr().out
    assert "failure-modes" in text and "MiniLM-L6" in text and " run " not in text


def test_show_lists_settings_models_and_categories(two_runs, capsys):
    assert cli.main(["history", "show", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == 1 and doc["threshold"] == 0.7
    assert doc["models"][0]["model"] == MINILM_L6 and doc["models"][0]["backend"] == "torch"
    negation = next(c for c in doc["categories"] if c["category"] == "negation")
    assert negation["n"] == 3 and negation["share_above"] == pytest.approx(2 / 3)  # 0.72 and 0.9 above 0.7
    assert cli.main(["history", "show", "2"]) == 0
    assert "run 2: failure-modes (app)" in capsys.readouterr().out


def test_diff_json_reports_changes_and_crossed_pairs(two_runs, capsys):
    assert cli.main(["history", "diff", "1", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["before"], doc["after"], doc["n_matched"]) == (1, 2, 4)
    negation = next(c for c in doc["categories"] if c["category"] == "negation")
    assert negation["mean_change"] == pytest.approx(0.1)
    assert negation["rate_before"] == pytest.approx(2 / 3) and negation["rate_after"] == 1.0
    assert [(p["pair_id"], p["direction"]) for p in doc["crossed"]] == [("a", "now above")]  # 0.65 -> 0.75
    assert cli.main(["history", "diff", "1", "2", "--threshold", "0.8"]) == 0
    out = capsys.readouterr().out
    # At 0.8 only 0.72 -> 0.82 crosses: 0.9 -> 1.0 stays above, 0.65 -> 0.75 stays below.
    assert "1 pair score(s) crossed the threshold" in out and "0.7200 -> 0.8200" in out


def test_export_round_trips_through_parquet(two_runs, tmp_path, capsys):
    out = tmp_path / "run2.parquet"
    assert cli.main(["history", "export", "2", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    frame = pd.read_parquet(out)
    np.testing.assert_allclose(frame["cosine"].to_numpy(), _frame(0.1)["cosine"].to_numpy())
    assert set(frame["run_id"]) == {2}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["history", "show", "9"], "no run 9 in the history"),
        (["history", "diff", "1", "7"], "no run 7"),
        (["history", "export", "1", "--out", "/no/such/folder/x.parquet"], "no folder /no/such/folder"),
    ],
)
def test_user_errors_are_one_line(two_runs, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]


def test_a_bad_id_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["history", "show", "first"])
    assert info.value.code == 2 and "a run id is a whole number" in capsys.readouterr().err


def test_empty_history_says_how_to_fill_it(history_file, capsys):
    assert cli.main(["history", "list"]) == 0
    assert "no runs stored yet" in capsys.readouterr().out


def test_compare_stores_its_run_and_keeps_stdout_json(history_file, minilm, capsys):
    assert cli.main(["compare", "History cat one", "History cat two", "--models", MINILM_L6, "--json"]) == 0
    captured = capsys.readouterr()
    [row] = json.loads(captured.out)
    assert "note: stored as run 1" in captured.err
    run = store.load_run(1, history_file)
    assert run.command == "compare" and run.origin == "cli" and run.threshold == constants.DEFAULT_THRESHOLD
    assert run.results.loc[0, "cosine"] == pytest.approx(row["cosine"], abs=1e-6)


def test_run_stores_the_file_by_hash(history_file, minilm, tmp_path, capsys):
    from core.history.sources import file_sha256

    pairs = tmp_path / "few.csv"
    pairs.write_text(
        "text_a,text_b,category\nHistory run one,History run uno,positive\nHistory run two,History run dos,negation\n", encoding="utf-8"
    )
    assert cli.main(["run", "--suite", str(pairs), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet"]) == 0
    capsys.readouterr()
    run = store.load_run(1, history_file)
    assert run.command == "run" and len(run.results) == 2
    assert run.settings["sources"] == [{"file": str(pairs.resolve()), "sha256": file_sha256(pairs)}]
    # The backend that encoded (summary.json's), not the registry's default for the model.
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert run.models.set_index("model")["backend"].to_dict() == {m: e["backend"] for m, e in summary["encoding"].items()}


@dataclass
class _Ranked:
    """A retrieval result of the protocol's shape around a suite run's scores (``core.scoring.result.ProbeResult``)."""

    scores: pd.DataFrame
    errors: dict = field(default_factory=dict)
    reports: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.scores["model"]))

    def summary(self) -> pd.DataFrame:
        return self.scores

    def history_record(self, name: str):
        from core.probes.retrieval.records import retrieval_pairs
        from core.scoring.result import HistoryRecord

        return HistoryRecord(retrieval_pairs(self.scores, name), {"threshold": None})


def test_a_retrieval_run_is_stored_as_pairs(history_file, capsys):
    from core.cli.history import record_retrieval_history

    scores = pd.DataFrame(
        {
            "model": MINILM_L6,
            "mitigation": ["none", "none", "bm25"],
            "group_id": ["g1", "g1", "g1"],
            "mode": ["negation", "numerical", "negation"],
            "anchor": "A",
            "paraphrase": "P",
            "variant": ["Vn", "Vx", "Vn"],
            "cosine_paraphrase": [0.8, 0.8, 0.1],
            "cosine_variant": [0.9, 0.6, 0.2],
        }
    )
    run_id = record_retrieval_history("retrieval", _Ranked(scores), {"seed": 0})
    assert run_id == 1 and "note: stored as run 1" in capsys.readouterr().err
    run = store.load_run(1, history_file)
    assert run.command == "retrieval" and run.settings["seed"] == 0 and run.settings["sources"] == [{"suite": "retrieval"}]
    assert sorted(zip(run.results["pair_id"], run.results["cosine"], strict=True)) == [
        ("g1/negation", 0.9),
        ("g1/numerical", 0.6),
        ("g1/paraphrase", 0.8),
    ]
    assert record_retrieval_history("retrieval", _Ranked(scores.drop(columns="variant")), {}) is None
    assert capsys.readouterr().err.startswith("warning: run history not written")


def test_export_onto_the_history_file_is_refused_and_keeps_every_run(two_runs, history_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for out in (str(history_file), history_file.name, f"{history_file}.wal"):  # absolute, relative, its write-ahead log
        assert cli.main(["history", "export", "1", "--out", out]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and "is the run history itself" in err[0]
    assert list(store.list_runs(history_file)["run_id"]) == [2, 1]
    assert len(store.load_run(2, history_file).results) == 4


def test_the_history_keeps_the_backend_that_ran_not_the_registry_default(history_file, capsys):
    store.record_run(_frame(0.0), command="run", origin="cli", settings={"threshold": 0.7, "backends": {MINILM_L6: "onnx"}})
    assert store.load_run(1, history_file).models.loc[0, "backend"] == "onnx"
    assert cli.main(["history", "show", "1"]) == 0
    assert "backend onnx" in capsys.readouterr().out


def test_list_limit_zero_names_the_limit_not_a_run_id(two_runs, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["history", "list", "--limit", "0"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "--limit is how many of the newest runs to list" in err and "run id" not in err


def _many_crossed(n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    base = pd.DataFrame(
        {
            "model": MINILM_L6,
            "suite": "s",
            "category": "negation",
            "pair_id": [str(i) for i in range(n)],
            "text_a": [f"A{i}" for i in range(n)],
            "text_b": [f"B{i}" for i in range(n)],
            "cosine": np.linspace(0.6, 0.69, n),
        }
    )
    return base, base.assign(cosine=base["cosine"] + np.linspace(0.2, 0.11, n))


def test_diff_caps_the_crossed_pairs_it_prints(history_file, capsys):
    before, after = _many_crossed(30)
    for frame in (before, after):
        store.record_run(frame, command="run", origin="cli", settings={"threshold": 0.7})
    assert cli.main(["history", "diff", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "30 pair score(s) crossed the threshold; the 20 biggest changes:" in out and "… 10 more" in out
    assert out.count("now above") == 20 and "'A0' / 'B0'" in out  # the biggest change (+0.20) first
    assert cli.main(["history", "diff", "1", "2", "--limit", "3"]) == 0
    assert capsys.readouterr().out.count("now above") == 3
    assert cli.main(["history", "diff", "1", "2", "--json", "--limit", "5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_crossed"] == 30 and len(doc["crossed"]) == 5


def test_diff_into_a_closed_pipe_prints_no_broken_pipe_error(history_file):
    import os
    import subprocess
    import sys

    before, after = _many_crossed(3000)  # far more than a pipe buffer holds
    for frame in (before, after):
        store.record_run(frame, command="run", origin="cli", settings={"threshold": 0.7})
    env = {**os.environ, constants.HISTORY_ENV_VAR: str(history_file)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "core", "history", "diff", "1", "2", "--limit", "3000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.stdout is not None and proc.stdout.readline().startswith(b"run 2")
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    assert proc.wait(timeout=60) == cli.EXIT_BROKEN_PIPE
    assert "BrokenPipe" not in err and "Traceback" not in err and "error" not in err


def test_a_corpus_mode_run_is_stored_with_its_mitigated_scores_and_no_threshold(history_file, capsys):
    from core.cli.history import record_retrieval_history
    from core.probes.retrieval.corpus import CorpusResult

    pairs = pd.DataFrame(
        {
            "model": MINILM_L6,
            "mitigation": ["none", "guard"],
            "query": "q1",
            "original": "O",
            "mode": "negation",
            "rule": "r1",
            "variant": "V1",
            "score_original": [0.8, 0.7],
            "score_variant": [0.9, 0.2],
            "outranks": [True, False],
        }
    )
    result = CorpusResult(pairs, pd.DataFrame({"model": [MINILM_L6], "rate": [1.0]}))
    run_id = record_retrieval_history("corpus", result, {"mitigations": [{"name": "guard"}], "mode": "corpus"}, sources=["corpus.txt"])
    run = store.load_run(run_id, history_file)
    assert run.command == "retrieval" and run.threshold is None and run.settings["mode"] == "corpus"
    assert run.results.set_index("pair_id").loc["q0/r1", ["cosine", "score[guard]"]].tolist() == [0.9, 0.2]
    capsys.readouterr()
    assert cli.main(["history", "list"]) == 0
    out = capsys.readouterr().out
    assert "none" in out.splitlines()[1] and "NaN" not in out


def test_runs_are_named_pinned_and_deleted_from_the_command_line(two_runs, history_file, capsys):
    assert cli.main(["history", "name", "1", "before the upgrade"]) == 0
    assert cli.main(["history", "pin", "1"]) == 0
    assert cli.main(["history", "delete", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: run 1 (before the upgrade) is pinned; unpin it first"]
    assert cli.main(["history", "list"]) == 0
    assert "before the upgrade (pinned)" in capsys.readouterr().out
    assert cli.main(["history", "show", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["name"], doc["pinned"]) == ("before the upgrade", True)
    assert cli.main(["history", "unpin", "1"]) == 0 and cli.main(["history", "delete", "1"]) == 0
    assert "deleted run 1" in capsys.readouterr().out
    assert list(store.list_runs(history_file)["run_id"]) == [2]
    assert cli.main(["history", "name", "7", "x"]) == 2
    assert "no run 7" in capsys.readouterr().err


SAMPLES = Path(__file__).resolve().parents[3] / "data" / "samples"


def test_a_triples_run_is_stored_with_its_file_and_columns(history_file, minilm, capsys):
    from core.history.sources import file_sha256

    triples = SAMPLES / "nli-triples.csv"
    assert cli.main(["retrieval", "--triples", str(triples), "--models", MINILM_L6, "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert cli.main(["history", "list", "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["command"] == "retrieval" and listed["origin"] == "cli"
    assert cli.main(["history", "show", str(listed["run_id"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    settings = shown["settings"]
    assert settings["mode"] == "triples" and settings["mitigations"] == [] and shown["threshold"] is None
    assert settings["sources"] == [{"file": str(triples.resolve()), "sha256": file_sha256(triples)}]
    assert settings["columns"] == {"anchor": "premise", "positive": "entailed", "negative": ["contradicted"]}
    assert settings["summary"][0]["win_rate"] == pytest.approx(doc["win_rates"][0]["win_rate"])
    run = store.load_run(listed["run_id"], history_file)
    frame = pd.read_csv(triples)
    # One positive pair per row and one contradiction per row; each negative's cosine beside its win.
    assert (run.results["category"] == "positive").sum() == len(frame) == (run.results["category"] == "contradiction").sum()
    negatives = run.results[run.results["category"] == "contradiction"]
    assert negatives["win"].astype(float).mean() == pytest.approx(doc["win_rates"][0]["win_rate"])


def test_a_beir_run_is_stored_with_its_files_and_split(history_file, minilm, capsys):
    from core.history.sources import file_sha256

    folder = SAMPLES / "nli-beir"
    assert cli.main(["retrieval", "--beir", str(folder), "--split", "test", "--models", MINILM_L6, "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert cli.main(["history", "show", "1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    settings = shown["settings"]
    assert shown["command"] == "retrieval" and settings["mode"] == "beir" and settings["split"] == "test" and settings["variants"] is False
    files = [folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / "test.tsv"]
    assert settings["sources"] == [{"file": str(f.resolve()), "sha256": file_sha256(f)} for f in files]
    assert settings["summary"][0]["recall_at_1"] == pytest.approx(doc["ranking"][0]["recall_at_1"])
    run = store.load_run(1, history_file)
    # One row per judged query: its top passage, "positive" exactly when it is relevant, so their share is recall@1 here.
    assert len(run.results) == doc["n_queries"]
    assert (run.results["category"] == "positive").mean() == pytest.approx(doc["ranking"][0]["recall_at_1"])


def test_a_mitigated_triples_run_is_stored_as_triples_with_each_mitigations_scores(history_file, minilm, capsys):
    triples = SAMPLES / "nli-triples.csv"
    assert cli.main(["retrieval", "--triples", str(triples), "--mitigate", "bm25", "--models", MINILM_L6, "--quiet", "--json"]) == 0
    capsys.readouterr()
    run = store.load_run(1, history_file)
    [mitigation] = run.settings["mitigations"]
    assert run.settings["mode"] == "triples" and mitigation["name"].startswith("bm25")
    assert run.settings["columns"] == {"anchor": "premise", "positive": "entailed", "negative": ["contradicted"]}
    scored = f"score[{mitigation['name']}]"
    assert scored in run.results.columns and run.results[scored].notna().all()
    # The stored summary, and so the run's HTML report, keeps each mitigation's ties, fixed and broken.
    rows = {r["mitigation"]: r for r in run.settings["summary"]}
    assert {"ties", "fixed", "broken", "recall_gained", "recall_lost"} <= set(rows[mitigation["name"]])
    from core.history.report import run_report

    page = run_report(1, str(history_file))
    assert "&quot;fixed&quot;" in page and "&quot;broken&quot;" in page and "&quot;ties&quot;" in page


def test_list_never_sends_a_stored_escape_sequence_to_the_terminal(history_file, capsys):
    """A suite file named with an escape sequence is listed with the sequence spelled out, never acted on."""
    store.record_run(_frame(0.0), command="run", origin="cli", settings={"threshold": 0.7, "sources": [{"suite": "\x1b[2J\x1b[31mred"}]})
    assert cli.main(["history", "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[31mred" in out
    with pytest.raises(ValueError, match="no control characters"):
        store.name_run(1, "\x1b[31mred", history_file)
