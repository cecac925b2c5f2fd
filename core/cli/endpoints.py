"""The endpoint options every scoring command shares, and the token count printed before texts are sent.

``--models openai:MODEL`` names a model served by an OpenAI-compatible
endpoint (:mod:`core.models.endpoint`); ``--api-base`` (else
``$OPENAI_BASE_URL``) says where, ``--api-key-env`` which environment
variable holds the key (never the key itself), ``--dimensions`` the
``dimensions`` parameter and ``--price-per-million-tokens`` the price the
cost line uses.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from core.models import endpoint


class EndpointArgError(ValueError):
    """Bad endpoint options: one ``error:`` line."""


def add_endpoint_options(p: argparse.ArgumentParser) -> None:
    """``--api-base``, ``--api-key-env``, ``--dimensions``, ``--price-per-million-tokens``."""
    g = p.add_argument_group("endpoint models (--models openai:MODEL)")
    g.add_argument(
        "--api-base",
        metavar="URL",
        help=f"the OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (default ${endpoint.BASE_URL_ENV}, else OpenAI's)",
    )
    g.add_argument(
        "--api-key-env",
        metavar="NAME",
        default=endpoint.DEFAULT_KEY_ENV,
        help="the environment variable that holds the key (default %(default)s); the key is never read from the command line",
    )
    g.add_argument(
        "--dimensions",
        type=int,
        metavar="N",
        help="ask the endpoint for N-dimensional embeddings (models that support it, e.g. text-embedding-3-*)",
    )
    g.add_argument(
        "--price-per-million-tokens", type=float, metavar="USD", help="price of the endpoint's tokens, for the cost printed before a run"
    )


def configure_endpoints(args) -> list[str]:
    """Register the settings of every ``openai:`` model in ``--models``; their names.

    Raises:
        EndpointArgError: bad settings, or endpoint options with no endpoint model.
    """
    names = [m for m in (getattr(args, "models", None) or []) if endpoint.is_endpoint(m)]
    given = [
        flag
        for flag, attr in (
            ("--api-base", "api_base"),
            ("--dimensions", "dimensions"),
            ("--price-per-million-tokens", "price_per_million_tokens"),
        )
        if getattr(args, attr, None) is not None
    ]
    if given and not names:
        raise EndpointArgError(f"{', '.join(given)} only apply to endpoint models: name one as --models openai:MODEL")
    price = getattr(args, "price_per_million_tokens", None)
    if price is not None and not (math.isfinite(price) and price >= 0):
        raise EndpointArgError(f"--price-per-million-tokens must be a finite number of dollars, 0 or more, got {price:g}")
    for name in names:
        try:
            endpoint.configure(
                endpoint.make_settings(
                    name, getattr(args, "api_base", None), getattr(args, "api_key_env", None), getattr(args, "dimensions", None)
                )
            )
        except endpoint.EndpointError as exc:
            raise EndpointArgError(str(exc)) from None
    return names


def announce_tokens(models: Sequence[str], texts: Sequence[str], cache, price_per_million: float | None) -> dict[str, tuple[int, int]]:
    """Print, per endpoint model, the texts still to send and their estimated tokens (and cost); return them.

    Texts already cached under the endpoint's key are not counted: they are never sent.
    """
    from core.models import registry
    from core.models.loading import LoadedModel

    sent: dict[str, tuple[int, int]] = {}
    unique = list(dict.fromkeys(texts))
    for name in models:
        if not endpoint.is_endpoint(name):
            continue
        settings = endpoint.settings_for(name)
        key = LoadedModel(meta=registry.resolve(name), backend=None, load_seconds=0.0, fingerprint=endpoint.fingerprint(settings)).cache_key  # type: ignore[arg-type]
        # Checked as the run will check them (unit length, the asked dimensions): a vector the run would not serve is one to send.
        cached = cache.get_many(key, unique, dimension=settings.dimensions, unit_norm=True) if cache is not None else {}
        n, tokens = endpoint.tokens_to_send([t for t in unique if t not in cached])
        sent[name] = (n, tokens)
        print(f"note: {endpoint.cost_line(name, n, tokens, price_per_million)}", file=sys.stderr)
    return sent
