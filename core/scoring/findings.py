"""A page's finding in one or two plain sentences, computed from its results.

Each page leads with what its numbers say before any chart or table. The
sentences are built here, from the same tables the page draws, so they are
tested against hand-made tables and never disagree with what is shown.
Models are named by their short chart names.
"""

from __future__ import annotations

import math

import pandas as pd

from core import constants, lexicon
from core.models.registry import short_name
from core.scoring.tables import ABOVE_THRESHOLD, NO_THRESHOLD


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def join_names(models: list[str]) -> str:
    """Models by their short names, as a sentence lists them: "A", "A and B", "A, B and C"."""
    names = [short_name(m) for m in models]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def compare_findings(frame: pd.DataFrame) -> list[str]:
    """One sentence on a Compare result: which models would treat the two sentences as the same.

    Args:
        frame: :func:`core.scoring.tables.compare_table` output (model, cosine, threshold, verdict).

    Returns:
        One or two sentences; empty for an empty table.
    """
    if frame.empty:
        return []
    above = frame[frame["verdict"] == "above threshold"]
    below = frame[frame["verdict"] == "below threshold"]
    if len(frame) == 1:
        row = frame.iloc[0]
        if math.isnan(float(row[constants.COL_THRESHOLD])):
            return [
                f"{short_name(row[constants.COL_MODEL])} scores this pair {row[constants.COL_COSINE]:.3f}; it has no calibrated "
                "threshold yet."
            ]
        side = "above" if len(above) else "below"
        meaning = (
            "a retriever using it would treat the two sentences as the same" if len(above) else "a retriever using it would keep them apart"
        )
        return [
            f"{short_name(row[constants.COL_MODEL])} scores this pair {row[constants.COL_COSINE]:.3f}, {side} its threshold of "
            f"{row[constants.COL_THRESHOLD]:.2f}: {meaning}."
        ]
    cosines = frame[constants.COL_COSINE].to_numpy(float)
    low, high = frame.iloc[int(cosines.argmin())], frame.iloc[int(cosines.argmax())]
    spread = (
        f"Cosines run from {low[constants.COL_COSINE]:.3f} ({short_name(low[constants.COL_MODEL])}) "
        f"to {high[constants.COL_COSINE]:.3f} ({short_name(high[constants.COL_MODEL])})."
    )
    if len(above) == len(frame):
        return [
            f"All {len(frame)} models score this pair above their threshold: a retriever would treat the two sentences as the same.",
            spread,
        ]
    if len(below) == len(frame):
        return [f"All {len(frame)} models score this pair below their threshold: a retriever would keep the two sentences apart.", spread]
    if above.empty:
        return [spread]
    return [
        f"{join_names(list(above[constants.COL_MODEL]))} would treat the two sentences as the same (above threshold); "
        f"{join_names(list(below[constants.COL_MODEL])) if len(below) else 'the others'} would not.",
        spread,
    ]


MIN_HEADLINE_PAIRS = 5  # a failure mode with fewer pairs is no headline: one pair above the threshold would read "100%"


