"""The sidebar's model box (ui.state.custom_model_problem): what it refuses and what it says."""

from __future__ import annotations

import pytest

from ui import state


@pytest.mark.parametrize("text", ["not a model id at all!!", "owner/name/extra", "bad--name/x y", "a-" * 100])
def test_refuses_text_that_is_no_id_or_folder(text):
    problem = state.custom_model_problem(text)
    assert problem and "owner/name" in problem and "folder" in problem


@pytest.mark.parametrize(
    "text", ["intfloat/e5-small-v2", "MiniLM-L6", "bert-base-uncased", "./my-model", "/models/e5", "sentence-transformers/all-MiniLM-L6-v2"]
)
def test_accepts_ids_aliases_and_folders(text):
    assert state.custom_model_problem(text) is None


def test_empty_text_asks_for_one():
    assert state.custom_model_problem("  ") == "type a model id or a folder"


@pytest.mark.parametrize(
    "text", ["sk-proj-4f9a2b7c1d3e5f60718293a4b5c6", "hf_abcdefghijklmnopqrstuvwxyz012345", "AKIAIOSFODNN7EXAMPLE", "a" * 200]
)
def test_a_pasted_key_is_refused_without_being_echoed(text):
    """A key pasted into the model box is refused, and the message never shows it (nor a piece of it)."""
    problem = state.custom_model_problem(text)
    assert problem and "looks like a key" in problem and text[:8] not in problem and text[-8:] not in problem
