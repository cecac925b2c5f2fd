"""What the commands share: exit codes, the one user error, the model options, progress and error lines.

Every command module imports from here and from nothing else in ``core.cli``
that holds a command; ``main`` assembles the parser.  Imports go one way:
``main`` -> command modules -> this module.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from core import constants
from core.cli.endpoints import add_endpoint_options
from core.messages import redact
from core.models import registry

if TYPE_CHECKING:
    from core.models.options import EncodeOptions

EXIT_USAGE = 2
EXIT_NO_MODEL = 3
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe


class CliError(Exception):
    """A user error: one line, exit code 2."""


def count_arg(text: str) -> int:
    """A whole number from the command line; ``1e5`` is read as 100000 (the range is checked by the command)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(value)


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The options every scoring command shares: models, remote-code opt-in, threshold, cache, JSON."""
    p.add_argument(
        "--models",
        nargs="+",
        metavar="M",
        help="registry names, Hugging Face ids or folders (default: the installed bundled models but the approximate 4-bit e5)",
    )
    p.add_argument(
        "--trust-remote-code",
        nargs="+",
        metavar="M",
        help="opt in to running repository code for these models (runs downloaded Python code on your machine)",
    )
    p.add_argument("--threshold", type=float, default=constants.DEFAULT_THRESHOLD, help="retrieval threshold (default %(default)s)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the disk cache")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--device",
        choices=constants.DEVICE_CHOICES,
        default=constants.DEVICE_AUTO,
        help="where models encode: auto takes a CUDA GPU, then Apple MPS, then the CPU (default %(default)s)",
    )
    p.add_argument("--batch-size", type=int, metavar="N", help="texts per forward pass (default: 32 on the CPU, 64 on MPS, 128 on CUDA)")
    p.add_argument(
        "--backend",
        choices=constants.BACKEND_CHOICES,
        help="torch, or the verified exact fp32 ONNX export of a bundled torch model "
        "(default auto: the export on the CPU, made once at first use; $COSINE_PROBE_BACKEND sets it too)",
    )
    add_endpoint_options(p)


def default_models() -> list[str]:
    """The models a command scores when given no ``--models``: the app's defaults too (``core.models.defaults``)."""
    from core.models.defaults import default_models as defaults

    return defaults()


def models_arg(values: Sequence[str] | None) -> list[str]:
    """The ``--models`` given, else :func:`default_models`; none at all is a :class:`CliError`."""
    models = list(values) if values else default_models()
    if not models:
        raise CliError("no model given and no bundled model is installed; run `make setup` (or set $COSINE_PROBE_DEFAULT_MODELS)")
    return models


def check_device(args) -> None:
    """Refuse a device this machine does not have, or a batch size below 1, before any work starts."""
    from core.models.device import choose_device

    if getattr(args, "batch_size", None) is not None and args.batch_size < 1:
        raise CliError(f"--batch-size must be at least 1, got {args.batch_size}")
    device = getattr(args, "device", None)
    if device and device != constants.DEVICE_AUTO:  # auto always resolves; checking it would import torch for nothing
        try:
            choose_device(device)
        except ValueError as exc:
            raise CliError(str(exc)) from exc


def run_options(args) -> EncodeOptions:
    """The command's :class:`EncodeOptions` from ``--device``, ``--batch-size``, ``--backend``, ``--trust-remote-code``
    and ``--engine`` (with ``--ray-actors`` and ``--quiet``).

    Commands without one of them run on its default (auto device and backend, each model's batch size, this process).

    Raises:
        CliError: ``--ray-actors`` below 1.
    """
    from core.models.engines import engine_named
    from core.models.options import EncodeOptions

    actors = getattr(args, "ray_actors", None)
    try:
        engine = engine_named(
            getattr(args, "engine", None) or constants.ENGINE_LOCAL, actors=actors, quiet=bool(getattr(args, "quiet", False))
        )
    except ValueError as exc:
        raise CliError(f"--ray-actors must be at least 1, got {actors}" if "actors" in str(exc) else str(exc)) from exc
    return EncodeOptions(
        device=getattr(args, "device", None) or constants.DEVICE_AUTO,
        batch_size=getattr(args, "batch_size", None),
        backend=getattr(args, "backend", None),
        allow_remote_code=frozenset(getattr(args, "trust_remote_code", None) or ()),
        engine=engine,
    )


def embedding_cache(args):
    """The embedding cache a command uses: memory only with ``--no-cache``, else memory and disk."""
    from core.models.cache import EmbeddingCache

    return EmbeddingCache(False if args.no_cache else None)


def require_text(label: str, text: str) -> str:
    """The text to score, after ``core.files.text_checks``: a problem is a user error, notes go to stderr."""
    from core.files.text_checks import check_text

    check = check_text(text, label)
    if check.problem:
        raise CliError(check.problem)
    for note in check.notes:
        print(f"note: {note}", file=sys.stderr)
    return check.cleaned


def print_progress(fraction: float, message: str) -> None:
    """One progress line on stderr, rewritten in place (a ``progress=`` callback of the core runners)."""
    print(f"\r[{fraction:6.1%}] {message[:90]:<90}", end="", file=sys.stderr, flush=True)


def print_errors(errors: dict[str, str]) -> None:
    """Each failed model's reason as one ``error:`` line on stderr, naming the model once."""
    for name, reason in errors.items():
        print(redact(f"error: {reason if reason.startswith(name) else f'{name}: {reason}'}"), file=sys.stderr)


def print_notes(notes: Sequence[str]) -> None:
    """A run's encode notes (e.g. a model's weights changed since they were cached), one ``note:`` line each."""
    for note in notes:
        print(redact(f"note: {note}"), file=sys.stderr)


def devices_line(devices: dict[str, str]) -> str:
    """``cpu`` when every model ran there, else each model's short name and device."""
    if len(set(devices.values())) == 1:
        return next(iter(devices.values()))
    return ", ".join(f"{registry.short_name(m)} {d}" for m, d in devices.items())


def score_pairs(args, pairs: pd.DataFrame, models: list[str]):
    """Run pairs with progress on stderr; None (after saying so) when no model produced results."""
    from core.scoring.runner import run_pairs

    quiet = getattr(args, "quiet", True)
    result = run_pairs(pairs, models, cache=embedding_cache(args), progress=None if quiet else print_progress, options=run_options(args))
    if not quiet:
        print(file=sys.stderr)
    print_errors(result.errors)
    print_notes(result.notes)
    if result.results.empty:
        print("error: no model produced results", file=sys.stderr)
        return None
    return result


def calibrated_thresholds(args, models: list[str]) -> dict[str, float]:
    """Each model's Youden-J threshold from the failure-mode suite's controls (``--calibrated``)."""
    from core.papers.suites import control_pairs
    from core.probes.calibration import calibrate, thresholds_by_model
    from core.scoring.runner import run_pairs

    result = run_pairs(control_pairs(), models, cache=embedding_cache(args), options=run_options(args))
    return thresholds_by_model(calibrate(result.results)) if not result.results.empty else {}
