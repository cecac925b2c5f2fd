"""One ``tune`` run end to end: probe, split, train (and the control), re-probe, report, save.

:func:`run_tune` is what the CLI and the Tune page call.  It takes a loaded
sentence-transformers model (never changed: training works on copies), so
the caller decides where the model comes from; everything it writes goes
through :func:`write_outputs`, file by file into place.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.files.triples import Triples
from core.models.runs import ProgressFn
from core.probes.retrieval.suite import RetrievalSuite
from core.probes.tune import data, report, train
from core.scoring.result import HistoryRecord

C = constants
ENCODE_BATCH = 64


@dataclass
class TuneResult:
    """What a tune run produced.

    Attributes:
        doc: the JSON report (:func:`report.report_doc`).
        markdown: the same as Markdown.
        scores: one row per setting and variant (:data:`report.SCORE_COLUMNS`).
        triples: the training rows (:data:`data.TRIPLE_COLUMNS` + meta).
        split: group_id, domain, split.
        model: the tuned (and averaged) ``SentenceTransformer``, to save.
        tables: the report's tables by name.
        errors: always empty: a model that cannot be tuned stops the run with its error.
        reports: always empty: the trainer encodes through sentence-transformers, not the model registry's runs.
    """

    doc: dict[str, Any]
    markdown: str
    scores: pd.DataFrame
    triples: pd.DataFrame
    split: pd.DataFrame
    model: Any
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, Any] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        """The tuned model: one per run."""
        return [str(self.doc["model"])]

    @property
    def seconds(self) -> float:
        return float(self.doc.get("seconds", 0.0))

    def summary(self) -> pd.DataFrame:
        """Win rates per setting (untouched, tuned, control), split and mode (held-out first)."""
        return self.tables.get("win_rates", pd.DataFrame())

    def history_record(self, name: str) -> HistoryRecord:
        """Every setting's cosine(anchor, variant) as pairs, the model named ``model [setting]``; the run's ``config``.

        ``name`` is not used: the pairs are the suite's, named by the run itself.
        """
        scores = self.scores
        pairs = pd.DataFrame(
            {
                C.COL_MODEL: self.doc["model"] + " [" + scores[C.COL_SETTING] + "]",
                C.COL_PAIR_ID: scores[C.COL_GROUP_ID] + ":" + scores[C.COL_MODE],
                C.COL_CATEGORY: scores[C.COL_MODE],
                C.COL_TEXT_A: scores[C.COL_ANCHOR],
                C.COL_TEXT_B: scores[C.ROLE_VARIANT],
                C.COL_COSINE: scores["cosine_variant"],
                C.COL_SPLIT: scores[C.COL_SPLIT],
            }
        )
        return HistoryRecord(pairs, {"config": self.doc["config"]})


def encoder(model: Any) -> report.EncodeFn:
    """A ``SentenceTransformer`` as texts -> unit vectors ``(n, dim)``."""

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(
            model.encode(texts, batch_size=ENCODE_BATCH, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        )

    return encode


def baseline_labelled() -> pd.DataFrame:
    """The baseline suite's positive (same meaning) and negative-control (unrelated) pairs as ``text_a, text_b, same``."""
    from core.papers.suites import load_suite

    suite = load_suite(C.SUITE_BASELINE)
    kept = suite[suite[C.COL_CATEGORY].isin((C.CAT_POSITIVE, C.CAT_NEGATIVE))]
    return pd.DataFrame(
        {C.COL_TEXT_A: kept[C.COL_TEXT_A], C.COL_TEXT_B: kept[C.COL_TEXT_B], "same": kept[C.COL_CATEGORY] == C.CAT_POSITIVE}
    )


