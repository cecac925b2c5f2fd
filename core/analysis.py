"""The papers' analyses, computed from a runner results table.

Every function takes the tidy long results (one row per pair per model, see
:mod:`core.runner`) and returns a tidy table.  Formulas live in
:mod:`core.stats`; here is only which rows go into which statistic.

Conventions:
    * Dynamic range comes from the positive and negative controls of the
      suite named (the OOV paper uses its baseline suite).
    * Cohen's d between models on OOV deltas is ``cohens_d(d_m1, d_m2)``;
      failure mode vs positive controls is ``cohens_d(positive, failure)``,
      so a negative d means failures score higher than paraphrases (failure
      paper, Table 5).
    * A failure is a pair scored strictly above the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from core import constants as C
from core import stats

# ------------------------------------------------------------------ helpers


def _suite(results: pd.DataFrame, suite: str | None) -> pd.DataFrame:
    if results.empty or suite is None:
        return results
    return results[results[C.COL_SUITE] == suite]


def _models(results: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(results[C.COL_MODEL])) if not results.empty else []


def _safe(fn, *args, **kwargs) -> float:
    """A statistic, or NaN where its inputs are too few."""
    try:
        return float(fn(*args, **kwargs))
    except (ValueError, ZeroDivisionError):
        return math.nan


def _ci(fn, *args, **kwargs) -> tuple[float, float]:
    try:
        return fn(*args, **kwargs)
    except ValueError:
        return (math.nan, math.nan)


# ------------------------------------------------------------ category tables


def category_summary(results: pd.DataFrame, threshold: float = C.DEFAULT_THRESHOLD, suite: str | None = None) -> pd.DataFrame:
    """Mean ± SD cosine, 95% bootstrap CI and failure rate per model and category.

    Returns:
        Columns model, suite, category, n, mean, sd, ci_low, ci_high,
        failure_rate, fr_ci_low, fr_ci_high (failure rate = share of pairs
        with cosine > threshold).  OOV rows are left out (see
        :func:`oov_deltas`).
    """
    data = _suite(results, suite)
    if data.empty:
        return pd.DataFrame(columns=["model", "suite", "category", "n", "mean", "sd", "ci_low", "ci_high", "failure_rate", "fr_ci_low", "fr_ci_high"])
    if C.COL_VARIANT in data.columns:
        data = data[data[C.COL_VARIANT].isna() | (data[C.COL_VARIANT] == "")]
    rows = []
    for (model, suite_name, cat), group in data.groupby([C.COL_MODEL, C.COL_SUITE, C.COL_CATEGORY], sort=False):
        cos = group[C.COL_COSINE].to_numpy(float)
        mean, sd = stats.mean_sd(cos)
        lo, hi = _ci(stats.bootstrap_ci, cos)
        flo, fhi = _ci(stats.failure_rate_ci, cos, threshold)
        rows.append(
            {
                C.COL_MODEL: model,
                C.COL_SUITE: suite_name,
                C.COL_CATEGORY: cat,
                "n": len(cos),
                "mean": mean,
                "sd": sd,
                "ci_low": lo,
                "ci_high": hi,
                "failure_rate": stats.failure_rate(cos, threshold),
                "fr_ci_low": flo,
                "fr_ci_high": fhi,
            }
        )
    return pd.DataFrame(rows)


def failure_rate_curves(results: pd.DataFrame, thresholds: Sequence[float] | None = None, suite: str | None = C.SUITE_FAILURE_MODES) -> pd.DataFrame:
    """Failure rate over a threshold grid, per model and category (long)."""
    grid = np.asarray(thresholds if thresholds is not None else stats.threshold_grid(), dtype=float)
    data = _suite(results, suite)
    frames = []
    for (model, cat), group in data.groupby([C.COL_MODEL, C.COL_CATEGORY], sort=False):
        rates = stats.failure_rate_curve(group[C.COL_COSINE].to_numpy(float), grid)
        frames.append(pd.DataFrame({C.COL_MODEL: model, C.COL_CATEGORY: cat, "threshold": grid, "failure_rate": rates}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[C.COL_MODEL, C.COL_CATEGORY, "threshold", "failure_rate"])


def failure_mode_table(results: pd.DataFrame, threshold: float = C.DEFAULT_THRESHOLD, suite: str = C.SUITE_FAILURE_MODES) -> pd.DataFrame:
    """Failure-paper Tables 1, 2, 3 and 5 in one long table.

    Returns:
        Per model and failure mode: n, mean, sd, failure_rate at the
        threshold, severity_ratio (mean failure / mean positive) and cohens_d
        (positive vs failure; negative = failures score above paraphrases).
    """
    data = _suite(results, suite)
    rows = []
    for model in _models(data):
        mine = data[data[C.COL_MODEL] == model]
        positive = mine.loc[mine[C.COL_CATEGORY] == C.CAT_POSITIVE, C.COL_COSINE].to_numpy(float)
        for mode in C.FAILURE_MODES:
            cos = mine.loc[mine[C.COL_CATEGORY] == mode, C.COL_COSINE].to_numpy(float)
            if cos.size == 0:
                continue
            mean, sd = stats.mean_sd(cos)
            rows.append(
                {
                    C.COL_MODEL: model,
                    C.COL_CATEGORY: mode,
                    "n": int(cos.size),
                    "mean": mean,
                    "sd": sd,
                    "failure_rate": stats.failure_rate(cos, threshold),
                    "severity_ratio": _safe(stats.severity_ratio, cos, positive) if positive.size else math.nan,
                    "cohens_d": _safe(stats.cohens_d, positive, cos) if positive.size >= 2 else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=[C.COL_MODEL, C.COL_CATEGORY, "n", "mean", "sd", "failure_rate", "severity_ratio", "cohens_d"])


def severity_ranking(results: pd.DataFrame, suite: str = C.SUITE_FAILURE_MODES) -> pd.DataFrame:
    """Failure-paper Table 3: modes ranked by mean cosine averaged over models.

    The severity ratio is the models' average failure-mode mean over their
    average positive-control mean (the reading that reproduces Table 3).
    """
    table = category_summary(results, suite=suite)
    if table.empty:
        return pd.DataFrame(columns=[C.COL_CATEGORY, "avg_similarity", "severity_ratio", "rank"])
    avg = table.groupby(C.COL_CATEGORY)["mean"].mean()
    pos = avg.get(C.CAT_POSITIVE, math.nan)
    out = pd.DataFrame({"avg_similarity": avg.reindex([m for m in C.FAILURE_MODES if m in avg.index])})
    out["severity_ratio"] = out["avg_similarity"] / pos
    out = out.sort_values("avg_similarity", ascending=False)
    out["rank"] = range(1, len(out) + 1)
    return out.rename_axis(C.COL_CATEGORY).reset_index()


def kruskal_by_category(results: pd.DataFrame, suite: str = C.SUITE_FAILURE_MODES, categories: Sequence[str] = C.FAILURE_MODES) -> pd.DataFrame:
    """Kruskal-Wallis H and p across models, per category (needs ≥ 2 models)."""
    data = _suite(results, suite)
    rows = []
    if len(_models(data)) >= 2:
        for cat in categories:
            sub = data[data[C.COL_CATEGORY] == cat]
            if sub.empty:
                continue
            groups = {m: g[C.COL_COSINE].to_numpy(float) for m, g in sub.groupby(C.COL_MODEL, sort=False)}
            res = stats.kruskal_wallis(groups)
            rows.append({C.COL_CATEGORY: cat, "h": res.h, "p": res.p, "n_models": res.n_groups})
    return pd.DataFrame(rows, columns=[C.COL_CATEGORY, "h", "p", "n_models"])


def vulnerability_ranking(results: pd.DataFrame, suite: str = C.SUITE_FAILURE_MODES) -> pd.DataFrame:
    """Failure-paper Table 4 by the documented rank-sum rule (see stats)."""
    table = failure_mode_table(results, suite=suite)
    if table.empty or table[C.COL_MODEL].nunique() < 2:  # ranking needs two models
        return pd.DataFrame(columns=[C.COL_MODEL, "score", "rank", "modes_ranked_first"])
    wide = table.pivot(index=C.COL_CATEGORY, columns=C.COL_MODEL, values="mean")
    return stats.vulnerability_scores(wide)


def jaccard_correlation(results: pd.DataFrame, suite: str = C.SUITE_BASELINE, column: str = C.COL_TOKEN_JACCARD) -> pd.DataFrame:
    """OOV-paper Table 11: Pearson and Spearman of Jaccard overlap vs cosine."""
    data = _suite(results, suite)
    rows = []
    for model, group in data.groupby(C.COL_MODEL, sort=False):
        if len(group) < 3:
            continue
        res = stats.correlation(group[column].to_numpy(float), group[C.COL_COSINE].to_numpy(float))
        rows.append({C.COL_MODEL: model, **res._asdict()})
    return pd.DataFrame(rows, columns=[C.COL_MODEL, "pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n"])


# ---------------------------------------------------------------------- OOV


def dynamic_ranges(results: pd.DataFrame, suite: str = C.SUITE_BASELINE) -> pd.DataFrame:
    """Per model: mean positive, mean negative cosine and their difference."""
    data = _suite(results, suite)
    rows = []
    for model, group in data.groupby(C.COL_MODEL, sort=False):
        pos = group.loc[group[C.COL_CATEGORY] == C.CAT_POSITIVE, C.COL_COSINE].to_numpy(float)
        neg = group.loc[group[C.COL_CATEGORY] == C.CAT_NEGATIVE, C.COL_COSINE].to_numpy(float)
        if pos.size and neg.size:
            rows.append({C.COL_MODEL: model, "mean_positive": pos.mean(), "mean_negative": neg.mean(), "dynamic_range": stats.dynamic_range(pos, neg)})
    return pd.DataFrame(rows, columns=[C.COL_MODEL, "mean_positive", "mean_negative", "dynamic_range"])


def oov_deltas(results: pd.DataFrame, reading: str = C.VARIANT_REPLACED_BOTH, dynamic: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model and OOV item: original and replaced cosine, raw and normalized delta.

    Args:
        results: runner output containing the ``oov`` suite.
        reading: ``replaced_both`` or ``replaced_b`` (which sentences carry
            the invented word).
        dynamic: output of :func:`dynamic_ranges`; computed from ``results``
            when None.  Normalized delta is NaN for models without one.
    """
    data = _suite(results, C.SUITE_OOV)
    cols = [C.COL_MODEL, C.COL_PAIR_ID, C.COL_ENTITY, C.COL_REPLACEMENT, "reading", "cosine_original", "cosine_replaced", "delta", "normalized_delta"]
    if data.empty:
        return pd.DataFrame(columns=cols)
    wide = data.pivot_table(index=[C.COL_MODEL, C.COL_PAIR_ID, C.COL_ENTITY, C.COL_REPLACEMENT], columns=C.COL_VARIANT, values=C.COL_COSINE, sort=False).reset_index()
    wide = wide.rename(columns={C.VARIANT_ORIGINAL: "cosine_original", reading: "cosine_replaced"})
    wide["reading"] = reading
    wide["delta"] = stats.oov_delta(wide["cosine_original"], wide["cosine_replaced"])
    dyn = dynamic if dynamic is not None else dynamic_ranges(results)
    dr = wide[C.COL_MODEL].map(dyn.set_index(C.COL_MODEL)["dynamic_range"]) if not dyn.empty else np.nan
    wide["normalized_delta"] = wide["delta"] / dr
    return wide[cols]


