"""The "Connect a store" block on Your corpus.

A LanceDB folder audited through the page, a wrong folder one line, the password an input of type password; store
access off until the operator allows folders and servers; each box one part of the URI.
"""

from __future__ import annotations

import pytest
from apptest_support import open_page
from store_support import build_lance, stored  # noqa: F401 - stored is a fixture

from core.stores.access import STORES_ENV
from core.stores.base import StoreError, parse_uri
from core.stores.kinds import STORE_KINDS
from ui import widgets
from ui.stores import store_uri

PG, CHROMA, LANCE = STORE_KINDS["postgresql"], STORE_KINDS["chroma"], STORE_KINDS["lancedb"]


@pytest.fixture
def allowed(tmp_path, monkeypatch):
    """The operator allows stores under the test's folder."""
    monkeypatch.setenv(STORES_ENV, str(tmp_path))
    return tmp_path


def test_store_uri_quotes_each_box_and_builds_each_kind():
    values = {"user": "me", "password": "p@ss:w/rd?#", "host": "h", "port": "5433", "database": "k/b", "name": "t&x=1"}
    uri = store_uri(PG, values)
    assert uri == "postgresql://me:p%40ss%3Aw%2Frd%3F%23@h:5433/k%2Fb?table=t%26x%3D1"
    parsed = parse_uri(uri, STORE_KINDS)
    assert (parsed.password, parsed.database, parsed.params) == ("p@ss:w/rd?#", "k/b", {"table": "t&x=1"})
    assert store_uri(CHROMA, {"folder": "/f", "name": "c"}) == "chroma:///f?collection=c"
    assert store_uri(LANCE, {"folder": "/f?x#y", "name": "t"}) == "lancedb:///f%3Fx%23y?table=t"
    assert parse_uri(store_uri(LANCE, {"folder": "/f?x#y", "name": "t"}), STORE_KINDS).location == "/f?x#y"


@pytest.mark.parametrize("host", ["evil.example:6543/other?table=x", "u:pw@h", "h/db", "h?table=x", " ", "h:5432"])
def test_a_host_box_holding_more_than_a_host_is_refused(host):
    with pytest.raises(StoreError, match="the Host box takes a host name or address only"):
        store_uri(PG, {"host": host, "port": "5432", "database": "kb", "name": "t"})
    with pytest.raises(StoreError, match="the Port box takes a number"):
        store_uri(PG, {"host": "h", "port": "5432/x", "database": "kb", "name": "t"})


def test_store_access_is_off_until_the_operator_allows_it(monkeypatch):
    monkeypatch.delenv(STORES_ENV, raising=False)
    app = open_page("views/your_corpus.py")
    assert not app.exception
    assert any("Connecting a store is off on this server" in i.value and STORES_ENV in i.value for i in app.info)
    assert not [t for t in app.text_input if str(t.key).startswith("yc_store_")]
    monkeypatch.setenv(STORES_ENV, "not-a-folder")
    app = open_page("views/your_corpus.py")
    assert any("its allow-list is not valid" in i.value for i in app.info)


def test_a_folder_outside_the_allowlist_reads_one_line_whether_it_exists_or_not(tmp_path, monkeypatch, stored):  # noqa: F811
    texts, vectors = stored
    build_lance(tmp_path / "outside" / "kb.lance", texts[:20], vectors[:20])
    (tmp_path / "inside").mkdir()
    monkeypatch.setenv(STORES_ENV, str(tmp_path / "inside"))
    app = open_page("views/your_corpus.py")
    said = []
    for folder in (tmp_path / "outside" / "kb.lance", tmp_path / "outside" / "missing.lance"):
        app.text_input(key="yc_store_folder").input(str(folder))
        app.text_input(key="yc_store_name").input("passages")
        next(b for b in app.button if b.label == "Audit the store").click().run()
        said.append([e.value for e in app.error])
    assert (
        said[0]
        == said[1]
        == [
            widgets.md_escape(
                f"this server does not open LanceDB stores at that folder: its operator allows stores with ${STORES_ENV} (docs/stores.md)"
            )
        ]
    )


