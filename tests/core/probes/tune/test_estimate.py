"""A tune's expected time: the trainer's step count, the arithmetic of the estimate and the counts it takes, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants as C
from core.models import registry
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.tune import estimate
from core.probes.tune.train import TuneConfig


def test_training_steps_are_the_trainers_count():
    # 528 rows in batches of 16 are 33 batches an epoch; three epochs are 99 steps (the measured default run's count)
    assert estimate.training_steps(528, 16, 3) == 99
    assert estimate.training_steps(529, 16, 3) == 102  # one more row is one more (short) batch an epoch
    assert estimate.training_steps(20, 16, 1.5) == 3  # ceil(1.5 × 2 batches)
    assert estimate.training_steps(528, 16, 3, max_steps=5) == 5  # the trainer's cap overrides the epochs
    assert estimate.training_steps(0, 16, 3) == 0
    for bad in ((-1, 16, 3, None), (10, 0, 3, None), (10, 16, 0, None), (10, 16, 3, 0)):
        with pytest.raises(ValueError):
            estimate.training_steps(*bad)


def test_tune_seconds_by_hand(monkeypatch):
    monkeypatch.setattr(estimate, "TRAIN_SECONDS_PER_TEXT", 0.01)
    monkeypatch.setattr(estimate, "EVAL_SECONDS_PER_TEXT", 0.002)
    config = TuneConfig(batch_size=16, epochs=2)
    # 40 triples: ceil(40 / 16) = 3 batches an epoch, 6 steps; 20 control pairs: 2 batches, 4 steps.
    # 44M parameters cost twice MiniLM-L6's 22M a text.
    # Training: 16 rows × (6 steps × 3 texts + 4 steps × 2 texts) = 416 texts × 0.01 s × 2 = 8.32 s
    # Probes: 1,000 texts × 0.002 s × 2 = 4 s; load 3 s.
    est = estimate.tune_seconds(40, 20, 1000, config, control=True, parameters=44e6, load_seconds=3.0)
    assert (est.steps, est.control_steps, est.scale, est.size_known) == (6, 4, 2.0, True)
    assert est.train_seconds == pytest.approx(8.32)
    assert est.eval_seconds == pytest.approx(4.0)
    assert est.seconds == pytest.approx(15.32)
    # Without the control: 6 × 16 × 3 = 288 texts × 0.01 × 2 = 5.76 s
    alone = estimate.tune_seconds(40, 20, 1000, config, control=False, parameters=44e6, load_seconds=3.0)
    assert alone.train_seconds == pytest.approx(5.76) and alone.control_steps == 0
    # Distillation: two more forward passes of the anchor a row, a third of a trained text each: 6 × 16 × (3 + 2/3) × 0.01 × 2
    distilling = TuneConfig(batch_size=16, epochs=2, distill=2.0)
    distilled = estimate.tune_seconds(40, 20, 0, distilling, control=False, parameters=44e6, load_seconds=0)
    assert distilled.seconds == pytest.approx(6 * 16 * (3 + 2 / 3) * 0.01 * 2)
    # A model of unknown size is taken as base-size: 110M / 22M = 5 × MiniLM-L6
    unknown = estimate.tune_seconds(40, 20, 1000, config, control=True, parameters=None, load_seconds=3.0)
    assert unknown.scale == pytest.approx(5.0) and not unknown.size_known
    assert unknown.train_seconds == pytest.approx(416 * 0.01 * 5)
    # Nothing to train (every variant already ranks below its paraphrase): only the load and the probes
    assert estimate.tune_seconds(0, 0, 1000, config, control=True, parameters=22e6, load_seconds=3.0).seconds == pytest.approx(5.0)
    bad_inputs = (
        (-1, 20, 1000, 22e6, 3.0),
        (40, -1, 1000, 22e6, 3.0),
        (40, 20, -1, 22e6, 3.0),
        (40, 20, 1000, 0.0, 3.0),
        (40, 20, 1000, 22e6, -1.0),
    )
    for rows, pairs, texts, parameters, load in bad_inputs:
        with pytest.raises(ValueError):
            estimate.tune_seconds(rows, pairs, texts, config, control=True, parameters=parameters, load_seconds=load)


def test_parameter_count_reads_the_records_size():
    assert estimate.parameter_count(registry.resolve(registry.MINILM_L6)) == 22e6
    assert estimate.parameter_count(registry.resolve(registry.MPNET)) == 110e6
    assert estimate.parameter_count(registry.ModelMeta("x", "x", parameters="1.5B")) == 1.5e9
    assert estimate.parameter_count(registry.ModelMeta("x", "x")) is None
    assert estimate.parameter_count(registry.ModelMeta("x", "x", parameters="large")) is None


def _suite(groups: int) -> RetrievalSuite:
    """``groups`` anchor groups in one domain, each an anchor, a paraphrase and a negation and a number variant, with the
    NevIR queries (q1, q2) of its negation variant."""
    passages, queries = [], []
    for g in range(groups):
        gid = f"g{g}"
        for role, mode, text in (
            (C.ROLE_ANCHOR, "", f"anchor {g}"),
            (C.ROLE_PARAPHRASE, "", f"paraphrase {g}"),
            (C.ROLE_VARIANT, C.CAT_NEGATION, f"negated {g}"),
            (C.ROLE_VARIANT, C.CAT_NUMERICAL, f"number {g}"),
        ):
            passages.append({C.COL_GROUP_ID: gid, C.COL_DOMAIN: "d", C.COL_ROLE: role, C.COL_MODE: mode, C.COL_TEXT: text})
        for which in C.QUERY_WHICH:
            queries.append(
                {C.COL_GROUP_ID: gid, C.COL_DOMAIN: "d", C.COL_QUERY_MODE: C.CAT_NEGATION, C.COL_WHICH: which, C.COL_TEXT: f"{which} {g}"}
            )
    return RetrievalSuite("hand", pd.DataFrame(passages), pd.DataFrame(queries))


def test_suite_counts_by_hand():
    counts = estimate.suite_counts(_suite(4), seed=0)
    # Half of 4 groups train: 2 groups × 2 variants = 4 rows, and each negation variant 2 more (one per query): 8
    assert counts.training_rows == 2 * 2 + 2 * 2
    # The control's distinct pairs: (anchor, paraphrase) once a group, (q1, anchor) and (q2, negated) a negation variant: 6
    assert counts.control_rows == 2 * 1 + 2 * 2
    assert counts.probe_texts == 4 * 4  # anchor, paraphrase and two variants a group, all distinct
    with pytest.raises(ValueError):
        estimate.suite_counts(RetrievalSuite("empty", _suite(1).passages.iloc[:0], _suite(1).queries.iloc[:0]), seed=0)


def test_eval_text_count_asks_what_the_run_encodes():
    labels = pd.DataFrame({C.COL_TEXT_A: ["a", "b", "a"], C.COL_TEXT_B: ["c", "c", "b"], "same": [True, False, True]})
    averaged = estimate.eval_text_count(16, TuneConfig(), control=True)
    plain = estimate.eval_text_count(16, TuneConfig(average=1.0), control=False)
    # Averaged with the control: the suite probed 4 times (untouched, tuned, before averaging, control); without both, twice.
    # The costs are encoded once per model compared: 3 with the control, 2 without.
    cost = (averaged - 16 * 4) / 3
    assert cost == (plain - 16 * 2) / 2 and cost > 0
    # Three distinct texts in the labelled pairs, encoded by each of the 3 models compared
    assert estimate.eval_text_count(16, TuneConfig(), control=True, labelled=[labels]) == averaged + 3 * 3


def test_the_estimate_scales_with_the_model_and_says_so():
    counts = estimate.SuiteCounts(training_rows=571, control_rows=236, probe_texts=1252)
    small = estimate.estimate_tune(registry.MINILM_L6, counts, TuneConfig())
    big = estimate.estimate_tune(registry.MPNET, counts, TuneConfig())
    assert big.train_seconds == pytest.approx(small.train_seconds * 5) and big.steps == small.steps
    assert small.rows == round(571 * estimate.MEASURED_FAILING_SHARE)
    words = estimate.expected_words(small)
    assert words.startswith("about ") and f"{small.steps} training steps and {small.control_steps} for the control" in words
    assert "timed on a 2-core CPU" in words and "×" not in words
    assert "× 5.0 for this model's size" in estimate.expected_words(big)
    unknown = estimate.estimate_tune("/no/such/model", counts, TuneConfig(), control=False)
    assert "unknown size" in estimate.expected_words(unknown) and "control" not in estimate.expected_words(unknown)
