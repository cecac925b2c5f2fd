"""The Retrieval page's shipped suite: a quick run on an even sample of its anchor groups, the full suite one click away."""

from __future__ import annotations

from functools import partial

import streamlit as st

from core import constants, lexicon
from core.models.options import EncodeOptions
from core.probes.retrieval.specs import MitigationSpec
from core.probes.retrieval.suite import RetrievalSuite
from ui import progress, resources, state, widgets
from ui.retrieval import suite_results
from ui.retrieval.common import Ran, RunFn, Source, suite_texts

KIND = "suite"
KEY_GROUPS = "rt_groups"
KEY_RUN_FULL = "rt_run_full_now"  # set by the full-suite button's callback: the next rerun runs all groups
FULL_LABEL = "Run the full suite"

ss = st.session_state


def suite_run(suite: RetrievalSuite) -> RunFn:
    """A suite's run through the cached resources, drawn as a suite's result."""

    def run(models: tuple[str, ...], options: EncodeOptions, specs: tuple[MitigationSpec, ...]) -> Ran:
        result = resources.retrieval_run(suite.name, suite.passages, suite.queries, models, options, specs)
        return Ran(result, partial(suite_results.draw, result))

    return run


def suite_source(key: tuple, label: str, suite: RetrievalSuite) -> Source:
    """A suite (shipped, sampled or a pairs file's) as the next run's inputs."""
    recorded = (suite.name, [{"suite": label}], {"mode": "suite"})
    return Source(key, label, suite_run(suite), recorded, texts=suite_texts(suite), suite=suite)


def inputs() -> Source:
    """How many of the suite's anchor groups to run (a quick sample by default)."""
    suite = resources.retrieval_suite()
    total = len(suite.group_ids)
    n = int(
        st.number_input(
            "Anchor groups to run",
            min_value=1,
            max_value=total,
            step=10,
            key=KEY_GROUPS,
            on_change=widgets.persist,
            args=(KEY_GROUPS,),
            value=min(int(widgets.saved(KEY_GROUPS, constants.RETRIEVAL_QUICK_GROUPS)), total),
            help=f"The suite has {total} anchor groups over {len(lexicon.FAILURE_MODES)} failure modes and six domains; "
            "fewer give a quick look at a sample "
            "spread evenly over them (the same groups every time).",
        )
    )
    if n >= total:
        return suite_source((KIND, n), f"the retrieval suite ({total} groups)", suite)
    # The default is a quick run on a sample, said as such; the full suite is one click away (below the Run button).
    st.caption(
        f"**A quick run on a sample**: {n} of the suite's {total} anchor groups, spread evenly over the failure modes and "
        f"domains (the same groups every time). Its intervals are wider than the full suite's: **{FULL_LABEL}** runs all {total}."
    )
    return suite_source((KIND, n), f"a sample of {n} of the retrieval suite's {total} groups", suite.sample(n))


def _run_full_suite(total: int) -> None:
    """The full-suite button's callback: every group in the groups box, and a run on the next rerun."""
    ss[KEY_GROUPS] = total
    widgets.persist(KEY_GROUPS)
    ss[KEY_RUN_FULL] = True


def full_suite_button(source: Source, selection: state.Selection) -> None:
    """Below a quick run on a sample: the full suite in one click, with its expected time on the button."""
    full = resources.retrieval_suite()
    if source.key[1] >= len(full.group_ids):
        return
    est = progress.estimate(selection.models, list(suite_texts(full)), selection.options) if selection.models else None
    when = f", {progress.about(est.seconds)}" if est is not None else ""
    st.button(
        f"{FULL_LABEL} ({len(full.group_ids)} groups{when})",
        key="rt_run_full",
        on_click=_run_full_suite,
        args=(len(full.group_ids),),
        help=(
            "All anchor groups of the suite: the figures the paper-sized intervals need. Cached per inputs, so going back to the sample "
            "is instant."
        ),
    )


def full_suite_asked() -> bool:
    """Whether the full-suite button was pressed since the last rerun (asked once)."""
    return bool(ss.pop(KEY_RUN_FULL, False))
