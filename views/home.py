"""Home: what cosine-probe shows and where to start."""

import streamlit as st

from core.models import registry
from ui import resources
from ui.state import short

st.title("cosine-probe")
st.markdown(
    "**Where sentence-embedding similarity lies.** Before you ship a semantic search or RAG system, "
    "see how your embedding model scores sentences that differ in exactly the way that matters: "
    "a negation, a dosage, who acquired whom, before or after, all or none, a hedge, an invented drug name."
)
left, right = st.columns(2)
with left:
    st.subheader("Start here")
    st.page_link("views/compare.py", label="Compare two sentences under every model", icon="⚖️")
    st.page_link("views/perturb.py", label="Generate failure-mode variants of your sentence", icon="🧬")
    st.page_link("views/tokenizer.py", label="See how tokenizers split invented words", icon="🔤")
    st.page_link("views/oov.py", label="Reproduce the OOV-robustness paper", icon="🧪")
    st.page_link("views/invented.py", label="Invent words and measure OOV with k of them per entity", icon="🔮")
    st.page_link("views/failure_modes.py", label="Reproduce the failure-modes paper", icon="🚨")
    st.page_link("views/your_data.py", label="Test your own sentence pairs", icon="📄")
    st.page_link("views/papers.py", label="Published figures vs recomputed", icon="📚")
with right:
    st.subheader("Models")
    rows = []
    for name, meta in registry.REGISTRY.items():
        avail = resources.model_availability(name)
        rows.append({"model": short(name), "id": name, "source": meta.source, "dim": meta.dimension, "status": avail.status, "why": avail.reason})
    st.dataframe(rows, hide_index=True, width="stretch")
st.caption(
    "The papers' numbers are claims, not truth: every page shows what the bundled models actually compute, "
    "next to what was published."
)
