"""Max_win_rate and min_recall_at_k on the user's triples file and BEIR folder; unknown keys list the valid ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.cli import main as cli
from core.gate.config import ConfigError, load_config
from core.gate.run import run_check
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT

SAMPLES = PROJECT_ROOT / "data" / "samples"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(SAMPLES / "nli-triples.csv", tmp_path / "triples.csv")
    shutil.copytree(SAMPLES / "nli-beir", tmp_path / "beir")
    return tmp_path


def _config(folder: Path, text: str) -> Path:
    path = folder / "check.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_reads_the_inputs_and_budgets(folder):
    config = load_config(
        _config(
            folder,
            '[retrieval]\ntriples = "triples.csv"\ntriples_columns = { query = "premise" }\nbeir = "beir"\nsplit = "test"\n'
            "[budgets]\nmax_win_rate = 0.3\n[budgets.min_recall_at_k]\n1 = 0.6\n10 = 0.9\n",
        )
    )
    assert config.triples == (folder / "triples.csv").resolve() and config.beir == (folder / "beir").resolve()
    assert config.budgets.max_win_rate == 0.3 and dict(config.budgets.min_recall_at_k) == {1: 0.6, 10: 0.9}
    assert dict(config.triples_columns) == {"anchor": "premise"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[budgets]\nmax_win_rate = 0.3\n", r"budgets\.max_win_rate: needs a triples file"),
        ("[budgets.min_recall_at_k]\n1 = 0.5\n", r"budgets\.min_recall_at_k: needs a triples file or a BEIR folder"),
        (
            '[retrieval]\ntriples = "triples.csv"\n[budgets.min_recall_at_k]\n3 = 0.5\n',
            r"budgets\.min_recall_at_k\.3: no such k; ks: 1, 5, 10",
        ),
        (
            '[retrieval]\ntriples = "triples.csv"\n[budgets]\nmax_win_rates = 0.5\n',
            r"budgets\.max_win_rates: unknown key; known keys here: .*max_win_rate, min_recall_at_k",
        ),
        (
            '[retrieval]\ntripels = "triples.csv"\n[budgets]\nmax_win_rate = 0.5\n',
            r"retrieval\.tripels: unknown key; known keys here: suite, triples, triples_columns, beir, split",
        ),
        ('[retrieval]\ntriples = "absent.csv"\n[budgets]\nmax_win_rate = 0.5\n', r"retrieval\.triples: no such file"),
        (
            '[retrieval]\ntriples = "triples.csv"\ntriples_columns = { anchor = "x" }\n[budgets]\nmax_win_rate = 0.5\n',
            r"retrieval\.triples_columns\.anchor: unknown key; known keys here: query, positive, negative",
        ),
    ],
)
def test_config_errors_name_the_key_and_the_valid_ones(folder, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_config(folder, text))


def test_gate_measures_the_user_inputs(folder, minilm):
    config = load_config(
        _config(
            folder,
            '[retrieval]\ntriples = "triples.csv"\nbeir = "beir"\n[budgets]\nmax_win_rate = 0.2\n[budgets.min_recall_at_k]\n1 = 0.7\n',
        )
    )
    run = run_check(config, [MINILM_L6])
    by_name = {o.name: o for o in run.outcomes}
    assert set(by_name) == {"max_win_rate", "min_recall_at_k[triples@1]", "min_recall_at_k[beir@1]"}
    triples, beir = run.user_retrieval["triples"], run.user_retrieval["beir"]
    assert by_name["max_win_rate"].measured == triples.win_rates["win_rate"].iloc[0] == 0.25
    assert by_name["max_win_rate"].status == "fail"
    assert by_name["min_recall_at_k[beir@1]"].measured == pytest.approx(beir.ranking["recall_at_1"].iloc[0])
    assert by_name["min_recall_at_k[triples@1]"].status == "pass"
    assert run.exit_code == 1


def test_check_cli_on_triples(folder, minilm, capsys):
    path = _config(folder, f'models = ["{MINILM_L6}"]\n[retrieval]\ntriples = "triples.csv"\n[budgets]\nmax_win_rate = 0.3\n')
    assert cli.main(["check", "--config", str(path), "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert any(o["budget"] == "max_win_rate" and o["status"] == "pass" for o in doc["outcomes"])
