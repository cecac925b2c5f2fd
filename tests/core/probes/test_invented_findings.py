"""Invented words' finding in sentences (core.probes.invented.invented_findings), against hand-made tables."""

from __future__ import annotations

import pandas as pd

from core.probes.invented import invented_findings

L6, MP = "sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2"
READING = "entity replaced in the second sentence only"


def _by_model(rows):
    return pd.DataFrame([{"model": m, "kind": k, "mean_delta": d} for m, k, d in rows])


def test_one_model_both_kinds_and_an_interval_that_excludes_zero():
    by_model = _by_model([(L6, "plausible", 0.2134), (L6, "random", 0.2561)])
    versus = pd.DataFrame({"model": [L6], "difference": [-0.0427], "ci_low": [-0.071], "ci_high": [-0.012]})
    assert invented_findings(by_model, versus, READING) == [
        "With the entity replaced in the second sentence only, invented words lower the cosine on average by: MiniLM-L6 0.21 (plausible) "
        "and 0.26 (random).",
        "Plausible minus random: MiniLM-L6 -0.04 (95% CI -0.07 to -0.01): the kind of word matters.",
    ]


def test_two_models_an_interval_across_zero_and_edge_cases():
    by_model = _by_model([(L6, "plausible", 0.21), (MP, "plausible", 0.05)])
    versus = pd.DataFrame({"model": [L6, MP], "difference": [0.01, -0.02], "ci_low": [-0.03, -0.05], "ci_high": [0.04, 0.01]})
    first, second = invented_findings(by_model, versus, READING)
    assert first.endswith("by: MiniLM-L6 0.21 (plausible); mpnet-base 0.05 (plausible).")
    assert second == "Whether the word is plausible or random makes no difference whose 95% interval excludes 0."
    # one kind only: no plausible-vs-random table, one sentence; nothing scored, nothing said
    assert len(invented_findings(by_model, versus.iloc[:0], READING)) == 1
    assert invented_findings(by_model.iloc[:0], versus.iloc[:0], READING) == []
