"""`cosine-probe tune` on the command line: one error line for bad input, JSON alone on stdout, a model folder `--models PATH` loads."""

from __future__ import annotations

import json

import pytest
from hub_cache_support import StandIn, build_standin

from core import constants as C
from core.cli import main as cli


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_standin(StandIn("tiny/tune-cli", "mean"), tmp_path_factory.mktemp("tiny") / "model")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--average", "0"], "average"),
        (["--batch-size", "1"], "batch_size"),
        (["--labels", "no-such-file.csv"], "--labels"),
    ],
)
def test_bad_input_is_one_error_line(tmp_path, capsys, extra, message):
    code = cli.main(["tune", "--models", "MiniLM-L6", "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error:") and message in err[0]
    assert not (tmp_path / "out").exists()


def test_json_alone_on_stdout_and_the_model_loads_by_path(tiny, tmp_path, capsys):
    suite = tmp_path / "suite.csv"
    import pandas as pd

    from core.probes.retrieval.suite_files import RETRIEVAL_FILE

    pd.read_csv(RETRIEVAL_FILE).head(8).to_csv(suite, index=False)
    out = tmp_path / "out"
    code = cli.main(
        [
            "tune",
            "--models",
            str(tiny),
            "--out",
            str(out),
            "--suite",
            str(suite),
            "--batch-size",
            "4",
            "--max-steps",
            "1",
            "--no-control",
            "--json",
            "--quiet",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)  # the trainer's log lines must not reach stdout
    assert doc["groups"] == {C.SPLIT_HELD_OUT: 4, C.SPLIT_TRAIN: 4}
    assert {r["setting"] for r in doc["win_rates"]} == {C.TUNE_SETTING_UNTOUCHED, C.TUNE_SETTING_TUNED, C.TUNE_SETTING_NOT_AVERAGED}
    assert (out / "report.md").is_file() and (out / "triples.parquet").is_file()
    from core.models.loading import load_model

    loaded = load_model(str(out / "model"), backend="torch")
    assert loaded.fingerprint and loaded.backend.embed(["a sentence"]).shape == (1, 32)


def test_a_triples_file_trains_and_is_judged_by_anchor_group(tiny, tmp_path, capsys):
    from core.paths import PROJECT_ROOT

    out = tmp_path / "out"
    code = cli.main(
        [
            "tune",
            "--models",
            str(tiny),
            "--out",
            str(out),
            "--triples",
            str(PROJECT_ROOT / "data" / "samples" / "nli-triples.csv"),
            "--batch-size",
            "4",
            "--max-steps",
            "1",
            "--no-control",
            "--average",
            "1",
            "--json",
            "--quiet",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    assert {r["mode"] for r in doc["win_rates"]} == {"all", C.CAT_CONTRADICTION}
    import pandas as pd

    split = pd.read_parquet(out / "split.parquet")
    triples = pd.read_parquet(out / "triples.parquet")
    # No anchor of the training triples is judged in the held-out half.
    held_out = set(split[split[C.COL_SPLIT] == C.SPLIT_HELD_OUT][C.COL_GROUP_ID])
    assert not set(triples[C.COL_GROUP_ID]) & held_out
    assert sum(doc["groups"].values()) == len(split) >= 2


def test_suite_and_triples_together_are_refused(tmp_path, capsys):
    code = cli.main(["tune", "--models", "MiniLM-L6", "--out", str(tmp_path / "o"), "--suite", "x.csv", "--triples", "y.csv"])
    assert code == 2 and "not both" in capsys.readouterr().err


def test_retrieval_mitigations_on_a_users_triples_lead_with_hand_written(tmp_path, capsys, minilm):
    """`retrieval --triples FILE --mitigate guard` reports every mitigation on the user's data, by variant source."""
    from core.paths import PROJECT_ROOT

    sample = PROJECT_ROOT / "data" / "samples" / "nli-triples.csv"
    code = cli.main(
        ["retrieval", "--triples", str(sample), "--mitigate", "guard", "--models", minilm.meta.name, "--json", "--quiet", "--no-cache"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    doc = json.loads(captured.out)
    rows = doc["win_rates_by_source"]
    assert [r["mitigation"] for r in rows][0] == C.MITIGATION_NONE and {r["mitigation"] for r in rows} == {
        C.MITIGATION_NONE,
        C.MITIGATION_GUARD,
    }
    n_negatives = sum(r["n"] for r in rows if r["mitigation"] == C.MITIGATION_NONE)
    # Every negative of the file is in one source (a triples run's win rates have no mode: one row per model and mitigation).
    assert n_negatives == sum(r["n"] for r in doc["win_rates"] if r["mitigation"] == C.MITIGATION_NONE) == doc["n_triples"]
    assert all(r["variant_source"] in C.VARIANT_SOURCES for r in rows)


def _no_work(*args, **kwargs):
    raise AssertionError("no model may load or train when the output cannot be written")


@pytest.mark.parametrize("case", ["name too long", "a file", "model is a file"])
def test_an_unwritable_out_is_refused_before_any_model_loads(tmp_path, capsys, monkeypatch, case):
    from core.cli import tune

    monkeypatch.setattr(tune, "_model", _no_work)
    monkeypatch.setattr("core.probes.tune.run.run_tune", _no_work)
    out = {"name too long": tmp_path / ("x" * 300), "a file": tmp_path / "out", "model is a file": tmp_path / "out"}[case]
    if case == "a file":
        out.write_text("keep", encoding="utf-8")
    if case == "model is a file":
        out.mkdir()
        (out / "model").write_text("keep", encoding="utf-8")
    code = cli.main(["tune", "--models", "MiniLM-L6", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: --out"), err
    said = {"name too long": "name too long", "a file": "is a file, not a folder", "model is a file": "model is a file"}[case]
    assert said in err[0]


@pytest.mark.parametrize("model", ["paraphrase-MiniLM-L3-v2", "all-MiniLM-L6-v2-int8", "multilingual-e5-small-q4"])
def test_a_model_without_torch_weights_is_refused_saying_tune_needs_them(tmp_path, capsys, model):
    """No backend flag can make an ONNX-only or 4-bit model trainable: the message names what tune needs, never '--backend'."""
    assert cli.main(["tune", "--models", model, "--out", str(tmp_path / "t")]) == cli.EXIT_NO_MODEL
    err = capsys.readouterr().err
    assert "tune trains torch weights" in err and "--backend" not in err and "MiniLM-L6" in err


def test_the_expected_time_is_one_line_before_the_run(tmp_path, capsys, monkeypatch):
    """Training takes minutes: one note says how long before the model loads (--quiet keeps stderr for errors alone)."""
    from core.cli import tune

    def stop(*args, **kwargs):
        raise tune._NoModel("stopped here: the note comes before any model loads")

    monkeypatch.setattr(tune, "_model", stop)
    assert cli.main(["tune", "--models", "MiniLM-L6", "--out", str(tmp_path / "out")]) == cli.EXIT_NO_MODEL
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[1].startswith("error: stopped here"), err
    # The default run on the shipped suite trains on 536 triples (34 batches × 3 epochs) and 230 control pairs (15 × 3), as the
    # measured run did (bench/results.json, tune_rates)
    assert err[0].startswith("note: expected time about ") and "(102 training steps and 45 for the control; " in err[0], err
    assert cli.main(["tune", "--models", "MiniLM-L6", "--out", str(tmp_path / "out"), "--quiet", "--no-control"]) == cli.EXIT_NO_MODEL
    assert capsys.readouterr().err.strip().splitlines() == ["error: stopped here: the note comes before any model loads"]
