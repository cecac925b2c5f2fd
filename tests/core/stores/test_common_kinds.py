"""Every store kind through the same checks, as scikit-learn's test_common runs every estimator.

A kind is its reader plus its record (:data:`core.stores.kinds.STORE_KINDS`).
For each record: the URI it shows parses back to it; the app's fields spell a
URI of it; the CLI's help names it; a store of that kind built here (the one
line per kind in ``BUILDERS``) is read whole, searched, filtered and left
unchanged; what the record says it cannot do is refused or hidden, and what it
says it can do works.  A kind without a builder here fails the first test.
"""

from __future__ import annotations

import inspect

import pytest
from store_support import build_chroma, build_lance, build_pg, folder_digest, table_fingerprint

from core.cli.main import build_parser
from core.stores.base import StoreError, StoreKind, parse_uri
from core.stores.kinds import STORE_KINDS, open_store
from ui.stores import store_uri

N = 24
SOURCES = ["a", "b", "c"]


def _lance(tmp_path, pg, texts, vectors, sources):
    return build_lance(tmp_path / "kb.lance", texts, vectors, source=sources), lambda: folder_digest(tmp_path / "kb.lance")


def _chroma(tmp_path, pg, texts, vectors, sources):
    # ef_search above the collection's size: Chroma's HNSW visits every row, an exact search in effect.
    uri = build_chroma(tmp_path / "chroma", texts, vectors, ef_search=500, source=sources)
    return uri, lambda: folder_digest(tmp_path / "chroma")


def _pg(tmp_path, pg, texts, vectors, sources):
    table = f"kb_common_{tmp_path.name[-8:].lower().replace('-', '_')}"
    return build_pg(pg, table, texts, vectors, source=sources), lambda: table_fingerprint(pg, table)


# How the tests build a store of each kind holding given passages (with a ``source`` column or metadata key).
BUILDERS = {"lancedb": _lance, "chroma": _chroma, "postgresql": _pg}
KINDS = list(STORE_KINDS.values())
IDS = [kind.scheme for kind in KINDS]


def _filled(form: str) -> str:
    for part, value in (("FOLDER", "/data/kb"), ("USER", "me"), ("HOST", "db.example"), ("PORT", "6000"), ("DB", "kb"), ("NAME", "c")):
        form = form.replace(part, value)
    return form


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_the_record_is_whole(kind: StoreKind):
    assert kind.scheme in BUILDERS, f"tests/core/stores/test_common_kinds.py has no builder for {kind.scheme}"
    assert STORE_KINDS[kind.scheme] is kind and kind.name and kind.label and kind.client and kind.package
    assert inspect.isclass(kind.reader)
    for method in ("read", "search", "search_method", "close"):
        assert callable(getattr(kind.reader, method, None)), f"{kind.name}'s reader has no {method}"
    params = inspect.signature(kind.reader).parameters
    assert {"exact", "filters"} <= set(params) and ("binary" in params) == kind.binary_search
    assert ("visitor" in params) == kind.server  # a server's reader can refuse the server's own credentials
    assert kind.uri_form.startswith(f"{kind.scheme}://") and kind.uri_form.endswith(f"?{kind.collection_key}=NAME")
    assert bool(kind.password_hint) == kind.server  # a server's password has somewhere to go besides the URI
    assert (kind.default_port is not None) == kind.server


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_its_uri_form_and_its_fields_parse_back_to_it(kind: StoreKind):
    for alias in (kind.scheme, *kind.aliases):
        uri = parse_uri(_filled(kind.uri_form).replace(f"{kind.scheme}://", f"{alias}://", 1), STORE_KINDS)
        assert uri.scheme == kind.scheme and uri.params == {kind.collection_key: "c"}
        assert "me" not in uri.display.split("://", 1)[1].split("/")[0]
    fields = {"folder": "/data/kb", "host": "db.example", "port": "6000", "database": "kb", "user": "me", "password": "pw", "name": "c"}
    uri = parse_uri(store_uri(kind, fields), STORE_KINDS)
    assert uri.scheme == kind.scheme and uri.params == {kind.collection_key: "c"}
    assert (uri.host, uri.port, uri.password) == (("db.example", 6000, "pw") if kind.server else ("", None, ""))


@pytest.mark.parametrize("command", ["audit", "retrieval"])
def test_the_cli_help_is_built_from_every_record(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    helps = {a.dest: a.help or "" for a in sub._actions}
    for kind in KINDS:
        assert kind.uri_form in helps["store"]
        if kind.password_hint:
            assert kind.password_hint in helps["store"]
        assert (kind.name in helps["store_search"].split("binary quantization")[1]) == kind.binary_search
        assert f"{kind.name}: {kind.filter_by}" in helps["store_filter"]


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_each_kind_reads_searches_filters_and_writes_nothing(kind: StoreKind, tmp_path, pg, stored):
    texts, vectors = stored[0][:N], stored[1][:N]
    sources = [SOURCES[i % 3] for i in range(N)]
    uri, state = BUILDERS[kind.scheme](tmp_path, pg, texts, vectors, sources)
    before = state()
    handle = open_store(uri, exact=kind.exact_search)
    try:
        collection = handle.read()
        assert collection.passages == texts and collection.vectors.shape == vectors.shape
        found = handle.search(vectors[:3], 1)
        assert [row[0] for row in found] == texts[:3]  # each stored vector's nearest row is itself
        assert kind.name.split(" ")[0] in handle.search_method() or "pgvector" in handle.search_method()
    finally:
        handle.close()
    handle = open_store(uri, exact=kind.exact_search, filters={"source": "b"})
    try:
        assert handle.read().passages == [t for t, s in zip(texts, sources, strict=True) if s == "b"]
    finally:
        handle.close()
    with pytest.raises(StoreError, match=f"which is not a {kind.filter_on}"):
        open_store(uri, filters={"nope": "b"})
    if not kind.binary_search:
        with pytest.raises(StoreError, match=f"{kind.name} has no query-time binary search"):
            open_store(uri, binary="binary")
    if kind.columns:
        with pytest.raises(StoreError, match="has no text column 'nope'"):
            open_store(uri, text_column="nope")
    else:
        with pytest.raises(StoreError, match="leave out --text-column"):
            open_store(uri, text_column="nope")
    assert state() == before  # read-only: the folder byte for byte, the table row for row
