"""`python -m bench tune_default`: wall time and peak memory of a default ``cosine-probe tune`` on the bundled MiniLM-L6.

The issue's target: under 15 minutes on a 2-core CPU, with the held-out
negation win rate falling by at least 30 points.  The command runs in a
child process so its peak RSS is its own (``RUSAGE_CHILDREN``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = "MiniLM-L6"
TARGET_SECONDS = 15 * 60
TARGET_NEGATION_DROP = 0.30


def _held_out_negation(doc: dict) -> dict[str, float]:
    rows = [r for r in doc["win_rates"] if r["split"] == "held-out" and r["mode"] == "negation"]
    return {r["setting"]: r["win_rate"] for r in rows}


def _general_cost(doc: dict) -> dict[str, dict[str, float]]:
    """The natural-data cost rows: measure -> setting -> value, plus the shortcut probe's means."""
    out: dict[str, dict[str, float]] = {}
    for r in doc.get("natural_cost", []):
        out.setdefault(r["measure"], {})[r["setting"]] = r["value"]
    for r in doc.get("shortcut", []):
        if r["item"] == "door" and r["meaning"] == "same":
            out.setdefault("shortcut: The door was open. / The door was not closed.", {})[r["setting"]] = round(r["cosine"], 4)
    return out


def _keep(doc: dict) -> Path:
    """The whole report beside the temp folder (JSON), so docs/tune.md can quote every table of the measured run."""
    kept = Path(tempfile.gettempdir()) / "cosine-probe-bench-tune-default.json"
    kept.write_text(json.dumps(doc, indent=1))
    print(f"  report of the run: {kept}", file=sys.stderr)
    return kept


def _phases(doc: dict) -> dict:
    """The run's time by phase, per text, as ``core/probes/tune/estimate.py`` counts it: the figures its constants come from.

    Training: both trainings' seconds over the texts they pushed through the model (steps × batch × 3 for the triples,
    × 2 for the control's pairs).  Probes: the rest of the run's own seconds over the texts its probes encoded.
    """
    from core import constants
    from core.probes.retrieval.suite_files import load_retrieval_suite
    from core.probes.tune import estimate
    from core.probes.tune.train import TuneConfig

    config = TuneConfig(seed=0)
    train, control = doc["training"], doc["control_training"]
    counts = estimate.suite_counts(load_retrieval_suite(), config.seed)
    texts_trained = config.batch_size * (train["steps"] * estimate.TRIPLE_TEXTS + control["steps"] * estimate.PAIR_TEXTS)
    train_seconds = train["seconds"] + control["seconds"]
    eval_texts = estimate.eval_text_count(counts.probe_texts, config, control=True)
    eval_seconds = doc["seconds"] - train_seconds
    expected = estimate.estimate_tune(MODEL, counts, config)
    return {
        "training_rows": train["rows"],
        "possible_training_rows": counts.training_rows,
        "failing_share": round(train["rows"] / counts.training_rows, 3),
        "train_seconds": round(train_seconds, 1),
        "train_seconds_per_text": round(train_seconds / texts_trained, 5),
        "eval_texts": eval_texts,
        "eval_seconds": round(eval_seconds, 1),
        "eval_seconds_per_text": round(eval_seconds / eval_texts, 5),
        "estimate_seconds": round(expected.seconds, 1),
        "batch_size": constants.TUNE_DEFAULT_BATCH,
    }