def oov_summary(deltas: pd.DataFrame, dynamic: pd.DataFrame | None = None) -> pd.DataFrame:
    """OOV-paper Tables 4 and 5: per model raw and normalized delta statistics.

    Returns:
        model, n, mean_delta, sd_delta, min_delta, max_delta, ci_low, ci_high
        (bootstrap of the mean delta), dynamic_range, normalized_mean,
        normalized_max, norm_ci_low, norm_ci_high.
    """
    rows = []
    dr_map = dynamic.set_index(C.COL_MODEL)["dynamic_range"].to_dict() if dynamic is not None and not dynamic.empty else {}
    for model, group in deltas.groupby(C.COL_MODEL, sort=False):
        d = group["delta"].to_numpy(float)
        mean, sd = stats.mean_sd(d)
        lo, hi = _ci(stats.bootstrap_diff_ci, group["cosine_original"].to_numpy(float), group["cosine_replaced"].to_numpy(float))
        dr = dr_map.get(model, math.nan)
        norm_ok = dr == dr and dr > 0
        rows.append(
            {
                C.COL_MODEL: model,
                "n": int(d.size),
                "mean_delta": mean,
                "sd_delta": sd,
                "min_delta": float(d.min()),
                "max_delta": float(d.max()),
                "ci_low": lo,
                "ci_high": hi,
                "dynamic_range": dr,
                "normalized_mean": mean / dr if norm_ok else math.nan,
                "normalized_max": float(d.max()) / dr if norm_ok else math.nan,
                "norm_ci_low": lo / dr if norm_ok else math.nan,
                "norm_ci_high": hi / dr if norm_ok else math.nan,
            }
        )
    return pd.DataFrame(rows)


