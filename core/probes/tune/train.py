"""Fine-tune a sentence-transformers model on hard-negative triples, then average it with the original.

sentence-transformers' ``SentenceTransformerTrainer`` with
``MultipleNegativesRankingLoss`` (in-batch positives plus every hard
negative, scale 20), AdamW, linear decay after a 10% warm-up, gradient
clipping at 1.0 and a batch sampler that never puts one text twice in a batch
(a repeated text would become a false in-batch negative).  Options:

* ``average``: the tuned weights averaged with the original (WiSE-FT,
  Wortsman et al. 2022), on by default at 50/50: it gives back general
  quality while keeping much of the fix;
* ``distill``: a squared-L2 term pulling the anchors' embeddings towards the
  original model's (λ ≈ 2 was tried; docs/tune.md).

Nothing is written half: :func:`save_model` writes to a sibling folder and
renames it into place, and a cancel (``should_stop`` or Ctrl-C) raises
:class:`TuneCancelled` before anything is saved.
"""

from __future__ import annotations

import copy
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from core import constants
from core.models.registry import BACKEND_TORCH, ModelMeta, short_name
from core.models.runs import ProgressFn


class TuneCancelled(RuntimeError):
    """The user stopped the training; nothing was saved."""


@dataclass(frozen=True)
class TuneConfig:
    """The training settings (defaults: the measured recipe, docs/tune.md).

    Attributes:
        learning_rate: AdamW's peak rate.
        batch_size: rows per batch.
        epochs: passes over the rows.
        warmup: share of the steps spent warming up, in [0, 1).
        seed: torch, numpy and the sampler's seed.
        average: weight of the tuned model when averaged with the original, in (0, 1]; 1.0 keeps it as tuned.
        distill: weight λ of the distillation term (0 = off).
        scale: MultipleNegativesRankingLoss's inverse temperature.
        max_steps: stop after this many steps (tests and quick looks); None runs every epoch.
    """

    learning_rate: float = constants.TUNE_DEFAULT_LR
    batch_size: int = constants.TUNE_DEFAULT_BATCH
    epochs: float = constants.TUNE_DEFAULT_EPOCHS
    warmup: float = constants.TUNE_DEFAULT_WARMUP
    seed: int = 0
    average: float = constants.TUNE_DEFAULT_AVERAGE
    distill: float = 0.0
    scale: float = constants.TUNE_DEFAULT_MNRL_SCALE
    max_steps: int | None = None

    def __post_init__(self) -> None:
        checks = {
            "learning_rate": self.learning_rate > 0 and math.isfinite(self.learning_rate),
            "batch_size": self.batch_size >= 2,
            "epochs": self.epochs > 0,
            "warmup": 0 <= self.warmup < 1,
            "seed": self.seed >= 0,
            "average": 0 < self.average <= 1,
            "distill": self.distill >= 0 and math.isfinite(self.distill),
            "scale": self.scale > 0,
            "max_steps": self.max_steps is None or self.max_steps >= 1,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(
                f"invalid tune setting {bad[0]}={getattr(self, bad[0])!r} (batch_size >= 2, 0 <= warmup < 1, 0 < average <= 1, others "
                "positive)"
            )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def untunable_reason(meta: ModelMeta) -> str | None:
    """Why a model cannot be tuned here, or None: tune trains torch weights, and no backend choice gives a model without them any.

    Args:
        meta: the model's registry record (:func:`core.models.registry.resolve`).
    """
    if meta.backend == BACKEND_TORCH:
        return None
    return (
        f"{short_name(meta.name)} runs only on {meta.backend} here, with no torch weights, and tune trains torch weights: "
        "tune MiniLM-L6 or mpnet-base, or a Hugging Face id or sentence-transformers folder with torch weights"
    )


def trainable_copy(model: Any) -> Any:
    """A deep copy of a loaded ``SentenceTransformer`` to train, so the shared instance stays untouched."""
    clone = copy.deepcopy(model)
    clone.train()
    return clone


def _distilled_loss(model: Any, base: Any, teacher: Any, weight: float) -> Any:
    import torch
    from torch import nn

    keys = ("input_ids", "attention_mask", "token_type_ids")

    class DistilledLoss(nn.Module):
        """MNRL plus ``weight`` × the anchors' squared L2 distance to the original model's embeddings."""

        def __init__(self) -> None:
            super().__init__()
            self.model, self.base, self.weight = model, base, weight
            self.teacher = [teacher]  # a list keeps the frozen teacher out of the trained parameters

        def forward(self, sentence_features, labels):
            loss = self.base(sentence_features, labels)
            # The models write their outputs into the features dict: give each a clean copy.
            anchors = {k: v for k, v in sentence_features[0].items() if k in keys}
            student = self.model(dict(anchors))["sentence_embedding"]
            with torch.no_grad():
                target = self.teacher[0](dict(anchors))["sentence_embedding"]
            return loss + self.weight * ((student - target) ** 2).sum(dim=-1).mean()

    return DistilledLoss()


def fine_tune(
    model: Any,
    rows: pd.DataFrame,
    config: TuneConfig,
    *,
    teacher: Any | None = None,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Train ``model`` in place on ``rows`` with MultipleNegativesRankingLoss.

    Args:
        model: a ``SentenceTransformer`` to train (:func:`trainable_copy` of a loaded one).
        rows: ``anchor, positive[, negative]`` text columns (others are ignored); without
            ``negative`` this is the no-hard-negative control.
        config: the settings.
        teacher: the original model, needed when ``config.distill > 0``.
        progress: called with (fraction done, message) after every step.
        should_stop: polled after every step; True stops the run.

    Returns:
        ``steps``, ``seconds``, ``final_loss`` and ``rows``.

    Raises:
        ValueError: no rows, a missing text column, or distillation without a teacher.
        TuneCancelled: ``should_stop`` returned True.
    """
    import time

    from datasets import Dataset
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.trainer import SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers, SentenceTransformerTrainingArguments
    from transformers import PrinterCallback, TrainerCallback
    from transformers.utils import logging as hf_logging

    columns = [c for c in (constants.COL_ANCHOR, constants.COL_POSITIVE, constants.COL_NEGATIVE) if c in rows.columns]
    if columns[:2] != [constants.COL_ANCHOR, constants.COL_POSITIVE]:
        raise ValueError(f"training rows need the columns anchor and positive, got {list(rows.columns)}")
    if rows.empty:
        raise ValueError("no training rows: the model to tune already ranks every training variant below its paraphrase")
    if config.distill > 0 and teacher is None:
        raise ValueError("distillation needs the original model as teacher")
    hf_logging.set_verbosity_error()
    loss = MultipleNegativesRankingLoss(model, scale=config.scale)
    if config.distill > 0:
        loss = _distilled_loss(model, loss, teacher, config.distill)
    tracked: dict[str, Any] = {"cancelled": False, "loss": math.nan}

    class Hooks(TrainerCallback):
        def on_log(self, args, state, control, **kwargs):
            logs = kwargs.get("logs") or {}
            if "loss" in logs:
                tracked["loss"] = float(logs["loss"])

        def on_step_end(self, args, state, control, **kwargs):
            if progress is not None:
                progress(
                    state.global_step / max(state.max_steps, 1), f"step {state.global_step}/{state.max_steps}, loss {tracked['loss']:.3f}"
                )
            if should_stop is not None and should_stop():
                tracked["cancelled"] = True
                control.should_training_stop = True

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cosine-probe-tune-") as work:
        args = SentenceTransformerTrainingArguments(
            output_dir=work,
            num_train_epochs=config.epochs,
            max_steps=config.max_steps or -1,
            per_device_train_batch_size=config.batch_size,
            learning_rate=config.learning_rate,
            warmup_steps=config.warmup,
            lr_scheduler_type="linear",
            max_grad_norm=1.0,
            seed=config.seed,
            data_seed=config.seed,
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
            logging_steps=1,
            dataloader_num_workers=0,
            dataloader_pin_memory=False,
        )
        trainer = SentenceTransformerTrainer(
            model=model,
            args=args,
            train_dataset=Dataset.from_pandas(rows[columns].reset_index(drop=True)),
            loss=loss,
            callbacks=[Hooks()],
        )
        trainer.remove_callback(PrinterCallback)  # it prints every log dict on stdout, where --json writes
        output = trainer.train()
    if tracked["cancelled"]:
        raise TuneCancelled("training stopped by the user; nothing was saved")
    model.eval()
    return {"steps": int(output.global_step), "seconds": time.perf_counter() - start, "final_loss": tracked["loss"], "rows": len(rows)}


def average_weights(tuned: Any, original: Any, weight: float) -> None:
    """Set ``tuned``'s floating-point weights to ``weight * tuned + (1 - weight) * original`` in place (WiSE-FT).

    Raises:
        ValueError: ``weight`` outside (0, 1], or the two models' parameters differ in names or shapes.
    """
    import torch

    if not 0 < weight <= 1:
        raise ValueError(f"weight must be in (0, 1], got {weight}")
    if weight == 1:
        return
    mine, theirs = tuned.state_dict(), original.state_dict()
    if mine.keys() != theirs.keys() or any(mine[k].shape != theirs[k].shape for k in mine):
        raise ValueError("the tuned and original models differ in architecture; cannot average them")
    with torch.no_grad():
        tuned.load_state_dict({k: (weight * v + (1 - weight) * theirs[k]) if v.is_floating_point() else v for k, v in mine.items()})


def save_model(model: Any, out: str | Path) -> Path:
    """Save ``model`` as a sentence-transformers folder at ``out`` (``--models PATH`` loads it), all or nothing.

    The folder is written beside ``out`` and renamed into place; an existing
    ``out`` is replaced only once the new one is complete.
    """
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(target.name + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        model.save(str(staging))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        old = target.with_name(target.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(target)
    return target
