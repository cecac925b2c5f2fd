"""A hostile endpoint plants a canary key and a canary URL password in every part of its answers; neither is printed or written.

The server (``endpoint_support.scripted_server``, 127.0.0.1) echoes the key the
client sent in the status line's reason phrase, in headers, in the body, as
the embedding values themselves and in its error text, plainly, as a bearer
token, percent-encoded and JSON-escaped, with URLs carrying a password.  ``run``
and ``compare`` go through each answer beside a local model (so summaries and
the history are written with the endpoint's error in them); then every file the
tool wrote (out folders, summary.json, history, its export and report, cache,
load log) and everything it printed or logged is searched for either canary.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from endpoint_support import Reply, scripted_server

from core import constants
from core.cli import main as cli
from core.models import endpoint
from core.models.registry import MINILM_L6

KEY = "sk-canary-93b1e07d4c2a6f58e1d0"
PASSWORD = "pw-canary-5e8d2c1b9a"
NAME = "openai:hostile"


def _planted() -> str:
    """One text holding both canaries every way a server could spell them."""
    return (
        f"Incorrect API key provided: {KEY}. Authorization: Bearer {KEY}; echo {json.dumps(KEY)} {quote(KEY, safe='')} "
        f"{''.join(f'%{b:02X}' for b in KEY.encode())}; retry at http://admin:{PASSWORD}@proxy.internal/v1 or "
        f"http://admin%3A{PASSWORD}%40proxy.internal/v1 or {quote(f'http://admin:{PASSWORD}@proxy.internal/v1', safe='')}"
    )


HEADERS = {"X-Echo-Authorization": f"Bearer {KEY}", "X-Upstream": f"http://admin:{PASSWORD}@proxy.internal/v1"}
REASON = f"Bad Bearer {KEY}"


def _answers(n: int) -> dict[str, Reply]:
    """Every hostile answer to a request of ``n`` texts (as many items as texts, so each gets past the count)."""
    planted = _planted()

    def items(embedding, index=None) -> list[dict]:
        return [{"index": i if index is None else index, "embedding": embedding} for i in range(n)]

    return {
        "values": Reply(200, {"data": items([f"Bearer {KEY}", planted])}, HEADERS, f"OK Bearer {KEY}"),
        "mixed-values": Reply(200, {"data": items([0.5, f"Bearer {KEY}"])}, HEADERS),
        "base64": Reply(200, {"data": items(planted)}, HEADERS),
        "error-400": Reply(400, {"error": {"message": planted, "type": "invalid_request_error", "code": KEY}}, HEADERS, REASON),
        "error-401": Reply(401, {"error": {"message": planted}}, HEADERS, REASON),
        "html": Reply(200, f"<html><body>{planted}</body></html>".encode(), {**HEADERS, "Content-Type": "text/html"}, f"OK {KEY}"),
        "text-error": Reply(418, planted.encode(), {**HEADERS, "Content-Type": "text/plain"}, REASON),
        "index": Reply(200, {"data": items([0.1, 0.2], index=f"Bearer {KEY}")}, HEADERS),
        "list": Reply(200, [planted, f"Bearer {KEY}"], HEADERS),
        "data": Reply(200, {"data": planted, "error": planted}, HEADERS),
    }


def _fragments() -> list[str]:
    return [KEY, KEY[:14], KEY[-14:], PASSWORD, quote(KEY, safe="")]


def _leaks(text: str) -> list[str]:
    return [f for f in _fragments() if f.lower() in text.lower()]


def _files_holding_a_canary(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            if any(f.lower().encode() in data for f in _fragments()):
                found.append(str(path))
    return found


@pytest.mark.parametrize("listing_leaks", [False, True], ids=["embeddings-hostile", "models-listing-hostile"])
def test_a_hostile_endpoints_canaries_reach_no_file_and_no_output(listing_leaks, minilm, tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history" / "history.duckdb"))
    monkeypatch.setenv("COSINE_PROBE_LOAD_LOG", str(tmp_path / "logs" / "loads.jsonl"))
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    caplog.set_level(logging.DEBUG)  # the openai client's and httpx's debug logs (headers, bodies) too
    pairs = tmp_path / "in" / "pairs.csv"
    pairs.parent.mkdir()
    pairs.write_text("text_a,text_b\nThe cat sat,The cat did not sit\n")
    printed: list[str] = []
    answers = _answers(1)
    current = {"mode": "values"}
    listing = Reply(403, {"error": {"message": _planted()}}, HEADERS, REASON) if listing_leaks else None
    with scripted_server(
        model="hostile", embeddings=lambda texts: _answers(len(texts))[current["mode"]], models=(lambda: listing) if listing else None
    ) as server:
        flags = ["--models", MINILM_L6, NAME, "--api-base", server.base_url, "--api-key-env", "HOSTILE_KEY"]
        for mode in [*answers] if not listing_leaks else ["values"]:
            current["mode"] = mode
            if mode in ("values", "error-400", "html"):  # compare prints its own lines and records a run too; three kinds suffice
                assert cli.main(["compare", f"a red car {mode}", "a blue car", *flags, "--json"]) == 0, mode
                assert cli.main(["compare", f"a green car {mode}", "a car", *flags]) == 0, mode
            assert cli.main(["run", "--suite", str(pairs), "--out", str(tmp_path / "out" / mode), *flags]) == 0, mode
            summary = json.loads((tmp_path / "out" / mode / "summary.json").read_text())
            assert NAME in summary["errors"], (mode, summary["errors"])  # the endpoint's failure is recorded, without its secrets
        out, err = capsys.readouterr()
        printed += [out, err]
        assert cli.main(["history", "list"]) == 0
        runs = [int(line.split()[0]) for line in capsys.readouterr().out.splitlines()[1:] if line.split() and line.split()[0].isdigit()]
        assert runs
        (tmp_path / "exports").mkdir()
        (tmp_path / "reports").mkdir()
        for run_id in runs:
            assert cli.main(["history", "show", str(run_id)]) == 0
        for run_id in runs[:3]:  # an export and a report of three runs (a run, a compare, the first) show what every one holds
            assert cli.main(["history", "export", str(run_id), "--out", str(tmp_path / "exports" / f"run-{run_id}.parquet")]) == 0
            assert cli.main(["report", str(run_id), "--out", str(tmp_path / "reports" / f"run-{run_id}.html")]) == 0
        assert server.posts() >= (0 if listing_leaks else len(answers))
    out, err = capsys.readouterr()
    printed += [out, err, caplog.text]
    assert "error: " in printed[1] and f"{NAME}: " in printed[1]  # each failure was said
    assert (tmp_path / "reports").is_dir() and (tmp_path / "exports").is_dir()
    assert _files_holding_a_canary(tmp_path) == []
    leaks = [(i, _leaks(text)) for i, text in enumerate(printed) if _leaks(text)]
    assert leaks == []
