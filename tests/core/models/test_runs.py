"""The one model loop (core.models.runs) and its options: every runner's warm path, errors and progress.

"A warm retrieval run loads no weights" is checked for each runner
by making a load fail: after a cold run fills a file cache and the process
forgets its models, a second run must give the same rows without loading.
"""

from __future__ import annotations

import pandas as pd
import pytest

from core import constants
from core.files.beir import read_beir
from core.files.triples import parse_triples
from core.models import loading, runs
from core.models.cache import EmbeddingCache
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.registry import MINILM_L6
from core.paths import DATA_DIR
from core.probes.retrieval.beir import run_beir
from core.probes.retrieval.corpus import run_corpus_probe
from core.probes.retrieval.run import run_retrieval
from core.probes.retrieval.suite_files import load_retrieval_suite
from core.probes.retrieval.triples import run_triples
from core.scoring.runner import run_pairs

MISSING = "no/such-model-here"
SAMPLES = DATA_DIR / "samples"


# ------------------------------------------------------------------ options


def test_options_are_frozen_hashable_and_equal_whatever_the_order_of_remote_code():
    a = EncodeOptions(device="cpu", batch_size=8, backend="torch", allow_remote_code=["b", "a"])
    b = EncodeOptions(device="cpu", batch_size=8, backend="torch", allow_remote_code=("a", "b"))
    assert a == b and hash(a) == hash(b)
    assert a.allow_remote_code == frozenset({"a", "b"})
    assert a.remote_code("a") and not a.remote_code("c")
    with pytest.raises(AttributeError):
        a.device = "cuda"  # type: ignore[misc]
    assert EncodeOptions(device=constants.DEVICE_AUTO, batch_size=None, backend=None, allow_remote_code=frozenset()) == DEFAULT_OPTIONS


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"device": "tpu"}, "device must be one of"),
        ({"batch_size": 0}, "batch_size must be a whole number of at least 1"),
        ({"batch_size": True}, "batch_size must be a whole number"),
        ({"batch_size": 2.5}, "batch_size must be a whole number"),
        ({"backend": "tensorrt"}, "backend must be one of"),
        ({"allow_remote_code": "my/model"}, "allow_remote_code must be a collection of model names"),
        ({"allow_remote_code": 3}, "allow_remote_code must be a collection"),
    ],
)
def test_bad_options_are_refused_with_what_is_accepted(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EncodeOptions(**kwargs)


# ------------------------------------------------------------------ the loop


def test_a_model_that_cannot_load_is_recorded_and_the_next_still_runs(minilm):
    errors: dict[str, str] = {}
    said: list[tuple[float, str]] = []
    handed = []
    for run in runs.model_runs([MISSING, MINILM_L6], DEFAULT_OPTIONS, cache=None, errors=errors, progress=lambda f, m: said.append((f, m))):
        handed.append(run.model_for(["a text"]))
    assert handed[0] is None and handed[1] is minilm  # the one in memory, as it is
    assert list(errors) == [MISSING] and MISSING in errors[MISSING]
    fractions = [f for f, _ in said]
    assert fractions == sorted(fractions) and fractions[0] >= 0.0 and fractions[-1] == 1.0
    assert said[-1][1] == f"{MINILM_L6}: done"
    assert not any(m.endswith(f"{MISSING}: done") for _, m in said)  # a failed model is not "done"


def test_a_failure_while_encoding_is_one_line_under_the_models_name(minilm, monkeypatch):
    errors: dict[str, str] = {}

    def broken(*args, **kwargs):
        raise RuntimeError("out of memory\nsecond line of a long trace")

    monkeypatch.setattr(runs, "encode_texts", broken)
    run = next(runs.model_runs([MINILM_L6], DEFAULT_OPTIONS, cache=None, errors=errors))
    assert run.encode(["a text"]) is None and run.failed
    assert errors == {MINILM_L6: f"{MINILM_L6}: failed while encoding (RuntimeError: out of memory)"}


def test_on_load_is_told_only_when_weights_load(minilm, tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    run_pairs(pd.DataFrame({"text_a": ["A cat."], "text_b": ["A dog."]}), [MINILM_L6], cache=cache)
    monkeypatch.setattr(loading, "_LOADED", {})  # as in a new process
    steps: list[str] = []
    warm = run_pairs(pd.DataFrame({"text_a": ["A cat."], "text_b": ["A dog."]}), [MINILM_L6], cache=cache, on_load=steps.append)
    assert steps == [] and warm.reports[MINILM_L6].n_encoded == 0
    run_pairs(pd.DataFrame({"text_a": ["A new cat."], "text_b": ["A dog."]}), [MINILM_L6], cache=cache, on_load=steps.append)
    assert steps == ["loading MiniLM-L6 (bundled weights) (1/1)"] or steps[0].startswith("MiniLM-L6: making its exact ONNX export")


# ------------------------------------------------------------------ warm runs load no weights


@pytest.fixture
def forgetful(monkeypatch):
    """After the cold run: the process forgets its models, and any load fails the test."""

    def forget() -> None:
        monkeypatch.setattr(loading, "_LOADED", {})

        def no_load(name, options):
            raise AssertionError(f"a warm run loaded {name}")

        monkeypatch.setattr(runs, "load", no_load)

    return forget


def _cold_then_warm(run, forget):
    cold = run()
    forget()
    return cold, run()


def test_a_warm_retrieval_run_loads_no_weights_and_gives_the_same_tables(minilm, tmp_path, forgetful):
    suite = load_retrieval_suite().head(4)
    cache_file = tmp_path / "c.sqlite"
    cold, warm = _cold_then_warm(lambda: run_retrieval(suite, [MINILM_L6], cache=EmbeddingCache(cache_file), n_resamples=50), forgetful)
    assert not warm.errors and warm.reports[MINILM_L6].n_encoded == 0
    pd.testing.assert_frame_equal(warm.scores, cold.scores)
    pd.testing.assert_frame_equal(warm.ranking, cold.ranking)


def test_a_warm_corpus_probe_loads_no_weights_even_for_the_variants_it_adds(minilm, tmp_path, forgetful):
    corpus = ["The patient is allergic to penicillin.", "The company acquired the startup in 2019.", "Most of the trials succeeded."]
    queries = ["Is the patient allergic to penicillin?", "When was the startup acquired?"]
    cache_file = tmp_path / "c.sqlite"
    cold, warm = _cold_then_warm(
        lambda: run_corpus_probe(corpus, queries, [MINILM_L6], cache=EmbeddingCache(cache_file), n_resamples=50), forgetful
    )
    assert not warm.errors and not cold.pairs.empty
    pd.testing.assert_frame_equal(warm.pairs, cold.pairs)


def test_a_warm_triples_run_loads_no_weights(minilm, tmp_path, forgetful):
    data = (
        b"anchor\tpositive\tnegative\nThe drug is safe.\tThe medicine is safe.\tThe drug is not safe.\n"
        b"Google acquired YouTube.\tYouTube was bought by Google.\tYouTube acquired Google.\n"
    )
    triples = parse_triples(data, "t.tsv")
    cache_file = tmp_path / "c.sqlite"
    cold, warm = _cold_then_warm(lambda: run_triples(triples, [MINILM_L6], cache=EmbeddingCache(cache_file), n_resamples=50), forgetful)
    assert not warm.errors
    pd.testing.assert_frame_equal(warm.scores, cold.scores)


def test_a_warm_beir_run_loads_no_weights_chunk_after_chunk(minilm, tmp_path, forgetful):
    folder = read_beir(SAMPLES / "nli-beir", "test")
    cache_file = tmp_path / "c.sqlite"
    # Chunks of 5 passages: each one is served from the cache on its own.
    cold, warm = _cold_then_warm(lambda: run_beir(folder, [MINILM_L6], cache=EmbeddingCache(cache_file), chunk_rows=5), forgetful)
    assert not warm.errors and warm.reports[MINILM_L6].n_encoded == 0
    pd.testing.assert_frame_equal(warm.ranking, cold.ranking)


def test_progress_never_goes_back_when_a_later_chunk_needs_the_weights(minilm, tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    run_pairs(pd.DataFrame({"text_a": ["First cached."], "text_b": ["Second cached."]}), [MINILM_L6], cache=cache)
    monkeypatch.setattr(loading, "_LOADED", {})
    said: list[float] = []
    run = next(runs.model_runs([MINILM_L6], DEFAULT_OPTIONS, cache=cache, errors={}, progress=lambda f, m: said.append(f)))
    assert run.encode(["First cached.", "Second cached."], share=0.5) is not None and not run.weights_loaded
    run.note(0.5, "half way")
    assert run.encode(["A text no run has seen."], share=0.8) is not None and run.weights_loaded  # loads now
    assert said == sorted(said) and said[-1] == pytest.approx(0.8)


# ------------------------------------------------------------------ every command's flags reach its models


@pytest.fixture
def seen_options(monkeypatch):
    """The options of every model turn and every direct load a command makes."""
    seen: list[EncodeOptions] = []
    original_post_init, original_load = runs.ModelRun.__post_init__, runs.load

    def post_init(self):
        seen.append(self.options)
        original_post_init(self)

    def load(name, options):
        seen.append(options)
        return original_load(name, options)

    monkeypatch.setattr(runs.ModelRun, "__post_init__", post_init)
    monkeypatch.setattr(runs, "load", load)
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, "off")
    return seen


FLAGS = ["--models", MINILM_L6, "--device", "cpu", "--batch-size", "3", "--backend", "torch", "--no-cache"]


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "A cat sat.", "A cat slept."],
        ["explain", "A cat sat.", "A cat slept.", "--method", "occlusion"],
        ["retrieval", "--triples", str(SAMPLES / "nli-triples.csv"), "--quiet"],
        ["retrieval", "--beir", str(SAMPLES / "nli-beir"), "--quiet"],
    ],
    ids=["compare", "explain", "retrieval-triples", "retrieval-beir"],
)
def test_device_batch_size_and_backend_reach_every_model_a_command_runs(argv, seen_options, minilm, capsys):
    from core.cli import main as cli

    assert cli.main([*argv, *FLAGS]) == 0, capsys.readouterr().err
    assert seen_options, "the command ran no model"
    assert {(o.device, o.batch_size, o.backend) for o in seen_options} == {("cpu", 3, "torch")}


def test_the_run_command_takes_the_flags_and_the_engine(seen_options, minilm, tmp_path, capsys):
    from core.cli import main as cli

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("text_a\ttext_b\nA cat sat.\tA cat slept.\n", encoding="utf-8")
    assert cli.main(["run", "--suite", str(pairs), "--out", str(tmp_path / "out"), "--quiet", *FLAGS]) == 0, capsys.readouterr().err
    assert {(o.device, o.batch_size, o.backend, o.engine.name) for o in seen_options} == {("cpu", 3, "torch", "local")}
