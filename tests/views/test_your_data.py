"""The Your data page, driven through the real app with MiniLM.

Relies on tests/conftest.py (MiniLM as the default model, a session cache
folder).  Input reaches the page three ways, all tested: bytes put in
``st.session_state["yd_upload_bytes"/"yd_upload_name"]`` (what the uploader
stores), the real ``st.file_uploader``, and the paste box.
"""

from __future__ import annotations

import gc
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from apptest_support import open_page
from streamlit.testing.v1 import AppTest

from core import constants
from core.files.reader import apply_mapping, guess_mapping, parse_pairs
from core.models.cache import EmbeddingCache
from core.models.registry import short_name
from core.papers import failure_modes, oov
from core.scoring import tables
from core.scoring.runner import run_pairs

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
PAGE = "views/your_data.py"
RUN = "Run on selected models"
TSV = (
    b"sentence1\tsentence2\tcategory\tscore\n"
    b"The patient has diabetes\tThe patient does not have diabetes\tnegation\t0.1\n"
    b"The patient is allergic to penicillin\tThe patient is not allergic to penicillin\tnegation\t0.2\n"
    b"Take 5mg of aspirin daily\tTake 500mg of aspirin daily\tnumerical\t0.2\n"
    b"Inject 2 units of insulin\tInject 200 units of insulin\tnumerical\t0.1\n"
    b"The cat sat on the mat\tA feline rested on the rug\tpositive\t0.9\n"
    b"The meeting was postponed\tThe meeting was delayed\tpositive\t0.95\n"
    b"The cat sat on the mat\tStock prices fell sharply in March\tnegative\t0\n"
    b"I like green tea\tThe bridge closed for repairs\tnegative\t0\n"
    b"\tan empty first text\tpositive\t1\n"
)
N_PAIRS = 8  # the last row has an empty text and is dropped


def _new_app() -> AppTest:
    return open_page(PAGE)


def _table(app: AppTest, columns: set[str]):
    frames = [d.value for d in app.dataframe if columns <= set(d.value.columns)]
    assert frames, f"no table with columns {columns}"
    return frames[0]


def _said(app: AppTest) -> list[str]:
    """Every sentence the page says after its introduction (markdown, warnings, notes), Markdown escapes off."""
    return [e.value.replace("\\", "") for e in [*app.markdown, *app.warning, *app.info] if not e.value.startswith("Score **your own")]


def _results(app: AppTest):
    return _table(app, {constants.COL_MODEL, constants.COL_COSINE, constants.COL_TOKENS_A})


def _preview(app: AppTest):
    frames = [d.value for d in app.dataframe if constants.COL_TEXT_A in d.value.columns and constants.COL_MODEL not in d.value.columns]
    assert frames, "no preview table"
    return frames[0]


def _run(app: AppTest) -> None:
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception


@pytest.fixture(scope="module")
def at():
    """The page after the TSV arrived through session state and was run once."""
    app = _new_app()
    assert any("Upload a file or paste pairs" in i.value for i in app.info)
    app.session_state["yd_upload_bytes"] = TSV
    app.session_state["yd_upload_name"] = "mine.tsv"
    app.run()
    assert not app.exception
    _run(app)
    return app


@pytest.fixture(scope="module")
def expected(at):
    """The same pairs scored by core (vectors from the cache the page filled)."""
    parsed = parse_pairs(TSV, "mine.tsv")
    pairs, _ = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns)))
    result = run_pairs(pairs, [MINILM], cache=EmbeddingCache())
    assert not result.errors
    return result.results


def test_mapping_defaults_notes_and_preview(at):
    boxes = {s.label: s.value for s in at.main.selectbox}  # the sidebar has its own (models, device)
    assert boxes == {
        "File encoding": "auto-detect",
        "Text A column": "sentence1",
        "Text B column": "sentence2",
        "Category column (optional)": "category",
        "Label column (optional)": "score",
    }
    assert any("dropped 1 row" in i.value for i in at.info)
    assert len(_preview(at)) == N_PAIRS


