"""tune: the split by anchor group, the triples, training on a tiny model, and the report's figures recomputed by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hub_cache_support import StandIn, build_standin
from scipy.stats import binomtest

from core import constants as C
from core.probes.retrieval.origin import variant_sources
from core.probes.retrieval.suite_files import load_retrieval_suite
from core.probes.tune import data, report, run, train


@pytest.fixture(scope="module")
def suite():
    return load_retrieval_suite(C.SUITE_RETRIEVAL)


@pytest.fixture(scope="module")
def variants(suite):
    return data.variant_table(suite)


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return build_standin(StandIn("tiny/tune", "mean"), tmp_path_factory.mktemp("tiny") / "model")


def _tiny(folder):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(folder), device="cpu")


@pytest.fixture(scope="module")
def tuned(tiny_folder, suite, tmp_path_factory):
    """One short tune of the tiny model on 16 groups (2 steps each for the model and the control), written out."""
    config = train.TuneConfig(batch_size=4, max_steps=2, learning_rate=1e-3)
    result = run.run_tune(_tiny(tiny_folder), "tiny", suite.head(16), config)
    out = tmp_path_factory.mktemp("tuned")
    return result, run.write_outputs(result, out)


# ------------------------------------------------------------------ the split and the data


def test_split_never_puts_a_group_on_both_sides_and_is_stratified(variants):
    split = data.split_groups(variants, seed=0)
    # Every variant row of a group gets its group's one side.
    sides = variants.assign(side=variants[C.COL_GROUP_ID].map(split)).groupby(C.COL_GROUP_ID)["side"].nunique()
    assert (sides == 1).all()
    assert sorted(pd.Series(split).value_counts().tolist()) == [100, 100]
    per_domain = variants.drop_duplicates(C.COL_GROUP_ID).assign(side=lambda f: f[C.COL_GROUP_ID].map(split))
    for _, frame in per_domain.groupby(C.COL_DOMAIN):
        n_train = (frame["side"] == C.SPLIT_TRAIN).sum()
        assert abs(n_train - len(frame) / 2) <= 1, "each domain splits about in half"
    assert data.split_groups(variants, seed=0) == split
    assert data.split_groups(variants, seed=1) != split


def test_split_rejects_bad_input():
    groups = pd.DataFrame({C.COL_GROUP_ID: ["a", "a"], C.COL_DOMAIN: ["x", "y"]})
    with pytest.raises(ValueError, match="two domains"):
        data.split_groups(groups)
    with pytest.raises(ValueError, match="between 0 and 1"):
        data.split_groups(groups, train_fraction=1.0)


def test_variant_sources_match_perturb_output(variants):
    # 440 of 852 are the rules' output (data/README.md; 428 of 833 before direction, 414 before the lexicon let swaps
    # move multi-word names)
    assert (variants[C.COL_VARIANT_SOURCE] == C.SOURCE_RULE).sum() == 440
    anchors = pd.Series(["The door was open."] * 2)
    got = variant_sources(anchors, pd.Series(["The door was not open.", "The door was ajar, not open."]))
    assert got.tolist() == [C.SOURCE_RULE, C.SOURCE_HAND]


def test_training_triples_come_only_from_failing_training_variants(variants, suite):
    split = data.split_groups(variants, seed=0)
    failing = pd.Series(np.arange(len(variants)) % 2 == 0)
    triples = data.training_triples(variants, split, failing, suite.queries)
    assert set(triples[C.COL_SPLIT]) == {C.SPLIT_TRAIN}
    assert set(triples[C.COL_GROUP_ID].map(split)) == {C.SPLIT_TRAIN}
    allowed = set(variants[failing.to_numpy()][C.ROLE_VARIANT]) | set(variants[C.COL_ANCHOR])
    assert set(triples[C.COL_NEGATIVE]) <= allowed
    chosen = variants[failing.to_numpy() & (variants[C.COL_GROUP_ID].map(split) == C.SPLIT_TRAIN).to_numpy()]
    # One row per failing variant (anchor -> paraphrase, the variant as hard negative), plus two per NevIR group whose query mode failed.
    assert (triples[C.COL_ANCHOR].isin(chosen[C.COL_ANCHOR]) & triples[C.COL_POSITIVE].isin(chosen[C.COL_PARAPHRASE])).sum() == len(chosen)
    nevir = triples[~triples[C.COL_ANCHOR].isin(chosen[C.COL_ANCHOR])]
    assert len(nevir) % 2 == 0 and set(nevir[C.COL_ANCHOR]) <= set(suite.queries[C.COL_TEXT])
    assert list(data.control_pairs(triples).columns) == [C.COL_ANCHOR, C.COL_POSITIVE]


# ------------------------------------------------------------------ training


def test_average_weights_is_the_midpoint(tiny_folder):
    a, b = _tiny(tiny_folder), _tiny(tiny_folder)
    for p in b.parameters():
        p.data.add_(1.0)
    before = {k: v.clone() for k, v in a.state_dict().items()}
    train.average_weights(a, b, 0.5)
    for k, v in a.state_dict().items():
        if v.is_floating_point():
            assert np.allclose(v.numpy(), (before[k].numpy() + b.state_dict()[k].numpy()) / 2, atol=1e-6)


def test_cancel_raises_and_saves_nothing(tiny_folder, variants, tmp_path):
    rows = pd.DataFrame(
        {
            C.COL_ANCHOR: variants[C.COL_ANCHOR][:8],
            C.COL_POSITIVE: variants[C.COL_PARAPHRASE][:8],
            C.COL_NEGATIVE: variants[C.ROLE_VARIANT][:8],
        }
    )
    with pytest.raises(train.TuneCancelled):
        train.fine_tune(_tiny(tiny_folder), rows, train.TuneConfig(batch_size=4, max_steps=3), should_stop=lambda: True)


def test_config_rejects_bad_settings():
    with pytest.raises(ValueError, match="average"):
        train.TuneConfig(average=0)
    with pytest.raises(ValueError, match="batch_size"):
        train.TuneConfig(batch_size=1)


# ------------------------------------------------------------------ the report against a direct computation


def _direct_wins(model, frame):
    """Win per variant computed by hand: cos(anchor, variant) > cos(anchor, paraphrase) with the model's own encode."""

    def cos(a, b):
        ea = model.encode(list(a), normalize_embeddings=True)
        eb = model.encode(list(b), normalize_embeddings=True)
        return (ea * eb).sum(axis=1)

    return cos(frame[C.COL_ANCHOR], frame[C.ROLE_VARIANT]) > cos(frame[C.COL_ANCHOR], frame[C.COL_PARAPHRASE])


