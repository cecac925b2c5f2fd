"""Compare with a sentence-transformers StaticEmbedding folder added in the sidebar (AppTest): it scores beside MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_support import MINILM, compare_table, open_page
from static_embedding_support import build_static

from core import constants
from core.models.encode import encode_texts
from core.models.loading import load_model


def test_compare_scores_a_static_embedding_folder(tmp_path, session_cache_dir):
    folder = str(build_static(tmp_path / "tiny-static"))
    at = open_page("views/compare.py", timeout=300)
    at.text_input(key="custom_model_input").input(folder)
    next(b for b in at.button if b.label == "Add model").click().run()
    assert folder in at.session_state["selected_models"]
    at.button(key="cmp_compare").click().run()
    assert not at.exception
    assert not [e.value for e in at.error], [e.value for e in at.error]
    table = compare_table(at)
    assert {MINILM, folder} <= set(table["model id"])
    a, b = constants.EXAMPLE_SENTENCE_A, constants.EXAMPLE_SENTENCE_B
    vectors, _ = encode_texts(load_model(folder), [a, b], None)
    row = table[table["model id"] == folder].iloc[0]
    assert row["cosine"] == pytest.approx(float(np.dot(vectors[a], vectors[b])), abs=1e-4)
