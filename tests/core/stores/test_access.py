"""A shared app opens only the stores its operator allows, and its store errors tell nothing apart.

Against real listeners on 127.0.0.1: a closed port, a server that never
answers, one that speaks another protocol, the pgvector test server; and real
folders: one that is not there, one that is there but holds no store, a
LanceDB folder with a table that is not there.  On a shared server every one
of them reads the same line; the CLI keeps its full errors.
"""

from __future__ import annotations

import socket
import threading

import pytest
from store_support import build_chroma, build_lance, build_pg

from core.stores import pgvector
from core.stores.access import STORES_ENV, allowlist_from_env, parse_store_allowlist
from core.stores.base import FILTER_SHARED, StoreError
from core.stores.kinds import STORE_KINDS, open_store


def test_the_allowlist_reads_folders_and_servers_and_refuses_anything_else(tmp_path, monkeypatch):
    allowed = parse_store_allowlist(f"{tmp_path}, 127.0.0.1:5432 DB.internal:6543 [::1]:5433")
    assert allowed.folders == (tmp_path.resolve(),)
    assert allowed.servers == {("127.0.0.1", 5432), ("db.internal", 6543), ("::1", 5433)}
    for bad in ("relative/folder", "db.internal", "h:99999", "postgresql://h:5432"):
        with pytest.raises(StoreError, match=f"\\${STORES_ENV}: each item is an absolute folder or HOST:PORT"):
            parse_store_allowlist(bad)
    monkeypatch.delenv(STORES_ENV, raising=False)
    assert not allowlist_from_env()


def test_a_store_outside_the_allowlist_is_refused_the_same_whether_it_exists_or_not(tmp_path, stored, pg):
    texts, vectors = stored
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    real = build_lance(outside / "kb.lance", texts[:10], vectors[:10])
    (inside / "link.lance").symlink_to(outside / "kb.lance")  # a link out of the allowed folder is outside it
    allowed = parse_store_allowlist(str(inside))
    said = set()
    for uri in (real, f"lancedb://{outside}/missing.lance?table=t", f"lancedb://{inside}/link.lance?table=passages"):
        with pytest.raises(StoreError) as err:
            open_store(uri, allowed=allowed)
        said.add(str(err.value))
    assert said == {
        f"this server does not open LanceDB stores at that folder: its operator allows stores with ${STORES_ENV} (docs/stores.md)"
    }
    build_pg(pg, "kb_allow", texts[:10], vectors[:10])
    for uri in (pg.uri("kb_allow"), "postgresql://u@127.0.0.1:1/db?table=t", "postgresql://u@10.255.255.1:5432/db?table=t"):
        with pytest.raises(StoreError, match="does not open PostgreSQL \\+ pgvector stores at that server"):
            open_store(uri, allowed=allowed)


