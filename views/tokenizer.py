"""Tokenizer: how each selected model's tokenizer splits what you type.

Only tokenizers load here (no model weights).  Per line: the subword split,
token count, per-word pieces and vocabulary membership, [UNK] count, tokens
past the model's maximum, whether all selected models cut the line the same
way, and the OOV paper's published split for its 40 words.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.models.endpoint import is_endpoint
from core.models.tokens import load_tokenizers, token_rows
from core.papers import oov
from core.scoring.findings import split_findings
from ui import resources
from ui.state import current, model_error, short
from ui.widgets import finding, md_escape, persistent_text_area, plain_note, results_table

KEY_TEXT = "tok_text"
DEFAULT_TEXT = "\n".join(["Xylophrix", "Wompelfritz", "flobnaxitol", "Frondlebard", "The patient is allergic to penicillin"])
MAX_LINES = 30
SAME = "All selected models split this line identically"
DIFFERENT = "The selected models split this line differently"
ONE_MODEL = "Only one model is selected: add another in the sidebar to compare splits"

sel = current()
st.title("Tokenizer")
st.caption(
    "An invented word (an out-of-vocabulary entity) is cut into subword pieces the model has to interpret. "
    "Only the tokenizers load on this page, not the model weights."
)

text = persistent_text_area("Words or sentences (one per line)", KEY_TEXT, DEFAULT_TEXT, height=170)
lines = [line.strip() for line in text.splitlines() if line.strip()]
if not lines:
    st.warning("Type a word or sentence, one per line.", icon="⚠️")
    st.stop()
if len(lines) > MAX_LINES:
    st.warning(f"{len(lines)} lines typed; only the first {MAX_LINES} are shown.", icon="⚠️")
    lines = lines[:MAX_LINES]
if not sel.models:
    st.warning("Select at least one model in the sidebar.")
    st.stop()

# ---------------------------------------------------------------- tokenize
loaded, tok_errors = load_tokenizers(sel.models, loader=resources.tokenizer)
for name, reason in tok_errors.items():
    if is_endpoint(name):  # not an error: the server tokenizes, and it does not say how
        st.info(md_escape(reason), icon="ℹ️")
    else:
        model_error(name, reason)
if not loaded:
    st.stop()

entities = resources.oov_entities()
models = [m for m, _ in loaded]
line_numbers = {line: [i for i, same in enumerate(lines, start=1) if same == line] for line in dict.fromkeys(lines)}
rows, word_rows = [], []
split = token_rows(loaded, list(line_numbers))
for r in split:
    m, line = r["model"], r["text"]
    check = oov.published_split_check(entities, line, tuple(r["tokens"]))
    for i in line_numbers[line]:
        rows.append(
            {
                "line": i,
                "text": line,
                "model": short(m),
                "tokens": " ".join(r["tokens"]),
                **{k: r[k] for k in ("n_tokens", "n_with_special", "max_tokens", "n_past_max", "n_unk", "identical_across_models")},
                "published_split": check["published"] if check else None,
                "matches_published": check["match"] if check else None,
                "model_id": m,
            }
        )
        word_rows += [
            {
                "line": i,
                "model": short(m),
                "word": w["word"],
                "pieces": " ".join(w["pieces"]),
                "in vocabulary": "yes" if w["in_vocab"] else "no",
                "[UNK]": w["n_unk"],
                "model_id": m,
            }
            for w in r["words"]
        ]
# Lines first, then models in sidebar order, as the page reads.
token_table = pd.DataFrame(rows).sort_values("line", kind="stable").reset_index(drop=True)
word_table = pd.DataFrame(word_rows).sort_values("line", kind="stable")

# ---------------------------------------------------------------- overview
finding(split_findings(split))  # issue 26: the finding first
st.subheader("All lines")
results_table(token_table, "token table", lead=("line", "text", "model", "tokens", "n_tokens", "n_unk"), details=("model_id",))

# ---------------------------------------------------------------- per line
st.subheader("Line by line")
for i, line in enumerate(lines, start=1):
    mine = token_table[token_table["line"] == i]
    with st.container(border=True):
        st.text(f"Line {i}: {line}")
        if len(models) < 2:
            st.info(ONE_MODEL, icon="ℹ️")
        elif bool(mine["identical_across_models"].iloc[0]):
            st.success(f"{SAME} ({len(models)} models).", icon="✅")
        else:
            st.warning(f"{DIFFERENT}.", icon="🔀")
        records = mine.to_dict("records")
        # Issue 33: identical splits are shown once with every model that makes them ("MiniLM-L6, MiniLM-L3: x ##yl ##op"),
        # not once per model; each different split once more.
        groups: dict[tuple, list[dict]] = {}
        for row in records:
            groups.setdefault((row["tokens"], row["n_unk"]), []).append(row)
        for (tokens, n_unk), same in groups.items():
            who = f"all {len(records)} models" if len(same) == len(records) > 1 else ", ".join(r["model"] for r in same)
            st.text(f"{who}: {same[0]['n_tokens']} tokens, {n_unk} [UNK]")
            st.code(tokens or "(no tokens)", language=None)
            published = next((r for r in same if pd.notna(r["published_split"])), None)
            if published is not None:
                marker = "✅ match" if published["matches_published"] else "❌ mismatch"
                st.text(f"OOV paper Table 2 (published): {published['published_split']}   ours: {tokens}   {marker}")
        for row in records:
            if row["n_past_max"] > 0:
                st.warning(
                    f"{md_escape(row['model'])}: {row['n_with_special']} tokens with special tokens, the model keeps {row['max_tokens']}; "
                    f"{row['n_past_max']} tokens past the maximum are cut before encoding.",
                    icon="✂️",
                )
        check = oov.published_split_check(entities, line, ())
        if check and check["note"]:
            st.caption(f"Table 2 note: {md_escape(plain_note(check['note']))}")
        words = word_table[word_table["line"] == i].drop(columns=["line", "model_id"])
        # One row per word and split, naming the models that split it so (the download keeps one row per model).
        grouped = (
            words.groupby(["word", "pieces", "in vocabulary", "[UNK]"], sort=False, dropna=False)["model"].agg(", ".join).reset_index()
        )
        grouped = grouped[["model", "word", "pieces", "in vocabulary", "[UNK]"]].rename(columns={"model": "models"})
        results_table(grouped, f"words line {i}", lead=("word", "pieces", "models"), download=words)
