"""The sidebar's model box (ui.state.custom_model_problem): what it refuses and what it says."""

from __future__ import annotations

import pytest

from ui import state


@pytest.mark.parametrize("text", ["not a model id at all!!", "owner/name/extra", "bad--name/x y", "a" * 200])
def test_refuses_text_that_is_no_id_or_folder(text):
    problem = state.custom_model_problem(text)
    assert problem and "owner/name" in problem and "folder" in problem


@pytest.mark.parametrize("text", ["intfloat/e5-small-v2", "MiniLM-L6", "bert-base-uncased", "./my-model", "/models/e5", "sentence-transformers/all-MiniLM-L6-v2"])
def test_accepts_ids_aliases_and_folders(text):
    assert state.custom_model_problem(text) is None


def test_empty_text_asks_for_one():
    assert state.custom_model_problem("  ") == "type a model id or a folder"
