"""Every failure mode through the same checks, as scikit-learn's ``test_common.py`` runs every estimator.

A mode is one record (``core.lexicon.MODE_RECORDS``).  For each record: its
label, order and counts are there; it appears in every list derived from the
records (categories, labels, suite counts, validators, retrieval columns,
gate budgets, the tune report, the chart order); the shipped suites hold its
rows and the validator accepts them; the generator writes variants of it that
the pair validator, the variant validator and the guard all recognise as that
mode.  A new mode that forgets one of these fails here, named.
"""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants, lexicon
from core.files.validators import CATEGORY_RULES, VARIANT_RULES, validate_pairs
from core.gate import config as gate_config
from core.lexicon.modes import PAIR_DISTINCT, PAIR_RULES
from core.papers.reference import REFERENCE_CATEGORIES
from core.papers.suites import load_suite
from core.probes.perturb import perturb
from core.probes.retrieval import suite as retrieval_suite
from core.probes.retrieval.guard import contradiction_flags
from core.probes.retrieval.suite_files import read_retrieval_file

RECORDS = lexicon.MODE_RECORDS
IDS = [r.name for r in RECORDS]
# Sentences per mode the generator is run on (the suite's own, so every mode's words are there).
N_GENERATED = 8


@pytest.fixture(scope="module")
def suite() -> pd.DataFrame:
    return load_suite(constants.SUITE_FAILURE_MODES)


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    return read_retrieval_file()


def test_the_records_are_the_modes():
    assert tuple(IDS) == lexicon.FAILURE_MODES
    assert len(set(IDS)) == len(IDS)
    assert set(lexicon.PAPER_MODES) | set(lexicon.EXTENSION_MODES) == set(IDS)
    assert not set(lexicon.PAPER_MODES) & set(lexicon.EXTENSION_MODES)
    # The papers define six modes; paper figures are compared with those six only.
    assert len(lexicon.PAPER_MODES) == 6
    assert sorted(r.chart_rank for r in RECORDS) == list(range(len(RECORDS)))


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_record_is_whole(record):
    assert record.label and record.summary and record.cue_noun and record.no_variant_reason
    assert lexicon.mode_record(record.name) is record
    assert record.order == IDS.index(record.name)
    assert record.pair_rule in PAIR_RULES and record.variant_rule in PAIR_RULES and record.variant_rule != PAIR_DISTINCT
    assert record.suite_count > 0
    if not record.in_papers:
        # Ours, not the papers': said wherever its figures stand next to theirs.
        assert "beyond the papers" in record.label
        assert record.baseline_count == 0


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_record_is_in_every_derived_list(record):
    name = record.name
    assert name in lexicon.ADVERSARIAL_CATEGORIES
    assert lexicon.CATEGORY_LABELS[name] == record.label
    assert lexicon.SUITE_COUNTS[constants.SUITE_FAILURE_MODES][name] == record.suite_count
    assert lexicon.SUITE_COUNTS[constants.SUITE_BASELINE].get(name, 0) == record.baseline_count
    assert (name in CATEGORY_RULES) == (record.pair_rule != PAIR_DISTINCT)
    assert name in VARIANT_RULES
    assert name in retrieval_suite.MODES and name in retrieval_suite.WIDE_COLUMNS
    assert name in gate_config.AUDIT_MODES and name in gate_config.RETRIEVAL_MODES
    assert (name in REFERENCE_CATEGORIES) == record.in_papers
    assert (name in lexicon.PAPER_MODES) == record.in_papers
    assert record.label[0].lower() + record.label[1:] in lexicon.modes_in_words()


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_suite_holds_the_modes_rows_and_they_are_valid(record, suite):
    rows = suite[suite[constants.COL_CATEGORY] == record.name]
    assert len(rows) == record.suite_count
    assert validate_pairs(rows) == []
    # The guard flags most suite pairs of the mode with the mode (hand-written pairs may carry the mode's word
    # in a way the rules do not read, which the validator allows: docs/lexicon.md).
    pairs = rows[[constants.COL_TEXT_A, constants.COL_TEXT_B]].itertuples(index=False)
    flagged = sum(record.name in contradiction_flags(a, b) for a, b in pairs)
    assert flagged >= 2 / 3 * len(rows)
    if record.baseline_count:
        baseline = load_suite(constants.SUITE_BASELINE)
        assert (baseline[constants.COL_CATEGORY] == record.name).sum() == record.baseline_count


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_generator_output_is_the_mode_for_validator_and_guard(record, suite):
    texts = list(suite.loc[suite[constants.COL_CATEGORY] == record.name, constants.COL_TEXT_A][:N_GENERATED])
    made = []
    for text in texts:
        report = perturb(text)
        assert report.rejected == []
        made += [(report.text, v) for v in report.variants if v.mode == record.name]
    assert made, f"the generator wrote no {record.name} variant of its own suite's sentences"
    for text, v in made:
        rule = CATEGORY_RULES.get(record.name)
        assert rule is None or rule(text, v.text) is None, (v.rule, v.text)
        assert VARIANT_RULES[record.name](text, v.text) is None, (v.rule, v.text)
        assert record.name in contradiction_flags(text, v.text), (v.rule, v.text)
    # A sentence with no handle gets the record's reason, never a KeyError.
    assert perturb("Hello there.").not_applicable.get(record.name, record.no_variant_reason) == record.no_variant_reason


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_retrieval_suite_has_the_modes_variants(record, wide):
    rows = wide[wide[record.name] != ""]
    assert len(rows) > 0
    for anchor, variant in rows[[constants.COL_ANCHOR, record.name]].itertuples(index=False):
        assert VARIANT_RULES[record.name](anchor, variant) is None
    assert (wide[constants.COL_QUERY_MODE] == record.name).any(), "no NevIR group separates this mode"


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_gate_takes_a_budget_per_mode(record, tmp_path):
    # A budget names the mode on the shipped suite (a name outside the suites would be refused as a typo).
    path = tmp_path / "check.toml"
    path.write_text(
        f'suites = ["failure-modes"]\n[budgets.max_failure_rate]\n{record.name} = 0.5\n[budgets.max_adversarial_win_rate]\n{record.name} '
        "= 0.5\n",
        encoding="utf-8",
    )
    config = gate_config.load_config(path)
    assert dict(config.budgets.max_failure_rate) == {record.name: 0.5}
    assert dict(config.budgets.max_adversarial_win_rate) == {record.name: 0.5}
