"""The two papers: their suites, published tables, analyses and the reproduction of their tables."""
