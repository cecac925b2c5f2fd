"""core.probes.labels: what a label column means and what it allows, checked against hand computations."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core import constants
from core.probes import labels

# One model, five pairs: three matches (0.9, 0.8, 0.6) and two non-matches (0.7, 0.3).
COSINES = [0.9, 0.8, 0.6, 0.7, 0.3]


def _results(words: list[str], model: str = "m") -> pd.DataFrame:
    return pd.DataFrame({constants.COL_MODEL: model, constants.COL_COSINE: COSINES, constants.COL_LABEL: words})


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (["1", "0", "1"], labels.KIND_BINARY),
        (["True", "false", ""], labels.KIND_BINARY),
        (["entailment", "contradiction", "neutral"], labels.KIND_BINARY),
        (["paraphrase", "not paraphrase"], labels.KIND_BINARY),
        (["0.1", "2.5", "4", ""], labels.KIND_GRADED),
        (["cats", "dogs"], labels.KIND_TEXT),
        (["1", "1"], labels.KIND_BINARY),  # one class only: binary, and the report says why no classifier fits
        (["", None], labels.KIND_NONE),
    ],
)
def test_label_kind(values, kind):
    assert labels.label_kind(pd.Series(values, dtype=object)) == kind


def test_label_kind_refuses_a_list():
    with pytest.raises(TypeError, match="pandas Series"):
        labels.label_kind(["1", "0"])


def test_match_labels_reads_nli_words():
    got = labels.match_labels(pd.Series(["Entailment", "neutral", "contradiction", "maybe", ""]))
    assert got.iloc[:3].tolist() == [1.0, 0.0, 0.0]
    assert got.iloc[3:].isna().all()


def test_classifier_against_hand_computation():
    report = labels.label_report(_results(["1", "1", "1", "0", "0"]), threshold=0.5)
    row = report["classifier"].iloc[0]
    # AUC: of the 6 (match, non-match) pairs only 0.6 < 0.7 is ordered wrongly -> 5/6.
    assert row["auc"] == pytest.approx(5 / 6)
    # Youden: a cut between 0.8 and 0.7 keeps 2/3 matches and no non-match (J = 2/3), the best;
    # the strict threshold sits halfway, 0.75.
    assert row["best_threshold"] == pytest.approx(0.75)
    assert (row["best_tpr"], row["best_fpr"]) == pytest.approx((2 / 3, 0.0))
    # At 0.75: predicted 1,1,0,0,0 vs truth 1,1,1,0,0 -> accuracy 4/5; precision 1, recall 2/3 -> F1 0.8.
    assert (row["best_accuracy"], row["best_f1"]) == pytest.approx((0.8, 0.8))
    # At 0.5: predicted 1,1,1,1,0 -> accuracy 4/5; precision 3/4, recall 1 -> F1 = 1.5 / 1.75.
    assert (row["accuracy"], row["f1"]) == pytest.approx((0.8, 1.5 / 1.75))
    assert (row["n_match"], row["n_no_match"]) == (3, 2)
    roc = report["roc"]
    assert roc[["fpr", "tpr"]].iloc[0].tolist() == [0.0, 0.0] and roc[["fpr", "tpr"]].iloc[-1].tolist() == [1.0, 1.0]


def test_by_label_statistics_and_share_above():
    by = labels.label_report(_results(["paraphrase", "paraphrase", "paraphrase", "not paraphrase", "not paraphrase"]), 0.5)["by_label"]
    by = by.set_index(constants.COL_LABEL)
    mean = (0.9 + 0.8 + 0.6) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in (0.9, 0.8, 0.6)) / 2)
    assert by.loc["paraphrase", "mean"] == pytest.approx(mean)
    assert by.loc["paraphrase", "sd"] == pytest.approx(sd)
    assert by.loc["paraphrase", "median"] == pytest.approx(0.8)
    assert by.loc["paraphrase", "share_above"] == pytest.approx(1.0)
    assert by.loc["not paraphrase", "share_above"] == pytest.approx(0.5)  # 0.7 > 0.5, 0.3 is not
    assert by.loc["not paraphrase", "match"] == 0.0


def test_text_labels_give_no_classifier():
    report = labels.label_report(_results(["a", "b", "a", "b", "c"]), 0.5)
    assert report["kind"].iloc[0, 0] == labels.KIND_TEXT
    assert report["classifier"].empty and report["roc"].empty
    assert len(report["by_label"]) == 3


def test_label_report_validates():
    with pytest.raises(ValueError, match="no label column"):
        labels.label_report(pd.DataFrame({constants.COL_MODEL: ["m"], constants.COL_COSINE: [0.5]}), 0.5)
    with pytest.raises(ValueError, match="threshold"):
        labels.label_report(_results(["1", "1", "1", "0", "0"]), 2.0)


def test_typed_labels_keep_the_written_type():
    assert labels.typed_labels(pd.Series(["true", "False", ""])).tolist() == [True, False, None]
    assert labels.typed_labels(pd.Series(["1", "0", "1"])).tolist() == [1, 0, 1]
    assert labels.typed_labels(pd.Series(["0.5", "4", ""])).tolist() == [0.5, 4.0, None]
    assert labels.typed_labels(pd.Series(["entailment", "neutral"])).tolist() == ["entailment", "neutral"]


def test_labels_become_categories_only_without_categories():
    pairs = pd.DataFrame({constants.COL_CATEGORY: ["uncategorized"] * 3, constants.COL_LABEL: ["entailment", "", "neutral"]})
    assert labels.labels_as_categories(pairs)[constants.COL_CATEGORY].tolist() == ["entailment", "uncategorized", "neutral"]
    mixed = pairs.assign(**{constants.COL_CATEGORY: ["negation", "uncategorized", "uncategorized"]})
    assert labels.labels_as_categories(mixed) is mixed
    graded = pairs.assign(**{constants.COL_LABEL: ["0.1", "3.5", "4.8"]})  # a score per pair is no group
    assert labels.labels_as_categories(graded) is graded


def test_categories_that_are_their_labels_are_said_in_words_through_the_polarity_choice():
    results = pd.DataFrame({constants.COL_CATEGORY: ["0", "1", "negation", "uncategorized"], constants.COL_LABEL: ["0", "1", "0", ""]})
    assert labels.categories_in_words(results)[constants.COL_CATEGORY].tolist() == [
        "no match (0)",
        "match (1)",
        "negation",
        "uncategorized",
    ]
    flipped = labels.categories_in_words(results, "0")[constants.COL_CATEGORY].tolist()
    assert flipped[:2] == ["match (0)", "no match (1)"]  # the page's choice that 0 means "same meaning"
    graded = pd.DataFrame({constants.COL_CATEGORY: ["0.5", "3", "4.5"], constants.COL_LABEL: ["0.5", "3", "4.5"]})
    assert labels.categories_in_words(graded) is graded  # a score is no match / no-match


def _random_labelled(n: int = 40, seed: int = 3) -> pd.DataFrame:
    import numpy as np

    rng = np.random.default_rng(seed)
    words = rng.choice(["1", "0"], size=n)
    # Matches a little higher on average, with overlap, so no cut is perfect.
    cosine = np.where(words == "1", 0.7, 0.6) + rng.normal(0, 0.12, size=n)
    return pd.DataFrame({constants.COL_MODEL: "m", constants.COL_COSINE: np.clip(cosine, -1, 1), constants.COL_LABEL: words})


@pytest.mark.parametrize("match_label", [None, "1", "0", "0.0"])
def test_classifier_equals_sklearn_in_both_polarities(match_label):
    import numpy as np
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score, roc_curve

    results = _random_labelled()
    report = labels.label_report(results, 0.65, match_label)
    row = report["classifier"].iloc[0]
    cos = results[constants.COL_COSINE].to_numpy(float)
    matching = "0" if match_label in ("0", "0.0") else "1"  # "0.0" names the label 0 as a number
    truth = (results[constants.COL_LABEL] == matching).to_numpy(int)
    assert row["auc"] == pytest.approx(roc_auc_score(truth, cos), abs=1e-12)
    fpr, tpr, _ = roc_curve(truth, cos)
    j = tpr - fpr
    assert (row["best_tpr"] - row["best_fpr"]) == pytest.approx(j.max(), abs=1e-12)
    assert row["best_f1"] == pytest.approx(f1_score(truth, cos > row["best_threshold"]), abs=1e-12)
    assert row["best_accuracy"] == pytest.approx(accuracy_score(truth, cos > row["best_threshold"]), abs=1e-12)
    assert row["f1"] == pytest.approx(f1_score(truth, cos > 0.65), abs=1e-12)
    assert row["accuracy"] == pytest.approx(accuracy_score(truth, cos > 0.65), abs=1e-12)
    assert (row["n_match"], row["n_no_match"]) == (int(truth.sum()), int((1 - truth).sum()))
    assert np.isclose(report["roc"]["tpr"].max(), 1.0)


def test_naming_the_other_label_flips_the_auc():
    results = _random_labelled()
    default = labels.label_report(results, 0.5)["classifier"].iloc[0]["auc"]
    flipped = labels.label_report(results, 0.5, "0")["classifier"].iloc[0]["auc"]
    assert flipped == pytest.approx(1 - default, abs=1e-12) and default > 0.5 > flipped


def test_an_auc_below_half_is_said_in_words():
    report = labels.label_report(_results(["0", "0", "0", "1", "1"]), 0.5)  # the matches score lowest
    [finding] = labels.label_findings(report, name=lambda m: m.upper())
    assert finding.warning and finding.text.startswith("M: AUC 0.167 is below 0.5")
    assert "ranks the non-matching pairs (label 0) above the matching ones (label 1)" in finding.text
    # Where to choose another match label, in words a page shows as written: no backticks (the page escaped them into
    # literal `--match-label`).
    assert "`" not in finding.text and "“Which label means ‘same meaning’?” on the page" in finding.text
    good = labels.label_findings(labels.label_report(_results(["1", "1", "1", "0", "0"]), 0.5))
    assert not good[0].warning and "AUC 0.833" in good[0].text


def _two_models(para_mp: list[float], words: tuple[str, str] = ("paraphrase", "contradiction")) -> pd.DataFrame:
    from core.models.registry import MINILM_L6, MPNET

    label = [words[0], words[0], words[1], words[1]]
    return pd.DataFrame(
        {
            constants.COL_MODEL: [MINILM_L6] * 4 + [MPNET] * 4,
            constants.COL_LABEL: label * 2,
            constants.COL_COSINE: [0.1, 0.2, 0.8, 0.9, *para_mp, 0.8, 0.9],
        }
    )


def test_the_lead_says_the_auc_once_and_warnings_say_only_what_the_table_does_not():
    """A page said each model's AUC four times (headline, one warning per model, the table): the lead names what the AUC
    measures and who reads the groups backwards, with no number; a warning only for what the table cannot say."""
    from core.models.registry import short_name

    # MiniLM: both contradictions above both paraphrases (AUC 0); mpnet: 0.85 beats 0.8 only (1 of 4 pairs: AUC 0.25).
    report = labels.label_report(_two_models([0.3, 0.85]), 0.5)
    [lead] = labels.label_lead(report, short_name)
    assert lead.startswith("The AUC below is how often a “match (paraphrase)” pair outscores a “no match (contradiction)” pair (2 and 2")
    assert lead.endswith("; every model ranks them backwards.") and "0.25" not in lead
    [warning] = labels.label_warnings(report, "the box above")
    assert "AUC" not in warning and "if “paraphrase” is not the label for 'same meaning', name the right one (the box above)" in warning
    # The polarity choice applies: naming "contradiction" as the match turns the same scores the right way round, no warning.
    assert labels.label_warnings(labels.label_report(_two_models([0.3, 0.85]), 0.5, "contradiction")) == []
    # One class: the reason, once; text labels: nothing.
    [why] = labels.label_warnings(labels.label_report(_results(["1"] * 5), 0.5))
    assert why.startswith("No classifier: all 5 labelled pairs read as a match")
    assert labels.label_warnings(labels.label_report(_results(["a", "b", "c", "a", "b"]), 0.5)) == []


def test_cosine_by_label_names_each_label_in_words():
    """The by-label table named a label "1" beside a bare 0/1 match column: each label reads as the box plot's axis."""
    report = labels.label_report(_results(["1", "1", "0", "0", "maybe"]), 0.5, "1")
    shown = labels.by_label_in_words(report["by_label"])
    assert shown[constants.COL_LABEL].tolist() == ["match (1)", "no match (0)", "no match (maybe)"]
    assert "match" not in shown.columns and report["by_label"]["match"].tolist() == [1.0, 0.0, 0.0]
    text = labels.label_report(_results(["a", "b", "a", "b", "c"]), 0.5)["by_label"]
    assert labels.by_label_in_words(text)[constants.COL_LABEL].tolist() == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("words", "match_label", "why"),
    [
        (["1", "1", "1", "1", "1"], None, "all 5 labelled pairs read as a match (labels here: 1)"),
        (["0", "no", "0", "0", "false"], None, "all 5 labelled pairs read as no match (labels here: 0, no, false)"),
        (["a", "a", "a", "a", "a"], "a", "all 5 labelled pairs have the label 'a'"),
        (["a", "b", "a", "b", "a"], "c", "no labelled pair has the label 'c' (labels here: a, b)"),
    ],
)
def test_one_class_says_why_no_classifier_can_be_fitted(words, match_label, why):
    report = labels.label_report(pd.concat([_results(words), _results(words, model="m2")]), 0.5, match_label)  # pairs counted once
    head = report["kind"].iloc[0]
    assert head["kind"] == labels.KIND_BINARY and report["classifier"].empty and report["roc"].empty
    assert why in head["no_classifier"] and "needs both matching and non-matching pairs" in head["no_classifier"]
    assert "`" not in head["no_classifier"]  # a page shows it as written: backticks would stay literal
    [finding] = labels.label_findings(report)
    assert finding.warning and finding.text.startswith("No classifier: ")
    assert not report["by_label"].empty


