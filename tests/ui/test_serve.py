"""``python -m ui.serve`` (``make run``): the pages' imports before the first visit, then ``streamlit run app.py``."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from streamlit import delta_generator

from ui import pages, serve

ROOT = Path(__file__).resolve().parents[2]


def test_script_imports_names_modules_and_their_imported_names_in_order_once():
    source = (
        "from __future__ import annotations\n"
        "import json, os.path\n"
        "from ui import charts, widgets\n"
        "from .sibling import thing\n"  # relative: not a module this command can name
        "import json\n"
        "def f():\n"
        "    import secrets\n"  # inside a function: imported when called, not at the page's start
    )
    assert serve.script_imports(source) == ["json", "os.path", "ui", "ui.charts", "ui.widgets"]


def test_app_scripts_are_the_router_and_every_page():
    scripts = serve.app_scripts()
    assert scripts[0] == ROOT / "app.py"
    assert scripts[1:] == [ROOT / p.path for p in pages.PAGES]
    assert all(path.is_file() for path in scripts)


def test_preload_imports_modules_and_skips_names_that_are_not_modules(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    done = serve.preload(["colorsys", "ui.pages.PAGES", "no_such_module_here", "json"])
    assert done == ["colorsys"]  # json was imported already; PAGES is a tuple; the missing module is left to the page
    assert "colorsys" in sys.modules


def test_every_page_import_resolves():
    """A page whose import line names nothing importable would fail in the browser; here it fails first."""
    names = serve.app_imports()
    assert "pandas" in names and "ui.state" in names
    modules = [n for n in names if n.split(".")[0] in {"core", "ui"} and (ROOT / (n.replace(".", "/") + ".py")).exists()]
    assert modules and all(module in sys.modules or serve.preload([module]) == [module] for module in modules)


def test_the_repl_check_is_marked_done(monkeypatch):
    # Streamlit's own name for it: a rename in an upgrade fails here, not as a silent 0.3 s on the first visit.
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)
    serve.skip_repl_check()
    assert delta_generator._use_warning_has_been_displayed is True


def test_make_run_and_the_browser_tests_start_the_same_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    run = re.search(r"^run:.*\n\t(.+)$", makefile, re.M)
    assert run and "-m ui.serve" in run.group(1)
    assert '"ui.serve"' in (ROOT / "tests" / "e2e_support.py").read_text(encoding="utf-8")


def test_arguments_reach_streamlit_run():
    out = subprocess.run([sys.executable, "-m", "ui.serve", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and "Run a Python script" in out.stdout, out.stderr[-2000:]


def _bare_expressions(source: str) -> list[int]:
    """Lines of statements that are a value alone (not a call, not a docstring): what Streamlit's magic would draw."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        for i, statement in enumerate(body if isinstance(body, list) else []):
            if not isinstance(statement, ast.Expr) or isinstance(statement.value, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)):
                continue
            if not (i == 0 and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
                lines.append(statement.lineno)
    return lines


def test_magic_is_off_and_no_page_relies_on_it():
    """Magic is off (``.streamlit/config.toml``: a page's first run skips rewriting its syntax tree), so a value alone on
    a line would draw nothing: no page has one."""
    assert re.search(r"^\[runner\][^\[]*^magicEnabled = false$", (ROOT / ".streamlit" / "config.toml").read_text(), re.M | re.S)
    assert _bare_expressions('"""doc"""\nimport x\nx.y\nst.write(1)\n') == [3]
    found = {path.name: _bare_expressions(path.read_text(encoding="utf-8")) for path in serve.app_scripts()}
    assert not {name: lines for name, lines in found.items() if lines}
