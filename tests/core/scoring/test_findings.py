"""Page findings in sentences (core.scoring.findings), against hand-made tables."""

from __future__ import annotations

import math

import pandas as pd

from core.scoring.findings import compare_findings, failure_mode_findings

L6, MP = "sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2"


def test_compare_one_model_above_and_below():
    above = pd.DataFrame({"model": [L6], "cosine": [0.9312], "threshold": [0.7], "verdict": ["above threshold"]})
    assert compare_findings(above) == [
        "MiniLM-L6 scores this pair 0.931, above its threshold of 0.70: a retriever using it would treat the two sentences as the same."
    ]
    below = above.assign(cosine=[0.41], verdict=["below threshold"])
    assert "below its threshold of 0.70: a retriever using it would keep them apart" in compare_findings(below)[0]
    none = above.assign(threshold=[math.nan], verdict=["no calibrated threshold"])
    assert "no calibrated threshold" in compare_findings(none)[0]
    assert compare_findings(above.iloc[:0]) == []


def test_compare_split_verdict_names_both_sides_and_the_spread():
    frame = pd.DataFrame(
        {"model": [L6, MP], "cosine": [0.93, 0.55], "threshold": [0.7, 0.7], "verdict": ["above threshold", "below threshold"]}
    )
    first, spread = compare_findings(frame)
    assert first.startswith("MiniLM-L6 would treat the two sentences as the same") and "mpnet" in first.lower()
    assert spread == "Cosines run from 0.550 (mpnet-base) to 0.930 (MiniLM-L6)."


def test_failure_modes_worst_mode_and_pooled_rates():
    summary = pd.DataFrame(
        {
            "model": [L6, L6, MP, MP, L6],
            "category": ["negation", "numerical", "negation", "numerical", "positive_control"],
            "n": [10, 30, 10, 30, 20],
            "failure_rate": [0.9, 0.1, 0.5, 0.5, 1.0],
        }
    )
    first, second = failure_mode_findings(summary, 0.7)
    assert (
        first == "At threshold 0.70, MiniLM-L6 scores 90% of the 10 negation pairs above the threshold: a retriever would return them as "
        "matches."
    )
    # pooled over pairs, controls left out: L6 (9 + 3) / 40 = 30%, mpnet (5 + 15) / 40 = 50%
    # A failure rate is never said as a pass rate.
    assert (
        second == "Across all failure modes, mpnet-base scores 50% of the adversarial pairs above the threshold and MiniLM-L6 30% "
        "(lower is better)."
    )
    assert failure_mode_findings(summary[summary["category"] == "positive_control"], 0.7) == []


def test_no_headline_from_a_single_pair():
    """A mode of one pair above the threshold would lead with "100%": a mode needs 5 pairs to lead."""
    summary = pd.DataFrame(
        {"model": [L6, L6], "category": ["negation", "numerical"], "n": [1, 6], "failure_rate": [1.0, 0.5], "mean": [0.9, 0.7]}
    )
    first, _ = failure_mode_findings(summary, 0.7)
    assert first.startswith("At threshold 0.70, MiniLM-L6 scores 50% of the 6 numerical pairs")
    (only,) = failure_mode_findings(summary[summary["category"] == "negation"], 0.7)
    assert only.startswith("Every failure mode here has fewer than 5 pairs per model: too few for a headline")


def test_worst_first_puts_high_scoring_no_match_pairs_then_low_scoring_match_pairs_first():
    from core.scoring.findings import worst_first

    results = pd.DataFrame({"pair_id": ["m-hi", "n-lo", "m-lo", "n-hi", "x"], "model": [L6] * 5, "cosine": [0.9, 0.2, 0.3, 0.95, 0.99]})
    match = pd.Series([1, 0, 1, 0, float("nan")])
    assert list(worst_first(results, match)["pair_id"]) == ["n-hi", "n-lo", "m-lo", "m-hi", "x"]
    assert list(worst_first(results)["pair_id"]) == ["x", "n-hi", "m-hi", "m-lo", "n-lo"]


