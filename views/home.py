"""Home: what cosine-probe shows and where to start."""

import pandas as pd
import streamlit as st

from core.models import registry
from ui import pages, resources, widgets
from ui.state import short

EXAMPLE_A, EXAMPLE_B = "The patient is allergic to penicillin", "The patient is not allergic to penicillin"
EXAMPLE_MODEL, EXAMPLE_COSINE = "all-MiniLM-L6-v2", "0.947"  # the README's figure

st.title("cosine-probe")
st.markdown(
    "**Where sentence-embedding similarity lies.** Before you ship a semantic search or RAG system, "
    "see how your embedding model scores sentences that differ in exactly the way that matters: "
    "a negation, a dosage, who acquired whom, before or after, all or none, a hedge, an invented drug name."
)
# One number a newcomer can check on Compare, with the README's pair and model.
st.info(
    f'**Example:** {EXAMPLE_MODEL} scores *"{EXAMPLE_A}"* against *"{EXAMPLE_B}"* at **{EXAMPLE_COSINE}**: '
    "nearly the same meaning, by cosine. Open **Compare** to score it on your models.",
    icon="💡",
)
left, right = st.columns(2)
with left:
    st.subheader("Start here")
    for linked in pages.linked_pages():
        st.page_link(linked.path, label=linked.blurb, icon=linked.icon)
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
