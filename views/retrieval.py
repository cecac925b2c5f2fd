"""Retrieval: does a retriever rank the contradiction above the truth, and which fix stops it.

A retriever does not threshold one pair, it ranks passages.  This page runs
the retrieval probes of ``core.probes.retrieval`` on the models selected in
the sidebar: the adversarial win rate (an anchor's variant outranks its
paraphrase), NevIR's paired accuracy against the 25% of random ranking, the
in-corpus ranking (recall@k, MRR, top-1 contradictions), and each ticked
mitigation before and after, with its cost.  Inputs: the shipped suite (or
its first N groups), an uploaded pairs file, a corpus plus queries, a
triples file (columns mapped as on Your data) or a BEIR folder as a zip.

Each input source is one module of ``ui/retrieval/`` behind one registry
(``ui/retrieval/registry.py``): its widgets, its cached run (``ui.resources``,
after the embedding cache is warmed with a progress bar) and its drawing.
This file lays the page out.
"""

from __future__ import annotations

import streamlit as st

from ui import progress, state, widgets
from ui import stores as stores_ui
from ui.retrieval import mitigations, running, suite
from ui.retrieval.common import KEY_RESULT, KEY_RUN_ERRORS, RUN_LABEL, StoredRun
from ui.retrieval.registry import BY_KEY

KEY_SOURCE = "rt_source"

ss = st.session_state


# --------------------------------------------------------------------------- page

st.title("🎯 Retrieval")
st.markdown(
    "A retriever does not apply a threshold to one pair: it **ranks passages**. This page asks whether the models selected in the sidebar "
    "rank a contradiction (a negated, renumbered, role-swapped, re-timed, re-quantified or hedged passage) above the passage that says "
    "the same thing in other words, and which fix stops it."
)

selection = state.current()
kind = BY_KEY[widgets.saved_radio("Inputs", list(BY_KEY), key=KEY_SOURCE, format_func=lambda key: BY_KEY[key].label)]
source = kind.inputs()
stores_ui.connect_store("rt", "retrieval", selection)

# Every input gets the mitigations: a triples file on its win rate and ranking, a BEIR folder on its whole corpus.
st.subheader("Mitigations")
st.caption("Each ticked fix rescores the same probes after the dense cosine; its rows appear next to the plain cosine's (none).")
specs = mitigations.mitigations(selection)

inputs = (source.key if source else None, tuple(selection.models), tuple(sorted(selection.remote_code)), selection.device, specs)
stored: StoredRun | None = ss.get(KEY_RESULT)
clicked = source is not None and st.button(RUN_LABEL, type="primary", key="rt_run")
clicked = bool(suite.full_suite_asked() and source is not None) or clicked
if source is not None and not clicked and source.texts:
    # A run longer than ~10 s says how long before it starts; the full suite is one click away, its time on the button.
    # Its runs are the long ones: always said.
    progress.expected_caption(selection.models, list(source.texts), selection.options, always=True)
    kind.below_run(source, selection)
# A ticked or unticked mitigation re-runs the same inputs at once (cached per inputs, so going back is instant).
toggled = source is not None and stored is not None and stored.inputs[:4] == inputs[:4] and stored.inputs[4:] != inputs[4:]
if (clicked or toggled) and source is not None:
    running.run(source, selection, inputs, specs)
    stored = ss.get(KEY_RESULT)
for reason in ss.get(KEY_RUN_ERRORS, {}).values():
    st.error(widgets.md_escape(reason), icon="⛔")

if stored is None:
    st.info(f"Press **{RUN_LABEL}** to rank the passages with the models selected in the sidebar.")
else:
    result = stored.ran.result
    st.success(
        f"Results for {len(result.models)} model(s): {widgets.md_escape(', '.join(state.short(m) for m in result.models))} · "
        f"{widgets.md_escape(stored.label)} · {state.wall_time(stored.seconds or result.seconds)}"
    )
    if stored.inputs[:4] != inputs[:4]:
        st.caption(f"The inputs or the sidebar's models changed since this run; press **{RUN_LABEL}** to update.")
    for reason in result.errors.values():
        st.error(widgets.md_escape(reason), icon="⛔")
    stored.ran.draw()
