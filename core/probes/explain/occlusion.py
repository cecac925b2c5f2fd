"""Occlusion: remove one token (or one word) of either sentence and see how far the cosine moves.

Works for every backend: the variants are id sequences with the unit's ids
deleted, encoded in batches by :func:`core.probes.explain.forward.embed_ids`.
The attribution of a unit is ``cos(a, b) - cos(a without the unit, b)`` (or
with the unit removed from ``b``): positive when the unit makes the two
sentences more alike, negative when it pulls them apart.  Unlike integrated
gradients the attributions need not sum to anything: removing two tokens is
not the sum of removing each.
"""

from __future__ import annotations

import numpy as np

from core import constants
from core.models.loading import LoadedModel
from core.probes.explain.forward import embed_ids
from core.probes.explain.result import Explanation, as_table, token_rows, word_rows
from core.probes.explain.sides import Side, tokenize_side


def occlusion(model: LoadedModel, text_a: str, text_b: str, *, unit: str = constants.UNIT_TOKEN) -> Explanation:
    """Attribute a pair's cosine to its tokens or words by removing each in turn.

    Args:
        model: a loaded model (torch, ONNX or any backend with ``embed``).
        text_a: sentence A.
        text_b: sentence B.
        unit: ``token`` (one subword token at a time) or ``word`` (all tokens of a word at once).

    Returns:
        An :class:`Explanation` whose table has one row per unit of A then of B.

    Raises:
        ValueError: for an empty sentence or an unknown unit.
    """
    if unit not in constants.EXPLAIN_UNITS:
        raise ValueError(f"unit must be one of {', '.join(constants.EXPLAIN_UNITS)}, got {unit!r}")
    with model.lock:
        sides = [
            tokenize_side(model.tokenizer, t, s, prompt=model.meta.prompt, max_length=model.max_seq_length)
            for t, s in ((text_a, constants.SIDE_A), (text_b, constants.SIDE_B))
        ]
        cosine, drops = _occlude(model, sides, unit)
    rows = []
    build = token_rows if unit == constants.UNIT_TOKEN else word_rows
    for side, values in zip(sides, drops, strict=True):
        rows += build(model.name, side, values, constants.METHOD_OCCLUSION)
    return Explanation(
        model=model.name,
        method=constants.METHOD_OCCLUSION,
        unit=unit,
        cosine=cosine,
        table=as_table(rows),
        truncated=tuple(s.side for s in sides if s.truncated),
    )


def _removals(side: Side, unit: str) -> list[tuple[int, ...]]:
    """For each unit of the side, the indices into its ids that removing the unit deletes."""
    if unit == constants.UNIT_TOKEN:
        return [(p,) for p in side.positions]
    return [side.word_positions(w) for w in range(len(side.words))]


def _without(ids: tuple[int, ...], drop: tuple[int, ...]) -> list[int]:
    gone = set(drop)
    return [t for i, t in enumerate(ids) if i not in gone]


def _occlude(model: LoadedModel, sides: list[Side], unit: str) -> tuple[float, list[np.ndarray]]:
    """The pair's cosine and, per side, the cosine drop for each unit removed: [(units_A,), (units_B,)]."""
    a, b = sides
    removals = [_removals(a, unit), _removals(b, unit)]
    rows = [list(a.input_ids), list(b.input_ids)]
    rows += [_without(a.input_ids, r) for r in removals[0]]
    rows += [_without(b.input_ids, r) for r in removals[1]]
    vectors = embed_ids(model, rows)
    va, vb = vectors[0], vectors[1]
    cosine = float(va @ vb)
    n_a = len(removals[0])
    without_a = vectors[2 : 2 + n_a] @ vb
    without_b = vectors[2 + n_a :] @ va
    return cosine, [cosine - without_a, cosine - without_b]
