"""tune's cost rows: the general cost on natural data it never saw, the ceiling note, the negation-shortcut probe.

Every figure is recomputed by hand from known vectors; the shipped WordNet gloss triples are pinned to the figures
`retrieval --triples` gives on them (MiniLM-L6: win rate 376/515, recall@1 66/515) and the door pair to the outside
review's "open" / "not closed" 0.796.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import constants as C
from core.files.triples import parse_triples
from core.lexicon.modes import negation_count
from core.probes.tune import data, report
from core.words import rule_words

UNTOUCHED, TUNED = C.TUNE_SETTING_UNTOUCHED, C.TUNE_SETTING_TUNED


def _encoder(vectors: dict[str, np.ndarray]):
    """An encoder that returns the given unit vectors (texts not given get a fixed unit vector of their own)."""

    def encode(texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            v = vectors.get(t)
            if v is None:
                v = np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8)
            out.append(np.asarray(v, dtype=float) / np.linalg.norm(v))
        return np.stack(out)

    return encode


def _random_vectors(texts, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {t: rng.normal(size=8) for t in texts}


# ------------------------------------------------------------------ at ceiling


def test_at_ceiling_only_when_every_value_is_the_best_possible():
    assert report.at_ceiling([1.0, 1.0, 1.0], 1.0)
    assert report.at_ceiling([0.0, 0.0], 0.0)  # a win rate of zero before and after
    assert not report.at_ceiling([1.0, 0.999], 1.0)  # after moved off the bound
    assert not report.at_ceiling([0.98, 0.98], 1.0)  # equal, but not at the bound: it could still move
    assert not report.at_ceiling([1.0, math.nan], 1.0)
    assert not report.at_ceiling([], 1.0)


def test_cost_rows_say_when_they_are_at_ceiling():
    """Perfectly separated pairs give AUC 1.0 for both models (at ceiling); overlapping ones do not."""
    easy = pd.DataFrame(
        {C.COL_TEXT_A: ["a1", "a2", "a3", "a4"], C.COL_TEXT_B: ["b1", "b2", "b3", "b4"], "same": [True, True, False, False]}
    )
    hard = pd.DataFrame(
        {C.COL_TEXT_A: ["h1", "h2", "h3", "h4"], C.COL_TEXT_B: ["k1", "k2", "k3", "k4"], "same": [True, False, True, False]}
    )
    e = np.eye(8)
    # same pairs: cosine 1 (same vector); different: cosine 0.  hard: h1/k1 cos 0, h2/k2 cos 1 (a different pair scored as same).
    vectors = {
        "a1": e[0],
        "b1": e[0],
        "a2": e[1],
        "b2": e[1],
        "a3": e[2],
        "b3": e[3],
        "a4": e[4],
        "b4": e[5],
        "h1": e[0],
        "k1": e[1],
        "h2": e[2],
        "k2": e[2],
        "h3": e[3],
        "k3": e[3],
        "h4": e[4],
        "k4": e[5],
    }
    enc = _encoder(vectors)
    costs = report.cost_table({UNTOUCHED: enc, TUNED: enc}, {"easy": easy, "hard": hard})
    by = costs.set_index(["data", C.COL_SETTING])
    assert by.loc[("easy", UNTOUCHED), "value"] == by.loc[("easy", TUNED), "value"] == 1.0
    assert by.loc[("easy", UNTOUCHED), "at_ceiling"] and by.loc[("easy", TUNED), "at_ceiling"]
    # hard: same cosines (0, 1) vs different (1, 0): AUC by hand = P(same > different) + half the ties = (0 + 0.5 + 0.5 + 1) / 4.
    assert by.loc[("hard", TUNED), "value"] == pytest.approx(0.5)
    assert not by.loc[("hard", TUNED), "at_ceiling"]
    md = _markdown(costs=costs)
    easy_line = next(line for line in md.splitlines() if line.startswith("| easy |"))
    hard_line = next(line for line in md.splitlines() if line.startswith("| hard |"))
    assert "at ceiling" in easy_line and "1.000, the best possible value" in easy_line
    assert "at ceiling" not in hard_line


# ------------------------------------------------------------------ the general cost on natural triples


NATURAL_CSV = "premise,entailed,contradicted\np1,e1,c1\np2,e2,c2\np3,e3,c3\np4,e4,c4\np5,e5,c5\np6,e6,c6\n"


def _hand(vectors: dict[str, np.ndarray], frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Win per triple and recall@1 per premise, by hand: every premise against every hypothesis, a tie ranked against it."""
    unit = {t: v / np.linalg.norm(v) for t, v in vectors.items()}
    wins = np.array(
        [
            unit[a] @ unit[n] > unit[a] @ unit[p]
            for a, p, n in zip(frame[C.COL_ANCHOR], frame[C.COL_POSITIVE], frame[C.COL_NEGATIVE], strict=True)
        ]
    )
    passages = [*frame[C.COL_POSITIVE], *frame[C.COL_NEGATIVE]]
    recalled = []
    for a, p in zip(frame[C.COL_ANCHOR], frame[C.COL_POSITIVE], strict=True):
        scores = np.array([unit[a] @ unit[t] for t in passages])
        best = scores.max()
        # The right passage is recalled at 1 only when it alone holds the top score.
        recalled.append(unit[a] @ unit[p] == best and (scores == best).sum() == 1)
    return wins, np.array(recalled)


