"""Store URIs: each scheme parsed, the password registered with the redaction and never in ``display``; bad URIs one line."""

from __future__ import annotations

import pytest

from core.messages import redact
from core.stores.base import StoreError, parse_uri
from core.stores.kinds import STORE_KINDS, open_store


def test_postgresql_uri_parts_and_display_without_password():
    uri = parse_uri("postgresql://alice:s3cret-Pa%40ss@db.example:6543/kb?table=public.chunks", STORE_KINDS)
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
    assert parse_uri("lancedb:///data/kb.lance?table=t", STORE_KINDS).location == "/data/kb.lance"
    assert parse_uri("chroma://rel/folder?collection=c", STORE_KINDS).location == "rel/folder"
    assert parse_uri("postgres://u@h/db?table=t", STORE_KINDS).scheme == "postgresql"


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
        parse_uri(uri, STORE_KINDS)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_missing_folder_and_table_are_one_line(tmp_path):
    with pytest.raises(StoreError, match="no LanceDB folder at"):
        open_store(f"lancedb://{tmp_path / 'nope'}?table=t")
    with pytest.raises(StoreError, match=r"no Chroma folder at .* \(no chroma.sqlite3"):
        open_store(f"chroma://{tmp_path}?collection=c")
    with pytest.raises(StoreError, match="name the table"):
        open_store("postgresql://u:pw@127.0.0.1:1/db")


SECRET = "Sq-9d1fe-Canary"


@pytest.mark.parametrize("key", ["password", "passfile", "sslpassword", "PassWord"])
def test_a_secret_in_the_query_is_refused_by_its_key_never_its_value(key):
    text = f"postgresql://127.0.0.1:5999/db?table=t&user=u&{key}={SECRET}"
    with pytest.raises(StoreError) as err:
        parse_uri(text, STORE_KINDS)
    said = str(err.value)
    assert f"query holds {key!r}" in said and "PGPASSWORD or ~/.pgpass" in said
    assert SECRET not in said and "127.0.0.1" not in said and "\n" not in said
    assert SECRET not in redact(f"later a client echoes {SECRET}")  # registered before the refusal


@pytest.mark.parametrize("password", [f"ab/{SECRET}", f"12/{SECRET}", f"ab?{SECRET}", f"ab#{SECRET}", f"a/b?c#{SECRET}"])
def test_a_password_with_an_unencoded_slash_question_mark_or_hash_is_never_printed(password):
    text = f"postgresql://alice:{password}@db.example:5432/kb?table=t"
    with pytest.raises(StoreError) as err:
        parse_uri(text, STORE_KINDS)
    said = str(err.value)
    assert said.startswith("the store URI's user and password cannot be read") and "%2F, %3F, %23" in said
    assert "PGPASSWORD" in said
    for piece in (SECRET, "db.example", "alice", "port is not a number"):
        assert piece not in said
    assert SECRET not in redact(f"echo {password}")


def test_only_the_collection_key_is_taken_and_no_other_value_is_printed():
    with pytest.raises(StoreError) as err:
        parse_uri(f"postgresql://u@h:5432/db?table=t&sslmode={SECRET}", STORE_KINDS)
    assert "'sslmode'" in str(err.value) and SECRET not in str(err.value)
    with pytest.raises(StoreError, match="'user', which a LanceDB URI does not take: give only table=NAME"):
        parse_uri("lancedb:///data/kb.lance?table=t&user=me", STORE_KINDS)
    uri = parse_uri("postgresql://u@h/db?table=t", STORE_KINDS)
    assert uri.display == "postgresql://h:5432/db?table=t" and uri.port == 5432


def test_an_unknown_scheme_is_not_echoed_beyond_a_scheme():
    for text in (f"{SECRET}@db.example/kb", f"u:{SECRET}@db.example"):
        with pytest.raises(StoreError) as err:
            parse_uri(text, STORE_KINDS)
        assert SECRET not in str(err.value) and "db.example" not in str(err.value)


def test_every_kind_reads_the_uri_its_record_shows():
    for kind in STORE_KINDS.values():
        form = kind.uri_form.replace("FOLDER", "/data/kb").replace("USER", "me").replace("HOST", "h").replace("PORT", "6000")
        uri = parse_uri(form.replace("DB", "kb").replace("NAME", "c"), STORE_KINDS)
        assert uri.scheme == kind.scheme and uri.params == {kind.collection_key: "c"}
        assert "me" not in uri.display
