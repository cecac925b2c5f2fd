"""Store URIs: each scheme parsed, the password registered with the redaction and never in ``display``; bad URIs one line."""

from __future__ import annotations

import pytest

from core.messages import redact
from core.stores.base import StoreError, parse_uri
from core.stores.kinds import STORE_KINDS, open_store


def test_postgresql_uri_parts_and_display_without_password():
    uri = parse_uri("postgresql://alice:s3cret-Pa%40ss@db.example:6543/kb?table=public.chunks", tuple(STORE_KINDS))
    assert (uri.scheme, uri.user, uri.password, uri.host, uri.port, uri.database) == (
        "postgresql",
        "alice",
        "s3cret-Pa@ss",
        "db.example",
        6543,
        "kb",
    )
    assert uri.params == {"table": "public.chunks"}
    assert uri.display == "postgresql://db.example:6543/kb?table=public.chunks"
    assert "s3cret" not in repr(uri)
    # Registered on parsing: any later message that quotes it, raw or decoded, loses it.
    assert "s3cret" not in redact("failed with s3cret-Pa@ss and s3cret-Pa%40ss")


def test_folder_uris_and_postgres_alias():
    assert parse_uri("lancedb:///data/kb.lance?table=t", tuple(STORE_KINDS)).location == "/data/kb.lance"
    assert parse_uri("chroma://rel/folder?collection=c", tuple(STORE_KINDS)).location == "rel/folder"
    assert parse_uri("postgres://u@h/db?table=t", tuple(STORE_KINDS)).scheme == "postgresql"


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("", "the store URI is empty"),
        ("mongodb://h/db", "unknown store 'mongodb'"),
        ("lancedb://?table=t", "names no folder"),
        ("lancedb://f?table=a&table=b", "names 'table' more than once"),
        ("postgresql://u:p@h:99999/db?table=t", "port is not a number"),
    ],
)
def test_bad_uris_are_one_line(uri, says):
    with pytest.raises(StoreError) as err:
        parse_uri(uri, tuple(STORE_KINDS))
    assert says in str(err.value) and "\n" not in str(err.value)


def test_missing_folder_and_table_are_one_line(tmp_path):
    with pytest.raises(StoreError, match="no LanceDB folder at"):
        open_store(f"lancedb://{tmp_path / 'nope'}?table=t")
    with pytest.raises(StoreError, match=r"no Chroma folder at .* \(no chroma.sqlite3"):
        open_store(f"chroma://{tmp_path}?collection=c")
    with pytest.raises(StoreError, match="name the table"):
        open_store("postgresql://u:pw@127.0.0.1:1/db")
