"""OOV deltas with k invented words per entity: per entity, per model, plausible vs random, with bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import constants, stats
from core.models.registry import short_name

_DELTA_COLUMNS = [
    constants.COL_MODEL,
    "reading",
    constants.COL_PAIR_ID,
    constants.COL_ENTITY,
    constants.COL_KIND,
    constants.COL_REPLICATE,
    constants.COL_REPLACEMENT,
    constants.COL_N_PIECES,
    "cosine_original",
    "cosine_replaced",
    "delta",
]


def oov_replicate_deltas(results: pd.DataFrame) -> pd.DataFrame:
    """One delta per model, reading, entity, kind and replicate.

    Args:
        results: runner output of :func:`oov_replacements` pairs (rows of
            other suites are ignored).

    Returns:
        Columns model, reading, pair_id, entity, kind, replicate, replacement,
        n_pieces, cosine_original, cosine_replaced, delta, where
        ``delta = cosine_original - cosine_replaced`` (:func:`core.stats.oov_delta`;
        positive = similarity lost to the invented word).

    Raises:
        ValueError: when a needed column is missing, or an item's original
            row is missing for a model.
    """
    needed = [
        constants.COL_MODEL,
        constants.COL_SUITE,
        constants.COL_PAIR_ID,
        constants.COL_VARIANT,
        constants.COL_COSINE,
        constants.COL_ENTITY,
        constants.COL_KIND,
        constants.COL_REPLICATE,
        constants.COL_REPLACEMENT,
    ]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise ValueError(f"results lack columns {missing}; pass the runner output of oov_replacements pairs")
    data = results[results[constants.COL_SUITE] == constants.SUITE_OOV_INVENTED]
    if data.empty:
        return pd.DataFrame(columns=_DELTA_COLUMNS)
    original = data[data[constants.COL_VARIANT] == constants.VARIANT_ORIGINAL][
        [constants.COL_MODEL, constants.COL_PAIR_ID, constants.COL_COSINE]
    ]
    if original.duplicated([constants.COL_MODEL, constants.COL_PAIR_ID]).any():
        raise ValueError("more than one original row for a model and pair_id")
    replaced = data[data[constants.COL_VARIANT] != constants.VARIANT_ORIGINAL]
    merged = replaced.merge(
        original.rename(columns={constants.COL_COSINE: "cosine_original"}), on=[constants.COL_MODEL, constants.COL_PAIR_ID], how="left"
    )
    if merged["cosine_original"].isna().any():
        lost = merged.loc[merged["cosine_original"].isna(), constants.COL_PAIR_ID].iloc[0]
        raise ValueError(f"no original row for pair {lost!r}")
    merged = merged.rename(columns={constants.COL_COSINE: "cosine_replaced", constants.COL_VARIANT: "reading"})
    if constants.COL_N_PIECES not in merged.columns:
        merged[constants.COL_N_PIECES] = np.nan
    merged["delta"] = (
        stats.oov_delta(merged["cosine_original"].to_numpy(float), merged["cosine_replaced"].to_numpy(float)) if len(merged) else []
    )
    return merged[_DELTA_COLUMNS].reset_index(drop=True)


def oov_replicate_summary(
    results: pd.DataFrame,
    *,
    n_resamples: int | None = None,
    confidence: float = constants.CONFIDENCE,
    seed: int = constants.BOOTSTRAP_SEED,
) -> dict[str, pd.DataFrame]:
    """Mean delta with bootstrap intervals per entity, per model, and plausible vs random.

    Args:
        results: runner output of :func:`oov_replacements` pairs, or the
            output of :func:`oov_replicate_deltas` (recognized by its
            ``delta`` column).
        n_resamples, confidence, seed: passed to the :mod:`core.stats`
            bootstraps (percentile, seeded).

    Returns:
        ``{"by_entity", "by_model", "plausible_vs_random"}``:

        * by_entity: model, reading, entity, kind, n (replicates), mean_delta,
        sd_delta, ci_low, ci_high (bootstrap of the mean over the k
        replicates, :func:`core.stats.bootstrap_ci`), mean_pieces,
        cosine_original, words.
        * by_model: model, reading, kind, n_entities, n_words, mean_delta (mean
        of the entity means; equals the mean of all deltas when every
        entity has k words), sd_entity, ci_low, ci_high (bootstrap over
        entities, the independent unit: replicates of one entity share its
        sentences), min_entity, max_entity, mean_pieces.
        * plausible_vs_random: model, reading, n_entities, mean_plausible,
        mean_random, difference (plausible - random), ci_low, ci_high
        (paired bootstrap over entities of the entity means,
        :func:`core.stats.bootstrap_diff_ci`), cohens_d
        (:func:`core.stats.cohens_d` of all plausible vs all random
        deltas, pooled SD; positive = plausible words cost more
        similarity), mean_pieces_plausible, mean_pieces_random.  Empty
        unless both kinds were run.
    """
    deltas = results if "delta" in results.columns else oov_replicate_deltas(results)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    by_entity = _by_entity(deltas, boot)
    return {
        "by_entity": by_entity,
        "by_model": _by_model(by_entity, boot),
        "plausible_vs_random": _plausible_vs_random(deltas, by_entity, boot),
    }


_ENTITY_COLUMNS = [
    constants.COL_MODEL,
    "reading",
    constants.COL_ENTITY,
    constants.COL_KIND,
    "n",
    "mean_delta",
    "sd_delta",
    "ci_low",
    "ci_high",
    "mean_pieces",
    "cosine_original",
    "words",
]


_MODEL_COLUMNS = [
    constants.COL_MODEL,
    "reading",
    constants.COL_KIND,
    "n_entities",
    "n_words",
    "mean_delta",
    "sd_entity",
    "ci_low",
    "ci_high",
    "min_entity",
    "max_entity",
    "mean_pieces",
]


_PLAUSIBLE_VS_RANDOM_COLUMNS = [
    constants.COL_MODEL,
    "reading",
    "n_entities",
    "mean_plausible",
    "mean_random",
    "difference",
    "ci_low",
    "ci_high",
    "cohens_d",
    "mean_pieces_plausible",
    "mean_pieces_random",
]


def _by_entity(deltas: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading, entity, kind), g in deltas.groupby(
        [constants.COL_MODEL, "reading", constants.COL_ENTITY, constants.COL_KIND], sort=False
    ):
        d = g["delta"].to_numpy(float)
        mean, sd = stats.mean_sd(d)
        lo, hi = stats.interval_or_nan(stats.bootstrap_ci, d, "mean", **boot)
        rows.append(
            {
                constants.COL_MODEL: model,
                "reading": reading,
                constants.COL_ENTITY: entity,
                constants.COL_KIND: kind,
                "n": int(d.size),
                "mean_delta": mean,
                "sd_delta": sd,
                "ci_low": lo,
                "ci_high": hi,
                "mean_pieces": float(pd.to_numeric(g[constants.COL_N_PIECES], errors="coerce").mean()),
                "cosine_original": float(g["cosine_original"].iloc[0]),
                "words": ", ".join(map(str, g[constants.COL_REPLACEMENT])),
            }
        )
    return pd.DataFrame(rows, columns=_ENTITY_COLUMNS)


def _by_model(by_entity: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading, kind), g in by_entity.groupby([constants.COL_MODEL, "reading", constants.COL_KIND], sort=False):
        means = g["mean_delta"].to_numpy(float)
        mean, sd = stats.mean_sd(means)
        lo, hi = stats.interval_or_nan(stats.bootstrap_ci, means, "mean", **boot)
        rows.append(
            {
                constants.COL_MODEL: model,
                "reading": reading,
                constants.COL_KIND: kind,
                "n_entities": int(means.size),
                "n_words": int(g["n"].sum()),
                "mean_delta": mean,
                "sd_entity": sd,
                "ci_low": lo,
                "ci_high": hi,
                "min_entity": float(means.min()),
                "max_entity": float(means.max()),
                "mean_pieces": float((g["mean_pieces"] * g["n"]).sum() / g["n"].sum()),
            }
        )
    return pd.DataFrame(rows, columns=_MODEL_COLUMNS)


def _plausible_vs_random(deltas: pd.DataFrame, by_entity: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading), g in by_entity.groupby([constants.COL_MODEL, "reading"], sort=False):
        wide = g.pivot_table(index=constants.COL_ENTITY, columns=constants.COL_KIND, values="mean_delta", sort=False)
        if not {constants.WORD_PLAUSIBLE, constants.WORD_RANDOM} <= set(wide.columns):
            continue
        # Paired by entity: both kinds replace the same entity in the same
        # sentences, so entity-to-entity variation cancels in the difference.
        wide = wide.dropna(subset=[constants.WORD_PLAUSIBLE, constants.WORD_RANDOM])
        plaus, rand = wide[constants.WORD_PLAUSIBLE].to_numpy(float), wide[constants.WORD_RANDOM].to_numpy(float)
        if plaus.size == 0:
            continue
        lo, hi = stats.interval_or_nan(stats.bootstrap_diff_ci, plaus, rand, **boot)
        sel = deltas[(deltas[constants.COL_MODEL] == model) & (deltas["reading"] == reading)]
        d_plaus = sel.loc[sel[constants.COL_KIND] == constants.WORD_PLAUSIBLE, "delta"].to_numpy(float)
        d_rand = sel.loc[sel[constants.COL_KIND] == constants.WORD_RANDOM, "delta"].to_numpy(float)
        pieces = pd.to_numeric(sel[constants.COL_N_PIECES], errors="coerce")
        rows.append(
            {
                constants.COL_MODEL: model,
                "reading": reading,
                "n_entities": int(plaus.size),
                "mean_plausible": float(plaus.mean()),
                "mean_random": float(rand.mean()),
                "difference": float(plaus.mean() - rand.mean()),
                "ci_low": lo,
                "ci_high": hi,
                "cohens_d": stats.stat_or_nan(stats.cohens_d, d_plaus, d_rand),
                "mean_pieces_plausible": float(pieces[sel[constants.COL_KIND] == constants.WORD_PLAUSIBLE].mean()),
                "mean_pieces_random": float(pieces[sel[constants.COL_KIND] == constants.WORD_RANDOM].mean()),
            }
        )
    return pd.DataFrame(rows, columns=_PLAUSIBLE_VS_RANDOM_COLUMNS)


def invented_findings(by_model: pd.DataFrame, versus: pd.DataFrame, reading: str) -> list[str]:
    """How far plausible and random invented words move each model's cosine, and whether the kind matters (Invented words).

    Args:
        by_model: :func:`oov_replicate_summary`'s ``by_model`` table (model, kind, mean_delta).
        versus: its ``plausible_vs_random`` table (model, difference, ci_low, ci_high); may be empty.
        reading: the reading in words (e.g. "entity replaced in the second sentence only").

    Returns:
        Up to two sentences; empty for an empty ``by_model``.
    """
    rows = by_model.dropna(subset=["mean_delta"])
    if rows.empty:
        return []
    parts = []
    for model, mine in rows.groupby(constants.COL_MODEL, sort=False):
        drops = " and ".join(f"{r['mean_delta']:.2f} ({r[constants.COL_KIND]})" for _, r in mine.iterrows())
        parts.append(f"{short_name(str(model))} {drops}")
    out = [f"With the {reading}, invented words lower the cosine on average by: {'; '.join(parts)}."]
    versus = versus.dropna(subset=["difference", "ci_low", "ci_high"])
    if not versus.empty:
        matters = versus[(versus["ci_low"] > 0) | (versus["ci_high"] < 0)]
        if matters.empty:
            out.append("Whether the word is plausible or random makes no difference whose 95% interval excludes 0.")
        else:
            out.append(
                "Plausible minus random: "
                + "; ".join(
                    f"{short_name(str(r[constants.COL_MODEL]))} {r['difference']:+.2f} (95% CI {r['ci_low']:+.2f} to {r['ci_high']:+.2f})"
                    for _, r in matters.iterrows()
                )
                + ": the kind of word matters."
            )
    return out


def slot_table(results: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A typed sentence scored with each invented word: one row per word with every model's cosine, and its finding.

    Args:
        results: runner output of :func:`core.probes.invented.pairs.slot_pairs` pairs, shape (words × models, k),
            with columns model, replacement, kind, n_pieces, text_b, cosine.

    Returns:
        The table (columns "invented word", "kind", "subword pieces", one "cosine, MODEL" column per model in the
        order given, "your sentence with the word"), the word that moved the sentence most first; and one sentence
        saying which word moved it most and the cosines' range. Empty results give an empty table and "".

    Raises:
        ValueError: when a needed column is missing.
    """
    needed = [constants.COL_MODEL, constants.COL_REPLACEMENT, constants.COL_KIND, constants.COL_N_PIECES, constants.COL_TEXT_B]
    missing = [c for c in [*needed, constants.COL_COSINE] if c not in results.columns]
    if missing:
        raise ValueError(f"results lack columns {missing}; pass the runner output of slot_pairs pairs")
    if results.empty:
        return pd.DataFrame(), ""
    models = list(dict.fromkeys(results[constants.COL_MODEL]))
    wide = results.pivot_table(index=needed[1:], columns=constants.COL_MODEL, values=constants.COL_COSINE, aggfunc="first")
    wide = wide[models].reset_index()
    wide = wide.assign(_lowest=wide[models].min(axis=1)).sort_values("_lowest", kind="stable")
    low = wide.iloc[0]
    finding = (
        f"{low[constants.COL_REPLACEMENT]} moves your sentence most (cosine {low['_lowest']:.3f}); "
        f"across the {len(wide)} words and {len(models)} model{'s' if len(models) != 1 else ''} the cosines run "
        f"{float(wide[models].min().min()):.3f}-{float(wide[models].max().max()):.3f}. "
        "1.0 would mean the model reads the sentence the same with the invented word."
    )
    shown = wide.drop(columns="_lowest").rename(
        columns={
            constants.COL_REPLACEMENT: "invented word",
            constants.COL_KIND: "kind",
            constants.COL_N_PIECES: "subword pieces",
            constants.COL_TEXT_B: "your sentence with the word",
            **{m: f"cosine, {short_name(m)}" for m in models},
        }
    )
    order = ["invented word", "kind", "subword pieces", *[f"cosine, {short_name(m)}" for m in models], "your sentence with the word"]
    return shown[order].reset_index(drop=True), finding
