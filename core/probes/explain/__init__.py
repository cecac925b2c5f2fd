"""Why a score: token attributions of a pair's cosine, and the cosine layer by layer.

* :mod:`~core.probes.explain.occlusion`: remove a token or word, re-encode, see the cosine move (every backend);
* :mod:`~core.probes.explain.gradients`: integrated gradients via captum with a completeness check (torch);
* :mod:`~core.probes.explain.layers`: mean-pooled cosine at every layer, and where the OOV gap appears (torch);
* :mod:`~core.probes.explain.pair`: the method a model supports, run on a pair;
* :mod:`~core.probes.explain.result`: the tidy attribution table and the completeness record;
* :mod:`~core.probes.explain.sides`, :mod:`~core.probes.explain.forward`: tokens and words of a side; encoding id sequences.
"""

from core.probes.explain.gradients import integrated_gradients
from core.probes.explain.layers import layer_cosines, oov_layer_curves, oov_layer_report, pair_layer_cosines, pooled_layers
from core.probes.explain.occlusion import occlusion
from core.probes.explain.pair import explain_pair, method_for, not_explainable
from core.probes.explain.result import TABLE_COLUMNS, Completeness, Explanation, by_word, top_units

__all__ = [
    "TABLE_COLUMNS",
    "Completeness",
    "Explanation",
    "by_word",
    "explain_pair",
    "integrated_gradients",
    "layer_cosines",
    "method_for",
    "not_explainable",
    "occlusion",
    "oov_layer_curves",
    "oov_layer_report",
    "pair_layer_cosines",
    "pooled_layers",
    "top_units",
]
