"""The Your corpus page through the real app with MiniLM.

Upload, audit, the threshold moving the numbers without encoding again, bad files.
"""

from __future__ import annotations

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


def _risk(app):
    frames = [d.value for d in app.dataframe if "twin_pairs" in d.value.columns]
    assert frames, "no risk table"
    table = frames[0]
    return table[table["mode"] == "all"].iloc[0]


def _audited(corpus: bytes = CORPUS):
    app = open_page(PAGE)
    app.session_state["yc_corpus_bytes"] = ("kb.txt", corpus)
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
    assert row["twin_pairs"] == 2 and row["passages_with_twin"] == 4
    findings = " ".join(m.value for m in app.markdown)
    assert "66\\.7% of passages" in findings and "Worst pair" in findings
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
    assert _risk(app)["twin_pairs"] == 0
    app.slider(key="yc_threshold").set_value(0.6).run()
    assert _risk(app)["twin_pairs"] == 2


def test_bad_file_keeps_the_corpus_and_audit():
    app = _audited()
    for name, data, message in (
        ("one.txt", b"only one passage\n", "one distinct passage"),
        ("empty.txt", b"", "the file is empty"),
        ("same.txt", b"Same.\nSame.\n", "one distinct passage"),
        ("blob.txt", b"\x00\xff\x01" * 200, "binary"),
    ):
        app.session_state["yc_corpus_bytes"] = (name, data)
        app.run()
        errors = [e.value.replace("\\", "") for e in app.error]
        assert len(errors) == 1, errors
        assert errors[0].startswith(f"Could not read {name}") and message in errors[0] and "The corpus from kb.txt is kept." in errors[0], (
            errors
        )
        assert _risk(app)["n_passages"] == 6  # the last audit stays on screen
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
    assert names == ["no twin", "negation", "numerical"]
    assert list(fig.data[0].customdata) == [4] and fig.data[0].text[0] == "&lt;b&gt;e&lt;/b&gt;"
    negation_points = next(t for t in fig.data if t.name == "negation")
    assert sorted(negation_points.customdata) == [2, 3]


def test_queries_add_the_query_numbers():
    app = open_page(PAGE)
    app.session_state["yc_corpus_bytes"] = ("kb.txt", CORPUS)
    app.session_state["yc_queries_bytes"] = ("q.txt", b"How much of the drug should I take?\nDoes the patient have diabetes?\n")
    app.run()
    next(b for b in app.button if b.label == RUN).click().run()
    assert not app.exception
    app.slider(key="yc_threshold").set_value(0.6).run()
    row = _risk(app)
    assert row["n_queries"] == 2 and row["query_twin_top5"] == 1.0
    assert "queries see a passage and its twin together" in " ".join(m.value for m in app.markdown)
