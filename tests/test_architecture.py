"""ARCHITECTURE.md stays true: every module it names exists, and imports only point down the layers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"

# The layers of ARCHITECTURE.md, lowest first.  A core module may import its
# own package, and any package of a lower layer; packages of one layer do not
# import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("constants",),
    ("paths", "words", "settings"),
    ("lexicon",),
    ("stats", "models", "files"),
    ("scoring",),
    ("papers",),
    ("probes", "history"),
    ("gate",),
    ("cli",),
    ("__main__",),
)
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}
FORBIDDEN_IN_CORE = ("streamlit", "ui", "views")


def _package(module: str) -> str:
    """``core.models.cache`` -> ``models``; ``core.constants`` -> ``constants``."""
    return module.split(".")[1]


def _core_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import in a file, function-local ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "core":
                found += [(node.lineno, f"core.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _core_files() -> list[Path]:
    return sorted(p for p in CORE.rglob("*.py") if ".venv" not in p.parts)


def test_every_core_package_has_a_layer():
    packages = {p.relative_to(CORE).parts[0].removesuffix(".py") for p in _core_files()} - {"__init__"}
    assert packages <= set(RANK), f"add {sorted(packages - set(RANK))} to LAYERS here and to ARCHITECTURE.md"


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_point_down(path: Path):
    own = path.relative_to(CORE).parts[0].removesuffix(".py")
    if own == "__init__":
        return
    for line, module in _core_imports(path):
        top = module.split(".")[0]
        assert top not in FORBIDDEN_IN_CORE, f"{path.name}:{line} imports {module}: core never imports streamlit, ui or views"
        if top != "core" or module == "core":
            continue
        target = _package(module)
        if target == own:
            continue
        assert RANK[target] < RANK[own], f"{path.relative_to(ROOT)}:{line} imports {module}: {own} may not import {target} (see ARCHITECTURE.md)"


def test_architecture_names_only_modules_that_exist():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:core|ui|views|tests)/[\w/]+(?:\.py)?/?)`", text))
    assert named, "ARCHITECTURE.md names no module"
    missing = sorted(n for n in named if "<" not in n and not (ROOT / n).exists())
    assert not missing, f"ARCHITECTURE.md names modules that do not exist: {missing}"


def test_every_core_module_is_on_the_map():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    unmapped = []
    for path in _core_files():
        rel = path.relative_to(ROOT)
        if path.name in ("__init__.py", "__main__.py") or path.name.startswith("_"):
            continue
        if str(rel) not in text and f"{rel.parent}/" not in text:
            unmapped.append(str(rel))
    assert not unmapped, f"add these modules to ARCHITECTURE.md's table: {unmapped}"
