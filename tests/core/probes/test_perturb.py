"""Perturbation rules on sentences they must change and sentences they must leave alone."""

from __future__ import annotations

import pytest

from core import constants, lexicon
from core.probes.perturb import perturb


def _by_rule(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in perturb(text).variants:
        out.setdefault(v.rule, []).append(v.text)
    return out


@pytest.mark.parametrize(
    ("text", "rule", "expected"),
    [
        # negation
        ("The patient is allergic to penicillin", "add_not_aux", "The patient is not allergic to penicillin"),
        ("The tenant must pay rent", "add_not_aux", "The tenant must not pay rent"),
        ("Google acquired YouTube", "add_not_do", "Google did not acquire YouTube"),
        ("The drug reduces symptoms", "add_not_do", "The drug does not reduce symptoms"),
        ("The report shows growth", "add_not_do", "The report does not show growth"),
        ("The patients report severe pain", "add_not_do", "The patients do not report severe pain"),
        ("The patient is not allergic to penicillin", "remove_not", "The patient is allergic to penicillin"),
        ("The contract doesn't cover water damage", "remove_not", "The contract covers water damage"),
        ("The defendant did not sign the agreement", "remove_not", "The defendant signed the agreement"),
        ("We never share your data", "remove_never_no", "We share your data"),
        ("No evidence links vaccines to autism", "remove_never_no", "Some evidence links vaccines to autism"),
        # numerical
        ("Take 5 mg of the drug twice daily", "scale_number", "Take 50 mg of the drug twice daily"),
        ("Revenue grew 15% in 2023", "scale_number", "Revenue grew 150% in 2023"),
        ("The loan is 2.5 million dollars", "scale_number", "The loan is 25 million dollars"),
        ("The fine is 1,200 dollars", "scale_number", "The fine is 12,000 dollars"),
        ("The tablet costs 0.25 dollars", "scale_number", "The tablet costs 2.5 dollars"),
        ("Three patients died", "scale_number_word", "Thirty patients died"),
        # entity / role swap
        ("Google acquired YouTube", "swap_entities", "YouTube acquired Google"),
        ("The flight from Paris to London was delayed", "swap_entities", "The flight from London to Paris was delayed"),
        ("YouTube was acquired by Google in 2006", "swap_entities", "Google was acquired by YouTube in 2006"),
        ("The dog bit the man", "swap_roles", "The man bit the dog"),
        ("The landlord sued the tenant in court", "swap_roles", "The tenant sued the landlord in court"),
        # temporal
        ("Take the pill before meals", "swap_temporal_word", "Take the pill after meals"),
        ("The shipment arrived yesterday", "swap_temporal_word", "The shipment arrived tomorrow"),
        ("Google acquired YouTube", "past_to_future", "Google will acquire YouTube"),
        ("The flight was delayed", "past_to_future", "The flight will be delayed"),
        ("The company will release the product", "future_to_past", "The company released the product"),
        ("The patient is allergic to penicillin", "present_to_past", "The patient was allergic to penicillin"),
        ("The drug reduces symptoms", "present_to_past", "The drug reduced symptoms"),
        ("The patients report severe pain", "present_to_past", "The patients reported severe pain"),
        # quantifier
        ("All patients responded to the treatment", "swap_quantifier", "Some patients responded to the treatment"),
        ("All patients responded to the treatment", "swap_quantifier", "No patients responded to the treatment"),
        ("Few employees were promoted", "swap_quantifier", "Many employees were promoted"),
        ("The patients recovered quickly", "add_quantifier", "All patients recovered quickly"),
        # hedging
        ("The drug may reduce symptoms", "remove_hedge", "The drug reduces symptoms"),
        ("The drugs might reduce symptoms", "remove_hedge", "The drugs reduce symptoms"),
        ("Some evidence suggests that coffee prevents cancer", "remove_hedge", "Coffee prevents cancer"),
        ("The bridge possibly collapsed", "remove_hedge", "The bridge collapsed"),
        ("The drug reduces symptoms", "add_hedge", "The drug may reduce symptoms"),
        ("The patient is not allergic to penicillin", "add_hedge", "The patient may not be allergic to penicillin"),
        ("Google acquired YouTube", "add_hedge", "Some evidence suggests that Google acquired YouTube"),
        ("The dog bit the man", "add_hedge", "Some evidence suggests that the dog bit the man"),
    ],
)
def test_rule_makes_expected_variant(text, rule, expected):
    assert expected in _by_rule(text).get(rule, []), _by_rule(text)


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("The patient is allergic to penicillin", constants.CAT_NUMERICAL),  # no number
        ("The war ended in 1945", constants.CAT_NUMERICAL),  # a year is not a magnitude
        ("The patient is allergic to penicillin", constants.CAT_ENTITY_SWAP),  # copula: no object to swap
        ("Revenue grew 15%", constants.CAT_ENTITY_SWAP),  # a quantity is not an object
        ("Penicillin for the patient", constants.CAT_TEMPORAL),  # no verb, no time word
        ("The report shows growth", constants.CAT_QUANTIFIER),  # singular subject, no quantifier
        ("Penicillin", constants.CAT_NEGATION),  # no verb
        ("hello world", constants.CAT_HEDGING),  # no statement to hedge
        ("The company will not release the product", constants.CAT_TEMPORAL),  # negated future left alone
    ],
)
def test_mode_not_applicable_says_why(text, mode):
    report = perturb(text)
    assert mode in report.not_applicable
    assert report.not_applicable[mode]
    assert all(v.mode != mode for v in report.variants)


