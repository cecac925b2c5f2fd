"""``cosine-probe index-settings``: a user's pairs and triples under each setting, the CSV it writes, one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.models.registry import MINILM_L6
from core.probes import index_settings

PAIRS = (
    "text_a,text_b,category\n"
    "The patient has diabetes,The patient does not have diabetes,negation\n"
    "Revenue rose 5% in 2021,Revenue rose 50% in 2021,numerical\n"
    "The drug reduced pain,The medicine lowered pain,positive\n"
    "The cat sat on the mat,Stock prices fell sharply today,negative\n"
)
TRIPLES = (
    '{"anchor": "A dog runs in the park.", "positive": "A dog is running outside.", "negative": "A dog is not running."}\n'
    '{"anchor": "The shop opens at 9.", "positive": "Opening time is nine.", "negative": "The shop opens at 11."}\n'
    '{"anchor": "All tests passed.", "positive": "Every test succeeded.", "negative": "Some tests passed."}\n'
)


@pytest.fixture
def user_files(tmp_path):
    pairs, triples = tmp_path / "pairs.csv", tmp_path / "triples.jsonl"
    pairs.write_text(PAIRS, encoding="utf-8")
    triples.write_text(TRIPLES, encoding="utf-8")
    return pairs, triples


def test_user_pairs_and_triples_under_each_setting_to_csv(cli, user_files, tmp_path, minilm):
    pairs, triples = user_files
    out = tmp_path / "settings.csv"
    code, stdout, err = cli(
        "index-settings",
        "--models",
        MINILM_L6,
        "--pairs",
        str(pairs),
        "--triples",
        str(triples),
        "--settings",
        "float32,binary,dims:64",
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0, err
    assert "float32" in stdout and "binary" in stdout and "dims:64" in stdout and "recall_at_1" in stdout
    table = pd.read_csv(out)
    assert list(table.columns) == index_settings.TABLE_COLUMNS
    assert set(table["setting"]) == {"float32", "binary", "dims:64"}
    assert set(table["probe"]) == {str(pairs), index_settings.PROBE_TRIPLES}
    negation = table.query("metric == 'failure_rate' and mode == 'negation'").set_index("setting")
    assert negation.loc["float32", "n"] == 1 and negation.loc["float32", "change"] == 0
    # binary is on the Hamming scale: no rate at the cosine threshold, and the output says why before the table.
    assert "binary" not in set(negation.index)
    lines = stdout.splitlines()
    assert lines[0].startswith("MiniLM-L6: ") and "binary" in lines[0]
    assert lines[1].startswith("binary (Hamming scale) score on another scale") and "never at the cosine threshold" in lines[1]
    wins = table.query("probe == 'triples' and metric == 'win_rate'")
    assert len(wins) == 3 and wins["n"].eq(3).all()
    recall = table.query("probe == 'triples' and setting == 'float32'").set_index("metric")
    assert {"recall_at_1", "recall_at_5", "recall_at_10"} <= set(recall.index)


def test_json_lists_every_row(cli, user_files, minilm):
    pairs, _ = user_files
    code, stdout, _err = cli("index-settings", "--models", MINILM_L6, "--pairs", str(pairs), "--settings", "int8", "--json", "--quiet")
    assert code == 0
    doc = json.loads(stdout)
    assert doc["settings"] == ["float32", "int8"]  # float32 always runs: the baseline of every change
    assert {r["setting"] for r in doc["rows"]} == {"float32", "int8"}
    assert len(doc["findings"]) == 1 and doc["findings"][0].startswith("MiniLM-L6: ")
    assert doc["scale_note"] is None  # int8 is on the cosine scale


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--settings", "int4"), "error: --settings: unknown index setting 'int4'"),
        (("--settings", "dims:0"), "error: --settings: 'dims:0': dims:D needs a whole number"),
        (("--pairs", "/no/such/file.csv"), "error: no suite named '/no/such/file.csv' and no such file"),
        (("--out", "/no/such/folder/x.csv"), "error: --out: no folder /no/such/folder"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, args, message):
    code, _out, err = cli("index-settings", "--models", MINILM_L6, "--quiet", *args)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in err


def test_the_run_goes_into_the_history_with_each_setting_beside_the_cosine(cli, user_files, tmp_path, monkeypatch, minilm):
    from core import constants
    from core.history import store

    history = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history))
    pairs, _ = user_files
    code, _out, err = cli("index-settings", "--models", MINILM_L6, "--pairs", str(pairs), "--settings", "float32,binary", "--quiet")
    assert code == 0 and "note: stored as run 1" in err
    run = store.load_run(1, history)
    assert run.command == "index-settings" and run.threshold == 0.7
    assert run.settings["index_settings"] == ["float32", "binary"]
    assert {r["setting"] for r in run.settings["table"]} == {"float32", "binary"}
    assert len(run.results) == 4
    # The binary score is 1 - 2h/d of the pair's sign bits; the cosine is the float32 one.
    assert (run.results["score_binary"] != run.results["cosine"]).all()
    assert run.results["cosine"].between(-1, 1).all()