def test_the_postgresql_host_box_does_not_override_the_other_boxes(allowed):
    app = open_page("views/retrieval.py")
    app.selectbox(key="rt_store_kind").select("PostgreSQL + pgvector").run()
    app.text_input(key="rt_store_host").input("127.0.0.1:1/other?table=x")
    app.text_input(key="rt_store_db").input("kb")
    app.text_input(key="rt_store_table").input("t")
    app.text_area(key="rt_store_queries").input("a query")
    next(b for b in app.button if b.label == "Rank the queries through the store").click().run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        widgets.md_escape("the Host box takes a host name or address only; the port, database, user and table have their own boxes")
    ]


def test_your_corpus_audits_a_lancedb_folder_and_refuses_a_wrong_one_in_one_line(tmp_path, stored, allowed, monkeypatch):  # noqa: F811
    texts, vectors = stored
    held = {}
    monkeypatch.setattr(widgets, "downloads", lambda frame, name: held.setdefault(name, frame))
    build_lance(tmp_path / "kb.lance", texts[:40], vectors[:40])
    app = open_page("views/your_corpus.py")
    app.text_input(key="yc_store_folder").input(str(tmp_path / "missing.lance"))
    app.text_input(key="yc_store_name").input("passages")
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception
    # A shared server says one line for any store it cannot read (not there, not a store, not reachable).
    missing = f"lancedb://{tmp_path / 'missing.lance'}?table=passages"
    assert [e.value for e in app.error] == [
        widgets.md_escape(
            f"cannot read the LanceDB table at {missing}: it is not there, cannot be reached or is not a LanceDB store this server can read"
        )
    ]
    app.text_input(key="yc_store_folder").input(str(tmp_path / "kb.lance"))
    next(b for b in app.button if b.label == "Audit the store").click().run()
    assert not app.exception and not app.error
    shown = " ".join(m.value for m in app.markdown)
    for said in (
        "Model check: MiniLM-L6 re-encoded 20 of 40 stored passages",
        "LanceDB flat scan (exact), cosine distance",
        "recall against exact 100.0%.",
    ):
        assert widgets.md_escape(said) in shown
    # Words and percentages, each number's exact and store values in one column so a 1280 px screen holds the table
    # (ten columns ran off it, "(exact search" cut); the download keeps every column, typed.
    table = next(d.value for d in app.dataframe if "twin pairs: exact → store" in d.value.columns)
    assert table.columns.tolist() == ["model", "failure mode", "twin pairs: exact → store", "share of passages with a twin: exact → store"]
    assert "all modes" in set(table["failure mode"])
    assert table["share of passages with a twin: exact → store"].str.fullmatch(r"\d+\.\d% → \d+\.\d%").all()
    download = held["store audit yc"]
    assert {"twin_pairs_exact", "twin_pairs_store", "twin_share_exact", "twin_share_store"} <= set(download.columns)
    assert download["twin_share_exact"].dtype == float


def test_postgresql_password_is_a_password_input(allowed):
    app = open_page("views/retrieval.py")
    app.selectbox(key="rt_store_kind").select("PostgreSQL + pgvector").run()
    assert not app.exception
    assert app.text_input(key="rt_store_password").proto.type == app.text_input(key="rt_store_password").proto.PASSWORD


def test_the_filter_box_reads_only_the_matching_rows_and_a_bad_line_is_one_error(tmp_path, stored, allowed):  # noqa: F811
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


def test_the_fields_follow_each_kinds_record(allowed):
    app = open_page("views/retrieval.py")
    app.radio(key="rt_store_search").set_value("exact scan").run()
    for kind in STORE_KINDS.values():
        app.selectbox(key="rt_store_kind").select(kind.label).run()
        assert not app.exception
        keys = {str(t.key): t for t in app.text_input if str(t.key).startswith("rt_store_")}
        assert ("rt_store_text_col" in keys) == ("rt_store_vector_col" in keys) == kind.columns
        assert ("rt_store_password" in keys) == ("rt_store_host" in keys) == kind.server
        name = keys["rt_store_table" if kind.server else "rt_store_name"]
        assert name.label == kind.collection_word
        assert ("exact scan" in app.radio(key="rt_store_search").options) == kind.exact_search
        assert kind.filter_on.upper().replace(" ", "_") in app.text_area(key="rt_store_filter").placeholder
