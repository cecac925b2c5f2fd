"""The retrieval suite: the shipped file validates, tidies as counted by hand, its README tables hold; validators and user files."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from core import constants, lexicon
from core.files.validators import check_hedging_variant, check_numerical_variant, check_quantifier_variant, check_temporal_variant
from core.paths import DATA_DIR
from core.probes.perturb import perturb
from core.probes.retrieval.convert import pairs_to_suite
from core.probes.retrieval.suite import WIDE_COLUMNS, RetrievalSuiteError, suite_counts, tidy_suite
from core.probes.retrieval.suite_checks import perturb_matches, validate_retrieval_suite
from core.probes.retrieval.suite_files import load_retrieval_suite, read_retrieval_file

MODES = lexicon.FAILURE_MODES


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    return read_retrieval_file()


def _group(gid: str = "g-1", **cells: str) -> dict[str, str]:
    row = dict.fromkeys(WIDE_COLUMNS, "")
    row.update(
        group_id=gid,
        domain="medical",
        anchor="The patient is allergic to penicillin and received 5 mg of morphine before surgery.",
        paraphrase="Before the operation, the penicillin-allergic patient was given 5 mg of morphine.",
        negation="The patient is not allergic to penicillin and received 5 mg of morphine before surgery.",
        numerical="The patient is allergic to penicillin and received 50 mg of morphine before surgery.",
        temporal="The patient is allergic to penicillin and received 5 mg of morphine after surgery.",
    )
    row.update(cells)
    return row


def _problems(*rows: dict[str, str]) -> list[str]:
    return [f"{v.pair_id}:{v.rule}" for v in validate_retrieval_suite(pd.DataFrame(list(rows)))]


# ------------------------------------------------------------------ the shipped suite


def test_shipped_suite_is_valid(wide):
    assert validate_retrieval_suite(wide) == []


def test_shipped_suite_meets_the_issue(wide):
    assert len(wide) >= 150
    assert set(wide[constants.COL_DOMAIN]) == set(constants.DOMAINS)
    nevir = wide[wide[constants.COL_QUERY_MODE] != ""]
    assert len(nevir) >= 60
    assert set(nevir[constants.COL_QUERY_MODE]) == set(MODES)


def test_tidy_tables_count_as_the_wide_file(wide):
    suite = tidy_suite(wide)
    p, q = suite.passages, suite.queries
    n_variants = int((wide[list(MODES)] != "").to_numpy().sum())
    assert len(p) == 2 * len(wide) + n_variants
    assert (p[constants.COL_ROLE] == constants.ROLE_ANCHOR).sum() == len(wide)
    assert len(q) == 2 * int((wide[constants.COL_QUERY_MODE] != "").sum())
    row = wide.iloc[0]
    mine = p[p[constants.COL_GROUP_ID] == row[constants.COL_GROUP_ID]]
    expected = {(constants.ROLE_VARIANT, m, row[m]) for m in MODES if row[m]}
    assert {
        tuple(r)
        for r in mine[mine[constants.COL_ROLE] == constants.ROLE_VARIANT][
            [constants.COL_ROLE, constants.COL_MODE, constants.COL_TEXT]
        ].to_numpy()
    } == expected
    assert suite.head(3).group_ids == list(wide[constants.COL_GROUP_ID][:3])


def _readme_table(after: str) -> list[list[str]]:
    lines = (DATA_DIR / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after))
    rows, seen_table = [], False
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            seen_table = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set(cells[0]) <= set("-"):
                rows.append(cells)
        elif seen_table:
            break
    return rows[1:]  # without the header


def test_readme_counts_match_the_file(wide):
    documented = _readme_table("Variants and NevIR groups per domain")
    actual = suite_counts(tidy_suite(wide)).astype(str).to_numpy().tolist()
    assert documented == actual
    # The same counts by hand from the wide file.
    total = documented[-1]
    assert int(total[1]) == len(wide)
    assert [int(c) for c in total[2 : 2 + len(MODES)]] == [int((wide[m] != "").sum()) for m in MODES]
    assert int(total[2 + len(MODES)]) == int((wide[constants.COL_QUERY_MODE] != "").sum())


def test_readme_perturb_table_matches_the_file(wide):
    documented = _readme_table("440 of the 852 variants")
    by_hand = []
    for mode in MODES:
        rows = wide[wide[mode] != ""]
        made = sum(any(v.mode == mode and v.text == r[mode] for v in perturb(r[constants.COL_ANCHOR]).variants) for _, r in rows.iterrows())
        by_hand.append([mode, str(len(rows)), str(made)])
    assert documented == by_hand
    assert perturb_matches(wide)[["mode", "variants", "from_perturb"]].astype(str).to_numpy().tolist() == by_hand


# ------------------------------------------------------------------ validators


def test_a_good_group_passes():
    assert _problems(_group()) == []


@pytest.mark.parametrize(
    ("cells", "rule"),
    [
        ({"domain": "space"}, "g-1:domain"),
        ({"paraphrase": ""}, "g-1:paraphrase"),
        ({"paraphrase": "The patient is allergic to penicillin and received 5 mg of morphine before surgery!"}, "g-1:paraphrase"),
        ({"temporal": ""}, "g-1:modes"),
        ({"negation": "The patient is allergic to aspirin and received 5 mg of morphine before surgery."}, "g-1:negation"),
        ({"numerical": "The patient is allergic to penicillin and received 5 mg of codeine before surgery."}, "g-1:numerical"),
        ({"entity_swap": "The patient is allergic to morphine and received 5 mg of penicillin after surgery."}, "g-1:entity_swap"),
        ({"temporal": "The patient is allergic to penicillin and received 5 mg of codeine before surgery."}, "g-1:temporal"),
        ({"query_mode": "hedging", "q1": "a", "q2": "b"}, "g-1:query_mode"),
        ({"query_mode": "negation", "q1": "What is the patient allergic to?"}, "g-1:queries"),
        ({"query_mode": "negation", "q1": "Same?", "q2": "same"}, "g-1:queries"),
        ({"q1": "A query without a mode?"}, "g-1:queries"),
    ],
)
def test_each_rule_names_its_group(cells, rule):
    assert rule in _problems(_group(**cells))


def test_ids_and_texts_are_unique_across_groups():
    problems = _problems(_group("g-1"), _group("g-1", anchor="Aspirin thins the blood in 9 of 10 adults who take it daily."))
    assert "g-1:unique-id" in problems
    assert "g-1:unique-passage" in problems  # the second group repeats the first's paraphrase and variants
    assert "g-2:unique-passage" in _problems(_group(), _group("g-2"))
    assert "g-2:unique-query" in _problems(
        _group(query_mode="negation", q1="Allergic to?", q2="Not allergic to?"),
        _group(
            "g-2",
            anchor="Aspirin thins blood.",
            paraphrase="Aspirin makes blood thinner.",
            negation="Aspirin does not thin blood.",
            numerical="Aspirin thins blood in 2 ways.",
            temporal="Aspirin thinned blood.",
            query_mode="negation",
            q1="Allergic to?",
            q2="Other?",
        ),
    )


def test_missing_columns_is_one_violation():
    assert _problems({"group_id": "g", "anchor": "x"}) == ["*:columns"]


def test_a_missing_mode_column_is_a_mode_with_no_variant(tmp_path):
    # A file written before a mode existed (here without direction, hedging and the rest) still reads;
    # only the modes it has are scored.  Before, every mode's column was required.
    kept = (constants.CAT_NEGATION, constants.CAT_NUMERICAL, constants.CAT_TEMPORAL)
    row = {k: v for k, v in _group().items() if k not in MODES or k in kept}
    assert not set(MODES) - set(kept) <= set(row)
    assert _problems(row) == []
    suite = tidy_suite(pd.DataFrame([row]))
    variants = suite.passages[suite.passages[constants.COL_ROLE] == constants.ROLE_VARIANT]
    assert list(variants[constants.COL_MODE]) == list(kept)
    path = tmp_path / "old.csv"
    pd.DataFrame([row]).to_csv(path, index=False)
    loaded = load_retrieval_suite(str(path))
    assert loaded.passages.equals(suite.passages)
    assert loaded.notes == ()


@pytest.mark.parametrize(
    ("check", "anchor", "variant", "ok"),
    [
        (check_numerical_variant, "given 1 month after the first", "given 10 months after the first", True),
        (check_numerical_variant, "a three-year contract", "a thirty-year contract", True),
        (check_numerical_variant, "given 1 month after the first", "given 1 week after the first", False),
        (check_temporal_variant, "Harbor acquired Lindell last March", "Harbor will acquire Lindell next March", True),
        (check_temporal_variant, "The drug reduces pain", "The drug reduced pain", True),
        (check_temporal_variant, "The drug reduces pain", "The drug reduces fever", False),
        (check_quantifier_variant, "Every official marathon covers 42 km", "Few official marathons cover 42 km", True),
        (check_quantifier_variant, "debts owed mostly to Keswick", "debts owed partly to Keswick", True),
        (check_quantifier_variant, "All ladders must be tied", "All ropes must be tied", False),
        (check_hedging_variant, "The firm repaid the loan", "The firm is said to have repaid the loan", True),
        (check_hedging_variant, "The firm repaid the loan", "The firm repaid the debt", False),
    ],
)
def test_mode_rules(check, anchor, variant, ok):
    assert (check(anchor, variant) is None) == ok


# ------------------------------------------------------------------ user files


def test_pairs_file_groups_by_text_a():
    pairs = pd.DataFrame(
        {
            "text_a": ["Q1", "Q1", "Q1", "Q2", "Q2", "Q3"],
            "text_b": ["right 1", "contra 1", "other 1", "contra 2", "right 2", "lonely"],
            "category": ["paraphrase", "negation", "weird", "numerical", "positive", "negation"],
        }
    )
    suite = pairs_to_suite(pairs, "mine")
    p = suite.passages
    assert suite.group_ids == ["group-001", "group-002"]
    g1 = p[p[constants.COL_GROUP_ID] == "group-001"]
    assert g1[constants.COL_ROLE].tolist() == ["anchor", "paraphrase", "variant"]
    assert g1[constants.COL_TEXT].tolist() == ["Q1", "right 1", "contra 1"]
    assert suite.queries.empty
    assert any("weird" in n for n in suite.notes) and any("dropped 1" in n for n in suite.notes)


def test_pairs_file_without_a_rankable_group_is_refused():
    pairs = pd.DataFrame({"text_a": ["a", "b"], "text_b": ["c", "d"], "category": ["negation", "positive"]})
    with pytest.raises(RetrievalSuiteError, match="nothing to rank"):
        pairs_to_suite(pairs)


def test_load_suite_reads_a_pairs_file_and_refuses_a_missing_one(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("text_a,text_b,category\nQ,right,paraphrase\nQ,wrong,negation\n", encoding="utf-8")
    suite = load_retrieval_suite(str(path))
    assert suite.name == "mine" and len(suite.passages) == 3
    with pytest.raises(RetrievalSuiteError, match="no such file"):
        load_retrieval_suite(str(tmp_path / "absent.csv"))


def test_load_suite_reads_a_wide_file_and_notes_its_violations(tmp_path):
    path = tmp_path / "wide.csv"
    pd.DataFrame(
        [
            _group(),
            _group(
                "g-2",
                domain="space",
                anchor="Aspirin thins the blood.",
                paraphrase="Aspirin makes blood thinner.",
                negation="Aspirin does not thin the blood.",
                numerical="",
                temporal="",
            ),
        ]
    ).to_csv(path, index=False)
    suite = load_retrieval_suite(str(path))
    assert suite.group_ids == ["g-1", "g-2"]
    assert suite.notes and "violation" in suite.notes[0]


def test_group_ids_follow_the_file(wide):
    assert all(re.fullmatch(r"(med|leg|fin|prd|saf|gen)-\d{3}", g) for g in wide[constants.COL_GROUP_ID])
