"""JUnit XML for CI test reporters: one test suite per model, one test case per budget.

The layout CI services read (Jenkins, GitLab, GitHub test-report actions)::

    <testsuites name="cosine-probe check" tests="…" failures="…" errors="…" time="…">
      <testsuite name="<model>" tests="…" failures="…" errors="…">
        <testcase classname="cosine-probe.<model>" name="max_failure_rate[negation]">
          <failure type="budget" message="negation failure rate 0.564 BREACHES budget max 0.500 (…)"/>
          <system-out>the same message</system-out>
        </testcase>

A breached budget is a ``<failure>``; a budget that could not be measured is
an ``<error>``; every test case carries its message (measured value and
budget) in ``<system-out>``, so passing ones show it too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from core.gate.budgets import STATUS_ERROR, STATUS_FAIL, Outcome

SUITES_NAME = "cosine-probe check"
CLASS_PREFIX = "cosine-probe"


def _counts(outcomes: Sequence[Outcome]) -> dict[str, str]:
    return {
        "tests": str(len(outcomes)),
        "failures": str(sum(o.status == STATUS_FAIL for o in outcomes)),
        "errors": str(sum(o.status == STATUS_ERROR for o in outcomes)),
    }


def junit_tree(outcomes: Sequence[Outcome], seconds: float = 0.0) -> ET.ElementTree:
    """The JUnit document for a gate's outcomes.

    Args:
        outcomes: one per budget per model.
        seconds: the run's wall time (JUnit's ``time``).
    """
    root = ET.Element("testsuites", {"name": SUITES_NAME, **_counts(outcomes), "time": f"{seconds:.3f}"})
    for model in dict.fromkeys(o.model for o in outcomes):
        mine = [o for o in outcomes if o.model == model]
        suite = ET.SubElement(root, "testsuite", {"name": model, **_counts(mine), "skipped": "0"})
        for outcome in mine:
            case = ET.SubElement(suite, "testcase", {"classname": f"{CLASS_PREFIX}.{model}", "name": outcome.name})
            if outcome.status == STATUS_FAIL:
                ET.SubElement(case, "failure", {"type": "budget", "message": outcome.message}).text = outcome.message
            elif outcome.status == STATUS_ERROR:
                ET.SubElement(case, "error", {"type": "not-measured", "message": outcome.message}).text = outcome.message
            ET.SubElement(case, "system-out").text = outcome.message
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(outcomes: Sequence[Outcome], path: str | Path, seconds: float = 0.0) -> Path:
    """Write the JUnit XML file (UTF-8, with an XML declaration); returns its path."""
    path = Path(path)
    junit_tree(outcomes, seconds).write(path, encoding="utf-8", xml_declaration=True)
    return path
