"""The OOV paper's analyses: dynamic range, raw and normalized OOV deltas, Cohen's d, Jaccard correlations.

Everything behind the OOV paper's tables lives here (Tables 3-10, A1, C1),
computed from a runner results table of the ``oov`` and ``baseline`` suites.

Conventions:
    * Dynamic range comes from the positive and negative controls of the
      baseline suite, as the paper does.
    * Cohen's d between models on OOV deltas is ``cohens_d(d_m1, d_m2)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core import constants, stats
from core.scoring.tables import category_summary, models_in, rows_of_suite


def jaccard_correlation(results: pd.DataFrame, column: str = constants.COL_TOKEN_JACCARD) -> pd.DataFrame:
    """OOV-paper Table 11: Pearson and Spearman of Jaccard overlap vs cosine, of every row given (the paper's: the baseline suite)."""
    rows = []
    for model, group in results.groupby(constants.COL_MODEL, sort=False):
        if len(group) < 3:
            continue
        res = stats.correlation(group[column].to_numpy(float), group[constants.COL_COSINE].to_numpy(float))
        rows.append({constants.COL_MODEL: model, **res._asdict()})
    return pd.DataFrame(rows, columns=[constants.COL_MODEL, "pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n"])


def dynamic_ranges(results: pd.DataFrame) -> pd.DataFrame:
    """Per model: mean positive, mean negative cosine and their difference, of every row given (the paper's: the baseline suite)."""
    rows = []
    for model, group in results.groupby(constants.COL_MODEL, sort=False):
        pos = group.loc[group[constants.COL_CATEGORY] == constants.CAT_POSITIVE, constants.COL_COSINE].to_numpy(float)
        neg = group.loc[group[constants.COL_CATEGORY] == constants.CAT_NEGATIVE, constants.COL_COSINE].to_numpy(float)
        if pos.size and neg.size:
            rows.append(
                {
                    constants.COL_MODEL: model,
                    "mean_positive": pos.mean(),
                    "mean_negative": neg.mean(),
                    "dynamic_range": stats.dynamic_range(pos, neg),
                }
            )
    return pd.DataFrame(rows, columns=[constants.COL_MODEL, "mean_positive", "mean_negative", "dynamic_range"])


def baseline_ranges(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`dynamic_ranges` of the baseline suite's rows: the paper's dynamic range, which normalizes every OOV delta."""
    return dynamic_ranges(rows_of_suite(results, constants.SUITE_BASELINE))


def oov_deltas(results: pd.DataFrame, reading: str = constants.OOV_DEFAULT_READING, dynamic: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per model and OOV item: original and replaced cosine, raw and normalized delta.

    Args:
        results: runner output containing the ``oov`` suite.
        reading: ``replaced_b`` (the default, :data:`core.constants.OOV_DEFAULT_READING`)
            or ``replaced_both`` (which sentences carry the invented word).
        dynamic: output of :func:`dynamic_ranges`; computed from the baseline
            suite's rows of ``results`` when None (:func:`baseline_ranges`).
            Normalized delta is NaN for models without one.
    """
    data = rows_of_suite(results, constants.SUITE_OOV)
    cols = [
        constants.COL_MODEL,
        constants.COL_PAIR_ID,
        constants.COL_ENTITY,
        constants.COL_REPLACEMENT,
        "reading",
        "cosine_original",
        "cosine_replaced",
        "delta",
        "normalized_delta",
    ]
    if data.empty:
        return pd.DataFrame(columns=cols)
    wide = data.pivot_table(
        index=[constants.COL_MODEL, constants.COL_PAIR_ID, constants.COL_ENTITY, constants.COL_REPLACEMENT],
        columns=constants.COL_VARIANT,
        values=constants.COL_COSINE,
        sort=False,
    ).reset_index()
    wide = wide.rename(columns={constants.VARIANT_ORIGINAL: "cosine_original", reading: "cosine_replaced"})
    wide["reading"] = reading
    wide["delta"] = stats.oov_delta(wide["cosine_original"], wide["cosine_replaced"])
    dyn = dynamic if dynamic is not None else baseline_ranges(results)
    dr = wide[constants.COL_MODEL].map(dyn.set_index(constants.COL_MODEL)["dynamic_range"]) if not dyn.empty else np.nan
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
    dr_map = dynamic.set_index(constants.COL_MODEL)["dynamic_range"].to_dict() if dynamic is not None and not dynamic.empty else {}
    for model, group in deltas.groupby(constants.COL_MODEL, sort=False):
        d = group["delta"].to_numpy(float)
        mean, sd = stats.mean_sd(d)
        lo, hi = stats.interval_or_nan(
            stats.bootstrap_diff_ci, group["cosine_original"].to_numpy(float), group["cosine_replaced"].to_numpy(float)
        )
        dr = dr_map.get(model, math.nan)
        norm_ok = dr == dr and dr > 0
        rows.append(
            {
                constants.COL_MODEL: model,
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
    models = models_in(deltas)
    by_model = {m: deltas.loc[deltas[constants.COL_MODEL] == m, value].to_numpy(float) for m in models}
    grid = [[stats.stat_or_nan(stats.cohens_d, by_model[a], by_model[b]) if a != b else 0.0 for b in models] for a in models]
    return pd.DataFrame(grid, index=models, columns=models)


def entity_swap_check(results: pd.DataFrame) -> pd.DataFrame:
    """OOV-paper Table 3: mean and SD of entity-swap cosines per model, of every row given (the paper's: the baseline suite)."""
    table = category_summary(results)
    return table[table[constants.COL_CATEGORY] == constants.CAT_ENTITY_SWAP][
        [constants.COL_MODEL, "n", "mean", "sd", "ci_low", "ci_high"]
    ].reset_index(drop=True)


def oov_by_original_tokens(deltas: pd.DataFrame, original_tokens: dict[str, int]) -> pd.DataFrame:
    """OOV-paper Table 10: mean delta for single- vs multi-token originals.

    Args:
        deltas: output of :func:`oov_deltas`.
        original_tokens: entity -> subword count of the original entity.
    """
    data = deltas.assign(
        group=deltas[constants.COL_ENTITY].map(lambda e: "single-token" if original_tokens.get(e, 1) == 1 else "multi-token")
    )
    out = data.groupby([constants.COL_MODEL, "group"], sort=False)["delta"].agg(["count", "mean"]).reset_index()
    return out.rename(columns={"count": "n", "mean": "mean_delta"})


def published_split_check(entities: pd.DataFrame, text: str, tokens: Sequence[str]) -> dict | None:
    """Compare a tokenizer's split of a word with the OOV paper's Table 2.

    Args:
        entities: :func:`core.papers.reference.load_oov_entities` (entity,
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
                    constants.COL_ENTITY: row["entity"],
                    constants.COL_REPLACEMENT: row["replacement"],
                    "kind": kind,
                    "published": published,
                    "ours": ours,
                    "match": ours == published,
                    "note": str(row.get("note", "") or ""),
                }
    return None


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
    cols = [constants.COL_MODEL, "n_single", "single_token_mean_delta", "n_multi", "multi_token_mean_delta"]
    rows = []
    for model in models_in(deltas):
        groups = oov_by_original_tokens(deltas[deltas[constants.COL_MODEL] == model], counts_by_model.get(model, {})).set_index("group")
        row: dict[str, object] = {constants.COL_MODEL: model}
        for group, key in (("single-token", "single"), ("multi-token", "multi")):
            row[f"n_{key}"] = int(groups["n"].get(group, 0))
            row[f"{key}_token_mean_delta"] = float(groups["mean_delta"].get(group, math.nan))
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
    dyn = dynamic if dynamic is not None else baseline_ranges(results)
    frames = []
    for reading, label in constants.OOV_READINGS.items():
        summary = oov_summary(oov_deltas(results, reading, dyn), dyn)
        if summary.empty:
            continue
        frames.append(
            summary[[constants.COL_MODEL, "n", "mean_delta", "ci_low", "ci_high", "normalized_mean"]].assign(
                reading=reading, reading_label=label
            )
        )
    cols = [constants.COL_MODEL, "reading", "reading_label", "n", "mean_delta", "ci_low", "ci_high", "normalized_mean"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]