@pytest.fixture
def natural():
    return parse_triples(NATURAL_CSV.encode(), "natural.csv")


def test_natural_cost_matches_a_hand_computation(natural):
    frame = natural.frame
    texts = [*frame[C.COL_ANCHOR], *frame[C.COL_POSITIVE], *frame[C.COL_NEGATIVE]]
    before_vec, after_vec = _random_vectors(texts, 1), _random_vectors(texts, 2)
    table = report.natural_cost({UNTOUCHED: _encoder(before_vec), TUNED: _encoder(after_vec)}, natural, "nli", seed=0)
    assert list(table.columns) == report.NATURAL_COLUMNS
    wins_b, rec_b = _hand(before_vec, frame)
    wins_a, rec_a = _hand(after_vec, frame)
    by = table.set_index(["measure", C.COL_SETTING])
    win_b, win_a = by.loc[(report.MEASURE_WIN_RATE, UNTOUCHED)], by.loc[(report.MEASURE_WIN_RATE, TUNED)]
    assert win_b["value"] == pytest.approx(wins_b.mean()) and win_a["value"] == pytest.approx(wins_a.mean())
    assert win_a["difference"] == pytest.approx(wins_a.mean() - wins_b.mean())
    # Fixed: won before, not after; broken: the other way.
    assert (win_a["fixed"], win_a["broken"]) == (int((wins_b & ~wins_a).sum()), int((~wins_b & wins_a).sum()))
    rec_row_b, rec_row_a = by.loc[(report.MEASURE_RECALL_AT_1, UNTOUCHED)], by.loc[(report.MEASURE_RECALL_AT_1, TUNED)]
    assert rec_row_b["value"] == pytest.approx(rec_b.mean()) and rec_row_a["value"] == pytest.approx(rec_a.mean())
    # For recall a miss is the failure: fixed = missed before, found after.
    assert (rec_row_a["fixed"], rec_row_a["broken"]) == (int((~rec_b & rec_a).sum()), int((rec_b & ~rec_a).sum()))
    for r in table.to_dict("records"):
        assert r[C.COL_N] == 6 and r[C.COL_CI_LOW] <= r["value"] <= r[C.COL_CI_HIGH]
    assert pd.isna(win_b["fixed"]) and math.isnan(win_b["difference"])  # the baseline has nothing to differ from
    assert set(table["best"]) == {0.0, 1.0}


def test_natural_cost_at_ceiling_when_both_models_are_perfect(natural):
    """Each premise's vector is its entailed hypothesis's, every contradiction orthogonal: win rate 0 and recall@1 1, before and after."""
    e = np.eye(16)
    vectors = {}
    for i in range(1, 7):
        vectors[f"p{i}"] = vectors[f"e{i}"] = e[i]
        vectors[f"c{i}"] = e[i + 8]
    enc = _encoder(vectors)
    table = report.natural_cost({UNTOUCHED: enc, TUNED: enc}, natural, "nli")
    assert table["at_ceiling"].all()
    assert table.set_index("measure").loc[report.MEASURE_WIN_RATE, "value"].eq(0).all()
    md = _markdown(natural=table)
    rows = [line for line in md.splitlines() if line.startswith(f"| {report.MEASURE_RECALL_AT_1} |")]
    assert rows and all("at ceiling" in line for line in rows)
    assert "; at ceiling)" in md.split("## ")[0]  # the headline says it too


def test_natural_cost_needs_the_untouched_baseline(natural):
    with pytest.raises(ValueError, match="untouched"):
        report.natural_cost({TUNED: _encoder({})}, natural, "nli")


def test_rows_sharing_a_text_with_the_tuning_data_are_left_out(natural):
    kept, dropped = data.unseen_triples(natural, ["  E2 ", "c5", "unrelated"])
    assert dropped == 2 and list(kept.frame[C.COL_ANCHOR]) == ["p1", "p3", "p4", "p6"]
    none_left, all_dropped = data.unseen_triples(natural, [f"p{i}" for i in range(1, 7)])
    assert none_left is None and all_dropped == 6


