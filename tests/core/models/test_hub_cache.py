"""The papers' models as users have them, through a real Hugging Face cache, offline.

Tiny randomly initialised stand-ins (tests/hub_cache_support.py) are saved
under the papers' ids with their repositories' own configuration and
installed in a temporary ``HF_HOME`` exactly as huggingface_hub lays out a
download; the hub endpoint refuses connections.  Then the loader, the CLI's
``models``, ``compare`` and ``run`` must find and use them; the pinned
revision must be honoured when cached and another snapshot used with a note
when not; each stand-in must pool and prompt as its configuration and the
registry say (checked against the transformer's hidden states by hand); and
where the registry's dimension, token limit or pooling disagrees with the
loaded model, the loaded model wins and a note says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hub_cache_support import OTHER_COMMIT, StandIn, build_standin, forget, hand_vectors, install, use_hf_home

from core import constants, lexicon
from core.cli import main as cli
from core.models import loading
from core.models.encode import encode_texts
from core.models.loading import ModelUnavailable, availability, load_model
from core.models.registry import BGE_LARGE, GTE_LARGE, MXBAI, NOMIC, REGISTRY

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
MXBAI_QUERY = "Represent this sentence for searching relevant passages: "
NOMIC_PROMPTS = {
    "search_query": "search_query: ",
    "search_document": "search_document: ",
    "classification": "classification: ",
    "clustering": "clustering: ",
}
PINNED = {name: REGISTRY[name].revision for name in (BGE_LARGE, MXBAI, NOMIC, GTE_LARGE)}

# As the real repositories configure them (BGE: CLS + Normalize; mxbai: CLS, prompts listed, none by
# default; Nomic: mean + Normalize with its task prompts).  The GTE-large stand-in departs from its
# registry record on purpose: CLS instead of mean, 16 tokens instead of 512, a default prompt.
SPECS = {
    BGE_LARGE: StandIn(BGE_LARGE, pooling="cls", seed=1),
    MXBAI: StandIn(MXBAI, pooling="cls", normalize=False, prompts={"query": MXBAI_QUERY, "passage": ""}, seed=2),
    NOMIC: StandIn(NOMIC, pooling="mean", prompts=NOMIC_PROMPTS, seed=3),
    GTE_LARGE: StandIn(GTE_LARGE, pooling="cls", max_seq_length=16, prompts={"query": "query: "}, default_prompt_name="query", seed=4),
}


@pytest.fixture(scope="module")
def standins(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("standins")
    return {name: build_standin(spec, root / name.replace("/", "--")) for name, spec in SPECS.items()}


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty hub cache in a fresh HF_HOME, the hub unreachable, no stand-in loaded."""
    forget(*SPECS)
    yield use_hf_home(monkeypatch, tmp_path / "hf-home")
    forget(*SPECS)


def cli_run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def notes_in(err: str) -> list[str]:
    return [line.removeprefix("note: ") for line in err.splitlines() if line.startswith("note: ")]


# ------------------------------------------------------------------ layout


def test_the_cache_is_laid_out_as_huggingface_hub_writes_it(hub, standins):
    from huggingface_hub import scan_cache_dir, snapshot_download

    snapshot = install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE])
    info = scan_cache_dir(hub)
    assert not info.warnings, info.warnings
    (repo,) = info.repos
    assert (repo.repo_id, repo.repo_type) == (BGE_LARGE, "model")
    (revision,) = repo.revisions
    assert revision.commit_hash == PINNED[BGE_LARGE] and revision.refs == frozenset({"main"})
    expected = {p.relative_to(standins[BGE_LARGE]).as_posix() for p in standins[BGE_LARGE].rglob("*") if p.is_file()}
    assert {f.file_path.relative_to(snapshot).as_posix() for f in revision.files} == expected
    for f in revision.files:  # relative symlinks into blobs/, as the client makes them
        assert f.file_path.is_symlink() and not os.path.isabs(os.readlink(f.file_path))
        assert f.blob_path.parent == hub / "models--BAAI--bge-large-en-v1.5" / "blobs"
    # The client itself resolves the snapshot offline, by the pinned commit and through refs/main.
    for revision_asked in (PINNED[BGE_LARGE], None):
        assert Path(snapshot_download(BGE_LARGE, revision=revision_asked, local_files_only=True)) == snapshot


def test_an_incomplete_snapshot_is_not_reported_cached(hub, standins):
    snapshot = install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE])
    (snapshot / "model.safetensors").unlink()  # an interrupted download
    avail = availability(BGE_LARGE)
    assert not avail.available and "not in the local Hugging Face cache" in avail.reason


# ----------------------------------------------------------- the CLI finds them


