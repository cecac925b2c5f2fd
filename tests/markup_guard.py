"""Test support: user text must never reach an element that renders Markdown or HTML.

:func:`markdown_sources` collects every string an AppTest page handed to an
element Streamlit renders as Markdown (alerts, captions, headings, widget,
expander and status labels, progress text); :func:`assert_never_rendered`
checks that none holds a payload as typed and that no Markdown element
allows HTML.
"""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

MARKDOWN_TYPES = frozenset(
    {"markdown", "caption", "error", "warning", "info", "success", "toast", "title", "header", "subheader", "exception"}
)


def nodes(at: AppTest) -> list:
    """Every element and block on the page, sidebar included."""
    return [*at.main, *at.sidebar]


def markdown_sources(at: AppTest) -> list[str]:
    """Every string the page handed to an element that renders Markdown."""
    out: list[str] = []
    for node in nodes(at):
        kind = getattr(node, "type", "")
        if kind in MARKDOWN_TYPES:
            out.append(node.value)
        if kind == "progress":
            out.append(node.proto.text)
        label = getattr(node, "label", None)
        if isinstance(label, str):
            out.append(label)
    return out


def unescaped(source: str) -> str:
    """``source`` without its backslash-escaped characters: what Markdown would still interpret."""
    return re.sub(r"\\.", "", source, flags=re.S)


def assert_never_rendered(at: AppTest, *payloads: str) -> None:
    """No Markdown-rendering element holds a payload unescaped, and none allows HTML.

    Payloads should contain Markdown or HTML syntax (``<img``, ``**bold**``):
    escaped, each syntax character loses its meaning and the payload no
    longer matches.
    """
    for node in nodes(at):
        if getattr(node, "type", "") in ("markdown", "caption"):
            assert not node.proto.allow_html, node.value
    for source in markdown_sources(at):
        for payload in payloads:
            assert payload not in unescaped(source), f"{payload!r} reached a Markdown element unescaped: {source!r}"
