"""A sentence-transformers StaticEmbedding folder (model2vec's kind) scores, tokenizes and caches through the CLI like any model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from static_embedding_support import build_static

from core.models.encode import encode_texts
from core.models.loading import load_model

A, B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return build_static(tmp_path_factory.mktemp("static-cli") / "tiny-static")


def test_compare_scores_a_static_folder_and_a_rerun_comes_from_the_cache(cli, folder, session_cache_dir):
    """Before: ``int(math.inf)`` on loading; then ``tokenizer.tokenize`` missing on scoring. Now a row, the cosine core computes."""
    vectors, _ = encode_texts(load_model(str(folder)), [A, B], None)
    want = float(np.dot(vectors[A], vectors[B]))
    code, out, err = cli("compare", A, B, "--models", str(folder), "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["model"] == str(folder)
    assert row["cosine"] == pytest.approx(want, abs=1e-6)
    # the, patient, is, allergic, to, pen, ##ici, ##llin (+ not): no [CLS]/[SEP], which a static model never receives
    assert (row["n_tokens_a"], row["n_tokens_b"]) == (8, 9)
    assert not row["truncated"]
    code, out, err = cli("compare", A, B, "--models", str(folder), "--json")
    assert code == 0 and json.loads(out)[0]["cosine"] == row["cosine"]


def test_tokens_shows_a_static_folders_pieces(cli, folder, session_cache_dir):
    code, out, err = cli("tokens", "xylophone penicillin", "--models", str(folder))
    assert code == 0, err
    assert "##" in out and "error" not in err.lower()
