"""A tiny sentence-transformers ``StaticEmbedding`` model (model2vec's kind) saved to a folder, built offline.

The token vectors are the bundled MiniLM's own input embeddings (its
``embeddings.word_embeddings``, 384 wide), projected to 32 dimensions by a
seeded random matrix: cheap, deterministic, and close enough to a real static
model that "cat" and "cats" land near each other.  The bundled MiniLM
WordPiece ``tokenizer.json`` is its tokenizer, with its truncation at 128
switched off, so the model has no limit of its own (sentence-transformers
reports ``math.inf``), as a model2vec model from the hub has none.
Nothing here is collected as a test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.models.bundled import bundle_path, tokenizer_path

DIMENSION = 32


def build_static(folder: Path, *, truncate_at: int | None = None, seed: int = 0) -> Path:
    """Save the tiny static model into ``folder`` (``truncate_at``: keep the tokenizer's truncation at that many tokens)."""
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path("minilm_l6") / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    if truncate_at is not None:
        tok.enable_truncation(max_length=truncate_at)
    weights = load_file(str(bundle_path("minilm_l6") / "model.safetensors"))
    words = next(v for k, v in weights.items() if k.endswith("word_embeddings.weight")).astype(np.float32)
    projection = np.random.default_rng(seed).standard_normal((words.shape[1], DIMENSION)).astype(np.float32)
    model = SentenceTransformer(modules=[StaticEmbedding(tok, embedding_weights=words @ projection)], device="cpu")
    model.save(str(folder))
    return folder
