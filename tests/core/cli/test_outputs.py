"""One rule for every file an output would replace: only a file cosine-probe wrote itself and nobody changed since."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.cli import main as cli
from core.cli.outputs import remember_written, wrote_it
from core.history import store


def test_the_ledger_knows_what_it_wrote_and_forgets_a_changed_file(tmp_path):
    mine, theirs = tmp_path / "mine.csv", tmp_path / "theirs.csv"
    mine.write_text("a,b\n1,2\n")
    theirs.write_text("a,b\n1,2\n")  # the same bytes elsewhere: not written by the tool
    remember_written("audit", mine)
    assert wrote_it("audit", mine) and not wrote_it("audit", theirs) and not wrote_it("audit", tmp_path / "absent.csv")
    assert not wrote_it("report", mine)  # another command's output is not this one's to replace
    mine.write_text("a,b\n1,3\n")  # edited by the user since
    assert not wrote_it("audit", mine)


@pytest.fixture
def one_run(tmp_path, monkeypatch) -> int:
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    frame = pd.DataFrame(
        {"model": "m", "suite": "s", "category": "negation", "pair_id": ["a", "b"], "text_a": ["A", "B"], "text_b": ["C", "D"]}
    ).assign(cosine=np.array([0.9, 0.8]))
    return store.record_run(frame, command="run", origin="cli")


def test_history_export_replaces_its_own_file_and_refuses_the_users(one_run, tmp_path, capsys):
    out = tmp_path / "run.parquet"
    assert cli.main(["history", "export", str(one_run), "--out", str(out)]) == 0
    assert cli.main(["history", "export", str(one_run), "--out", str(out)]) == 0  # its own, unchanged: replaced
    out.write_bytes(out.read_bytes() + b"\0")  # the user changed it
    capsys.readouterr()
    assert cli.main(["history", "export", str(one_run), "--out", str(out)]) == cli.EXIT_USAGE
    assert "is not a file `cosine-probe history export` wrote (or it was changed since)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "existing"),
    [
        (["audit", "--corpus", "data/corpora/wordnet-adjectives.csv"], "close-pairs.csv"),
        (["retrieval"], "win_rates.csv"),
        (["oov-words", "--run"], "summary.json"),
        (["run", "--suite", "baseline"], constants.RESULTS_CSV),
    ],
)
def test_a_users_file_in_an_output_folder_is_refused_before_any_model_runs(tmp_path, capsys, command, existing):
    """The same rule as report's: a folder's outputs are replaced only where the tool wrote them."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / existing).write_text("the user's own notes\n")
    assert cli.main([*command, "--out", str(folder), "--models", "no-such-model-is-loaded"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{folder / existing} exists and is not a file `cosine-probe {command[0]}` wrote" in err
    assert (folder / existing).read_text() == "the user's own notes\n"
