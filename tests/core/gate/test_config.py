"""The check config: a full file, the defaults, and one bad file per mistake, each naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import constants
from core.gate.config import (
    THRESHOLD_CALIBRATED,
    THRESHOLD_GLOBAL,
    CheckConfig,
    ConfigError,
    load_config,
)
from core.paths import PROJECT_ROOT

FULL = """
models = ["all-MiniLM-L6-v2", "mpnet-base"]
suites = ["failure-modes", "baseline"]
files = ["pairs.csv"]
threshold = 0.85
threshold_mode = "calibrated"

[calibration]
method = "fpr"
negatives = ["negative", "near_miss"]
max_fpr = 0.1

[retrieval]
suite = "retrieval"

[budgets]
min_control_auc = 0.9
min_paired_accuracy = 0.3

[budgets.max_failure_rate]
negation = 0.7
my_category = 0.2

[budgets.max_adversarial_win_rate]
negation = 0.5
all = 0.4
"""


def _write(folder: Path, text: str, name: str = "check.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pairs.csv").write_text("text_a,text_b,category\nA,B,negation\n", encoding="utf-8")
    return tmp_path


def test_full_config_reads_every_key(folder: Path):
    config = load_config(_write(folder, FULL))
    assert isinstance(config, CheckConfig)
    assert config.models == ("all-MiniLM-L6-v2", "mpnet-base")
    assert config.suites == (constants.SUITE_FAILURE_MODES, constants.SUITE_BASELINE)
    assert config.files == ((folder / "pairs.csv").resolve(),)
    assert config.threshold == 0.85
    assert config.threshold_mode == THRESHOLD_CALIBRATED and config.calibrated
    assert config.calibration.method == "fpr"
    assert config.calibration.negatives == (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS)
    assert config.calibration.max_fpr == 0.1
    assert config.retrieval_suite == constants.SUITE_RETRIEVAL
    assert dict(config.budgets.max_failure_rate) == {"negation": 0.7, "my_category": 0.2}
    assert config.budgets.min_control_auc == 0.9
    assert dict(config.budgets.max_adversarial_win_rate) == {"negation": 0.5, "all": 0.4}
    assert dict(config.budgets.min_paired_accuracy) == {"all": 0.3}
    assert config.budgets.needs_pairs and config.budgets.needs_retrieval


def test_defaults_fill_what_is_left_out(folder: Path):
    config = load_config(_write(folder, "[budgets.max_failure_rate]\nnegation = 1.0\n"))
    assert config.models == ()
    assert config.suites == (constants.SUITE_FAILURE_MODES,)
    assert config.files == ()
    assert config.threshold == constants.DEFAULT_THRESHOLD
    assert config.threshold_mode == THRESHOLD_GLOBAL and not config.calibrated
    assert config.calibration.negatives == (constants.CAT_NEGATIVE,)
    assert config.budgets.min_control_auc is None
    assert not config.budgets.needs_retrieval


def test_files_alone_run_no_shipped_suite(folder: Path):
    config = load_config(_write(folder, 'files = ["pairs.csv"]\n[budgets.max_failure_rate]\nanything = 0.5\n'))
    assert config.suites == ()


def test_paired_accuracy_per_mode(folder: Path):
    config = load_config(_write(folder, "[budgets.min_paired_accuracy]\nnegation = 0.3\nnumerical = 0.2\n"))
    assert dict(config.budgets.min_paired_accuracy) == {"negation": 0.3, "numerical": 0.2}
    assert config.budgets.needs_retrieval and not config.budgets.needs_pairs


def test_the_docs_example_is_a_valid_config():
    config = load_config(PROJECT_ROOT / "docs" / "check-example.toml")
    assert config.budgets.max_failure_rate and config.budgets.min_control_auc is not None


BUDGET = "\n[budgets.max_failure_rate]\nnegation = 0.5\n"
BAD = {
    "not toml": ("threshold = = 0.7\n", "check.toml: not valid TOML"),
    "unknown top key": ("treshold = 0.7" + BUDGET, "treshold: unknown key"),
    "threshold text": ('threshold = "high"' + BUDGET, "threshold: expected a number"),
    "threshold bool": ("threshold = true" + BUDGET, "threshold: expected a number"),
    "threshold range": ("threshold = 1.5" + BUDGET, "threshold: must be between -1 and 1"),
    "threshold mode": ('threshold_mode = "own"' + BUDGET, "threshold_mode: expected one of"),
    "models not list": ('models = "all-MiniLM-L6-v2"' + BUDGET, "models: expected a list"),
    "empty model": ('models = [""]' + BUDGET, "models: expected a list of non-empty strings"),
    "unknown suite": ('suites = ["failure_modes"]' + BUDGET, "suites[0]: expected one of"),
    "missing file": ('files = ["nope.csv"]' + BUDGET, "files[0]: no such file"),
    "no budgets": ("threshold = 0.7\n", "budgets: missing"),
    "empty budgets": ("[budgets]\n", "budgets: no budget given"),
    "unknown budget": ("[budgets]\nmax_failure = 0.5\n", "budgets.max_failure: unknown key"),
    "unknown category": ("[budgets.max_failure_rate]\nnegaton = 0.5\n", "budgets.max_failure_rate.negaton: no such category"),
    "rate above one": ("[budgets.max_failure_rate]\nnegation = 50\n", "budgets.max_failure_rate.negation: must be between 0 and 1"),
    "empty rate table": ("[budgets.max_failure_rate]\n", "budgets.max_failure_rate: is empty"),
    "rate not table": ("[budgets]\nmax_failure_rate = 0.5\n", "budgets.max_failure_rate: expected a table"),
    "auc text": ('[budgets]\nmin_control_auc = "0.9"\n', "budgets.min_control_auc: expected a number"),
    "unknown mode": ("[budgets.max_adversarial_win_rate]\nsarcasm = 0.5\n", "budgets.max_adversarial_win_rate.sarcasm: no such mode"),
    "paired range": ("[budgets]\nmin_paired_accuracy = -0.1\n", "budgets.min_paired_accuracy: must be between 0 and 1"),
    "calibration method": ('[calibration]\nmethod = "best"' + BUDGET, "calibration.method: expected one of"),
    "calibration negative": ('[calibration]\nnegatives = ["positive"]' + BUDGET, "calibration.negatives: expected one of"),
    "calibration key": ("[calibration]\nfpr = 0.1" + BUDGET, "calibration.fpr: unknown key"),
    "retrieval file": ('[retrieval]\nsuite = "missing.csv"' + BUDGET, "retrieval.suite: no suite named"),
}


@pytest.mark.parametrize("text, message", list(BAD.values()), ids=list(BAD))
def test_bad_config_names_the_key(folder: Path, text: str, message: str):
    with pytest.raises(ConfigError) as info:
        load_config(_write(folder, text))
    text_of = str(info.value)
    assert message.split(": ", 1)[1] in text_of, text_of
    assert text_of.split(": ", 1)[0].endswith(message.split(": ", 1)[0]), text_of  # led by the key (or the file)
    assert "\n" not in str(info.value)


def test_unreadable_and_non_utf8_files(folder: Path):
    with pytest.raises(ConfigError, match="cannot read the config"):
        load_config(folder / "absent.toml")
    path = folder / "latin.toml"
    path.write_bytes("threshold = 0.7 # caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


MESSAGES_23 = {
    "plural of category": (
        'suites = ["failure-modes"]\n[budgets.max_failure_rate]\nnegaton = 0.5\n',
        "no such category; categories: negation,",
    ),
    "empty suites": ("suites = []\n[budgets.max_failure_rate]\nnegation = 0.5\n", "suites: empty; failure-rate and AUC budgets need pairs"),
    "a limit just above one": ("[budgets.max_failure_rate]\nnegation = 1.0000001\n", "must be between 0 and 1, got 1.0000001"),
    "a folder in files": ('files = ["a-folder"]' + BUDGET, "a-folder is a folder, not a file"),
    "a folder as retrieval suite": ('[retrieval]\nsuite = "a-folder"' + BUDGET, "a-folder is a folder, not a file"),
}


@pytest.mark.parametrize("text, message", list(MESSAGES_23.values()), ids=list(MESSAGES_23))
def test_gate_messages_say_what_is_wrong(folder: Path, text: str, message: str):
    (folder / "a-folder").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(_write(folder, text))
    assert message in str(info.value), str(info.value)
    assert "categorys" not in str(info.value) and "no such file" not in str(info.value)