def test_report_figures_match_a_direct_computation(tuned, tiny_folder, variants):
    result, written = tuned
    saved = _tiny(written["model"])  # the folder `--models PATH` loads
    original = _tiny(tiny_folder)
    subset = variants[variants[C.COL_GROUP_ID].isin(result.split[C.COL_GROUP_ID])].reset_index(drop=True)
    split = dict(zip(result.split[C.COL_GROUP_ID], result.split[C.COL_SPLIT], strict=True))
    held = (subset[C.COL_GROUP_ID].map(split) == C.SPLIT_HELD_OUT).to_numpy()
    before, after = _direct_wins(original, subset), _direct_wins(saved, subset)
    rates = result.tables["win_rates"].set_index([C.COL_SETTING, C.COL_SPLIT, C.COL_MODE])[C.COL_WIN_RATE]
    assert rates[(C.TUNE_SETTING_UNTOUCHED, C.SPLIT_HELD_OUT, report.ALL)] == pytest.approx(before[held].mean())
    assert rates[(C.TUNE_SETTING_TUNED, C.SPLIT_HELD_OUT, report.ALL)] == pytest.approx(after[held].mean())
    neg = held & (subset[C.COL_MODE] == C.CAT_NEGATION).to_numpy()
    assert rates[(C.TUNE_SETTING_TUNED, C.SPLIT_HELD_OUT, C.CAT_NEGATION)] == pytest.approx(after[neg].mean())
    test = (
        result.tables["paired_tests"]
        .set_index([C.COL_SETTING, C.COL_SPLIT, C.COL_MODE])
        .loc[(C.TUNE_SETTING_TUNED, C.SPLIT_HELD_OUT, report.ALL)]
    )
    fixed, broken = int((before[held] & ~after[held]).sum()), int((~before[held] & after[held]).sum())
    assert (test["fixed"], test["broken"]) == (fixed, broken)
    expected_p = 1.0 if fixed + broken == 0 else binomtest(fixed, fixed + broken, 0.5).pvalue
    assert test["pvalue"] == pytest.approx(expected_p)
    # Held-out comes first in every table, and the control and the unaveraged model are there.
    assert result.tables["win_rates"][C.COL_SPLIT].iloc[0] == C.SPLIT_HELD_OUT
    assert {C.TUNE_SETTING_CONTROL, C.TUNE_SETTING_NOT_AVERAGED} <= set(result.tables["win_rates"][C.COL_SETTING])


