"""The command reference (``docs/cli.md``), written from the argument parser itself so it cannot drift from it.

``python -m core.cli.reference > docs/cli.md`` regenerates it; ``tests/test_docs.py``
fails when the file and the parser disagree.  Every command of
:data:`core.cli.main.COMMAND_MODULES` gets a section: what it does (its
``help``), its usage line, every option with its help text, grouped as
``--help`` groups them, and the examples its ``--help`` ends with.  What a
command writes and how to read it lives in the topic pages the reference
links to (audit, retrieval, index settings, stores, …).
"""

from __future__ import annotations

import argparse
import sys

from core.cli.main import build_parser

_INTRO = """# Command line

`make setup` installs the project into `.venv` (editable), so `.venv/bin/cosine-probe` is the
command line; `.venv/bin/python -m core` is the same program. `cosine-probe --version` prints the
version. A user error prints one line starting `error:` and exits 2, never with a traceback; a
model that cannot load prints its reason and exits 3 when no model ran, while the others still
report. With `--json` a command prints one JSON document on stdout and nothing else (notes and
progress go to stderr). Everything printed passes one redaction of secrets and shows control
characters as escapes.

`--models` takes registry names, short names (`MiniLM-L6`), Hugging Face ids or folders; the
default is the list `core/models/defaults.py` gives (`$COSINE_PROBE_DEFAULT_MODELS`, else the
installed bundled models but the approximate 4-bit e5, which is scored when named), the same list the
app's sidebar starts from.

This page is generated from the argument parser (`python -m core.cli.reference > docs/cli.md`),
so it lists every command and every option as `--help` does. What each command measures and how
to read its output is in the topic pages: [models](models.md), [CI gate](ci-gate.md),
[run history](run-history.md), [retrieval](retrieval.md), [triples and BEIR](triples-and-beir.md),
[your corpus (audit)](audit.md), [index settings](index-settings.md), [vector stores](stores.md),
[fine-tuning](tune.md), [endpoints](endpoints.md), [why a score](why-a-score.md) and
[performance](performance.md) (Ray and large files).
"""


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Each command's name -> (its one-line help, its parser), in the order ``--help`` lists them; {} for a parser without any."""
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if action is None:
        return {}
    helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {name: (helps.get(name, ""), sub) for name, sub in action.choices.items()}


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _option_rows(action: argparse.Action, parser: argparse.ArgumentParser) -> str:
    formatter = parser._get_formatter()
    invocation = formatter._format_action_invocation(action)
    help_text = formatter._expand_help(action) if action.help else ""
    return f"| `{_cell(invocation)}` | {_cell(help_text)} |"


def _section(name: str, summary: str, parser: argparse.ArgumentParser, level: str = "##") -> list[str]:
    usage = " ".join(parser.format_usage().split()).removeprefix(f"usage: {parser.prog}")
    lines = [f"{level} `{name}`", "", _cell(summary or parser.description or ""), "", "```text", f"cosine-probe {name}{usage}", "```", ""]
    if parser.description and parser.description != summary:
        lines += [" ".join(parser.description.split()), ""]
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
        ]
        if not actions:
            continue
        title = group.title or "options"
        lines += [f"**{title[0].upper()}{title[1:]}**", "", "| argument | what it does |", "|---|---|"]
        lines += [_option_rows(a, parser) for a in actions]
        lines.append("")
    if parser.epilog:
        lines += ["```text", parser.epilog.strip("\n"), "```", ""]
    for sub_name, (sub_summary, sub) in _subcommands(parser).items():
        lines += _section(f"{name} {sub_name}", sub_summary, sub, level + "#")
    return lines


def reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole command reference as Markdown: the introduction, then one section per command.

    Args:
        parser: the parser to describe (default: :func:`core.cli.main.build_parser`).
    """
    parser = parser or build_parser()
    commands = _subcommands(parser)
    lines = [_INTRO, "## Commands", "", "| command | what it does |", "|---|---|"]
    lines += [f"| [`{name}`](#{name}) | {_cell(summary)} |" for name, (summary, _) in commands.items()]
    lines.append("")
    for name, (summary, sub) in commands.items():
        lines += _section(name, summary, sub)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
