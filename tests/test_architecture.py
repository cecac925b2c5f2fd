"""ARCHITECTURE.md stays true: every module it names exists, and imports only point down the layers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
FIRST_PARTY = ("core", "ui", "views", "app")

# The layers of ARCHITECTURE.md, lowest first.  A core module may import its
# own package, and any package of a lower layer; packages of one layer do not
# import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("constants",),
    ("paths", "words", "settings", "messages"),
    ("lexicon",),
    ("stats",),
    ("cluster",),
    ("models", "files"),
    ("scoring",),
    ("papers",),
    ("probes", "history"),
    ("audit",),
    ("gate", "stores"),
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
        assert RANK[target] < RANK[own], (
            f"{path.relative_to(ROOT)}:{line} imports {module}: {own} may not import {target} (see ARCHITECTURE.md)"
        )


# Where Ray may be imported: the cluster plumbing, and the whole audit on Ray (a Ray Data pipeline of its own).
# Everything else reaches Ray through them (the Ray encoder of core/models/engines.py, run --engine ray).
RAY_HOMES = ("core/cluster/", "core/audit/ray_audit.py")


def test_only_the_cluster_plumbing_imports_ray():
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _core_files()
        if not str(path.relative_to(ROOT)).startswith(RAY_HOMES)
        for line, module in _core_imports(path)
        if module.split(".")[0] == "ray"
    ]
    assert not found, f"go through core/cluster/ (see ARCHITECTURE.md): {found}"
    assert any(m.split(".")[0] == "ray" for _, m in _core_imports(CORE / "cluster" / "actors.py"))  # the rule sees Ray's imports


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


def _module_name(path: Path) -> str:
    """``core/models/cache.py`` -> ``core.models.cache``; ``core/models/__init__.py`` -> ``core.models``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _app_files() -> list[Path]:
    """The app's own modules: ``app.py``, ``ui/`` and ``views/``."""
    return [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py")), *sorted((ROOT / "views").rglob("*.py"))]


def _import_graph(files: list[Path] | None = None) -> dict[str, set[str]]:
    """Each module (of core, or of ``files``) -> the modules of that set it imports, at module level or inside a function.

    ``from core.x import y`` points at ``core.x.y`` when ``y`` is a module, else at ``core.x``;
    importing ``core.x.y`` does not count as importing ``core.x``'s ``__init__`` (Python runs it,
    but a package's ``__init__`` that imports its own modules is not a cycle).
    """
    modules = {_module_name(p): p for p in (_core_files() if files is None else files)}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # a relative import, resolved against this module's package
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])])
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module":
                # ``importlib.import_module(name)`` imports too: every core module this file names in a string
                # (``core.cli.main.COMMAND_MODULES``) counts as imported.
                targets = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _cycle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One import loop through a component, as ``a -> b -> ... -> a`` (breadth-first, shortest)."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [start, *reversed(path[:-1]), start] if node != start else [start, start]
            if target not in previous:
                previous[target] = node
                queue.append(target)
    return component


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycle_path(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_core_has_no_import_cycle():
    graph = _import_graph()
    assert graph["core.__main__"] == {"core.cli.main"}, "the import graph misreads `from core.cli.main import main`"
    assert {"core.cli.run", "core.cli.check"} <= graph["core.cli.main"], "the import graph misses main's COMMAND_MODULES"
    loops = [f"{' -> '.join(_cycle_path(graph, c))} (the cycle's modules: {', '.join(c)})" for c in _cycles(graph)]
    assert not loops, "import cycles in core (module-level and function-level imports both count):\n" + "\n".join(loops)


def test_cli_modules_import_no_private_name_of_each_other():
    """What one CLI module uses from another is public (``core.cli.common``), never a ``_helper``."""
    found = []
    for path in sorted((CORE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core.cli"):
                found += [f"{path.name}:{node.lineno} imports {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not found, "make these public (core/cli/common.py holds what commands share):\n" + "\n".join(found)


# --------------------------------------------------------------- the app: ui and views
# ``ui/`` helps every page and ``views/`` holds one page a file: a page imports ``ui`` and ``core``, never another page
# (what two pages share is a ``ui`` helper); ``ui`` never imports a page; no two ``ui`` modules import each other, even
# through a function-local import that hides the loop from Python until a function runs.


def _imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every absolute import in a file, function-local ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_app_import_graph_reads_the_app():
    graph = _import_graph(_app_files())
    assert {"ui.pages", "ui.warmup", "ui.state"} <= graph["app"], "the import graph misreads app.py"
    assert "ui.widgets" in graph["ui.state"], "the import graph misreads `from ui.widgets import ...`"


def test_ui_has_no_import_cycle():
    graph = _import_graph(_app_files())
    loops = [f"{' -> '.join(_cycle_path(graph, c))} (the cycle's modules: {', '.join(c)})" for c in _cycles(graph)]
    assert not loops, "import cycles in ui/views (function-local imports count): move what both sides need to a lower module\n" + "\n".join(
        loops
    )


@pytest.mark.parametrize("path", _app_files()[1:], ids=lambda p: str(p.relative_to(ROOT)))
def test_ui_and_views_imports_point_down(path: Path):
    own = path.relative_to(ROOT).parts[0]
    for line, module in _imports_of(path):
        top = module.split(".")[0]
        assert top != "views", f"{path.relative_to(ROOT)}:{line} imports {module}: " + (
            "ui never imports a page" if own == "ui" else "a page never imports another page: share a ui helper"
        )
        assert top != "app", f"{path.relative_to(ROOT)}:{line} imports the router"


def test_no_function_local_import_of_our_own_modules():
    """A function-local import is for a heavy third-party package only: one of ours hid an import cycle."""
    found = []
    for path in _app_files():
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or "."] if node.level == 0 else ["."]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    continue
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno} imports {name} inside {function.name}()"
                    for name in names
                    if name == "." or name.split(".")[0] in FIRST_PARTY
                ]
    assert not found, "import these at the top of the module:\n" + "\n".join(sorted(set(found)))


MAX_FUNCTION_LINES = 100


def test_no_function_over_100_lines():
    """A function that long does several steps: split it where a step can be named (in ui and views, from 80 lines)."""
    long = []
    for path in [*_core_files(), *_app_files()]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}() is {lines} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)
