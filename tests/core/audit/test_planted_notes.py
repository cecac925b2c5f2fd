"""The templated notes: single edits are twins of their mode, several edits never are, polarity decoys are no negation twins."""

from __future__ import annotations

import pytest

from core import lexicon
from core.audit import planted


@pytest.fixture(scope="module")
def heldout():
    return planted.note_scores("heldout")


def test_the_splits_are_by_group_and_fixed():
    dev, held = planted.note_pairs("dev"), planted.note_pairs("heldout")
    assert not set(dev["group"]) & set(held["group"])
    assert set(dev["template"]) == set(held["template"]) == {"shipping notice", "lab report"}
    assert planted.note_pairs("heldout") is held  # cached, and built the same way each time
    assert set(held["label"]) == {*lexicon.FAILURE_MODES, *planted.DECOY_TYPES}


def test_every_mode_and_kind_meets_the_target_held_out(heldout):
    rated = heldout[heldout["by"].isin(["mode", "kind"])]
    assert set(rated.loc[rated["by"] == "mode", "name"]) == {"all", *lexicon.FAILURE_MODES}
    assert (rated["n"] > 50).all()
    assert (rated["recall"] >= 0.90).all(), rated
    assert (rated["precision"] >= 0.90).all(), rated


def test_decoys_are_never_what_they_are_not(heldout):
    decoys = heldout[heldout["by"] == "decoy"].set_index("name")
    assert set(decoys.index) == set(planted.DECOY_TYPES)
    # Several edits never a twin; negated antonyms, double negations, ceasing, reply words never negation twins;
    # role swaps never near-duplicates; copies always near-duplicates.
    assert (decoys["found"] == decoys["n"]).all(), decoys


def test_a_multi_edit_pair_holds_two_places():
    pairs = planted.note_pairs("dev")
    several = pairs[pairs["label"] == planted.DECOY_SEVERAL].iloc[0]
    from core.audit.kinds import KIND_SEVERAL, pair_kind

    found = pair_kind(several["text_a"], several["text_b"])
    assert found.kind == KIND_SEVERAL and len(found.edits) >= 2


def test_bad_split():
    with pytest.raises(ValueError, match="split"):
        planted.note_pairs("test")
