"""Every probe's result against the one contract they share (``core/scoring/result.py``), as scikit-learn's test_common.

A new kind of result is one class with the protocol's members and one entry in ``RESULTS`` here; these tests then
hold it to the others' rules: it is a ``ProbeResult``, its members have their documented types, its summary is a
table, and its history record is tidy pairs that round-trip through the history store (pairs, models, settings).
Each result comes from the real probe on a few texts with the bundled MiniLM (one shared load), except tune, whose
run trains a model: it is built by hand in the shape ``run_tune`` returns.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd
import pytest

from core import constants
from core.history import store
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from core.scoring.result import HistoryRecord, ProbeResult

SAMPLES = PROJECT_ROOT / "data" / "samples"
PASSAGES = [
    "The patient has a fever and should rest.",
    "The patient does not have a fever and should rest.",
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The company acquired its rival in 2019.",
    "Rain is expected in the north tomorrow.",
]
QUERIES = ["Does the patient have a fever?", "How much of the drug should I take?"]


def _run_pairs(folder: Path):
    from core.scoring.runner import run_pairs

    pairs = pd.DataFrame({"text_a": PASSAGES[0::2], "text_b": PASSAGES[1::2], "category": ["negation", "numerical", "positive"]})
    return run_pairs(pairs.assign(suite="mine"), [MINILM_L6])


def _chunked(folder: Path):
    from core.models.cache import EmbeddingCache
    from core.scoring.chunked import score_staged, stage_pairs

    pairs = pd.DataFrame({"text_a": PASSAGES[0::2], "text_b": PASSAGES[1::2], "category": ["negation", "numerical", "positive"]})
    staged = folder / "staged.parquet"
    stage_pairs([pairs.assign(suite="mine")], staged)
    cache = EmbeddingCache(False)
    try:
        return score_staged(staged, [MINILM_L6], folder / "out", cache=cache, chunk_rows=2, write_csv=False)
    finally:
        cache.close()


def _retrieval(folder: Path):
    from core.probes.retrieval.mitigations import ContradictionGuard
    from core.probes.retrieval.run import run_retrieval
    from core.probes.retrieval.suite_files import load_retrieval_suite

    return run_retrieval(load_retrieval_suite().head(2), [MINILM_L6], mitigations=[ContradictionGuard()])


def _corpus(folder: Path):
    from core.probes.retrieval.corpus import run_corpus_probe

    return run_corpus_probe(PASSAGES, QUERIES, [MINILM_L6])


def _triples(folder: Path):
    from core.files.triples import read_triples
    from core.probes.retrieval.triples import run_triples

    return run_triples(read_triples(SAMPLES / "nli-triples.csv"), [MINILM_L6])


def _beir(folder: Path):
    from core.files.beir import read_beir
    from core.probes.retrieval.beir import run_beir

    return run_beir(read_beir(SAMPLES / "nli-beir"), [MINILM_L6])


def _index_settings(folder: Path):
    from core.probes.index_settings import parse_settings, run_index_settings

    pairs = pd.DataFrame({"text_a": PASSAGES[0::2], "text_b": PASSAGES[1::2], "category": ["negation", "numerical", "positive"]})
    return run_index_settings([MINILM_L6], settings=parse_settings(["float32", "int8"]), pairs={"mine": pairs})


def _tune(folder: Path):
    from core.probes.tune.run import TuneResult

    scores = pd.DataFrame(
        {
            constants.COL_SETTING: ["untouched", "tuned"],
            constants.COL_GROUP_ID: ["g1", "g1"],
            constants.COL_MODE: ["negation", "negation"],
            constants.COL_ANCHOR: [PASSAGES[0]] * 2,
            constants.ROLE_VARIANT: [PASSAGES[1]] * 2,
            "cosine_variant": [0.91, 0.42],
            constants.COL_SPLIT: ["held-out"] * 2,
        }
    )
    win = pd.DataFrame({constants.COL_SETTING: ["untouched", "tuned"], constants.COL_WIN_RATE: [1.0, 0.0]})
    doc = {"model": MINILM_L6, "suite": constants.SUITE_RETRIEVAL, "config": {"epochs": 1}, "seconds": 2.5}
    return TuneResult(doc, "", scores, pd.DataFrame(), pd.DataFrame(), None, {"win_rates": win})


def _audit(folder: Path):
    from core.audit.run import audit_corpus

    return audit_corpus(PASSAGES, [MINILM_L6], floor=0.5)


RESULTS: dict[str, Callable[[Path], ProbeResult]] = {
    "pairs": _run_pairs,
    "chunked": _chunked,
    "retrieval": _retrieval,
    "corpus": _corpus,
    "triples": _triples,
    "beir": _beir,
    "index-settings": _index_settings,
    "tune": _tune,
    "audit": _audit,
}


@pytest.fixture(scope="module")
def results(minilm, tmp_path_factory) -> dict[str, ProbeResult]:
    return {name: make(tmp_path_factory.mktemp(name)) for name, make in RESULTS.items()}


@pytest.mark.parametrize("kind", RESULTS)
def test_every_result_is_a_probe_result_with_typed_members(results, kind):
    result = results[kind]
    assert isinstance(result, ProbeResult)
    assert isinstance(result.models, Sequence) and result.models and all(isinstance(m, str) for m in result.models)
    assert isinstance(result.errors, Mapping) and not result.errors, result.errors
    assert isinstance(result.reports, Mapping)
    assert all(isinstance(r.device, str) and isinstance(r.backend, str) for r in result.reports.values())
    assert set(result.reports) <= set(result.models) or kind == "tune"
    assert isinstance(result.seconds, float) and math.isfinite(result.seconds) and result.seconds >= 0
    summary = result.summary()
    assert isinstance(summary, pd.DataFrame) and not summary.empty


@pytest.mark.parametrize("kind", RESULTS)
def test_every_history_record_round_trips_through_the_store(results, kind, tmp_path):
    result = results[kind]
    record = result.history_record(kind)
    assert isinstance(record, HistoryRecord) and record.storable
    assert {constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE} <= set(record.pairs.columns)
    assert not record.pairs.empty
    path = tmp_path / "history.duckdb"
    run_id = store.record_result(result, kind, command="test", origin=constants.ORIGIN_CLI, settings={"sources": []}, path=path)
    assert run_id == 1
    stored = store.load_run(run_id, path=path)
    assert len(stored.results) == len(record.pairs)
    assert set(stored.results[constants.COL_MODEL]) == set(record.pairs[constants.COL_MODEL])
    mine = record.pairs.sort_values([constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B], kind="stable")
    back = stored.results.sort_values([constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B], kind="stable")
    assert back[constants.COL_COSINE].to_numpy() == pytest.approx(mine[constants.COL_COSINE].to_numpy(float), nan_ok=True)
    # The result's own settings come back as stored (JSON: NaN as null), the caller's beside them.
    assert stored.settings["sources"] == []
    for key, value in record.settings.items():
        assert json.dumps(stored.settings[key], sort_keys=True) == json.dumps(_json(value), sort_keys=True), key
    # Backends the reports name are the stored models' backends.
    backends = stored.models.set_index("model")["backend"].to_dict()
    for model, report in result.reports.items():
        if report.backend and model in backends:
            assert backends[model] == report.backend


def _json(value):
    """``value`` as the store writes it: NaN and infinities as null."""
    return json.loads(json.dumps(value, default=str).replace("NaN", "null").replace("-Infinity", "null").replace("Infinity", "null"))


def test_a_record_with_nothing_to_compare_is_not_stored_and_says_why(tmp_path):
    from core.probes.retrieval.corpus import CorpusResult

    empty = CorpusResult(pd.DataFrame(), pd.DataFrame(), no_variant={"m": 2})
    record = empty.history_record("corpus")
    assert not record.storable and "no variant" in (record.nothing or "")
    assert store.record_result(empty, "corpus", command="test", origin=constants.ORIGIN_CLI, path=tmp_path / "h.duckdb") is None


def test_a_chunked_run_too_big_for_the_history_says_where_its_rows_are(tmp_path):
    from core.scoring.chunked import ChunkedResult

    big = ChunkedResult(tmp_path / "pairs.parquet", None, n_rows=constants.RUN_HISTORY_MAX_ROWS + 1)
    record = big.history_record("big")  # the file is never read: it does not exist
    assert not record.storable and str(tmp_path / "pairs.parquet") in (record.nothing or "")


# Where results are taken: the history, the command line, the app's helpers and pages.
TAKERS = sorted(path for folder in ("core/history", "core/cli", "ui", "views") for path in (PROJECT_ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", TAKERS, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_no_taker_reads_a_result_by_getattr_or_takes_an_untyped_result(path: Path):
    """The history, the CLI and the pages take the protocol (or a named result): no ``getattr``/``hasattr``/``isinstance``
    guessing a result's kind, no ``result`` parameter typed ``Any`` or left untyped."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr", "isinstance"):
            first = node.args[0] if node.args else None
            assert not (isinstance(first, ast.Name) and first.id == "result"), f"{path.name}:{node.lineno} reads a result by {node.func.id}"
        if isinstance(node, ast.arg) and node.arg == "result":
            hint = ast.unparse(node.annotation) if node.annotation is not None else ""
            assert hint and hint != "Any", f"{path.name}:{node.lineno}: a result parameter typed {hint or 'nothing'}"
