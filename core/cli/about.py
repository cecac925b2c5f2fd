"""The command line's name, version and per-command examples (shown under every ``--help``).

A command added in its own module either sets its parser's ``epilog`` itself
or gets one here from :data:`EXAMPLES`; :func:`add_examples` fills in the
rest after every command is registered.
"""

from __future__ import annotations

import argparse
import os
import sys
import tomllib

from core.paths import PROJECT_ROOT

DIST_NAME = "cosine-probe"
EXAMPLE_HEADER = "examples:"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "models": ("cosine-probe models", "cosine-probe models intfloat/e5-small-v2 --json", "cosine-probe models --warm"),
    "compare": (
        'cosine-probe compare "The patient has diabetes" "The patient does not have diabetes"',
        'cosine-probe compare "It rose 5%" "It rose 50%" --models all-MiniLM-L6-v2 --json',
        'cosine-probe compare "It rose 5%" "It rose 50%" --models openai:text-embedding-3-small --api-key-env OPENAI_API_KEY',
    ),
    "tokens": ('cosine-probe tokens "Xylofar 30 mg daily" --models all-MiniLM-L6-v2 all-mpnet-base-v2',),
    "run": (
        "cosine-probe run --suite failure-modes --out out/",
        "cosine-probe run --suite my_pairs.csv --out out/ --threshold 0.8 --quiet",
    ),
    "perturb": (
        'cosine-probe perturb "The drug reduced pain in all patients"',
        'cosine-probe perturb "Revenue rose 5% in 2021" --calibrated --json',
    ),
    "calibrate": ("cosine-probe calibrate", "cosine-probe calibrate --near-miss --failure-rates --method fpr --max-fpr 0.05"),
    "validate": ("cosine-probe validate failure-modes", "cosine-probe validate my_pairs.csv"),
    "oov-words": ("cosine-probe oov-words Xylofar --n 5", "cosine-probe oov-words --run --k 3 --models all-MiniLM-L6-v2"),
    "check": (
        "cosine-probe check --config docs/check-example.toml",
        "cosine-probe check --config ci.toml --junit check.xml --summary check.md",
    ),
    "history": (
        "cosine-probe history list",
        "cosine-probe history show 12",
        "cosine-probe history diff 11 12 --json",
        "cosine-probe history export 12 --out run12.parquet",
        "cosine-probe history pin 11",
    ),
}


def version() -> str:
    """The installed distribution's version, else the one ``pyproject.toml`` declares (a plain checkout)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(DIST_NAME)
    except PackageNotFoundError:
        with (PROJECT_ROOT / "pyproject.toml").open("rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])


def prog() -> str:
    """``cosine-probe`` when run as the console script, else ``python -m core``."""
    return DIST_NAME if os.path.basename(sys.argv[0] or "") == DIST_NAME else "python -m core"


def add_examples(subparsers: argparse._SubParsersAction) -> None:
    """Give every command without an epilog its examples from :data:`EXAMPLES`, laid out as written."""
    for name, command in subparsers.choices.items():
        if command.epilog or name not in EXAMPLES:
            continue
        command.epilog = "\n".join([EXAMPLE_HEADER, *(f"  {line}" for line in EXAMPLES[name])])
        # The default formatter rewraps the epilog into one paragraph; examples must stay one per line.
        command.formatter_class = argparse.RawDescriptionHelpFormatter
