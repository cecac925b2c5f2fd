"""The Your corpus page through the real app with MiniLM.

Upload, audit, the threshold moving the numbers without encoding again, bad files.
"""

from __future__ import annotations

import pytest
from apptest_support import open_page
from markup_guard import assert_never_rendered

from core.words import word_changes
from ui.widgets import marked_text

PAGE = "views/your_corpus.py"
CORPUS = (
    b"Take 5 mg of the drug twice a day.\n"
    b"Take 500 mg of the drug twice a day.\n"
    b"The patient has diabetes.\n"
    b"The patient does not have diabetes.\n"
    b"Paris is the capital of France.\n"
    b"Bananas are rich in potassium.\n"
)
RUN = "Audit corpus"


def _labels(node, kind: str) -> list[str]:
    """Labels of every element of ``kind`` under ``node`` (a status box is a block, not an element AppTest lists)."""
    found = []
    for child in getattr(node, "children", {}).values():
        if getattr(child, "type", "") == kind:
            found.append(str(child.label))
        found += _labels(child, kind)
    return found


def _give(app, kind: str, name: str, data: bytes) -> None:
    """A file as the page's uploader keeps it (ui/uploads.py: its name and bytes under ``yc_<kind>``)."""
    app.session_state[f"yc_{kind}_name"] = name
    app.session_state[f"yc_{kind}_bytes"] = data


def _risk(app):
    frames = [d.value for d in app.dataframe if "failure mode" in d.value.columns]
    assert frames, "no risk table"
    table = frames[0]
    return table[table["failure mode"] == "all modes"].iloc[0]


def _audited(corpus: bytes = CORPUS):
    app = open_page(PAGE)
    _give(app, "corpus", "kb.txt", corpus)
    app.run()
    # The audit's expected time is on screen before the click (a 90 s audit started with no word of how long).
    assert any(c.value.startswith("⏱️ Expected time:") for c in app.caption), [c.value for c in app.caption]
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception
    return app


def test_audit_threshold_moves_numbers_without_encoding(monkeypatch):
    app = _audited()
    assert [s for s in _labels(app.main, "status") if s.startswith("Audit done with MiniLM\\-L6: 6 passages")], _labels(app.main, "status")
    app.slider(key="yc_threshold").set_value(0.6).run()
    row = _risk(app)
    assert row["twin pairs"] == "2" and row["share of passages with a twin"] == "66.7% (4)"
    findings = " ".join(m.value for m in app.markdown)
    assert "66\\.7% of the 6 passages have a confusable twin above 0\\.60 for MiniLM\\-L6" in findings
    # The findings table: one row per model, in words and percentages.
    table = next(d.value for d in app.dataframe if "share of passages with a twin" in d.value.columns)
    assert table.iloc[0]["model"] == "MiniLM-L6" and table.iloc[0]["share of passages with a twin"] == "66.7% (4)"
    assert any("2-D map" in str(c.proto.spec) for c in app.get("plotly_chart")), "the map is drawn"
    # The differing words are marked in the twin boxes.
    assert any(":orange-background[**500**]" in m.value for m in app.markdown)

    # Moving the threshold filters the kept audit: no model encodes anything.
    from core.audit import run as audit_run

    def refuse(*args, **kwargs):
        raise AssertionError("the slider must not run the audit again")

    monkeypatch.setattr(audit_run, "audit_corpus", refuse)
    app.slider(key="yc_threshold").set_value(0.95).run()
    assert not app.exception
    assert _risk(app)["twin pairs"] == "0"
    app.slider(key="yc_threshold").set_value(0.6).run()
    assert _risk(app)["twin pairs"] == "2"


def test_the_risk_table_fits_a_screen_and_its_download_keeps_every_column(monkeypatch):
    """The risk table ran past a 1280 px screen (fifteen columns, "95% CI from" cut): the screen shows the finding's five
    columns in words and percentages, the download every column of the summary, typed."""
    from ui import widgets

    held = {}
    monkeypatch.setattr(widgets, "downloads", lambda frame, name: held.setdefault(name, frame))
    app = _audited()
    risk = next(d.value for d in app.dataframe if "failure mode" in d.value.columns)
    assert risk.columns.tolist() == ["model", "failure mode", "twin pairs", "share of passages with a twin", "95% CI"]
    assert risk["share of passages with a twin"].str.contains("%").all() and not [c for c in risk.columns if "_" in c]
    download = held["your-corpus-risk"]
    assert {"twin_share", "twin_share_ci_low", "twin_share_ci_high", "threshold", "near_duplicate_pairs", "query_twin_top5"} <= set(
        download.columns
    )
    assert download["twin_share"].dtype == float