def test_models_reports_the_standins_cached_and_keeps_remote_code_behind_the_opt_in(hub, standins, capsys):
    for name in (BGE_LARGE, MXBAI, NOMIC):
        install(hub, name, standins[name], PINNED[name])
    code, out, err = cli_run(capsys, "models", "--json")
    assert code == 0, err
    rows = {r["model"]: r for r in json.loads(out)}
    for name in (BGE_LARGE, MXBAI):
        assert (rows[name]["status"], rows[name]["available"]) == ("cached", True)
        assert rows[name]["reason"] == f"found in the local Hugging Face cache (snapshot {PINNED[name][:12]})"
    # Nomic's registry record says it runs repository code: cached or not, it waits for the opt-in.
    assert rows[NOMIC]["status"] == "needs-opt-in" and not rows[NOMIC]["available"]
    # Not in the cache, and the hub refuses: unavailable, and said why.
    assert rows[GTE_LARGE]["status"] == "unavailable" and "unreachable" in rows[GTE_LARGE]["reason"]
    code, out, _ = cli_run(capsys, "models", "--json", "--trust-remote-code", NOMIC)
    assert {r["model"]: r["status"] for r in json.loads(out)}[NOMIC] == "cached"


def test_compare_scores_with_cls_pooled_standins(hub, standins, capsys):
    snapshots = {name: install(hub, name, standins[name], PINNED[name]) for name in (BGE_LARGE, MXBAI)}
    code, out, err = cli_run(capsys, "compare", A, B, "--models", BGE_LARGE, MXBAI, "--json", "--no-cache")
    assert code == 0, err
    rows = {r["model"]: r for r in json.loads(out)}
    assert set(rows) == {BGE_LARGE, MXBAI}
    for name, snapshot in snapshots.items():
        hand = hand_vectors(snapshot, [A, B], 512)
        cls_cosine, mean_cosine = float(hand["cls"][0] @ hand["cls"][1]), float(hand["mean"][0] @ hand["mean"][1])
        assert rows[name]["cosine"] == pytest.approx(cls_cosine, abs=1e-5)
        assert abs(cls_cosine - mean_cosine) > 1e-3  # the check can tell the two poolings apart
        assert rows[name]["device"] == "cpu"
    assert f"{BGE_LARGE}: the loaded model's embeddings have 32 dimensions, the registry says 1024; using the loaded model's" in notes_in(
        err
    )


def test_run_scores_a_suite_with_a_cached_standin(hub, standins, capsys, tmp_path):
    snapshot = install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE])
    out_dir = tmp_path / "run"
    code, _, err = cli_run(capsys, "run", "--suite", "baseline", "--out", str(out_dir), "--models", BGE_LARGE, "--quiet", "--no-cache")
    assert code == 0, err
    pairs = pd.read_csv(out_dir / "pairs.csv")
    assert set(pairs[constants.COL_MODEL]) == {BGE_LARGE} and len(pairs) == sum(lexicon.SUITE_COUNTS[constants.SUITE_BASELINE].values())
    sample = pairs.sample(3, random_state=0)
    for row in sample.itertuples():
        hand = hand_vectors(snapshot, [row.text_a, row.text_b], 512)["cls"]
        assert row.cosine == pytest.approx(float(hand[0] @ hand[1]), abs=1e-5)
    encoding = json.loads((out_dir / "summary.json").read_text())["encoding"][BGE_LARGE]
    assert encoding["device"] == "cpu" and encoding["batch_size"] == 32
    assert any("32 dimensions" in n for n in encoding["notes"])


# ------------------------------------------------------------- revisions


def test_the_pinned_revision_is_honoured_when_cached(hub, standins):
    """The user's main moved on to another commit, but the pinned one is cached too: the pin wins."""
    install(hub, BGE_LARGE, standins[BGE_LARGE], OTHER_COMMIT)
    install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE], ref=None)
    assert availability(BGE_LARGE).reason == f"found in the local Hugging Face cache (snapshot {PINNED[BGE_LARGE][:12]})"
    model = load_model(BGE_LARGE)
    assert model.meta.revision == PINNED[BGE_LARGE]
    assert not any("revision" in note for note in model.notes)
    # The embedding cache key carries the snapshot's commit (core.models.fingerprint).
    assert model.fingerprint == f"commit:{PINNED[BGE_LARGE]}" and PINNED[BGE_LARGE] in model.cache_key


def test_another_snapshot_is_used_with_a_note(hub, standins, capsys):
    install(hub, BGE_LARGE, standins[BGE_LARGE], OTHER_COMMIT)
    pinned, other = PINNED[BGE_LARGE], OTHER_COMMIT
    avail = availability(BGE_LARGE)
    assert (
        avail.status == "cached"
        and avail.reason
        == f"found in the local Hugging Face cache (snapshot {other[:12]}; the pinned revision {pinned[:12]} is not cached)"
    )
    model = load_model(BGE_LARGE)
    assert model.meta.revision == other
    assert model.fingerprint == f"commit:{other}" and other in model.cache_key and pinned not in model.cache_key
    expected = (
        f"{BGE_LARGE}: the pinned revision {pinned[:12]} is not in the local Hugging Face cache; "
        f"using the cached snapshot {other[:12]}, whose weights may differ from the ones the papers measured"
    )
    assert expected in model.notes
    code, out, err = cli_run(capsys, "compare", A, B, "--models", BGE_LARGE, "--json", "--no-cache")
    assert code == 0 and json.loads(out)[0]["model"] == BGE_LARGE
    assert expected in notes_in(err)


# ------------------------------------------------------ pooling and prompts


