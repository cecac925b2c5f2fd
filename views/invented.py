"""Invented words: fabricated replacements for an entity, and the OOV measurement with k of them.

Closes two limits the OOV paper names: one invented word per entity, and no
random-string control.  The generator and statistics live in
``core.probes.invented``; this page lays them out.
"""

from __future__ import annotations

import contextlib

import pandas as pd
import streamlit as st

from core import constants
from core.models.tokens import load_tokenizers, word_pieces
from core.papers.suites import read_suite_file
from core.probes.invented import (
    InventedWord,
    generate_words,
    invented_findings,
    oov_replacements,
    oov_replicate_summary,
    slot_pairs,
    slot_table,
)
from ui import charts, progress, resources, state, widgets

RUN_KEY = "invented_oov"
RUN_LABEL = "Run OOV with invented words"
SLOT_KEY = "invented_slot"
PAIRS_KEY = "iw_oov_pairs"  # the k-words run's pairs, built once per setting: its estimate counts them, its run scores them
KEY_ENTITY = "iw_entity"
KEY_SENTENCE = "iw_sentence"
KINDS = {"both": "plausible and random", constants.WORD_PLAUSIBLE: "plausible only", constants.WORD_RANDOM: "random only"}
ANY = "any"
# The same default and order as OOV robustness: second sentence only first.
READINGS = {constants.VARIANT_REPLACED_B: "second sentence only", constants.VARIANT_REPLACED_BOTH: "both sentences"}

sel = state.current()
st.title("🔮 Invented words")
st.caption(
    "Fabricated words that no model has seen: **plausible** ones built from English-like syllables (like the OOV paper's "
    "*Xylophrix*) and **random**-letter controls. None is a vocabulary entry of any selected model's tokenizer, none is an "
    "English word, and you can ask for an exact number of subword pieces."
)

lead = st.container()  # The k-words run's finding in words, above every table

if not sel.models:
    st.warning("Select at least one model in the sidebar: pieces are counted under its tokenizer.")
    st.stop()
toks, tok_errors = load_tokenizers(sel.models, loader=resources.tokenizer)
for name, reason in tok_errors.items():
    state.model_error(name, f"{state.short(name)}: {reason}")
if not toks:
    st.stop()

# ------------------------------------------------------------------ generator
st.header("Generate words")
c1, c2, c3, c4, c5 = st.columns([3, 2, 2, 1, 1])
entity = c1.text_input(
    "Entity to replace",
    value=widgets.saved(KEY_ENTITY, "Penicillin"),
    key=KEY_ENTITY,
    on_change=widgets.persist,
    args=(KEY_ENTITY,),
    max_chars=60,
    help="Its capitalization sets the words' capitalization; words never contain it.",
)
with c2:
    kind = widgets.saved_selectbox("Kinds", list(KINDS), "iw_kind", format_func=KINDS.get)
pieces_choice = c3.selectbox(
    "Subword pieces",
    [ANY, 2, 3, 4, 5, 6],
    index=[ANY, 2, 3, 4, 5, 6].index(widgets.saved("iw_pieces", ANY)),
    key="iw_pieces",
    on_change=widgets.persist,
    args=("iw_pieces",),
    help=f"Counted under {state.short(toks[0][0])}, the first selected model.",
)
n = c4.number_input("Words", 1, 30, value=int(widgets.saved("iw_n", 8)), key="iw_n", on_change=widgets.persist, args=("iw_n",))
seed = c5.number_input(
    "Seed", 0, 10**6, value=int(widgets.saved("iw_seed", 0)), key="iw_seed", on_change=widgets.persist, args=("iw_seed",)
)
pieces = None if pieces_choice == ANY else int(str(pieces_choice))
kinds = list(constants.WORD_KINDS) if kind == "both" else [kind]
ref_name, ref_tok = toks[0]

words: list[InventedWord] = []
if not entity.strip():
    st.warning("Type the entity to replace.", icon="✍️")
else:
    try:
        for k in kinds:
            words += generate_words(
                ref_tok,
                int(n),
                kind=k,
                pieces=pieces,
                seed=int(seed),
                capitalize=entity.strip()[:1].isupper(),
                entity=entity.strip(),
                exclude=[w.word for w in words],
                other_tokenizers=[t for _, t in toks[1:]],
            )
    except ValueError as exc:
        st.error(widgets.md_escape(exc), icon="⛔")
if words:
    st.text(f"{entity.strip()} under {state.short(ref_name)}: {' '.join(word_pieces(ref_tok, entity.strip()))}")
    listing = [
        {"word": w.word, constants.COL_KIND: w.kind, constants.COL_N_PIECES: w.n_pieces, "pieces": " ".join(w.pieces)} for w in words
    ]
    widgets.results_table(pd.DataFrame(listing), "invented words")

    # ---- in a sentence
    st.subheader("In a sentence")
    sentence = widgets.persistent_text_area(
        "A sentence containing the entity", KEY_SENTENCE, "The patient is allergic to Penicillin.", height=70, max_chars=2000
    )
    # Like the k-words run below: pairs built in core (a ValueError is the user's to fix), scored through state.run.
    if st.button(
        "Score the sentence with each word", help="Cosine of your sentence with itself where the entity is replaced by each word."
    ):
        try:
            pairs = slot_pairs(sentence, entity.strip(), words)
        except ValueError as exc:
            st.error(widgets.md_escape(exc), icon="⛔")
        else:
            state.run(pairs, sel, key=SLOT_KEY, label="Scoring the sentence")
    else:  # A long run (a model to load) says how long before it starts; a sentence without the entity is said on the click
        with contextlib.suppress(ValueError):
            progress.expected_caption(sel.models, progress.pair_texts(slot_pairs(sentence, entity.strip(), words)), sel.options)
    state.show_errors(SLOT_KEY)
    slot = state.stored(SLOT_KEY)
    if slot is not None:
        shown, finding = slot_table(slot.results)
        st.markdown(widgets.md_escape(finding))
        widgets.results_table(
            shown,
            "invented words in a sentence",
            column_config={c: st.column_config.NumberColumn(format="%.4f") for c in shown.columns if c.startswith("cosine, ")},
        )

