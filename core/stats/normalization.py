"""OOV sensitivity (OOV paper): signed OOV delta, dynamic range and the range-normalized delta."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from core.stats._validation import _as_1d, _as_scalar, _same_length


def oov_delta(original: ArrayLike, replaced: ArrayLike) -> np.ndarray:
    """Signed OOV delta per pair: original-pair cosine minus replaced-pair cosine.

    ``delta_i = cos_original_i - cos_replaced_i``.

    The OOV paper (Section 3.4) calls this "the absolute difference", but all
    of its reported deltas are positive, i.e. signed and absolute coincide on
    its data. We keep the sign: a negative delta means the invented word made
    the pair *more* similar, which is a finding, not noise to fold away.

    Args:
        original: Cosines of the original-entity pairs, shape ``(n,)``.
        replaced: Cosines of the same pairs with the entity replaced by an
            invented word, shape ``(n,)``.

    Returns:
        Array of shape ``(n,)``; positive = similarity lost to the OOV word.

    Raises:
        ValueError: On empty input, NaN/inf, non-1-D input or unequal lengths.
    """
    orig = _as_1d(original, "original")
    repl = _as_1d(replaced, "replaced")
    _same_length(orig, repl, "original", "replaced")
    return orig - repl


def dynamic_range(positive: ArrayLike, negative: ArrayLike) -> float:
    """A model's usable similarity range (OOV paper, Section 4.3 / Appendix C).

    ``DR = mean(positive) - mean(negative)``: the distance between what the
    model gives paraphrases and what it gives unrelated sentences.

    Args:
        positive: Cosines of positive-control (paraphrase) pairs, ``(n_pos,)``.
        negative: Cosines of negative-control (unrelated) pairs, ``(n_neg,)``.

    Returns:
        The dynamic range; it can be <= 0 for a model that cannot separate
        the controls (see :func:`normalized_oov_delta`).

    Raises:
        ValueError: On empty input, NaN/inf or non-1-D input.
    """
    pos = _as_1d(positive, "positive")
    neg = _as_1d(negative, "negative")
    return float(pos.mean() - neg.mean())


def normalized_oov_delta(deltas: ArrayLike, dynamic_range: float) -> np.ndarray:
    """OOV deltas as a fraction of the model's dynamic range.

    ``delta_norm_i = delta_i / DR`` (OOV paper, Appendix C). Because DR is one
    number per model, ``mean(delta / DR) == mean(delta) / DR``.

    Args:
        deltas: Raw (signed) OOV deltas, shape ``(n,)``.
        dynamic_range: The model's dynamic range, from :func:`dynamic_range`.

    Returns:
        Array of shape ``(n,)``; 0.25 means a quarter of the distance between
        "paraphrase" and "unrelated" was consumed by the replacement.

    Raises:
        ValueError: On empty/NaN/non-1-D deltas, or if ``dynamic_range`` is
            not a positive finite number (a model with no usable range has
            nothing to normalize by).
    """
    arr = _as_1d(deltas, "deltas")
    dr = _as_scalar(dynamic_range, "dynamic_range")
    if dr <= 0.0:
        raise ValueError(
            f"dynamic_range must be > 0 to normalize by it, got {dr}: the model does not score positive controls above negative controls"
        )
    return arr / dr
