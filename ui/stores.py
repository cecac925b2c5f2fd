"""The "Connect a store" block of the Your corpus, Retrieval and Index settings pages (``docs/stores.md``): a store's vectors.

One call from a page, :func:`connect_store`, draws the whole block: the
store's kind and where it is (a folder, or a server with a password input:
the fields come from the kind's record, :mod:`core.stores.kinds`), an
optional filter (``COLUMN=VALUE`` lines, applied by the store's own filter),
the model that made the stored vectors (one of the sidebar's), the search
(the store's index, or its exact scan where the kind has one), and the button.

Every visitor is a stranger to the server, so the block opens only stores the
operator allows (``$COSINE_PROBE_STORES``: folders and ``HOST:PORT``
servers, :mod:`core.stores.access`); without that it says store access is off.
Each field is one part of the URI: a Host box holding a whole URI (a port, a
path, credentials) is refused, never read over the other boxes.
The run goes through :func:`core.stores.audit.audit_store` or
:func:`core.stores.retrieval.retrieval_through_store`; a refusal (another
model's vectors, a wrong password, a missing table) is one redacted line and
keeps the last result.  The URI is built here and never shown: the page shows
its ``display`` (no user-info), and the password is registered with the one
redaction when the URI is parsed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

import streamlit as st

from core.audit.findings import side_by_side_words
from core.audit.neighbours import TooManyPairs
from core.audit.risk import risk_summary
from core.messages import redact
from core.probes import index_settings
from core.stores.access import STORES_ENV, StoreAllowlist, allowlist_from_env
from core.stores.audit import audit_store, side_by_side
from core.stores.base import StoreError, StoreKind, filter_words, parse_filters
from core.stores.kinds import STORE_KINDS, open_store
from core.stores.retrieval import rates_words, retrieval_through_store
from core.stores.settings import store_index_settings
from ui import resources, state, widgets

if TYPE_CHECKING:
    from core.stores.audit import StoreAudit
    from core.stores.retrieval import StoreRetrieval

KINDS = {kind.label: kind for kind in STORE_KINDS.values()}
LABEL = "Connect a store"
RUN_LABEL = {
    "audit": "Audit the store",
    "retrieval": "Rank the queries through the store",
    "index-settings": "Score the store's vectors under each index setting",
}
INDEX_SEARCH = "the store's own index (as searched in production)"
EXACT_SEARCH = "exact scan"
# A host name or address, nothing else: a port, a path, a query or credentials typed here would be read over the other boxes.
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?)$")


def store_uri(kind: StoreKind, values: dict[str, str]) -> str:
    """The URI the block's fields spell, each field percent-encoded as one part (user, password, database, table, folder).

    Raises:
        StoreError: a Host box holding more than a host name or address, a Port box holding more than a number.
    """
    name = quote(values.get("name", "").strip(), safe="")
    if kind.server:
        host, port = values.get("host", "").strip(), values.get("port", "").strip() or str(kind.default_port or "")
        if not _HOST.match(host):
            raise StoreError("the Host box takes a host name or address only; the port, database, user and table have their own boxes")
        if not port.isdigit():
            raise StoreError("the Port box takes a number from 1 to 65535")
        user = quote(values.get("user", ""), safe="")
        password = quote(values.get("password", ""), safe="")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        database = quote(values.get("database", "").strip(), safe="")
        return f"{kind.scheme}://{auth}{host}:{port}/{database}?{kind.collection_key}={name}"
    return f"{kind.scheme}://{quote(values.get('folder', '').strip(), safe='/~')}?{kind.collection_key}={name}"


def _fields(page: str, kind: StoreKind) -> dict[str, str]:
    k = f"{page}_store"
    if kind.server:
        a, b, c = st.columns([3, 1, 2])
        values = {
            "host": a.text_input("Host", value="127.0.0.1", key=f"{k}_host", help="A host name or address only."),
            "port": b.text_input("Port", value=str(kind.default_port or ""), key=f"{k}_port"),
            "database": c.text_input("Database", key=f"{k}_db"),
        }
        a, b, c = st.columns(3)
        values["user"] = a.text_input("User", key=f"{k}_user")
        values["password"] = b.text_input(
            "Password", type="password", key=f"{k}_password", help="Used to connect; never shown, written or recorded."
        )
        values["name"] = c.text_input(kind.collection_word, key=f"{k}_table")
        return values
    a, b = st.columns([3, 2])
    return {
        "folder": a.text_input("Folder", key=f"{k}_folder", placeholder="/path/to/store"),
        "name": b.text_input(kind.collection_word, key=f"{k}_name"),
    }


def _allowed() -> tuple[StoreAllowlist, str | None]:
    """The operator's allow-list, and why store access is off when it is (none set, or one that does not parse)."""
    try:
        allowed = allowlist_from_env()
    except StoreError as exc:
        return StoreAllowlist(), f"Connecting a store is off on this server: its allow-list is not valid ({exc})."
    if not allowed:
        return allowed, (
            f"Connecting a store is off on this server: its operator allows store folders and database servers with ${STORES_ENV} "
            "(docs/stores.md)."
        )
    return allowed, None


