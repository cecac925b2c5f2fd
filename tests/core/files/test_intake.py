"""The one validation path: identical and mirrored pairs found, kept or dropped, category rules checked."""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants
from core.files.intake import check_pairs, find_identical, find_mirrored


def _pairs(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[constants.COL_PAIR_ID, constants.COL_CATEGORY, constants.COL_TEXT_A, constants.COL_TEXT_B])


ROWS = [
    ("p1", "positive", "The cat sat.", "A cat was sitting."),
    ("p2", "positive", "A cat was sitting.", "The cat sat."),  # mirrors p1
    ("p3", "positive", "Same words here.", "same words here"),  # identical, ignoring case and punctuation
    ("p4", "negation", "The patient has diabetes.", "The patient does not have diabetes."),
    ("p5", "negation", "The patient does not have diabetes", "the patient has diabetes"),  # mirrors p4
]


def test_find_identical_and_mirrored():
    pairs = _pairs(ROWS)
    assert find_identical(pairs) == ["p3"]
    assert find_mirrored(pairs) == [("p2", "p1"), ("p5", "p4")]


def test_an_identical_pair_is_not_its_own_mirror_and_repeats_mirror_the_first():
    pairs = _pairs(
        [
            ("a", "x", "One two.", "One two."),
            ("b", "x", "One two", "one two"),
            ("c", "x", "u v", "w z"),
            ("d", "x", "w z", "u v"),
            ("e", "x", "w z", "u v"),
        ]
    )
    assert find_identical(pairs) == ["a", "b"]
    assert find_mirrored(pairs) == [("d", "c"), ("e", "c")]


def test_kept_by_default_and_named():
    checked = check_pairs(_pairs(ROWS), ["read note"])
    assert len(checked.pairs) == 5 and checked.dropped == ()
    assert checked.identical == ("p3",) and checked.mirrored == (("p2", "p1"), ("p5", "p4"))
    assert checked.notes[0] == "read note"
    assert "1 pair(s) have the same text on both sides (p3)" in checked.notes[1] and checked.notes[1].endswith("kept")
    assert "2 pair(s) repeat an earlier pair with the sides swapped (p2 mirrors p1, p5 mirrors p4)" in checked.notes[2]
    # the suite rules name them too: the identical pair is not distinct, the mirrors are duplicates
    assert {(v.pair_id, v.rule) for v in checked.violations} == {("p3", "positive"), ("p2", "no-duplicates"), ("p5", "no-duplicates")}


def test_dropped_on_request():
    checked = check_pairs(_pairs(ROWS), drop_identical=True, drop_mirrored=True)
    assert checked.pairs[constants.COL_PAIR_ID].tolist() == ["p1", "p4"]
    assert checked.dropped == ("p3", "p2", "p5")
    assert checked.notes[0].endswith("dropped") and checked.notes[1].endswith("dropped the mirrors")
    assert checked.violations == ()
    only_mirrors = check_pairs(_pairs(ROWS), drop_mirrored=True)
    assert only_mirrors.pairs[constants.COL_PAIR_ID].tolist() == ["p1", "p3", "p4"]


def test_many_ids_are_cut_short():
    rows = [(f"s{i}", "x", f"text {i}", f"Text {i}.") for i in range(11)]
    (note,) = check_pairs(_pairs(rows)).notes
    assert "(s0, s1, s2, s3, s4, s5, s6, s7 and 3 more)" in note


def test_nothing_found_says_nothing():
    checked = check_pairs(_pairs([ROWS[0], ROWS[3]]))
    assert checked.notes == () and checked.identical == () and checked.mirrored == () and checked.violations == ()


def test_refusals():
    with pytest.raises(ValueError, match="no pair is left"):
        check_pairs(_pairs([ROWS[2]]), drop_identical=True)
    with pytest.raises(ValueError, match="missing columns"):
        check_pairs(pd.DataFrame({constants.COL_TEXT_A: ["x"]}))
