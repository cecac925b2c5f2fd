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
# Identical splits are shown once with every model that makes them ("MiniLM-L6, MiniLM-L3"), not once per model,
# in the "All lines" table as in each line's box; what a model keeps is said per model only where the models differ.
SPLIT = ["line", "text", "tokens", "n_tokens", "n_unk", "identical_across_models", "published_split", "matches_published"]


def _per_model(part: pd.DataFrame, column: str) -> str:
    """One figure when every model of a split has it ("256"), else each figure with its models ("256: MiniLM-L6 · 128: MiniLM-L3")."""
    by_value = part.groupby(column, sort=False)["model"].agg(", ".join)
    return str(by_value.index[0]) if len(by_value) == 1 else " · ".join(f"{value}: {who}" for value, who in by_value.items())


split_table = pd.DataFrame(
    [
        {
            **dict(zip(SPLIT, key, strict=True)),
            "models": ", ".join(part["model"]),
            "n_models": len(part),
            "n_with_special": _per_model(part, "n_with_special"),
            "max_tokens": _per_model(part, "max_tokens"),
            "n_past_max": _per_model(part, "n_past_max"),
            "model_id": ", ".join(part["model_id"]),
        }
        for key, part in token_table.groupby(SPLIT, sort=False, dropna=False)
    ]
)

# ---------------------------------------------------------------- overview
finding(split_findings(split))  # The finding first
st.subheader("All lines")
st.caption("One row per line and split: models that cut a line alike share its row (the downloads keep one row per model).")
results_table(
    split_table.drop(columns="n_models"),
    "token table",
    lead=("line", "text", "tokens", "models", "n_tokens", "n_unk"),
    details=("model_id",),
    labels={"max_tokens": "tokens kept", "n_past_max": "past the maximum", "n_with_special": "with special tokens"},
    # The split in the first screen at 1280 px: the line's text and the models take less room than the pieces.
    column_config={
        "text": st.column_config.TextColumn("text", width="medium"),
        "models": st.column_config.TextColumn("models", width="medium"),
    },
    download=token_table,
)

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
        # Each split once, with the models that make it (the "All lines" table's rows for this line).
        for group in split_table[split_table["line"] == i].to_dict("records"):
            who = f"all {group['n_models']} models" if group["n_models"] == len(mine) > 1 else group["models"]
            st.text(f"{who}: {group['n_tokens']} tokens, {group['n_unk']} [UNK]")
            st.code(group["tokens"] or "(no tokens)", language=None)
            if pd.notna(group["published_split"]):
                marker = "✅ match" if group["matches_published"] else "❌ mismatch"
                st.text(f"OOV paper Table 2 (published): {group['published_split']}   ours: {group['tokens']}   {marker}")
        for row in mine.to_dict("records"):
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