@pytest.mark.parametrize(
    ("text", "not_expected"),
    [
        ("The report shows growth", "The do not report shows growth"),  # "report" after "The" is a noun
        ("The report shows growth", "The report not shows growth"),
        ("The war ended in 1945", "The war ended in 19450"),
        ("Say no to drugs", "Say some to drugs"),  # "no" not before a noun phrase is no quantifier
    ],
)
def test_rule_leaves_alone(text, not_expected):
    assert not_expected not in [v.text for v in perturb(text).variants]


def test_report_has_every_mode_exactly_once_and_no_duplicates():
    report = perturb("Google acquired YouTube for 1.65 billion dollars before 2007")
    modes = {v.mode for v in report.variants}
    assert modes | set(report.not_applicable) == set(lexicon.FAILURE_MODES)
    assert not modes & set(report.not_applicable)
    texts = [v.text for v in report.variants]
    assert len(texts) == len(set(texts)) and report.text not in texts
    assert [v.mode for v in report.variants] == sorted((v.mode for v in report.variants), key=lexicon.FAILURE_MODES.index)


def test_deterministic_and_whitespace_normalized():
    a = perturb("  Google   acquired\nYouTube ")
    b = perturb("Google acquired YouTube")
    assert a.text == "Google acquired YouTube"
    assert a.variants == b.variants


def test_to_frame_is_runnable_pairs():
    frame = perturb("The patient is allergic to penicillin").to_frame()
    assert list(frame.columns[:3]) == [constants.COL_PAIR_ID, constants.COL_SUITE, constants.COL_CATEGORY]
    assert (frame[constants.COL_TEXT_A] == "The patient is allergic to penicillin").all()
    assert frame[constants.COL_PAIR_ID].is_unique
    assert set(frame[constants.COL_SUITE]) == {constants.SUITE_PERTURB}
    assert set(frame[constants.COL_CATEGORY]) <= set(lexicon.FAILURE_MODES)


@pytest.mark.parametrize("bad", ["", "   ", "\n\n", "?!.", "—"])
def test_no_words_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="at least one word"):
        perturb(bad)


def test_non_string_is_a_type_error():
    with pytest.raises(TypeError):
        perturb(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["患者对青霉素过敏", "המטופל אלרגי לפניצילין", "The 🐍 bit the man", "<script>alert(1)</script>", "x" * 5000],
)
def test_unusual_text_never_raises(text):
    report = perturb(text)
    assert set(report.not_applicable) | {v.mode for v in report.variants} == set(lexicon.FAILURE_MODES)


def test_modal_passive_swaps_agent_and_subject():
    assert "Debit card can be made by payment at the counter" not in _by_rule("Payment can be made by debit card at the counter")
    assert _by_rule("Payment can be made by debit card at the counter")["swap_roles"] == [
        "Debit card can be made by Payment at the counter"
    ]


def test_noun_verb_ambiguity_picks_the_verb():
    assert _by_rule("Consumer prices rose 3 percent")["add_not_do"] == ["Consumer prices did not rise 3 percent"]


# ------------------------------------------------------------------ known defects, fixed with core/lexicon