def tune_default() -> dict:
    """One default tune (seed 0) of MiniLM-L6 with the control: seconds, peak RSS, the held-out negation win rates, the phases."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COSINE_PROBE_HISTORY": "off"}
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "core", "tune", "--models", MODEL, "--out", str(Path(tmp) / "out"), "--seed", "0", "--json", "--quiet"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds = time.perf_counter() - start
        doc = json.loads(out.stdout)
        _keep(doc)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    negation = _held_out_negation(doc)
    drop = negation.get("untouched", float("nan")) - negation.get("tuned", float("nan"))
    return {
        "model": MODEL,
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(peak_mb, 1),
        "training_steps": doc["training"]["steps"],
        "held_out_negation": negation,
        "held_out_negation_drop": round(drop, 3),
        "general_cost": _general_cost(doc),
        "phases": _phases(doc),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "targets": {"seconds": f"< {TARGET_SECONDS}", "held_out_negation_drop": f">= {TARGET_NEGATION_DROP}"},
        "met": bool(seconds < TARGET_SECONDS and drop >= TARGET_NEGATION_DROP),
    }


def tune_rates(steps: int = 16, batches: int = 20) -> dict:
    """What ``core/probes/tune/estimate.py``'s constants are: MiniLM-L6's seconds per text trained and per text encoded.

    In one process, on the default run's own data: the untouched model probes the retrieval suite (the failing share is
    the training half's failures over its possible rows), a copy trains ``steps`` steps on the training triples and
    another as many on the control's pairs, and ``batches`` batches of the suite's texts are encoded as the probes
    encode them.  Each step and each batch is timed alone and the fastest kept (as ``timeit`` does): a shared
    machine's load only ever adds time, so the fastest is the closest to the machine itself, and the estimate is one
    for a quiet machine.  The median and the load average are recorded beside it.
    """
    import numpy as np
    import pandas as pd

    from core import constants as C
    from core.models.loading import load_model
    from core.probes.retrieval.suite_files import load_retrieval_suite
    from core.probes.tune import data, estimate, report, train
    from core.probes.tune.run import ENCODE_BATCH, encoder

    load_before = os.getloadavg()[0]
    model = load_model(MODEL, backend="torch").backend.torch_model
    suite = load_retrieval_suite()
    config = train.TuneConfig(seed=0, max_steps=steps)
    variants = data.variant_table(suite)
    split = data.split_groups(variants, seed=config.seed)
    model.eval()
    untouched = report.score_variants(encoder(model), variants, split, C.TUNE_SETTING_UNTOUCHED)
    triples = data.training_triples(variants, split, untouched[C.COL_WIN], suite.queries)
    counts = estimate.suite_counts(suite, config.seed)

    def step_times(rows: pd.DataFrame) -> list[float]:
        marks: list[float] = []
        start = time.perf_counter()
        train.fine_tune(train.trainable_copy(model), rows, config, progress=lambda fraction, message: marks.append(time.perf_counter()))
        return list(np.diff([start, *marks]))[1:]  # the first step also builds the trainer

    pairs = data.control_pairs(triples)
    trained = [t / (config.batch_size * estimate.TRIPLE_TEXTS) for t in step_times(triples)]
    controlled = [t / (config.batch_size * estimate.PAIR_TEXTS) for t in step_times(pairs)]
    texts = list(dict.fromkeys(pd.concat([variants[C.COL_ANCHOR], variants[C.COL_PARAPHRASE], variants[C.ROLE_VARIANT]])))
    encode = encoder(model)
    encoded = []
    for b in range(batches):
        batch = texts[b * ENCODE_BATCH : (b + 1) * ENCODE_BATCH]
        start = time.perf_counter()
        encode(batch)
        encoded.append((time.perf_counter() - start) / len(batch))
    return {
        "model": MODEL,
        "training_rows": len(triples),
        "possible_training_rows": counts.training_rows,
        "failing_share": round(len(triples) / counts.training_rows, 4),
        "control_rows": len(pairs),
        "possible_control_rows": counts.control_rows,
        "control_share": round(len(pairs) / counts.control_rows, 4),
        "steps_timed": len(trained) + len(controlled),
        # one rate for a text through a training step, triples' or pairs': the fastest step of either
        "train_seconds_per_text": round(min(trained + controlled), 5),
        "triples_seconds_per_text": round(min(trained), 5),
        "control_seconds_per_text": round(min(controlled), 5),
        "eval_seconds_per_text": round(min(encoded), 6),
        "median": {
            "train_seconds_per_text": round(float(np.median(trained)), 5),
            "control_seconds_per_text": round(float(np.median(controlled)), 5),
            "eval_seconds_per_text": round(float(np.median(encoded)), 6),
        },
        "load_average_1min_before": round(load_before, 2),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
