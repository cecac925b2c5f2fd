"""Long runs said before they start and answered model by model.

Before a run: :func:`expected_caption` states the expected time of a run
longer than :data:`core.constants.ESTIMATE_SHOWN_ABOVE_SECONDS`, from
:func:`core.models.estimate.estimate_run` (texts the cache lacks × each
model's seconds per text).  During it: a :class:`LiveRun` shows the elapsed
time against the estimate and each model's answer the moment that model is
done (models run fastest first, so the slowest never hides the fastest).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core import constants
from core.messages import counted
from core.models import registry
from core.models.estimate import RunEstimate, about, estimate_run
from core.models.options import EncodeOptions
from core.scoring.findings import model_answer
from ui import resources
from ui.widgets import md_escape, wall_time

# `about` for the pages
__all__ = ["LiveRun", "about", "button_label", "describe", "estimate", "expected_caption", "pair_texts", "run_label"]
_MEMO: dict[tuple, RunEstimate] = {}
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 64


def run_label(label: str, n_pairs: int, n_models: int, doing: str = "") -> str:
    """A pairs run's progress line: "Comparing: scoring 1 pair × 2 models" (``doing``: the verb, or none)."""
    return f"{label}: {doing + ' ' if doing else ''}{counted(n_pairs, 'pair')} × {counted(n_models, 'model')}"


def pair_texts(pairs: pd.DataFrame) -> list[str]:
    """The texts a pairs run encodes (both sides)."""
    return [*pairs[constants.COL_TEXT_A].astype(str), *pairs[constants.COL_TEXT_B].astype(str)]


def estimate(models: Sequence[str], texts: Sequence[str], options: EncodeOptions) -> RunEstimate:
    """:func:`core.models.estimate.estimate_run` on the shared cache, kept until the cache is written to again.

    A threshold move reruns the page: the estimate under its Run button is
    then a dictionary lookup, not a count over the cache file.
    """
    cache = resources.embedding_cache()
    digest = hashlib.blake2b("\0".join(texts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    key = (tuple(models), options, digest, cache.stats.writes)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
    if found is not None:
        return found
    value = estimate_run(models, texts, cache, options)
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = value
    return value


def describe(est: RunEstimate) -> str:
    """The estimate in a sentence: how long, and what is left to encode by which model."""
    to_encode = [m for m in est.models if m.n_to_encode]
    if not to_encode:
        return f"Expected time: {about(est.seconds)} (every text is in the embedding cache)."
    parts = ", ".join(f"{m.n_to_encode:,} by {md_escape(_short(m.model))}" for m in to_encode)
    return f"Expected time: {about(est.seconds)} ({parts} still to encode; the rest is in the embedding cache)."


def button_label(label: str, est: RunEstimate | None) -> str:
    """A long run's button with its expected time on it, read before the click: "Recompute (about 2 min)".

    A run the cache answers says so ("Recompute (under 5 s, cached)"); no estimate (no model) leaves the label as it is.
    """
    if est is None:
        return label
    if not est.n_to_encode:
        return f"{label} ({about(est.seconds)}, cached)"
    return f"{label} ({about(est.seconds)})"


def expected_caption(models: Sequence[str], texts: Sequence[str], options: EncodeOptions, always: bool = False) -> RunEstimate | None:
    """Say a run's expected time under its button when it is longer than the threshold (or ``always``).

    Returns the estimate, or None without models.
    """
    if not models or not texts:
        return None
    est = estimate(models, texts, options)
    if always or est.seconds > constants.ESTIMATE_SHOWN_ABOVE_SECONDS:
        st.caption(f"⏱️ {describe(est)}")
    return est


def _short(name: str) -> str:
    return registry.short_name(name) if name in registry.REGISTRY else name


class LiveRun:
    """Each model's answer as soon as it is done, and the elapsed time against the estimate, in one placeholder.

    Args:
        est: the run's estimate (its models in the order the sidebar lists them).
        threshold: the sidebar's threshold, for each model's one-line answer.
    """

    def __init__(self, est: RunEstimate, threshold: float) -> None:
        self.est = est
        self.threshold = threshold
        self.start = time.perf_counter()
        self.began = self.start
        self.done: dict[str, str] = {}
        self.names: dict[str, str] = {m.model: registry.resolve(m.model).name for m in est.models}
        self.slot = st.empty()

    def elapsed(self) -> str:
        """ "12 s elapsed of about 40 s expected" (or "longer than the 40 s expected")."""
        spent = time.perf_counter() - self.start
        if spent > self.est.seconds * 1.2 and self.est.seconds >= 5:
            return f"{wall_time(spent)} elapsed, longer than the {about(self.est.seconds).removeprefix('about ')} expected"
        return f"{wall_time(spent)} elapsed of {about(self.est.seconds)} expected"

    def model_done(self, frame: pd.DataFrame) -> None:
        """Show one model's answer (its rows of the results) now, before the next model starts."""
        if not frame.empty:
            self.answer(str(frame[constants.COL_MODEL].iloc[0]), model_answer(frame, self.threshold))

    def answer(self, model: str, text: str) -> None:
        """Show ``model``'s answer in words (any page's own), with the seconds it took."""
        now = time.perf_counter()
        self.done[registry.resolve(model).name] = f"{text} · {wall_time(now - self.began)}"
        self.began = now
        self.draw()

    def draw(self) -> None:
        lines = []
        for m in self.est.models:
            name = self.names[m.model]
            answer = self.done.get(name)
            if answer is not None:
                lines.append(f"- ✅ **{md_escape(_short(name))}**: {md_escape(answer)}")
            else:
                lines.append(f"- ⏳ **{md_escape(_short(name))}**: running ({about(m.seconds)} expected)")
        self.slot.markdown("\n".join(lines))

    def clear(self) -> None:
        """Remove the per-model lines once the page draws the whole result."""
        self.slot.empty()
