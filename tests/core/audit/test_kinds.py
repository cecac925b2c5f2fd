"""The kind of a close pair: twin (with its mode), near-duplicate, other; and the marked words."""

from __future__ import annotations

import pytest

from core.audit import kinds


@pytest.mark.parametrize(
    ("a", "b", "mode"),
    [
        ("The patient has diabetes.", "The patient does not have diabetes.", "negation"),
        ("Take 5 mg twice a day.", "Take 500 mg twice a day.", "numerical"),
        ("Acme acquired Globex in 2019.", "Globex acquired Acme in 2019.", "entity_swap"),
        ("Take the pill before meals.", "Take the pill after meals.", "temporal"),
        ("All patients responded to the drug.", "Some patients responded to the drug.", "quantifier"),
        ("The drug reduces pain.", "The drug may reduce pain.", "hedging"),
    ],
)
def test_twins_name_their_mode(a, b, mode):
    found = kinds.pair_kind(a, b)
    assert found.kind == kinds.KIND_TWIN
    assert found.mode == mode
    assert mode in found.modes


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("The drug reduces pain.", "the drug reduces pain", "identical after normalisation"),
        ("Ｔhe  drug   reduces pain!", "The drug reduces pain.", "identical after normalisation"),
        ("The patient reduced a dose.", "The patient reduced the dose.", "differs only by articles or inflection"),
    ],
)
def test_near_duplicates(a, b, why):
    found = kinds.pair_kind(a, b)
    assert (found.kind, found.mode, found.modes, found.why) == (kinds.KIND_DUPLICATE, "", (), why)


def test_other_difference_and_few_shared_words():
    assert kinds.pair_kind("The cat sat on the mat.", "A dog slept on the rug.").kind == kinds.KIND_OTHER
    # Different numbers, but two different passages rather than one edit.
    far = kinds.pair_kind("Revenue rose 5% in the third quarter.", "Shipping takes 3 days for most orders within Europe.")
    assert far.kind == kinds.KIND_OTHER
    assert far.why == "few shared words"


def test_changed_words_are_the_marked_words_without_spaces():
    assert kinds.changed_words("Take 5 mg twice a day.", "Take 500 mg twice a day.") == ("5", "500")
    assert kinds.changed_words("The patient has diabetes.", "The patient does not have diabetes.") == ("has", "does not have")


def test_bad_input():
    with pytest.raises(ValueError, match="strings"):
        kinds.pair_kind("a", None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # Role swaps: the same words in another order are never a near-duplicate (a dedup step would delete the opposite).
        ("A man prepares a pizza while a woman watches.", "A woman prepares a pizza while a man watches."),
        ("The landlord sued the tenant.", "The tenant sued the landlord."),
        ("The dog chases the cats.", "The cats chase the dog."),
        ("In June, Paris hosted the summit.", "Paris hosted the summit in June."),
        # Two roles exchanged and an article or an inflection changed besides.
        ("Anna sent the boxes to Ben.", "Ben sent a box to Anna."),
    ],
)
def test_the_same_words_in_another_order_are_never_near_duplicates(a, b):
    found = kinds.pair_kind(a, b)
    assert found.kind != kinds.KIND_DUPLICATE
    assert found.kind in (kinds.KIND_TWIN, kinds.KIND_OTHER)
    assert found.kind != kinds.KIND_TWIN or found.mode == "entity_swap"


def test_a_role_swap_is_an_entity_swap_twin():
    found = kinds.pair_kind("A man prepares a pizza while a woman watches.", "A woman prepares a pizza while a man watches.")
    assert (found.kind, found.mode) == (kinds.KIND_TWIN, "entity_swap")


