"""What a run scored: suite and file hashes, and the mitigations a retrieval run ran with."""

from __future__ import annotations

import hashlib

from core import constants
from core.history.sources import bytes_sha256, file_sha256, suite_source
from core.papers.suites import SUITE_FILES


def test_hashes_are_sha256_of_the_bytes(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"text_a,text_b\nx,y\n")
    assert file_sha256(path) == hashlib.sha256(b"text_a,text_b\nx,y\n").hexdigest()
    assert bytes_sha256(b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_suite_source_names_a_suite_or_a_file(tmp_path):
    shipped = suite_source(constants.SUITE_FAILURE_MODES)
    assert shipped == {
        "suite": constants.SUITE_FAILURE_MODES,
        "sha256": hashlib.sha256(SUITE_FILES[constants.SUITE_FAILURE_MODES].read_bytes()).hexdigest(),
    }
    assert suite_source(constants.SUITE_ALL) == {"suite": constants.SUITE_ALL}
    path = tmp_path / "mine.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    assert suite_source(str(path)) == {"file": str(path.resolve()), "sha256": hashlib.sha256(b"a\tb\n").hexdigest()}
    assert suite_source("no-such-suite") == {"suite": "no-such-suite"}


def test_mitigation_settings_keep_each_plain_setting():
    from core.history.sources import mitigation_settings
    from core.probes.retrieval.mitigations import CalibratedFilter

    assert mitigation_settings([CalibratedFilter({"m": 0.81})]) == [{"name": "calibrated", "thresholds": {"m": 0.81}}]


def test_one_set_of_mitigations_in_any_order_records_the_same_settings():
    from core.history.sources import mitigation_settings
    from core.probes.retrieval.specs import build_mitigations, parse_mitigation_specs

    typed = mitigation_settings(build_mitigations(parse_mitigation_specs("guard,bm25-weighted:0.3,bm25")))
    reordered = mitigation_settings(build_mitigations(parse_mitigation_specs("bm25, bm25-weighted:0.3 ,guard")))
    assert typed == reordered
    assert [s["name"] for s in typed] == sorted(s["name"] for s in typed) and len(typed) == 3
