"""The "Connect a store" block on Your corpus.

A LanceDB folder audited through the page, a wrong folder one line, the password an input of type password.
"""

from __future__ import annotations

from apptest_support import open_page
from store_support import build_lance, stored  # noqa: F401 - stored is a fixture

from ui import widgets
from ui.stores import store_uri


def test_store_uri_quotes_the_password_and_builds_each_kind():
    uri = store_uri("postgresql", {"user": "me", "password": "p@ss:w/rd", "host": "h", "port": "5433", "database": "kb", "table": "t"})
    assert uri == "postgresql://me:p%40ss%3Aw%2Frd@h:5433/kb?table=t"
    assert store_uri("chroma", {"folder": "/f", "name": "c"}) == "chroma:///f?collection=c"
    assert store_uri("lancedb", {"folder": "/f", "name": "t"}) == "lancedb:///f?table=t"


def test_your_corpus_audits_a_lancedb_folder_and_refuses_a_wrong_one_in_one_line(tmp_path, stored):  # noqa: F811 - the fixture
    texts, vectors = stored
    build_lance(tmp_path / "kb.lance", texts[:40], vectors[:40])
    app = open_page("views/your_corpus.py")
    app.text_input(key="yc_store_folder").input(str(tmp_path / "missing.lance"))
    app.text_input(key="yc_store_name").input("passages")
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception
    assert [e.value for e in app.error] == [f"no LanceDB folder at {widgets.md_escape(str(tmp_path / 'missing.lance'))}"]
    app.text_input(key="yc_store_folder").input(str(tmp_path / "kb.lance"))
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception and not app.error
    shown = " ".join(m.value for m in app.markdown)
    for said in (
        "Model check: MiniLM-L6 re-encoded 20 stored passages",
        "LanceDB flat scan (exact), cosine distance",
        "recall against exact",
    ):
        assert widgets.md_escape(said) in shown
    # Words and percentages, as the page's own tables: no raw names such as twin_share_store.
    table = next(d.value for d in app.dataframe if "twin pairs (exact search)" in d.value.columns)
    assert (table["twin pairs (exact search)"] == table["twin pairs (the store's search)"]).all()
    assert not [c for c in table.columns if "_" in c] and "all modes" in set(table["failure mode"])
    assert table["share of passages with a twin (exact search)"].str.endswith("%").all()


def test_postgresql_password_is_a_password_input():
    app = open_page("views/retrieval.py")
    app.selectbox(key="rt_store_kind").select("PostgreSQL + pgvector").run()
    assert not app.exception
    assert app.text_input(key="rt_store_password").proto.type == app.text_input(key="rt_store_password").proto.PASSWORD


def test_the_filter_box_reads_only_the_matching_rows_and_a_bad_line_is_one_error(tmp_path, stored):  # noqa: F811 - the fixture
    texts, vectors = stored
    hostile = "x'; DROP TABLE passages; --"
    build_lance(tmp_path / "kb.lance", texts[:40], vectors[:40], source=[hostile if i % 2 else "other" for i in range(40)])
    app = open_page("views/your_corpus.py")
    app.text_input(key="yc_store_folder").input(str(tmp_path / "kb.lance"))
    app.text_input(key="yc_store_name").input("passages")
    app.text_area(key="yc_store_filter").input("source")
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception
    assert [e.value for e in app.error] == [widgets.md_escape("a store filter is COLUMN=VALUE, got 'source'")]
    app.text_area(key="yc_store_filter").input(f"source={hostile}")
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception and not app.error
    shown = " ".join(m.value for m in app.markdown)
    assert widgets.md_escape(f"(filter: source = {hostile!r})") in shown