def test_results_rows_and_cosines_equal_core(at, expected):
    shown = _results(at)
    assert len(shown) == N_PAIRS * 1  # pairs × models (MiniLM only)
    # The page labels models by their short name; the downloads keep the full id.
    assert set(shown[constants.COL_MODEL]) == {short_name(MINILM)}
    merged = shown.merge(
        expected.assign(**{constants.COL_MODEL: expected[constants.COL_MODEL].map(short_name)}),
        on=[constants.COL_MODEL, constants.COL_PAIR_ID],
        suffixes=("_page", "_core"),
    )
    assert len(merged) == N_PAIRS
    np.testing.assert_allclose(merged["cosine_page"], merged["cosine_core"], atol=1e-6)

    corr = _table(at, {"pearson_r", "spearman_rho"})
    want = tables.label_correlation(expected)
    assert corr["pearson_r"].iloc[0] == pytest.approx(want["pearson_r"].iloc[0], abs=1e-9)
    assert corr["n"].iloc[0] == N_PAIRS

    dyn = _table(at, {"dynamic_range"})
    assert dyn["dynamic_range"].iloc[0] == pytest.approx(oov.dynamic_ranges(expected)["dynamic_range"].iloc[0], abs=1e-9)

    summary = _table(at, {"failure_rate", "fr_ci_low", "mean"}).set_index(constants.COL_CATEGORY)
    core_summary = tables.category_summary(expected, 0.7).set_index(constants.COL_CATEGORY)
    for cat in ("negation", "numerical", "positive", "negative"):
        assert summary.loc[cat, "failure_rate"] == pytest.approx(core_summary.loc[cat, "failure_rate"], abs=1e-9)

    fm = _table(at, {"severity_ratio", "cohens_d"}).set_index(constants.COL_CATEGORY)
    core_fm = failure_modes.failure_mode_table(expected, 0.7).set_index(constants.COL_CATEGORY)
    assert fm.loc["negation", "cohens_d"] == pytest.approx(core_fm.loc["negation", "cohens_d"], abs=1e-9)


def test_threshold_changes_rates(at, expected):
    at.slider(key="threshold").set_value(0.95).run()
    summary = _table(at, {"failure_rate", "fr_ci_low", "mean"}).set_index(constants.COL_CATEGORY)
    core_summary = tables.category_summary(expected, 0.95).set_index(constants.COL_CATEGORY)
    for cat in core_summary.index:
        assert summary.loc[cat, "failure_rate"] == pytest.approx(core_summary.loc[cat, "failure_rate"], abs=1e-9)
    assert any(h.value == "Share above threshold 0.95" for h in at.header)
    at.slider(key="threshold").set_value(0.7).run()


def test_bad_file_shows_error_and_keeps_pairs_and_results(at):
    before = _results(at)
    at.session_state["yd_upload_bytes"] = b"\x00\x01binary"
    at.session_state["yd_upload_name"] = "x.csv"
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "x\\.csv" in at.error[0].value and "mine\\.tsv are kept" in at.error[0].value
    assert len(_preview(at)) == N_PAIRS  # previous pairs still mapped
    after = _results(at)
    assert len(after) == len(before)
    np.testing.assert_allclose(after[constants.COL_COSINE], before[constants.COL_COSINE])