def test_oov_findings_name_the_reading_and_the_most_and_least_moved_models():
    from core.scoring.findings import oov_findings

    summary = pd.DataFrame(
        {"model": [L6, MP], "mean_delta": [0.21, 0.05], "ci_low": [0.15, 0.01], "ci_high": [0.27, 0.09], "normalized_mean": [0.4, 0.1]}
    )
    (sentence,) = oov_findings(summary, "entity replaced in the second sentence only")
    assert sentence == (
        "With the entity replaced in the second sentence only, MiniLM-L6's cosine drops by 0.21 on average (95% CI 0.15 to 0.27, "
        "40% of its dynamic range) when a real name is swapped for an invented word; mpnet-base's cosine drops by 0.05 on average "
        "(95% CI 0.01 to 0.09, 10% of its dynamic range)."
    )
    assert oov_findings(summary.iloc[:0], "x") == []


def test_retrieval_findings_say_the_plain_rate_and_each_mitigation():
    from core import constants
    from core.scoring.findings import retrieval_findings

    rates = pd.DataFrame(
        {"model": [L6, L6, L6], "mitigation": ["none", "guard", "none"], "mode": ["all", "all", "negation"], "win_rate": [0.91, 0.25, 0.99]}
    )
    guard = constants.MITIGATION_LABELS.get("guard", "guard")
    assert retrieval_findings(rates) == [
        f"MiniLM-L6 ranks the contradiction above the restatement in 91% of the variants; {guard} brings that to 25% (lower is better)."
    ]
    assert retrieval_findings(rates[rates["mitigation"] != "none"]) == []


def test_retrieval_findings_put_fixed_broken_and_ties_beside_each_mitigations_rate():
    """An unchanged net rate can hide flips both ways, and a win turned into a tie is no fix."""
    from core import constants
    from core.scoring.findings import retrieval_findings

    rates = pd.DataFrame({"model": [L6, L6], "mitigation": ["none", "guard"], "mode": ["all", "all"], "win_rate": [0.05, 0.05]})
    summary = pd.DataFrame({"model": [L6, L6], "mitigation": ["none", "guard"], "ties": [0, 1], "fixed": [0, 2], "broken": [0, 2]})
    guard = constants.MITIGATION_LABELS.get("guard", "guard")
    assert retrieval_findings(rates, summary) == [
        f"MiniLM-L6 ranks the contradiction above the restatement in 5% of the variants; {guard} brings that to 5% (2 fixed, 2 broken, 1 "
        "tie) (lower is better)."
    ]


def test_retrieval_headline_is_one_sentence_and_a_table():
    """Four models once said "(lower is better)" four times: one sentence names the range and the best fix, the table the rest."""
    from core import constants
    from core.scoring.findings import retrieval_headline

    rates = pd.DataFrame(
        {
            "model": [L6, L6, MP, MP],
            "mitigation": ["none", "guard", "none", "guard"],
            "mode": ["all"] * 4,
            "win_rate": [0.91, 0.25, 0.60, 0.40],
        }
    )
    summary = pd.DataFrame(
        {
            "model": [L6, L6, MP, MP],
            "mitigation": ["none", "guard"] * 2,
            "ties": [0, 1, 0, 0],
            "fixed": [0, 9, 0, 3],
            "broken": [0, 2, 0, 1],
        }
    )
    guard = constants.MITIGATION_LABELS["guard"]
    lead, table = retrieval_headline(rates, summary)
    assert lead == (
        "With the plain cosine, models rank the contradiction above the restatement for 60% (mpnet-base) to 91% (MiniLM-L6) of the "
        f"variants; {guard} brings MiniLM-L6 to 25% (lower is better; the table gives every model and fix)."
    )
    assert lead.count("lower is better") == 1
    assert table["mitigation"].tolist() == [constants.MITIGATION_LABELS["none"], guard] * 2
    assert table["fixed"].iloc[1] == 9 and pd.isna(table["fixed"].iloc[0])  # the plain cosine fixes nothing: blank, not 0
    assert retrieval_headline(rates[rates["mitigation"] != "none"])[0] == ""


