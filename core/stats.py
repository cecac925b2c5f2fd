"""Similarity and effect-size statistics for cosine-probe.

Every number the explorer shows comes from a function in this module, so the
formulas live here once, each documented with the paper it reproduces:

* OOV paper: "Out-of-Vocabulary Robustness in Sentence Embeddings: How
  Embedding Models Differ on Unknown Entities" (token Jaccard, signed OOV delta, dynamic range, normalized delta, Cohen's d
  between models, Pearson/Spearman of overlap vs cosine).
* Failure paper: "When Cosine Similarity Lies" (retrieval failure rate at a
  threshold, severity ratio, Cohen's d of positive controls vs failure pairs,
  Kruskal-Wallis across models, the model vulnerability score of Table 4).

Conventions:

* Public functions validate their inputs and raise ``ValueError`` with a
  message naming the argument (``TypeError`` when an argument is the wrong
  kind of object, e.g. a string where a token list belongs); ``_private``
  helpers assume clean input.
* Cosines and other samples are 1-D float arrays of shape ``(n,)``.
* Standard deviations are sample SDs (``ddof=1``) unless stated otherwise.
* Undefined statistics (a correlation of a constant, a test on all-tied
  data) come back as ``nan`` without a warning, because the explorer renders
  them as "n/a" rather than stopping.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from core.constants import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE,
    DEFAULT_THRESHOLD,
    THRESHOLD_GRID_STEP,
)

__all__ = [
    "CorrelationResult",
    "KruskalResult",
    "bootstrap_ci",
    "bootstrap_diff_ci",
    "cohens_d",
    "cohens_d_from_summary",
    "correlation",
    "cos_sim",
    "dynamic_range",
    "failure_rate",
    "failure_rate_ci",
    "failure_rate_curve",
    "kruskal_wallis",
    "mean_sd",
    "normalized_oov_delta",
    "oov_delta",
    "pairwise_cos_sim",
    "severity_ratio",
    "threshold_grid",
    "token_jaccard",
    "vulnerability_scores",
    "word_jaccard",
    "word_tokens",
]


class KruskalResult(NamedTuple):
    """Kruskal-Wallis H-test across groups.

    Attributes:
        h: H statistic (tie-corrected, as scipy computes it).
        p: p-value from the chi-squared approximation with ``n_groups - 1``
            degrees of freedom.
        n_groups: Number of groups compared.
    """

    h: float
    p: float
    n_groups: int


class CorrelationResult(NamedTuple):
    """Pearson and Spearman correlation of two aligned samples.

    Attributes:
        pearson_r: Pearson product-moment correlation coefficient.
        pearson_p: Two-sided p-value of ``pearson_r``.
        spearman_rho: Spearman rank correlation coefficient.
        spearman_p: Two-sided p-value of ``spearman_rho``.
        n: Number of pairs.
    """

    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float
    n: int


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------


def _as_1d(values: ArrayLike, name: str, min_size: int = 1) -> np.ndarray:
    """Return ``values`` as a finite float array of shape ``(n,)``, n >= min_size."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {values!r:.80}") from exc
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size < min_size:
        if arr.size == 0:
            raise ValueError(f"{name} is empty")
        raise ValueError(f"{name} needs at least {min_size} values, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_2d(values: ArrayLike, name: str) -> np.ndarray:
    """Return ``values`` as a finite float matrix ``(n, d)``; 1-D becomes ``(1, d)``."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric") from exc
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n, d), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _as_scalar(value: float, name: str) -> float:
    """Return ``value`` as a finite Python float."""
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number, got {value!r}") from exc
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


def _same_length(x: np.ndarray, y: np.ndarray, x_name: str, y_name: str) -> None:
    if x.shape != y.shape:
        raise ValueError(
            f"{x_name} and {y_name} must have the same length, "
            f"got {x.shape[0]} and {y.shape[0]}"
        )


def _check_confidence(confidence: float) -> float:
    confidence = _as_scalar(confidence, "confidence")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return confidence


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples:
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    return int(n_resamples)


# --------------------------------------------------------------------------
# cosine similarity
# --------------------------------------------------------------------------


def _normalize_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector has no direction; dividing by 1 keeps it zero, so its
    # cosine with anything is 0 instead of nan.
    return matrix / np.where(norms == 0.0, 1.0, norms)


def cos_sim(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cosine similarity between every row of ``a`` and every row of ``b``.

    ``cos(a_i, b_j) = a_i . b_j / (||a_i|| ||b_j||)``, computed on
    L2-normalized rows. A 1-D input is treated as a single row, as in
    ``sentence_transformers.util.cos_sim``.

    Args:
        a: Embeddings of shape ``(n, d)`` (or ``(d,)``).
        b: Embeddings of shape ``(m, d)`` (or ``(d,)``).

    Returns:
        Matrix of shape ``(n, m)`` with values in ``[-1, 1]``. Rows that are
        all zeros give similarity 0 with everything.

    Raises:
        ValueError: If an input is empty, not 1-D/2-D, contains NaN/inf, or
            the embedding dimensions differ.
    """
    a_arr = _as_2d(a, "a")
    b_arr = _as_2d(b, "b")
    if a_arr.shape[1] != b_arr.shape[1]:
        raise ValueError(
            f"a and b must have the same embedding dimension, "
            f"got {a_arr.shape[1]} and {b_arr.shape[1]}"
        )
    sims = _normalize_rows(a_arr) @ _normalize_rows(b_arr).T
    # Rounding can push identical vectors to 1.0000000000000002, which would
    # count as "above" a threshold of 1.0 and break arccos downstream.
    return np.clip(sims, -1.0, 1.0)


def pairwise_cos_sim(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cosine similarity of aligned rows: ``cos(a_i, b_i)`` for each ``i``.

    Equivalent to ``np.diag(cos_sim(a, b))`` without building the ``(n, n)``
    matrix.

    Args:
        a: Embeddings of shape ``(n, d)``.
        b: Embeddings of shape ``(n, d)``.

    Returns:
        Array of shape ``(n,)`` with values in ``[-1, 1]``; zero rows give 0.

    Raises:
        ValueError: If an input is empty, not 1-D/2-D (1-D counts as one
            row), contains NaN/inf, or the shapes differ.
    """
    a_arr = _as_2d(a, "a")
    b_arr = _as_2d(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must have the same shape (n, d), "
            f"got {a_arr.shape} and {b_arr.shape}"
        )
    sims = np.einsum("ij,ij->i", _normalize_rows(a_arr), _normalize_rows(b_arr))
    return np.clip(sims, -1.0, 1.0)


# --------------------------------------------------------------------------
# lexical overlap
# --------------------------------------------------------------------------

# A word is a run of letters/digits/underscores, optionally followed by one
# apostrophe and another run, so "don't" and "patient's" stay one token
# while "5mg" and "v1.5" split only at punctuation ("v1", "5").
_WORD_RE = re.compile(r"\w+(?:'\w+)?")
# Typographic apostrophes would otherwise split "don’t" into "don" and "t".
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _jaccard(set_a: set[str], set_b: set[str]) -> float:
    union = set_a | set_b
    # Two empty token sets are the same (empty) sentence, so overlap is total.
    if not union:
        return 1.0
    return len(set_a & set_b) / len(union)


def _token_set(tokens: Sequence[str], name: str) -> set[str]:
    # A bare string is a Sequence[str] too, but Jaccard over its characters
    # is never what the caller meant.
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a sequence of tokens, not a string")
    token_set = set(tokens)
    if not all(isinstance(tok, str) for tok in token_set):
        raise TypeError(f"{name} must contain only strings")
    return token_set


def token_jaccard(tokens_a: Sequence[str], tokens_b: Sequence[str]) -> float:
    """Jaccard overlap of two subword-token sets (OOV paper, Section 3.4).

    ``J(A, B) = |A ∩ B| / |A ∪ B|`` where ``A`` and ``B`` are the *sets* of
    tokens, so repeated tokens count once and order is ignored (an entity
    swap therefore scores 1.0). Tokens are compared exactly as the tokenizer
    produced them (e.g. ``"##mp"``), including case.

    Args:
        tokens_a: Tokens of the first sentence, length ``n_a``.
        tokens_b: Tokens of the second sentence, length ``n_b``.

    Returns:
        Overlap in ``[0, 1]``; 1.0 when both token lists are empty.

    Raises:
        TypeError: If an argument is a plain string or holds non-strings.
    """
    return _jaccard(_token_set(tokens_a, "tokens_a"), _token_set(tokens_b, "tokens_b"))


def word_tokens(text: str) -> list[str]:
    """Lowercase word tokens of ``text``.

    The text is lowercased, typographic apostrophes (’ ‘ ʼ) become ``'``, and
    tokens are the matches of ``\\w+(?:'\\w+)?``: runs of Unicode letters,
    digits and underscores, optionally joined by one inner apostrophe.
    Digits are kept ("500mg" is one token), other punctuation separates
    tokens ("3.5" gives "3" and "5") and is dropped.

    Args:
        text: Any string.

    Returns:
        Tokens in order of appearance, duplicates kept; ``[]`` for text
        without word characters.

    Raises:
        TypeError: If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return _WORD_RE.findall(text.translate(_APOSTROPHES).lower())


def word_jaccard(text_a: str, text_b: str) -> float:
    """Jaccard overlap of the word sets of two texts.

    ``J = |W_a ∩ W_b| / |W_a ∪ W_b|`` with ``W = set(word_tokens(text))``.
    A tokenizer-free companion to :func:`token_jaccard`.

    Args:
        text_a: First sentence.
        text_b: Second sentence.

    Returns:
        Overlap in ``[0, 1]``; 1.0 when neither text has a word token.

    Raises:
        TypeError: If an argument is not a string.
    """
    return _jaccard(set(word_tokens(text_a)), set(word_tokens(text_b)))


# --------------------------------------------------------------------------
# OOV sensitivity
# --------------------------------------------------------------------------


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
            f"dynamic_range must be > 0 to normalize by it, got {dr}: the model "
            "does not score positive controls above negative controls"
        )
    return arr / dr


# --------------------------------------------------------------------------
# effect sizes and summary statistics
# --------------------------------------------------------------------------


def _cohens_d(
    mean_x: float, var_x: float, n_x: int, mean_y: float, var_y: float, n_y: int
) -> float:
    diff = mean_x - mean_y
    pooled_var = ((n_x - 1) * var_x + (n_y - 1) * var_y) / (n_x + n_y - 2)
    if pooled_var == 0.0:
        # Both groups are constant: any difference is a perfect separation
        # (+/-inf keeps its direction); identical constants are no effect.
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return float(diff / math.sqrt(pooled_var))


def cohens_d(x: ArrayLike, y: ArrayLike) -> float:
    """Cohen's d of two independent samples with pooled standard deviation.

    ``d = (mean(x) - mean(y)) / s_p`` with
    ``s_p = sqrt(((n_x - 1) s_x^2 + (n_y - 1) s_y^2) / (n_x + n_y - 2))`` and
    sample SDs ``s`` (``ddof=1``). No small-sample (Hedges) correction.

    The sign follows the argument order; the project uses two conventions:

    * Failure paper, Table 5: ``cohens_d(positive, failure)``. Negative d
      means failure pairs score *higher* than true paraphrases.
    * OOV paper, Table 7: ``cohens_d(deltas_model1, deltas_model2)``.
      Positive d means model 1 loses more similarity to OOV words. This
      (unpaired, pooled ``ddof=1``) variant reproduces the published Table 7
      from the Appendix A1 deltas within 0.01, so it is the one used there,
      although the deltas of two models on the same pairs are paired data.

    Args:
        x: First sample, shape ``(n_x,)``, ``n_x >= 2``.
        y: Second sample, shape ``(n_y,)``, ``n_y >= 2``.

    Returns:
        The effect size. If both samples are constant the pooled SD is 0 and
        the result is ``+inf``/``-inf`` when the means differ, 0.0 when they
        are equal (no warning either way).

    Raises:
        ValueError: If a sample has fewer than 2 values, NaN/inf, or is not
            1-D.
    """
    x_arr = _as_1d(x, "x", min_size=2)
    y_arr = _as_1d(y, "y", min_size=2)
    # Test constancy exactly: var() of a constant float array can be 1e-33
    # instead of 0, which would turn "no spread" into an absurd finite d.
    var_x = 0.0 if np.ptp(x_arr) == 0 else float(x_arr.var(ddof=1))
    var_y = 0.0 if np.ptp(y_arr) == 0 else float(y_arr.var(ddof=1))
    return _cohens_d(
        float(x_arr.mean()), var_x, x_arr.size, float(y_arr.mean()), var_y, y_arr.size
    )


def cohens_d_from_summary(
    mean_x: float,
    sd_x: float,
    n_x: int,
    mean_y: float,
    sd_y: float,
    n_y: int,
) -> float:
    """Cohen's d from published summary statistics (same formula as :func:`cohens_d`).

    ``d = (mean_x - mean_y) / sqrt(((n_x - 1) sd_x^2 + (n_y - 1) sd_y^2)
    / (n_x + n_y - 2))``. Used to check published tables against their own
    means and SDs; ``sd`` must be the sample SD (``ddof=1``) for the result to
    equal :func:`cohens_d` on the raw data.

    Args:
        mean_x: Mean of the first group.
        sd_x: Sample SD of the first group (>= 0).
        n_x: Size of the first group (>= 2).
        mean_y: Mean of the second group.
        sd_y: Sample SD of the second group (>= 0).
        n_y: Size of the second group (>= 2).

    Returns:
        The effect size; ``+/-inf`` or 0.0 when both SDs are 0 (see
        :func:`cohens_d`).

    Raises:
        ValueError: On non-finite values, negative SDs, or group sizes that
            are not integers >= 2.
    """
    values = {
        "mean_x": _as_scalar(mean_x, "mean_x"),
        "sd_x": _as_scalar(sd_x, "sd_x"),
        "mean_y": _as_scalar(mean_y, "mean_y"),
        "sd_y": _as_scalar(sd_y, "sd_y"),
    }
    for name in ("sd_x", "sd_y"):
        if values[name] < 0.0:
            raise ValueError(f"{name} must be >= 0, got {values[name]}")
    for name, n in (("n_x", n_x), ("n_y", n_y)):
        if isinstance(n, bool) or int(n) != n or n < 2:
            raise ValueError(f"{name} must be an integer >= 2, got {n!r}")
    return _cohens_d(
        values["mean_x"],
        values["sd_x"] ** 2,
        int(n_x),
        values["mean_y"],
        values["sd_y"] ** 2,
        int(n_y),
    )


def severity_ratio(failure: ArrayLike, positive: ArrayLike) -> float:
    """Severity ratio of a failure mode (failure paper, Section 3.4 / Table 3).

    ``ratio = mean(failure) / mean(positive)``. A ratio >= 1 means the model
    scores the failure pairs at least as similar as true paraphrases.

    Args:
        failure: Cosines of one failure mode's pairs, shape ``(n_f,)``.
        positive: Cosines of positive-control pairs, shape ``(n_p,)``.

    Returns:
        The ratio of means.

    Raises:
        ValueError: On empty/NaN/non-1-D input, or if ``mean(positive) <= 0``
            (a ratio to a non-positive baseline has no "more similar than
            paraphrases" reading).
    """
    fail = _as_1d(failure, "failure")
    pos = _as_1d(positive, "positive")
    pos_mean = float(pos.mean())
    if pos_mean <= 0.0:
        raise ValueError(f"mean(positive) must be > 0, got {pos_mean}")
    return float(fail.mean()) / pos_mean


def mean_sd(values: ArrayLike) -> tuple[float, float]:
    """Mean and sample standard deviation.

    ``mean = sum(v) / n``; ``sd = sqrt(sum((v - mean)^2) / (n - 1))``
    (``ddof=1``).

    Args:
        values: Sample of shape ``(n,)``, ``n >= 1``.

    Returns:
        ``(mean, sd)``; ``sd`` is ``nan`` when ``n == 1`` (no warning).

    Raises:
        ValueError: On empty, NaN/inf or non-1-D input.
    """
    arr = _as_1d(values, "values")
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if arr.size > 1 else math.nan
    return mean, sd


# --------------------------------------------------------------------------
# retrieval failure rates
# --------------------------------------------------------------------------


def failure_rate(cosines: ArrayLike, threshold: float = DEFAULT_THRESHOLD) -> float:
    """Fraction of pairs that would be retrieved as matches at ``threshold``.

    ``rate = #{i : cos_i > threshold} / n``: strictly greater, as in the
    failure paper ("% of pairs with similarity > 0.7"); a cosine exactly at
    the threshold is not a failure.

    Args:
        cosines: Cosines of pairs that *should not* match, shape ``(n,)``.
        threshold: Retrieval threshold.

    Returns:
        Rate in ``[0, 1]``.

    Raises:
        ValueError: On empty/NaN/non-1-D cosines or a non-finite threshold.
    """
    arr = _as_1d(cosines, "cosines")
    thr = _as_scalar(threshold, "threshold")
    return float(np.mean(arr > thr))


def threshold_grid(
    step: float = THRESHOLD_GRID_STEP, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """Evenly spaced thresholds from ``low`` to ``high`` inclusive.

    ``t_k = low + k * step`` for ``k = 0 .. floor((high - low) / step)``,
    computed in decimal arithmetic so every value is the float nearest to its
    decimal spelling (``t[70] == 0.7`` exactly, not ``0.7000000000000001``);
    otherwise the strict ``>`` of :func:`failure_rate` would disagree between
    the grid and a typed-in threshold. ``high`` is included when
    ``high - low`` is a multiple of ``step``; otherwise the grid stops at the
    last point below ``high``.

    Args:
        step: Spacing, > 0.
        low: First threshold.
        high: Upper bound, >= ``low``.

    Returns:
        Array of shape ``(k,)``, ascending.

    Raises:
        ValueError: If a bound is not finite, ``step <= 0`` or ``high < low``.
    """
    step_f = _as_scalar(step, "step")
    low_f = _as_scalar(low, "low")
    high_f = _as_scalar(high, "high")
    if step_f <= 0.0:
        raise ValueError(f"step must be > 0, got {step_f}")
    if high_f < low_f:
        raise ValueError(f"high must be >= low, got low={low_f}, high={high_f}")
    # repr() gives the shortest decimal that round-trips, i.e. what was typed.
    d_step, d_low, d_high = (Decimal(repr(v)) for v in (step_f, low_f, high_f))
    n_steps = int((d_high - d_low) // d_step)
    return np.array([float(d_low + k * d_step) for k in range(n_steps + 1)])


def failure_rate_curve(cosines: ArrayLike, thresholds: ArrayLike) -> np.ndarray:
    """Failure rate at each of several thresholds.

    ``rate_k = #{i : cos_i > t_k} / n`` for every threshold ``t_k``, the same
    strict comparison as :func:`failure_rate`, computed for all thresholds at
    once with a sort and a binary search.

    Args:
        cosines: Cosines, shape ``(n,)``.
        thresholds: Thresholds, shape ``(k,)``, any order.

    Returns:
        Rates of shape ``(k,)`` in ``[0, 1]``, aligned with ``thresholds``.

    Raises:
        ValueError: On empty, NaN/inf or non-1-D input.
    """
    arr = np.sort(_as_1d(cosines, "cosines"))
    thr = _as_1d(thresholds, "thresholds")
    # side="right" puts values equal to t_k below the cut, giving strict ">".
    n_above = arr.size - np.searchsorted(arr, thr, side="right")
    return n_above / arr.size


# --------------------------------------------------------------------------
# tests across groups and correlations
# --------------------------------------------------------------------------


def kruskal_wallis(groups: Mapping[str, ArrayLike]) -> KruskalResult:
    """Kruskal-Wallis H-test: do the groups come from the same distribution?

    Wraps ``scipy.stats.kruskal`` (H with tie correction, chi-squared p-value
    on ``k - 1`` degrees of freedom). The failure paper uses it across models
    for each failure mode (Appendix A), with one group per model.

    Args:
        groups: Mapping of group name to a sample of shape ``(n_g,)``; at
            least two groups, each non-empty.

    Returns:
        ``KruskalResult(h, p, n_groups)``. When every value in every group is
        identical the test is undefined (H is 0/0) and ``h`` and ``p`` are
        ``nan``, returned without a warning.

    Raises:
        TypeError: If ``groups`` is not a mapping.
        ValueError: With fewer than two groups, or an empty, NaN or non-1-D
            group.
    """
    if not isinstance(groups, Mapping):
        raise TypeError("groups must be a mapping of group name to values")
    if len(groups) < 2:
        raise ValueError(f"kruskal_wallis needs at least 2 groups, got {len(groups)}")
    samples = [_as_1d(values, f"group {name!r}") for name, values in groups.items()]
    pooled = np.concatenate(samples)
    if np.ptp(pooled) == 0:
        return KruskalResult(math.nan, math.nan, len(samples))
    from scipy import stats  # imported here: scipy.stats costs ~0.6 s, and pages import this module at start

    result = stats.kruskal(*samples)
    return KruskalResult(float(result.statistic), float(result.pvalue), len(samples))


def correlation(x: ArrayLike, y: ArrayLike) -> CorrelationResult:
    """Pearson and Spearman correlation of two aligned samples.

    Wraps ``scipy.stats.pearsonr`` and ``scipy.stats.spearmanr`` (two-sided
    p-values). The OOV paper correlates token Jaccard with cosine this way.

    Args:
        x: First sample, shape ``(n,)``, ``n >= 3``.
        y: Second sample, shape ``(n,)``.

    Returns:
        ``CorrelationResult(pearson_r, pearson_p, spearman_rho, spearman_p,
        n)``. If either sample is constant the correlations are undefined and
        all four values are ``nan`` (scipy's ``ConstantInputWarning`` is not
        emitted).

    Raises:
        ValueError: On fewer than 3 pairs, unequal lengths, NaN/inf or
            non-1-D input.
    """
    x_arr = _as_1d(x, "x", min_size=3)
    y_arr = _as_1d(y, "y", min_size=3)
    _same_length(x_arr, y_arr, "x", "y")
    n = int(x_arr.size)
    if np.ptp(x_arr) == 0 or np.ptp(y_arr) == 0:
        return CorrelationResult(math.nan, math.nan, math.nan, math.nan, n)
    with warnings.catch_warnings():
        from scipy import stats

        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        pearson = stats.pearsonr(x_arr, y_arr)
        spearman = stats.spearmanr(x_arr, y_arr)
    return CorrelationResult(
        float(pearson.statistic),
        float(pearson.pvalue),
        float(spearman.statistic),
        float(spearman.pvalue),
        n,
    )


# --------------------------------------------------------------------------
# bootstrap confidence intervals
# --------------------------------------------------------------------------

_STATISTICS: dict[str, Callable[..., np.ndarray]] = {
    "mean": np.mean,
    "median": np.median,
}


def _percentile_bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[float, float]:
    from scipy import stats

    result = stats.bootstrap(
        data,
        statistic,
        n_resamples=n_resamples,
        vectorized=True,
        paired=paired,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return float(ci.low), float(ci.high)


def bootstrap_ci(
    values: ArrayLike,
    statistic: str = "mean",
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Seeded percentile-bootstrap confidence interval of a statistic.

    Resamples ``values`` with replacement ``n_resamples`` times
    (``scipy.stats.bootstrap``, ``method="percentile"``) and returns the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    resampled statistic. The same seed always gives the same interval.

    Args:
        values: Sample of shape ``(n,)``.
        statistic: ``"mean"`` or ``"median"``.
        n_resamples: Number of bootstrap resamples (>= 1).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)``. For a degenerate sample (``n == 1`` or all values
        equal) every resample has the same statistic, so the interval is
        ``(v, v)``; it is returned directly, without calling scipy.

    Raises:
        ValueError: On empty/NaN/non-1-D values, an unknown statistic, or an
            invalid ``n_resamples`` / ``confidence``.
    """
    arr = _as_1d(values, "values")
    if statistic not in _STATISTICS:
        raise ValueError(
            f"statistic must be one of {sorted(_STATISTICS)}, got {statistic!r}"
        )
    n_resamples = _check_resamples(n_resamples)
    confidence = _check_confidence(confidence)
    func = _STATISTICS[statistic]
    if np.ptp(arr) == 0:
        # arr[0], not arr.mean(): the mean of three 0.7s is 0.6999999999999998.
        value = float(arr[0])
        return value, value
    return _percentile_bootstrap(
        (arr,),
        func,
        paired=False,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def bootstrap_diff_ci(
    x: ArrayLike,
    y: ArrayLike,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of ``mean(x) - mean(y)`` for paired samples.

    ``x_i`` and ``y_i`` belong to the same unit (for OOV: the original and
    the replaced cosine of pair ``i``), so pair indices are resampled
    together (``scipy.stats.bootstrap(..., paired=True)``), keeping the
    within-pair correlation that makes the difference precise.

    Args:
        x: First measurement per unit, shape ``(n,)`` (e.g. original cosines).
        y: Second measurement per unit, shape ``(n,)`` (e.g. replaced cosines).
        n_resamples: Number of bootstrap resamples (>= 1).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)``; ``(d, d)`` when every difference ``x_i - y_i`` is the
        same (including ``n == 1``).

    Raises:
        ValueError: On empty/NaN/non-1-D input, unequal lengths, or an
            invalid ``n_resamples`` / ``confidence``.
    """
    x_arr = _as_1d(x, "x")
    y_arr = _as_1d(y, "y")
    _same_length(x_arr, y_arr, "x", "y")
    n_resamples = _check_resamples(n_resamples)
    confidence = _check_confidence(confidence)
    diffs = x_arr - y_arr
    if np.ptp(diffs) == 0:
        value = float(diffs[0])
        return value, value
    return _percentile_bootstrap(
        (x_arr, y_arr),
        _mean_difference,
        paired=True,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def failure_rate_ci(
    cosines: ArrayLike,
    threshold: float = DEFAULT_THRESHOLD,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap CI of :func:`failure_rate`.

    Bootstraps the mean of the indicators ``1[cos_i > threshold]``.

    Args:
        cosines: Cosines, shape ``(n,)``.
        threshold: Retrieval threshold (strict ``>``).
        n_resamples: Number of bootstrap resamples (>= 1).
        confidence: Confidence level in ``(0, 1)``.
        seed: Seed of the numpy random generator.

    Returns:
        ``(low, high)`` within ``[0, 1]``. A rate of exactly 0 or 1 gives
        ``(rate, rate)``: no resample can differ, which is a limit of the
        bootstrap on all-or-nothing samples rather than certainty.

    Raises:
        ValueError: On empty/NaN/non-1-D cosines, a non-finite threshold, or
            an invalid ``n_resamples`` / ``confidence``.
    """
    arr = _as_1d(cosines, "cosines")
    thr = _as_scalar(threshold, "threshold")
    indicators = (arr > thr).astype(float)
    return bootstrap_ci(
        indicators,
        "mean",
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


# --------------------------------------------------------------------------
# cross-model vulnerability ranking
# --------------------------------------------------------------------------


def vulnerability_scores(mean_cosine: pd.DataFrame) -> pd.DataFrame:
    """Rank models by vulnerability across failure modes (failure paper, Table 4).

    The paper gives the scores but not the rule; this one reproduces its
    Table 4 exactly from its Table 1 (Nomic 1, MiniLM 9, BGE 12, MxBAI 14):

    1. For each failure mode (row), rank the models by mean cosine,
       descending: rank 1 = highest cosine = most fooled. Ties share the
       lowest rank (``method="min"``).
    2. ``score(model) = sum over modes of (rank - 1)``, so a model that is
       the most fooled in every mode scores 0. Lower score = more vulnerable.
    3. ``rank`` orders models by score ascending (1 = most vulnerable; tied
       scores share the lowest rank).

    Every row is treated as a failure mode, so pass only failure-mode rows
    (no control categories).

    Args:
        mean_cosine: Wide table, index = failure mode, columns = model,
            values = mean cosine of that model on that mode; shape
            ``(n_modes, n_models)`` with ``n_models >= 2``.

    Returns:
        DataFrame with columns ``model``, ``score`` (int), ``rank`` (int) and
        ``modes_ranked_first`` (failure modes where the model ranked 1,
        joined by ", " in row order; "" if none), sorted by rank then model.

    Raises:
        TypeError: If ``mean_cosine`` is not a DataFrame.
        ValueError: If the table is empty, has fewer than two models,
            duplicate model names, or NaN/non-numeric cells.
    """
    if not isinstance(mean_cosine, pd.DataFrame):
        raise TypeError("mean_cosine must be a pandas DataFrame")
    if mean_cosine.empty:
        raise ValueError("mean_cosine is empty")
    if mean_cosine.shape[1] < 2:
        raise ValueError("mean_cosine needs at least 2 model columns to rank")
    if mean_cosine.columns.has_duplicates:
        raise ValueError("mean_cosine has duplicate model columns")
    try:
        values = mean_cosine.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("mean_cosine must contain only numbers") from exc
    if not np.all(np.isfinite(values.to_numpy())):
        raise ValueError("mean_cosine contains NaN or infinite values")

    ranks = values.rank(axis=1, ascending=False, method="min").astype(int)
    scores = (ranks - 1).sum(axis=0)
    first = {
        model: ", ".join(str(mode) for mode in ranks.index[ranks[model] == 1])
        for model in ranks.columns
    }
    table = pd.DataFrame(
        {
            "model": list(scores.index),
            "score": scores.to_numpy(dtype=int),
            "modes_ranked_first": [first[model] for model in scores.index],
        }
    )
    table["rank"] = table["score"].rank(method="min").astype(int)
    table = table.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)
    return table[["model", "score", "rank", "modes_ranked_first"]]