def test_cls_pooling_gives_the_cls_vector_not_the_mean(hub, standins):
    snapshot = install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE])
    texts = [A, B, "Stock prices fell sharply in March"]
    vectors, _ = encode_texts(load_model(BGE_LARGE), texts, None)
    hand = hand_vectors(snapshot, texts, 512)
    ours = np.stack([vectors[t] for t in texts])
    np.testing.assert_allclose(ours, hand["cls"], atol=1e-5)
    assert np.abs(ours - hand["mean"]).max() > 0.05


def test_the_nomic_prompt_is_applied_as_the_registry_says_behind_the_opt_in(hub, standins, capsys):
    snapshot = install(hub, NOMIC, standins[NOMIC], PINNED[NOMIC])
    with pytest.raises(ModelUnavailable, match="opt in to remote code"):
        load_model(NOMIC)
    code, _, err = cli_run(capsys, "compare", A, B, "--models", NOMIC, "--no-cache")
    assert code == cli.EXIT_NO_MODEL and "runs code from its repository: opt in to remote code" in err

    model = load_model(NOMIC, allow_remote_code=True)
    prompt = REGISTRY[NOMIC].prompt
    assert prompt == "search_query: " and model.meta.prompt == prompt
    vectors, report = encode_texts(model, [A, B], None)
    prompted = hand_vectors(snapshot, [prompt + A, prompt + B], 512)["mean"]
    bare = hand_vectors(snapshot, [A, B], 512)["mean"]
    np.testing.assert_allclose(np.stack([vectors[A], vectors[B]]), prompted, atol=1e-5)
    assert np.abs(np.stack([vectors[A], vectors[B]]) - bare).max() > 1e-3
    assert report.token_counts[A] == len(model.tokenizer(prompt + A)["input_ids"])
    code, out, err = cli_run(capsys, "compare", A, B, "--models", NOMIC, "--trust-remote-code", NOMIC, "--json", "--no-cache")
    assert code == 0, err
    assert json.loads(out)[0]["cosine"] == pytest.approx(float(prompted[0] @ prompted[1]), abs=1e-5)
    assert f"{NOMIC}: the loaded model keeps 512 tokens per text, the registry says 8192; truncation follows the loaded model" in notes_in(
        err
    )


def test_a_prompt_the_registry_does_not_give_is_not_applied(hub, standins):
    """mxbai's config lists a retrieval query prompt, but the failure paper ran it without one, and so does the registry."""
    snapshot = install(hub, MXBAI, standins[MXBAI], PINNED[MXBAI])
    model = load_model(MXBAI)
    assert REGISTRY[MXBAI].prompt == "" and model.meta.prompt == ""
    vectors, _ = encode_texts(model, [A], None)
    np.testing.assert_allclose(vectors[A], hand_vectors(snapshot, [A], 512)["cls"][0], atol=1e-5)
    assert np.abs(vectors[A] - hand_vectors(snapshot, [MXBAI_QUERY + A], 512)["cls"][0]).max() > 1e-3
    assert not any("prompt" in note for note in model.notes)


# ------------------------------------------------ the loaded model wins


def test_where_the_registry_disagrees_the_loaded_model_wins_and_says_so(hub, standins):
    snapshot = install(hub, GTE_LARGE, standins[GTE_LARGE], PINNED[GTE_LARGE])
    registered = REGISTRY[GTE_LARGE]
    assert (registered.pooling, registered.max_seq_length, registered.dimension, registered.prompt) == ("mean", 512, 1024, "")
    model = load_model(GTE_LARGE)
    assert (model.meta.pooling, model.meta.max_seq_length, model.meta.dimension, model.meta.prompt) == ("cls", 16, 32, "")
    assert set(model.notes) == {
        f"{GTE_LARGE}: the loaded model's embeddings have 32 dimensions, the registry says 1024; using the loaded model's",
        f"{GTE_LARGE}: the loaded model keeps 16 tokens per text, the registry says 512; truncation follows the loaded model",
        f"{GTE_LARGE}: the loaded model pools by cls, the registry says mean; using the loaded model's pooling",
        f"{GTE_LARGE}: the model's config sets a default prompt 'query: '; no prompt is applied, as the papers ran it",
    }
    long_text = "The patient is allergic to penicillin and to amoxicillin, and was given a cephalosporin instead of it."
    vectors, report = encode_texts(model, [long_text], None)
    # Its own pooling, its own limit, no prompt: the CLS state of the first 16 tokens.
    np.testing.assert_allclose(vectors[long_text], hand_vectors(snapshot, [long_text], 16)["cls"][0], atol=1e-5)
    (cut,) = report.truncated
    assert cut.max_tokens == 16 and cut.n_tokens == len(model.tokenizer(long_text)["input_ids"]) > 16


def test_loading_honours_the_device_and_records_it(hub, standins):
    install(hub, BGE_LARGE, standins[BGE_LARGE], PINNED[BGE_LARGE])
    model = load_model(BGE_LARGE, device="cpu")
    assert model.device == "cpu" and (BGE_LARGE, False, "cpu") in loading._LOADED
    assert load_model(BGE_LARGE, device="auto") is model  # auto is the CPU here