def cohens_d_matrix(deltas: pd.DataFrame, value: str = "delta") -> pd.DataFrame:
    """OOV-paper Table 7: Cohen's d of row model vs column model on OOV deltas."""
    models = _models(deltas)
    by_model = {m: deltas.loc[deltas[C.COL_MODEL] == m, value].to_numpy(float) for m in models}
    grid = [[_safe(stats.cohens_d, by_model[a], by_model[b]) if a != b else 0.0 for b in models] for a in models]
    return pd.DataFrame(grid, index=models, columns=models)


def entity_swap_check(results: pd.DataFrame, suite: str = C.SUITE_BASELINE) -> pd.DataFrame:
    """OOV-paper Table 3: mean and SD of entity-swap cosines per model."""
    table = category_summary(results, suite=suite)
    return table[table[C.COL_CATEGORY] == C.CAT_ENTITY_SWAP][[C.COL_MODEL, "n", "mean", "sd", "ci_low", "ci_high"]].reset_index(drop=True)


def oov_by_original_tokens(deltas: pd.DataFrame, original_tokens: dict[str, int]) -> pd.DataFrame:
    """OOV-paper Table 10: mean delta for single- vs multi-token originals.

    Args:
        deltas: output of :func:`oov_deltas`.
        original_tokens: entity -> subword count of the original entity.
    """
    data = deltas.assign(group=deltas[C.COL_ENTITY].map(lambda e: "single-token" if original_tokens.get(e, 1) == 1 else "multi-token"))
    out = data.groupby([C.COL_MODEL, "group"], sort=False)["delta"].agg(["count", "mean"]).reset_index()
    return out.rename(columns={"count": "n", "mean": "mean_delta"})


