"""A gate run: pairs gathered (controls added when needed), thresholds chosen, budgets evaluated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import constants, lexicon
from core.gate import run as gate
from core.gate.config import ConfigError, load_config
from core.models.registry import MINILM_L6
from core.papers.suites import load_suite
from core.probes import calibration


def _config(tmp_path: Path, text: str):
    path = tmp_path / "check.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def _pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.csv"
    path.write_text(
        "text_a,text_b,category\n"
        "The gate patient has diabetes,The gate patient does not have diabetes,negation\n"
        "The gate invoice is paid,The gate invoice is not paid,negation\n"
        "The gate dog chased the cat,The gate cat chased the dog,entity_swap\n",
        encoding="utf-8",
    )
    return path


def test_gather_pairs_adds_the_controls_a_calibrated_gate_needs(tmp_path):
    _pairs_file(tmp_path)
    config = _config(tmp_path, 'files = ["mine.csv"]\nthreshold_mode = "calibrated"\n[budgets.max_failure_rate]\nnegation = 0.5\n')
    pairs, notes = gate.gather_pairs(config)
    suite = load_suite(constants.SUITE_FAILURE_MODES)
    expected_controls = suite[suite.category.isin([constants.CAT_POSITIVE, constants.CAT_NEGATIVE])]
    assert len(pairs) == 3 + len(expected_controls)
    assert (pairs.category == constants.CAT_POSITIVE).sum() == (expected_controls.category == constants.CAT_POSITIVE).sum()
    assert any("added the failure-mode suite's" in n for n in notes)


def test_gather_pairs_keeps_a_suite_with_its_own_controls(tmp_path):
    config = _config(tmp_path, "[budgets]\nmin_control_auc = 0.9\n")
    pairs, notes = gate.gather_pairs(config)
    assert len(pairs) == sum(lexicon.SUITE_COUNTS[constants.SUITE_FAILURE_MODES].values())
    assert notes == []


def _synthetic(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for model, shift in (("a", 0.0), ("b", 0.1)):
        for cat, mean, n in (("positive", 0.8, 30), ("negative", 0.2, 30), ("negation", 0.75, 40)):
            frames.append(pd.DataFrame({"model": model, "category": cat, "cosine": np.clip(rng.normal(mean + shift, 0.08, n), -1, 1)}))
    return pd.concat(frames, ignore_index=True)


def test_calibrated_thresholds_are_each_models_youden_cut(tmp_path):
    config = _config(tmp_path, 'threshold_mode = "calibrated"\n[budgets.max_failure_rate]\nnegation = 0.5\n')
    results = _synthetic()
    thresholds, table = gate.choose_thresholds(config, results)
    for model in ("a", "b"):
        rows = results[results.model == model]
        cut = calibration.youden_threshold(rows[rows.category == "positive"].cosine, rows[rows.category == "negative"].cosine)
        assert thresholds[model] == pytest.approx(cut.threshold)
    assert set(table["model"]) == {"a", "b"}
    outcomes = gate.evaluate(config, results, thresholds)
    for o in outcomes:
        cos = results[(results.model == o.model) & (results.category == "negation")].cosine.to_numpy()
        assert o.measured == pytest.approx(np.mean(cos > thresholds[o.model]))


def test_global_thresholds_and_model_errors(tmp_path):
    config = _config(tmp_path, "threshold = 0.7\n[budgets]\nmin_control_auc = 0.9\n[budgets.max_failure_rate]\nnegation = 0.9\n")
    results = _synthetic()
    thresholds, _ = gate.choose_thresholds(config, results)
    assert thresholds == {"a": 0.7, "b": 0.7}
    outcomes = gate.evaluate(config, results, thresholds, errors={"broken": "broken: did not load"})
    names = [(o.model, o.name) for o in outcomes]
    assert names == [
        ("a", "max_failure_rate[negation]"),
        ("b", "max_failure_rate[negation]"),
        ("a", "min_control_auc"),
        ("b", "min_control_auc"),
        ("broken", "max_failure_rate[negation]"),
        ("broken", "min_control_auc"),
    ]
    assert [o.status for o in outcomes if o.model == "broken"] == ["error", "error"]


def test_retrieval_budgets_read_the_retrieval_tables(tmp_path):
    config = _config(tmp_path, "[budgets]\nmin_paired_accuracy = 0.5\n[budgets.max_adversarial_win_rate]\nnegation = 0.2\n")
    win = pd.DataFrame(
        [("a", "none", "negation", 10, 1, 0.1, 0.0, 0.3)],
        columns=["model", "mitigation", "mode", "n", "wins", "win_rate", "ci_low", "ci_high"],
    )
    paired = pd.DataFrame(
        [("a", "none", "all", 8, 3, 0.375, 0.1, 0.7, 0.25)],
        columns=["model", "mitigation", "mode", "n", "paired_correct", "paired_accuracy", "ci_low", "ci_high", "random"],
    )
    outcomes = gate.evaluate(config, pd.DataFrame(), {}, {"win_rates": win, "paired": paired})
    assert [(o.name, o.status) for o in outcomes] == [("max_adversarial_win_rate[negation]", "pass"), ("min_paired_accuracy[all]", "fail")]


def test_an_unreadable_file_is_a_config_error_before_any_model_loads(tmp_path):
    path = _pairs_file(tmp_path)
    config = _config(tmp_path, 'files = ["mine.csv"]\n[budgets.max_failure_rate]\nnegation = 0.5\n')
    path.write_bytes(b"\x00\x01 not a table")
    with pytest.raises(ConfigError, match=r"^files\[0\]"):
        gate.run_check(config, ["no/such-model-is-loaded"])


def test_run_check_on_minilm(tmp_path, minilm):
    _pairs_file(tmp_path)
    config = _config(
        tmp_path,
        'files = ["mine.csv"]\nthreshold = 0.5\n[budgets]\nmin_control_auc = 0.9\n[budgets.max_failure_rate]\nnegation = '
        "1.0\nentity_swap = 0.0\n",
    )
    run = gate.run_check(config, [MINILM_L6])
    assert run.errors == {}
    by_name = {o.name: o for o in run.outcomes}
    # "cat chased dog" vs "dog chased cat" shares every word: far above 0.5, so a zero budget is breached.
    assert by_name["max_failure_rate[entity_swap]"].status == "fail"
    assert by_name["max_failure_rate[negation]"].status == "pass"
    rows = run.results[(run.results.model == MINILM_L6) & (run.results.category == "negation")]
    assert by_name["max_failure_rate[negation]"].measured == pytest.approx(np.mean(rows.cosine.to_numpy() > 0.5))
    assert run.exit_code == 1


def test_retrieval_budgets_without_the_retrieval_probes_are_a_config_error(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "core.probes.retrieval.run", None)  # what an installation without them looks like
    config = _config(tmp_path, "[budgets.max_adversarial_win_rate]\nnegation = 0.5\n")
    with pytest.raises(
        ConfigError, match=r"^budgets\.max_adversarial_win_rate / min_paired_accuracy: the retrieval probes are not available"
    ):
        gate.run_check(config, [MINILM_L6])


# ---------------------------------------------------------------- The gate on the file's own labels

LABELLED = (
    "premise,hypothesis,gold\n"
    "The gate cat sleeps on the mat.,The gate cat is sleeping on the mat.,1\n"
    "The gate cat sleeps on the mat.,The gate cat does not sleep on the mat.,0\n"
    "A gate man plays the guitar.,A gate man is playing a guitar.,1\n"
    "A gate man plays the guitar.,A gate man never plays the guitar.,0\n"
    "She bought three gate apples.,She purchased three gate apples.,1\n"
    "She bought three gate apples.,She bought no gate apples.,0\n"
)


def _labelled_config(tmp_path: Path, extra: str = "") -> gate.CheckConfig:
    (tmp_path / "nli.csv").write_text(LABELLED, encoding="utf-8")
    return _config(
        tmp_path,
        f'files = ["nli.csv"]\n{extra}\n[budgets]\nmin_label_auc = 0.5\nmin_control_auc = 0.5\n[budgets.max_failure_rate]\n"0" = 1.0\n',
    )


def test_a_files_labels_become_its_categories_not_uncategorized(tmp_path):
    pairs, notes = gate.gather_pairs(_labelled_config(tmp_path))
    from_file = pairs[pairs[constants.COL_SUITE] == "nli"]
    assert set(from_file[constants.COL_CATEGORY]) == {"0", "1"}
    assert any("label is used as its category" in n for n in notes)


def test_label_auc_is_measured_on_the_files_labels_not_the_controls(tmp_path, minilm):
    from sklearn.metrics import roc_auc_score

    for match, config in ((None, _labelled_config(tmp_path)), ("0", _labelled_config(tmp_path, '[labels]\nmatch = "0"'))):
        run = gate.run_check(config, [MINILM_L6])
        outcome = {o.budget: o for o in run.outcomes}
        mine = run.results[run.results[constants.COL_SUITE] == "nli"]
        truth = (mine[constants.COL_LABEL] == (match or "1")).to_numpy(int)
        assert outcome["min_label_auc"].measured == pytest.approx(roc_auc_score(truth, mine[constants.COL_COSINE]), abs=1e-12)
        assert outcome["min_label_auc"].n == 6  # the file's six pairs, none of the appended controls
        assert outcome["min_control_auc"].n > 6
        assert outcome["max_failure_rate"].key == "0" and outcome["max_failure_rate"].n == 3
    assert run.outcomes[0].budget == "max_failure_rate"


def test_label_auc_budget_errors_say_why(tmp_path):
    from core.gate.budgets import label_auc_outcomes

    results = pd.DataFrame({"model": "m", "category": "x", "cosine": [0.9, 0.8], "label": ["1", "1"]})
    [one_class] = label_auc_outcomes(results, 0.8)
    assert one_class.status == "error" and "needs both matching and non-matching pairs" in one_class.error
    [no_labels] = label_auc_outcomes(results.drop(columns="label"), 0.8)
    assert no_labels.error == "the files have no label column" and "label AUC: not measured" in no_labels.message
    [graded] = label_auc_outcomes(results.assign(label=["0.5", "2.5"]).pipe(lambda f: pd.concat([f, f.assign(label="4")])), 0.8)
    assert "name the value that means 'same meaning'" in graded.error


def test_label_auc_config_needs_files_and_a_plain_match_value(tmp_path):
    with pytest.raises(ConfigError, match="budgets.min_label_auc: measures the files' own labels"):
        _config(tmp_path, "[budgets]\nmin_label_auc = 0.8\n")
    (tmp_path / "nli.csv").write_text(LABELLED, encoding="utf-8")
    with pytest.raises(ConfigError, match="labels.match: expected the label value"):
        _config(tmp_path, 'files = ["nli.csv"]\n[labels]\nmatch = true\n[budgets]\nmin_label_auc = 0.8\n')
    with pytest.raises(ConfigError, match="labels.colour: unknown key; known keys here: column, match"):
        _config(tmp_path, 'files = ["nli.csv"]\n[labels]\ncolour = 1\n[budgets]\nmin_label_auc = 0.8\n')
    assert _config(tmp_path, 'files = ["nli.csv"]\n[labels]\nmatch = 0\n[budgets]\nmin_label_auc = 0.8\n').match_label == "0"
    with pytest.raises(ConfigError, match="labels: reads the files' labels"):
        _config(tmp_path, '[labels]\nmatch = "0"\n[budgets]\nmin_control_auc = 0.8\n')


def test_the_label_column_is_named_in_the_config(tmp_path):
    (tmp_path / "neg.csv").write_text(LABELLED.replace("gold", "is_negated"), encoding="utf-8")
    unnamed = _config(tmp_path, 'files = ["neg.csv"]\n[budgets]\nmin_label_auc = 0.5\n')
    assert constants.COL_LABEL not in gate.gather_pairs(unnamed)[0].columns  # not a name the reader guesses
    named = _config(tmp_path, 'files = ["neg.csv"]\n[labels]\ncolumn = "is_negated"\n[budgets]\nmin_label_auc = 0.5\n')
    pairs, _ = gate.gather_pairs(named)
    assert pairs[constants.COL_LABEL].tolist() == ["1", "0"] * 3 and set(pairs[constants.COL_CATEGORY]) == {"0", "1"}