def failure_mode_findings(summary: pd.DataFrame, threshold: float) -> list[str]:
    """The worst failure mode at the threshold and the model fooled most often, in two sentences.

    A failure rate is said as the share of pairs scored above the threshold (a failure), never as pairs that "pass".
    Only a failure mode with at least :data:`MIN_HEADLINE_PAIRS` pairs can lead: a rate from one or two pairs is an
    example, not a finding.

    Args:
        summary: :func:`core.scoring.tables.category_summary` output (model, category, n, failure_rate).
        threshold: the threshold the failure rates are at.

    Returns:
        Up to two sentences; empty when the summary holds no failure mode; one sentence saying so when every failure
        mode has too few pairs.
    """
    rows = summary[summary[constants.COL_CATEGORY].isin(lexicon.FAILURE_MODES)].dropna(subset=["failure_rate"])
    if rows.empty:
        return []
    enough = rows[rows["n"] >= MIN_HEADLINE_PAIRS]
    if enough.empty:
        return [
            f"Every failure mode here has fewer than {MIN_HEADLINE_PAIRS} pairs per model: too few for a headline; the table by "
            "category gives each rate with its count."
        ]
    worst = enough.iloc[int(enough["failure_rate"].to_numpy(float).argmax())]
    label = lexicon.CATEGORY_LABELS.get(worst[constants.COL_CATEGORY], worst[constants.COL_CATEGORY])
    first = (
        f"At threshold {threshold:.2f}, {short_name(worst[constants.COL_MODEL])} scores {_pct(worst['failure_rate'])} of the "
        f"{int(worst['n'])} {label.lower()} pairs above the threshold: a retriever would return them as matches."
    )
    # Pooled over the adversarial pairs: each mode weighs by its number of pairs.
    sums = rows.assign(_above=rows["failure_rate"] * rows["n"]).groupby(constants.COL_MODEL, sort=False)[["_above", "n"]].sum()
    overall = sums["_above"] / sums["n"]
    if len(overall) == 1:
        return [first, f"Across all failure modes, {_pct(float(overall.iloc[0]))} of its adversarial pairs score above the threshold."]
    values, names = overall.to_numpy(float), [str(m) for m in overall.index]
    most, least = int(values.argmax()), int(values.argmin())
    return [
        first,
        f"Across all failure modes, {short_name(names[most])} scores {_pct(values[most])} of the adversarial pairs above the "
        f"threshold and {short_name(names[least])} {_pct(values[least])} (lower is better).",
    ]


def worst_first(results: pd.DataFrame, match: pd.Series | None = None) -> pd.DataFrame:
    """Scored pairs with the worst first: what a reader of a labelled file should look at before anything else.

    With binary labels the worst are the no-match pairs scored highest (a
    retriever would return them), then the match pairs scored lowest (it would
    miss them); without labels, the highest cosines first.

    Args:
        results: tidy results (model, cosine, ...), any index.
        match: per row 1 (match), 0 (no match) or NaN, aligned with ``results``; None when there are no binary labels.

    Returns:
        The same rows, reordered, index reset.
    """
    cos = results[constants.COL_COSINE].astype(float)
    if match is None or match.isna().all():
        return results.iloc[(-cos).argsort(kind="stable")].reset_index(drop=True)
    m = match.astype(float)
    # no-match first (highest cosine first), then match (lowest first), then unlabelled rows
    group = m.map({0.0: 0, 1.0: 1}).fillna(2)
    key = pd.DataFrame({"group": group.to_numpy(), "score": cos.where(m != 0, -cos).to_numpy()})
    order = key.sort_values(["group", "score"], kind="stable").index
    return results.iloc[order].reset_index(drop=True)


def oov_findings(summary: pd.DataFrame, reading: str) -> list[str]:
    """How much an invented word moves each model's cosine, under the named reading (OOV robustness).

    Args:
        summary: :func:`core.papers.oov.oov_summary` output (model, mean_delta, ci_low, ci_high, normalized_mean).
        reading: the reading in words (e.g. "entity replaced in the second sentence only").

    Returns:
        One sentence naming the most and the least affected model; empty for an empty summary.
    """
    rows = summary.dropna(subset=["mean_delta"])
    if rows.empty:
        return []

    def part(row: pd.Series) -> str:
        share = (
            f", {100 * row['normalized_mean']:.0f}% of its dynamic range"
            if "normalized_mean" in row and pd.notna(row["normalized_mean"])
            else ""
        )
        return (
            f"{short_name(row[constants.COL_MODEL])}'s cosine drops by {row['mean_delta']:.2f} on average "
            f"(95% CI {row['ci_low']:.2f} to {row['ci_high']:.2f}{share})"
        )

    deltas = rows["mean_delta"].to_numpy(float)
    most, least = rows.iloc[int(deltas.argmax())], rows.iloc[int(deltas.argmin())]
    if len(rows) == 1:
        return [f"With the {reading}, {part(most)} when a real name is swapped for an invented word."]
    return [f"With the {reading}, {part(most)} when a real name is swapped for an invented word; {part(least)}."]