def test_bad_file_keeps_the_corpus_and_audit():
    app = _audited()
    for name, data, message in (
        ("one.txt", b"only one passage\n", "one distinct passage"),
        ("empty.txt", b"", "the file is empty"),
        ("same.txt", b"Same.\nSame.\n", "one distinct passage"),
        ("blob.txt", b"\x00\xff\x01" * 200, "binary"),
    ):
        _give(app, "corpus", name, data)
        app.run()
        errors = [e.value.replace("\\", "") for e in app.error]
        assert len(errors) == 1, errors
        assert errors[0].startswith(f"Could not read {name}") and message in errors[0] and "The corpus from kb.txt is kept." in errors[0], (
            errors
        )
        assert "of the 6 passages" in " ".join(m.value for m in app.markdown)  # the last audit stays on screen
    assert not app.exception


def test_user_text_is_never_markup():
    payload = "**bold** <img src=x onerror=alert(1)> [link](http://x) $x$"
    app = _audited(f"{payload} 5 mg\n{payload} 500 mg\nBananas are rich in potassium.\n".encode())
    assert not app.exception
    assert_never_rendered(app, payload)
    tokens = word_changes("a *b* 5", "a *b* 50")
    assert marked_text(tokens[1]).endswith(":orange-background[**50**]")
    assert "\\*b\\*" in marked_text(tokens[0])


def test_map_links_twins_by_mode():
    import numpy as np
    import pandas as pd

    from ui.audit import map_figure

    twins = pd.DataFrame({"index_a": [0, 2], "index_b": [1, 3], "mode": ["numerical", "negation"]})
    coords = np.arange(10, dtype=float).reshape(5, 2)
    fig = map_figure(coords, twins, ["a", "b", "c", "d", "<b>e</b>"], "PCA")
    names = [t.name for t in fig.data if t.name]
    assert names == ["no twin", "Negation", "Numerical"]
    assert list(fig.data[0].customdata) == [4] and fig.data[0].text[0] == "&lt;b&gt;e&lt;/b&gt;"
    negation_points = next(t for t in fig.data if t.name == "Negation")
    assert sorted(negation_points.customdata) == [2, 3]


def test_queries_add_the_query_numbers():
    app = open_page(PAGE)
    _give(app, "corpus", "kb.txt", CORPUS)
    _give(app, "queries", "q.txt", b"How much of the drug should I take?\nDoes the patient have diabetes?\n")
    app.run()
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception
    app.slider(key="yc_threshold").set_value(0.6).run()
    row = _risk(app)
    assert row["queries whose top 5 holds a passage and its twin"] == "100.0%"
    table = next(d.value for d in app.dataframe if "share of passages with a twin" in d.value.columns)
    assert table.iloc[0]["queries whose top 5 holds a passage and its twin"] == "100.0%"


# ---------------------------------------------------------------- the dedup guard

ID_CORPUS = (
    b"id,text\n"
    b"p1,The patient has diabetes.\n"
    b"p2,the patient has diabetes\n"
    b"p3,The patient does not have diabetes.\n"
    b"p4,Paris is the capital of France.\n"
)


def _guarded(dedup_file: bytes, name: str = "clusters.csv"):
    app = open_page(PAGE)
    _give(app, "corpus", "kb.csv", ID_CORPUS)
    app.session_state["yc_dedup_bytes"] = dedup_file
    app.session_state["yc_dedup_name"] = name
    app.run()
    assert not app.exception
    return app


def test_dedup_run_shows_what_it_deletes_and_offers_keep_csv(monkeypatch):
    # The guard needs no model: the audit is never run here.
    from core.audit import run as audit_run

    monkeypatch.setattr(audit_run, "audit_corpus", lambda *a, **k: (_ for _ in ()).throw(AssertionError("no audit needed")))
    app = _guarded(b"id,cluster_id\np1,A\np2,A\np3,A\n")
    text = " ".join(m.value for m in app.markdown)
    assert "removes 2 passage\\(s\\) from 1 cluster\\(s\\); 1 of them \\(50%\\)" in text, text
    assert "keeps 3 passages where the run keeps 2" in text
    summary = next(d.value for d in app.dataframe if "share_of_removals" in d.value.columns)
    assert summary.set_index("kind")["removals"].to_dict() == {"twin": 1, "near-duplicate": 1}
    # The worst cluster side by side, the differing words marked.
    assert any(":orange-background[**does not have**]" in m.value for m in app.markdown)
    assert any(b.label == "⬇ keep.csv · one passage per meaning" for b in app.get("download_button"))


