"""One entry point for "why this score": the method a model supports, run on a pair.

Integrated gradients need a torch model; an ONNX model asked for them is
explained by occlusion instead, and the returned note says so (the CLI prints
it, the page shows it).  An endpoint's model cannot be explained here at all
(:func:`not_explainable` says why).
"""

from __future__ import annotations

from core import constants
from core.models.loaders import loader_for
from core.models.loading import LoadedModel
from core.models.registry import resolve
from core.probes.explain.forward import is_torch
from core.probes.explain.gradients import integrated_gradients
from core.probes.explain.occlusion import occlusion
from core.probes.explain.result import Explanation


def not_explainable(name: str) -> str | None:
    """Why ``name`` cannot be explained here (a model served by an endpoint), or None.

    Both methods need the model's own tokenizer on this machine (which tokens to
    remove, or to integrate over) and gradients or many cheap forward passes;
    an endpoint keeps its tokenizer and weights on its server and answers only
    vectors of whole texts, each one a paid request.
    """
    try:
        weights_here = loader_for(resolve(name)).weights_here
    except ValueError:
        return None
    if weights_here:
        return None
    return (
        f"{name} is served by an endpoint, so it cannot be explained here: explanations need the model's own tokenizer "
        "(which tokens to remove) and its weights (gradients), and an endpoint keeps both on its server and only returns "
        "vectors of whole texts; explain a local model instead"
    )


def method_for(model: LoadedModel, method: str) -> tuple[str, str | None]:
    """The method this model can run for the one asked, and a note when they differ.

    Raises:
        ValueError: for an unknown method.
    """
    if method not in constants.EXPLAIN_METHODS:
        raise ValueError(f"method must be one of {', '.join(constants.EXPLAIN_METHODS)}, got {method!r}")
    if method == constants.METHOD_IG and not is_torch(model):
        return (
            constants.METHOD_OCCLUSION,
            f"{model.name} runs on {model.meta.backend}, which has no gradients here: explained by occlusion instead",
        )
    return method, None


def explain_pair(
    model: LoadedModel,
    text_a: str,
    text_b: str,
    *,
    method: str = constants.METHOD_OCCLUSION,
    unit: str = constants.UNIT_TOKEN,
    steps: int = constants.IG_STEPS,
    baseline: str = constants.IG_BASELINE,
) -> tuple[Explanation, str | None]:
    """Explain a pair's cosine with ``method`` (or occlusion where the model cannot run it).

    Args:
        model: a loaded model.
        text_a: sentence A.
        text_b: sentence B.
        method: ``occlusion`` or ``ig``.
        unit: occlusion's unit, ``token`` or ``word`` (integrated gradients are per token).
        steps: integration steps for ``ig``.
        baseline: ``mask`` or ``pad`` for ``ig``.

    Returns:
        The explanation and a note when the method used is not the one asked.

    Raises:
        ValueError: for an unknown method or unit, an empty sentence, bad steps or baseline,
            or a model served by an endpoint (:func:`not_explainable`).
    """
    reason = not_explainable(model.name)
    if reason:
        raise ValueError(reason)
    used, note = method_for(model, method)
    if used == constants.METHOD_IG:
        return integrated_gradients(model, text_a, text_b, steps=steps, baseline=baseline), note
    return occlusion(model, text_a, text_b, unit=unit), note