def test_triples_and_beir_findings_by_hand():
    """Triples and BEIR results lead with a sentence, each mitigation's effect with what it flipped."""
    from core import constants
    from core.scoring.findings import beir_findings, triples_findings

    rrf = constants.MITIGATION_LABELS.get("bm25-rrf", "bm25-rrf")
    triples = pd.DataFrame(
        {
            "model": [L6, L6],
            "mitigation": ["none", "bm25-rrf"],
            "n": [24, 24],
            "ties": [0, 2],
            "win_rate": [0.25, 0.125],
            "fixed": [0, 3],
            "broken": [0, 1],
            "n_queries": [23, 23],
            "recall_at_1": [0.739, 0.696],
            "recall_gained": [0, 1],
            "recall_lost": [0, 2],
            "tied_queries": [1, 0],
        }
    )
    assert triples_findings(triples) == [
        "MiniLM-L6 ranks a negative above its positive in 25% of 24 triples and ranks a positive first for 74% of 23 anchors "
        f"(1 decided by an exact tie); {rrf} brings those to 12% (3 fixed, 1 broken, 2 ties) and 70% (1 gained, 2 lost) "
        "(win rate: lower is better; recall@1: higher is better)."
    ]
    beir = triples.drop(columns=["n", "ties", "win_rate", "fixed", "broken"]).assign(ndcg_at_10=[0.866, 0.8])
    assert beir_findings(beir) == [
        "By your judgements, MiniLM-L6 ranks a relevant passage first (recall@1) for 74% of 23 queries, nDCG@10 0.866 (1 query decided "
        "by an "
        f"exact tie, broken by passage id as trec_eval does); {rrf} brings recall@1 to 70% (1 gained, 2 lost)."
    ]
    assert triples_findings(triples.iloc[1:]) == [] and beir_findings(beir.iloc[1:]) == []


def test_triples_and_beir_findings_say_several_models_once():
    """Several models: one sentence with the range over them and the mitigation that moved a model most (by hand), not
    a sentence per model repeating the table below it."""
    from core import constants
    from core.scoring.findings import beir_findings, triples_findings

    guard = constants.MITIGATION_LABELS.get("guard", "guard")
    triples = pd.DataFrame(
        {
            "model": [L6, L6, MP, MP],
            "mitigation": ["none", "guard", "none", "guard"],
            "n": [24] * 4,
            "ties": [0, 1, 0, 0],
            "win_rate": [0.25, 0.125, 0.5, 0.25],  # moves: 0.125 (L6), 0.25 (mpnet): mpnet's is the largest
            "fixed": [0, 3, 0, 6],
            "broken": [0, 0, 0, 0],
            "n_queries": [23] * 4,
            "recall_at_1": [0.75, 0.75, 0.5, 0.5],
            "recall_gained": [0, 0, 0, 0],
            "recall_lost": [0, 0, 0, 0],
            "tied_queries": [0] * 4,
        }
    )
    said = triples_findings(triples)
    assert said == [
        "Models rank a negative above its positive in 25% (MiniLM-L6) to 50% (mpnet-base) of 24 triples and a positive first for "
        f"50% (mpnet-base) to 75% (MiniLM-L6) of 23 anchors; {guard} moves mpnet-base from 50% to 25% (6 fixed, 0 broken, 0 ties) "
        "(win rate: lower is better; recall@1: higher is better; the table gives every model and mitigation)."
    ]
    beir = triples.drop(columns=["n", "ties", "win_rate", "fixed", "broken"]).assign(
        recall_at_1=[1.0, 4 / 6, 1.0, 1.0], recall_lost=[0, 2, 0, 0], ndcg_at_10=[1.0, 0.8, 0.9, 0.9]
    )
    assert beir_findings(beir) == [
        "By your judgements, the models rank a relevant passage first (recall@1) for 100% (every model) of 23 queries, nDCG@10 "
        f"0.900 to 1.000; {guard} moves MiniLM-L6's recall@1 from 100% to 67% (0 gained, 2 lost) (the tables below give every "
        "model and mitigation)."
    ]


