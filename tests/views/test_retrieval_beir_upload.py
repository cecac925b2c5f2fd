"""On the Retrieval page: a BEIR zip is unpacked safely into one folder per session.

Every malformed or hostile zip is one error line and the earlier upload and
its results stay; the split is picked from the qrels the zip holds, never
typed; twenty uploads leave one unpacked folder and hold no upload's bytes.
"""

from __future__ import annotations

import gc
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from apptest_support import open_page
from zip_support import BEIR, CORPUS, MALFORMED, QRELS, QUERIES, make_zip

from core import constants
from ui.beir_upload import FOLDER_PREFIX, UnpackedBeir

PAGE = "views/retrieval.py"
# Twenty uploads of a 1 MB zip may leave at most this much more Python memory than one (the zip's bytes kept per upload would be 20 MB).
MEMORY_BOUND_BYTES = 4 * 2**20


@pytest.fixture
def tmp_folders(tmp_path, monkeypatch):
    """Unpacked folders go under a temporary folder of the test's own, so they can be counted."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    return root


def _unpacked(root: Path) -> list[Path]:
    return sorted(root.glob(f"{FOLDER_PREFIX}*"))


def _beir_page():
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("beir").run()
    return app


def _upload(app, name: str, data: bytes) -> None:
    app.file_uploader(key="rt_beir_uploader").set_value((name, data, "application/zip")).run()
    assert not app.exception, app.exception


def _ranking_shown(app) -> bool:
    return any({"recall_at_1", "ndcg_at_10"} <= set(d.value.columns) for d in app.dataframe)


def test_each_malformed_zip_is_one_line_and_the_earlier_upload_and_results_stay(tmp_folders):
    app = _beir_page()
    _upload(app, "good.zip", make_zip(BEIR, prefix="scifact/"))  # nested in a named folder: works
    assert not app.error
    app.button(key="rt_run").click().run()
    assert not app.exception and _ranking_shown(app)
    good = _unpacked(tmp_folders)
    assert len(good) == 1
    for case, (make, problem) in MALFORMED.items():
        _upload(app, "bad.zip", make())
        errors = [e.value.replace("\\", "") for e in app.error]  # md_escape'd
        assert len(errors) == 1, (case, errors)
        assert errors[0].startswith("Could not use bad.zip: ") and problem in errors[0] and errors[0].endswith("good.zip is kept."), (
            case,
            errors,
        )
        assert "\n" not in errors[0]
        assert _ranking_shown(app), f"{case}: the earlier results are gone"
        assert _unpacked(tmp_folders) == good, f"{case}: a refused upload left a folder behind"


def test_the_split_is_picked_from_the_qrels_the_zip_holds_never_typed(tmp_folders):
    app = _beir_page()
    _upload(app, "two.zip", make_zip({**BEIR, "qrels/dev.tsv": QRELS, "qrels/notes.txt": b"x"}))
    assert not [t for t in app.text_input if "split" in t.label.lower()], "the split is a free-text box"
    split = app.selectbox(key="rt_beir_split")
    assert split.options == ["test", "dev"] and split.value == "test"
    split.set_value("dev").run()
    assert not app.exception and not app.error
    assert any("split dev" in c.value for c in app.caption)


def test_twenty_uploads_keep_one_folder_and_no_bytes(tmp_folders):
    """What each upload kept (its bytes in session state, an unpacked folder never removed) is bounded."""
    app = _beir_page()

    def upload(i: int) -> None:
        pad = os.urandom(1 << 20)  # a different 1 MB zip each time: nothing can be served from a cache keyed by bytes
        _upload(app, f"u{i}.zip", make_zip({**BEIR, "corpus.jsonl": CORPUS, "queries.jsonl": QUERIES, "pad.bin": pad}))
        assert not app.error

    upload(0)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for i in range(1, 21):
            upload(i)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(_unpacked(tmp_folders)) == 1, "every upload left its unpacked folder behind"
    state = app.session_state._state.filtered_state  # AppTest's view of the session's state (no public listing)
    held = [k for k, v in state.items() if isinstance(v, bytes | bytearray) and len(v) > 65_536]
    assert not held, f"session state keeps an upload's bytes under {held}"
    print(f"20 uploads grew Python memory by {grown / 2**20:.2f} MB")
    assert grown < MEMORY_BOUND_BYTES, (
        f"20 uploads grew Python memory by {grown / 2**20:.1f} MB (bound {MEMORY_BOUND_BYTES / 2**20:.0f} MB)"
    )


def test_the_folder_goes_with_the_session(tmp_path):
    folder = tmp_path / "unpacked"
    folder.mkdir()
    (folder / "corpus.jsonl").write_bytes(CORPUS)
    held = UnpackedBeir("u.zip", "d", folder, ["test"])
    del held
    gc.collect()
    assert not folder.exists()