def test_a_match_label_reads_any_labels_as_match_or_not():
    values = pd.Series(["contradiction", "entailment", " Contradiction", "", "neutral"])
    assert labels.match_labels(values, "contradiction").tolist()[:3] == [1.0, 0.0, 1.0]
    assert math.isnan(labels.match_labels(values, "contradiction").iloc[3])
    assert labels.match_labels(pd.Series(["1", "1.0", "0", "2"]), "1").tolist() == [1.0, 1.0, 0.0, 0.0]
    assert labels.label_kind(pd.Series(["0.1", "2.5", "4"]), "4") == labels.KIND_BINARY
    with pytest.raises(ValueError, match="empty"):
        labels.match_labels(values, "  ")


def test_label_summary_is_strict_json_with_the_findings():
    import json

    doc = labels.label_summary(labels.label_report(_results(["1", "1", "1", "0", "0"]), 0.5, "0"))
    text = json.dumps(doc, allow_nan=False)
    assert doc["match_label"] == "0" and doc["match"] == "0" and doc["no_match"] == "1"
    assert doc["classifier"][0]["auc"] == pytest.approx(1 / 6) and "below 0.5" in doc["findings"][0]
    assert json.loads(text)["by_label"][0]["label"] == "1"
    assert labels.label_values(pd.Series([" b", "a", "b", "", None])) == ["b", "a"]
