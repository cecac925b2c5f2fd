"""Every environment variable is one record (``constants.ENV_VARS``): modules read its name there, the docs list each one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core import constants

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "development.md"
NAMES = {var.name for var in constants.ENV_VARS}
_READERS = {("os", "getenv"), ("environ", "get"), ("environ", "pop"), ("environ", "setdefault")}


def env_table() -> str:
    """The docs' table of every record, in record order."""
    rows = [f"| `{v.name}` | {v.meaning} | {v.default} |" for v in constants.ENV_VARS]
    return "\n".join(["| variable | what it sets | unset |", "|---|---|---|", *rows])


def _sources() -> list[Path]:
    return [p for folder in ("core", "ui", "views") for p in sorted((ROOT / folder).rglob("*.py"))] + [ROOT / "app.py"]


@pytest.mark.parametrize("var", constants.ENV_VARS, ids=lambda v: v.name)
def test_every_record_is_whole(var, monkeypatch):
    assert re.fullmatch(r"[A-Z][A-Z0-9_]*", var.name)
    assert var.meaning.strip() and var.default.strip()
    monkeypatch.setenv(var.name, "  x ")
    assert var.value() == "x"
    monkeypatch.delenv(var.name)
    assert var.value("fallback") == "fallback"


def test_the_records_are_distinct():
    assert len(NAMES) == len(constants.ENV_VARS)


def test_no_module_spells_a_variable_name_of_its_own():
    found = []
    for path in _sources():
        if path.name == "constants.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            spelled = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if spelled and (node.value in NAMES or re.fullmatch(r"COSINE_PROBE_[A-Z_]+", node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
            # A name of its own kept in a constant (``X_ENV = "SOME_VARIABLE"``) is read later through that constant.
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if any(re.search(r"(^|_)ENV(_|$)", t) for t in targets):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {targets[0]} = {node.value.value!r}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                owner = node.func.value
                owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                if (owner_name, node.func.attr) in _READERS and isinstance(node.args[0], ast.Constant):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: reads {node.args[0].value!r} by a name of its own")
    assert not found, "environment variable names outside core/constants.py's records:\n" + "\n".join(found)


def test_every_variable_the_docs_or_messages_name_is_a_record():
    texts = [*ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md", ROOT / "ARCHITECTURE.md", *_sources()]
    named = {m for path in texts for m in re.findall(r"COSINE_PROBE_[A-Z_]*[A-Z]", path.read_text(encoding="utf-8"))}
    assert named <= NAMES, f"named but not a record in core/constants.py: {sorted(named - NAMES)}"


def test_the_docs_list_every_record():
    assert env_table() in DOC.read_text(encoding="utf-8"), f"docs/development.md's table of variables must read:\n{env_table()}"
