"""The "Connect a store" block of the Your corpus and Retrieval pages (``docs/stores.md``): a store's vectors, exact vs its own search.

One call from a page, :func:`connect_store`, draws the whole block: the
store's kind and where it is (a folder, or a PostgreSQL server with a
password input), an optional filter (``COLUMN=VALUE`` lines, applied by
the store's own filter), the model that made the stored vectors (one of the
sidebar's), the search (the store's index or its exact scan), and the button.
The run goes through :func:`core.stores.audit.audit_store` or
:func:`core.stores.retrieval.retrieval_through_store`; a refusal (another
model's vectors, a wrong password, a missing table) is one redacted line and
keeps the last result.  The URI is built here and never shown: the page shows
its ``display`` (no user-info), and the password is registered with the one
redaction when the URI is parsed.
"""

from __future__ import annotations

from urllib.parse import quote

import streamlit as st

from core.messages import redact
from ui import resources, state, widgets

KINDS = {"LanceDB folder": "lancedb", "Chroma folder": "chroma", "PostgreSQL + pgvector": "postgresql"}
LABEL = "Connect a store"
RUN_LABEL = {"audit": "Audit the store", "retrieval": "Rank the queries through the store"}
SEARCH = {"the store's own index (as searched in production)": "index", "exact scan (LanceDB, pgvector)": "exact"}


def store_uri(kind: str, values: dict[str, str]) -> str:
    """The URI the block's fields spell (user and password percent-encoded)."""
    if kind == "postgresql":
        user = quote(values.get("user", ""), safe="")
        password = quote(values.get("password", ""), safe="")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        return (
            f"postgresql://{auth}{values.get('host', '')}:{values.get('port', '5432')}"
            f"/{values.get('database', '')}?table={values.get('table', '')}"
        )
    key = "table" if kind == "lancedb" else "collection"
    return f"{kind}://{values.get('folder', '')}?{key}={values.get('name', '')}"


def _fields(page: str, kind: str) -> dict[str, str]:
    k = f"{page}_store"
    if kind == "postgresql":
        a, b, c = st.columns([3, 1, 2])
        values = {
            "host": a.text_input("Host", value="127.0.0.1", key=f"{k}_host"),
            "port": b.text_input("Port", value="5432", key=f"{k}_port"),
            "database": c.text_input("Database", key=f"{k}_db"),
        }
        a, b, c = st.columns(3)
        values["user"] = a.text_input("User", key=f"{k}_user")
        values["password"] = b.text_input(
            "Password", type="password", key=f"{k}_password", help="Used to connect; never shown, written or recorded."
        )
        values["table"] = c.text_input("Table", key=f"{k}_table")
        return values
    a, b = st.columns([3, 2])
    return {
        "folder": a.text_input("Folder", key=f"{k}_folder", placeholder="/path/to/store"),
        "name": b.text_input("Table" if kind == "lancedb" else "Collection", key=f"{k}_name"),
    }


def connect_store(page: str, what: str, selection: state.Selection, queries: list[str] | None = None) -> None:
    """Draw the block; ``what`` is ``audit`` (Your corpus: close pairs, twins) or ``retrieval`` (queries ranked both ways).

    ``queries`` are the page's queries (Your corpus); the Retrieval block asks for its own, one per line.
    """
    k = f"{page}_store"
    with st.expander(LABEL, expanded=bool(st.session_state.get(f"{k}_result") or st.session_state.get(f"{k}_error"))):
        st.caption(
            "Read a collection's passages and the vectors stored with them (read-only, with the store's own client), check on "
            "20 passages that the model below made them, then compare exact search with the store's own search."
        )
        kind = KINDS[st.selectbox("Store", list(KINDS), key=f"{k}_kind")]
        values = _fields(page, kind)
        a, b = st.columns(2)
        text_column = a.text_input("Text column (optional)", key=f"{k}_text_col") if kind != "chroma" else ""
        vector_column = b.text_input("Vector column (optional)", key=f"{k}_vector_col") if kind != "chroma" else ""
        filter_text = st.text_area(
            "Filter (optional)",
            key=f"{k}_filter",
            height=68,
            placeholder="COLUMN=VALUE, one per line" if kind != "chroma" else "METADATA_KEY=VALUE, one per line",
            help="Only the rows whose column (a Chroma collection: metadata key) equals the value, as text; several lines are joined "
            "by AND. The store applies it (its own filter), to the exact side and its own search alike.",
        )
        a, b = st.columns(2)
        model = a.selectbox("Model that made the vectors", selection.models, format_func=state.short, key=f"{k}_model")
        search = SEARCH[b.radio("Store search", list(SEARCH), key=f"{k}_search")]
        if what == "retrieval":
            typed = st.text_area("Queries, one per line", key=f"{k}_queries")
            queries = [q for q in typed.splitlines() if q.strip()]
        if st.button(RUN_LABEL[what], key=f"{k}_run", disabled=not model):
            filters = [line for line in filter_text.splitlines() if line.strip()]
            _run(k, what, kind, values, text_column, vector_column, filters, model, search, selection, queries or [])
        if st.session_state.get(f"{k}_error"):
            st.error(widgets.md_escape(st.session_state[f"{k}_error"]), icon="⛔")
        shown = st.session_state.get(f"{k}_result")
        if shown is not None:
            for line in shown["lines"]:
                st.markdown(widgets.md_escape(line))
            if shown["table"] is not None:
                st.dataframe(shown["table"], hide_index=True, width="stretch")


