"""Command line: ``python -m core COMMAND`` (``cosine-probe COMMAND``): the parser and ``main``.

User errors print one line to stderr and exit 2; a model that fails prints
its reason and the others still report.  No traceback reaches the user.
Everything a command prints, to stdout or stderr, passes the one redaction
of secrets (:func:`core.messages.redact`; :class:`RedactingStream`).
Each command lives in its own module (listed in :data:`COMMAND_MODULES`, each
with a ``register(subparsers)``); what they share is :mod:`core.cli.common`.
Imports go one way: this module -> command modules -> ``core.cli.common``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from contextlib import suppress

from core import constants
from core.cli import about
from core.cli.common import EXIT_BROKEN_PIPE, EXIT_NO_MODEL, EXIT_USAGE, CliError, check_device
from core.cli.endpoints import EndpointArgError, configure_endpoints
from core.cluster.session import RayUnavailable
from core.messages import redact, terminal_safe, typed_first_line

# The exit codes ``main`` returns stay importable from the entry point's module.
__all__ = ["COMMAND_MODULES", "EXIT_BROKEN_PIPE", "EXIT_NO_MODEL", "EXIT_USAGE", "build_parser", "main"]

# Every command, in the order ``--help`` lists them: a module with a ``register(subparsers)`` function.
COMMAND_MODULES: tuple[str, ...] = (
    "core.cli.models",
    "core.cli.compare",
    "core.cli.tokens",
    "core.cli.run",
    "core.cli.perturb",
    "core.cli.calibrate",
    "core.cli.validate",
    "core.cli.oov_words",
    "core.cli.check",
    "core.cli.history",
    "core.cli.retrieval",
    "core.cli.explain",
    "core.cli.tune",
    "core.cli.report",
    "core.cli.audit",
    "core.cli.index_settings",
)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: ``--version`` and every command of :data:`COMMAND_MODULES`, with its examples."""
    parser = argparse.ArgumentParser(prog=about.prog(), description="Where sentence-embedding cosine similarity lies.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {about.version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    # Declarations read alike by design; options several commands share live in
    # core.cli.common.add_model_options / core.cli.pairs_files.add_pairs_file_options.
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    about.add_examples(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; the process exit code, never a traceback."""
    from core.cli.argv import undecodable_argument

    undecodable = undecodable_argument(sys.argv[1:] if argv is None else argv)
    if undecodable:
        print(f"error: {undecodable}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser()
    args = parser.parse_args(argv)
    threshold = getattr(args, "threshold", None)
    if threshold is not None and not -1.0 <= threshold <= 1.0:
        print("error: --threshold must be between -1 and 1", file=sys.stderr)
        return EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(out), RedactingStream(err)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning)
            # One "warning:" line (e.g. the cache fell back to memory), not Python's two-line format.
            warnings.showwarning = lambda message, category, *_args, **_kw: print(f"warning: {message}", file=sys.stderr)
            return _run(args)
    finally:
        sys.stdout, sys.stderr = out, err


class RedactingStream:
    """A text stream whose every write passes :func:`core.messages.redact` first (a server may echo a key anywhere),
    then :func:`core.messages.terminal_safe` (a run name or a file's text may hold escape sequences).

    Each ``print`` is one write, so a secret is never split across two; every
    other attribute is the wrapped stream's.
    """

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(redact(text)) if text else text)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _run(args) -> int:
    """Run the command; every failure becomes one stderr line and an exit code."""
    try:
        check_device(args)
        configure_endpoints(args)
        return args.func(args)
    except (CliError, EndpointArgError, RayUnavailable) as exc:  # an unreachable $RAY_ADDRESS is the user's to fix
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly, as `yes | head` does, and keep the
        # interpreter's final flush from printing a second BrokenPipeError.
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        if os.environ.get(constants.ENV_DEBUG.name):
            raise
        print(f"error: {typed_first_line(exc, None)} (set {constants.ENV_DEBUG.name}=1 for details)", file=sys.stderr)
        return 1