def test_cost_auc_matches_sklearn(tuned, tiny_folder):
    from sklearn.metrics import roc_auc_score

    result, _ = tuned
    labelled = run.baseline_labelled()
    model = _tiny(tiny_folder)
    ea = model.encode(list(labelled[C.COL_TEXT_A]), normalize_embeddings=True)
    eb = model.encode(list(labelled[C.COL_TEXT_B]), normalize_embeddings=True)
    expected = roc_auc_score(labelled["same"], (ea * eb).sum(axis=1))
    costs = result.tables["costs"]
    got = costs[costs[C.COL_SETTING] == C.TUNE_SETTING_UNTOUCHED]["value"].iloc[0]
    assert got == pytest.approx(expected, abs=1e-6)


def test_report_leads_with_the_general_cost_and_prints_the_shortcut_probe(tuned, tiny_folder):
    """The cost on natural data it never trained on, first; the shortcut pairs' cosines; every cost row's ceiling."""
    result, written = tuned
    natural = result.tables["natural_cost"]
    assert set(natural[C.COL_SETTING]) == {C.TUNE_SETTING_UNTOUCHED, C.TUNE_SETTING_TUNED, C.TUNE_SETTING_CONTROL}
    assert set(natural["measure"]) == {report.MEASURE_WIN_RATE, report.MEASURE_RECALL_AT_1}
    # Word-level glosses and sentence-level NLI triples: a tuned model can gain on one and lose on the other.
    assert natural.groupby("data")[C.COL_N].agg(set).to_dict() == {
        data.NATURAL_NAME: {515},
        data.NATURAL_SENTENCES_NAME: {24, 23},
    }  # 24 triples, 23 distinct anchors
    # The untouched win rate on the shipped WordNet gloss triples, by hand with the model's own encode.
    triples = data.natural_triples().frame
    model = _tiny(tiny_folder)
    cos = {}
    for column in (C.COL_POSITIVE, C.COL_NEGATIVE):
        ea = model.encode(list(triples[C.COL_ANCHOR]), normalize_embeddings=True)
        cos[column] = (ea * model.encode(list(triples[column]), normalize_embeddings=True)).sum(axis=1)
    got = natural.set_index(["data", "measure", C.COL_SETTING]).loc[
        (data.NATURAL_NAME, report.MEASURE_WIN_RATE, C.TUNE_SETTING_UNTOUCHED), "value"
    ]
    assert got == pytest.approx((cos[C.COL_NEGATIVE] > cos[C.COL_POSITIVE]).mean())
    shortcut = result.tables["shortcut"]
    assert len(shortcut) == 32 * 3 and "The door was not closed." in set(shortcut[C.COL_TEXT_B])
    assert {"best", "at_ceiling"} <= set(result.tables["costs"].columns)
    md = written["report.md"].read_text()
    head = md[: md.index("## Win rate by mode")]
    assert "**General cost on WordNet antonym glosses, natural data it never trained on** (515 triples)" in head
    assert "**General cost on NLI sentence triples, natural data it never trained on** (24 triples)" in head
    assert md.index("### WordNet antonym glosses") < md.index("### NLI sentence triples") < md.index("## Hand-written vs rule-made")
    assert '"The door was open." / "The door was not closed."' in head
    assert md.index("## General cost on natural data") < md.index("## Hand-written vs rule-made")
    assert "## Shortcut probe" in md and "| door | same | The door was open. | The door was not closed. |" in md
    doc = json.loads(written["report.json"].read_text())
    assert [d["left_out"] for d in doc["natural_data"]] == [0, 0] and len(doc["natural_cost"]) == 12 and len(doc["shortcut"]) == 96