def _run(
    k: str,
    what: str,
    kind: str,
    values: dict[str, str],
    text_column: str,
    vector_column: str,
    filters: list[str],
    model: str,
    search: str,
    selection,
    queries,
) -> None:
    from core.audit.neighbours import TooManyPairs
    from core.stores.base import StoreError, parse_filters
    from core.stores.kinds import open_store

    try:
        handle = open_store(
            store_uri(kind, values),
            text_column=text_column or None,
            vector_column=vector_column or None,
            exact=search == "exact",
            filters=parse_filters(filters),
        )
        try:
            with st.spinner(f"Reading the store and checking {state.short(model)} on 20 passages"):
                lines, table = (_audit if what == "audit" else _retrieval)(handle, model, selection, queries)
        finally:
            handle.close()
    except (StoreError, TooManyPairs, ValueError) as exc:
        # One line, and the last good result stays on the page.
        st.session_state[f"{k}_error"] = redact(" ".join(str(exc).split()))
        return
    st.session_state[f"{k}_error"] = None
    st.session_state[f"{k}_result"] = {"lines": lines, "table": table}


def _check(result) -> str:
    from core.stores.base import filter_words

    c = result.check
    where = f" (filter: {filter_words(result.filters)})" if result.filters else ""
    return (
        f"Model check: {state.short(c.model)} re-encoded {len(c.cosines)} stored passages of {result.store}{where}: "
        f"cosine {min(c.cosines):.4f} to {max(c.cosines):.4f}."
    )


def _audit(handle, model: str, selection: state.Selection, queries: list[str]):
    from core.audit.findings import percent_words
    from core.audit.risk import risk_summary
    from core.stores.audit import audit_store, side_by_side

    result = audit_store(
        handle, model, selection.threshold, queries=queries, cache=resources.embedding_cache(), options=selection.options_for(model)
    )
    table = side_by_side(risk_summary(result.exact, selection.threshold), risk_summary(result.through_store, selection.threshold))
    recall = "no close pair" if result.pair_recall != result.pair_recall else f"{result.pair_recall:.4f}"
    lines = [
        _check(result),
        f"Search: {result.method}. Close pairs above {selection.threshold:.2f}: {result.store_pairs:,} through the store, "
        f"{result.exact_pairs:,} by exact search; recall against exact {recall}.",
    ]
    if not queries:
        # No query, no query column: they would be empty (None) on both sides, as the CLI leaves them out.
        table = table.drop(columns=[c for c in table.columns if c.startswith(("query_", "twin_first"))])
    return lines, percent_words(table.assign(model=table["model"].map(state.short)))  # words and percentages, as the page's tables


def _retrieval(handle, model: str, selection: state.Selection, queries: list[str]):
    from core.stores.retrieval import retrieval_through_store

    result = retrieval_through_store(handle, model, queries, cache=resources.embedding_cache(), options=selection.options_for(model))
    recall = ", ".join(f"recall@{k} {v:.3f}" for k, v in result.recall.items())
    lines = [
        _check(result),
        f"Search: {result.method}. {result.n_queries:,} queries over {result.n_passages:,} stored passages: {recall}; "
        f"same first passage for {result.same_first:.1%}.",
    ]
    table = None
    if not result.rates.empty:
        table = result.rates.pivot_table(index="mode", columns="search", values="rate", sort=False).reset_index()
        lines.append("How often a variant of a query's first passage outranks it, first passage by exact search vs by the store:")
    return lines, table
