"""Home: what cosine-probe shows and where to start."""

import pandas as pd
import streamlit as st

from core.models import registry
from ui import resources, widgets
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
    st.page_link("views/your_corpus.py", label="Audit your corpus for passages a retriever cannot tell apart", icon="🔎")
    st.page_link("views/papers.py", label="Published figures vs recomputed", icon="📚")
with right:
    st.subheader("Models")
    rows = []
    for name, meta in registry.REGISTRY.items():
        avail = resources.model_availability(name)
        rows.append({"model": short(name), "status": avail.status, "why": avail.reason, "source": meta.source, "dim": meta.dimension, "id": name})
    # Status and why first and wrapped: they are what a newcomer needs, and they used to sit past a sideways scroll.
    widgets.results_table(pd.DataFrame(rows), "models", lead=("model", "status", "why"), details=("id",),
                          column_config={"why": st.column_config.TextColumn("why", width="large")})
st.caption(
    "The papers' numbers are claims, not truth: every page shows what the bundled models actually compute, "
    "next to what was published."
)
