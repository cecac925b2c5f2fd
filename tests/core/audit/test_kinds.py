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
    assert kinds.pair_kind(a, b) == kinds.PairKind(kinds.KIND_DUPLICATE, why=why)


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
