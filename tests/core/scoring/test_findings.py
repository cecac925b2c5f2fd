"""Page findings in sentences (core.scoring.findings), against hand-made tables."""

from __future__ import annotations

import math

import pandas as pd

from core.scoring.findings import compare_findings, failure_mode_findings

L6, MP = "sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2"


def test_compare_one_model_above_and_below():
    above = pd.DataFrame({"model": [L6], "cosine": [0.9312], "threshold": [0.7], "verdict": ["above threshold"]})
    assert compare_findings(above) == ["MiniLM-L6 scores this pair 0.931, above its threshold of 0.70: a retriever using it would treat the two sentences as the same."]
    below = above.assign(cosine=[0.41], verdict=["below threshold"])
    assert "below its threshold of 0.70: a retriever using it would keep them apart" in compare_findings(below)[0]
    none = above.assign(threshold=[math.nan], verdict=["no calibrated threshold"])
    assert "no calibrated threshold" in compare_findings(none)[0]
    assert compare_findings(above.iloc[:0]) == []


def test_compare_split_verdict_names_both_sides_and_the_spread():
    frame = pd.DataFrame({"model": [L6, MP], "cosine": [0.93, 0.55], "threshold": [0.7, 0.7], "verdict": ["above threshold", "below threshold"]})
    first, spread = compare_findings(frame)
    assert first.startswith("MiniLM-L6 would treat the two sentences as the same") and "mpnet" in first.lower()
    assert spread == "Cosines run from 0.550 (mpnet-base) to 0.930 (MiniLM-L6)."


def test_failure_modes_worst_mode_and_pooled_rates():
    summary = pd.DataFrame({
        "model": [L6, L6, MP, MP, L6],
        "category": ["negation", "numerical", "negation", "numerical", "positive_control"],
        "n": [10, 30, 10, 30, 20],
        "failure_rate": [0.9, 0.1, 0.5, 0.5, 1.0],
    })
    first, second = failure_mode_findings(summary, 0.7)
    assert first == "At threshold 0.70, MiniLM-L6 scores 90% of the negation pairs above the threshold: a retriever would return them as matches."
    # pooled over pairs, controls left out: L6 (9 + 3) / 40 = 30%, mpnet (5 + 15) / 40 = 50%
    assert second == "Across all failure modes, mpnet-base passes 50% of the adversarial pairs and MiniLM-L6 30%."
    assert failure_mode_findings(summary[summary["category"] == "positive_control"], 0.7) == []


def test_worst_first_puts_high_scoring_no_match_pairs_then_low_scoring_match_pairs_first():
    from core.scoring.findings import worst_first

    results = pd.DataFrame({"pair_id": ["m-hi", "n-lo", "m-lo", "n-hi", "x"], "model": [L6] * 5, "cosine": [0.9, 0.2, 0.3, 0.95, 0.99]})
    match = pd.Series([1, 0, 1, 0, float("nan")])
    assert list(worst_first(results, match)["pair_id"]) == ["n-hi", "n-lo", "m-lo", "m-hi", "x"]
    assert list(worst_first(results)["pair_id"]) == ["x", "n-hi", "m-hi", "m-lo", "n-lo"]


def test_oov_findings_name_the_reading_and_the_most_and_least_moved_models():
    from core.scoring.findings import oov_findings

    summary = pd.DataFrame({"model": [L6, MP], "mean_delta": [0.21, 0.05], "ci_low": [0.15, 0.01], "ci_high": [0.27, 0.09], "normalized_mean": [0.4, 0.1]})
    (sentence,) = oov_findings(summary, "entity replaced in the second sentence only")
    assert sentence == ("With the entity replaced in the second sentence only, MiniLM-L6's cosine drops by 0.21 on average (95% CI 0.15 to 0.27, "
                        "40% of its dynamic range) when a real name is swapped for an invented word; mpnet-base's cosine drops by 0.05 on average "
                        "(95% CI 0.01 to 0.09, 10% of its dynamic range).")
    assert oov_findings(summary.iloc[:0], "x") == []


def test_retrieval_findings_say_the_plain_rate_and_each_mitigation():
    from core import constants
    from core.scoring.findings import retrieval_findings

    rates = pd.DataFrame({"model": [L6, L6, L6], "mitigation": ["none", "guard", "none"], "mode": ["all", "all", "negation"], "win_rate": [0.91, 0.25, 0.99]})
    guard = constants.MITIGATION_LABELS.get("guard", "guard")
    assert retrieval_findings(rates) == [f"MiniLM-L6 ranks the contradiction above the restatement in 91% of the variants; {guard} brings that to 25% (lower is better)."]
    assert retrieval_findings(rates[rates["mitigation"] != "none"]) == []
