"""A cache folder without the examples fills in the background, its progress in the sidebar, and pages never wait for it."""

from __future__ import annotations

import threading

from apptest_support import compare_table, open_page

from core import constants
from core.models.registry import MINILM_L6
from core.probes import warmup as core_warmup
from ui import resources, warmup

TEXTS = {"this test": ["A sentence only the warm-up test encodes", "Another sentence only the warm-up test encodes"]}


def test_background_warm_up_shows_progress_never_blocks_a_page_and_fills_the_cache(monkeypatch, minilm):
    release = threading.Event()
    real_warm = core_warmup.warm_cache

    def held_warm(*args, **kwargs):
        release.wait(60)  # the warm-up is "still encoding" while the pages below are used
        return real_warm(*args, **kwargs)

    monkeypatch.setenv(constants.WARM_ENV_VAR, "1")
    monkeypatch.setattr(core_warmup, "warm_texts", lambda: TEXTS)
    monkeypatch.setattr(core_warmup, "warm_cache", held_warm)
    monkeypatch.setattr(warmup, "_STATUS", [])
    monkeypatch.setattr(warmup, "START_DELAY_SECONDS", 0.0)
    home = open_page("views/home.py")
    status = warmup.background_warm()
    assert status.models == [MINILM_L6]
    for _ in range(100):  # the thread counts what is missing, then waits in held_warm
        if status.snapshot()[0] == warmup.WARMING:
            break
        release.wait(0.1)
    home.run()
    bars = [p for p in home.sidebar.get("progress")]
    assert bars and "Preparing the examples in the background" in bars[0].proto.text
    compare = open_page("views/compare.py", timeout=120)  # answers while the warm-up waits
    assert not compare_table(compare).empty
    release.set()
    next(t for t in threading.enumerate() if t.name == "cosine-probe-warm").join(60)
    assert status.snapshot()[0] == warmup.DONE
    assert core_warmup.missing_texts([MINILM_L6], resources.embedding_cache(), texts=TEXTS) == 0


def test_no_background_warm_up_when_turned_off(monkeypatch):
    monkeypatch.setattr(warmup, "_STATUS", [])
    monkeypatch.setenv(constants.WARM_ENV_VAR, "0")
    home = open_page("views/home.py")
    assert warmup.background_warm().state == warmup.OFF
    assert not list(home.sidebar.get("progress"))


def test_default_models_load_in_the_background_with_progress_so_the_first_typed_pair_waits_for_no_weights(monkeypatch):
    """The first pair a user typed waited 7 s for the weights, loaded on that click: they now load once the server starts."""
    loading = threading.Event()
    release = threading.Event()
    loaded: list[str] = []

    def held_load(name, options):
        loaded.append(name)
        loading.set()
        release.wait(60)  # "still loading" while the sidebar is drawn

    monkeypatch.setenv(constants.WARM_ENV_VAR, "1")
    monkeypatch.setattr(core_warmup, "load", held_load)
    monkeypatch.setattr(core_warmup, "warm_texts", lambda: TEXTS)
    monkeypatch.setattr(warmup, "_STATUS", [])
    monkeypatch.setattr(warmup, "START_DELAY_SECONDS", 0.0)
    monkeypatch.setattr(warmup, "QUIET_SECONDS", 0.0)
    home = open_page("views/home.py")
    status = warmup.background_warm()
    assert loading.wait(60) and loaded == [MINILM_L6]
    assert status.snapshot()[0] == warmup.LOADING
    home.run()
    bars = [p for p in home.sidebar.get("progress")]
    said = bars[0].proto.text.replace("\\", "") if bars else ""  # markdown-escaped
    assert said.startswith("Loading the models in the background: ") and "MiniLM-L6" in said and said.endswith("(1/1)"), said
    release.set()
    next(t for t in threading.enumerate() if t.name == "cosine-probe-warm").join(60)
    assert status.snapshot()[0] == warmup.DONE and loaded == [MINILM_L6]  # each default model once, then the warm-up