def test_natural_rows_the_tuning_saw_are_left_out(tiny_folder, suite):
    """A natural row sharing a text with the suite is not counted as unseen data."""
    from core.files.triples import parse_triples

    anchor = suite.passages[suite.passages[C.COL_ROLE] == C.ROLE_ANCHOR][C.COL_TEXT].iloc[0]
    natural = parse_triples(
        f"premise,entailed,contradicted\n{anchor},yes,no\nA dog runs.,An animal moves.,A cat sleeps.\n".encode(), "n.csv"
    )
    config = train.TuneConfig(batch_size=4, max_steps=1)
    result = run.run_tune(_tiny(tiny_folder), "tiny", suite.head(4), config, natural=natural, control=False)
    assert [d["left_out"] for d in result.doc["natural_data"]] == [1] and set(result.tables["natural_cost"][C.COL_N]) == {1}
    assert "1 row(s) sharing a text with the tuning data left out" in result.markdown


def test_outputs_are_complete_and_readable(tuned):
    result, written = tuned
    doc = json.loads(written["report.json"].read_text())
    assert doc["groups"][C.SPLIT_TRAIN] + doc["groups"][C.SPLIT_HELD_OUT] == 16
    triples = pd.read_parquet(written["triples"])
    assert list(triples.columns[:3]) == [C.COL_ANCHOR, C.COL_POSITIVE, C.COL_NEGATIVE]
    assert not any(p.name.endswith(".part") for p in written["model"].parent.iterdir())
    md = written["report.md"].read_text()
    assert md.index("**held-out half**") < md.index("**training half**")
    assert "hand-written" in md and "McNemar" in md


def test_warnings_name_modes_that_did_not_move():
    tests = pd.DataFrame(
        [
            (C.TUNE_SETTING_TUNED, C.SPLIT_HELD_OUT, C.CAT_NEGATION, 10, 0.8, 0.1, -0.7, -0.9, -0.5, 7, 0, 0.01),
            (C.TUNE_SETTING_TUNED, C.SPLIT_HELD_OUT, C.CAT_ENTITY_SWAP, 10, 1.0, 1.0, 0.0, 0.0, 0.0, 0, 0, 1.0),
            (C.TUNE_SETTING_TUNED, C.SPLIT_TRAIN, C.CAT_HEDGING, 10, 1.0, 1.0, 0.0, 0.0, 0.0, 0, 0, 1.0),
        ],
        columns=report.TEST_COLUMNS,
    )
    notes = report.warnings(tests)
    assert len(notes) == 1 and notes[0].startswith("Entity/role swap") and "word order" in notes[0]
    assert not math.isnan(tests["pvalue"].iloc[0])


def test_labelled_pairs_keep_match_and_no_match_rows_only():
    from core.files.errors import PairsFileError
    from core.probes.tune.data import labelled_from_bytes

    data = b"text_a,text_b,label\na,b,match\nc,d,no match\ne,f,maybe\n"
    frame = labelled_from_bytes(data, "labels.csv")
    assert list(frame.columns) == ["text_a", "text_b", "same"]
    assert frame.values.tolist() == [["a", "b", True], ["c", "d", False]]
    with pytest.raises(ValueError, match="no label column"):
        labelled_from_bytes(b"text_a,text_b\na,b\n", "labels.csv")
    with pytest.raises(ValueError, match="both match and no-match"):
        labelled_from_bytes(b"text_a,text_b,label\na,b,match\nc,d,match\n", "labels.csv")
    with pytest.raises(PairsFileError):
        labelled_from_bytes(b"PK\x03\x04rest", "labels.csv")