# ------------------------------------------------------------------ summary


def summarize(results: pd.DataFrame, threshold: float = C.DEFAULT_THRESHOLD) -> dict[str, pd.DataFrame]:
    """Every summary table the results allow, keyed by name."""
    out: dict[str, pd.DataFrame] = {"categories": category_summary(results, threshold)}
    suites = set(results[C.COL_SUITE]) if not results.empty else set()
    if C.SUITE_FAILURE_MODES in suites:
        out["failure_modes"] = failure_mode_table(results, threshold)
        out["severity"] = severity_ranking(results)
        out["kruskal_wallis"] = kruskal_by_category(results)
        out["vulnerability"] = vulnerability_ranking(results)
    if C.SUITE_BASELINE in suites:
        out["dynamic_range"] = dynamic_ranges(results)
        out["jaccard_correlation"] = jaccard_correlation(results)
    if C.SUITE_OOV in suites:
        dyn = out.get("dynamic_range")
        for reading in C.OOV_READINGS:
            deltas = oov_deltas(results, reading, dyn)
            out[f"oov_deltas_{reading}"] = deltas
            out[f"oov_summary_{reading}"] = oov_summary(deltas, dyn)
    return out


# ------------------------------------------------------ compare & tokenizer
# Tables behind the Compare and Tokenizer pages.

ABOVE_THRESHOLD = "above threshold"
BELOW_THRESHOLD = "below threshold"
NO_THRESHOLD = "no calibrated threshold"
COMPARE_COLUMNS = [C.COL_MODEL, C.COL_COSINE, C.COL_THRESHOLD, "verdict", C.COL_TOKENS_A, C.COL_TOKENS_B, C.COL_TRUNCATED, "published", "note"]


def thresholds_for(results: pd.DataFrame, threshold: float | Mapping[str, float]) -> np.ndarray:
    """Each row's threshold: one global value, or each model's own (NaN for a model without one).

    Returns:
        Shape (n_rows,), aligned with ``results``.
    """
    if isinstance(threshold, Mapping):
        return results[C.COL_MODEL].map(lambda m: threshold.get(m, math.nan)).to_numpy(float)
    return np.full(len(results), float(threshold))


