"""Shipped suites: the `run --suite all` acceptance, file schemas, and every validator rule."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from core import constants, lexicon
from core.cli import main as cli_main
from core.files.validators import (
    Violation,
    check_entity_swap,
    check_negation,
    check_numerical,
    check_quantifier,
    check_temporal,
    is_number_token,
    validate_oov,
    validate_pairs,
    word_difference,
)
from core.models.loading import load_tokenizer
from core.models.registry import MINILM_L6
from core.models.tokens import is_vocab_entry, word_pieces
from core.papers.suites import SUITE_FILES, SuiteError, load_suite, read_suite_file, replace_entity, suite_report
from core.paths import PROJECT_ROOT

PAIRS_COLUMNS = ["pair_id", "category", "domain", "text_a", "text_b", "source"]
OOV_COLUMNS = ["pair_id", "entity", "replacement", "domain", "text_a", "text_b", "replacement_tokens", "source"]
SUITE_TOTALS = {
    constants.SUITE_OOV: 20,
    constants.SUITE_BASELINE: 100,
    constants.SUITE_FAILURE_MODES: sum(lexicon.SUITE_COUNTS[constants.SUITE_FAILURE_MODES].values()),
}


# ----------------------------------------------------------------- acceptance


@pytest.fixture(scope="module")
def all_suites_run(tmp_path_factory, minilm):
    """``run --suite all`` in this process, on the session's loaded MiniLM (a subprocess spent its seconds starting up;
    ``python -m core run`` in a new process is tests/core/cli/test_run_scale.py's)."""
    out = tmp_path_factory.mktemp("run-all")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = cli_main.main(["run", "--suite", "all", "--models", MINILM_L6, "--out", str(out)])
    assert code == 0, stderr.getvalue()[-2000:]
    assert "Traceback" not in stderr.getvalue()
    return out


def test_run_all_has_every_pair_once_per_model(all_suites_run):
    pairs = pd.read_csv(all_suites_run / "pairs.csv", dtype=str, keep_default_na=False)
    assert set(constants.RESULT_COLUMNS) <= set(pairs.columns)
    mine = pairs[pairs[constants.COL_MODEL] == MINILM_L6]
    assert len(mine) == len(pairs)
    for suite, total in SUITE_TOTALS.items():
        rows = mine[mine[constants.COL_SUITE] == suite]
        assert rows[constants.COL_PAIR_ID].nunique() == total, suite
        by_category = rows.groupby(constants.COL_CATEGORY)[constants.COL_PAIR_ID].nunique().to_dict()
        assert by_category == lexicon.SUITE_COUNTS[suite], suite
    # OOV items run in three variants each; every other pair once.
    oov = mine[mine[constants.COL_SUITE] == constants.SUITE_OOV]
    assert len(oov) == 60
    assert oov.groupby(constants.COL_PAIR_ID)[constants.COL_VARIANT].apply(sorted).map(tuple).unique().tolist() == [
        tuple(sorted(constants.OOV_VARIANTS))
    ]
    assert len(mine) == 60 + 100 + SUITE_TOTALS[constants.SUITE_FAILURE_MODES]
    assert all(-1.0 <= float(c) <= 1.0 for c in mine[constants.COL_COSINE])


def test_run_all_summary(all_suites_run):
    summary = json.loads((all_suites_run / "summary.json").read_text())
    assert summary["suite"] == "all" and summary["models"] == [MINILM_L6] and summary["errors"] == {}
    for table in (
        "categories",
        "failure_modes",
        "severity",
        "dynamic_range",
        "jaccard_correlation",
        "oov_summary_replaced_both",
        "oov_summary_replaced_b",
    ):
        assert summary["tables"][table], table
    (oov,) = summary["tables"]["oov_summary_replaced_both"]
    assert oov["n"] == 20


