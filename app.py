"""cosine-probe: where sentence-embedding similarity lies.

Router: draws the shared sidebar (models, threshold) and runs the page the
user picked.  Models load lazily, on the first page that needs them.
"""

import streamlit as st

from ui.state import sidebar

st.set_page_config(page_title="cosine-probe", page_icon="🧭", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon="🏠", default=True),
    st.Page("pages/compare.py", title="Compare", icon="⚖️", url_path="compare"),
    st.Page("pages/tokenizer.py", title="Tokenizer", icon="🔤", url_path="tokenizer"),
    st.Page("pages/oov.py", title="OOV robustness", icon="🧪", url_path="oov"),
    st.Page("pages/failure_modes.py", title="Failure modes", icon="🚨", url_path="failure-modes"),
    st.Page("pages/your_data.py", title="Your data", icon="📄", url_path="your-data"),
    st.Page("pages/papers.py", title="Papers", icon="📚", url_path="papers"),
]

page = st.navigation(PAGES)
sidebar()
page.run()
