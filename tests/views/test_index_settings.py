"""The Index settings page through the real app with MiniLM: the finding first, binary's scale said, what moved, the chart and
table equal to core's, the CSV, the figure picker, a pairs file of the user's."""

from __future__ import annotations

import json

import numpy as np
from apptest_support import MINILM, open_page
from store_support import build_lance, stored  # noqa: F401 - stored is a fixture

from core import constants
from core.models.cache import EmbeddingCache
from core.papers.suites import load_suite
from core.probes.index_settings import findings, parse_settings, run_index_settings, wide_table
from ui import state, widgets

PAGE = "views/index_settings.py"
SETTINGS = ["float32", "binary", "dims:64"]


def test_page_scores_the_failure_mode_suite_under_each_setting():
    app = open_page(PAGE)
    app.multiselect(key="is_settings").set_value(SETTINGS).run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception
    shown = next(d.value for d in app.dataframe if "binary" in d.value.columns)
    assert list(shown.columns) == ["model", "probe", "metric", "mode", *SETTINGS]
    expected = run_index_settings(
        [MINILM],
        settings=parse_settings(SETTINGS),
        pairs={constants.SUITE_FAILURE_MODES: load_suite(constants.SUITE_FAILURE_MODES)},
        cache=EmbeddingCache(),
    )
    assert shown.reset_index(drop=True).equals(wide_table(expected.table, state.short))
    # The finding leads, in bold, as core words it; then why binary has no rate at the cosine threshold.
    said = [m.value for m in app.markdown]
    assert f"**{widgets.md_escape(findings(expected.table, state.short)[0])}**" == said[0]
    assert any("binary \\(Hamming scale\\)" in i.value and "never at the cosine threshold" in i.value for i in app.info)
    assert (shown.loc[shown["metric"] == "failure_rate", "binary"] == "—").all()
    assert (shown.loc[shown["metric"] == "failure_rate_own_threshold", "binary"] != "—").all()
    assert len(app.get("plotly_chart")) == 1
    first = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert first["layout"]["title"]["text"].endswith("failure rate")  # the failure rate is drawn first
    # One cell per setting and mode, float32 the baseline (not a column); binary's cells are its rates at its own threshold (†),
    # never "—" where a reader looks for them, never at the cosine threshold.
    heat = first["data"][0]
    assert heat["type"] == "heatmap" and heat["x"] == ["binary", "dims:64"]
    own = expected.table[(expected.table["setting"] == "binary") & (expected.table["metric"] == "failure_rate_own_threshold")]
    assert [row[0].rstrip("*†") for row in heat["text"]] == [f"{v:.2f}" for v in own["value"]]
    assert all(row[0].endswith("†") for row in heat["text"]) and not any(row[1].endswith("†") for row in heat["text"])
    assert any(c.value.startswith("† binary") and "own calibrated threshold" in c.value for c in app.caption)
    # The long table in one CSV, and each table and chart its own downloads, each saying what it holds.
    labels = [b.label for b in app.get("download_button")]
    assert {"Table (CSV)", "⬇ CSV · index settings MiniLM L6 failure rate", "⬇ JSON · index settings every figure"} <= set(labels)
    assert len(labels) == len(set(labels)), labels
    # Another metric redraws from the stored result, without a new run.
    app.selectbox(key=f"is_metric::{MINILM}").set_value("mean_score").run()
    assert not app.exception
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert "mean score" in spec["layout"]["title"]["text"]
    assert spec["data"][0]["x"] == SETTINGS[1:]


def test_the_run_says_its_expected_time_before_the_click():
    app = open_page(PAGE)
    for probe in ("failure-modes", "retrieval"):
        app.radio(key="is_probe").set_value(probe).run()
        said = [c.value for c in app.caption if c.value.startswith("⏱️ Expected time:")]
        assert len(said) == 1, (probe, [c.value for c in app.caption])


def test_no_setting_disables_the_run():
    app = open_page(PAGE)
    app.multiselect(key="is_settings").set_value([]).run()
    assert next(b for b in app.button if b.label == "Score index settings").disabled
    assert not app.exception