def _mode_texts(text: str, mode: str) -> list[str]:
    return [v.text for v in perturb(text).variants if v.mode == mode]


@pytest.mark.parametrize(
    ("text", "swapped"),
    [
        # A title belongs to its name: not "Chen. Alvarez referred the patient to Dr Dr."
        (
            "Dr. Alvarez referred the patient to Dr. Chen.",
            "Dr. Chen referred the patient to Dr. Alvarez.",
        ),
        # A multi-word name at the start stays whole: not "Mercy Corvan Medical reported ... by Hospital."
        (
            "Mercy Hospital reported 3 cases linked to saline supplied by Corvan Medical.",
            "Corvan Medical reported 3 cases linked to saline supplied by Mercy Hospital.",
        ),
        # A hyphenated name stays whole and a capital glued to a number ("4K") is no name.
        ("The Halcyon M10 records 4K video for Orbis Travel.", "The Orbis Travel records 4K video for Halcyon M10."),
    ],
)
def test_entity_swap_moves_whole_names(text, swapped):
    assert _mode_texts(text, constants.CAT_ENTITY_SWAP)[0] == swapped


def test_role_swap_keeps_hyphenated_words_and_measures_whole():
    assert "USB converts" not in " ".join(_mode_texts("This adapter converts USB-C to HDMI.", constants.CAT_ENTITY_SWAP))
    swaps = _mode_texts("Brazil beat Argentina 3-1 in the final.", constants.CAT_ENTITY_SWAP)
    assert swaps == ["Argentina beat Brazil 3-1 in the final."]


@pytest.mark.parametrize(
    "text",
    [
        "No contractor may begin demolition before the city issues a permit.",
        "Any employee may apply for the program.",
        "You may leave the ward after the doctor's visit.",
        "Passengers may now board the aircraft.",
    ],
)
def test_a_may_of_permission_is_not_removed_as_a_hedge(text):
    assert not [v for v in perturb(text).variants if v.rule == "remove_hedge"]


def test_a_may_of_possibility_is_still_a_hedge():
    assert _by_rule("The drug may reduce symptoms")["remove_hedge"] == ["The drug reduces symptoms"]


def test_a_question_modal_is_not_a_hedge():
    assert "remove_hedge" not in _by_rule("Could you tell me how to get to the train station?")


@pytest.mark.parametrize(
    ("text", "lead_in"),
    [
        ("I take the drug daily.", "Some evidence suggests that I take the drug daily."),
        ("NASA launched the probe.", "Some evidence suggests that NASA launched the probe."),
        ("Dr. Chen treats the patient.", "Some evidence suggests that Dr. Chen treats the patient."),
        ("Mercy Hospital treats the patient.", "Some evidence suggests that Mercy Hospital treats the patient."),
        ("The drug reduces pain.", "Some evidence suggests that the drug reduces pain."),
    ],
)
def test_hedge_lead_in_keeps_the_capital_of_names_i_and_acronyms(text, lead_in):
    assert lead_in in _by_rule(text)["add_hedge"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Metformin treats type 2 diabetes in 5 patients.", "type 2"),
        ("Chapter 11 protection was filed for 3 firms.", "Chapter 11"),
        ("The meeting on March 5 lasted 2 hours.", "March 5"),
        ("The meeting on 5 March lasted 2 hours.", "5 March"),
        ("The store opens at 10:30 for 3 hours.", "10:30"),
        ("The contract was signed on 2024-05-01 for 3 years.", "2024-05-01"),
    ],
)
def test_labels_dates_and_times_are_not_scaled(text, kept):
    scaled = _mode_texts(text, constants.CAT_NUMERICAL)
    assert scaled  # the count in the sentence is still scaled ...
    assert all(f"{kept} " in variant for variant in scaled)  # ... the label, date or time never


def test_scores_and_ranges_still_scale():
    assert "Spain beat the Netherlands 10-0 in the final." in _mode_texts(
        "Spain beat the Netherlands 1-0 in the final.", constants.CAT_NUMERICAL
    )


def test_a_verb_inside_a_compound_is_not_the_verb_group():
    # "ammonia-based" is no past tense to turn into "ammonia-will base".
    assert not any("will base" in t for t in _mode_texts("Never mix bleach with ammonia-based cleaners.", constants.CAT_TEMPORAL))


def test_every_variant_passes_the_self_check():
    report = perturb("The witness refused to answer the prosecutor's questions.")
    assert report.rejected == []
    assert "The witness did not refuse to answer the prosecutor's questions." in [v.text for v in report.variants]


