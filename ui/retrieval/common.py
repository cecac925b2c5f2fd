"""What the Retrieval page's source modules share: what the next run scores (``Source``), a run with its drawing
(``Ran``), the stored run, the widget keys, and the tables and pickers every result's drawing uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core import constants
from core.models.options import EncodeOptions
from core.probes.retrieval.specs import MitigationSpec
from core.probes.retrieval.suite import RetrievalSuite
from core.scoring.result import ProbeResult
from ui import state, widgets
from ui.retrieval_charts import before_after_figure, mitigation_label, mode_label

KEY_SHOWN = "rt_shown_mitigation"
KEY_GROUP_MODEL, KEY_GROUP_MODES, KEY_GROUP_SEARCH = "rt_group_model", "rt_group_modes", "rt_group_search"
KEY_RESULT = "rt_result"  # StoredRun of the last run that produced something
KEY_RUN_ERRORS = "rt_run_errors"  # errors of the last run when it produced nothing
RUN_LABEL = "Run retrieval probes"
PERCENT = "percent"

ss = st.session_state


@dataclass(frozen=True)
class Ran:
    """A run's result with the drawing of its source (picked by the source that ran it, never by asking the result its type)."""

    result: ProbeResult
    draw: Callable[[], None]


RunFn = Callable[[tuple[str, ...], EncodeOptions, tuple[MitigationSpec, ...]], Ran]


@dataclass(frozen=True)
class Source:
    """What the next run scores, as its source module read it from the widgets.

    Attributes:
        key: identifies the inputs (``("suite", n)``, ``("pairs", digest)``, ...): a run is redone when it changes.
        label: the inputs in words.
        run: (models, options, mitigation specs) -> the result through the cached resources, with its drawing.
        recorded: the run history's (name, sources, settings).
        texts: every text the run encodes up front, when known before it (its expected time is then said first).
        suite: the suite it runs, whose win rate is said per model as each is encoded.
    """

    key: tuple
    label: str
    run: RunFn
    recorded: tuple[str, list[dict[str, Any]], dict[str, Any]]
    texts: tuple[str, ...] = ()
    suite: RetrievalSuite | None = None


@dataclass(frozen=True)
class StoredRun:
    """A run's result and the inputs it was computed from."""

    inputs: tuple
    label: str
    ran: Ran
    seconds: float = 0.0  # wall time of the whole action (loading and encoding included), not the cached run's own


def suite_texts(suite: RetrievalSuite) -> tuple[str, ...]:
    """Every text a suite's run encodes, each once."""
    return tuple(dict.fromkeys([*suite.passages[constants.COL_TEXT], *suite.queries[constants.COL_TEXT]]))


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as the page shows it: short model names, mode and mitigation labels instead of codes."""
    out = frame.copy()
    for column, label in (
        (constants.COL_MODEL, state.short),
        ("model_a", state.short),
        ("model_b", state.short),
        (constants.COL_MODE, mode_label),
        (constants.COL_QUERY_MODE, mode_label),
        (constants.COL_MITIGATION, mitigation_label),
    ):
        if column in out.columns:
            out[column] = out[column].map(label)
    return out.rename(columns={constants.COL_MODE: "failure mode", constants.COL_QUERY_MODE: "query mode"})


def percent(columns: Sequence[str]) -> dict:
    return {c: st.column_config.NumberColumn(c, format=PERCENT) for c in columns}


RATE_COLUMNS = (
    constants.COL_WIN_RATE,
    constants.COL_PAIRED_ACCURACY,
    constants.COL_CI_LOW,
    constants.COL_CI_HIGH,
    constants.COL_RANDOM,
    "rate",
    "win_ci_low",
    "win_ci_high",
    "paired_ci_low",
    "paired_ci_high",
    constants.COL_TOP1_CONTRADICTION,
    *constants.COL_RECALL_AT.values(),
    "win_rate_a",
    "win_rate_b",
    "difference",
    constants.COL_TIE_RATE,
    constants.COL_TOP1_NEGATIVE,
    *constants.COL_IR_RECALL_AT.values(),
)


def table(frame: pd.DataFrame, name: str) -> None:
    """A results table with labels for codes and its rates as percentages."""
    out = shown(frame)
    widgets.table(out, name, column_config=percent([c for c in RATE_COLUMNS if c in out.columns]))


def mitigation_picker(mitigations: list[str]) -> str:
    return widgets.saved_selectbox(
        "Mitigation shown in the charts and the per-group table",
        mitigations,
        key=KEY_SHOWN,
        format_func=mitigation_label,
        help="Tick mitigations above the Run button; each one's rows appear here after the run.",
    )


def by_source(frame: pd.DataFrame) -> None:
    """Every mitigation's win rate on hand-written variants (held out from the rules) first, then on rule-made ones."""
    if frame.empty:
        return
    st.subheader("Held out first: hand-written variants, then rule-made")
    st.caption(
        "**Hand-written** variants are the held-out split: no perturbation rule writes them. **Rule-made** variants are exactly what "
        "the perturbation rules write, and the contradiction guard is those rules run in reverse, so its figure there is measured on "
        "what it was built from. **ties**: variant and paraphrase scored alike (e.g. both filtered); a tie is no win and no fix."
    )
    table(frame.rename(columns={constants.COL_VARIANT_SOURCE: "variants"}), "retrieval-win-rate-by-source")


def user_before_after(summary: pd.DataFrame, panels: tuple, name: str, caption: str) -> None:
    """A triples or BEIR result's chart (each mitigation beside the plain cosine) and, with mitigations, its before/after table."""
    widgets.chart(before_after_figure(summary, panels, "Plain cosine and each ticked mitigation"), summary, f"{name}-chart")
    if summary[constants.COL_MITIGATION].nunique() > 1:
        st.subheader("Mitigations: before and after")
        st.caption(caption)
        table(summary, f"{name}-before-after")


def search_box(placeholder: str) -> str:
    """The per-group and per-query tables' text search, its value kept across page switches."""
    return st.text_input(
        "Search the texts",
        value=str(widgets.saved(KEY_GROUP_SEARCH, "")),
        key=KEY_GROUP_SEARCH,
        on_change=widgets.persist,
        args=(KEY_GROUP_SEARCH,),
        placeholder=placeholder,
    )
