"""Which retrieval variants the perturbation rules make word for word ("rule-made") and which a person wrote.

The contradiction guard is :mod:`core.probes.perturb`'s rules run in reverse,
and 428 of the shipped suite's 833 variants are exactly those rules' output,
so a mitigation's figure on them is measured on what it was built from.  The
hand-written variants are the held-out split: every mitigation is reported on
both, hand-written first.
"""

from __future__ import annotations

import pandas as pd

from core import constants


def rule_outputs(anchor: str) -> frozenset[str]:
    """Every variant :func:`core.probes.perturb.perturb` writes for ``anchor`` (empty when it cannot read it)."""
    from core.probes.perturb import perturb

    try:
        return frozenset(v.text for v in perturb(anchor).variants)
    except ValueError:  # no word to perturb
        return frozenset()


def variant_sources(anchors: pd.Series, variants: pd.Series) -> pd.Series:
    """``rule-made`` where ``perturb(anchor)`` writes the variant word for word, else ``hand-written``.

    Args:
        anchors: the anchor (query) of each variant, shape ``(n,)``.
        variants: the variants, shape ``(n,)``, aligned with ``anchors``.

    Returns:
        Strings of :data:`core.constants.VARIANT_SOURCES`, shape ``(n,)``, on ``variants``' index.

    Raises:
        ValueError: the two series differ in length.
    """
    if len(anchors) != len(variants):
        raise ValueError(f"anchors ({len(anchors)}) and variants ({len(variants)}) differ in length")
    outputs: dict[str, frozenset[str]] = {}
    sources = []
    for anchor, variant in zip(anchors.astype(str), variants.astype(str), strict=True):
        if anchor not in outputs:
            outputs[anchor] = rule_outputs(anchor)
        sources.append(constants.SOURCE_RULE if " ".join(variant.split()) in outputs[anchor] else constants.SOURCE_HAND)
    return pd.Series(sources, index=variants.index, dtype=object, name=constants.COL_VARIANT_SOURCE)
