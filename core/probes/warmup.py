"""Warm by default: the texts a new user will certainly ask for, encoded once into the embedding cache.

``make setup`` runs ``cosine-probe models --warm`` and the app fills a cache
folder that lacks them in the background, so a first click is answered from
the cache instead of loading and encoding: the OOV and baseline suites, the
failure-mode suite with its controls (Calibrate's pairs), Compare's examples
and first pair and heatmap, Perturbations' first sentence and its variants,
and Retrieval's default quick sample.

A server also loads each default model's weights once it starts
(:func:`load_weights`): a pair nobody cached (the first one a user types)
then waits for its encoding only, not for the weights and the imports they need.

Every model goes through the one model loop (:func:`core.models.runs.model_runs`)
and the embedding cache, so a model whose every text is cached loads no
weights: a second warm-up is a few cache reads per model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from core import constants
from core.models import registry
from core.models.cache import EmbeddingCache
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ProgressFn, load, model_runs

WarmTexts = dict[str, list[str]]
"""What is warmed: a name a person reads (e.g. "failure-mode suite") -> its texts."""


def warm_texts() -> WarmTexts:
    """Every text the shipped suites and the pages' examples and first inputs encode, by where it is used.

    Returns:
        name -> distinct texts, in a fixed order (the same on every call).
    """
    from core.papers import reference, suites
    from core.probes.perturb import perturb
    from core.probes.retrieval.suite_files import load_retrieval_suite

    def pair_texts(frame) -> list[str]:
        return list(dict.fromkeys([*frame[constants.COL_TEXT_A].astype(str), *frame[constants.COL_TEXT_B].astype(str)]))

    examples = reference.load_failure_examples()
    variants = perturb(constants.EXAMPLE_SENTENCE_A).to_frame()
    retrieval = load_retrieval_suite().sample(constants.RETRIEVAL_QUICK_GROUPS)
    return {
        "OOV and baseline suites": pair_texts(suites.load_suite(constants.SUITE_OOV))
        + pair_texts(suites.load_suite(constants.SUITE_BASELINE)),
        "failure-mode suite and its controls": pair_texts(suites.load_suite(constants.SUITE_FAILURE_MODES)),
        "Compare's examples": list(
            dict.fromkeys(
                [constants.EXAMPLE_SENTENCE_A, constants.EXAMPLE_SENTENCE_B, *constants.EXAMPLE_HEATMAP_SENTENCES, *pair_texts(examples)]
            )
        ),
        "Perturbations' first sentence": pair_texts(variants),
        "Retrieval's quick sample": list(dict.fromkeys([*retrieval.passages[constants.COL_TEXT], *retrieval.queries[constants.COL_TEXT]])),
    }


@dataclass
class ModelWarmth:
    """One model's warm-up: texts, those encoded now, those already cached, seconds; ``error`` when it could not run."""

    model: str
    n_texts: int = 0
    n_encoded: int = 0
    n_cached: int = 0
    seconds: float = 0.0
    loaded: bool = False
    error: str | None = None


@dataclass
class WarmReport:
    """What a warm-up did, model by model."""

    models: list[ModelWarmth] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n_encoded(self) -> int:
        return sum(m.n_encoded for m in self.models)

    @property
    def failed(self) -> list[ModelWarmth]:
        return [m for m in self.models if m.error]


def warm_cache(
    models: Sequence[str] = registry.DEFAULT_BUNDLED,
    *,
    cache: EmbeddingCache,
    options: EncodeOptions = DEFAULT_OPTIONS,
    texts: WarmTexts | None = None,
    progress: ProgressFn | None = None,
    on_model: Callable[[ModelWarmth], None] | None = None,
) -> WarmReport:
    """Encode ``texts`` (default :func:`warm_texts`) with each model into ``cache``; what is cached already is read, not encoded.

    Args:
        models: the models to warm (default: the bundled models the app preselects).
        cache: the embedding cache to fill.
        options: how the models load and encode.
        texts: the texts by where they are used; None is :func:`warm_texts`.
        progress: called with (fraction of the warm-up done, message).
        on_model: called with each model's :class:`ModelWarmth` as soon as it is done.

    Returns:
        A :class:`WarmReport`; a model that cannot load is in it with its one-line error, and the others still run.

    Raises:
        ValueError: no model named.
    """
    if not models:
        raise ValueError("name at least one model to warm")
    start = time.perf_counter()
    wanted = texts if texts is not None else warm_texts()
    unique = list(dict.fromkeys(t for group in wanted.values() for t in group))
    report = WarmReport()
    errors: dict[str, str] = {}
    for run in model_runs(models, options, cache=cache, errors=errors, progress=progress):
        began = time.perf_counter()
        warmth = ModelWarmth(run.name, n_texts=len(unique))
        encoded = run.encode(unique)
        warmth.seconds = time.perf_counter() - began
        warmth.loaded = run.weights_loaded
        if encoded is None:
            warmth.error = errors.get(run.label) or errors.get(run.name) or f"{run.name}: could not run"
        else:
            warmth.model = run.label
            warmth.n_encoded, warmth.n_cached = encoded[1].n_encoded, encoded[1].n_cached
        report.models.append(warmth)
        if on_model is not None:
            on_model(warmth)
    report.seconds = time.perf_counter() - start
    return report


def missing_texts(
    models: Sequence[str], cache: EmbeddingCache, options: EncodeOptions = DEFAULT_OPTIONS, texts: WarmTexts | None = None
) -> int:
    """How many (model, text) pairs of the warm-up the cache lacks, counted without loading a model (0: nothing to do)."""
    from core.models.estimate import estimate_run

    wanted = texts if texts is not None else warm_texts()
    unique = list(dict.fromkeys(t for group in wanted.values() for t in group))
    return estimate_run(models, unique, cache, options).n_to_encode


def load_weights(models: Sequence[str], options: EncodeOptions = DEFAULT_OPTIONS, progress: ProgressFn | None = None) -> dict[str, str]:
    """Load each of ``models`` into this process's model registry, so later runs find it in memory.

    Args:
        models: the models to load, in order (a model already in memory costs nothing).
        options: how they load (device, backend, remote code), as the runs that will use them.
        progress: called with (fraction of the models loaded, the step under way) before each load and once at the end.

    Returns:
        model -> its one-line reason, for each model that could not load; the others are loaded.
    """
    from core.messages import redact
    from core.models.loading import ModelUnavailable, load_step

    errors: dict[str, str] = {}
    for i, name in enumerate(models):
        if progress is not None:
            progress(i / max(len(models), 1), f"{load_step(name, options.device, options.backend)} ({i + 1}/{len(models)})")
        try:
            load(name, options)
        except ModelUnavailable as exc:
            errors[name] = redact(exc)
    if progress is not None:
        progress(1.0, f"{len(models) - len(errors)} of {len(models)} models loaded")
    return errors
