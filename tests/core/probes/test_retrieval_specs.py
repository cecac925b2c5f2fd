"""Mitigation specs: the ``--mitigate`` parser, the spec -> Mitigation builder, hashing, and what the history records."""

from __future__ import annotations

import math

import pytest

from core import constants
from core.history.sources import mitigation_settings
from core.models.registry import MINILM_L6
from core.probes.retrieval.mitigations import CalibratedFilter, ContradictionGuard, CrossEncoderReranker, HybridBM25, Mitigation
from core.probes.retrieval.specs import MitigationSpec, build_mitigation, build_mitigations, parse_mitigation_specs, with_thresholds

RERANKER_ID = "cross-encoder/ms-marco-MiniLM-L6-v2"
EVERY = f" BM25 , bm25-weighted:0.3, guard,calibrated, reranker:{RERANKER_ID} ,"
NAMES = ["bm25-rrf", "bm25-weighted:0.3", "guard", "calibrated", f"reranker:{RERANKER_ID}"]


# ------------------------------------------------------------------ parsing


def test_parser_gives_one_spec_per_name_in_order():
    specs = parse_mitigation_specs(EVERY)
    assert specs == (
        MitigationSpec(constants.MITIGATION_BM25_RRF),
        MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.3),
        MitigationSpec(constants.MITIGATION_GUARD),
        MitigationSpec(constants.MITIGATION_CALIBRATED),
        MitigationSpec(constants.MITIGATION_RERANKER, model_id=RERANKER_ID),
    )
    assert [s.name for s in specs] == NAMES
    assert parse_mitigation_specs("bm25-rrf") == parse_mitigation_specs("BM25") == (MitigationSpec(constants.MITIGATION_BM25_RRF),)
    assert parse_mitigation_specs("  ") == parse_mitigation_specs(" , ") == ()
    # A reranker's id keeps its case; the names around it do not matter.
    assert parse_mitigation_specs("Reranker:Org/Model")[0].model_id == "Org/Model"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bm26", "unknown mitigation 'bm26'; accepted: bm25"),
        ("guard:2", "unknown mitigation 'guard:2'"),
        ("calibrated:0.5", "unknown mitigation 'calibrated:0.5'"),
        ("bm25-weighted", "'bm25-weighted': give the lexical weight, e.g. bm25-weighted:0.3"),
        ("bm25-weighted:", "give the lexical weight"),
        ("bm25-weighted:1.5", "the BM25 weight must be between 0 and 1, got '1.5'"),
        ("bm25-weighted:heavy", "the BM25 weight must be a number between 0 and 1, got 'heavy'"),
        ("bm25-weighted:nan", "between 0 and 1"),
        ("bm25:0.3", "unknown mitigation"),
        ("reranker", "'reranker': name the cross-encoder"),
        ("reranker: ", "name the cross-encoder"),
        ("bm25,bm25-rrf", "mitigation 'bm25-rrf' is listed twice"),
        ("bm25-weighted:0.3,bm25-weighted:0.30", "mitigation 'bm25-weighted:0.3' is listed twice"),
    ],
)
def test_parser_errors_say_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_mitigation_specs(text)


def test_unknown_mitigation_message_lists_every_accepted_name():
    with pytest.raises(ValueError) as err:
        parse_mitigation_specs("nope")
    for name in ("bm25", "bm25-rrf", "bm25-weighted:W", "guard", "calibrated", "reranker:ID"):
        assert name in str(err.value)


def test_parser_takes_only_text():
    with pytest.raises(ValueError, match="must be a string"):
        parse_mitigation_specs(["guard"])  # type: ignore[arg-type]


# ------------------------------------------------------------------ the spec itself


