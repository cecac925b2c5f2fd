"""cosine-probe: where sentence-embedding similarity lies.

Router: draws the shared sidebar (models, threshold) and runs the page the
user picked.  Models load lazily, on the first page that needs them.
"""

import streamlit as st

from ui.state import sidebar

st.set_page_config(page_title="cosine-probe", page_icon="🧭", layout="wide")

PAGES = [
    st.Page("views/home.py", title="Home", icon="🏠", default=True),
    st.Page("views/compare.py", title="Compare", icon="⚖️", url_path="compare"),
    st.Page("views/perturb.py", title="Perturbations", icon="🧬", url_path="perturb"),
    st.Page("views/tokenizer.py", title="Tokenizer", icon="🔤", url_path="tokenizer"),
    st.Page("views/oov.py", title="OOV robustness", icon="🧪", url_path="oov"),
    st.Page("views/invented.py", title="Invented words", icon="🔮", url_path="invented-words"),
    st.Page("views/failure_modes.py", title="Failure modes", icon="🚨", url_path="failure-modes"),
    st.Page("views/retrieval.py", title="Retrieval", icon="🎯", url_path="retrieval"),
    st.Page("views/tune.py", title="Tune", icon="🛠️", url_path="tune"),
    st.Page("views/your_data.py", title="Your data", icon="📄", url_path="your-data"),
    st.Page("views/your_corpus.py", title="Your corpus", icon="🔎", url_path="your-corpus"),
    st.Page("views/index_settings.py", title="Index settings", icon="🗜️", url_path="index-settings"),
    st.Page("views/papers.py", title="Papers", icon="📚", url_path="papers"),
    st.Page("views/history.py", title="History", icon="🗂️", url_path="history"),
]

page = st.navigation(PAGES, expanded=True)  # every page in the sidebar: collapsed, it shows 10 and hides the rest behind "View more"
sidebar()
page.run()