def test_validate_command_accepts_failure_modes():
    proc = subprocess.run(
        [sys.executable, "-m", "core", "validate", "failure-modes"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith(f"{SUITE_TOTALS[constants.SUITE_FAILURE_MODES]} rows, 0 problem(s)")


def test_validate_command_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("pair_id,category,text_a,text_b\nx-1,negation,The patient has diabetes,The patient has asthma\n")
    proc = subprocess.run(
        [sys.executable, "-m", "core", "validate", str(bad)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    assert "x-1: [negation]" in proc.stdout and "1 problem(s)" in proc.stdout


# ------------------------------------------------------------- shipped files


def test_suite_files_have_documented_columns():
    for name, path in SUITE_FILES.items():
        columns = list(pd.read_csv(path, nrows=0).columns)
        assert columns == (OOV_COLUMNS if name == constants.SUITE_OOV else PAIRS_COLUMNS), name
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        assert (frame != "").all().all(), f"{name} has empty cells"
        assert set(frame["domain"]) <= set(constants.DOMAINS)


@pytest.mark.parametrize("suite", [constants.SUITE_BASELINE, constants.SUITE_FAILURE_MODES, constants.SUITE_OOV])
def test_shipped_suites_validate(suite):
    frame = read_suite_file(suite)
    assert validate_pairs(frame, lexicon.SUITE_COUNTS[suite]) == []
    assert len(frame) == SUITE_TOTALS[suite]
    assert frame[constants.COL_PAIR_ID].is_unique


def test_every_failure_mode_category_uses_all_domains():
    frame = read_suite_file(constants.SUITE_FAILURE_MODES)
    for category, group in frame.groupby(constants.COL_CATEGORY):
        assert set(group[constants.COL_DOMAIN]) == set(constants.DOMAINS), category


def test_oov_suite_validates_with_minilm_tokenizer(session_cache_dir):
    tok = load_tokenizer(MINILM_L6)
    items = read_suite_file(constants.SUITE_OOV)
    assert validate_oov(items, lambda w: is_vocab_entry(tok, w), lambda w: word_pieces(tok, w)) == []
    for row in items.itertuples(index=False):
        for text in (row.text_a, row.text_b):
            assert re.search(rf"\b{re.escape(row.entity)}\b", text), (row.pair_id, text)


def test_oov_expansion():
    items = read_suite_file(constants.SUITE_OOV)
    expanded = load_suite(constants.SUITE_OOV)
    assert len(expanded) == 3 * len(items)
    for item in items.itertuples(index=False):
        rows = expanded[expanded[constants.COL_PAIR_ID] == item.pair_id].set_index(constants.COL_VARIANT)
        orig, both, b_only = (rows.loc[v] for v in constants.OOV_VARIANTS)
        assert (orig.text_a, orig.text_b) == (item.text_a, item.text_b)
        for text in (both.text_a, both.text_b, b_only.text_b):
            assert item.replacement in text and not re.search(rf"\b{re.escape(item.entity)}\b", text)
        assert b_only.text_a == item.text_a


def test_replace_entity_is_whole_word_and_case_sensitive():
    assert replace_entity("Mars and Marshall on mars", "Mars", "Blorthos") == "Blorthos and Marshall on mars"


def test_load_suite_errors(tmp_path):
    with pytest.raises(SuiteError, match="no suite named"):
        load_suite("no-such-suite")
    with pytest.raises(SuiteError, match="unknown suite"):
        read_suite_file("no-such-suite")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(SuiteError, match="empty"):
        load_suite(str(empty))


def test_load_suite_all_and_report():
    frame = load_suite(constants.SUITE_ALL)
    assert len(frame) == 60 + 100 + SUITE_TOTALS[constants.SUITE_FAILURE_MODES]
    report = suite_report(read_suite_file(constants.SUITE_BASELINE))
    assert dict(zip(report["category"], report["pairs"], strict=True)) == lexicon.SUITE_COUNTS[constants.SUITE_BASELINE]
    assert (report["min_len"] >= 1).all() and (report["distinct_words"] > 0).all()


# ------------------------------------------------------------ validator rules


def _table(rows):
    return pd.DataFrame(rows, columns=["pair_id", "category", "domain", "text_a", "text_b"])


GOOD = {
    constants.CAT_ENTITY_SWAP: ("Alice thanked Bob.", "Bob thanked Alice."),
    constants.CAT_NUMERICAL: ("Take 5mg twice daily.", "Take 50mg twice daily."),
    constants.CAT_NEGATION: ("The patient has diabetes.", "The patient does not have diabetes."),
    constants.CAT_TEMPORAL: ("Take the pill before eating.", "Take the pill after eating."),
    constants.CAT_QUANTIFIER: ("All patients recovered.", "Some patients recovered."),
    constants.CAT_HEDGING: ("The drug cures the disease.", "The drug may help with the disease."),
}

BAD = {
    # category: (text_a, text_b, fragment of the message)
    constants.CAT_ENTITY_SWAP: ("Alice thanked Bob.", "Carol thanked Bob.", "word multisets differ"),
    constants.CAT_NUMERICAL: ("The patient took 5 mg.", "The doctor took 10 mg.", "non-number words differ"),
    constants.CAT_NEGATION: ("The patient has diabetes.", "The patient has asthma.", "same number of negation cues"),
    constants.CAT_TEMPORAL: ("Take the pill before eating.", "Take the tablet before eating.", "no temporal word"),
    constants.CAT_QUANTIFIER: ("All patients recovered.", "All patients died.", "no quantifier word"),
}


def test_good_pairs_pass_every_rule():
    rows = [(f"good-{i}", cat, "general", a, b) for i, (cat, (a, b)) in enumerate(GOOD.items())]
    assert validate_pairs(_table(rows)) == []


@pytest.mark.parametrize("category", list(BAD))
def test_each_rule_rejects_a_bad_pair(category):
    a, b, fragment = BAD[category]
    pid = f"bad-{category}"
    problems = validate_pairs(_table([(pid, category, "general", a, b)]))
    assert len(problems) == 1
    (problem,) = problems
    assert isinstance(problem, Violation)
    assert (problem.pair_id, problem.rule) == (pid, category)
    assert fragment in problem.message
    assert str(problem).startswith(f"{pid}: [{category}] ")


def test_rule_edge_cases():
    assert "identical" in check_entity_swap("Alice thanked Bob.", "alice thanked bob")
    assert check_numerical("Take 5mg.", "Take 5mg.") == "no word differs"
    assert check_numerical("Take five pills.", "Take seven pills.") is None  # number words count
    assert "too many words change" in check_negation(
        "The patient has diabetes.", "The nurse did not see any cat, dog, bird, horse, cow or sheep today."
    )
    assert "too many non-temporal" in check_temporal("We met yesterday at home.", "We met tomorrow at the big red office downtown.")
    assert check_quantifier("All patients were treated.", "No patient was treated.") is None  # agreement allowed
    assert is_number_token("$3.2m") and is_number_token("40%") and is_number_token("twice") and not is_number_token("mg")
    only_a, only_b = word_difference("a b b c", "b c d")
    assert (dict(only_a), dict(only_b)) == ({"a": 1, "b": 1}, {"d": 1})


def test_identical_sentences_are_rejected_in_any_category():
    problems = validate_pairs(_table([("same-1", constants.CAT_HEDGING, "general", "The drug works.", "the drug works")]))
    assert [(p.pair_id, p.rule) for p in problems] == [("same-1", constants.CAT_HEDGING)]
    assert "the same" in problems[0].message


def test_duplicate_pairs_and_ids_are_rejected():
    a, b = GOOD[constants.CAT_NEGATION]
    rows = [
        ("dup-1", constants.CAT_NEGATION, "medical", a, b),
        ("dup-2", constants.CAT_NEGATION, "medical", b, a),  # the same pair, sides swapped
        ("dup-1", constants.CAT_TEMPORAL, "general", *GOOD[constants.CAT_TEMPORAL]),  # an id used twice
    ]
    problems = {(p.pair_id, p.rule): p for p in validate_pairs(_table(rows))}
    assert set(problems) == {("dup-2", "no-duplicates"), ("dup-1", "unique-id")}
    assert "dup-1" in problems[("dup-2", "no-duplicates")].message


def test_wrong_counts_and_domains_are_rejected():
    rows = [
        (f"q-{i}", constants.CAT_QUANTIFIER, "general", f"All {i} patients recovered.", f"Some {i} patients recovered.") for i in range(3)
    ]
    rows.append(("d-1", constants.CAT_HEDGING, "astrology", *GOOD[constants.CAT_HEDGING]))
    problems = validate_pairs(_table(rows), {constants.CAT_QUANTIFIER: 2, constants.CAT_NEGATION: 1, constants.CAT_HEDGING: 1})
    rules = sorted((p.pair_id, p.rule, p.message) for p in problems)
    assert ("d-1", "domain") in [(p, r) for p, r, _ in rules]
    counts = [m for p, r, m in rules if r == "counts"]
    assert len(counts) == 2
    assert any("'quantifier' has 3 pairs, expected 2" in m for m in counts)
    assert any("'negation' has 0 pairs, expected 1" in m for m in counts)
    assert all(p == "*" for p, r, _ in rules if r == "counts")


def test_missing_columns_are_one_violation():
    (problem,) = validate_pairs(pd.DataFrame({"text_a": ["x"], "text_b": ["y"]}))
    assert (problem.pair_id, problem.rule) == ("*", "columns")
    assert "category" in problem.message and "pair_id" in problem.message


def test_validate_oov_rejects_bad_items(session_cache_dir):
    tok = load_tokenizer(MINILM_L6)
    items = pd.DataFrame(
        [
            ("o-1", "Google", "Xylophrix", "Google is big.", "Search with it.", "x ##yl ##op ##hri ##x"),
            ("o-2", "Google", "house", "Google is big.", "Search with Google.", ""),
            ("o-3", "Google", "Xylophrix", "Google is big.", "Search with Google.", "xylo ##phrix"),
        ],
        columns=["pair_id", "entity", "replacement", "text_a", "text_b", "replacement_tokens"],
    )
    problems = validate_oov(items, lambda w: is_vocab_entry(tok, w), lambda w: word_pieces(tok, w))
    assert [(p.pair_id, p.rule) for p in problems] == [("o-1", "oov-entity"), ("o-2", "oov-vocab"), ("o-3", "oov-split")]
    assert "text_b" in problems[0].message
