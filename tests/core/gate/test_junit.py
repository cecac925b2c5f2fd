"""JUnit XML written and parsed back with xml.etree: one case per budget per model, messages with value and budget."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from core.gate.budgets import Outcome
from core.gate.junit import SUITES_NAME, write_junit

OUTCOMES = [
    Outcome("m1", "max_failure_rate", "negation", 0.25, 0.5, 4, "1/4 pairs above global threshold 0.800"),
    Outcome("m1", "min_control_auc", "", 0.75, 0.9, 6),
    Outcome("m2", "max_failure_rate", "negation", 0.5, 0.5, 4),
    Outcome("m2", "min_control_auc", "", math.nan, 0.9, error="needs positive and negative controls"),
]


def test_junit_round_trip(tmp_path):
    path = write_junit(OUTCOMES, tmp_path / "check.xml", seconds=1.5)
    assert path.read_bytes().startswith(b"<?xml")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("name") == SUITES_NAME
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("time")) == ("4", "1", "1", "1.500")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["m1", "m2"]
    assert [(s.get("tests"), s.get("failures"), s.get("errors")) for s in suites] == [("2", "1", "0"), ("2", "0", "1")]
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert set(cases) == {
        ("cosine-probe.m1", "max_failure_rate[negation]"),
        ("cosine-probe.m1", "min_control_auc"),
        ("cosine-probe.m2", "max_failure_rate[negation]"),
        ("cosine-probe.m2", "min_control_auc"),
    }

    passed = cases[("cosine-probe.m1", "max_failure_rate[negation]")]
    assert passed.find("failure") is None and passed.find("error") is None
    assert "0.250" in passed.findtext("system-out") and "max 0.500" in passed.findtext("system-out")

    failed = cases[("cosine-probe.m1", "min_control_auc")].find("failure")
    assert failed is not None and failed.get("type") == "budget"
    assert "0.750" in failed.get("message") and "min 0.900" in failed.get("message")

    at_limit = cases[("cosine-probe.m2", "max_failure_rate[negation]")]
    assert at_limit.find("failure") is None  # 0.5 within max 0.5

    error = cases[("cosine-probe.m2", "min_control_auc")].find("error")
    assert error is not None and "needs positive" in error.get("message") and "min 0.900" in error.get("message")


def test_junit_escapes_what_a_model_name_may_hold(tmp_path):
    odd = [Outcome('./models/<a&b>"x"', "max_failure_rate", "neg<ation>", 0.1, 0.5)]
    root = ET.parse(write_junit(odd, tmp_path / "odd.xml")).getroot()
    case = root.find("testsuite/testcase")
    assert case.get("classname") == 'cosine-probe../models/<a&b>"x"'
    assert case.get("name") == "max_failure_rate[neg<ation>]"


def test_no_outcomes_is_an_empty_report(tmp_path):
    root = ET.parse(write_junit([], tmp_path / "empty.xml")).getroot()
    assert root.get("tests") == "0" and not root.findall("testsuite")
