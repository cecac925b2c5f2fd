"""``max_twin_share`` per mode on an ``[audit]`` corpus; the config names what is missing or wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main as cli
from core.gate.config import ConfigError, load_config
from core.models.registry import MINILM_L6

CORPUS = (
    "\n".join(
        [
            "Take 5 mg of the drug twice a day.",
            "Take 500 mg of the drug twice a day.",
            "The patient has diabetes.",
            "The patient does not have diabetes.",
            "Paris is the capital of France.",
            "Bananas are rich in potassium.",
        ]
    )
    + "\n"
)


def _config(folder: Path, text: str) -> Path:
    (folder / "kb.txt").write_text(CORPUS, encoding="utf-8")
    path = folder / "check.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_reads_the_corpus_and_limits(tmp_path):
    config = load_config(_config(tmp_path, '[audit]\ncorpus = "kb.txt"\n[budgets.max_twin_share]\nall = 0.5\nnegation = 0.2\n'))
    assert config.audit_corpus == (tmp_path / "kb.txt").resolve()
    assert dict(config.budgets.max_twin_share) == {"all": 0.5, "negation": 0.2}
    assert config.budgets.needs_audit and not config.budgets.needs_pairs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[budgets.max_twin_share]\nall = 0.5\n", 'budgets.max_twin_share: needs a corpus: set [audit] corpus = "FILE"'),
        ('[audit]\ncorpus = "missing.txt"\n[budgets.max_twin_share]\nall = 0.5\n', "audit.corpus: no such file"),
        ('[audit]\ncorpus = "kb.txt"\n[budgets.max_twin_share]\nsarcasm = 0.5\n', "budgets.max_twin_share.sarcasm: no such mode"),
        ('[audit]\ncorpus = "kb.txt"\nqueries = "q.txt"\n[budgets.max_twin_share]\nall = 0.5\n', "audit.queries: unknown key"),
    ],
)
def test_config_errors_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(_config(tmp_path, text))


def test_check_measures_the_twin_share(tmp_path, minilm, capsys):
    path = _config(
        tmp_path,
        f'models = ["{MINILM_L6}"]\nthreshold = 0.6\n[audit]\ncorpus = "kb.txt"\n[budgets.max_twin_share]\nall = 0.5\nnumerical = 0.5\n',
    )
    assert cli.main(["check", "--config", str(path), "--json", "--quiet"]) == 1
    outcomes = {o["key"]: o for o in json.loads(capsys.readouterr().out)["outcomes"] if o["budget"] == "max_twin_share"}
    # 4 of 6 passages have a twin above 0.6 (the 5/500 mg pair and the negation pair): 0.667 breaches 0.5.
    assert outcomes["all"]["status"] == "fail" and outcomes["all"]["measured"] == pytest.approx(4 / 6)
    assert outcomes["numerical"]["status"] == "pass" and outcomes["numerical"]["measured"] == pytest.approx(2 / 6)
    assert "4/6 passages" in outcomes["all"]["detail"]
