"""Start the app (``make run``): the pages' imports done before the server takes its first visit, then ``streamlit run``.

``streamlit run app.py`` imports what the pages import (pandas, pyarrow, plotly,
the core and the UI modules) inside the first visitor's first run: Home's
first view waited 0.6-0.9 s for them on 2 cores.  ``python -m ui.serve``
imports them first, so the server prints its address once they are in
memory and the first visit runs warm.  Every argument is handed to
``streamlit run app.py`` unchanged (``python -m ui.serve --server.port 8502``).
``streamlit run app.py`` still works; its first page is slower.
"""

from __future__ import annotations

import ast
import importlib
import logging
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from streamlit import delta_generator

from ui import pages

APP_DIR = Path(__file__).resolve().parent.parent
APP = APP_DIR / "app.py"
# Streamlit imports its emoji table when the first page icon is drawn (0.1 s of Home's first run), not at start.
STREAMLIT_LAZY = ("streamlit.emojis",)
# Streamlit warns, once per cached function, that it has no runtime yet: true while importing, and harmless (a cache
# takes its storage when it is first called, in a run).
_QUIET_LOGGERS = ("streamlit.runtime.caching.cache_data_api", "streamlit.runtime.scriptrunner_utils.script_run_context")


def script_imports(source: str) -> list[str]:
    """The modules a script imports at its top level, in order, each once.

    Args:
        source: a Python module's text.

    Returns:
        Absolute module names (``from ui import charts`` gives ``ui`` and
        ``ui.charts``; a name that is not a module is skipped at import).
    """
    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level and node.module != "__future__":
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return list(dict.fromkeys(names))


def app_scripts() -> list[Path]:
    """The router and every page's script."""
    return [APP, *(APP_DIR / p.path for p in pages.PAGES)]


def app_imports() -> list[str]:
    """The names the router and the pages import at their top, in order (:func:`script_imports` of :func:`app_scripts`)."""
    return [name for path in app_scripts() for name in script_imports(path.read_text(encoding="utf-8"))]


def preload(modules: Iterable[str]) -> list[str]:
    """Import ``modules`` (names that are attributes, not modules, are skipped); the ones imported."""
    for name in _QUIET_LOGGERS:  # Streamlit sets a logger's level when its module is imported: import first, then quiet
        importlib.import_module(name)
    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    done = []
    try:
        for name in modules:
            if name in sys.modules:
                continue
            try:
                importlib.import_module(name)
            # ``from ui.state import current`` names a function, not a module; a page that cannot import says so in the
            # browser, on its own run
            except Exception:  # noqa: BLE001
                continue
            done.append(name)
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
    return done


def skip_repl_check() -> None:
    """Tell Streamlit its "run me with ``streamlit run``" check is done: this command is ``streamlit run``.

    The check runs on a server's first drawn element: ``inspect.stack()``,
    which looks up every frame's module among all imported ones (0.2-0.5 s of
    the first visit's run here, more with the pages' modules imported).
    """
    delta_generator._use_warning_has_been_displayed = True


def main(argv: Sequence[str] | None = None) -> None:
    """Import the pages' modules, then run ``streamlit run app.py`` with ``argv`` (default: this command's arguments)."""
    preload([*app_imports(), *STREAMLIT_LAZY])
    skip_repl_check()
    from streamlit.web import cli  # noqa: PLC0415 - imported once the app's modules are, as its own start would

    cli.main(args=["run", str(APP), *(sys.argv[1:] if argv is None else argv)], prog_name="streamlit")


if __name__ == "__main__":
    main()
