"""Test support: a tiny randomly initialised cross-encoder (relevance or NLI) saved to a folder, and its logits computed directly.

Shared by the reranker mitigation's tests and the corpus audit's judge.
"""

from __future__ import annotations

import numpy as np

NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def tiny_cross_encoder(folder, num_labels: int, id2label: dict[int, str] | None):
    """A randomly initialised 2-layer BERT classifier with MiniLM's tokenizer, saved to ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from core.models.bundled import tokenizer_path

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path("minilm_l6")))
    labels = id2label or {i: f"LABEL_{i}" for i in range(num_labels)}
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=num_labels,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
        initializer_range=0.5,  # large random weights, so different pairs get clearly different logits
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer


def direct_logits(model, tokenizer, pairs: list[tuple[str, str]]) -> np.ndarray:
    import torch

    batch = tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        return model(**batch).logits.numpy().astype(float)
