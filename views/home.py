"""Home: what cosine-probe shows and where to start."""

import pandas as pd
import streamlit as st

from core.models import registry
from ui import resources, widgets
from ui.state import short

EXAMPLE_A, EXAMPLE_B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
EXAMPLE_MODEL, EXAMPLE_COSINE = "all-MiniLM-L6-v2", "0.947"  # the README's figure (issue 33)

st.title("cosine-probe")
st.markdown(
    "**Where sentence-embedding similarity lies.** Before you ship a semantic search or RAG system, "
    "see how your embedding model scores sentences that differ in exactly the way that matters: "
    "a negation, a dosage, who acquired whom, before or after, all or none, a hedge, an invented drug name."
)
# Issue 33: one number a newcomer can check on Compare, with the README's pair and model.
st.info(
    f'**Example:** {EXAMPLE_MODEL} scores *"{EXAMPLE_A}"* against *"{EXAMPLE_B}"* at **{EXAMPLE_COSINE}**: '
    "nearly the same meaning, by cosine. Open **Compare** to score it on your models.",
    icon="💡",
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
    st.page_link("views/retrieval.py", label="Rank passages: does a contradicting variant outrank the paraphrase?", icon="🎯")
    st.page_link("views/tune.py", label="Fine-tune a model on its failures and see what it costs", icon="🛠️")
    st.page_link("views/your_data.py", label="Test your own sentence pairs", icon="📄")
    st.page_link("views/your_corpus.py", label="Audit your corpus for passages a retriever cannot tell apart", icon="🔎")
    st.page_link("views/index_settings.py", label="What float16, int8, binary and fewer dimensions do to the failures", icon="🗜️")
    st.page_link("views/papers.py", label="Published figures vs recomputed", icon="📚")
    st.page_link("views/history.py", label="Earlier runs: compare, pin, export a report", icon="🗂️")
with right:
    st.subheader("Models")
    rows = []
    for name, meta in registry.REGISTRY.items():
        avail = resources.model_availability(name)
        rows.append(
            {"model": short(name), "status": avail.status, "why": avail.reason, "source": meta.source, "dim": meta.dimension, "id": name}
        )
    # Status and why first and wrapped: they are what a newcomer needs, and they used to sit past a sideways scroll.
    widgets.results_table(
        pd.DataFrame(rows),
        "models",
        lead=("model", "status", "why"),
        details=("id",),
        column_config={"why": st.column_config.TextColumn("why", width="large")},
    )
st.caption(
    "The papers' numbers are claims, not truth: every page shows what the bundled models actually compute, next to what was published."
)
