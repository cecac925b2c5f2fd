"""The Retrieval page's input sources: one record per source (its label, its inputs' widgets, what goes below the Run
button), read by the page in this order. Adding a source is one module and one record here; the page picks by the
radio's key, never by an if-chain, and each source's run brings its own drawing (``ui/retrieval/common.py``'s ``Ran``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ui import state
from ui.retrieval import beir, corpus, pairs, suite, triples
from ui.retrieval.common import Source


def _nothing(source: Source, selection: state.Selection) -> None:
    """No extra control below the Run button."""


@dataclass(frozen=True)
class SourceKind:
    """One input source of the Retrieval page.

    Attributes:
        key: the radio's value (kept across page switches).
        label: the radio's text.
        inputs: its widgets; what the next run scores, or None (with a hint) while inputs are missing.
        below_run: drawn under the Run button before a run (the shipped suite's full-suite button).
    """

    key: str
    label: str
    inputs: Callable[[], Source | None]
    below_run: Callable[[Source, state.Selection], None] = _nothing


SOURCES: tuple[SourceKind, ...] = (
    SourceKind(suite.KIND, "The retrieval suite", suite.inputs, suite.full_suite_button),
    SourceKind(pairs.KIND, "A pairs file", pairs.inputs),
    SourceKind(corpus.KIND, "A corpus and its queries", corpus.inputs),
    SourceKind(triples.KIND, "A triples file", triples.inputs),
    SourceKind(beir.KIND, "A BEIR folder (zip)", beir.inputs),
)
BY_KEY = {kind.key: kind for kind in SOURCES}
