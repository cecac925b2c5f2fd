"""cosine-probe core: models, tokenization, cached encoding and statistics.

Never imports streamlit, so the CLI and the tests use it directly.
"""
