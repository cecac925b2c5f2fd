"""The figures of docs/stores.md: the shipped public corpus in LanceDB, Chroma and PostgreSQL + pgvector, audited through each.

Usage: python -m bench.stores_figures OUT_FOLDER [RUN,...]   (about two minutes warm; needs tests/store_support.py's server package)

Every passage of data/corpora/wordnet-adjectives.csv is encoded once with
all-MiniLM-L6-v2 through the embedding cache and written into each store (a
LanceDB table without and with an index, a Chroma collection, a pgvector
table without and with an HNSW index); then ``cosine-probe audit --store`` and
``cosine-probe retrieval --store`` run on each, their outputs saved in OUT_FOLDER.
The exact pgvector table is also searched by pgvector's binary quantization
(``--store-search binary`` and ``binary-rescore``), and ``index-settings
--store`` scores the queries over the flat LanceDB table under every setting.
RUN,... keeps only the runs named (e.g. ``pgvector-binary,lancedb-settings``).
The queries are the first 200 distinct lemmas of the corpus (a word, asking for its gloss).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

MODEL = "all-MiniLM-L6-v2"


def _runs(uris: dict[str, str], queries: Path) -> list[tuple[str, str, list[str]]]:
    """(run name, command, its arguments) for every figure of docs/stores.md."""
    runs = []
    for name, uri in uris.items():
        for command in ("audit", "retrieval"):
            argv = ["--store", uri, "--models", MODEL, "--queries", str(queries), "--quiet"]
            runs.append((name, command, argv + (["--threshold", "0.7"] if command == "audit" else [])))
            if name == "pgvector-flat":
                for search in ("binary", "binary-rescore"):
                    extra = ["--store-search", search]
                    runs.append((f"pgvector-{search}", command, argv + extra + (["--threshold", "0.7"] if command == "audit" else [])))
    flat = uris["lancedb-flat"]
    runs.append(("lancedb-settings", "index-settings", ["--store", flat, "--models", MODEL, "--queries", str(queries), "--quiet"]))
    return runs


def main(out: Path, only: set[str] | None = None) -> None:
    from store_support import CANARY, CORPUS, build_chroma, build_lance, build_pg, start_pg

    from core.models.cache import EmbeddingCache
    from core.models.encode import embedding_matrix, encode_texts
    from core.models.loading import load_model

    out.mkdir(parents=True, exist_ok=True)
    frame = pd.read_csv(CORPUS)
    texts = frame["text"].tolist()
    queries = out / "queries.txt"
    queries.write_text("\n".join(list(dict.fromkeys(frame["lemma"].str.replace("_", " ")))[:200]) + "\n", encoding="utf-8")
    cache = EmbeddingCache(None)
    vectors, _ = encode_texts(load_model(MODEL), texts, cache)
    cache.close()
    matrix = embedding_matrix(vectors, texts)
    stores = out / "stores"
    shutil.rmtree(stores, ignore_errors=True)
    stores.mkdir()
    uris = {
        "lancedb-flat": build_lance(stores / "flat.lance", texts, matrix),
        "lancedb-ivf-hnsw-sq": build_lance(stores / "indexed.lance", texts, matrix, index=True),
        "chroma": build_chroma(stores / "chroma", texts, matrix),
    }
    server = start_pg(CANARY)
    try:
        uris["pgvector-flat"] = build_pg(server, "kb_flat", texts, matrix)
        uris["pgvector-hnsw"] = build_pg(server, "kb_hnsw", texts, matrix, hnsw=True, m=16, ef_construction=64)
        for name, command, args in _runs(uris, queries):
            if only and name not in only:
                continue
            argv = [sys.executable, "-m", "core", command, *args]
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            seconds = time.perf_counter() - start
            shown = " ".join(argv[1:]).replace(CANARY, "PASSWORD")
            (out / f"{name}-{command}.txt").write_text(
                f"$ {shown}\n# exit {done.returncode}, {seconds:.1f} s\n{done.stdout}{done.stderr}", encoding="utf-8"
            )
            print(name, command, done.returncode, f"{seconds:.1f} s", flush=True)
    finally:
        server.stop()
        shutil.rmtree(server.data.parent, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m bench.stores_figures OUT_FOLDER [RUN,...]")
    main(Path(sys.argv[1]), set(sys.argv[2].split(",")) if len(sys.argv) == 3 else None)
