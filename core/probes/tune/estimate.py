"""How long a tune will take, before it starts: training steps × seconds per step, plus the probes' encodes.

Fine-tuning is not encoding, so :func:`core.models.estimate.estimate_run`
does not apply.  A tune run is

    load the torch model
    + training steps × batch × texts per row × seconds per text trained   (the tuned model, then the control)
    + every text the probes encode × seconds per text encoded             (each setting on the suite, then the costs)

The steps are the trainer's own count (:func:`training_steps`).  The rows
trained on are the training half's variants that fail before tuning, which
only the run's first probe knows: the estimate takes the share that failed in
the measured run (:data:`MEASURED_FAILING_SHARE`).  The seconds per text come
from one default tune of the bundled MiniLM-L6 on this machine class (2-core
CPU; ``make bench``'s ``tune_default`` records the same figures) and are
scaled by the model's parameter count when its record gives one (a model of
unknown size is taken as base-size, :data:`UNKNOWN_PARAMETERS`).  An estimate
is a guide, never a promise: longer texts than the suite's, another machine
or a busy one change it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from core import constants
from core.messages import counted
from core.models.estimate import DEFAULT_LOAD_SECONDS, RECORDED_LOAD_SECONDS, about
from core.models.registry import ModelMeta, resolve
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.tune import data
from core.probes.tune.run import baseline_labelled
from core.probes.tune.train import TuneConfig

C = constants

# Measured on this machine (2-core CPU) by `python -m bench tune_rates` on the default run's own data (MiniLM-L6, seed 0,
# batch 16): each training step and each batch of 64 probe texts timed alone, the fastest kept.  Two runs on 2026-12-07,
# both while other sessions ran tests; the fastest of either: 0.0168 s a text through a training step (load 7.8 -> 5.1;
# the other run, at load 9-10, 0.066) and 0.0156 s a text encoded (0.034 at load 9-10).  Checked against the quiet default
# run of bench/results.json (tune_default: 137 s at load 2.3, before the general-cost step): its ~5,900 texts trained and
# ~5,100 encoded give 182 s here, so on a quiet machine the estimate errs long by about a third; at load 10 a run takes
# several times longer than either.
TRAIN_SECONDS_PER_TEXT = 0.0168
EVAL_SECONDS_PER_TEXT = 0.0156
# The default run (bench/results.json, tune_rates): 536 of the training half's 571 possible triples failed before tuning,
# and the control trained on 230 of its 236 possible pairs.
MEASURED_FAILING_SHARE = 536 / 571
MEASURED_CONTROL_SHARE = 230 / 236
REFERENCE_PARAMETERS = 22e6  # MiniLM-L6, the measured model
UNKNOWN_PARAMETERS = 110e6  # a model whose record gives no size: taken as base-size (mpnet-base, BERT-base), the cautious side
TRIPLE_TEXTS, PAIR_TEXTS = 3, 2  # texts per training row: the tuned model's (anchor, positive, negative), the control's pairs
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMB]?)\s*$", re.IGNORECASE)
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}


@dataclass(frozen=True)
class TuneEstimate:
    """A tune run's expected time and what it is made of.

    Attributes:
        rows: training rows expected (the tuned model's triples).
        steps: the tuned model's training steps (the trainer's count).
        control_steps: the control's training steps (0 without the control).
        eval_texts: texts the probes encode over the whole run.
        scale: the model's cost per text relative to MiniLM-L6 (its parameters over 22M).
        size_known: the model's record gives its parameter count (else it is taken as base-size).
        load_seconds: loading the torch model.
        train_seconds: every training.
        eval_seconds: every probe's encoding.
    """

    rows: int
    steps: int
    control_steps: int
    eval_texts: int
    scale: float
    size_known: bool
    load_seconds: float
    train_seconds: float
    eval_seconds: float

    @property
    def seconds(self) -> float:
        return self.load_seconds + self.train_seconds + self.eval_seconds


def parameter_count(meta: ModelMeta) -> float | None:
    """A record's parameter count as a number ("22M" -> 22e6), or None when it gives none or an unreadable one."""
    found = _SIZE.match(meta.parameters or "")
    if found is None:
        return None
    return float(found.group(1)) * _UNITS[found.group(2).upper()]