# ------------------------------------------------------------------ OOV with k words per entity
st.header("OOV robustness with k invented words per entity")
st.caption(
    "The OOV paper replaces each of its 20 entities with one invented word. Here each entity gets k of each kind; the "
    "delta is the original pair's cosine minus the replaced pair's, averaged over the k words with a 95% bootstrap interval, "
    "and plausible words are compared with random strings."
)
d1, d2 = st.columns(2)
k = d1.slider(
    "k words per entity and kind",
    1,
    10,
    value=int(widgets.saved("iw_k", constants.OOV_REPLICATES)),
    key="iw_k",
    on_change=widgets.persist,
    args=("iw_k",),
)
reading = d2.radio(
    "Invented word in",
    list(READINGS),
    format_func=READINGS.get,
    horizontal=True,
    index=list(READINGS).index(widgets.saved("iw_reading", constants.OOV_DEFAULT_READING)),
    key="iw_reading",
    on_change=widgets.persist,
    args=("iw_reading",),
)


def _oov_pairs() -> pd.DataFrame | ValueError:
    """The k-words run's pairs for the settings on the page (or why there are none), built once per setting.

    The estimate under the button counts these texts and the click scores these very pairs; a rerun of the page
    (a threshold move) finds them in the session instead of generating 20 × k words again.
    """
    setting = (tuple(sel.models), sel.options, int(k), tuple(kinds), reading, pieces, int(seed))
    kept = st.session_state.get(PAIRS_KEY)
    if kept is not None and kept[0] == setting:
        return kept[1]
    built: pd.DataFrame | ValueError
    try:
        built = oov_replacements(
            read_suite_file(constants.SUITE_OOV),
            ref_tok,
            int(k),
            kinds=kinds,
            readings=[reading],
            pieces=pieces,
            seed=int(seed),
            other_tokenizers=[t for _, t in toks[1:]],
        )
    except ValueError as exc:
        built = exc
    st.session_state[PAIRS_KEY] = (setting, built)
    return built


oov_pairs = _oov_pairs()
estimated = None if isinstance(oov_pairs, ValueError) else progress.estimate(sel.models, progress.pair_texts(oov_pairs), sel.options)
if st.button(progress.button_label(RUN_LABEL, estimated), type="primary", key="iw_run"):
    if isinstance(oov_pairs, ValueError):
        st.error(widgets.md_escape(oov_pairs), icon="⛔")
    else:
        state.run(oov_pairs, sel, key=RUN_KEY, label="Scoring the OOV suite with invented words")
elif estimated is not None:  # Its run encodes every invented word's sentences: said before the click, however short
    st.caption(f"⏱️ {progress.describe(estimated)}")
state.show_errors(RUN_KEY)
result = state.stored(RUN_KEY)
if result is None:
    st.info(f"Press **{RUN_LABEL}** to score the 20 entities with k words each.")
else:
    tables = oov_replicate_summary(result.results)
    by_model, by_entity, versus = tables["by_model"], tables["by_entity"], tables["plausible_vs_random"]
    st.success(
        f"{result.results[constants.COL_ENTITY].nunique()} entities × k = {int(result.results[constants.COL_REPLICATE].max())} · "
        f"reading: {READINGS.get(by_model['reading'].iloc[0], by_model['reading'].iloc[0]) if not by_model.empty else ''}"
    )
    reading_words = constants.OOV_READINGS.get(by_model["reading"].iloc[0], "") if not by_model.empty else ""
    st.caption(f"Reading: {reading_words}.")
    widgets.finding(invented_findings(by_model, versus, reading_words), lead)
    widgets.chart(charts.invented_by_model_figure(by_model), by_model, "invented mean delta per model")
    if not versus.empty:
        st.subheader("Plausible vs random")
        st.caption(
            "Difference of mean deltas (plausible − random), paired over entities with a 95% bootstrap interval, and Cohen's d "
            "over all words. An interval that excludes 0 means the kind of invented word matters; compare the mean piece counts "
            "before calling it plausibility."
        )
        shown = versus.assign(model=versus[constants.COL_MODEL].map(state.short), reading_label=versus["reading"].map(READINGS))
        widgets.results_table(
            shown,
            "invented plausible vs random",
            labels={"reading_label": "reading", "ci_low": "CI low", "ci_high": "CI high", "cohens_d": "Cohen's d"},
        )
    st.subheader("Per entity")
    model_choice = st.selectbox("Model", list(by_entity[constants.COL_MODEL].unique()), format_func=state.short, key="iw_entity_model")
    st.caption(f"Reading: {reading_words}.")
    widgets.chart(charts.invented_by_entity_figure(by_entity, model_choice), by_entity, "invented mean delta per entity")
