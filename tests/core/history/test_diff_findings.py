"""History's finding in sentences (core.history.diff.diff_findings), against hand-made runs."""

from __future__ import annotations

import pandas as pd

from core.history.diff import diff_findings, diff_runs

L6 = "sentence-transformers/all-MiniLM-L6-v2"


def _run(cosines):
    return pd.DataFrame(
        {
            "model": L6,
            "suite": "s",
            "category": ["negation", "negation", "positive"],
            "pair_id": ["1", "2", "3"],
            "text_a": ["a", "b", "c"],
            "text_b": ["x", "y", "z"],
            "cosine": cosines,
        }
    )


def test_largest_change_and_crossings_in_two_sentences():
    diff = diff_runs(_run([0.60, 0.65, 0.90]), _run([0.80, 0.75, 0.90]), 0.7, 0.7)
    first, second = diff_findings(diff, 3, 5)
    # negation: mean 0.625 -> 0.775, +0.15; both pairs crossed up; positive unchanged
    assert first.startswith("From run #3 to run #5, the largest change is MiniLM-L6 on negation pairs: mean cosine +0.1500 (95% CI ")
    assert second == "2 pair scores crossed the threshold: 2 now above, 0 now below."


def test_identical_runs_and_runs_sharing_nothing():
    run = _run([0.60, 0.65, 0.90])
    assert diff_findings(diff_runs(run, run, 0.7, 0.7), 1, 2) == [
        "Run #2 scores the 3 pairs it shares with run #1 as run #1 did.",
        "No pair crossed the threshold.",
    ]
    other = run.assign(text_a=["d", "e", "f"])
    assert diff_findings(diff_runs(run, other, 0.7, 0.7), 1, 2) == []


def test_a_users_own_category_keeps_its_spelling_and_one_crossing_is_singular():
    before = _run([0.60, 0.80, 0.90]).assign(category="Contract Clauses")
    first, second = diff_findings(diff_runs(before, before.assign(cosine=[0.75, 0.80, 0.90]), 0.7, 0.7), 1, 2)
    assert " on Contract Clauses pairs: mean cosine +0.0500" in first
    assert second == "1 pair score crossed the threshold: 1 now above, 0 now below."