def test_the_shipped_sample_reads_as_triples_with_its_provenance():
    """data/natural/README.md's rules hold: 515 rows, WordNet ids, no anchor among the passages, no negation-cue pair."""
    triples = data.natural_triples()
    frame = triples.frame
    assert len(frame) == 515 and frame[C.COL_ANCHOR].nunique() == 515
    raw = pd.read_csv(data.NATURAL_FILE, dtype=str)
    for role in ("anchor", "positive", "negative"):
        assert raw[f"{role}_synset"].str.fullmatch(r"wn30-a-\d{8}").all() and raw[f"{role}_word"].str.strip().ne("").all()
    assert (raw["anchor_synset"] != raw["negative_synset"]).all() and (raw["anchor_synset"] != raw["positive_synset"]).all()
    passages = {*raw["positive"], *raw["negative"]}
    assert not passages & set(raw["anchor"])  # an anchor never ranks itself
    # Antonym pairs that a negation cue tells apart are what tune trains on, so none is here.
    for anchor, negative in zip(raw["anchor"], raw["negative"], strict=True):
        assert negation_count(rule_words(anchor)) == negation_count(rule_words(negative)), (anchor, negative)
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in (data.NATURAL_FILE.parent / "WORDNET-LICENSE").read_text()
    assert data.NATURAL_FILE.stat().st_size < 1_000_000


def test_minilm_on_the_shipped_sample_agrees_with_the_triples_probe(minilm):
    """`retrieval --triples data/natural/wordnet-antonym-triples.csv --models MiniLM-L6` gives 376/515 and 66/515; so must tune's report."""

    def encode(texts: list[str]) -> np.ndarray:
        v = np.asarray(minilm.backend.embed(list(texts)), dtype=float)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    table = report.natural_cost({UNTOUCHED: encode}, data.natural_triples(), data.NATURAL_NAME)
    by = table.set_index("measure")["value"]
    assert by[report.MEASURE_WIN_RATE] == pytest.approx(376 / 515)  # 0.730
    assert by[report.MEASURE_RECALL_AT_1] == pytest.approx(66 / 515)  # 0.128
    shortcut = report.shortcut_table({UNTOUCHED: encode}, data.shortcut_pairs())
    door = shortcut[(shortcut["item"] == "door") & (shortcut["meaning"] == data.MEANING_SAME)][C.COL_COSINE].iloc[0]
    assert door == pytest.approx(0.796, abs=5e-4)


# ------------------------------------------------------------------ the shortcut probe


def test_the_shortcut_pairs_are_what_their_readme_says():
    pairs = data.shortcut_pairs()
    assert pairs["item"].nunique() == 16 and len(pairs) == 32
    for _, rows in pairs.groupby("item"):
        assert sorted(rows["meaning"]) == [data.MEANING_OPPOSITE, data.MEANING_SAME]
        assert rows[C.COL_TEXT_A].nunique() == 1
    for a, b in zip(pairs[C.COL_TEXT_A], pairs[C.COL_TEXT_B], strict=True):
        assert negation_count(rule_words(b)) > negation_count(rule_words(a)), (a, b)


def test_shortcut_pairs_reject_a_bad_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,meaning,text_a,text_b\nx,maybe,a,b\n")
    with pytest.raises(ValueError, match="meaning must be"):
        data.shortcut_pairs(bad)
    bad.write_text("item,text_a,text_b\nx,a,b\n")
    with pytest.raises(ValueError, match="lacks the columns"):
        data.shortcut_pairs(bad)


def test_shortcut_table_and_means_match_a_hand_computation():
    pairs = pd.DataFrame(
        {
            "item": ["x", "x", "y", "y"],
            "meaning": ["same", "opposite", "same", "opposite"],
            C.COL_TEXT_A: ["A", "A", "B", "B"],
            C.COL_TEXT_B: ["A same", "A opp", "B same", "B opp"],
        }
    )
    before = {
        "A": np.array([1.0, 0.0]),
        "A same": np.array([1.0, 1.0]),
        "A opp": np.array([1.0, 0.2]),
        "B": np.array([0.0, 1.0]),
        "B same": np.array([0.1, 1.0]),
        "B opp": np.array([1.0, 1.0]),
    }
    after = {**before, "A same": np.array([0.0, 1.0])}  # the tuned model pushes one same-meaning pair apart
    table = report.shortcut_table({UNTOUCHED: _encoder(before), TUNED: _encoder(after)}, pairs)

    def cos(u, v):
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    got = table.set_index([C.COL_SETTING, C.COL_TEXT_B])[C.COL_COSINE]
    assert got[(UNTOUCHED, "A same")] == pytest.approx(cos(before["A"], before["A same"]))
    assert got[(TUNED, "A same")] == pytest.approx(0.0, abs=1e-12)
    means = report.shortcut_means(table).set_index([C.COL_SETTING, "meaning"])["mean_cosine"]
    assert means[(TUNED, "same")] == pytest.approx((0.0 + cos(before["B"], before["B same"])) / 2)
    notes = report.cost_warnings(pd.DataFrame(columns=report.NATURAL_COLUMNS), table)
    assert len(notes) == 1 and notes[0].startswith("Negation shortcut") and "a negation cue as a change of meaning" in notes[0]
    assert report.cost_warnings(pd.DataFrame(columns=report.NATURAL_COLUMNS), table[table[C.COL_SETTING] == UNTOUCHED]) == []


