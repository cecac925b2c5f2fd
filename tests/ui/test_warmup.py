"""Issue 33: a cache folder without the examples fills in the background, its progress in the sidebar, and pages never wait for it."""

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