def connect_store(page: str, what: str, selection: state.Selection, queries: list[str] | None = None) -> None:
    """Draw the block; ``what`` is ``audit`` (Your corpus: close pairs, twins), ``retrieval`` (queries ranked both ways) or
    ``index-settings`` (queries ranked over the stored vectors under each index setting against float32).

    ``queries`` are the page's queries (Your corpus); the Retrieval block asks for its own, one per line.
    """
    k = f"{page}_store"
    with st.expander(LABEL, expanded=bool(st.session_state.get(f"{k}_result") or st.session_state.get(f"{k}_error"))):
        st.caption(
            "Read a collection's passages and the vectors stored with them (read-only, with the store's own client), check on "
            "20 passages that the model below made them, then compare exact search with the store's own search."
        )
        allowed, off = _allowed()
        if off:
            st.info(off)
            return
        kind = KINDS[st.selectbox("Store", list(KINDS), key=f"{k}_kind")]
        values = _fields(page, kind)
        a, b = st.columns(2)
        text_column = a.text_input("Text column (optional)", key=f"{k}_text_col") if kind.columns else ""
        vector_column = b.text_input("Vector column (optional)", key=f"{k}_vector_col") if kind.columns else ""
        filter_text = st.text_area(
            "Filter (optional)",
            key=f"{k}_filter",
            height=68,
            placeholder=f"{kind.filter_on.upper().replace(' ', '_')}=VALUE, one per line",
            help=f"Only the rows whose {kind.filter_on} equals the value (read as its type: text, a number, true or false); several "
            f"lines are joined by AND. The store applies it ({kind.filter_by}), to the exact side and its own search alike.",
        )
        a, b = st.columns(2)
        model = a.selectbox("Model that made the vectors", selection.models, format_func=state.short, key=f"{k}_model")
        searches = [INDEX_SEARCH, *([EXACT_SEARCH] if kind.exact_search else [])]
        search = "exact" if b.radio("Store search", searches, key=f"{k}_search") == EXACT_SEARCH else "index"
        if what in ("retrieval", "index-settings"):
            typed = st.text_area("Queries, one per line", key=f"{k}_queries")
            queries = [q for q in typed.splitlines() if q.strip()]
        if st.button(RUN_LABEL[what], key=f"{k}_run", disabled=not model):
            filters = [line for line in filter_text.splitlines() if line.strip()]
            _run(k, what, kind, values, text_column, vector_column, filters, model, search, selection, queries or [], allowed)
        if st.session_state.get(f"{k}_error"):
            st.error(widgets.md_escape(st.session_state[f"{k}_error"]), icon="⛔")
        shown = st.session_state.get(f"{k}_result")
        if shown is not None:
            for line in shown["lines"]:
                st.markdown(widgets.md_escape(line))
            if shown["table"] is not None:
                widgets.table(shown["table"], f"store {what} {page}", download=shown.get("download"))