def _perturbed(model, rows):
    return pd.DataFrame(
        [
            {"model": model, "category": c, "text_b": t, "cosine": x, "verdict": "above threshold" if x > 0.7 else "below threshold"}
            for c, t, x in rows
        ]
    )


def test_perturbation_one_model_counts_and_names_the_closest_variant():
    from core.scoring.findings import perturbation_findings

    table = _perturbed(
        L6,
        [
            ("negation", "Google did not acquire YouTube", 0.81),
            ("entity_swap", "YouTube acquired Google", 0.9712),
            ("temporal", "Google will acquire YouTube", 0.62),
        ],
    )
    assert perturbation_findings(table) == [
        "MiniLM-L6 keeps 2 of 3 variants above its threshold: a retriever would return them as the same sentence.",
        "It scores “YouTube acquired Google” (entity/role swap, 0.971) closest to the original.",
    ]
    assert perturbation_findings(table.iloc[:0]) == []


def test_perturbation_two_models_one_sentence_each_for_counts_and_closest():
    from core.scoring.findings import perturbation_findings

    table = pd.concat(
        [
            _perturbed(L6, [("negation", "A is not B", 0.81), ("hedging", "A may be B", 0.75)]),
            _perturbed(MP, [("negation", "A is not B", 0.66), ("hedging", "A may be B", 0.69)]),
        ]
    )
    assert perturbation_findings(table) == [
        "Variants above each model's threshold (returned as the same sentence): MiniLM-L6 2 of 2, mpnet-base 0 of 2.",
        "Closest to the original: MiniLM-L6 “A is not B” (negation, 0.810); mpnet-base “A may be B” (hedging, 0.690).",
    ]
    uncalibrated = table.assign(verdict=["above threshold", "below threshold", "no calibrated threshold", "no calibrated threshold"])
    assert perturbation_findings(uncalibrated)[0].endswith("MiniLM-L6 1 of 2, mpnet-base no calibrated threshold.")
    alone = uncalibrated[uncalibrated["model"] == MP]
    assert perturbation_findings(alone)[0] == "mpnet-base has no calibrated threshold yet, so no variant is judged."


def _split(model, text, same, words):
    return {"model": model, "text": text, "identical_across_models": same, "words": [{"word": w, "pieces": p} for w, p in words]}


def test_split_two_models_count_differing_lines_and_the_most_split_word():
    from core.scoring.findings import split_findings

    rows = [
        _split(L6, "Xylophrix", False, [("Xylophrix", ["x", "##yl", "##op", "##hri", "##x"])]),
        _split(L6, "the cat", True, [("the", ["the"]), ("cat", ["cat"])]),
        _split(MP, "Xylophrix", False, [("Xylophrix", ["xy", "##lo", "##phrix"])]),
        _split(MP, "the cat", True, [("the", ["the"]), ("cat", ["cat"])]),
    ]
    assert split_findings(rows) == ["The models split 1 of 2 lines differently.", "“Xylophrix” splits most: 5 pieces under MiniLM-L6."]
    same = [r | {"identical_across_models": True} for r in rows if r["text"] == "the cat"]
    assert split_findings(same) == [
        "All 2 models split the line the same way.",
        "“the” splits most: 1 piece under MiniLM-L6 and mpnet-base.",
    ]


def test_split_one_model_says_only_the_most_split_word_and_nothing_for_no_rows():
    from core.scoring.findings import split_findings

    rows = [_split(L6, "Wompelfritz", True, [("Wompelfritz", ["wo", "##mp", "##elf", "##ritz"])])]
    assert split_findings(rows) == ["“Wompelfritz” splits most: 4 pieces under MiniLM-L6."]
    assert split_findings([]) == []