def test_the_pairs_scored_on_your_data_are_a_probe_too_and_the_run_goes_into_the_history(tmp_path, monkeypatch):
    import pandas as pd

    from core.history import store

    history_file = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history_file))

    from core.scoring.runner import run_pairs

    pairs = pd.DataFrame(
        {
            "text_a": ["The patient has diabetes", "Revenue rose 5%", "The drug reduced pain"],
            "text_b": ["The patient does not have diabetes", "Revenue rose 50%", "The medicine lowered pain"],
            "category": ["negation", "numerical", "positive"],
        }
    )
    app = open_page(PAGE)
    # the two suites, a pairs file, a corpus and a vectors file; Your data's pairs once it has scored some
    assert len(app.radio(key="is_probe").options) == 5
    app.session_state[state.KEY_RESULTS] = {"your_data": run_pairs(pairs, [MINILM], cache=EmbeddingCache())}
    app.run()
    assert len(app.radio(key="is_probe").options) == 6
    app.radio(key="is_probe").set_value("your data").run()
    app.multiselect(key="is_settings").set_value(["float32", "int8"]).run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception
    shown = next(d.value for d in app.dataframe if "int8" in d.value.columns)
    assert set(shown["probe"]) == {"your data"}
    rates = shown[shown["metric"] == "failure_rate"]
    assert list(rates["mode"]) == ["negation", "numerical"]
    runs = store.list_runs(history_file)
    assert list(runs["command"]) == ["index-settings"] and list(runs["origin"]) == [constants.ORIGIN_APP]
    run = store.load_run(int(runs["run_id"].iloc[0]), history_file)
    assert run.settings["index_settings"] == ["float32", "int8"]
    assert len(run.results) == 3 and "score_int8" in run.results


def test_the_retrieval_suite_probe_shows_win_rates_and_recall(monkeypatch):
    """The retrieval probe through the page, on the suite's first 4 groups (the whole suite takes minutes on a CPU)."""
    from core.probes.retrieval import suite_files
    from ui import resources

    small = suite_files.load_retrieval_suite().head(4)
    monkeypatch.setattr(suite_files, "load_retrieval_suite", lambda *a, **k: small)
    resources.retrieval_suite.clear()
    try:
        app = open_page(PAGE)
        app.radio(key="is_probe").set_value(constants.SUITE_RETRIEVAL).run()
        app.multiselect(key="is_settings").set_value(["float32", "binary-rescore"]).run()
        next(b for b in app.button if b.label == "Score index settings").click().run()
        assert not app.exception
        shown = next(d.value for d in app.dataframe if "binary-rescore" in d.value.columns)
        assert {"win_rate", "paired_accuracy", "recall_at_1", "recall_at_5"} <= set(shown["metric"])
        spec = json.loads(app.get("plotly_chart")[0].proto.spec)
        assert spec["layout"]["title"]["text"].endswith("win rate")
    finally:  # neither the small suite nor its run may be served to a later test
        resources.retrieval_suite.clear()
        resources.index_settings_run.clear()


def test_a_pairs_file_of_the_users_is_a_probe_and_a_bad_one_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    app = open_page(PAGE)
    app.radio(key="is_probe").set_value("your file").run()
    assert next(b for b in app.button if b.label == "Score index settings").disabled  # no file yet
    # The bytes where the uploader keeps them (ui/uploads.py): a file Streamlit's uploader would have handed over.
    app.session_state["is_upload_bytes"] = b"only one column\nno tab or comma here\n"
    app.session_state["is_upload_name"] = "bad.csv"
    app.run()
    assert not app.exception
    assert len(app.error) == 1 and app.error[0].value.startswith("bad\\.csv\\: found only one column")
    assert next(b for b in app.button if b.label == "Score index settings").disabled
    app.session_state["is_upload_bytes"] = (
        b"text_a,text_b,category\nThe patient has diabetes,The patient does not have diabetes,negation\n"
        b"The drug reduced pain,The medicine lowered pain,positive\nThe cat sat,Stock prices fell,negative\n"
    )
    app.session_state["is_upload_name"] = "mine.csv"
    app.multiselect(key="is_settings").set_value(["float32", "binary"]).run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception and not app.error
    shown = next(d.value for d in app.dataframe if "binary" in d.value.columns)
    assert set(shown["probe"]) == {"mine.csv"}
    negation = shown[(shown["mode"] == "negation")].set_index("metric")
    assert negation.loc["failure_rate", "binary"] == "—" and negation.loc["failure_rate_own_threshold", "binary"] != "—"