def test_a_bad_dedup_file_is_one_line_and_keeps_the_previous_check():
    app = _guarded(b"id,cluster_id\np1,A\np2,A\np3,A\n")
    app.session_state["yc_dedup_bytes"] = b"id,cluster_id\np1,A\nzz,A\n"
    app.session_state["yc_dedup_name"] = "other.csv"
    app.run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert any("names 1 id\\(s\\) the corpus does not hold" in e and "The previous check is kept." in e for e in errors), errors
    assert any("share_of_removals" in d.value.columns for d in app.dataframe)


def test_a_corpus_without_ids_says_so():
    app = open_page(PAGE)
    _give(app, "corpus", "kb.txt", CORPUS)
    app.session_state["yc_dedup_bytes"] = b"id,cluster_id\n1,A\n2,A\n"
    app.session_state["yc_dedup_name"] = "clusters.csv"
    app.run()
    assert not app.exception
    assert any("plain text, one passage per line, without ids" in e.value for e in app.error)


def test_the_shipped_example_runs_on_the_shipped_sample():
    app = open_page(PAGE)
    next(b for b in app.button if b.label.startswith("Use the shipped sample")).click().run()
    next(b for b in app.button if b.label.startswith("Use the shipped example")).click().run()
    assert not app.exception
    assert not app.error, [e.value for e in app.error]
    text = " ".join(m.value for m in app.markdown)
    assert "The dedup run removes" in text and "confusable twin" in text


INT8 = "all-MiniLM-L6-v2-int8"


def _card_captions(app) -> list[str]:
    return [c.value for c in app.caption if c.value.startswith("Passages ")]


def test_one_card_per_pair_with_every_models_cosine_grouped_by_mode(monkeypatch, tmp_path):
    """Two models, one card per pair (not one per model and pair), every model's cosine in it, cards under their mode;
    the audit goes into the history as the CLI's does, at the page's threshold."""
    from core import constants
    from core.history import store

    history = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history))
    app = open_page(PAGE)
    app.session_state["selected_models"] = ["sentence-transformers/all-MiniLM-L6-v2", INT8]
    _give(app, "corpus", "kb.txt", CORPUS)
    app.run()
    app.slider(key="yc_threshold").set_value(0.6).run()
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception
    cards = _card_captions(app)
    assert len(cards) == 2, cards  # two twin pairs, each once, though two models found them
    for caption in cards:
        assert "MiniLM\\-L6 **" in caption and "MiniLM\\-L6 int8 \\(ONNX\\) **" in caption, caption
    groups = [h.value for h in app.subheader]
    assert any(g.startswith("Negation · 1 pair") for g in groups) and any(g.startswith("Numerical · 1 pair") for g in groups), groups
    # The findings table has one row per model, the lead sentence one sentence.
    table = next(d.value for d in app.dataframe if "share of passages with a twin" in d.value.columns)
    assert sorted(table["model"]) == ["MiniLM-L6", "MiniLM-L6 int8 (ONNX)"]
    runs = store.list_runs(history)
    assert runs["command"].tolist() == ["audit"] and runs["origin"].tolist() == ["app"]
    stored = store.load_run(int(runs["run_id"].iloc[0]), history)
    assert stored.settings["threshold"] == 0.6 and stored.settings["findings"][0].startswith("66.7% of the 6 passages")
    assert set(stored.results["category"]) >= {"numerical", "negation"} and (stored.results["cosine"] > 0.6).all()
    assert stored.settings["findings_table"][0]["twin pairs"] == "2"


def test_the_store_block_reads_the_pages_threshold(monkeypatch):
    """One threshold per page: the store audit gets the page's slider, not the sidebar's."""
    from ui import stores

    seen = []
    monkeypatch.setattr(stores, "connect_store", lambda page, what, selection, queries=None: seen.append(selection.threshold))
    app = open_page(PAGE)
    app.slider(key="yc_threshold").set_value(0.7).run()
    assert not app.exception
    assert seen[-1] == pytest.approx(0.7)