def _listener(behaviour: str):
    """A loopback TCP port that never accepts (backlog only), or accepts and answers as an HTTP server; its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    if behaviour == "http":

        def serve():
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                conn.recv(1024)
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\nServer: nginx\r\n\r\n")
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
    return sock, sock.getsockname()[1]


def test_every_failure_reads_the_same_on_a_shared_server(tmp_path, stored, pg, monkeypatch):
    texts, vectors = stored
    monkeypatch.setattr(pgvector, "CONNECT_TIMEOUT", 2)  # libpq's least
    silent, silent_port = _listener("silent")
    http, http_port = _listener("http")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    build_pg(pg, "kb_shared", texts[:10], vectors[:10])
    (tmp_path / "empty").mkdir()
    build_lance(tmp_path / "kb.lance", texts[:10], vectors[:10], table="secret_table_name")
    build_chroma(tmp_path / "chroma", texts[:10], vectors[:10], collection="secret_collection")
    ports = (closed_port, silent_port, http_port, pg.port)
    allowed = parse_store_allowlist([str(tmp_path), *(f"127.0.0.1:{p}" for p in ports)])
    servers = {
        "refused": f"postgresql://probe@127.0.0.1:{closed_port}/postgres?table=kb_shared",
        "timed out": f"postgresql://probe@127.0.0.1:{silent_port}/postgres?table=kb_shared",
        "another protocol": f"postgresql://probe@127.0.0.1:{http_port}/postgres?table=kb_shared",
        "wrong password": pg.uri("kb_shared", password="Wrong-pw-3c81aa90"),
        "no such table": pg.uri("no_such_table"),
    }
    folders = {
        "no folder": f"lancedb://{tmp_path}/missing.lance?table=t",
        "a folder, no store": f"lancedb://{tmp_path}/empty?table=t",
        "wrong table": f"lancedb://{tmp_path}/kb.lance?table=t",
        "chroma, no folder": f"chroma://{tmp_path}/missing?collection=c",
        "chroma, wrong collection": f"chroma://{tmp_path}/chroma?collection=c",
    }
    try:
        shared, full = {}, {}
        for name, uri in {**servers, **folders}.items():
            with pytest.raises(StoreError) as err:
                open_store(uri, allowed=allowed)
            shared[name] = str(err.value)
            with pytest.raises(StoreError) as err:
                open_store(uri)
            full[name] = str(err.value)
    finally:
        silent.close()
        http.close()
    for name, said in shared.items():
        # The one line, whatever failed: only the visitor's own URI (without user-info) differs.
        kind = STORE_KINDS["postgresql" if name in servers else "chroma" if name.startswith("chroma") else "lancedb"]
        where = said.split(" at ", 1)[1].split(": ", 1)
        assert said.startswith(f"cannot read the {kind.name} {kind.collection_key} at "), said
        assert where[1] == f"it is not there, cannot be reached or is not a {kind.name} store this server can read"
        for hint in ("refused", "timeout", "timed out", "HTTP", "nginx", "password", "secret_", "holds", "server closed"):
            assert hint not in said, (name, said)
    # The CLI's full errors still tell them apart (the owner runs it).
    assert "secret_table_name" in full["wrong table"] and "secret_collection" in full["chroma, wrong collection"]
    assert len(set(full.values())) == len(full)


def test_the_filter_box_is_no_oracle_on_a_shared_server(tmp_path, stored):
    texts, vectors = stored
    uri = build_lance(tmp_path / "kb.lance", texts[:20], vectors[:20], source=["a"] * 10 + ["b"] * 10)
    allowed = parse_store_allowlist(str(tmp_path))
    said = []
    for filters in ({"nope": "a"}, {"source": "absent"}, {"source": "a'; --"}):
        with pytest.raises(StoreError) as err:
            handle = open_store(uri, filters=filters, allowed=allowed)
            try:
                handle.read()
            finally:
                handle.close()
        said.append(str(err.value))
    assert said == [FILTER_SHARED] * 3
    handle = open_store(uri, filters={"source": "a"}, allowed=allowed)
    try:
        assert len(handle.read().passages) == 10
    finally:
        handle.close()
    with pytest.raises(StoreError) as err:
        open_store(uri, filters={"nope": "a"})
    assert "its columns: id, text, source, vector" in str(err.value)  # the CLI names them


def test_a_visitor_never_connects_with_the_servers_password(pg, stored, tmp_path, monkeypatch):
    # The server's PGPASSWORD and password file are the operator's: a visitor who types no password must not use them.
    texts, vectors = stored
    build_pg(pg, "kb_visitor", texts[:10], vectors[:10])
    uri = f"postgresql://probe@127.0.0.1:{pg.port}/postgres?table=kb_visitor"
    allowed = parse_store_allowlist(f"127.0.0.1:{pg.port}")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg.port}:postgres:probe:{pg.password}\n", encoding="utf-8")
    passfile.chmod(0o600)
    for variable, value in (("PGPASSWORD", pg.password), ("PGPASSFILE", str(passfile))):
        monkeypatch.setenv(variable, value)
        open_store(uri).close()  # the owner's CLI uses them
        with pytest.raises(StoreError, match="it is not there, cannot be reached or is not a PostgreSQL"):
            open_store(uri, allowed=allowed)
        monkeypatch.delenv(variable)
    handle = open_store(pg.uri("kb_visitor"), allowed=allowed)  # the visitor's own password
    try:
        assert len(handle.read().passages) == 10
    finally:
        handle.close()
