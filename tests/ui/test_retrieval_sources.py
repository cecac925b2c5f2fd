"""The Retrieval page's input sources (``ui/retrieval/registry.py``) against the rules they share, as scikit-learn's test_common.

A new source is one module of ``ui/retrieval/`` and one record in ``SOURCES``; these tests then hold it to the
others' rules: its key and label are its own, its module is on the registry, the page offers it under its label,
and choosing it draws its inputs (with a hint while they are missing) and nothing that fails.
"""

from __future__ import annotations

import ast
import importlib

import pytest
from apptest_support import open_page

from core.paths import PROJECT_ROOT
from ui.retrieval.registry import SOURCES

PAGE = "views/retrieval.py"
FOLDER = PROJECT_ROOT / "ui" / "retrieval"


def _modules_with_inputs() -> set[str]:
    """Every module of ui/retrieval/ that defines an ``inputs()`` function: a source."""
    found = set()
    for path in FOLDER.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "inputs" for n in tree.body):
            found.add(f"ui.retrieval.{path.stem}")
    return found


def test_every_source_module_is_one_record_with_its_own_key_and_label():
    keys = [kind.key for kind in SOURCES]
    labels = [kind.label for kind in SOURCES]
    assert len(set(keys)) == len(keys) and len(set(labels)) == len(labels)
    assert {kind.inputs.__module__ for kind in SOURCES} == _modules_with_inputs()
    for kind in SOURCES:
        module = importlib.import_module(kind.inputs.__module__)
        assert kind.key == module.KIND, kind  # the key its Source and its widgets are named by


@pytest.fixture(scope="module")
def page():
    return open_page(PAGE)


@pytest.mark.parametrize("kind", SOURCES, ids=lambda k: k.key)
def test_choosing_a_source_draws_its_inputs_and_nothing_fails(page, kind):
    radio = page.radio(key="rt_source")
    assert radio.options == [k.label for k in SOURCES]
    radio.set_value(kind.key).run()
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    assert page.radio(key="rt_source").value == kind.key
    # Until its inputs are given a source says what to do instead of offering the Run button (the shipped suite is ready at once).
    waiting = any("to start" in i.value for i in page.info)
    runnable = any(b.key == "rt_run" for b in page.button)
    assert waiting != runnable, (waiting, runnable)
