"""``--engine`` and ``--ray-actors``: the options of ``run``, ``audit`` and ``retrieval`` that choose where missing vectors are encoded.

The engine itself is a record on the run's options (:func:`core.cli.common.run_options`,
:mod:`core.models.engines`).  A local Ray instance by default; ``RAY_ADDRESS``
joins a cluster (see the README: ``ray start --head``, workers).
"""

from __future__ import annotations

import argparse

from core import constants


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--ray-actors``."""
    p.add_argument(
        "--engine",
        choices=constants.ENGINE_CHOICES,
        default=constants.ENGINE_LOCAL,
        help="where texts not in the embedding cache are encoded: local, this process; ray, an actor pool per model "
        f"on a local Ray instance or the cluster at ${constants.RAY_ADDRESS_ENV_VAR}, into the cache, then scored "
        "here as a local run (audit --vectors FILE.parquet: the whole audit on Ray) (default %(default)s)",
    )
    p.add_argument(
        "--ray-actors",
        type=int,
        metavar="N",
        help="with --engine ray: actors per model (default: half the cluster's CPUs; more than the cluster can hold "
        "are capped, with a note)",
    )