def test_a_connected_store_is_probed_through_the_store_block(tmp_path, stored, monkeypatch):  # noqa: F811 - the fixture
    """A LanceDB folder of MiniLM vectors: queries ranked over them under every setting, as index-settings --store does."""
    from core.stores.access import STORES_ENV

    monkeypatch.setenv(STORES_ENV, str(tmp_path))  # the operator allows this folder; a shared app opens no store otherwise
    texts, vectors = stored
    build_lance(tmp_path / "kb.lance", texts[:40], vectors[:40])
    app = open_page(PAGE)
    app.text_input(key="is_store_folder").input(str(tmp_path / "kb.lance"))
    app.text_input(key="is_store_name").input("passages")
    run = "Score the store's vectors under each index setting"
    next(b for b in app.button if b.label == run).click().run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        widgets.md_escape("give at least one query, one per line: each is ranked over the stored passages under each setting")
    ]
    app.text_area(key="is_store_queries").input("\n".join(t.split()[0] for t in texts[:12]))
    next(b for b in app.button if b.label == run).click().run()
    assert not app.exception and not app.error
    shown = " ".join(m.value for m in app.markdown)
    assert widgets.md_escape("Model check: MiniLM-L6 re-encoded 20 of 40 stored passages") in shown
    assert widgets.md_escape("MiniLM-L6: ") in shown
    table = next(d.value for d in app.dataframe if "binary-rescore" in d.value.columns)
    assert list(table["metric"]) == ["top10_changed", "recall_at_1", "recall_at_5", "recall_at_10"]
    assert (table["float32"] == ["0.000", "1.000", "1.000", "1.000"]).all()


def _parquet(texts, vectors) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table({"text": texts, "vector": [list(map(float, v)) for v in vectors]}), sink)
    return sink.getvalue()


def test_a_vectors_file_is_probed_as_the_cli_probes_it_and_a_bad_one_is_one_line(stored, tmp_path, monkeypatch):  # noqa: F811
    """The file ``index-settings --vectors`` reads, uploaded: the page's table is the CLI's function's on the same bytes."""
    from core.files.vectors import read_vectors_bytes
    from core.probes.vector_settings import vectors_file_index_settings

    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    texts, vectors = stored
    data = _parquet(texts[:40], vectors[:40])
    queries = [t.split()[0] for t in texts[:12]]
    app = open_page(PAGE)
    app.radio(key="is_probe").set_value("your vectors").run()
    run = next(b for b in app.button if b.label == "Score index settings")
    assert run.disabled  # no file yet
    app.session_state["is_vectors_bytes"], app.session_state["is_vectors_name"] = data, "chunks.parquet"
    app.multiselect(key="is_settings").set_value(["float32", "int8", "binary-rescore", "dims:128"]).run()
    assert any(c.value.startswith("chunks\\.parquet: 40 passages, 384 dimensions") for c in app.caption)
    assert next(b for b in app.button if b.label == "Score index settings").disabled  # no query yet
    app.text_area(key="is_queries").input("\n".join(queries)).run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception and not app.error
    settings = parse_settings(["float32", "int8", "binary-rescore", "dims:128"])
    expected, check = vectors_file_index_settings(read_vectors_bytes(data, "chunks.parquet"), MINILM, settings, queries=queries)
    shown = next(d.value for d in app.dataframe if "binary-rescore" in d.value.columns)
    assert shown.reset_index(drop=True).equals(wide_table(expected.table, state.short))
    assert list(shown["metric"]) == ["top10_changed", "recall_at_1", "recall_at_5", "recall_at_10"]
    said = widgets.md_escape("Model check: MiniLM-L6 re-encoded 20 of the 40 passages of chunks.parquet: cosine with their given vectors ")
    assert any(c.value.startswith(said) for c in app.caption) and check.rows == 40
    # Ranks only: binary's scale sentence is not said (it compares as any setting), as the CLI leaves it out.
    assert not any("Hamming scale" in i.value for i in app.info)
    # A file that is no vectors file: one line; the last good file and the result stay.
    app.session_state["is_vectors_bytes"], app.session_state["is_vectors_name"] = b"not parquet at all", "bad.parquet"
    app.run()
    assert not app.exception
    assert len(app.error) == 1 and app.error[0].value.startswith(widgets.md_escape("bad.parquet is not a readable parquet file: "))
    assert any(c.value.startswith("chunks\\.parquet: 40 passages") for c in app.caption)
    assert next(d.value for d in app.dataframe if "binary-rescore" in d.value.columns).equals(shown)
    # Vectors the model did not make: the model check refuses them in one line, and the last result stays.
    noise = np.random.default_rng(0).standard_normal(vectors[:40].shape)
    app.session_state["is_vectors_bytes"], app.session_state["is_vectors_name"] = _parquet(texts[:40], noise), "other.parquet"
    app.run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception and len(app.error) == 1 and app.error[0].value.startswith("other\\.parquet\\: ")
    assert next(d.value for d in app.dataframe if "binary-rescore" in d.value.columns).equals(shown)