def test_cost_warning_only_when_the_interval_shows_a_cost():
    def row(measure, setting, value, diff, low, high):
        return ("nli", measure, setting, 100, value, value, value, diff, low, high, 1, 4, report.BEST[measure], False)

    worse = pd.DataFrame(
        [
            row(report.MEASURE_WIN_RATE, UNTOUCHED, 0.05, math.nan, math.nan, math.nan),
            row(report.MEASURE_WIN_RATE, TUNED, 0.08, 0.03, 0.01, 0.05),
            row(report.MEASURE_RECALL_AT_1, UNTOUCHED, 0.72, math.nan, math.nan, math.nan),
            row(report.MEASURE_RECALL_AT_1, TUNED, 0.70, -0.02, -0.05, 0.01),
        ],
        columns=report.NATURAL_COLUMNS,
    )
    notes = report.cost_warnings(worse, pd.DataFrame(columns=report.SHORTCUT_TABLE_COLUMNS))
    # The win rate rose with an interval above zero; recall fell but its interval holds zero.
    assert notes == [
        "General cost: opposite win rate on nli got worse, 5.0% -> 8.0% (difference 3.0 points, 95% CI 1.0 to 5.0; 1 fixed, 4 broken)."
    ]


# ------------------------------------------------------------------ Markdown


def _markdown(*, costs: pd.DataFrame | None = None, natural: pd.DataFrame | None = None, shortcut: pd.DataFrame | None = None) -> str:
    empty = pd.DataFrame()
    doc = {
        "model": "m",
        "config": {"seed": 0, "average": 0.5, "distill": 0},
        "groups": {C.SPLIT_TRAIN: 1, C.SPLIT_HELD_OUT: 1},
        "training": {"rows": 1, "steps": 1, "seconds": 1.0},
        "natural_data": [{"name": "nli", "source": "test data.", "left_out": 0}],
        "win_rates": [],
        "by_source": [],
        "paired_tests": [],
        "warnings": [],
    }
    for name, frame in (("costs", costs), ("natural_cost", natural), ("shortcut", shortcut)):
        doc[name] = report._records(frame if frame is not None else empty)
    win = (UNTOUCHED, C.SPLIT_HELD_OUT, report.ALL, 1, 1, 0, 1.0, 1.0, 1.0)
    doc["win_rates"] = report._records(pd.DataFrame([win], columns=report.WIN_COLUMNS))
    doc["by_source"] = report._records(
        pd.DataFrame([win], columns=[C.COL_SETTING, C.COL_SPLIT, C.COL_VARIANT_SOURCE, *report.WIN_COLUMNS[3:]])
    )
    return report.to_markdown(doc)


def test_a_win_turned_tie_is_no_fix_and_a_strict_first_turned_tie_is_broken(natural):
    """Triple 1 goes from a win to a tie (no fix), 2 from the positive first to a tie (broken), 3 from a win to the
    positive first (fixed); 4-6 keep their vectors, so they cannot flip."""
    x, y, z = np.eye(3)
    half = np.sqrt(0.5)
    same = {f"{r}{i}": v for i in (4, 5, 6) for r, v in (("p", x), ("e", half * (x + y)), ("c", y))}
    before = {**same, "p1": x, "c1": x, "e1": y, "p2": x, "e2": x, "c2": y, "p3": x, "c3": x, "e3": half * (x + y)}
    after = {**same, "p1": x, "c1": half * (x + y), "e1": half * (x + z), "p2": x, "e2": half * (x + y), "c2": half * (x + z)}
    after.update({"p3": x, "e3": x, "c3": half * (x + y)})
    table = report.natural_cost({UNTOUCHED: _encoder(before), TUNED: _encoder(after)}, natural, "nli", seed=0)
    row = table.set_index(["measure", C.COL_SETTING]).loc[(report.MEASURE_WIN_RATE, TUNED)]
    assert (row["fixed"], row["broken"]) == (1, 1)
    # The rate itself still counts wins only: 2 of 6 before (triples 1 and 3), none after.
    before_row = table.set_index(["measure", C.COL_SETTING]).loc[(report.MEASURE_WIN_RATE, UNTOUCHED)]
    assert before_row["value"] == pytest.approx(2 / 6) and row["value"] == 0