def _natural_cost(
    encoders: Mapping[str, report.EncodeFn], natural: Triples | None, variants: pd.DataFrame, suite: RetrievalSuite, seed: int
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """:func:`report.natural_cost` on each natural set (the shipped ones, or the given triples) minus every row that shares
    a text with the suite, and what was measured on each."""
    seen = [*variants[C.COL_ANCHOR], *variants[C.COL_PARAPHRASE], *variants[C.ROLE_VARIANT]]
    if suite.queries is not None and not suite.queries.empty:
        seen += list(suite.queries[C.COL_TEXT])
    if natural is None:
        sets = [(s.name, s.source, data.natural_triples(s.path)) for s in data.NATURAL_SETS]
    else:
        sets = [(natural.name, f"{natural.name} (given).", natural)]
    tables, infos = [], []
    for name, source, triples in sets:
        kept, left_out = data.unseen_triples(triples, seen)
        info: dict[str, Any] = {
            "name": name,
            "rows": int(triples.frame[C.COL_SOURCE_ROW].nunique()),
            "left_out": left_out,
            "source": source,
        }
        if kept is None:
            info["reason"] = f"every row of {name} shares a text with the tuning data"
        else:
            tables.append(report.natural_cost(encoders, kept, name, seed=seed))
        infos.append(info)
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=report.NATURAL_COLUMNS)
    return table, infos


def _phase(progress: ProgressFn | None, start: float, width: float) -> ProgressFn | None:
    if progress is None:
        return None
    return lambda fraction, message: progress(start + width * fraction, message)


def _train_control(
    model: Any,
    original: Any,
    triples: pd.DataFrame,
    config: train.TuneConfig,
    *,
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
) -> tuple[Any, dict[str, Any]]:
    """Train the no-hard-negative control the same way, so any gain the tuned model shows over it is the negatives'.

    Returns:
        The averaged control model and its training statistics.
    """
    ctrl = train.trainable_copy(model)
    stats = train.fine_tune(
        ctrl,
        data.control_pairs(triples),
        config,
        teacher=original if config.distill else None,
        progress=progress,
        should_stop=should_stop,
    )
    train.average_weights(ctrl, original, config.average)
    return ctrl, stats


