"""``run`` at scale: a TSV of several chunks, Parquet input, progress on stderr only, warm reruns without torch."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.models.cache import EmbeddingCache
from core.models.registry import MINILM_L3_ONNX, MINILM_L6
from core.paths import PROJECT_ROOT
from core.scoring.runner import run_pairs

# CANNOT's 8,596 pairs are two full chunks of the default 4,096 and a partial third; the same shape at a quarter of
# the size (two chunks of 1,000 and 150 rows) proves the same (every row of every chunk written) with a quarter of the encoding.
CHUNK_ROWS = 1_000
ROWS = 2 * CHUNK_ROWS + 150
VOCAB = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "house",
    "car",
    "blue",
    "red",
    "small",
    "big",
    "quickly",
    "slowly",
    "not",
    "never",
    "man",
    "woman",
    "child",
    "tree",
    "river",
    "city",
    "old",
    "new",
]


@pytest.fixture(autouse=True)
def any_backend(monkeypatch):
    """The bundled L3 model exists only as ONNX: let each model take its own backend."""
    monkeypatch.setenv(getattr(constants, "BACKEND_ENV_VAR", "COSINE_PROBE_BACKEND"), getattr(constants, "BACKEND_AUTO", "auto"))


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(4, 9))).capitalize() + "."


def _cannot_like(path, n: int, seed: int = 0):
    rng = random.Random(seed)
    rows = set()
    while len(rows) < n:  # distinct pairs: duplicates would be dropped and the count would not be n
        rows.add((_sentence(rng), _sentence(rng)))
    frame = pd.DataFrame(sorted(rows), columns=["premise", "hypothesis"]).assign(label=[str(i % 2) for i in range(n)])
    frame.to_csv(path, sep="\t", index=False)
    return path


@pytest.fixture(scope="module")
def cannot_run(tmp_path_factory):
    """The three-chunk TSV run once with the L3 ONNX model; (out folder, exit code, stdout, stderr)."""
    folder = tmp_path_factory.mktemp("cannot")
    tsv = _cannot_like(folder / "cannot.tsv", ROWS)
    out = folder / "out"
    chunks = ["--chunk-rows", str(CHUNK_ROWS)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(getattr(constants, "BACKEND_ENV_VAR", "COSINE_PROBE_BACKEND"), "auto")
        proc = subprocess.run(
            [sys.executable, "-m", "core", "run", "--suite", str(tsv), "--out", str(out), "--models", MINILM_L3_ONNX, "--json", *chunks],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=1800,
            env={**os.environ},
        )
    return out, proc.returncode, proc.stdout, proc.stderr


def test_a_tsv_of_three_chunks_writes_every_row(cannot_run):
    out, code, stdout, stderr = cannot_run
    assert code == 0, stderr[-2000:]
    assert len(pd.read_parquet(out / constants.RESULTS_PARQUET)) == ROWS
    assert len(pd.read_csv(out / constants.RESULTS_CSV)) == ROWS
    summary = json.loads(stdout)  # stdout is exactly one JSON document
    assert summary["pairs"] == ROWS and summary["models"] == [MINILM_L3_ONNX]
    assert summary["tables"]["categories"][0]["n"] == ROWS


def test_progress_bars_go_to_stderr_with_a_rate(cannot_run):
    _out, _code, stdout, stderr = cannot_run
    assert "pair/s" in stderr and f"/{ROWS}" in stderr
    assert "pair/s" not in stdout


def test_summary_statistics_match_the_written_rows(cannot_run):
    out, *_ = cannot_run
    rows = pd.read_parquet(out / constants.RESULTS_PARQUET)
    table = json.loads((out / "summary.json").read_text())["tables"]["categories"][0]
    assert table["mean"] == pytest.approx(rows[constants.COL_COSINE].mean(), abs=1e-9)  # to_json keeps 10 digits
    assert table["sd"] == pytest.approx(rows[constants.COL_COSINE].std(ddof=1), abs=1e-9)


def test_parquet_input_chunked_and_quiet(tmp_path, capsys):
    rng = random.Random(1)
    frame = pd.DataFrame(
        {"sentence1": [_sentence(rng) + f" {i}" for i in range(25)], "sentence2": [_sentence(rng) + f" {i}" for i in range(25)]}
    )
    frame.to_parquet(tmp_path / "pairs.parquet")
    code = cli.main(
        [
            "run",
            "--suite",
            str(tmp_path / "pairs.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--models",
            MINILM_L3_ONNX,
            "--chunk-rows",
            "6",
            "--quiet",
            "--no-cache",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "pair/s" not in captured.err
    got = pd.read_csv(tmp_path / "out" / constants.RESULTS_CSV)
    assert list(got[constants.COL_TEXT_A]) == list(frame["sentence1"])


def test_chunk_rows_below_one_is_one_error_line(tmp_path, capsys):
    code = cli.main(["run", "--suite", "baseline", "--out", str(tmp_path), "--chunk-rows", "0"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_USAGE and err.strip().splitlines() == [
        "error: --chunk-rows must be from 1 to 10,000,000 (pairs held in memory at a time), got 0"
    ]


WARM_SCRIPT = """
import json, sys
from core.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "torch": "torch" in sys.modules, "transformers": "transformers" in sys.modules}), file=sys.stderr)
"""


def test_a_warm_run_imports_no_torch(tmp_path):
    rng = random.Random(2)
    pairs = pd.DataFrame(
        {
            constants.COL_TEXT_A: [_sentence(rng) + " one" for _ in range(12)],
            constants.COL_TEXT_B: [_sentence(rng) + " two" for _ in range(12)],
        }
    )
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    # Fill the session's disk cache in this process (MiniLM on torch, MiniLM-L3 on ONNX), then rerun in a new one.
    cold = run_pairs(pairs, [MINILM_L6, MINILM_L3_ONNX], cache=EmbeddingCache())
    assert not cold.errors
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            WARM_SCRIPT,
            "run",
            "--suite",
            str(tmp_path / "pairs.csv"),
            "--out",
            str(tmp_path / "out"),
            "--models",
            MINILM_L6,
            MINILM_L3_ONNX,
            "--json",
            "--quiet",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        # No GPU visible, as on this machine: on a GPU box a warm run asks torch what auto means (core.models.device.choose_device).
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    status = json.loads(proc.stderr.strip().splitlines()[-1])
    assert status == {"code": 0, "torch": False, "transformers": False}, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    for model in (MINILM_L6, MINILM_L3_ONNX):
        assert summary["encoding"][model]["encoded"] == 0
        assert summary["encoding"][model]["weights_loaded"] is False
    warm = pd.read_parquet(tmp_path / "out" / constants.RESULTS_PARQUET)
    cold_rows = cold.results.sort_values([constants.COL_MODEL, constants.COL_PAIR_ID]).reset_index(drop=True)
    warm = warm.sort_values([constants.COL_MODEL, constants.COL_PAIR_ID]).reset_index(drop=True)
    pd.testing.assert_series_equal(warm[constants.COL_COSINE], cold_rows[constants.COL_COSINE], atol=1e-7)
    for col in (constants.COL_TOKENS_A, constants.COL_TOKEN_JACCARD):
        assert list(warm[col]) == list(cold_rows[col])