def _run(
    k: str,
    what: str,
    kind: StoreKind,
    values: dict[str, str],
    text_column: str,
    vector_column: str,
    filters: list[str],
    model: str,
    search: str,
    selection,
    queries,
    allowed: StoreAllowlist,
) -> None:
    try:
        handle = open_store(
            store_uri(kind, values),
            text_column=text_column or None,
            vector_column=vector_column or None,
            exact=search == "exact",
            filters=parse_filters(filters),
            allowed=allowed,
        )
        try:
            with st.spinner(f"Reading the store and checking {state.short(model)} on 20 passages"):
                lines, table, download = RUNNERS[what](handle, model, selection, queries)
        finally:
            handle.close()
    except (StoreError, TooManyPairs, ValueError) as exc:
        # One line, and the last good result stays on the page.
        st.session_state[f"{k}_error"] = redact(" ".join(str(exc).split()))
        return
    st.session_state[f"{k}_error"] = None
    st.session_state[f"{k}_result"] = {"lines": lines, "table": table, "download": download}


def _check(result: StoreAudit | StoreRetrieval) -> str:
    where = f" (filter: {filter_words(result.filters)})" if result.filters else ""
    return f"Model check: {result.check.sentence(f'{result.store}{where}', name=state.short)}."


def _audit(handle, model: str, selection: state.Selection, queries: list[str]):
    result = audit_store(
        handle, model, selection.threshold, queries=queries, cache=resources.embedding_cache(), options=selection.options_for(model)
    )
    table = side_by_side(risk_summary(result.exact, selection.threshold), risk_summary(result.through_store, selection.threshold))
    recall = "no close pair" if result.pair_recall != result.pair_recall else f"{result.pair_recall:.1%}"
    lines = [
        _check(result),
        f"Search: {result.method}. Close pairs above {selection.threshold:.2f}: {result.store_pairs:,} through the store, "
        f"{result.exact_pairs:,} by exact search; recall against exact {recall}.",
    ]
    cap = result.search.cap_words()  # the neighbour cap apart from the index, as the CLI says it
    if cap:
        lines[-1] += f" {cap[0].upper()}{cap[1:]}."
    if not queries:
        # No query, no query column: they would be empty (None) on both sides, as the CLI leaves them out.
        table = table.drop(columns=[c for c in table.columns if c.startswith(("query_", "twin_first"))])
    # Words and percentages, each number's exact and store values in one column so the table fits a 1280 px screen; the
    # download holds every column, typed.
    return lines, side_by_side_words(table.assign(model=table["model"].map(state.short))), table


def _retrieval(handle, model: str, selection: state.Selection, queries: list[str]):
    result = retrieval_through_store(handle, model, queries, cache=resources.embedding_cache(), options=selection.options_for(model))
    recall = ", ".join(f"recall@{k} {v:.1%}" for k, v in result.recall.items())
    lines = [
        _check(result),
        f"Search: {result.method}. {result.n_queries:,} queries over {result.n_passages:,} stored passages: {recall}; "
        f"same first passage for {result.same_first:.1%}.",
    ]
    if result.rates.empty:
        return lines, None, None
    lines.append("How often a variant of a query's first passage outranks it, first passage by exact search vs by the store:")
    return lines, rates_words(result.rates), result.rates  # the download keeps every rate with its interval, typed


def _index_settings(handle, model: str, selection: state.Selection, queries: list[str]):
    if not queries:
        raise ValueError("give at least one query, one per line: each is ranked over the stored passages under each setting")
    result, check = store_index_settings(
        handle,
        model,
        index_settings.parse_settings(index_settings.DEFAULT_SETTINGS),
        queries=queries,
        cache=resources.embedding_cache(),
        options=selection.options_for(model),
        threshold=selection.threshold,
    )
    lines = [
        f"Model check: {check.sentence(handle.uri.display, name=state.short)}.",
        *index_settings.findings(result.table, state.short),
        *result.notes,
        "Each setting's top 10 of every query against float32's over the stored vectors: the share of queries whose top 10 "
        "changed, and recall@k of float32's top k (ranks, so binary is compared as any setting).",
    ]
    return lines, index_settings.wide_table(result.table, state.short), None


RUNNERS = {"audit": _audit, "retrieval": _retrieval, "index-settings": _index_settings}
