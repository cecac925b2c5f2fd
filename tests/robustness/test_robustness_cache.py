"""Cache: an unwritable or corrupt cache folder gives a visible warning, never lost results.

The embedding cache is one ``st.cache_resource`` per server, so each test
points ``COSINE_PROBE_CACHE_DIR`` somewhere bad, drops the cached instance,
and drops it again afterwards so later tests get the session's good cache.
Tests run as root, where permissions do not stop writes, so "unwritable" is
a folder under a regular file: it can never be created.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from apptest_support import open_page
from streamlit.testing.v1 import AppTest

from core.constants import CACHE_ENV_VAR
from core.models.encode import encode_texts
from core.models.loading import load_model
from core.models.registry import MINILM_L6
from ui import resources
from ui.widgets import md_escape

# The core cache also raises CacheWarning for these folders; the tests check what the page shows.
pytestmark = pytest.mark.filterwarnings("ignore::core.models.cache.CacheWarning")

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture
def cache_at(monkeypatch):
    """Point the app's embedding cache at a folder; a fresh cache instance is made from it."""

    def point(folder: Path) -> None:
        monkeypatch.setenv(CACHE_ENV_VAR, str(folder))
        resources.embedding_cache.clear()

    yield point
    resources.embedding_cache.clear()


def compare_page() -> AppTest:
    return open_page("views/compare.py")


def cache_warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if w.icon == "💾"]


def assert_scored(at: AppTest) -> None:
    frames = [df.value for df in at.dataframe if {"cosine", "verdict"} <= set(df.value.columns)]
    assert len(frames) == 1
    vectors, _ = encode_texts(load_model(MINILM_L6), [A, B], None)
    assert frames[0]["cosine"].iloc[0] == pytest.approx(float(np.dot(vectors[A], vectors[B])), abs=1e-4)


def test_unwritable_cache_folder_warns_and_still_scores(tmp_path, cache_at):
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file where the cache folder's parent should be")
    folder = blocker / "cache"
    cache_at(folder)

    at = compare_page()

    reason = (
        f"Cannot use the embedding cache {folder / 'embeddings.sqlite'} ([Errno 20] Not a directory: '{folder}'); caching in memory only"
    )
    assert cache_warnings(at) == [f"{md_escape(reason)}. Scores are unaffected, but vectors are recomputed after every restart."]
    assert_scored(at)
    assert not resources.embedding_cache().on_disk
    # The warning stays in view on later reruns and on other pages that score pairs.
    at.button(key="cmp_compare").click().run()
    assert len(cache_warnings(at)) == 1
    at.switch_page("views/your_data.py").run()
    assert not at.exception
    assert len(cache_warnings(at)) == 1


def test_corrupt_cache_file_is_set_aside_with_a_warning_and_rebuilt(tmp_path, cache_at):
    folder = tmp_path / "cache"
    folder.mkdir()
    garbage = b"not a database \x00\xff" * 300
    (folder / "embeddings.sqlite").write_bytes(garbage)
    cache_at(folder)

    at = compare_page()

    (warning,) = cache_warnings(at)
    assert warning.startswith(md_escape(f"Embedding cache {folder / 'embeddings.sqlite'} was unreadable"))
    assert warning.endswith(md_escape("moved it aside and started a new one") + ". Scores are unaffected.")
    assert_scored(at)
    (moved,) = folder.glob("embeddings.sqlite.corrupt-*")
    assert moved.read_bytes() == garbage
    with sqlite3.connect(folder / "embeddings.sqlite") as conn:  # the rebuilt cache took the new vectors
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] >= 2


def test_good_cache_folder_shows_no_warning(tmp_path, cache_at):
    cache_at(tmp_path / "fine")
    at = compare_page()
    assert cache_warnings(at) == []
    assert_scored(at)
    assert resources.embedding_cache().on_disk
