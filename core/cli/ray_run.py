"""``run --engine ray``: the options, and handing the staged pairs to :mod:`core.scoring.ray_engine`.

A local Ray instance by default; ``RAY_ADDRESS`` joins a cluster (see the
README: ``ray start --head``, workers, a shared output folder).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import constants
from core.cli.common import CliError, run_options


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--ray-actors`` for ``run``."""
    p.add_argument(
        "--engine",
        choices=constants.ENGINE_CHOICES,
        default=constants.ENGINE_LOCAL,
        help="local: this process, chunked, with the embedding cache; ray: Ray Data, an actor pool per model, "
        f"on a local Ray instance or the cluster at ${constants.RAY_ADDRESS_ENV_VAR} (default %(default)s)",
    )
    p.add_argument(
        "--ray-actors",
        type=int,
        metavar="N",
        help="with --engine ray: actors per model (default: half the cluster's CPUs; more than the cluster can hold "
        "are capped, with a note)",
    )


def score_on_ray(args, staged: Path, models: list[str], out: Path, progress):
    """Score the staged pairs on Ray; a :class:`~core.scoring.chunked.ChunkedResult` like the local engine's.

    Raises:
        CliError: ``--ray-actors`` below 1, or an unreachable ``$RAY_ADDRESS``.
    """
    from core.cluster.session import RayUnavailable
    from core.scoring.ray_engine import score_staged_ray

    if args.ray_actors is not None and args.ray_actors < 1:
        raise CliError(f"--ray-actors must be at least 1, got {args.ray_actors}")
    try:
        return score_staged_ray(
            staged, models, out, options=run_options(args), actors=args.ray_actors, progress=progress, quiet=bool(args.quiet)
        )
    except RayUnavailable as exc:
        raise CliError(str(exc)) from exc
