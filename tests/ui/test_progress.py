"""A fast model's answer is on the page before a slow one finishes; a long run says how long before it starts."""

from __future__ import annotations

import pandas as pd
import pytest
from apptest_support import compare_table, open_page

from core import constants
from core.models import registry
from core.models.estimate import ModelEstimate, RunEstimate, about
from core.models.loading import LoadedModel
from core.models.protocols import BackendDefaults
from core.scoring.findings import model_answer
from ui import progress

SLOW = registry.MPNET  # recorded as the slowest bundled model, so it runs after MiniLM whatever the sidebar's order


class SlowBackend(BackendDefaults):
    """MiniLM's encoder under mpnet's name; each call first notes which answers the page already showed."""

    def __init__(self, like, seen: list[dict[str, str]], shown: dict[str, str]):
        self.tokenizer, self.max_seq_length, self.dimension = like.tokenizer, like.max_seq_length, like.dimension
        self._like, self._seen, self._shown = like, seen, shown

    def embed(self, texts, batch_size=None):
        self._seen.append(dict(self._shown))  # what the page showed when the slow model started encoding
        return self._like.embed(texts)


def test_compare_shows_the_fast_models_answer_before_the_slow_one_encodes(minilm, monkeypatch):
    import core.models.runs as runs

    seen: list[dict[str, str]] = []
    shown: dict[str, str] = {}
    slow = LoadedModel(
        meta=registry.resolve(SLOW), backend=SlowBackend(minilm.backend, seen, shown), load_seconds=0.0, fingerprint="sha256:slow-fake"
    )
    real_load, real_memory, real_cached = runs.load, runs.in_memory, runs.cached_model
    monkeypatch.setattr(runs, "load", lambda name, options: slow if name == SLOW else real_load(name, options))
    monkeypatch.setattr(runs, "in_memory", lambda name, *a: None if name == SLOW else real_memory(name, *a))
    monkeypatch.setattr(runs, "cached_model", lambda name, *a, **k: None if name == SLOW else real_cached(name, *a, **k))
    real_draw = progress.LiveRun.draw

    def draw(self):
        shown.clear()
        shown.update(self.done)
        real_draw(self)

    monkeypatch.setattr(progress.LiveRun, "draw", draw)
    at = open_page("views/compare.py", timeout=120)
    at.session_state["selected_models"] = [SLOW, registry.MINILM_L6]  # the slow model first in the sidebar
    at.text_area(key="cmp_text_a").input("A sentence only this test scores, first side")
    at.text_area(key="cmp_text_b").input("A sentence only this test scores, second side")
    at.button(key="cmp_compare").click().run()
    assert not at.exception
    assert seen, "the slow model never encoded"
    assert registry.MINILM_L6 in seen[0] and seen[0][registry.MINILM_L6].startswith("cosine ")  # MiniLM's answer was already on the page
    assert SLOW not in seen[0]
    table = compare_table(at)
    assert list(table["model id"]) == [SLOW, registry.MINILM_L6]  # the finished table keeps the sidebar's order


def test_model_answer_in_words():
    one = pd.DataFrame({constants.COL_COSINE: [0.947]})
    assert model_answer(one, 0.7) == "cosine 0.9470, above the threshold 0.70"
    many = pd.DataFrame({constants.COL_COSINE: [0.9, 0.5, 0.8, 0.2]})
    assert model_answer(many, 0.7) == "4 pairs, mean cosine 0.600, 50% above the threshold 0.70"
    with pytest.raises(ValueError):
        model_answer(one, float("nan"))


def test_an_estimate_says_how_long_and_what_is_left_to_encode():
    est = RunEstimate((ModelEstimate(registry.MINILM_L6, 900, 0, 0.5, False), ModelEstimate(SLOW, 900, 900, 30.0, True)))
    assert est.fastest_first() == [registry.MINILM_L6, SLOW]
    assert progress.describe(est) == "Expected time: about 30 s (900 by mpnet\\-base still to encode; the rest is in the embedding cache)."
    assert about(3) == "under 5 s" and about(130) == "about 2 min"


def test_retrieval_defaults_to_a_quick_sample_and_states_its_expected_time(monkeypatch):
    import core.models.estimate as estimate

    monkeypatch.setattr(progress, "_MEMO", {})  # estimates are kept per cache state; this test changes the speed instead
    monkeypatch.setattr(estimate, "seconds_per_text", lambda name: 0.5)  # a slow model on a busy CPU: the run is long
    at = open_page("views/retrieval.py")
    assert at.number_input(key="rt_groups").value == constants.RETRIEVAL_QUICK_GROUPS
    captions = [c.value for c in at.caption]
    assert any(
        "A quick run on a sample" in c and f"{constants.RETRIEVAL_QUICK_GROUPS} of the suite's 200 anchor groups" in c for c in captions
    )
    assert any(c.startswith("⏱️ Expected time: about") and "still to encode" in c for c in captions), captions
    assert at.button(key="rt_run_full").label.startswith("Run the full suite (200 groups, about ")


def test_the_progress_line_of_one_typed_pair_says_1_pair_not_1_pairs():
    """Compare's run of one typed pair read "Comparing: scoring 1 pairs × 1 models" in its progress line."""
    from ui.progress import run_label

    assert run_label("Comparing", 1, 1, "scoring") == "Comparing: scoring 1 pair × 1 model"
    assert run_label("Comparing", 1, 4) == "Comparing: 1 pair × 4 models"
    assert run_label("Suite", 2, 1) == "Suite: 2 pairs × 1 model"