def test_results_and_pairs_survive_page_switch(at):
    at.switch_page("views/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert len(_results(at)) == N_PAIRS
    assert len(_preview(at)) == N_PAIRS
    assert {s.label: s.value for s in at.selectbox}["Text B column"] == "sentence2"


def test_mapping_change_updates_preview(at):
    box = next(s for s in at.selectbox if s.label == "Category column (optional)")
    box.set_value("(none)").run()
    assert not at.exception
    assert set(_preview(at)[constants.COL_CATEGORY]) == {"uncategorized"}
    next(s for s in at.selectbox if s.label == "Category column (optional)").set_value("category").run()
    assert "negation" in set(_preview(at)[constants.COL_CATEGORY])


def test_real_file_uploader_and_excel_message():
    app = _new_app()
    uploader = app.file_uploader[0]
    assert uploader.label == "Upload sentence pairs (CSV, TSV or JSONL)"
    assert {"csv", "tsv", "jsonl", "xlsx"} <= {t.lstrip(".") for t in uploader.allowed_type}
    uploader.set_value(("pairs.csv", b"text_a,text_b\nOne sentence,Another sentence\nA cat,A dog\n", "text/csv")).run()
    assert not app.exception
    assert list(_preview(app)[constants.COL_TEXT_B]) == ["Another sentence", "A dog"]
    app.file_uploader[0].set_value(("book.xlsx", b"PK\x03\x04rest", "application/vnd.ms-excel")).run()
    assert not app.exception
    assert "save the sheet as CSV" in app.error[0].value
    assert len(_preview(app)) == 2  # the CSV's pairs are kept


def test_paste_box():
    app = _new_app()
    app.text_area(key="yd_paste").input("The door is open\tThe door is not open\tnegation\nIt rained\tIt did not rain\n").run()
    next(b for b in app.button if b.label == "Use pasted pairs").click().run()
    assert not app.exception
    preview = _preview(app)
    assert list(preview[constants.COL_TEXT_A]) == ["The door is open", "It rained"]
    assert list(preview[constants.COL_CATEGORY]) == ["negation", "uncategorized"]
    # no tab at all: a clear error, the pasted pairs stay
    app.text_area(key="yd_paste").input("just one sentence").run()
    next(b for b in app.button if b.label == "Use pasted pairs").click().run()
    assert "no tab found" in app.error[0].value
    assert len(_preview(app)) == 2
    assert app.text_area(key="yd_paste").value == "just one sentence"


# ------------------------------------------------------- identical and mirrored pairs

TWINS = (
    b"text_a,text_b,category\n"
    b"The cat sat on the mat,A cat was sitting on the mat,positive\n"
    b"A cat was sitting on the mat,The cat sat on the mat,positive\n"
    b"Same text twice,same text twice.,positive\n"
    b"The patient has diabetes,The patient does not have diabetes,negation\n"
)


def test_identical_and_mirrored_pairs_are_named_and_can_be_dropped():
    from core.files.intake import check_pairs
    from ui.widgets import md_escape

    app = _new_app()
    app.session_state["yd_upload_bytes"] = TWINS
    app.session_state["yd_upload_name"] = "twins.csv"
    app.run()
    assert not app.exception
    parsed = parse_pairs(TWINS, "twins.csv")
    expected = check_pairs(*apply_mapping(parsed, guess_mapping(list(parsed.frame.columns))))
    shown = [i.value for i in app.info]
    for note in expected.notes:  # the words the CLI prints, from the same path (escaped for markdown)
        assert md_escape(note) in shown
    assert any(md_escape("(row-3)") in n and "same text on both sides" in n for n in shown) and any(
        md_escape("row-2 mirrors row-1") in n for n in shown
    )
    assert len(_preview(app)) == 4  # kept until the user says otherwise
    boxes = {c.label: c for c in app.checkbox}
    boxes["Drop pairs whose two texts are the same"].check().run()
    assert _preview(app)[constants.COL_PAIR_ID].tolist() == ["row-1", "row-2", "row-4"]
    {c.label: c for c in app.checkbox}["Drop mirrored pairs (b, a) after (a, b)"].check().run()
    assert _preview(app)[constants.COL_PAIR_ID].tolist() == ["row-1", "row-4"]
    assert any("dropped the mirrors" in i.value for i in app.info)
    # the rules are checked on what is kept: nothing identical or mirrored is left to break them
    assert not [e for e in app.expander if "break the category rules" in e.label]


# ---------------------------------------------------------------- Labels the page understands

NLI = (
    b"premise,hypothesis,gold\n"
    b"The patient has diabetes,The patient does not have diabetes,contradiction\n"
    b"The cat sat on the mat,A feline rested on the rug,entailment\n"
    b"The meeting was postponed,The meeting was delayed,entailment\n"
    b"Take 5mg of aspirin daily,Take 500mg of aspirin daily,contradiction\n"
    b"I like green tea,The bridge closed for repairs,neutral\n"
    b"Google acquired YouTube,YouTube was bought by Google,entailment\n"
)


@pytest.fixture(scope="module")
def nli_app():
    app = _new_app()
    app.session_state["yd_upload_bytes"] = NLI
    app.session_state["yd_upload_name"] = "nli.csv"
    app.run()
    assert not app.exception
    _run(app)
    return app


def test_labels_become_categories_and_a_classifier(nli_app):
    from scipy.stats import mannwhitneyu

    results = _results(nli_app)
    assert set(results[constants.COL_CATEGORY]) == {"contradiction", "entailment", "neutral"}  # label used as the category
    assert any("label is used as its category" in i.value for i in nli_app.info)
    cos = results[constants.COL_COSINE].to_numpy(float)
    match = (results[constants.COL_LABEL] == "entailment").to_numpy()
    clf = _table(nli_app, {"auc", "best_threshold", "f1"}).iloc[0]
    # AUC = Mann-Whitney U / (n_match * n_no_match), computed by scipy
    u = mannwhitneyu(cos[match], cos[~match]).statistic
    assert clf["auc"] == pytest.approx(u / (match.sum() * (~match).sum()))
    threshold = nli_app.slider(key="threshold").value
    predicted = cos > threshold
    tp, fp, fn = (predicted & match).sum(), (predicted & ~match).sum(), (~predicted & match).sum()
    assert clf["accuracy"] == pytest.approx((predicted == match).mean())
    assert clf["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    best = clf["best_threshold"]
    assert clf["best_accuracy"] == pytest.approx(((cos > best) == match).mean())
    by = _table(nli_app, {"share_above", "median"})
    # Each label in words, as the box plot names it, and no bare 0/1 match column.
    assert "match" not in by.columns
    by = by.set_index(constants.COL_LABEL)
    assert by.loc["match (entailment)", "share_above"] == pytest.approx((cos[match] > threshold).mean())
    assert by.loc["no match (neutral)", "n"] == 1
    charts = [c for c in nli_app.get("plotly_chart") if "Cosine by label" in c.proto.spec or "classifier of your label" in c.proto.spec]
    assert len(charts) == 2


def test_results_lead_with_model_cosine_verdict(at):
    proto = next(d.proto for d in at.dataframe if constants.COL_TOKENS_A in d.value.columns)
    order = list(proto.column_order)
    assert order[:7] == [
        "model",
        "cosine",
        "threshold",
        "verdict",
        "changed words",
        constants.COL_TEXT_A,
        constants.COL_TEXT_B,
    ]  # The change on screen
    assert order.index(constants.COL_PAIR_ID) > order.index(constants.COL_TOKENS_A)
    summary = next(d.proto for d in at.dataframe if "fr_ci_low" in d.value.columns)
    assert "share above threshold" in summary.columns and constants.COL_CATEGORY not in list(summary.column_order)


def test_a_file_over_the_row_limit_names_the_cli_command_that_runs_it():
    app = _new_app()
    rows = b"".join(b"The river %d flows.\tA boat %d drifts.\n" % (i, i) for i in range(constants.MAX_UPLOAD_ROWS + 1))
    app.session_state["yd_upload_bytes"] = b"text_a\ttext_b\n" + rows
    app.session_state["yd_upload_name"] = "big pairs.tsv"
    app.run()
    assert not app.exception
    assert any(f"the limit is {constants.MAX_UPLOAD_ROWS:,}" in e.value for e in app.error)
    assert "python -m core run --suite 'big pairs.tsv' --out results" in [c.value for c in app.code]


def test_the_label_polarity_can_be_flipped_and_a_low_auc_is_said_in_words(nli_app):
    from sklearn.metrics import roc_auc_score

    box = next(s for s in nli_app.selectbox if s.label == "Which label means “same meaning”?")
    assert box.value == "__automatic__" and set(box.options) >= {"contradiction", "entailment", "neutral"}
    results = _results(nli_app)
    cos = results[constants.COL_COSINE].to_numpy(float)
    try:
        box.set_value("contradiction").run()
        assert not nli_app.exception
        truth = (results[constants.COL_LABEL] == "contradiction").to_numpy(int)
        clf = _table(nli_app, {"auc", "best_threshold", "f1"}).iloc[0]
        assert (clf["n_match"], clf["n_no_match"]) == (2, 4)
        assert clf["auc"] == pytest.approx(roc_auc_score(truth, cos))
        # The AUC said once: one lead sentence naming the groups, each model's value in the table; no warning repeats it.
        said = [v for v in _said(nli_app) if "AUC" in v]
        assert len(said) == 1 and said[0].startswith("The AUC below is how often a “match (contradiction)” pair outscores")
        assert not re.search(r"AUC[^.;]*\d\.\d", said[0])
        backwards = [w.value for w in nli_app.warning if "wrong way round" in w.value]
        assert len(backwards) == (1 if clf["auc"] < 0.5 else 0)
        # A value no pair has: one class, and the page says why there is no classifier.
        nli_app.session_state["yd_match_label"] = "neutral"
        box = next(s for s in nli_app.selectbox if s.label == "Which label means “same meaning”?")
        box.set_value("neutral").run()
        clf = _table(nli_app, {"auc", "best_threshold", "f1"}).iloc[0]
        assert (clf["n_match"], clf["n_no_match"]) == (1, 5)
    finally:
        next(s for s in nli_app.selectbox if s.label == "Which label means “same meaning”?").set_value("__automatic__").run()


def test_one_class_labels_say_why_there_is_no_classifier():
    app = _new_app()
    app.session_state["yd_upload_bytes"] = b"a,b,gold\nThe cat sat,A cat sat,1\nThe dog ran,A dog ran,1\nI like tea,I love tea,1\n"
    app.session_state["yd_upload_name"] = "one.csv"
    app.run()
    _run(app)
    why = [w.value.replace("\\", "") for w in app.warning if w.value.startswith("No classifier")]
    assert why and "all 3 labelled pairs read as a match" in why[0] and "needs both matching and non-matching pairs" in why[0]
    assert not [d for d in app.dataframe if "auc" in d.value.columns]


# ---------------------------------------------------------------- The result said in words, worst pairs first

BACKWARDS = (
    b"a,b,label\n"
    b"The patient is allergic to penicillin,The patient is not allergic to penicillin,contradiction\n"
    b"The train leaves at 9 am,The train does not leave at 9 am,contradiction\n"
    b"All students passed the exam,No students passed the exam,contradiction\n"
    b"The patient is allergic to penicillin,Penicillin triggers a reaction in this person,paraphrase\n"
    b"The train leaves at 9 am,Departure is scheduled for nine in the morning,paraphrase\n"
    b"All students passed the exam,Every pupil got through the test,paraphrase\n"
)


def test_an_auc_below_half_is_said_in_words_with_the_groups_named_and_worst_pairs_first():
    from core.probes.labels import label_lead, label_report
    from ui.state import short
    from ui.widgets import md_escape

    app = _new_app()
    app.session_state["yd_upload_bytes"] = BACKWARDS
    app.session_state["yd_upload_name"] = "backwards.csv"
    app.run()
    _run(app)
    assert not app.exception
    results = _results(app)
    report = label_report(results, app.slider(key="threshold").value)
    assert report["classifier"]["auc"].iloc[0] < 0.5  # every contradiction outscores its paraphrase
    [sentence] = label_lead(report, short)
    assert sentence.startswith("The AUC below is how often a “match (paraphrase)” pair outscores a “no match (contradiction)” pair")
    assert sentence.endswith("; MiniLM-L6 ranks them backwards.")
    assert md_escape(sentence) in [m.value for m in app.markdown]
    # Said once: the per-model AUC is in the classifier's table, no warning or note repeats a number of it.
    assert len([v for v in _said(app) if "AUC" in v]) == 1 and "wrong way round" in " ".join(w.value for w in app.warning)
    shown = next(d.value for d in app.dataframe if constants.COL_TOKENS_A in d.value.columns)
    # worst first: the contradictions, highest cosine first, then the paraphrases, lowest first
    assert list(shown[constants.COL_LABEL][:3]) == ["contradiction"] * 3
    assert shown[constants.COL_COSINE][:3].is_monotonic_decreasing and shown[constants.COL_COSINE][3:].is_monotonic_increasing


# Twenty uploads of one file in a session. Each parsed table lives in Arrow buffers (pandas 3 strings),
# which tracemalloc does not see; pyarrow counts them. The session keeps one parsed table and its mapped pairs, so
# twenty more uploads may add at most this multiple of the file's size (they added about 55 times its size before).
UPLOAD_ROWS = 3_000
UPLOAD_GROWTH_BOUND = 10  # × the file's bytes, over 20 uploads after the first (measured: +0.0; before the fix: about 60)


def test_twenty_uploads_keep_one_parsed_table_alive():
    data = (
        b"text_a,text_b,category,label\n"
        + "".join(
            f"the patient {i} has diabetes,the patient {i} does not have diabetes,negation,{i % 2}\n" for i in range(UPLOAD_ROWS)
        ).encode()
    )
    app = _new_app()

    def upload() -> None:
        app.file_uploader(key="yd_uploader").set_value(("pairs.csv", data, "text/csv")).run()  # each upload is a new file id
        assert not app.exception

    def tables_alive() -> int:
        return sum(isinstance(o, pd.DataFrame) and len(o) == UPLOAD_ROWS for o in gc.get_objects())

    upload()
    # A full collection frees every unreachable table however many uploads made them: one after the first upload and one
    # after the last, not one per upload (about 1 s each in a process that holds torch and the whole suite's objects).
    gc.collect()
    # A box the user changed goes back to the guess when the file comes again (the boxes keep one key per role).
    next(s for s in app.selectbox if s.label == "Category column (optional)").set_value("(none)").run()
    start, alive = pa.total_allocated_bytes(), tables_alive()
    for _ in range(20):
        upload()
    gc.collect()
    grown = pa.total_allocated_bytes() - start
    print(
        f"20 uploads of a {len(data) / 2**20:.2f} MB CSV: Arrow memory +{grown / 2**20:.2f} MB, "
        f"{tables_alive()} tables of its rows alive (after one upload: {alive})"
    )
    assert next(s for s in app.selectbox if s.label == "Category column (optional)").value == "category"
    assert len(_preview(app)) == 20
    assert tables_alive() <= alive, f"{tables_alive()} tables of the upload's rows alive after 21 uploads, {alive} after one"
    assert grown < UPLOAD_GROWTH_BOUND * len(data), (
        f"Arrow memory grew {grown / 2**20:.1f} MB over 20 uploads of {len(data) / 2**20:.2f} MB"
    )


def test_runs_of_distinct_uploads_leave_no_vectors_in_the_shared_caches_memory():
    """The server's one embedding cache kept every scored upload's vectors in memory, for every session.

    After a page run its memory layer is empty (the disk layer keeps the vectors); running a file again reads them back.
    """
    from ui import resources

    app = _new_app()
    cosines = []
    for k in range(3):
        data = (
            "text_a,text_b\n" + "".join(f"upload {k} says the cat {i} sat,upload {k} says the dog {i} ran\n" for i in range(20))
        ).encode()
        app.file_uploader(key="yd_uploader").set_value((f"p{k}.csv", data, "text/csv")).run()
        _run(app)
        assert len(_results(app)) == 20
        assert resources.embedding_cache().memory_vectors == 0, (
            f"{resources.embedding_cache().memory_vectors} vectors held in memory after upload {k}'s run"
        )
        cosines.append(sorted(_results(app)[constants.COL_COSINE]))
    _run(app)  # the last file again: its vectors come back from the disk layer
    assert sorted(_results(app)[constants.COL_COSINE]) == pytest.approx(cosines[-1], abs=1e-6)


SAME_MEANING = (
    b"question,answer,same_meaning,source\n"
    b"The patient has diabetes,The patient does not have diabetes,0,a\n"
    b"Take 5mg of aspirin daily,Take 500mg of aspirin daily,0,a\n"
    b"The cat sat on the mat,A feline rested on the rug,1,b\n"
    b"The meeting was postponed,The meeting was delayed,1,b\n"
)


def test_a_binary_column_named_same_meaning_is_the_label_and_the_box_plot_says_match():
    """A 0/1 column named like ``same_meaning`` is found as the label; the note about unused columns points at the
    boxes above it, not "below"; the box plot's axis reads match / no match; the intro no longer calls the label a
    similarity score."""
    import json

    app = _new_app()
    intro = next(m.value for m in app.markdown if m.value.startswith("Score **your own sentence pairs**"))
    assert "similarity score" not in intro and "a match / no-match label (1/0" in intro
    app.session_state["yd_upload_bytes"] = SAME_MEANING
    app.session_state["yd_upload_name"] = "qa.csv"
    app.run()
    assert not app.exception
    boxes = {s.label: s.value for s in app.main.selectbox}
    assert boxes["Label column (optional)"] == "same_meaning"
    notes = [i.value for i in app.info]
    ignored = next(n for n in notes if "ignored 1 column" in n)
    assert "below" not in ignored and "column boxes" in ignored
    _run(app)
    spec = next(json.loads(c.proto.spec) for c in app.get("plotly_chart") if "Cosine by label" in c.proto.spec)
    axis = {x for trace in spec["data"] for x in trace["x"]}
    assert axis == {"match (1)", "no match (0)"}
    # The labels stand in for the missing categories: the category charts and curves read them in words too, never 0 / 1.
    specs = [json.loads(c.proto.spec) for c in app.get("plotly_chart")]
    bars = next(sp for sp in specs if "(95% bootstrap CI)" in json.dumps(sp.get("layout", {}).get("title", "")))
    assert {x for trace in bars["data"] for x in trace["x"]} == {"match (1)", "no match (0)"}
    curves = next(sp for sp in specs if "above each threshold" in json.dumps(sp.get("layout", {}).get("title", "")))
    panels = {a["text"] for a in curves["layout"].get("annotations", [])}
    assert {"match (1)", "no match (0)"} <= panels and not {"0", "1"} & panels, panels


def test_guess_mapping_finds_a_label_by_a_word_of_its_name():
    assert guess_mapping(["text_a", "text_b", "is_duplicate"])["label"] == "is_duplicate"
    assert guess_mapping(["question", "answer", "Same Meaning"])["label"] == "Same Meaning"
    # A 0/1 column named for something else (1 = negated) is not a label to guess: its polarity is anyone's.
    frame = pd.DataFrame({"s1": ["a b c d", "e f g h"], "s2": ["x y z w", "t u v w"], "is_negated": ["1", "0"]})
    assert guess_mapping(list(frame.columns), frame)["label"] is None
    assert guess_mapping(["text_a", "text_b", "same_meaning", "label"])["label"] == "label"  # the exact name first
    words = pd.DataFrame({"s1": ["a b c d", "e f g h"], "s2": ["x y z w", "t u v w"], "source": ["web", "book"]})
    assert guess_mapping(list(words.columns), words)["label"] is None  # a column of words is no label
