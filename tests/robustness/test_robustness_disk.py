"""Trust nothing read from disk, through the command line and the app.

The CLI is run in-process (``core.cli.main.main``) where one process is
enough, and as a subprocess where the point is a new process: a model folder
changed between two runs, or raw bytes in ``argv``.  Page tests drive the
real Compare and Your data pages with AppTest.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from apptest_support import expected_cosine, open_page
from streamlit.testing.v1 import AppTest

from core import constants
from core.models import bundled
from core.models.bundled import BUNDLES, bundle_path, sha256_file
from core.models.cache import row_checksum, text_hash
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from ui.widgets import md_escape

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
LONG_ID = "/tmp/" + "x" * 300
ACCENTED = "Naïve résumé", "Résumé naïf"


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(folder))
    return folder


# ------------------------------------------------- point 1: the model changed at the same path


def _compare_in_new_process(folder: Path, cache: Path, *flags: str) -> tuple[float, str]:
    env = {**os.environ, constants.CACHE_ENV_VAR: str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "core", "compare", A, B, "--models", str(folder), "--json", *flags],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    return row["cosine"], proc.stderr


def _perturb_one_tensor(weights: Path) -> None:
    """Rewrite the file with one attention matrix changed, as fine-tuning in place would."""
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(weights))
    name = "encoder.layer.0.attention.self.query.weight"
    tensors[name] = tensors[name] + np.random.default_rng(0).normal(0.0, 0.5, tensors[name].shape).astype(tensors[name].dtype)
    save_file(tensors, str(weights), metadata={"format": "pt"})


def test_weights_changed_in_place_are_recomputed_with_a_note(tmp_path):
    folder = tmp_path / "my-minilm"
    shutil.copytree(bundle_path("minilm_l6"), folder)
    cache = tmp_path / "cache"

    first, _ = _compare_in_new_process(folder, cache)
    assert first == pytest.approx(expected_cosine(A, B), abs=1e-5)  # the copy is MiniLM: 0.947
    _perturb_one_tensor(folder / "model.safetensors")
    second, err = _compare_in_new_process(folder, cache)
    # The changed weights computed afresh, by sentence-transformers itself (in this process: no third start-up).
    from sentence_transformers import SentenceTransformer

    a, b = SentenceTransformer(str(folder), device="cpu").encode([A, B], normalize_embeddings=True)
    uncached = float(np.dot(a, b))

    assert second == pytest.approx(uncached, abs=1e-6)
    assert abs(second - first) > 0.005  # the new weights do score differently
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert any(f"the model at {folder} changed since its vectors were cached" in n for n in notes), err


# ------------------------------------------------- point 2: a damaged row, through the CLI


def test_damaged_cache_row_gives_one_warning_and_the_uncached_cosine(cli, cache_dir, minilm):
    code, out, _ = cli("compare", A, B, "--models", MINILM_L6, "--json")
    assert code == 0
    key, h = minilm.cache_key, text_hash(A)
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as conn:
        (blob,) = conn.execute("SELECT vector FROM embeddings WHERE model_key=? AND text_hash=?", (key, h)).fetchone()
        scaled = (np.frombuffer(blob, dtype=np.float32) * 7).tobytes()  # x7: every cosine would clip to 1.0
        conn.execute(
            "UPDATE embeddings SET vector=?, checksum=? WHERE model_key=? AND text_hash=?", (scaled, row_checksum(key, h, scaled), key, h)
        )

    # The CLI opens a new EmbeddingCache per command, so the damaged row is read from disk as after a restart.
    code, out, err = cli("compare", A, B, "--models", MINILM_L6, "--json")
    assert code == 0
    assert json.loads(out)[0]["cosine"] == pytest.approx(expected_cosine(A, B), abs=1e-5)
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "1 stored vector(s)" in warnings[0] and "not of unit length" in warnings[0], err


# ------------------------------------------------- point 3: one bad byte, and --encoding


def test_a_bad_byte_keeps_accents_and_the_cosine(cli, tmp_path, cache_dir):
    path = tmp_path / "accents.csv"
    path.write_bytes("text_a,text_b\n{},{}\nOne \xff,Two\n".format(*ACCENTED).encode("utf-8").replace("\xff".encode(), b"\xff"))
    code, _, err = cli("run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert "are not valid UTF-8" in err and "line 3" in err
    scored = pd.read_csv(tmp_path / "out" / "pairs.csv")
    row = scored[scored[constants.COL_TEXT_A] == ACCENTED[0]]
    assert len(row) == 1  # no mojibake: the accents came through
    assert row[constants.COL_COSINE].iloc[0] == pytest.approx(expected_cosine(*ACCENTED), abs=1e-5)

    code, _, err = cli(
        "run", "--suite", str(path), "--out", str(tmp_path / "out2"), "--models", MINILM_L6, "--quiet", "--encoding", "latin-1"
    )
    assert code == 0 and "decoded as iso8859-1" in err
    code, _, err = cli("run", "--suite", str(path), "--out", str(tmp_path / "out3"), "--encoding", "nonsense")
    assert code == 2 and error_lines(err) == [
        f"error: {path}: unknown encoding 'nonsense'; use a name such as utf-8, latin-1, cp1252 or utf-16"
    ]


# ------------------------------------------------- points 5, 7, 12: reader errors end as `error: PATH: REASON`


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "the JSON is nested too deeply for the JSON parser"),
        (
            "nested.jsonl",
            b'{"text_a": {"x": [1, 2, {"y": null}]}, "text_b": "b"}\n',
            "column 'text_a' (for text_a) holds JSON objects or arrays",
        ),
        (
            "wrapped.json",
            json.dumps({"pairs": [{"text_a": "a", "text_b": "b"}]}, indent=1).encode(),
            "the file holds one JSON object with keys 'pairs'",
        ),
    ],
    ids=["deep nesting", "object as text", "wrapper object"],
)
def test_reader_errors_are_one_line_and_exit_2(cli, tmp_path, cache_dir, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = cli("run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert line.startswith(f"error: {path}: {reason}"), line
    assert "Traceback" not in err


def test_a_lone_surrogate_escape_is_scored_as_a_replacement_character(cli, tmp_path, cache_dir):
    path = tmp_path / "surrogate.jsonl"
    path.write_bytes(b'{"text_a": "caf\\ud800", "text_b": "coffee"}\n{"text_a": "tea", "text_b": "green tea"}\n')
    code, _, err = cli("run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert "row 1 held \\ud800-style escapes" in err


def test_a_symlink_loop_is_named_as_such(cli, tmp_path, cache_dir):
    loop = tmp_path / "loop.csv"
    os.symlink(loop, loop)
    code, _, err = cli("run", "--suite", str(loop), "--out", str(tmp_path / "out"), "--models", MINILM_L6)
    assert code == 2
    assert error_lines(err) == [
        f"error: {loop}: cannot read it: it is a symbolic link loop (it leads back to itself); point it at a real file"
    ]


# ------------------------------------------------- point 6: a model id with a part over 255 bytes


def test_an_overlong_model_id_is_one_models_error_in_the_cli(cli, cache_dir):
    code, out, err = cli("compare", A, B, "--models", LONG_ID, MINILM_L6, "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert row["model"] == MINILM_L6
    (line,) = error_lines(err)
    assert line.startswith(f"error: {LONG_ID}: /tmp/xxx") and "cannot be a folder here (File name too long)" in line


def test_an_overlong_model_id_is_one_models_error_on_the_page():
    at = open_page("views/compare.py")
    at.text_input(key="custom_model_input").input(LONG_ID)
    next(b for b in at.button if b.label == "Add model").click().run()
    assert not at.exception
    at.text_area(key="cmp_text_a").input(A)
    at.text_area(key="cmp_text_b").input(B)
    at.button(key="cmp_compare").click().run()
    assert not at.exception, at.exception
    assert any("File name too long" in e.value for e in at.error)
    frames = [df.value for df in at.dataframe if {"cosine", "verdict"} <= set(df.value.columns)]
    assert len(frames) == 1 and list(frames[0]["model id"]) == [MINILM_L6]
    assert (at.text_area(key="cmp_text_a").value, at.text_area(key="cmp_text_b").value) == (A, B)


# ------------------------------------------------- point 7 on the page: the message stays, nothing comes back silently

GOOD = b"text_a\ttext_b\nThe cat sat\tA cat sat\nIt rained\tIt did not rain\n"


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader[0].set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, "the JSON is nested too deeply for the JSON parser"),
        ("wrapped.json", json.dumps({"pairs": [{"text_a": "a", "text_b": "b"}]}, indent=1).encode(), "the file holds one JSON object"),
    ],
    ids=["deep nesting", "wrapper object"],
)
def test_a_reader_error_on_the_page_stays_through_reruns(name, data, said):
    at = open_page("views/your_data.py")
    _upload(at, "good.tsv", GOOD)
    _upload(at, name, data)
    for _ in range(2):  # the message survives later reruns; the good file's pairs are kept and said to be
        (error,) = [e.value for e in at.error]
        assert error.startswith(f"Could not read {md_escape(name)}: {md_escape(said)}")
        assert error.endswith(f"The pairs from {md_escape('good.tsv')} are kept.")
        at.run()
        assert not at.exception


def test_a_lone_surrogate_upload_is_read_with_a_note():
    at = open_page("views/your_data.py")
    _upload(at, "surrogate.jsonl", b'{"text_a": "caf\\ud800", "text_b": "coffee"}\n{"text_a": "tea", "text_b": "green tea"}\n')
    assert not at.error
    assert any(md_escape("row 1 held \\ud800-style escapes") in i.value for i in at.info)


def test_the_encoding_box_rereads_the_file():
    at = open_page("views/your_data.py")
    data = "text_a,text_b\n{},{}\nOne \xff,Two\n".format(*ACCENTED).encode("utf-8").replace("\xff".encode(), b"\xff")
    _upload(at, "accents.csv", data)
    preview = next(d.value for d in at.dataframe if constants.COL_TEXT_A in d.value.columns)
    assert preview[constants.COL_TEXT_A].iloc[0] == ACCENTED[0]
    assert any(md_escape("1 byte sequence(s) on line 3 are not valid UTF-8") in i.value for i in at.info)
    at.selectbox(key="yd_encoding").set_value("Latin-1").run()
    assert not at.exception
    preview = next(d.value for d in at.dataframe if constants.COL_TEXT_A in d.value.columns)
    assert preview[constants.COL_TEXT_A].iloc[0] == ACCENTED[0].encode("utf-8").decode("latin-1")


# ------------------------------------------------- point 8: an unusable cache folder and the bundled mpnet


def test_mpnet_unpacks_outside_an_unusable_cache_folder(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder's parent is a regular file")
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(blocker / "cache"))
    monkeypatch.setattr(bundled, "_FALLBACK_ROOT", [])
    folder = bundle_path("mpnet")
    assert not str(folder).startswith(str(blocker))
    assert sha256_file(folder / "model.safetensors") == BUNDLES["mpnet"].sha256
    assert (folder / "modules.json").is_file() and (folder / "tokenizer.json").is_file()


# ------------------------------------------------- point 9: arguments that are not UTF-8


@pytest.mark.parametrize("argv", [[b"compare", b"caf\xe9", b"coffee"], [b"tokens", b"caf\xe9"]], ids=["compare", "tokens"])
def test_non_utf8_arguments_end_in_one_line(argv, tmp_path):
    env = {**os.environ, constants.CACHE_ENV_VAR: str(tmp_path / "cache"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run([sys.executable, "-m", "core", *argv], cwd=PROJECT_ROOT, env=env, capture_output=True, timeout=300)
    assert proc.returncode == 2
    err = proc.stderr.decode("utf-8")
    assert err.splitlines() == [
        "error: argument 2 ('caf\\xe9') is not valid UTF-8: give text and paths in UTF-8 (check the terminal's or the script's encoding, "
        "e.g. LANG=C.UTF-8)"
    ]


# ------------------------------------------------- point 11: negative labels stay numbers in exports


def test_negative_labels_are_exported_as_numbers(cli, tmp_path, cache_dir):
    path = tmp_path / "labels.csv"
    path.write_text("text_a,text_b,label\nThe cat sat,A cat sat,-1\nIt rained,It did not rain,-0.25\n=1+1,formula,0.5\n", encoding="utf-8")
    code, _, err = cli("run", "--suite", str(path), "--out", str(tmp_path / "out"), "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    exported = pd.read_csv(tmp_path / "out" / "pairs.csv", dtype=str)
    assert exported[constants.COL_LABEL].tolist() == ["-1", "-0.25", "0.5"]
    assert exported[constants.COL_TEXT_A].tolist()[2] == "'=1+1"  # the formula guard still works
