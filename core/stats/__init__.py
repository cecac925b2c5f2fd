"""Similarity and effect-size statistics for cosine-probe.

Every number the explorer shows comes from a function in this package, so the
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

Modules, one concern each (import from ``core.stats``; the names below are re-exported):

* :mod:`core.stats.similarity`: ``cos_sim`` (matrix) and ``pairwise_cos_sim`` (aligned rows).
* :mod:`core.stats.overlap`: token and word Jaccard (words from ``core.words.overlap_words``).
* :mod:`core.stats.normalization`: OOV delta, dynamic range, normalized delta.
* :mod:`core.stats.effects`: Cohen's d, severity ratio, mean ± SD.
* :mod:`core.stats.rates`: failure rate at a threshold, threshold grids and curves.
* :mod:`core.stats.significance`: Kruskal-Wallis, Pearson and Spearman.
* :mod:`core.stats.intervals`: seeded percentile bootstrap intervals.
* :mod:`core.stats.ranking`: the failure paper's vulnerability ranking.
* :mod:`core.stats.guards`: a statistic or NaN where its inputs are too few.
* ``core.stats._validation``: the shared input checks (private).
"""

from __future__ import annotations

from core.stats.effects import cohens_d, cohens_d_from_summary, mean_sd, severity_ratio
from core.stats.guards import interval_or_nan, stat_or_nan
from core.stats.intervals import bootstrap_ci, bootstrap_diff_ci, failure_rate_ci
from core.stats.normalization import dynamic_range, normalized_oov_delta, oov_delta
from core.stats.overlap import token_jaccard, word_jaccard
from core.stats.ranking import vulnerability_bootstrap, vulnerability_scores
from core.stats.rates import failure_rate, failure_rate_curve, threshold_grid
from core.stats.significance import CorrelationResult, KruskalResult, correlation, kruskal_wallis
from core.stats.similarity import cos_sim, pairwise_cos_sim

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
    "interval_or_nan",
    "kruskal_wallis",
    "mean_sd",
    "normalized_oov_delta",
    "oov_delta",
    "pairwise_cos_sim",
    "severity_ratio",
    "stat_or_nan",
    "threshold_grid",
    "token_jaccard",
    "vulnerability_bootstrap",
    "vulnerability_scores",
    "word_jaccard",
]