def training_steps(rows: int, batch_size: int, epochs: float, max_steps: int | None = None) -> int:
    """The optimiser steps sentence-transformers' trainer takes: ``ceil(epochs × ceil(rows / batch))``, or ``max_steps``.

    Args:
        rows: training rows (>= 0).
        batch_size: rows per batch (>= 1).
        epochs: passes over the rows (> 0).
        max_steps: the trainer's cap; when given it is the count, as the trainer's ``max_steps`` overrides the epochs.

    Raises:
        ValueError: a negative row count, a batch below 1, epochs not positive, or ``max_steps`` below 1.
    """
    if rows < 0 or batch_size < 1 or not epochs > 0 or (max_steps is not None and max_steps < 1):
        raise ValueError(
            f"rows >= 0, batch_size >= 1, epochs > 0 and max_steps >= 1 needed, got {rows}, {batch_size}, {epochs}, {max_steps}"
        )
    if max_steps is not None:
        return max_steps
    return math.ceil(epochs * math.ceil(rows / batch_size))


def tune_seconds(
    rows: int, control_rows: int, eval_texts: int, config: TuneConfig, *, control: bool, parameters: float | None, load_seconds: float
) -> TuneEstimate:
    """The arithmetic of a tune's expected time, from counts alone.

    Each training takes ``steps × batch`` rows through the model (the last
    batch counted full), at :data:`TRIPLE_TEXTS` texts a row for the tuned
    model and :data:`PAIR_TEXTS` for the control; distillation adds two
    forward passes of the anchor a row (a forward pass taken as a third of a
    text trained).  Every text costs the measured seconds × ``parameters /``
    :data:`REFERENCE_PARAMETERS`.

    Args:
        rows: training rows expected (triples).
        control_rows: the control's pairs expected (used only with ``control``).
        eval_texts: texts the probes encode over the whole run (:func:`eval_text_count`).
        config: the training settings (batch, epochs, max steps, distillation).
        control: the no-hard-negative control is trained too.
        parameters: the model's parameter count, or None when unknown (:data:`UNKNOWN_PARAMETERS`).
        load_seconds: loading the model.

    Returns:
        A :class:`TuneEstimate`.

    Raises:
        ValueError: a negative count or load time, or parameters not positive.
    """
    if min(rows, control_rows, eval_texts) < 0 or load_seconds < 0 or (parameters is not None and not parameters > 0):
        raise ValueError(
            f"counts and load time must be >= 0 and parameters > 0, got {rows}, {control_rows}, {eval_texts}, {load_seconds}, {parameters}"
        )
    scale = (parameters if parameters is not None else UNKNOWN_PARAMETERS) / REFERENCE_PARAMETERS
    steps = training_steps(rows, config.batch_size, config.epochs, config.max_steps) if rows else 0
    control_steps = training_steps(control_rows, config.batch_size, config.epochs, config.max_steps) if control and control_rows else 0
    # Distillation runs the anchor through the student again and through the teacher: two forward passes, a third each
    extra = 2 / 3 if config.distill > 0 else 0.0
    texts_trained = config.batch_size * (steps * (TRIPLE_TEXTS + extra) + control_steps * (PAIR_TEXTS + extra))
    return TuneEstimate(
        rows=rows,
        steps=steps,
        control_steps=control_steps,
        eval_texts=eval_texts,
        scale=scale,
        size_known=parameters is not None,
        load_seconds=load_seconds,
        train_seconds=texts_trained * TRAIN_SECONDS_PER_TEXT * scale,
        eval_seconds=eval_texts * EVAL_SECONDS_PER_TEXT * scale,
    )


@dataclass(frozen=True)
class SuiteCounts:
    """What a suite gives a tune to count before it runs: the rows it could train on, were every variant to fail.

    Attributes:
        training_rows: the training half's triples: one a variant, two more a NevIR variant (one per query).
        control_rows: the control's distinct pairs among them (an anchor's paraphrase once, however many variants it has).
        probe_texts: distinct texts one probe of the suite encodes (anchors, paraphrases, variants).
    """

    training_rows: int
    control_rows: int
    probe_texts: int


