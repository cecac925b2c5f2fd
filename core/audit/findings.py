"""An audit's findings as a person reads them: one sentence, a small table, each pair once with every model's cosine.

The CLI (``audit``), the Your corpus page, the history and the HTML report
all say an audit through :func:`audit_findings`, so none of them says more or
less than the others: the lead sentence names the worst model's share of
passages with a confusable twin and its interval; the table gives every model
one row (twin pairs, the share and its interval, the mode with most twins, and
with queries how often they meet a twin); further sentences carry what only
some runs have (the approximate search's recall, a judge, the planted
corpus); the worst pairs are said once each, every model's cosine beside them.

:func:`pair_cards` is the same "each pair once" rule for the page's cards: one
row per pair of passages, the cosine of every model that kept it, grouped by
mode.  Column words for the risk table (:data:`SUMMARY_WORDS`) live here too,
so the page, the store block and the CLI label it alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.audit import kinds
from core.audit.risk import ALL_MODES, Threshold, pairs_at, threshold_for
from core.audit.run import COL_ID_A, COL_ID_B, COL_INDEX_A, COL_INDEX_B, COL_KIND, COL_MODE, AuditResult
from core.models import registry

WORST_PAIRS = 3
COL_SHARE_LOW, COL_SHARE_HIGH = "twin_share_ci_low", "twin_share_ci_high"
COL_TOP_MODE = "most_twins_mode"
TABLE_COLUMNS = [
    constants.COL_MODEL,
    "twin_pairs",
    "passages_with_twin",
    "twin_share",
    COL_SHARE_LOW,
    COL_SHARE_HIGH,
    COL_TOP_MODE,
    "query_twin_top5",
    "twin_first",
]
# The words a person reads for each column of the risk summary and the findings table (page, store block, CLI, report).
SUMMARY_WORDS = {
    constants.COL_MODEL: "model",
    COL_MODE: "failure mode",
    "threshold": "threshold",
    "n_passages": "passages",
    "twin_pairs": "twin pairs",
    "near_duplicate_pairs": "near-duplicate pairs",
    "several_differences_pairs": "pairs with several differences",
    "other_pairs": "other close pairs",
    "passages_with_twin": "passages with a twin",
    "twin_share": "share of passages with a twin",
    COL_SHARE_LOW: "95% CI from",
    COL_SHARE_HIGH: "95% CI to",
    COL_TOP_MODE: "mode with most twins",
    "n_queries": "queries",
    "query_twin_top5": "queries whose top 5 holds a passage and its twin",
    "query_twin_top5_ci_low": "top-5 share: 95% CI from",
    "query_twin_top5_ci_high": "top-5 share: 95% CI to",
    "twin_first": "queries whose first passage has its twin in the top 5",
    "twin_first_ci_low": "first-passage share: 95% CI from",
    "twin_first_ci_high": "first-passage share: 95% CI to",
}
# With judged queries (a BEIR folder) the first-passage column means another thing, and says so.
JUDGED_TWIN_FIRST = "queries whose first passage is the twin of a relevant one, not relevant itself"
SHARE_COLUMNS = tuple(c for c in SUMMARY_WORDS if "share" in c or c.startswith(("query_twin", "twin_first")))
QUERY_COLUMNS = tuple(c for c in SUMMARY_WORDS if c == "n_queries" or c.startswith(("query_twin", "twin_first")))


def mode_words(mode: str) -> str:
    """A failure mode as a person reads it ("Entity swap"), the pooled row as "all modes"."""
    return "all modes" if mode == ALL_MODES else lexicon.CATEGORY_LABELS.get(mode, str(mode).replace("_", " "))


def summary_words(judged: bool = False) -> dict[str, str]:
    """:data:`SUMMARY_WORDS`, with the first-passage column worded for judged queries when ``judged``."""
    return {**SUMMARY_WORDS, "twin_first": JUDGED_TWIN_FIRST} if judged else dict(SUMMARY_WORDS)


@dataclass(frozen=True)
class AuditFindings:
    """What an audit found, said once.

    Attributes:
        lead: one sentence: the worst model's share of passages with a twin, its interval and mode.
        table: one row per model (:data:`TABLE_COLUMNS`; query columns only with queries), worst model first.
        notes: sentences only some runs have (approximate search recall, a judge, the planted corpus).
        worst: the worst twin pairs, each once with every model's cosine, highest first.
        judged: whether ``twin_first`` reads judged queries (a BEIR folder).
    """

    lead: str
    table: pd.DataFrame
    notes: tuple[str, ...] = ()
    worst: tuple[str, ...] = ()
    judged: bool = False

    def lines(self) -> list[str]:
        """Every sentence, lead first, for a history record, ``summary.json`` and the report (the table apart)."""
        return [self.lead, *self.notes, *self.worst]

    def words_table(self) -> pd.DataFrame:
        """The table as text a person reads: word headers, percentages, the interval in one column."""
        words = summary_words(self.judged)
        out = pd.DataFrame({"model": self.table[constants.COL_MODEL].map(registry.short_name)})
        out[words["twin_pairs"]] = self.table["twin_pairs"].map(lambda n: f"{int(n):,}")
        _share_said(self.table, words, out)
        out[words[COL_TOP_MODE]] = self.table[COL_TOP_MODE].fillna("—")
        _queries_said(self.table, words, out)
        return out


def _share_said(table: pd.DataFrame, words: dict[str, str], out: pd.DataFrame) -> None:
    """The share of passages with a twin as "66.7% (4)" and its interval as one "95% CI" column, into ``out``."""
    out[words["twin_share"]] = [f"{_pct(s)} ({int(k):,})" for s, k in zip(table["twin_share"], table["passages_with_twin"], strict=True)]
    out["95% CI"] = [_interval(lo, hi) for lo, hi in zip(table[COL_SHARE_LOW], table[COL_SHARE_HIGH], strict=True)]


def _queries_said(table: pd.DataFrame, words: dict[str, str], out: pd.DataFrame) -> None:
    """The two query shares as percentages, into ``out``, when the table has them (their intervals stay in the download)."""
    for column in ("query_twin_top5", "twin_first"):
        if column in table.columns and table[column].notna().any():
            out[words[column]] = table[column].map(lambda x: "—" if x != x else _pct(x))


def risk_words(summary: pd.DataFrame, judged: bool = False) -> pd.DataFrame:
    """A risk summary (:func:`core.audit.risk.risk_summary`) as a screen shows it: only what the finding needs, in words.

    Model, failure mode (its label), twin pairs, the share of passages with a twin ("66.7% (4)"), its 95% CI in one column,
    and with queries the two query shares; the threshold, the counts of other kinds and every interval's two ends stay
    in the download, which holds the summary itself (five columns with no query, seven with: a 1280 px screen shows
    them all, where the summary's fifteen ran off it).

    Args:
        summary: one row per model and mode.
        judged: the first-passage column reads judged queries (a BEIR folder).

    Returns:
        One row per row of ``summary``, in its order, every cell text.
    """
    words = summary_words(judged)
    out = pd.DataFrame(
        {words[constants.COL_MODEL]: summary[constants.COL_MODEL].astype(str), words[COL_MODE]: summary[COL_MODE].map(mode_words)}
    )
    out[words["twin_pairs"]] = summary["twin_pairs"].map(lambda n: f"{int(n):,}")
    _share_said(summary, words, out)
    _queries_said(summary, words, out)
    return out.reset_index(drop=True)


def side_by_side_words(frame: pd.DataFrame, judged: bool = False) -> pd.DataFrame:
    """Exact search vs the store's own search (:func:`core.stores.audit.side_by_side`) as a screen shows it: each number's
    two values in one column, "exact → store" ("12 → 10", "4.0% → 3.3%"), so a 1280 px screen holds the table.

    Args:
        frame: model, mode and ``<column>_exact`` / ``<column>_store`` pairs of risk-summary columns.
        judged: the first-passage column reads judged queries.

    Returns:
        One row per row of ``frame``: model, failure mode and one text column per number, headed
        "<its words>: exact → store"; a number missing on both sides for every row is left out.
    """
    words = summary_words(judged)
    out = pd.DataFrame(
        {words[constants.COL_MODEL]: frame[constants.COL_MODEL].astype(str), words[COL_MODE]: frame[COL_MODE].map(mode_words)}
    )
    for column in frame.columns:
        if not column.endswith("_exact") or f"{column[: -len('_exact')]}_store" not in frame.columns:
            continue
        base = column[: -len("_exact")]
        exact, store = frame[column], frame[f"{base}_store"]
        if exact.isna().all() and store.isna().all():
            continue
        said = _pct if base in SHARE_COLUMNS else (lambda n: "—" if n != n else f"{int(n):,}")
        out[f"{words.get(base, base.replace('_', ' '))}: exact → store"] = [
            f"{said(float(a))} → {said(float(b))}" for a, b in zip(exact, store, strict=True)
        ]
    return out.reset_index(drop=True)


def _pct(x: float) -> str:
    return "—" if x != x else f"{100 * x:.1f}%"


def _interval(low: float, high: float) -> str:
    return "—" if low != low or high != high else f"{100 * low:.1f}–{100 * high:.1f}%"


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _pairs_word(n: int) -> str:
    return f"{n:,} pair" if n == 1 else f"{n:,} pairs"


def findings_table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per model from a :func:`core.audit.risk.risk_summary`: its ``all`` row and the mode with most twin pairs.

    Returns:
        :data:`TABLE_COLUMNS` (query columns dropped when no model had queries), the highest twin share first.
    """
    overall = summary[summary[COL_MODE] == ALL_MODES].sort_values("twin_share", ascending=False, kind="stable")
    rows = []
    for row in overall.to_dict(orient="records"):
        modes = summary[(summary[constants.COL_MODEL] == row[constants.COL_MODEL]) & (summary[COL_MODE] != ALL_MODES)]
        modes = modes[modes["twin_pairs"] > 0].sort_values("twin_pairs", ascending=False, kind="stable")
        top = None
        if not modes.empty:
            most = int(modes["twin_pairs"].iloc[0])
            tied = [mode_words(str(m)) for m in modes[modes["twin_pairs"] == most][COL_MODE]]
            top = f"{tied[0]} ({_pairs_word(most)})" if len(tied) == 1 else f"{_and(tied)} ({_pairs_word(most)} each)"
        rows.append({**{c: row.get(c) for c in TABLE_COLUMNS if c != COL_TOP_MODE}, COL_TOP_MODE: top})
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    if summary.empty or summary["n_queries"].fillna(0).eq(0).all():
        table = table.drop(columns=["query_twin_top5", "twin_first"])
    return table.reset_index(drop=True)


def _most(top: str) -> str:
    """ "most often by negation", or "by negation and numerical alike" when modes tie."""
    modes, _, count = top.partition(" (")
    return f"by {modes.lower()} alike" if count.endswith("each)") else f"most often by {modes.lower()}"


def _lead(table: pd.DataFrame, summary: pd.DataFrame, threshold: Threshold) -> str:
    n = int(summary["n_passages"].iloc[0])
    names = [registry.short_name(str(m)) for m in table[constants.COL_MODEL]]
    at = (
        f"above {threshold_for(threshold, str(table[constants.COL_MODEL].iloc[0])):.2f}"
        if not isinstance(threshold, Mapping)
        else "above each model's threshold"
    )
    if int(table["twin_pairs"].sum()) == 0:
        who = names[0] if len(names) == 1 else f"any of the {len(names)} models"
        return f"No two of the {n:,} passages are confusable twins {at} for {who}."
    worst = table.iloc[0]
    sentence = (
        f"{_pct(float(worst['twin_share']))} of the {n:,} passages have a confusable twin {at} for {names[0]} "
        f"(95% CI {_interval(float(worst[COL_SHARE_LOW]), float(worst[COL_SHARE_HIGH]))}), {_most(str(worst[COL_TOP_MODE]))}"
    )
    if len(table) > 1:
        rest = table["twin_share"].iloc[1:].to_numpy(float)
        spread = _pct(rest[0]) if np.allclose(rest, rest[0]) else f"{_pct(rest.min())} to {_pct(rest.max())}"
        others = "the other model" if len(rest) == 1 else f"the other {len(rest)} models"
        sentence += f"; {others}: {spread}"
    return sentence + "."


def _worst(result: AuditResult, threshold: Threshold, limit: int) -> list[str]:
    cards = pair_cards(result, threshold, kind=kinds.KIND_TWIN)
    out = []
    for card in cards.sort_values("best_cosine", ascending=False, kind="stable").head(limit).to_dict(orient="records"):
        cosines = ", ".join(f"{registry.short_name(m)} {c:.3f}" for m, c in card["cosines"].items())
        out.append(f"Worst pair ({mode_words(str(card[COL_MODE])).lower()}; cosine {cosines}): “{card['text_a']}” vs “{card['text_b']}”.")
    return out


def _search_notes(result: AuditResult) -> list[str]:
    """The approximate search's recall, per model that searched approximately: a finding like the others."""
    return [f"{registry.short_name(model)}: {search.sentence()}." for model, search in result.search.items() if not search.exact]


def audit_findings(
    result: AuditResult,
    summary: pd.DataFrame,
    threshold: Threshold,
    *,
    extra: Sequence[str] = (),
    worst: int = WORST_PAIRS,
) -> AuditFindings:
    """The audit said once: a lead sentence, a table of every model, further notes and the worst pairs.

    Args:
        result: the audit.
        summary: :func:`core.audit.risk.risk_summary` of ``result`` at ``threshold``.
        threshold: one number, or one per model.
        extra: sentences only the caller has (a judge's verdict, the planted corpus's recall), after the search notes.
        worst: how many worst twin pairs to say.

    Returns:
        An :class:`AuditFindings`; with no model's results, the lead says so and the table is empty.

    Raises:
        ValueError: a negative ``worst``.
    """
    if worst < 0:
        raise ValueError(f"worst must be at least 0, got {worst}")
    judged = result.qrels is not None
    if summary.empty:
        return AuditFindings("No model produced results.", pd.DataFrame(columns=TABLE_COLUMNS), tuple(extra), judged=judged)
    table = findings_table(summary)
    return AuditFindings(
        _lead(table, summary, threshold),
        table,
        (*_search_notes(result), *extra),
        tuple(_worst(result, threshold, worst)),
        judged,
    )


def pair_cards(result: AuditResult, threshold: Threshold, kind: str | None = None) -> pd.DataFrame:
    """Each close pair once, with the cosine of every model that kept it, grouped by mode.

    A pair is shown when at least one model scores it above its threshold; every other model's cosine is given too
    when the audit kept it (above the audit's floor), so a reader sees which models would confuse the two passages.

    Args:
        result: the audit.
        threshold: one number, or one per model.
        kind: only pairs of this kind (``twin``, ``near-duplicate``, ``other``), or every kind.

    Returns:
        One row per pair: id_a, id_b, text_a, text_b, kind, mode, changed_a, changed_b, index_a, index_b,
        ``cosines`` (model -> cosine, run order), ``above`` (the models above their threshold, run order) and
        ``best_cosine``; by mode in the failure modes' order (other kinds after), the highest cosine first within one.
    """
    above = pairs_at(result, threshold)
    if kind is not None:
        above = above[above[COL_KIND] == kind]
    columns = [
        COL_ID_A,
        COL_ID_B,
        constants.COL_TEXT_A,
        constants.COL_TEXT_B,
        COL_KIND,
        COL_MODE,
        "changed_a",
        "changed_b",
        COL_INDEX_A,
        COL_INDEX_B,
    ]
    if above.empty:
        return pd.DataFrame(columns=[*columns, "cosines", "above", "best_cosine"])
    keys = [COL_INDEX_A, COL_INDEX_B]
    wanted = above[keys].drop_duplicates()
    every = result.pairs.merge(wanted, on=keys, how="inner")
    order = {m: i for i, m in enumerate(result.models)}
    rows = []
    for _, group in every.groupby(keys, sort=False):
        group = group.sort_values(constants.COL_MODEL, key=lambda s: s.map(order).fillna(len(order)), kind="stable")
        cosines = dict(zip(group[constants.COL_MODEL].astype(str), group[constants.COL_COSINE].astype(float), strict=True))
        first = group.iloc[0]
        rows.append(
            {
                **{c: first[c] for c in columns},
                "cosines": cosines,
                "above": [m for m, c in cosines.items() if c > threshold_for(threshold, m)],
                "best_cosine": max(cosines.values()),
            }
        )
    cards = pd.DataFrame(rows)
    rank = {m: i for i, m in enumerate(lexicon.FAILURE_MODES)}
    # Twins by mode in the modes' order; a near-duplicate or other pair has no mode and comes after.
    cards["_group"] = [
        rank.get(str(m), len(rank)) if k == kinds.KIND_TWIN else len(rank) + 1
        for m, k in zip(cards[COL_MODE], cards[COL_KIND], strict=True)
    ]
    cards = cards.sort_values(["_group", "best_cosine"], ascending=[True, False], kind="stable").drop(columns="_group")
    return cards.reset_index(drop=True)


def history_settings(said: AuditFindings, threshold: Threshold) -> dict:
    """What the history keeps of an audit besides its pairs, CLI and page alike: the threshold, the findings in
    sentences and their table as text (what the report shows)."""
    return {
        "threshold": threshold if not isinstance(threshold, Mapping) else None,
        "mode": "audit",
        "findings": said.lines(),
        "findings_table": said.words_table().to_dict(orient="records"),
    }
