"""The suite rules read what a mode is from core.lexicon, and their tables take a new category in one entry."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants, lexicon
from core.files import validators
from core.files.validators import CATEGORY_RULES, VARIANT_RULES, validate_pairs
from core.probes.retrieval import suite_checks


def _pair(category: str, text_a: str, text_b: str) -> pd.DataFrame:
    return pd.DataFrame([{"pair_id": "p1", "category": category, "text_a": text_a, "text_b": text_b}])


@pytest.mark.parametrize(
    ("category", "text_a", "text_b"),
    [
        # A verb's tense is a temporal change even without a time word (what perturb's present_to_past writes).
        (constants.CAT_TEMPORAL, "The drug reduces pain.", "The drug reduced pain."),
        # A number inside a hyphenated word is a number (scale_number_word's "three-year" -> "thirty-year").
        (constants.CAT_NUMERICAL, "A three-year contract.", "A thirty-year contract."),
        # "did not refuse" negates "refused" (add_not_do).
        (constants.CAT_NEGATION, "The witness refused to answer.", "The witness did not refuse to answer."),
    ],
)
def test_rules_accept_what_the_generator_writes(category, text_a, text_b):
    assert validate_pairs(_pair(category, text_a, text_b)) == []


def test_numbers_that_differ_in_form_only_are_no_numerical_pair():
    (problem,) = validate_pairs(_pair(constants.CAT_NUMERICAL, "Take three tablets.", "Take 3 tablets."))
    assert problem.rule == constants.CAT_NUMERICAL and "form only" in problem.message
    assert validate_pairs(_pair(constants.CAT_NUMERICAL, "Store at -18 degrees.", "Store at 18 degrees.")) == []


def test_a_new_category_is_one_table_entry(monkeypatch):
    def check_contradiction(text_a: str, text_b: str) -> str | None:
        return None if "not" in text_b else "no contradiction"

    monkeypatch.setitem(CATEGORY_RULES, "contradiction", check_contradiction)
    (problem,) = validate_pairs(_pair("contradiction", "It rains.", "It snows."))
    assert (problem.rule, problem.message) == ("contradiction", "no contradiction")
    assert validate_pairs(_pair("contradiction", "It rains.", "It does not rain.")) == []


def test_the_retrieval_suite_uses_the_same_variant_rules():
    assert suite_checks.VARIANT_RULES is VARIANT_RULES
    assert set(VARIANT_RULES) == set(lexicon.FAILURE_MODES)
    # The table is made from the records: its temporal rule is the named one's rule.
    for anchor, variant in (("The drug reduces pain.", "The drug reduced pain."), ("The drug reduces pain.", "The drug cuts pain.")):
        assert VARIANT_RULES[constants.CAT_TEMPORAL](anchor, variant) == validators.check_temporal_variant(anchor, variant)
