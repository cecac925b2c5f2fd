"""``python -m core retrieval`` and ``validate retrieval``: one JSON document, before/after tables, files, one-line errors."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from core import constants, lexicon
from core.cli import main as cli_main
from core.models.registry import MINILM_L6
from core.paths import PROJECT_ROOT
from core.probes.retrieval.suite_files import read_retrieval_file

N_GROUPS = 5


@pytest.fixture(scope="module")
def small_suite(tmp_path_factory):
    """The shipped suite's first groups, as a file in its own (wide) format."""
    path = tmp_path_factory.mktemp("retrieval") / "small.csv"
    read_retrieval_file().head(N_GROUPS).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "corpus.txt").write_text(
        "The patient is allergic to penicillin and must not receive it.\nTenants must give 30 days notice before they move out.\n",
        encoding="utf-8",
    )
    (folder / "queries.csv").write_text("query\nWhich antibiotic is the patient allergic to?\n", encoding="utf-8")
    return folder / "corpus.txt", folder / "queries.csv"


@pytest.fixture(scope="module")
def json_doc(small_suite, minilm):
    """One --json run with two mitigations, read back (module-scoped: encoding is the slow part)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main.main(
            ["retrieval", "--suite", str(small_suite), "--models", MINILM_L6, "--mitigate", "bm25,guard", "--json", "--quiet"]
        )
    return code, out.getvalue(), err.getvalue()


def test_json_is_one_document_with_win_rates_and_paired_accuracy(json_doc, small_suite):
    code, out, err = json_doc
    assert code == 0, err
    doc = json.loads(out)  # the whole of stdout is one JSON document
    wide = pd.read_csv(small_suite, dtype=str, keep_default_na=False)
    mine = [r for r in doc["win_rates"] if r[constants.COL_MODEL] == MINILM_L6 and r[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    by_mode = {r[constants.COL_MODE]: r for r in mine}
    assert by_mode[constants.MODE_ALL][constants.COL_N] == int((wide[list(lexicon.FAILURE_MODES)] != "").to_numpy().sum())
    for mode in lexicon.FAILURE_MODES:
        assert by_mode.get(mode, {constants.COL_N: 0})[constants.COL_N] == int((wide[mode] != "").sum())
    for r in mine:
        assert r[constants.COL_CI_LOW] <= r[constants.COL_WIN_RATE] <= r[constants.COL_CI_HIGH]
    paired = [r for r in doc["paired_accuracy"] if r[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    assert {r[constants.COL_RANDOM] for r in paired} == {0.25}
    assert next(r for r in paired if r[constants.COL_MODE] == constants.MODE_ALL)[constants.COL_N] == int(
        (wide[constants.COL_QUERY_MODE] != "").sum()
    )


def test_mitigate_gives_the_before_after_table(json_doc):
    doc = json.loads(json_doc[1])
    names = [constants.MITIGATION_NONE, constants.MITIGATION_BM25_RRF, constants.MITIGATION_GUARD]
    assert doc["mitigations"] == names
    assert [r[constants.COL_MITIGATION] for r in doc["before_after"]] == names
    for row in doc["before_after"]:
        assert {
            constants.COL_WIN_RATE,
            "win_ci_low",
            constants.COL_PAIRED_ACCURACY,
            constants.COL_RECALL_AT[1],
            constants.COL_MS_PER_QUERY,
        } <= set(row)
    win_all = {
        r[constants.COL_MITIGATION]: r[constants.COL_WIN_RATE] for r in doc["win_rates"] if r[constants.COL_MODE] == constants.MODE_ALL
    }
    assert {r[constants.COL_MITIGATION]: r[constants.COL_WIN_RATE] for r in doc["before_after"]} == win_all


def test_before_after_puts_ties_fixed_and_broken_beside_the_net_figures(json_doc):
    """The JSON before_after (and so summary.csv, the same table) shows ties and churn apart from the win rate."""
    doc = json.loads(json_doc[1])
    for row in doc["before_after"]:
        assert {
            constants.COL_TIES,
            constants.COL_FIXED,
            constants.COL_BROKEN,
            "paired_fixed",
            "paired_broken",
            "correct_gained",
            constants.COL_CORRECT_LOST,
        } <= set(row)
    none = doc["before_after"][0]
    assert (none[constants.COL_TIES], none[constants.COL_FIXED], none[constants.COL_BROKEN]) == (0, 0, 0)
    ties = {r[constants.COL_MITIGATION]: r[constants.COL_TIES] for r in doc["win_rates"] if r[constants.COL_MODE] == constants.MODE_ALL}
    assert {r[constants.COL_MITIGATION]: r[constants.COL_TIES] for r in doc["before_after"]} == ties


def test_pairs_file_with_mitigate_prints_no_column_it_cannot_fill(cli, tmp_path, minilm):
    """A pairs file has no query pairs, so paired accuracy and recall are left out, said in one line, never printed as NaN."""
    path = tmp_path / "pairs.csv"
    path.write_text(
        "text_a,text_b,category\n"
        "The patient is allergic to penicillin.,Penicillin causes an allergic reaction in this patient.,paraphrase\n"
        "The patient is allergic to penicillin.,The patient is not allergic to penicillin.,negation\n",
        encoding="utf-8",
    )
    code, out, err = cli("retrieval", "--suite", str(path), "--models", MINILM_L6, "--mitigate", "bm25", "--quiet")
    assert code == 0, err
    table = out[out.index("before / after each mitigation") :]
    assert "NaN" not in table and "not measured on these inputs, so left out: paired_accuracy" in table
    assert " ties " in table and " fixed " in table and " broken " in table


def test_out_writes_every_table_and_the_same_summary(cli, small_suite, tmp_path, minilm):
    code, out, err = cli(
        "retrieval", "--suite", str(small_suite), "--models", MINILM_L6, "--json", "--quiet", "--out", str(tmp_path / "out")
    )
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == json.loads(out)
    for name in ("scores", "win_rates", "paired_accuracy", "ranking", "costs", "summary"):
        assert not pd.read_csv(tmp_path / "out" / f"{name}.csv").empty
    assert "wrote" in err  # with --json the note goes to stderr, keeping stdout one document


def test_plain_output_names_the_random_line(cli, small_suite, minilm):
    code, out, err = cli("retrieval", "--suite", str(small_suite), "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert "adversarial win rate" in out and "random = 0.25" in out and "in-corpus ranking" in out
    assert "MiniLM" in out


def test_pairs_file_has_win_rates_and_no_queries(cli, tmp_path, minilm):
    path = tmp_path / "pairs.csv"
    path.write_text(
        "text_a,text_b,category\n"
        "The patient is allergic to penicillin.,Penicillin causes an allergic reaction in this patient.,paraphrase\n"
        "The patient is allergic to penicillin.,The patient is not allergic to penicillin.,negation\n",
        encoding="utf-8",
    )
    code, out, err = cli("retrieval", "--suite", str(path), "--models", MINILM_L6, "--json", "--quiet")
    assert code == 0, err
    doc = json.loads(out)
    assert [r[constants.COL_MODE] for r in doc["win_rates"]] == [constants.CAT_NEGATION, constants.MODE_ALL]
    assert doc["paired_accuracy"] == [] and doc["ranking"] == []


def test_corpus_mode_alone(cli, corpus_files, minilm):
    corpus, queries = corpus_files
    code, out, err = cli("retrieval", "--corpus", str(corpus), "--queries", str(queries), "--models", MINILM_L6, "--json", "--quiet")
    assert code == 0, err
    doc = json.loads(out)
    assert "win_rates" not in doc
    assert doc["corpus"]["n_passages"] == 2 and doc["corpus"]["n_queries"] == 1
    pairs = doc["corpus"]["pairs"]
    assert pairs and {p["original"] for p in pairs} == {"The patient is allergic to penicillin and must not receive it."}
    overall = next(r for r in doc["corpus"]["rates"] if r[constants.COL_MODE] == constants.MODE_ALL)
    assert overall["outranked"] == sum(p[constants.COL_OUTRANKS] for p in pairs)


USER_ERRORS = {
    "unknown mitigation": (["--mitigate", "bm26"], "unknown mitigation 'bm26'"),
    "empty mitigation": (["--mitigate", " , "], "--mitigate is empty"),
    "corpus without queries": (["--corpus", "{corpus}"], "needs both --corpus FILE and --queries FILE"),
    "missing suite file": (["--suite", "{tmp}/absent.csv"], "no such file"),
    "missing corpus file": (["--corpus", "{tmp}/absent.txt", "--queries", "{queries}"], "cannot read"),
    "empty corpus": (["--corpus", "{tmp}/empty.txt", "--queries", "{queries}"], "the file is empty"),
    "blank queries": (["--corpus", "{corpus}", "--queries", "{tmp}/blank.csv"], "holds no text"),
    "negative seed": (["--seed", "-1"], "--seed must be 0 or more"),
    "nothing to rank": (["--suite", str(PROJECT_ROOT / "data" / "suites" / "baseline.csv")], "nothing to rank"),
}


@pytest.mark.parametrize("case", list(USER_ERRORS))
def test_user_error_is_one_line(cli, tmp_path, corpus_files, case):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.csv").write_text("query\n\n \n")
    args, message = USER_ERRORS[case]
    filled = [a.format(tmp=tmp_path, corpus=corpus_files[0], queries=corpus_files[1]) for a in args]
    code, out, err = cli("retrieval", *filled, "--models", MINILM_L6, "--json", "--quiet")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == cli_main.EXIT_USAGE, err
    assert out == ""
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], err


def test_mitigate_without_the_module_is_a_clear_error(cli, monkeypatch, small_suite):
    for module in ("core.probes.retrieval.mitigations", "core.probes.retrieval.specs"):
        monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError
    code, out, err = cli("retrieval", "--suite", str(small_suite), "--models", MINILM_L6, "--mitigate", "guard", "--quiet")
    assert code == cli_main.EXIT_USAGE
    assert err.startswith("error: --mitigate is not available") and out == ""


def test_no_model_exits_3(cli, small_suite, tmp_path):
    code, out, err = cli("retrieval", "--suite", str(small_suite), "--models", str(tmp_path / "no-such-model"), "--json", "--quiet")
    assert code == cli_main.EXIT_NO_MODEL
    assert "no-such-model" in err and "no model produced results" in err and out == ""


def test_validate_retrieval(capsys, tmp_path):
    assert cli_main.main(["validate", "retrieval"]) == 0
    assert capsys.readouterr().out.strip().endswith("0 problem(s)")
    bad = read_retrieval_file().head(2)
    bad.loc[0, constants.COL_DOMAIN] = "space"
    path = tmp_path / "bad.csv"
    bad.to_csv(path, index=False)
    assert cli_main.main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "[domain] unknown domain 'space'" in out and out.strip().endswith("1 problem(s)")


def test_subprocess_stdout_is_only_json(small_suite):
    """Through ``python -m core``, with the progress line on: stdout parses as one document, no traceback anywhere."""
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"}
    proc = subprocess.run(
        [sys.executable, "-m", "core", "retrieval", "--suite", str(small_suite), "--models", MINILM_L6, "--json"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["models"] == [MINILM_L6]
    assert "Traceback" not in proc.stderr and "%]" in proc.stderr  # the progress went to stderr


def test_corpus_mode_with_no_variant_says_so_and_warns_of_nothing(cli, tmp_path, monkeypatch, minilm):
    """A corpus no rule can vary is a finding, not a failure: the history says it stored nothing, in one note."""
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.sqlite"))
    (tmp_path / "c.csv").write_text("text\nbanana bread\napple pie\n")
    (tmp_path / "q.csv").write_text("text\nbanana\n")
    corpus, queries = str(tmp_path / "c.csv"), str(tmp_path / "q.csv")
    code, out, err = cli("retrieval", "--corpus", corpus, "--queries", queries, "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert "warning" not in err and "lack columns" not in err
    assert "not stored in the history: no variant was made" in err
    assert "1 query's top passage gave no rule a handle" in out
