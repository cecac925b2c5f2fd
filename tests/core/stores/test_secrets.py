"""The connection string's password never leaves the process: not on stdout or stderr, not in --out, the history or the cache.

The test server's password is a canary; every run below uses it (one with a
wrong one, which PostgreSQL refuses), and every byte written is searched.
"""

from __future__ import annotations

from pathlib import Path

from store_support import CANARY, build_pg

from core.cli.main import build_parser
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


def test_pgpassword_or_a_pgpass_file_keep_the_password_off_the_command_line(cli, pg, stored, tmp_path, monkeypatch):
    texts, vectors = stored
    build_pg(pg, "kb_pgpass", texts[:30], vectors[:30])
    uri = f"postgresql://probe@127.0.0.1:{pg.port}/postgres?table=kb_pgpass"
    monkeypatch.setenv("PGPASSWORD", CANARY)
    code, out, err = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert code == 0, err
    assert f"of 30 stored passages of postgresql://127.0.0.1:{pg.port}/postgres?table=kb_pgpass" in out
    monkeypatch.delenv("PGPASSWORD")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg.port}:postgres:probe:{CANARY}\n", encoding="utf-8")
    passfile.chmod(0o600)  # libpq ignores a password file others can read
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    code, out2, err2 = cli("audit", "--store", uri, "--models", MINILM_L6, "--quiet")
    assert code == 0, err2
    for text in (out, err, out2, err2):
        assert CANARY not in text
    parser = build_parser()
    for command in ("audit", "retrieval"):
        shown = next(a for a in parser._actions if a.dest == "command").choices[command].format_help()
        assert "PGPASSWORD or ~/.pgpass keep the password off the command line" in " ".join(shown.split())
