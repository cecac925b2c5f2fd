"""The docs stay true: README.md is at most 20 KB, and every file, test and module path that the
README, ARCHITECTURE.md, docs/*.md and the docstrings and comments of the code name exists.

A path (``core/files/reader.py``, ``docs/screenshots/``) must exist from the repository root; a
dotted module path (``core.stats.intervals.bootstrap_ci``) must be a module, or a module and a
name defined at its top level; a test file named alone (``test_reader.py``) must exist somewhere
under ``tests/``, and ``test_reader.py::test_x[case]`` must define ``test_x`` (or ``Class::test_x``).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_BYTES = 20 * 1024

DOCS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
CODE = sorted(p for folder in ("core", "ui", "views", "bench") for p in (ROOT / folder).rglob("*.py")) + [ROOT / "app.py"]

# A path from the root: a top folder of ours, then at least one more part (not a URL, not part of a longer path).
PATH_RE = re.compile(r"(?<![\w./:-])((?:core|ui|views|tests|bench|data|docs|\.ci|\.streamlit)/[\w./<>-]*[\w/>])")
MODULE_RE = re.compile(r"(?<![\w./-])((?:core|ui|views|bench)(?:\.[A-Za-z_]\w*)+)")
# Folders a run makes (git-ignored): named in the docs, absent from a clean clone.
GENERATED = ("tests/screenshots/", "site/")
TEST_RE = re.compile(r"(?<![\w.-])((?:[\w-]+/)*test_\w+\.py)((?:::\w+)*)")


@functools.cache
def _top_level_names(path: Path) -> frozenset[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(names)


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            return cut == len(parts) or parts[cut] in _top_level_names(source)
    return False


@functools.cache
def _test_files() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        found.setdefault(path.name, []).append(path)
    return found


def _test_exists(name: str, members: str) -> bool:
    candidates = [ROOT / name] if "/" in name else _test_files().get(name, [])
    candidates = [c for c in candidates if c.is_file()]
    if not members:
        return bool(candidates)
    chain = members.strip(":").split("::")
    for path in candidates:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scope = tree.body
        for part in chain:
            node = next((n for n in scope if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == part), None)
            if node is None:
                break
            scope = node.body if isinstance(node, ast.ClassDef) else []
        else:
            return True
    return False


def dead_references(text: str) -> list[str]:
    """Every path, dotted module path and test named in ``text`` that does not exist."""
    dead = []
    for match in PATH_RE.finditer(text):
        path = match.group(1).rstrip(".")
        if not any(c in path for c in "<*{") and not path.startswith(GENERATED) and not (ROOT / path).exists():
            dead.append(path)
    for match in MODULE_RE.finditer(text):
        if not _module_exists(match.group(1)):
            dead.append(match.group(1))
    for match in TEST_RE.finditer(text):
        if not _test_exists(match.group(1), match.group(2)):
            dead.append(match.group(0))
    return dead


def test_readme_is_at_most_20_kb():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move a long section into a docs/*.md page and link it"


@pytest.mark.parametrize("path", DOCS + CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_named_path_exists(path):
    dead = dead_references(path.read_text(encoding="utf-8"))
    assert not dead, f"{path.relative_to(ROOT)} names what does not exist: {sorted(set(dead))}"


def test_the_checker_finds_dead_names():
    assert (
        dead_references("see `core/stats/intervals.py` and core.stats.intervals.bootstrap_ci, test_docs.py::test_readme_is_at_most_20_kb")
        == []
    )
    dead = dead_references("core/perturb.py, core.pairs_io, core.stats.intervals.no_such, test_cli.py::test_x, test_docs.py::test_nothing")
    assert dead == ["core/perturb.py", "core.pairs_io", "core.stats.intervals.no_such", "test_cli.py::test_x", "test_docs.py::test_nothing"]


def test_the_docs_state_the_upload_limit_the_code_enforces():
    from core import constants

    said = {int(n) for page in DOCS for n in re.findall(r"(?:maxUploadSize|MAX_UPLOAD_MB) = (\d+)", page.read_text(encoding="utf-8"))}
    said |= {int(n) for page in DOCS for n in re.findall(r"the limit is (\d+) MB", page.read_text(encoding="utf-8"))}
    assert said == {constants.MAX_UPLOAD_MB}, (
        f"the docs give the upload limit as {sorted(said)} MB; the code says {constants.MAX_UPLOAD_MB}"
    )


def test_a_page_missing_from_the_nav_goes_under_more(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("nav_hook", ROOT / "docs" / "nav_hook.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    (tmp_path / "index.md").write_text("# Home\n")
    (tmp_path / "tune.md").write_text("Intro\n\n# Tuning on held-out splits\n")
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "extra.md").write_text("no heading")
    nav = [{"Home": "index.md"}]
    assert hook.unlisted_pages(tmp_path, nav) == [{"Extra": "reference/extra.md"}, {"Tuning on held-out splits": "tune.md"}]

    class Config:
        docs_dir = str(tmp_path)

    config = Config()
    config.nav = nav
    assert hook.on_config(config).nav == [{"Home": "index.md"}, {"More": hook.unlisted_pages(tmp_path, nav)}]
    config.nav = [{"Home": "index.md"}, {"Guides": ["tune.md", {"Extra": "reference/extra.md"}]}]
    assert hook.on_config(config).nav == [{"Home": "index.md"}, {"Guides": ["tune.md", {"Extra": "reference/extra.md"}]}]


def test_the_command_reference_is_the_parser_s_own():
    """docs/cli.md is generated from the argument parser: a command or option added without regenerating it fails here."""
    from core.cli.reference import reference

    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == reference(), "docs/cli.md is stale: run `python -m core.cli.reference > docs/cli.md`"


def test_nothing_shipped_names_a_path_outside_the_repository():
    """Code, docs and data name files of this repository only: a reader has no ``shared/notes`` folder (a note's path left in
    a docstring or a CSV's note column sent readers outside the project)."""
    outside = re.compile(r"(?:\.\./)?shared/notes/")
    shipped = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "app.py"]
    for folder, pattern in (("core", "*.py"), ("ui", "*.py"), ("views", "*.py"), ("docs", "*.md"), ("data", "*.csv")):
        shipped += sorted((ROOT / folder).rglob(pattern))
    scrubber = ROOT / "ui" / "widgets.py"  # holds the pattern that takes such a path off any note it shows
    named = [str(p.relative_to(ROOT)) for p in shipped if p != scrubber and outside.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not named, named