def suite_counts(suite: RetrievalSuite, seed: int) -> SuiteCounts:
    """Count what a tune of ``suite`` could train on and what it probes, without encoding (the split is the run's own).

    Args:
        suite: the suite the run takes (the retrieval suite, or a user's triples read as one).
        seed: the run's seed, which seeds its split.

    Raises:
        ValueError: a suite with no usable group, or one group only (as the run would).
    """
    variants = data.variant_rows(suite)
    if variants.empty:
        raise ValueError(f"{suite.name} has no anchor group with an anchor, a paraphrase and a variant")
    split = data.split_groups(variants, seed=seed)
    # The run's own rows, every variant taken as failing (which variants fail only the run's first probe knows)
    every = pd.Series(True, index=variants.index)
    triples = data.training_triples(variants.assign(**{C.COL_VARIANT_SOURCE: ""}), split, every, suite.queries)
    texts = pd.concat([variants[C.COL_ANCHOR], variants[C.COL_PARAPHRASE], variants[C.ROLE_VARIANT]]).nunique()
    return SuiteCounts(len(triples), len(data.control_pairs(triples)), int(texts))


@functools.cache
def _cost_texts() -> int:
    """Distinct texts each setting's costs encode on the shipped data: natural sets, the shortcut probe, the baseline pairs."""
    shortcut, baseline = data.shortcut_pairs(), baseline_labelled()
    groups: list[list[object]] = [
        list(data.natural_triples(s.path).frame[[C.COL_ANCHOR, C.COL_POSITIVE, C.COL_NEGATIVE]].stack()) for s in data.NATURAL_SETS
    ]
    groups += [[*frame[C.COL_TEXT_A], *frame[C.COL_TEXT_B]] for frame in (shortcut, baseline)]
    return sum(_distinct(texts) for texts in groups)


def _distinct(texts: Iterable[object]) -> int:
    return len(set(map(str, texts)))


def eval_text_count(probe_texts: int, config: TuneConfig, *, control: bool, labelled: Iterable[pd.DataFrame] = ()) -> int:
    """Texts a tune's probes encode, as :func:`core.probes.tune.run.run_tune` asks them.

    The suite is probed once per setting (untouched, tuned, the tuned model
    before averaging when it is averaged, the control); the costs (natural
    data, shortcut probe, labelled pairs) once per model compared (untouched,
    tuned, the control).

    Args:
        probe_texts: distinct texts of one probe of the suite (:func:`suite_counts`).
        config: the settings (whether the weights are averaged).
        control: the control is trained.
        labelled: the user's labelled pairs (``text_a, text_b, same``), each encoded for the AUC cost.
    """
    probes = 2 + (config.average < 1) + control
    compared = 2 + control
    extra = sum(_distinct([*frame[C.COL_TEXT_A], *frame[C.COL_TEXT_B]]) for frame in labelled)
    return probe_texts * probes + (_cost_texts() + extra) * compared


def estimate_tune(
    model: str, counts: SuiteCounts, config: TuneConfig, *, control: bool = True, labelled: Iterable[pd.DataFrame] = ()
) -> TuneEstimate:
    """Seconds a tune of ``model`` should take (:func:`tune_seconds` on the run's own counts).

    The rows trained on are the training half's possible rows × :data:`MEASURED_FAILING_SHARE` (the control's pairs ×
    :data:`MEASURED_CONTROL_SHARE`).

    Args:
        model: the model to tune (a registry name, alias, id or folder).
        counts: its suite's counts (:func:`suite_counts`).
        config: the training settings.
        control: the control is trained too.
        labelled: the user's labelled pairs for the AUC cost.
    """
    meta = resolve(model)
    rows = round(counts.training_rows * MEASURED_FAILING_SHARE)
    control_rows = round(counts.control_rows * MEASURED_CONTROL_SHARE)
    load = RECORDED_LOAD_SECONDS.get(meta.name, DEFAULT_LOAD_SECONDS)
    texts = eval_text_count(counts.probe_texts, config, control=control, labelled=labelled)
    return tune_seconds(rows, control_rows, texts, config, control=control, parameters=parameter_count(meta), load_seconds=load)


def expected_words(est: TuneEstimate) -> str:
    """The estimate as a person reads it, for the Tune page and the CLI: "about 2 min (99 training steps, …)".

    Says what it counts and where its speed comes from, so nobody takes it for a promise.
    """
    control = f" and {est.control_steps:,} for the control" if est.control_steps else ""
    if not est.size_known:
        scaled = f", × {est.scale:.0f} for a model of unknown size (taken as base-size)"
    elif round(est.scale, 1) != 1:
        scaled = f", × {est.scale:.1f} for this model's size"
    else:
        scaled = ""
    return (
        f"{about(est.seconds)} ({counted(est.steps, 'training step')}{control}; {counted(est.eval_texts, 'text')} encoded by the probes; "
        f"from a default tune of MiniLM-L6 timed on a 2-core CPU{scaled})"
    )