def test_specs_are_hashable_and_equal_by_settings():
    weighted = MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.3)
    # A slider's float noise is the CLI's weight: one spec, one cache entry, one history entry.
    slid = MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.1 + 0.2)
    assert slid == weighted and hash(slid) == hash(weighted) and slid.weight == 0.3
    assert weighted != MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.5)
    assert len({weighted, MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.3), MitigationSpec(constants.MITIGATION_GUARD)}) == 2
    # A weight given as an int or text is the same spec as its float.
    assert MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=1) == MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=1.0)
    # Thresholds in any order, or as a mapping, are one sorted tuple.
    a = MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds=(("m2", 0.5), ("m1", 0.25)))
    b = MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds={"m1": 0.25, "m2": 0.5})  # type: ignore[arg-type]
    assert a == b and hash(a) == hash(b) and a.thresholds == (("m1", 0.25), ("m2", 0.5))
    assert a.name == constants.MITIGATION_CALIBRATED
    with pytest.raises(AttributeError):
        a.kind = constants.MITIGATION_GUARD  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "bm25"}, "unknown mitigation kind 'bm25'"),
        ({"kind": "guard", "weight": 0.3}, "guard takes no weight"),
        ({"kind": "bm25-weighted"}, "needs the lexical weight"),
        ({"kind": "bm25-weighted", "weight": -0.1}, "between 0 and 1"),
        ({"kind": "reranker"}, "name the cross-encoder"),
        ({"kind": "reranker", "model_id": "  "}, "name the cross-encoder"),
        ({"kind": "guard", "model_id": "x/y"}, "guard takes no model id"),
        ({"kind": "guard", "thresholds": (("m", 0.5),)}, "guard takes no thresholds"),
        ({"kind": "calibrated", "thresholds": (("m", math.inf),)}, "finite"),
    ],
)
def test_a_spec_refuses_settings_its_kind_does_not_take(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MitigationSpec(**kwargs)


# ------------------------------------------------------------------ building


def test_builder_makes_each_mitigation_with_the_specs_name():
    specs = with_thresholds(parse_mitigation_specs(EVERY), {MINILM_L6: 0.4})
    built = build_mitigations(specs)
    assert [type(m) for m in built] == [HybridBM25, HybridBM25, ContradictionGuard, CalibratedFilter, CrossEncoderReranker]
    assert all(isinstance(m, Mitigation) for m in built)
    # The spec's name is the mitigation's own name, so results and history rows keep their codes.
    assert [m.name for m in built] == [s.name for s in specs] == NAMES
    assert built[1].weight == 0.3 and built[1].fusion == "weighted"
    assert built[3].thresholds == {MINILM_L6: 0.4}
    assert built[4].model_id == RERANKER_ID
    assert build_mitigations(()) == []


def test_weights_are_named_as_the_mitigation_names_them():
    for weight in (0.0, 0.1, 0.25, 0.7000000000000001, 1.0):
        spec = MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=weight)
        assert spec.name == build_mitigation(spec).name


def test_thresholds_reach_only_calibrated():
    specs = with_thresholds(parse_mitigation_specs("guard,calibrated"), {"m": 0.5})
    assert specs == (MitigationSpec(constants.MITIGATION_GUARD), MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds=(("m", 0.5),)))
    assert with_thresholds(parse_mitigation_specs("guard"), {"m": 0.5}) == (MitigationSpec(constants.MITIGATION_GUARD),)


def test_calibrated_without_thresholds_cannot_be_built():
    with pytest.raises(ValueError, match="calibrated needs each model's calibrated threshold"):
        build_mitigations(parse_mitigation_specs("calibrated"))
    with pytest.raises(ValueError, match="calibrated needs each model's calibrated threshold"):
        build_mitigations(with_thresholds(parse_mitigation_specs("calibrated"), {}))


def test_builder_takes_only_specs():
    with pytest.raises(ValueError, match="MitigationSpecs, got \\['str'\\]"):
        build_mitigations(["guard"])  # type: ignore[list-item]


# ------------------------------------------------------------------ what the history records


def test_cli_string_and_widget_specs_record_the_same_settings():
    """The page builds specs from its widgets, the CLI parses ``--mitigate``: one list of settings in the history."""
    from_cli = parse_mitigation_specs("guard,bm25-weighted:0.3,calibrated")
    from_cli = with_thresholds(from_cli, {MINILM_L6: 0.41})
    from_page = (
        MitigationSpec(constants.MITIGATION_GUARD),
        MitigationSpec(constants.MITIGATION_BM25_WEIGHTED, weight=0.3),
        MitigationSpec(constants.MITIGATION_CALIBRATED, thresholds=((MINILM_L6, 0.41),)),
    )
    assert from_cli == from_page
    recorded = mitigation_settings(build_mitigations(from_page))
    assert recorded == mitigation_settings(build_mitigations(from_cli))
    # The settings the history held before the specs: each mitigation's name and its plain attributes, in name order.
    assert recorded == [
        {"name": "bm25-weighted:0.3", "weight": 0.3, "fusion": "weighted", "k": constants.RRF_K},
        {"name": "calibrated", "thresholds": {MINILM_L6: 0.41}},
        {
            "name": "guard",
            "penalty": constants.GUARD_PENALTY,
            "gap": constants.GUARD_FLOOR_GAP,
            "floor": constants.GUARD_FLOOR_MIN,
            "limit": constants.GUARD_MAX_CANDIDATES,
        },
    ]
