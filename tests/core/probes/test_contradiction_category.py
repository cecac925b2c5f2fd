"""`contradiction`, a contradiction of no named mode, is accepted wherever a failure mode is."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants, lexicon
from core.files.validators import validate_pairs
from core.gate.config import parse_config
from core.papers.failure_modes import failure_mode_table
from core.probes.retrieval import tables
from core.probes.retrieval.convert import pairs_to_suite
from core.probes.retrieval.suite_files import suite_from_bytes

PAIRS = pd.DataFrame(
    {
        constants.COL_TEXT_A: ["A man plays a guitar.", "A man plays a guitar.", "Two dogs run outside."],
        constants.COL_TEXT_B: ["A man is performing music.", "The stage is empty and silent.", "Two cats sleep indoors."],
        constants.COL_CATEGORY: ["positive", "contradiction", "contradiction"],
    }
)


def test_a_pairs_file_of_natural_contradictions_ranks():
    suite = pairs_to_suite(PAIRS, "nli")
    variants = suite.passages[suite.passages[constants.COL_ROLE] == constants.ROLE_VARIANT]
    assert list(variants[constants.COL_MODE]) == ["contradiction"]
    assert not any("ignored" in n and "contradiction" in n for n in suite.notes)


def test_an_upload_with_contradictions_is_a_suite():
    data = PAIRS.to_csv(index=False).encode()
    suite = suite_from_bytes(data, "nli.csv")
    assert constants.CAT_CONTRADICTION in set(suite.passages[constants.COL_MODE])


def test_validator_has_no_rule_for_it_but_checks_distinctness():
    pairs = PAIRS.assign(pair_id=["a", "b", "c"])
    assert validate_pairs(pairs) == []
    same = pairs.assign(text_b=pairs[constants.COL_TEXT_A])
    assert any(v.rule == "contradiction" for v in validate_pairs(same))


def test_win_rates_order_it_after_the_named_modes():
    scores = pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_MITIGATION: "none",
            constants.COL_GROUP_ID: ["g1", "g1"],
            constants.COL_MODE: ["contradiction", "negation"],
            constants.COL_WIN: [True, False],
        }
    )
    table = tables.win_rate_table(scores, n_resamples=50)
    assert list(table[constants.COL_MODE]) == ["negation", "contradiction", "all"]


def test_gate_budgets_accept_it_and_list_the_valid_modes(tmp_path):
    config = parse_config({"budgets": {"max_adversarial_win_rate": {"contradiction": 0.4}}}, tmp_path / "check.toml")
    assert dict(config.budgets.max_adversarial_win_rate) == {"contradiction": 0.4}
    with pytest.raises(ValueError, match=f"no such mode; modes: {', '.join(lexicon.ADVERSARIAL_CATEGORIES)}, all"):
        parse_config({"budgets": {"max_adversarial_win_rate": {"contradictions": 0.4}}}, tmp_path / "check.toml")


def test_summaries_report_it_beside_the_failure_modes():
    results = pd.DataFrame(
        {
            constants.COL_MODEL: "m",
            constants.COL_SUITE: "nli",
            constants.COL_PAIR_ID: ["a", "b", "c", "d"],
            constants.COL_CATEGORY: ["positive", "positive", "contradiction", "contradiction"],
            constants.COL_COSINE: [0.9, 0.8, 0.7, 0.75],
        }
    )
    table = failure_mode_table(results, 0.7)
    assert list(table[constants.COL_CATEGORY]) == ["contradiction"]
    assert lexicon.CATEGORY_LABELS[constants.CAT_CONTRADICTION].startswith("Contradiction")
