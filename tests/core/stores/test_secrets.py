"""The connection string's password never leaves the process: not on stdout or stderr, not in --out, the history or the cache.

The test server's password is a canary; every run below uses it (one with a
wrong one, which PostgreSQL refuses), and every byte written is searched.
"""

from __future__ import annotations

from pathlib import Path

from store_support import CANARY, build_pg

from core.constants import HISTORY_ENV_VAR
from core.models.registry import MINILM_L6
from core.paths import cache_dir

WRONG = "Wrong-canary-pw-41d9"


def _files_holding(folder: Path, secrets: tuple[str, ...]) -> list[str]:
    hits = []
    for path in (p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        hits += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return hits


def test_the_password_appears_nowhere(cli, pg, stored, tmp_path, monkeypatch):
    texts, vectors = stored
    uri = build_pg(pg, "kb_secret", texts[:40], vectors[:40])
    assert CANARY in uri
    history = tmp_path / "history" / "runs.duckdb"
    monkeypatch.setenv(HISTORY_ENV_VAR, str(history))
    queries = tmp_path / "q.txt"
    queries.write_text("not able to do something\nhaving the necessary means or skill to do something\n", encoding="utf-8")
    outputs = []
    for argv in (
        ("audit", "--store", uri, "--models", MINILM_L6, "--queries", str(queries), "--out", str(tmp_path / "audit")),
        ("audit", "--store", uri, "--models", MINILM_L6, "--json", "--out", str(tmp_path / "audit-json")),
        ("retrieval", "--store", uri, "--models", MINILM_L6, "--queries", str(queries), "--out", str(tmp_path / "retrieval")),
        ("history", "list"),
        ("index-settings", "--store", uri, "--models", MINILM_L6, "--queries", str(queries), "--out", str(tmp_path / "settings.csv")),
    ):
        code, out, err = cli(*argv)
        assert code == 0, err
        outputs.append(out + err)
    code, out, err = cli("history", "show", "1")
    outputs.append(out + err)
    # PostgreSQL refuses a wrong password: the one error line names the server, never the password tried.
    code, out, err = cli("audit", "--store", pg.uri("kb_secret", password=WRONG), "--models", MINILM_L6, "--quiet")
    assert code == 2 and err.startswith(f"error: cannot connect to postgresql://127.0.0.1:{pg.port}/postgres?table=kb_secret: ")
    assert "password authentication failed" in err
    outputs.append(out + err)
    assert "retrieval" in outputs[3] and "audit" in outputs[3]  # both runs recorded (history list)
    assert "vectors from postgresql://127.0.0.1" in outputs[4]  # index-settings --store named the store without user-info
    assert (
        history.is_file()
        and (tmp_path / "settings.csv").is_file()
        and (tmp_path / "audit" / "summary.json").is_file()
        and (tmp_path / "retrieval" / "summary.json").is_file()
    )
    assert "postgresql://127.0.0.1" in outputs[0]  # the store is named, without its user-info
    for text in outputs:
        assert CANARY not in text and WRONG not in text and "probe:" not in text
    assert _files_holding(tmp_path, (CANARY, WRONG)) == []
    assert _files_holding(cache_dir(), (CANARY, WRONG)) == []