def test_a_label_before_its_number_is_a_noun_not_the_verb():
    variants = _by_rule("Metformin treats type 2 diabetes in 5 patients.")
    assert variants["add_not_do"] == ["Metformin does not treat type 2 diabetes in 5 patients."]
    assert (
        "Some evidence suggests that Chapter 11 protection was filed for 3 firms."
        in _by_rule("Chapter 11 protection was filed for 3 firms.")["add_hedge"]
    )


def test_a_bare_plural_subject_gets_a_quantifier():
    assert _by_rule("Patients report severe pain.")["add_quantifier"] == [
        "All patients report severe pain.",
        "Few patients report severe pain.",
    ]
    assert "add_quantifier" not in _by_rule("Google acquired YouTube.")  # a name, no plural


# One variant per number, each self-checked over the whole text, grew with the square of the numbers.
# The digest is of every variant of every sentence of the shipped suites, computed by the rules before the bound:
# normal sentences (far fewer than MAX_NUMBERS_SCALED numbers) keep exactly their variants.
SUITE_VARIANTS_SHA256 = "929f120ee49c7c2fff83f5bc7eb00fab594f0bb07e0a32fe5790de69beb6dcb3"


def test_the_bound_leaves_every_suite_sentence_unchanged():
    import hashlib
    import json

    from core.papers.suites import load_suite

    # The papers' six modes on the pairs of the papers' categories: a mode beyond the papers and its pairs are
    # checked by tests/core/lexicon/test_common_modes.py, and leave this fingerprint as it was.
    pairs = load_suite("all")
    pairs = pairs[~pairs[constants.COL_CATEGORY].isin(lexicon.EXTENSION_MODES)]
    texts = sorted(set(pairs[constants.COL_TEXT_A]) | set(pairs[constants.COL_TEXT_B]))
    reports = [(t, perturb(t)) for t in texts]
    paper = set(lexicon.PAPER_MODES)
    out = [
        [t, [[v.mode, v.rule, v.text, v.change] for v in r.variants if v.mode in paper], sorted(set(r.not_applicable) & paper)]
        for t, r in reports
    ]
    assert hashlib.sha256(json.dumps(out).encode()).hexdigest() == SUITE_VARIANTS_SHA256
    assert not any(r.notes for _, r in reports)


@pytest.mark.parametrize(
    "text",
    [
        " ".join(str(i % 9 + 1) for i in range(1_000))[:2_000],  # the page's 2,000-character maximum, all numbers
        " ".join(["three"] * 400)[:2_000],
        " ".join(f"Take {i} mg, then {i + 1} pills." for i in range(200))[:2_000],
    ],
)
def test_a_text_of_many_numbers_makes_a_bounded_number_of_checked_variants(text, monkeypatch):
    from core.probes import perturb as module

    calls = []
    checked = module.differs_by
    monkeypatch.setattr(module, "differs_by", lambda *a: calls.append(a) or checked(*a))
    report = perturb(text)
    numerical = [v for v in report.variants if v.mode == constants.CAT_NUMERICAL]
    # At most the bound: a variant whose value the text already states elsewhere fails the self-check.
    assert 0 < len(numerical) <= module.MAX_NUMBERS_SCALED
    # Each self-check reads the whole text: their number, not the numbers in the text, decides the time.
    assert len(calls) <= 2 * module.MAX_NUMBERS_SCALED + 10
    assert [
        n for n in report.notes if n.startswith("numerical: the text holds")
    ] and f"the first {module.MAX_NUMBERS_SCALED}" in report.notes[0]


def test_the_first_numbers_in_order_are_the_ones_scaled():
    from core.probes.perturb import MAX_NUMBERS_SCALED

    digits = [i % 9 + 1 for i in range(100)]
    report = perturb(" ".join(map(str, digits)))
    assert [v.change for v in report.variants if v.rule == "scale_number"] == [f"{d} -> {d * 10}" for d in digits[:MAX_NUMBERS_SCALED]]


def test_cli_perturb_says_when_numbers_were_left_unscaled(cli):
    code, out, err = cli("perturb", " ".join(str(i % 9 + 1) for i in range(100)), "--no-score")
    assert code == 0
    assert "note: numerical: the text holds 100 numbers; the first 20 of each are scaled" in err
