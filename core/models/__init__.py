"""Models: the registry, bundled weights, backends, loading, tokenizers, encoding and the embedding cache."""
