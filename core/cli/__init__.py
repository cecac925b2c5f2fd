"""The command line: ``python -m core`` and ``cosine-probe``."""
