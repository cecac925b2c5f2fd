"""The recall@k cut-offs are one record (``constants.IR_RECALL_KS``): every ranking reports exactly those, nothing spells its own."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np

from core import constants
from core.probes import index_settings, vector_settings
from core.stores import audit as store_audit
from core.stores import retrieval as store_retrieval

ROOT = Path(__file__).resolve().parents[2]
# A tuple or list of small ascending integers starting at 1: how a list of cut-offs is spelled.
_CUTOFF_LITERAL = re.compile(r"[(\[]\s*1\s*,\s*5\s*(,\s*10\s*)?,?\s*[)\]]")


def test_every_cut_off_derives_from_the_one_record():
    deepest = constants.IR_RECALL_KS[-1]
    assert deepest == constants.IR_CUTOFF
    assert set(constants.RECALL_KS) <= set(constants.IR_RECALL_KS)
    assert deepest == index_settings.RESCORE_TOP_K
    assert deepest <= store_audit.QUERY_DEPTH  # a store asked for fewer rows could not answer recall@deepest
    assert inspect.signature(store_retrieval.retrieval_through_store).parameters["ks"].default == constants.IR_RECALL_KS
    assert f"top{deepest}_changed" == vector_settings.METRIC_TOP_CHANGED


def test_a_setting_against_float32_reports_each_cut_off_of_the_record():
    rng = np.random.default_rng(0)
    passages = rng.normal(size=(30, 16)).astype(np.float32)
    queries = rng.normal(size=(4, 16)).astype(np.float32)
    settings = index_settings.parse_settings(["float16"])
    rows = vector_settings.query_setting_rows(queries, passages, settings, model="m", n_resamples=20)
    recall = [m for m in rows["metric"] if m.startswith("recall_at_")]
    assert recall == [constants.COL_IR_RECALL_AT[k] for k in constants.IR_RECALL_KS]


def test_no_module_spells_its_own_cut_offs():
    found = []
    for folder in ("core", "ui", "views"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "constants.py":
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _CUTOFF_LITERAL.search(line.split("#")[0]):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "cut-offs spelled outside core/constants.py:\n" + "\n".join(found)