def test_the_users_corpus_is_ranked_over_itself_under_each_setting(stored, tmp_path, monkeypatch):  # noqa: F811
    """The Your corpus page's passages, no queries: each passage ranked over the others, the table core's for the same corpus."""
    from core.probes.vector_settings import corpus_index_settings

    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    texts, _vectors = stored
    app = open_page(PAGE)
    app.radio(key="is_probe").set_value("your corpus").run()
    assert next(b for b in app.button if b.label == "Score index settings").disabled  # no corpus yet
    app.session_state["yc_corpus_texts"] = ("kb.txt", texts[:30], [])  # where the Your corpus page keeps its parsed corpus
    app.multiselect(key="is_settings").set_value(["float32", "binary", "dims:64"]).run()
    assert any("kb\\.txt · 30 passages" in c.value for c in app.caption)
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception and not app.error
    settings = parse_settings(["float32", "binary", "dims:64"])
    expected = corpus_index_settings([MINILM], texts[:30], name="kb.txt", settings=settings, cache=EmbeddingCache())
    shown = next(d.value for d in app.dataframe if "dims:64" in d.value.columns)
    assert shown.reset_index(drop=True).equals(wide_table(expected.table, state.short))
    assert list(shown["metric"]) == ["top10_changed", "recall_at_1", "recall_at_5", "recall_at_10"]
    assert (shown["float32"] == ["0.000", "1.000", "1.000", "1.000"]).all()
    # A corpus given here wins over the Your corpus page's; one too small to rank a top 10 is one line, the result stays.
    app.session_state["is_corpus_bytes"], app.session_state["is_corpus_name"] = "\n".join(texts[:5]).encode(), "tiny.txt"
    app.run()
    next(b for b in app.button if b.label == "Score index settings").click().run()
    assert not app.exception
    assert [e.value for e in app.error] == [widgets.md_escape("tiny.txt holds 5 passages; ranking a top 10 needs at least 11")]
    assert next(d.value for d in app.dataframe if "dims:64" in d.value.columns).equals(shown)
    # A file that is no corpus: one line (the run's refusal was about the file before); the last good corpus stays.
    app.session_state["is_corpus_bytes"], app.session_state["is_corpus_name"] = b"\xff\xfe\x00bad", "bad.txt"
    app.run()
    assert not app.exception and len(app.error) == 1 and app.error[0].value.startswith("bad\\.txt")
    assert any(c.value == "Corpus: tiny\\.txt · 5 passages." for c in app.caption)
    # The Your corpus page's queries, when it has some, are ranked instead of the passages themselves.
    app.session_state["yc_queries_texts"] = ("q.txt", ["very old", "easy to see"], [])
    app.run()
    assert any(c.value == "2 queries ranked over the passages" for c in app.caption)
