"""What an endpoint answers, checked: wrong shapes, vectors with no direction, a model that changed size, a server that hangs.

Every server here is ``endpoint_support.scripted_server`` on 127.0.0.1: its
answers are written by the test, so each case is exactly the one named.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from endpoint_support import Reply, scripted_server, vectors_reply

from core import constants, settings
from core.cli import main as cli
from core.models import endpoint

NAME = "openai:scripted"
A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv(constants.CACHE_ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    monkeypatch.delenv(endpoint.BASE_URL_ENV, raising=False)
    monkeypatch.setattr(endpoint, "_SETTINGS", {})
    return tmp_path


def _vector(text: str, dimension: int) -> list[float]:
    """A fixed vector per text and size, as a real model would give (not unit length: the tool normalises)."""
    seed = int.from_bytes(hashlib.sha256(f"{dimension}:{text}".encode()).digest()[:8], "little")
    return [float(x) for x in np.random.default_rng(seed).standard_normal(dimension) * 3.0]


def _cosine(u: list[float], v: list[float]) -> float:
    a, b = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _compare(*texts: str, base_url: str, extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["compare", *texts, "--models", NAME, "--api-base", base_url, "--json", *extra])
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- Wrong shapes
def _items(n: int, **fields) -> list[dict]:
    return [{"index": i, "embedding": [0.1 * (i + 1), 0.2], **fields} for i in range(n)]


SHAPES = {
    "missing index": (lambda n: Reply(body={"data": [{"embedding": [0.1, 0.2]} for _ in range(n)]}), "no 'index' in item 0 of 'data'"),
    "index null": (
        lambda n: Reply(body={"data": [{"index": None, "embedding": [0.1, 0.2]} for _ in range(n)]}),
        "an 'index' that is null in item 0",
    ),
    "repeated index": (
        lambda n: Reply(body={"data": [{"index": 0, "embedding": [0.1, 0.2]} for _ in range(n)]}),
        "index 0 in item 1 of 'data', repeated",
    ),
    "index out of range": (
        lambda n: Reply(body={"data": [{"index": i + 5, "embedding": [0.1, 0.2]} for i in range(n)]}),
        "index 5 in item 0 of 'data', out of range for 2 texts",
    ),
    "mixed dimensions": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": [0.1] * (16 + 16 * i)} for i in range(n)]}),
        "vectors of 16 and 32 dimensions in one answer",
    ),
    "text/html": (
        lambda n: Reply(body=b"<html><body>Bad gateway</body></html>", headers={"Content-Type": "text/html"}),
        "answered with text/html, not JSON (37 bytes)",
    ),
    "empty body": (lambda n: Reply(body=b"", headers={"Content-Type": "text/plain"}), "answered with an empty body, not JSON"),
    "JSON list": (lambda n: Reply(body=[[0.1, 0.2]] * n), "answered with a list in JSON, not an object with a 'data' list"),
    "JSON string": (lambda n: Reply(body="ok"), "answered with a string in JSON, not an object"),
    "data null": (lambda n: Reply(body={"data": None}), "answered with 'data' that is null, not a list of embeddings"),
    "no data": (lambda n: Reply(body={"object": "list"}), "answered with no 'data' field, not a list of embeddings"),
    "too few": (lambda n: Reply(body={"data": _items(n - 1)}), "returned 1 embeddings for 2 texts"),
    "item not an object": (
        lambda n: Reply(body={"data": [[0.1, 0.2]] * n}),
        "answered with a list as item 0 of 'data', not an object with 'index' and 'embedding'",
    ),
    "base64 vector": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": "AAAAPwAAgD8="} for i in range(n)]}),
        "a string as embedding 0, not a list of numbers (base64?",
    ),
    "strings in vector": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": ["0.1", "0.2"]} for i in range(n)]}),
        "a string among the numbers of embedding 0",
    ),
    "booleans in vector": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": [True, False]} for i in range(n)]}),
        "a boolean among the numbers of embedding 0",
    ),
    "nested vector": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": [[0.1], [0.2]]} for i in range(n)]}),
        "a list among the numbers of embedding 0",
    ),
    "empty vector": (lambda n: Reply(body={"data": [{"index": i, "embedding": []} for i in range(n)]}), "an empty list as embedding 0"),
    "null vector": (
        lambda n: Reply(body={"data": [{"index": i, "embedding": None} for i in range(n)]}),
        "null as embedding 0, not a list of numbers",
    ),
    "NaN in vector": (
        lambda n: Reply(body=json.dumps({"data": [{"index": i, "embedding": [float("nan"), 0.2]} for i in range(n)]}).encode()),
        "NaN or an infinity in embedding 0",
    ),
    "1e400 in vector": (
        lambda n: Reply(body=b'{"data": [' + b", ".join(b'{"index": %d, "embedding": [1e400, 0.2]}' % i for i in range(n)) + b"]}"),
        "NaN or an infinity in embedding 0",
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_an_answer_of_the_wrong_shape_is_one_line_saying_what_the_server_returned(shape, isolated):
    answer, said = SHAPES[shape]
    with scripted_server(embeddings=lambda texts: answer(len(texts))) as server:
        code, out, err = _compare(A, B, base_url=server.base_url)
    assert code == cli.EXIT_NO_MODEL and json.loads(out) == []
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {NAME}: failed while encoding (EndpointError: {server.base_url} "), err
    assert said in errors[0], err
    assert "Traceback" not in err and "NoneType" not in err and "inhomogeneous" not in err


def test_parse_answer_keeps_the_order_the_indices_give_and_reads_the_servers_tokens():
    body = json.dumps(
        {"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 4.0]}], "usage": {"total_tokens": 7}}
    ).encode()
    vectors, tokens = endpoint.parse_answer(body, "application/json", 2, "http://x/v1")
    np.testing.assert_array_equal(vectors, [[3.0, 4.0], [0.0, 2.0]])
    assert vectors.dtype == np.float64 and tokens == 7


# ---------------------------------------------------------------- Vectors with no direction
def test_extreme_components_give_the_hand_computed_cosine(isolated):
    """Components whose squares overflow (1e19 and up) or underflow (1e-40) float32 keep their direction."""
    huge = {A: [3e19, 4e19, 0.0], B: [4e19, 3e19, 1e19]}
    tiny = {A: [1e-40, 2e-40], B: [2e-40, 1e-40]}
    for table in (huge, tiny):
        with scripted_server(embeddings=lambda texts, table=table: vectors_reply([table[t] for t in texts])) as server:
            code, out, _err = _compare(A, B, base_url=server.base_url, extra=("--no-cache",))
        assert code == 0
        expected = _cosine(table[A], table[B])  # 24/(5*sqrt(26)) = 0.941…, then 4/5
        assert json.loads(out)[0]["cosine"] == pytest.approx(expected, abs=1e-6)
    assert expected == pytest.approx(0.8)


@pytest.mark.parametrize("bad", [[0.0, 0.0, 0.0], [-0.0, 0.0, 0.0]], ids=["zeros", "negative zeros"])
def test_a_zero_vector_is_refused_naming_its_text_never_cached_and_sent_again_once_the_server_is_fixed(bad, isolated):
    good = {A: _vector(A, 3), B: _vector(B, 3)}
    state = {"fixed": False}

    def answer(texts: list[str]) -> Reply:
        return vectors_reply([good[t] if state["fixed"] or t != B else bad for t in texts])

    with scripted_server(embeddings=answer) as server:
        code, out, err = _compare(A, B, base_url=server.base_url)
        assert code == cli.EXIT_NO_MODEL and json.loads(out) == []  # no cosine at all, not 0.000
        assert "all zeros or not finite" in err and repr(B) in err and "nothing cached" in err
        state["fixed"] = True
        code, out, err = _compare(A, B, base_url=server.base_url)
        assert "2 text(s) to send" in err  # neither text was cached from the refused answer
        assert code == 0 and json.loads(out)[0]["cosine"] == pytest.approx(_cosine(good[A], good[B]), abs=1e-6)
        assert [sorted(b["input"]) for b in server.bodies] == [sorted([A, B])] * 2


def test_a_zero_vector_cached_by_an_older_version_is_not_served(isolated):
    """A row the old normalisation wrote as zeros is sent again, not counted as cached ("0 texts to send")."""
    from core.models.cache import EmbeddingCache, row_checksum, text_hash
    from core.models.loading import LoadedModel
    from core.models.registry import resolve

    good = {A: _vector(A, 3), B: _vector(B, 3)}
    with scripted_server(embeddings=lambda texts: vectors_reply([good[t] for t in texts])) as server:
        settings_ = endpoint.make_settings(NAME, server.base_url)
        key = LoadedModel(meta=resolve(NAME), backend=None, load_seconds=0, fingerprint=endpoint.fingerprint(settings_)).cache_key  # type: ignore[arg-type]
        cache = EmbeddingCache(isolated / "cache" / "embeddings.sqlite")
        blob = np.zeros(3, dtype=np.float32).tobytes()
        for text in (A, B):  # written as the old code wrote them (put_many now refuses zeros)
            cache._conn.execute(
                "INSERT INTO embeddings VALUES (?,?,?,?,?)", (key, text_hash(text), 3, blob, row_checksum(key, text_hash(text), blob))
            )
        cache.close()
        code, out, err = _compare(A, B, base_url=server.base_url)
    assert "2 text(s) to send" in err
    assert code == 0 and json.loads(out)[0]["cosine"] == pytest.approx(_cosine(good[A], good[B]), abs=1e-6)


def test_the_cache_never_stores_a_zero_vector(tmp_path):
    from core.models.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    cache.put_many("m", ["zero", "unit"], np.array([[0.0, 0.0], [0.6, 0.8]], dtype=np.float32))
    cache.clear_memory()
    assert list(cache.get_many("m", ["zero", "unit"])) == ["unit"]


# ---------------------------------------------------------------- The server's model changed size
def test_a_server_whose_model_changed_dimension_is_said_and_every_text_encoded_again(isolated):
    size = {"d": 16}
    with scripted_server(embeddings=lambda texts: vectors_reply([_vector(t, size["d"]) for t in texts])) as server:
        code, out, err = _compare(A, B, base_url=server.base_url)
        assert code == 0 and json.loads(out)[0]["cosine"] == pytest.approx(_cosine(_vector(A, 16), _vector(B, 16)), abs=1e-6)
        size["d"] = 32  # the operator swapped the model behind the same name
        C = "The patient has no known allergies"
        code, out, err = _compare(A, C, base_url=server.base_url)
        assert code == 0, err
        assert json.loads(out)[0]["cosine"] == pytest.approx(_cosine(_vector(A, 32), _vector(C, 32)), abs=1e-6)
        assert "now returns 32-dimensional vectors, its cached ones are 16-dimensional" in err and "encoded again" in err
        assert [sorted(b["input"]) for b in server.bodies[1:]] == [[C], [A]]  # A, cached at 16, was sent again
        # Both sizes are now in the cache under one name (B at 16, A and C at 32): a run over all three mixes none.
        code, out, err = _compare(B, C, base_url=server.base_url)
        assert code == 0 and json.loads(out)[0]["cosine"] == pytest.approx(_cosine(_vector(B, 32), _vector(C, 32)), abs=1e-6)


# ---------------------------------------------------------------- Credentials in a URL shown
@pytest.mark.parametrize(
    "url", ["http://user%3ASECRETPW%40127.0.0.1:9/v1", "http://user:SECRETPW@127.0.0.1:9/v1", "http://SECRETPW%40127.0.0.1:9/v1"]
)
def test_a_base_url_with_credentials_percent_encoded_or_not_is_refused_without_showing_them(url, isolated):
    code, out, err = _compare(A, B, base_url=url)
    assert code == cli.EXIT_USAGE and "must not carry credentials" in err and "SECRETPW" not in out + err


def test_every_url_shown_loses_its_user_info():
    from core.messages import redact

    line = (
        "cannot reach http://user%3ASECRETPW%40host.example/v1 (ConnectError); was http://u:SECRETPW@h/v1 or http%3A%2F%2Fu%3ASECRETPW%40h"
    )
    shown = redact(line)
    assert "SECRETPW" not in shown and "http://[redacted]@host.example/v1" in shown


# ---------------------------------------------------------------- Explain
def test_explain_on_an_endpoint_model_says_why_it_cannot_be_explained(isolated, capsys):
    code = cli.main(["explain", A, B, "--models", NAME, "--api-base", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_NO_MODEL
    assert "is served by an endpoint, so it cannot be explained here" in err and "tokenizer" in err
    assert "fast tokenizer" not in err and "cannot reach" not in err  # said before any request


# ---------------------------------------------------------------- Price and a hanging server
@pytest.mark.parametrize("price", ["nan", "inf", "-inf", "-1"])
def test_a_price_that_is_not_a_finite_amount_is_refused(price, capsys):
    assert (
        cli.main(["compare", A, B, "--models", NAME, "--api-base", "http://127.0.0.1:9/v1", f"--price-per-million-tokens={price}"])
        == cli.EXIT_USAGE
    )
    err = capsys.readouterr().err
    assert err.startswith("error: --price-per-million-tokens must be a finite number of dollars") and len(err.splitlines()) == 1


def test_a_server_that_accepts_and_never_answers_gives_a_timeout_line_after_bounded_tries(isolated, monkeypatch):
    monkeypatch.setenv(settings.ENDPOINT_TIMEOUT_ENV_VAR, "0.3")
    with scripted_server(embeddings=lambda texts: Reply(hang=True)) as server:
        code, out, err = _compare(A, B, base_url=server.base_url)
        posts = server.posts()
    assert code == cli.EXIT_NO_MODEL
    assert f"no answer from {server.base_url} within 0.3 s ({endpoint.MAX_RETRIES + 1} tries" in err
    assert f"${settings.ENDPOINT_TIMEOUT_ENV_VAR}" in err
    assert posts == endpoint.MAX_RETRIES + 1  # bounded: the default 15 s x 3 tries stays under a minute


def test_the_endpoint_timeout_setting_is_checked(monkeypatch, isolated):
    assert settings.endpoint_timeout() == settings.ENDPOINT_TIMEOUT_SECONDS
    assert settings.ENDPOINT_TIMEOUT_SECONDS * (endpoint.MAX_RETRIES + 1) <= 60
    for bad in ("0", "-1", "nan", "inf", "soon"):
        monkeypatch.setenv(settings.ENDPOINT_TIMEOUT_ENV_VAR, bad)
        with pytest.raises(ValueError, match=settings.ENDPOINT_TIMEOUT_ENV_VAR):
            settings.endpoint_timeout()
        assert cli.main(["compare", A, B, "--models", NAME, "--api-base", "http://127.0.0.1:9/v1"]) == cli.EXIT_USAGE  # one line, exit 2


@pytest.mark.parametrize(
    ("listing", "said"),
    [
        (Reply(body=b"<html>login</html>", headers={"Content-Type": "text/html"}), "/models answered with text/html, not JSON (18 bytes)"),
        (Reply(body={"data": None}), "/models answered with an object in JSON, not an object with a 'data' list of models"),
        (Reply(body=["scripted"]), "/models answered with a list in JSON"),
    ],
)
def test_a_models_listing_of_the_wrong_shape_is_one_line(listing, said, isolated):
    with scripted_server(models=lambda: listing) as server:
        code, _out, err = _compare(A, B, base_url=server.base_url)
    assert code == cli.EXIT_NO_MODEL and f"{server.base_url}{said}" in err and "NoneType" not in err and "Traceback" not in err
