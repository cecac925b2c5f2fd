"""The registry's record against what a loaded model reports: the loaded model wins, a note says so."""

from __future__ import annotations

import pytest

from core.models.reconcile import Observed, reconcile
from core.models.registry import BGE_LARGE, MINILM_L6, MXBAI, NOMIC, REGISTRY, resolve

BGE = REGISTRY[BGE_LARGE]
AS_REGISTERED = Observed(dimension=1024, max_seq_length=512, pooling="cls", revision=BGE.revision)


def test_a_model_as_registered_gets_no_note_and_keeps_its_record():
    effective, notes = reconcile(BGE, AS_REGISTERED)
    assert notes == ()
    assert effective == BGE


def test_each_disagreement_is_corrected_and_noted_once():
    observed = Observed(dimension=32, max_seq_length=128, pooling="mean", revision="f" * 40)
    effective, notes = reconcile(BGE, observed)
    assert (effective.dimension, effective.max_seq_length, effective.pooling, effective.revision) == (32, 128, "mean", "f" * 40)
    assert (effective.name, effective.prompt, effective.hf_id) == (BGE.name, BGE.prompt, BGE.hf_id)
    assert notes == (
        f"the pinned revision {BGE.revision[:12]} is not in the local Hugging Face cache; using the cached snapshot ffffffffffff, "
        "whose weights may differ from the ones the papers measured",
        "the loaded model's embeddings have 32 dimensions, the registry says 1024; using the loaded model's",
        "the loaded model keeps 128 tokens per text, the registry says 512; truncation follows the loaded model",
        "the loaded model pools by mean, the registry says cls; using the loaded model's pooling",
    )


def test_weights_not_from_a_snapshot_keep_the_pinned_revision_silently():
    effective, notes = reconcile(BGE, Observed(dimension=1024, max_seq_length=512, pooling="cls", revision=None))
    assert effective.revision == BGE.revision and notes == ()


def test_an_unknown_pooling_keeps_the_registry_pooling_without_a_note():
    effective, notes = reconcile(BGE, Observed(dimension=1024, max_seq_length=512, pooling="unknown"))
    assert effective.pooling == "cls" and notes == ()


def test_an_unregistered_model_is_described_without_notes():
    meta = resolve("some-org/some-model")
    effective, notes = reconcile(meta, Observed(dimension=256, max_seq_length=128, pooling="cls", revision="a" * 40))
    assert (effective.dimension, effective.max_seq_length, effective.pooling, effective.revision) == (256, 128, "cls", "a" * 40)
    assert notes == ()


def test_the_registry_prompt_is_applied_as_written():
    nomic = REGISTRY[NOMIC]
    effective, notes = reconcile(nomic, Observed(dimension=768, max_seq_length=8192, pooling="mean", default_prompt="search_query: "))
    assert effective.prompt == "search_query: " and notes == ()
    effective, notes = reconcile(nomic, Observed(dimension=768, max_seq_length=8192, pooling="mean", default_prompt="search_document: "))
    assert effective.prompt == "search_query: "
    assert notes == (
        "the model's config sets a default prompt 'search_document: '; the registry's prompt 'search_query: ' is applied, as the papers "
        "ran it",
    )


def test_a_registered_model_never_gets_its_config_default_prompt():
    mxbai = REGISTRY[MXBAI]
    effective, notes = reconcile(mxbai, Observed(dimension=1024, max_seq_length=512, pooling="cls", default_prompt="query: "))
    assert effective.prompt == ""
    assert notes == ("the model's config sets a default prompt 'query: '; no prompt is applied, as the papers ran it",)


def test_an_unregistered_model_gets_its_config_default_prompt_with_a_note():
    meta = resolve("some-org/instruct-model")
    effective, notes = reconcile(meta, Observed(dimension=64, max_seq_length=128, pooling="mean", default_prompt="query: "))
    assert effective.prompt == "query: "
    assert notes == ("applying the model's default prompt 'query: ' from its sentence-transformers config",)


def test_bundled_records_match_what_their_weights_report():
    minilm = REGISTRY[MINILM_L6]
    assert reconcile(minilm, Observed(dimension=384, max_seq_length=256, pooling="mean")) == (minilm, ())


@pytest.mark.parametrize(("dimension", "max_seq_length"), [(0, 512), (1024, 0), (-1, 512)])
def test_impossible_observations_are_refused(dimension, max_seq_length):
    with pytest.raises(ValueError, match="must be positive"):
        reconcile(BGE, Observed(dimension=dimension, max_seq_length=max_seq_length))
