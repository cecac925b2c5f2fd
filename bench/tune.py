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


def tune_default() -> dict:
    """One default tune (seed 0) of MiniLM-L6 with the control: seconds, peak RSS, the held-out negation win rates."""
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
        "load_average_1min": round(os.getloadavg()[0], 2),
        "targets": {"seconds": f"< {TARGET_SECONDS}", "held_out_negation_drop": f">= {TARGET_NEGATION_DROP}"},
        "met": bool(seconds < TARGET_SECONDS and drop >= TARGET_NEGATION_DROP),
    }
