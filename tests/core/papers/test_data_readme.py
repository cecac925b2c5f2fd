"""data/README.md's variety tables must match the shipped suite files."""

import re

import pytest

from core.papers.suites import read_suite_file, suite_report
from core.paths import DATA_DIR

_ROW = re.compile(r"^\| (\w+) \| (\d+) \| (\d+) \| ([\d.]+) \| (\d+)–(\d+) \|$")


def _readme_tables() -> dict[str, dict[str, tuple]]:
    tables: dict[str, dict[str, tuple]] = {}
    current = None
    for line in (DATA_DIR / "README.md").read_text().splitlines():
        heading = re.match(r"^### `([\w-]+)`$", line)
        if heading:
            current = tables.setdefault(heading.group(1), {})
            continue
        row = _ROW.match(line)
        if row and current is not None:
            cat, *nums = row.groups()
            current[cat] = (int(nums[0]), int(nums[1]), float(nums[2]), int(nums[3]), int(nums[4]))
    return tables


@pytest.mark.parametrize("suite", ["oov", "baseline", "failure-modes"])
def test_variety_table_matches_files(suite):
    documented = _readme_tables()[suite]
    actual = {
        r.category: (r.pairs, r.distinct_words, r.mean_len, r.min_len, r.max_len) for r in suite_report(read_suite_file(suite)).itertuples()
    }
    assert documented == actual
