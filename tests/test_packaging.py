"""The installable tool: pyproject's pins equal requirements.txt's, the console script, --version, an example under every --help."""

from __future__ import annotations

import argparse
import re
import tomllib
from importlib.metadata import PackageNotFoundError, distribution

import pytest

from core.cli import main as cli
from core.paths import PROJECT_ROOT

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
TOOLING_HEADER = "# Tests and tooling."


def _pins(lines: list[str]) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _requirements() -> tuple[list[str], list[str]]:
    """requirements.txt's runtime pins and its test/tooling pins."""
    lines = (PROJECT_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    cut = lines.index(TOOLING_HEADER)
    return _pins(lines[:cut]), _pins(lines[cut + 1 :])


def test_pyproject_dependencies_are_requirements_runtime_pins():
    runtime, tooling = _requirements()
    # A pin added to requirements.txt goes into pyproject.toml too, in the same order.
    assert PYPROJECT["project"]["dependencies"] == runtime, (
        "pyproject.toml [project] dependencies must list requirements.txt's runtime pins, in order"
    )
    assert PYPROJECT["project"]["optional-dependencies"]["test"] == tooling, (
        "pyproject.toml's test extra must list requirements.txt's tooling pins"
    )
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[a-z0-9,_\-]+\])?==[0-9][0-9A-Za-z.]*", pin) for pin in runtime), (
        "every runtime dependency is pinned exactly"
    )


def test_console_script_points_at_main():
    assert PYPROJECT["project"]["scripts"] == {"cosine-probe": "core.cli.main:main"}
    try:
        dist = distribution("cosine-probe")
    except PackageNotFoundError:
        pytest.skip("the project is not installed in this environment (make setup installs it)")
    [script] = [e for e in dist.entry_points if e.group == "console_scripts" and e.name == "cosine-probe"]
    assert script.load() is cli.main
    assert dist.version == PYPROJECT["project"]["version"]


def test_version_flag(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip().endswith(PYPROJECT["project"]["version"])


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command and subcommand parser, depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(((*prefix, name), sub))
                found += _commands(sub, (*prefix, name))
    return found


@pytest.mark.parametrize("path", [p for p, _ in _commands(cli.build_parser())], ids=" ".join)
def test_every_help_shows_an_example(path):
    parser = dict(_commands(cli.build_parser()))[path]
    text = parser.format_help()
    assert "examples:" in text or "example:" in text, f"`{' '.join(path)} --help` shows no example"
    assert re.search(r"^\s+(cosine-probe|python -m core) \S+", text, re.MULTILINE), "an example is a command line"