@pytest.mark.parametrize(
    ("a", "b", "named"),
    [
        # A different patient AND a different day: two edits, not a numerical twin.
        (
            "Discharge note: Mr Smith, aged 67, admitted with COPD; discharged on day 5.",
            "Discharge note: Mr Jones, aged 72, admitted with COPD; discharged on day 3.",
            "numerical",
        ),
        # Two numbers in two places are two edits.
        ("Ship 5 crates to Leeds and invoice in 30 days.", "Ship 50 crates to Leeds and invoice in 60 days.", "numerical"),
        # A mode's edit and another word in the same stretch.
        ("The patient took aspirin daily.", "The patient did not take ibuprofen daily.", "negation"),
        # Two modes' edits in two places.
        ("The parcel was insured. Costs rose this month.", "The parcel was not insured. Costs fell this month.", "negation"),
    ],
)
def test_several_independent_edits_are_not_a_twin(a, b, named):
    found = kinds.pair_kind(a, b)
    assert found.kind == kinds.KIND_SEVERAL
    assert (found.mode, found.modes) == ("", ())
    assert named in found.why
    assert found.edits  # each differing stretch, for the reader


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("It's not bad.", "It's good."),  # a negated antonym (WordNet: bad / good)
        ("They're not alive.", "They're dead."),
        ("She is not unafraid.", "She is afraid."),  # a double negation
        ("The label was not unlabelled.", "The label was labelled."),  # a negative prefix WordNet does not list
        ("He no longer smokes.", "He stopped smoking."),  # a verb of ceasing carries the negation
        ("No, the parcel was insured.", "The parcel was insured."),  # a reply word negates nothing
        ("Naw, it works fine.", "It works fine."),
    ],
)
def test_negations_that_keep_the_polarity_are_not_negation_twins(a, b):
    found = kinds.pair_kind(a, b)
    assert found.kind == kinds.KIND_OTHER
    assert "negation" not in found.modes


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("That's...not possible.", "That's possible."),  # an ellipsis does not hide the cue
        ("It was—not—planned.", "It was planned."),
        ("The door was open.", "The door was not open."),
        ("He failed the test.", "He did not fail the test."),
        ("He stopped smoking.", "He did not stop smoking."),
        ("No, it does not work.", "No, it works."),
    ],
)
def test_a_negation_that_flips_the_polarity_is_a_twin(a, b):
    found = kinds.pair_kind(a, b)
    assert (found.kind, found.mode) == (kinds.KIND_TWIN, "negation")


def test_a_number_and_its_unit_are_one_numerical_edit():
    found = kinds.pair_kind("The shipment arrived in 3 days.", "The shipment arrived in 5 weeks.")
    assert (found.kind, found.mode) == (kinds.KIND_TWIN, "numerical")
    # The unit alone is no number edit: no failure mode names it.
    assert kinds.pair_kind("The shipment arrived in 3 days.", "The shipment arrived in 3 weeks.").kind == kinds.KIND_OTHER


def test_the_mode_is_the_one_that_explains_the_edit():
    found = kinds.pair_kind("No patients recovered.", "All patients recovered.")
    assert found.kind == kinds.KIND_TWIN
    assert found.mode == "quantifier"  # "no" -> "all" is a quantifier's edit; negation is found too
    assert set(found.modes) == {"negation", "quantifier"}


def test_kinds_are_the_known_set():
    assert kinds.KINDS == (kinds.KIND_TWIN, kinds.KIND_DUPLICATE, kinds.KIND_SEVERAL, kinds.KIND_OTHER)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("occurring during the period around birth (5 months before and 1 month after)", "occurring immediately after birth"),
        ("No, the parcel was insured.", "The parcel was insured."),
        ("The patient took aspirin daily.", "The patient did not take ibuprofen daily."),
        ("Take 5 mg twice a day.", "Take 500 mg twice a day."),
    ],
)
def test_both_orders_get_the_same_kind(a, b):
    one, other = kinds.pair_kind(a, b), kinds.pair_kind(b, a)
    assert (one.kind, one.mode, one.modes) == (other.kind, other.mode, other.modes)
    assert [e.split(" → ") for e in one.edits] == [e.split(" → ")[::-1] for e in other.edits]