def _churn(row: pd.Series, fixed: str, broken: str, ties: str | None = None, words: tuple[str, str] = ("fixed", "broken")) -> str:
    """ " (3 fixed, 2 broken, 1 tie)": what a mitigation flipped each way beside its net figure; empty without the counts."""
    if fixed not in row.index or broken not in row.index or pd.isna(row[fixed]) or pd.isna(row[broken]):
        return ""
    parts = [f"{int(row[fixed])} {words[0]}", f"{int(row[broken])} {words[1]}"]
    if ties is not None and ties in row.index and not pd.isna(row[ties]):
        parts.append(f"{int(row[ties])} tie{'' if int(row[ties]) == 1 else 's'}")
    return " (" + ", ".join(parts) + ")"


def _label(mitigation: str) -> str:
    head, sep, arg = str(mitigation).partition(":")
    return constants.MITIGATION_LABELS.get(head, head) + (f" {arg}" if sep else "")


def retrieval_findings(win_rates: pd.DataFrame, summary: pd.DataFrame | None = None) -> list[str]:
    """How often a retriever ranks the contradiction above the restatement, and what each mitigation makes of it (Retrieval).

    Args:
        win_rates: ``RetrievalResult.win_rates`` (model, mitigation, mode, win_rate); the ``all`` mode rows are used.
        summary: ``RetrievalResult.summary()``, or None: with it, each mitigation's figure carries the
            variants it fixed and broke and its ties (a win turned into a tie is no fix).

    Returns:
        One sentence per model (dense cosine first, then each mitigation); empty without plain-cosine rows.
    """
    rows = win_rates[win_rates[constants.COL_MODE] == constants.MODE_ALL]
    churn = summary.set_index([constants.COL_MODEL, constants.COL_MITIGATION]) if summary is not None and not summary.empty else None
    out = []
    for model, mine in rows.groupby(constants.COL_MODEL, sort=False):
        plain = mine[mine[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
        if plain.empty:
            continue
        sentence = (
            f"{short_name(str(model))} ranks the contradiction above the restatement in "
            f"{_pct(float(plain[constants.COL_WIN_RATE].iloc[0]))} of the variants"
        )
        others = mine[mine[constants.COL_MITIGATION] != constants.MITIGATION_NONE]
        if not others.empty:

            def effect(m: str, rate: float, model=model) -> str:
                extra = (
                    _churn(churn.loc[(model, m)], constants.COL_FIXED, constants.COL_BROKEN, constants.COL_TIES)
                    if churn is not None and (model, m) in churn.index
                    else ""
                )
                return f"{_label(m)} brings that to {_pct(rate)}{extra}"

            sentence += "; " + ", ".join(
                effect(m, float(r)) for m, r in zip(others[constants.COL_MITIGATION], others[constants.COL_WIN_RATE], strict=True)
            )
        out.append(sentence + " (lower is better).")
    return out


def retrieval_headline(win_rates: pd.DataFrame, summary: pd.DataFrame | None = None) -> tuple[str, pd.DataFrame]:
    """The retrieval suite's headline: one sentence and a table, "lower is better" said once (not once per model).

    Args:
        win_rates: ``RetrievalResult.win_rates`` (model, mitigation, mode, win_rate); the ``all`` mode rows are used.
        summary: ``RetrievalResult.summary()``, or None: with it, the table gives each mitigation's fixed, broken and ties.

    Returns:
        (sentence, table): the table has one row per model and mitigation (plain cosine first) with ``model``,
        ``mitigation`` (as read), ``win_rate`` and, with ``summary``, ``fixed``, ``broken``, ``ties``; the sentence names
        the range with the plain cosine and the mitigation that brings a model lowest. Empty sentence without plain rows.
    """
    rows = win_rates[win_rates[constants.COL_MODE] == constants.MODE_ALL]
    columns = [constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_WIN_RATE, constants.COL_FIXED, constants.COL_BROKEN]
    table = rows[[constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_WIN_RATE]].copy()
    if summary is not None and not summary.empty:
        extra = [c for c in (constants.COL_FIXED, constants.COL_BROKEN, constants.COL_TIES) if c in summary.columns]
        table = table.merge(summary[[constants.COL_MODEL, constants.COL_MITIGATION, *extra]], how="left", sort=False)
        table.loc[table[constants.COL_MITIGATION] == constants.MITIGATION_NONE, extra] = float("nan")
    table = table.assign(
        _plain=table[constants.COL_MITIGATION] != constants.MITIGATION_NONE,
        _order=table[constants.COL_MODEL].map({m: i for i, m in enumerate(dict.fromkeys(table[constants.COL_MODEL]))}),
    )
    table = table.sort_values(["_order", "_plain"], kind="stable").drop(columns=["_plain", "_order"]).reset_index(drop=True)
    table[constants.COL_MITIGATION] = table[constants.COL_MITIGATION].map(_label)
    plain = rows[rows[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    if plain.empty:
        return "", table[[c for c in [*columns, constants.COL_TIES] if c in table.columns]]
    values = plain[constants.COL_WIN_RATE].to_numpy(float)
    names = [str(m) for m in plain[constants.COL_MODEL]]
    worst, best = int(values.argmax()), int(values.argmin())
    said = (
        f"{short_name(names[worst])} ranks the contradiction above the restatement for {_pct(values[worst])} of the variants"
        if len(values) == 1
        else f"With the plain cosine, models rank the contradiction above the restatement for {_pct(values[best])} "
        f"({short_name(names[best])}) to {_pct(values[worst])} ({short_name(names[worst])}) of the variants"
    )
    fixes = rows[rows[constants.COL_MITIGATION] != constants.MITIGATION_NONE]
    if not fixes.empty:
        low = fixes.iloc[int(fixes[constants.COL_WIN_RATE].to_numpy(float).argmin())]
        said += (
            f"; {_label(str(low[constants.COL_MITIGATION]))} brings {short_name(str(low[constants.COL_MODEL]))} to "
            f"{_pct(float(low[constants.COL_WIN_RATE]))}"
        )
    return said + " (lower is better; the table gives every model and fix).", table[
        [c for c in [*columns, constants.COL_TIES] if c in table.columns]
    ]


def _spread(plain: pd.DataFrame, column: str) -> str:
    """ "25% (MiniLM-L6) to 40% (mpnet-base)": the lowest and highest of ``column`` over the plain-cosine rows, by model."""
    values = plain[column].to_numpy(float)
    low, high = int(values.argmin()), int(values.argmax())
    name = [short_name(str(m)) for m in plain[constants.COL_MODEL]]
    if values[low] == values[high]:
        return f"{_pct(values[low])} (every model)"
    return f"{_pct(values[low])} ({name[low]}) to {_pct(values[high])} ({name[high]})"


def _largest_move(summary: pd.DataFrame, column: str) -> pd.Series | None:
    """The mitigation row whose ``column`` moved furthest from its model's plain cosine (None without mitigations)."""
    plain = summary[summary[constants.COL_MITIGATION] == constants.MITIGATION_NONE].set_index(constants.COL_MODEL)[column]
    fixes = summary[summary[constants.COL_MITIGATION] != constants.MITIGATION_NONE]
    fixes = fixes[fixes[constants.COL_MODEL].isin(plain.index)]
    if fixes.empty:
        return None
    moved = abs(fixes[column].to_numpy(float) - plain.loc[fixes[constants.COL_MODEL]].to_numpy(float))
    return fixes.iloc[int(moved.argmax())]


def triples_findings(summary: pd.DataFrame) -> list[str]:
    """What a triples file says: how often a negative outranks its positive, how often a positive comes first, and each mitigation's effect.

    Args:
        summary: ``TriplesResult.summary()`` (model, mitigation, n, ties, win_rate, fixed, broken,
            n_queries, recall_at_1, recall_gained, recall_lost, tied_queries).

    Returns:
        One sentence: a model's figures and each mitigation's effect, or with several models the range over them and the
        mitigation that moved a win rate most (the page's table below gives every model and mitigation); empty without
        plain-cosine rows.
    """
    plain = summary[summary[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    if plain[constants.COL_MODEL].nunique() > 1:
        row = plain.iloc[0]
        said = (
            f"Models rank a negative above its positive in {_spread(plain, constants.COL_WIN_RATE)} of {int(row[constants.COL_N])} "
            f"triples and a positive first for {_spread(plain, constants.COL_IR_RECALL_AT[1])} of {int(row[constants.COL_N_QUERIES])} "
            "anchors"
        )
        move = _largest_move(summary, constants.COL_WIN_RATE)
        if move is not None:
            before = float(plain.set_index(constants.COL_MODEL).loc[move[constants.COL_MODEL], constants.COL_WIN_RATE])
            said += (
                f"; {_label(move[constants.COL_MITIGATION])} moves {short_name(str(move[constants.COL_MODEL]))} from {_pct(before)} to "
                f"{_pct(float(move[constants.COL_WIN_RATE]))}{_churn(move, constants.COL_FIXED, constants.COL_BROKEN, constants.COL_TIES)}"
            )
        return [said + " (win rate: lower is better; recall@1: higher is better; the table gives every model and mitigation)."]
    out = []
    for model, mine in summary.groupby(constants.COL_MODEL, sort=False):
        plain = mine[mine[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
        if plain.empty:
            continue
        row = plain.iloc[0]
        ties = int(row[constants.COL_TIES])
        sentence = (
            f"{short_name(str(model))} ranks a negative above its positive in {_pct(float(row[constants.COL_WIN_RATE]))} of "
            f"{int(row[constants.COL_N])} triples{f' ({ties} exact tie' + ('' if ties == 1 else 's') + ' apart)' if ties else ''} "
            f"and ranks a positive first for {_pct(float(row[constants.COL_IR_RECALL_AT[1]]))} of {int(row[constants.COL_N_QUERIES])} "
            "anchors"
        )
        tied = int(row[constants.COL_TIED_QUERIES])
        if tied:
            sentence += f" ({tied} decided by an exact tie)"
        effects = [
            f"{_label(r[constants.COL_MITIGATION])} brings those to {_pct(float(r[constants.COL_WIN_RATE]))}"
            f"{_churn(r, constants.COL_FIXED, constants.COL_BROKEN, constants.COL_TIES)} and "
            f"{_pct(float(r[constants.COL_IR_RECALL_AT[1]]))}{_churn(r, 'recall_gained', 'recall_lost', words=('gained', 'lost'))}"
            for _, r in mine[mine[constants.COL_MITIGATION] != constants.MITIGATION_NONE].iterrows()
        ]
        out.append(sentence + ("; " + "; ".join(effects) if effects else "") + " (win rate: lower is better; recall@1: higher is better).")
    return out


def beir_findings(summary: pd.DataFrame) -> list[str]:
    """What a BEIR folder says: recall@1 and nDCG@10 from the user's judgements, the queries a tie decided, each mitigation's effect.

    Args:
        summary: ``BeirResult.summary()`` (model, mitigation, n_queries, recall_at_1, recall_gained,
            recall_lost, ndcg_at_10, tied_queries).

    Returns:
        One sentence: a model's figures and each mitigation's effect, or with several models the range over them and the
        mitigation that moved a recall@1 most (the page's tables below give every model and mitigation); empty without
        plain-cosine rows.
    """
    plain = summary[summary[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    if plain[constants.COL_MODEL].nunique() > 1:
        nd = plain[constants.COL_NDCG_AT].to_numpy(float)
        said = (
            f"By your judgements, the models rank a relevant passage first (recall@1) for "
            f"{_spread(plain, constants.COL_IR_RECALL_AT[1])} of {int(plain[constants.COL_N_QUERIES].iloc[0])} queries, nDCG@10 "
            + (f"{nd.min():.3f} to {nd.max():.3f}" if nd.min() != nd.max() else f"{nd.min():.3f}")
        )
        move = _largest_move(summary, constants.COL_IR_RECALL_AT[1])
        if move is not None:
            before = float(plain.set_index(constants.COL_MODEL).loc[move[constants.COL_MODEL], constants.COL_IR_RECALL_AT[1]])
            said += (
                f"; {_label(move[constants.COL_MITIGATION])} moves {short_name(str(move[constants.COL_MODEL]))}'s recall@1 from "
                f"{_pct(before)} to {_pct(float(move[constants.COL_IR_RECALL_AT[1]]))}"
                f"{_churn(move, 'recall_gained', 'recall_lost', words=('gained', 'lost'))}"
            )
        return [said + " (the tables below give every model and mitigation)."]
    out = []
    for model, mine in summary.groupby(constants.COL_MODEL, sort=False):
        plain = mine[mine[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
        if plain.empty:
            continue
        row = plain.iloc[0]
        sentence = (
            f"By your judgements, {short_name(str(model))} ranks a relevant passage first (recall@1) for "
            f"{_pct(float(row[constants.COL_IR_RECALL_AT[1]]))} of {int(row[constants.COL_N_QUERIES])} queries, nDCG@10 "
            f"{float(row[constants.COL_NDCG_AT]):.3f}"
        )
        tied = int(row[constants.COL_TIED_QUERIES])
        if tied:
            sentence += f" ({tied} quer{'y' if tied == 1 else 'ies'} decided by an exact tie, broken by passage id as trec_eval does)"
        effects = [
            f"{_label(r[constants.COL_MITIGATION])} brings recall@1 to {_pct(float(r[constants.COL_IR_RECALL_AT[1]]))}"
            f"{_churn(r, 'recall_gained', 'recall_lost', words=('gained', 'lost'))}"
            for _, r in mine[mine[constants.COL_MITIGATION] != constants.MITIGATION_NONE].iterrows()
        ]
        out.append(sentence + ("; " + "; ".join(effects) if effects else "") + ".")
    return out


def demoted_findings(demoted: pd.DataFrame, n_queries: dict[str, int], mitigation: str) -> list[str]:
    """A warning in words when a mitigation moved a passage the user judged relevant down (BEIR): the contradiction guard
    penalises a correct passage whose polarity differs from the query's ("Is aspirin recommended?" answered by "Aspirin is
    not recommended").

    Args:
        demoted: ``BeirResult.demoted(mitigation)`` (model, query, rank_before, rank_after; NaN after: out of the top 20).
        n_queries: model -> queries it ranked.
        mitigation: the mitigation's name (``guard``, ``bm25-rrf``, ...).

    Returns:
        One sentence naming every model with a demoted passage and how many queries each (models with the same count
        named together), the first model's first such query as its example; empty when none was.
    """
    if demoted.empty:
        return []
    groups: dict[tuple[int, int], list[str]] = {}
    for model, rows in demoted.groupby(constants.COL_MODEL, sort=False):
        total = int(n_queries.get(str(model), len(rows)))
        groups.setdefault((len(rows), total), []).append(str(model))
    counts = ", ".join(
        f"{n} of {total} quer{'y' if total == 1 else 'ies'} with {join_names(models)}" for (n, total), models in groups.items()
    )
    first = demoted.iloc[0]
    after = "out of the top 20" if pd.isna(first["rank_after"]) else f"to rank {int(first['rank_after'])}"
    why = (
        ": it penalises a passage whose polarity differs from the query's, as a correct answer's can (“Is aspirin "
        "recommended?” answered by “Aspirin is not recommended”)"
        if mitigation == constants.MITIGATION_GUARD
        else ""
    )
    whose = f" ({short_name(str(first[constants.COL_MODEL]))})" if len(demoted[constants.COL_MODEL].unique()) > 1 else ""
    return [
        f"{_label(mitigation)[:1].upper()}{_label(mitigation)[1:]} moved a passage you judged relevant down for {counts}{why}. "
        f"For example “{first[constants.COL_QUERY]}”: its relevant passage went from rank {int(first['rank_before'])} {after}{whose}."
    ]


def perturbation_findings(table: pd.DataFrame) -> list[str]:
    """How many variants each model still treats as the typed sentence, and which one it scores closest (Perturbations).

    Args:
        table: :func:`core.scoring.tables.perturbation_table` output (model, category, text_b, cosine, verdict),
            one row per model and variant; a model without a calibrated threshold is said to have none.

    Returns:
        Two sentences (variants above the threshold, the closest variant); empty for an empty table.
    """
    if table.empty:
        return []
    counts, closest = [], []
    for model, mine in table.groupby(constants.COL_MODEL, sort=False):
        name = short_name(str(model))
        judged = mine[mine["verdict"] != NO_THRESHOLD]
        counts.append((name, int((judged["verdict"] == ABOVE_THRESHOLD).sum()), len(judged)))
        top = mine.iloc[int(mine[constants.COL_COSINE].to_numpy(float).argmax())]
        label = lexicon.CATEGORY_LABELS.get(top[constants.COL_CATEGORY], top[constants.COL_CATEGORY]).lower()
        closest.append((name, f"“{top[constants.COL_TEXT_B]}” ({label}, {top[constants.COL_COSINE]:.3f})"))
    if len(counts) == 1:
        (name, above, n), (_, variant) = counts[0], closest[0]
        kept = (
            f"{name} keeps {above} of {n} variants above its threshold: a retriever would return them as the same sentence."
            if n
            else f"{name} has no calibrated threshold yet, so no variant is judged."
        )
        return [kept, f"It scores {variant} closest to the original."]
    return [
        "Variants above each model's threshold (returned as the same sentence): "
        + ", ".join(f"{name} {above} of {n}" if n else f"{name} no calibrated threshold" for name, above, n in counts)
        + ".",
        "Closest to the original: " + "; ".join(f"{name} {variant}" for name, variant in closest) + ".",
    ]


def split_findings(rows: list[dict]) -> list[str]:
    """Whether the models cut the typed lines alike, and which word splits into the most pieces (Tokenizer).

    Args:
        rows: :func:`core.models.tokens.token_rows` output: per model and line, ``model``, ``text``,
            ``identical_across_models`` and ``words`` (each with ``word`` and ``pieces``).

    Returns:
        Up to two sentences; empty when there are no rows.
    """
    if not rows:
        return []
    models = list(dict.fromkeys(str(r["model"]) for r in rows))
    out = []
    if len(models) > 1:
        same = {str(r["text"]): bool(r["identical_across_models"]) for r in rows}
        differ = sum(not s for s in same.values())
        if differ == 0:
            out.append(f"All {len(models)} models split {'the line' if len(same) == 1 else f'all {len(same)} lines'} the same way.")
        else:
            out.append(f"The models split {differ} of {len(same)} line{'' if len(same) == 1 else 's'} differently.")
    pieces = [(str(w["word"]), str(r["model"]), len(w["pieces"])) for r in rows for w in r["words"]]
    if pieces:
        most = max(n for _, _, n in pieces)
        word = next(w for w, _, n in pieces if n == most)
        who = join_names(list(dict.fromkeys(m for w, m, n in pieces if w == word and n == most)))
        out.append(f"“{word}” splits most: {most} piece{'' if most == 1 else 's'} under {who}.")
    return out


def model_answer(frame: pd.DataFrame, threshold: float) -> str:
    """One model's answer in a few words, shown the moment that model is done (progressive answers).

    Args:
        frame: that model's rows of a results table (``cosine`` per pair).
        threshold: the sidebar's threshold.

    Returns:
        "cosine 0.9470, above the threshold 0.70" for one pair; "496 pairs, mean cosine 0.612, 38% above the
        threshold 0.70" for more; "no pairs" for none.
    """
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    cos = pd.to_numeric(frame[constants.COL_COSINE], errors="coerce").dropna() if constants.COL_COSINE in frame else pd.Series(dtype=float)
    if cos.empty:
        return "no pairs"
    if len(cos) == 1:
        side = "above" if cos.iloc[0] > threshold else "at or below"
        return f"cosine {cos.iloc[0]:.4f}, {side} the threshold {threshold:.2f}"
    return f"{len(cos)} pairs, mean cosine {cos.mean():.3f}, {_pct(float((cos > threshold).mean()))} above the threshold {threshold:.2f}"