def run_tune(
    model: Any,
    model_name: str,
    suite: RetrievalSuite,
    config: train.TuneConfig,
    *,
    labelled: Mapping[str, pd.DataFrame] | None = None,
    natural: Triples | None = None,
    control: bool = True,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TuneResult:
    """Probe ``model``, train on the training half's failures, and report every setting on both halves.

    Args:
        model: the loaded ``SentenceTransformer`` (left unchanged).
        model_name: its name in the report.
        suite: the retrieval suite (or a user's pairs file read as one).
        config: training settings (its seed also seeds the split).
        labelled: extra cost data: name -> ``text_a, text_b, same``; the baseline suite is always measured.
        natural: natural triples for the general cost; None for the shipped sets (:data:`data.NATURAL_SETS`: WordNet
            antonym glosses and NLI sentence triples).  Rows sharing a text with the suite are left out.
        control: also train the no-hard-negative control.
        progress: (fraction, message) callback.
        should_stop: polled during training; True cancels (:class:`train.TuneCancelled`).

    Raises:
        ValueError: a suite with no usable group, or no failing variant in the training half.
        train.TuneCancelled: cancelled.
    """
    start = time.perf_counter()
    variants = data.variant_table(suite)
    if variants.empty:
        raise ValueError(f"{suite.name} has no anchor group with an anchor, a paraphrase and a variant")
    split = data.split_groups(variants, seed=config.seed)
    say = progress or (lambda f, m: None)
    say(0.0, "probing the untouched model")
    model.eval()
    untouched = report.score_variants(encoder(model), variants, split, C.TUNE_SETTING_UNTOUCHED)
    triples = data.training_triples(variants, split, untouched[C.COL_WIN], suite.queries)
    original = train.trainable_copy(model)
    original.eval()
    tuned = train.trainable_copy(model)
    train_share = 0.55 if control else 0.8
    stats = train.fine_tune(
        tuned,
        triples,
        config,
        teacher=original if config.distill else None,
        progress=_phase(progress, 0.1, train_share),
        should_stop=should_stop,
    )
    frames = [untouched]
    encoders: dict[str, report.EncodeFn] = {C.TUNE_SETTING_UNTOUCHED: encoder(original)}
    if config.average < 1:
        say(0.1 + train_share, "probing the tuned model before averaging")
        frames.append(report.score_variants(encoder(tuned), variants, split, C.TUNE_SETTING_NOT_AVERAGED))
        train.average_weights(tuned, original, config.average)
    say(0.1 + train_share, "probing the tuned model")
    frames.append(report.score_variants(encoder(tuned), variants, split, C.TUNE_SETTING_TUNED))
    encoders[C.TUNE_SETTING_TUNED] = encoder(tuned)
    control_stats = None
    if control:
        ctrl, control_stats = _train_control(
            model, original, triples, config, progress=_phase(progress, 0.1 + train_share, 0.25), should_stop=should_stop
        )
        frames.append(report.score_variants(encoder(ctrl), variants, split, C.TUNE_SETTING_CONTROL))
        encoders[C.TUNE_SETTING_CONTROL] = encoder(ctrl)
    say(0.9, "measuring the general cost on natural data it never saw")
    natural_table, natural_info = _natural_cost(encoders, natural, variants, suite, config.seed)
    say(0.95, "measuring the cost on labelled pairs")
    scores = pd.concat(frames, ignore_index=True)
    tables = {
        "win_rates": report.win_table(scores, seed=config.seed),
        "by_source": report.source_table(scores, seed=config.seed),
        "paired_tests": report.paired_tests(scores, seed=config.seed),
        "natural_cost": natural_table,
        "shortcut": report.shortcut_table(encoders, data.shortcut_pairs()),
        "costs": report.cost_table(encoders, {"baseline suite (positive vs negative controls)": baseline_labelled(), **(labelled or {})}),
    }
    split_frame = variants[[C.COL_GROUP_ID, C.COL_DOMAIN]].drop_duplicates().assign(**{C.COL_SPLIT: lambda f: f[C.COL_GROUP_ID].map(split)})
    meta = {
        "model": model_name,
        "suite": suite.name,
        "config": config.as_dict(),
        "groups": {s: int((split_frame[C.COL_SPLIT] == s).sum()) for s in C.TUNE_SPLITS},
        "variants": {s: int((untouched[C.COL_SPLIT] == s).sum()) for s in C.TUNE_SPLITS},
        "training": stats,
        "control_training": control_stats,
        "natural_data": natural_info,
        "seconds": round(time.perf_counter() - start, 1),
    }
    notes = [*report.warnings(tables["paired_tests"]), *report.cost_warnings(tables["natural_cost"], tables["shortcut"])]
    doc = report.report_doc(tables, meta, notes)
    say(1.0, "done")
    return TuneResult(doc, report.to_markdown(doc), scores, triples, split_frame.reset_index(drop=True), tuned, tables)


def write_outputs(result: TuneResult, out: str | Path) -> dict[str, Path]:
    """Write the model folder, the data (Parquet), the scores and the report (JSON, Markdown) under ``out``.

    Each file is written beside its name and renamed into place.
    """
    import json

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    written = {
        "triples": data.write_parquet(result.triples, folder / "triples.parquet"),
        "split": data.write_parquet(result.split, folder / "split.parquet"),
        "scores": data.write_parquet(result.scores, folder / "scores.parquet"),
    }
    for name, text in (("report.json", json.dumps(result.doc, indent=2, default=str)), ("report.md", result.markdown)):
        tmp = folder / (name + ".part")
        tmp.write_text(text + "\n", encoding="utf-8")
        written[name] = tmp.replace(folder / name)
    written["model"] = train.save_model(result.model, folder / "model")
    return written