def _verdicts(cosines: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    verdict = np.where(cosines > thresholds, ABOVE_THRESHOLD, BELOW_THRESHOLD).astype(object)
    verdict[np.isnan(thresholds)] = NO_THRESHOLD
    return verdict


def compare_table(
    results: pd.DataFrame, threshold: float | Mapping[str, float] = C.DEFAULT_THRESHOLD, published: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per model for typed pairs: cosine, verdict, token counts, published cosine.

    Args:
        results: runner output (any number of pairs; usually one).
        threshold: a cosine strictly above it is "above threshold" (the
            failure-paper rule: such a pair would be retrieved as the same).
            A mapping gives each model its own (calibrated) threshold.
        published: the failure paper's example table
            (:func:`core.reference.load_failure_examples`: text_a, text_b,
            model, published_cosine, note) or None.  A row gets the published
            cosine when its model and both texts match an example exactly;
            NaN otherwise.

    Returns:
        Columns model, cosine, threshold, verdict, n_tokens_a, n_tokens_b,
        truncated, published, note (plus text_a, text_b, pair_id), in result order.
    """
    cols = [*COMPARE_COLUMNS, C.COL_TEXT_A, C.COL_TEXT_B, C.COL_PAIR_ID]
    if results.empty:
        return pd.DataFrame(columns=cols)
    out = results[[C.COL_MODEL, C.COL_PAIR_ID, C.COL_TEXT_A, C.COL_TEXT_B, C.COL_COSINE, C.COL_TOKENS_A, C.COL_TOKENS_B, C.COL_TRUNCATED]].copy()
    out[C.COL_THRESHOLD] = thresholds_for(out, threshold)
    out["verdict"] = _verdicts(out[C.COL_COSINE].to_numpy(float), out[C.COL_THRESHOLD].to_numpy(float))
    if published is not None and not published.empty:
        keys = [C.COL_MODEL, C.COL_TEXT_A, C.COL_TEXT_B]
        ref = published[[*keys, "published_cosine", "note"]].drop_duplicates(keys).rename(columns={"published_cosine": "published"})
        out = out.merge(ref, on=keys, how="left")
        out["note"] = out["note"].fillna("")
    else:
        out["published"] = math.nan
        out["note"] = ""
    out["published"] = out["published"].astype(float)
    return out[cols].reset_index(drop=True)


def published_split_check(entities: pd.DataFrame, text: str, tokens: Sequence[str]) -> dict | None:
    """Compare a tokenizer's split of a word with the OOV paper's Table 2.

    Args:
        entities: :func:`core.reference.load_oov_entities` (entity,
            replacement, original_tokens, replacement_tokens, note).
        text: a line the user typed; matched case-insensitively, after
            stripping, against the 20 entities and their replacements.
        tokens: the subword tokens a model produced for ``text``.

    Returns:
        None when ``text`` is none of the 40 words, else a dict with entity,
        replacement, kind (``original`` or ``replacement``), published (the
        paper's split, space-separated), ours (``tokens`` space-separated),
        match (bool: identical splits) and note.
    """
    word = text.strip().lower()
    if not word or entities.empty:
        return None
    for row in entities.to_dict("records"):
        for kind, name_col, split_col in (("replacement", "replacement", "replacement_tokens"), ("original", "entity", "original_tokens")):
            if str(row[name_col]).strip().lower() == word:
                ours = " ".join(tokens)
                published = " ".join(str(row[split_col]).split())
                return {
                    C.COL_ENTITY: row["entity"],
                    C.COL_REPLACEMENT: row["replacement"],
                    "kind": kind,
                    "published": published,
                    "ours": ours,
                    "match": ours == published,
                    "note": str(row.get("note", "") or ""),
                }
    return None


# ------------------------------------------------- user data: gold labels
# Used by the "Your data" page: an uploaded file may carry a gold label per
# pair (a similarity score, 0/1 relevance ...).  When every given label is a
# number, the labels are correlated with the cosines, per model.


def _numeric_labels(results: pd.DataFrame, column: str) -> pd.Series:
    """The labels as floats: NaN where a label is empty or not a finite number."""
    if column not in results.columns:
        return pd.Series(np.nan, index=results.index, dtype=float)
    text = results[column].astype("string").str.strip().fillna("")
    values = pd.to_numeric(text.where(text != ""), errors="coerce").astype(float)
    return values.where(np.isfinite(values))


def labels_are_numeric(results: pd.DataFrame, column: str = C.COL_LABEL) -> bool:
    """Whether ``column`` holds at least 3 labels and every non-empty one is a number.

    Empty labels are ignored; a single non-numeric label ("yes", "n/a")
    makes the answer False, so text labels are never half-read as numbers.
    """
    if results.empty or column not in results.columns:
        return False
    text = results[column].astype("string").str.strip().fillna("")
    given = text != ""
    numeric = _numeric_labels(results, column).notna()
    return bool(given.sum() >= 3 and (numeric[given]).all())


def label_correlation(results: pd.DataFrame, column: str = C.COL_LABEL) -> pd.DataFrame:
    """Pearson and Spearman correlation of a numeric gold label with cosine, per model.

    Only rows whose label is a finite number count; a model with fewer than
    3 such rows is left out.  A constant label or cosine gives NaN
    correlations (see :func:`core.stats.correlation`).

    Returns:
        Columns model, pearson_r, pearson_p, spearman_rho, spearman_p, n.
    """
    cols = [C.COL_MODEL, "pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n"]
    if results.empty or column not in results.columns:
        return pd.DataFrame(columns=cols)
    labels = _numeric_labels(results, column)
    data = results.assign(_label=labels)[labels.notna()]
    rows = []
    for model, group in data.groupby(C.COL_MODEL, sort=False):
        if len(group) < 3:
            continue
        res = stats.correlation(group["_label"].to_numpy(float), group[C.COL_COSINE].to_numpy(float))
        rows.append({C.COL_MODEL: model, **res._asdict()})
    return pd.DataFrame(rows, columns=cols)


# ------------------------------------------------------ OOV page (by tokens)
# Table 10 per model: each model's own tokenizer decides which originals are
# single-token (see core.tokens.piece_counts).


def oov_token_groups(deltas: pd.DataFrame, counts_by_model: dict[str, dict[str, int]]) -> pd.DataFrame:
    """OOV-paper Table 10, wide: mean delta of single- vs multi-token originals per model.

    Args:
        deltas: output of :func:`oov_deltas`.
        counts_by_model: model -> (entity -> subword count of the original
            entity under that model's tokenizer).  A model missing here, or an
            entity missing from its map, counts as single-token (as in
            :func:`oov_by_original_tokens`).

    Returns:
        Columns model, n_single, single_token_mean_delta, n_multi,
        multi_token_mean_delta; a group without entities has n 0 and NaN mean.
    """
    cols = [C.COL_MODEL, "n_single", "single_token_mean_delta", "n_multi", "multi_token_mean_delta"]
    rows = []
    for model in _models(deltas):
        groups = oov_by_original_tokens(deltas[deltas[C.COL_MODEL] == model], counts_by_model.get(model, {})).set_index("group")
        row = {C.COL_MODEL: model}
        for group, key in (("single-token", "single"), ("multi-token", "multi")):
            row[f"n_{key}"] = int(groups.at[group, "n"]) if group in groups.index else 0
            row[f"{key}_token_mean_delta"] = float(groups.at[group, "mean_delta"]) if group in groups.index else math.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def oov_readings(results: pd.DataFrame, dynamic: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean OOV delta per model under both readings of the paper's design.

    The OOV paper does not say whether the invented word replaces the entity
    in both sentences of a pair or in one; this puts the two side by side.

    Returns:
        Columns model, reading, reading_label, n, mean_delta, ci_low,
        ci_high, normalized_mean (one row per model and reading).
    """
    dyn = dynamic if dynamic is not None else dynamic_ranges(results)
    frames = []
    for reading, label in C.OOV_READINGS.items():
        summary = oov_summary(oov_deltas(results, reading, dyn), dyn)
        if summary.empty:
            continue
        frames.append(summary[[C.COL_MODEL, "n", "mean_delta", "ci_low", "ci_high", "normalized_mean"]].assign(reading=reading, reading_label=label))
    cols = [C.COL_MODEL, "reading", "reading_label", "n", "mean_delta", "ci_low", "ci_high", "normalized_mean"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def perturbation_table(results: pd.DataFrame, threshold: float | Mapping[str, float] = C.DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Scored perturbations (``core.perturb``): one row per variant per model with its verdict.

    Args:
        results: runner output for ``PerturbationReport.to_frame()`` pairs.
        threshold: one global threshold, or each model's own.

    Returns:
        Columns pair_id, category, rule, change, text_b, model, cosine,
        threshold, verdict, in the report's variant order.
    """
    cols = [C.COL_PAIR_ID, C.COL_CATEGORY, C.COL_RULE, C.COL_CHANGE, C.COL_TEXT_B, C.COL_MODEL, C.COL_COSINE, C.COL_THRESHOLD, "verdict"]
    if results.empty:
        return pd.DataFrame(columns=cols)
    out = results.copy()
    out[C.COL_THRESHOLD] = thresholds_for(out, threshold)
    out["verdict"] = _verdicts(out[C.COL_COSINE].to_numpy(float), out[C.COL_THRESHOLD].to_numpy(float))
    return out.sort_values([C.COL_PAIR_ID], kind="stable")[cols].reset_index(drop=True)
