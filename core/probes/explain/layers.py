"""Layer-wise view: the cosine of two sentences at every layer of a torch model, and where the OOV gap appears.

At layer ``l`` (0 = the embeddings layer's output, ``L`` = the last
transformer layer) each sentence is the mask-aware mean of its token states,
``sum_t m_t h_t / sum_t m_t``, the pooling both bundled torch models use; the
curve is the cosine of the two means per layer.  At the last layer this is the
model's own mean-pooled vector before its final normalization, so the last
point is the model's cosine (for a CLS-pooled model it is not: the curve stays
mean-pooled, and :func:`layer_cosines` says so in its ``pooling`` column).

For the OOV suite each entity gives two curves: the original pair and the pair
with the invented word (one reading); their difference per layer is the
*gap*, whose last-layer value is the OOV delta.  The *onset* is the first
layer where the gap reaches half its last-layer value; the *peak* is the layer
of the largest gap.  Means over entities carry seeded bootstrap intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core import constants
from core.models.loading import LoadedModel
from core.probes.explain.forward import require_torch
from core.stats.guards import interval_or_nan
from core.stats.intervals import bootstrap_ci, bootstrap_diff_ci

_BATCH = 16
COL_ORIGINAL = "cosine_original"
COL_REPLACED = "cosine_replaced"
COL_GAP = "gap"
COL_POOLING = "pooling"
ONSET_SHARE = 0.5


def pooled_layers(model: LoadedModel, texts: Sequence[str]) -> np.ndarray:
    """Mask-aware mean-pooled hidden states of every layer for each text.

    Args:
        model: a loaded torch model.
        texts: n texts (the model's prompt is prepended, as when encoding).

    Returns:
        (L + 1, n, dimension) float64: layer 0 is the embeddings output, L the last layer.

    Raises:
        ValueError: for an ONNX model, no texts, or an empty text.
    """
    st = require_torch(model, "the layer-wise view")
    if not texts:
        raise ValueError("no texts to pool")
    if any(not isinstance(t, str) or not t.strip() for t in texts):
        raise ValueError("every text must be non-empty")
    with model.lock:
        return _pooled(st, model.tokenizer, [model.meta.prompt + t for t in texts], model.max_seq_length)


def _pooled(st, tokenizer, texts: list[str], max_length: int) -> np.ndarray:
    import torch

    transformer = st[0].auto_model
    out = []
    for start in range(0, len(texts), _BATCH):
        enc = tokenizer(texts[start : start + _BATCH], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        enc = {k: v.to(st.device) for k, v in enc.items()}
        with torch.inference_mode():
            states = transformer(**enc, output_hidden_states=True).hidden_states
        mask = enc["attention_mask"].unsqueeze(-1).to(states[0].dtype)
        pooled = [(h * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9) for h in states]
        out.append(torch.stack(pooled).double().cpu().numpy())
    return np.concatenate(out, axis=1)


def _row_cosines(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cosine of aligned rows over the last axis: (..., d) × (..., d) -> (...)."""
    num = (x * y).sum(axis=-1)
    return num / np.clip(np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1), 1e-12, None)


def layer_cosines(model: LoadedModel, text_a: str, text_b: str) -> pd.DataFrame:
    """The pair's cosine at every layer.

    Returns:
        One row per layer (L + 1 rows): ``model, layer, depth, cosine, pooling``;
        ``depth`` is ``layer / L`` so models of different depths share an axis,
        ``pooling`` is the model's own pooling (the last layer matches the
        model's cosine only when it is ``mean``).
    """
    states = pooled_layers(model, [text_a, text_b])
    cos = _row_cosines(states[:, 0], states[:, 1])
    n = len(cos) - 1
    return pd.DataFrame(
        {
            constants.COL_MODEL: model.name,
            constants.COL_LAYER: np.arange(n + 1),
            constants.COL_DEPTH: np.arange(n + 1) / max(n, 1),
            constants.COL_COSINE: cos,
            COL_POOLING: model.backend.pooling,
        }
    )


def pair_layer_cosines(model: LoadedModel, pairs: pd.DataFrame) -> pd.DataFrame:
    """Every pair's cosine at every layer, each distinct text pooled once.

    Args:
        model: a loaded torch model.
        pairs: rows with ``text_a`` and ``text_b`` (other columns are carried along).

    Returns:
        One row per pair and layer: the pair's columns plus ``model, layer, depth, cosine``.

    Raises:
        ValueError: when a text column is missing, no pairs, or an ONNX model.
    """
    missing = {constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs lack column(s) {', '.join(sorted(missing))}")
    if pairs.empty:
        raise ValueError("no pairs")
    texts = list(dict.fromkeys([*pairs[constants.COL_TEXT_A], *pairs[constants.COL_TEXT_B]]))
    states = pooled_layers(model, texts)
    index = {t: i for i, t in enumerate(texts)}
    ia = [index[t] for t in pairs[constants.COL_TEXT_A]]
    ib = [index[t] for t in pairs[constants.COL_TEXT_B]]
    cos = _row_cosines(states[:, ia], states[:, ib])  # (L + 1, n_pairs)
    n = cos.shape[0] - 1
    base = pairs.drop(columns=[c for c in (constants.COL_MODEL, constants.COL_COSINE) if c in pairs.columns]).reset_index(drop=True)
    frames = [
        base.assign(
            **{
                constants.COL_MODEL: model.name,
                constants.COL_LAYER: layer,
                constants.COL_DEPTH: layer / max(n, 1),
                constants.COL_COSINE: cos[layer],
            }
        )
        for layer in range(n + 1)
    ]
    return pd.concat(frames, ignore_index=True)


def oov_layer_gaps(curves: pd.DataFrame, reading: str = constants.VARIANT_REPLACED_B) -> pd.DataFrame:
    """Per model, entity and layer: the original pair's cosine, the replaced pair's, and the gap between them.

    Args:
        curves: :func:`pair_layer_cosines` of the expanded OOV suite (with ``variant`` and ``entity``).
        reading: ``replaced_b`` or ``replaced_both``.

    Returns:
        ``model, pair_id, entity, layer, depth, cosine_original, cosine_replaced, gap``
        with ``gap = cosine_original - cosine_replaced``.

    Raises:
        ValueError: for an unknown reading or missing columns.
    """
    if reading not in constants.OOV_READINGS:
        raise ValueError(f"reading must be one of {', '.join(constants.OOV_READINGS)}, got {reading!r}")
    need = {
        constants.COL_MODEL,
        constants.COL_PAIR_ID,
        constants.COL_ENTITY,
        constants.COL_VARIANT,
        constants.COL_LAYER,
        constants.COL_DEPTH,
        constants.COL_COSINE,
    }
    missing = need - set(curves.columns)
    if missing:
        raise ValueError(f"curves lack column(s) {', '.join(sorted(missing))}")
    keys = [constants.COL_MODEL, constants.COL_PAIR_ID, constants.COL_ENTITY, constants.COL_LAYER, constants.COL_DEPTH]
    original = curves[curves[constants.COL_VARIANT] == constants.VARIANT_ORIGINAL][[*keys, constants.COL_COSINE]].rename(
        columns={constants.COL_COSINE: COL_ORIGINAL}
    )
    replaced = curves[curves[constants.COL_VARIANT] == reading][[*keys, constants.COL_COSINE]].rename(
        columns={constants.COL_COSINE: COL_REPLACED}
    )
    gaps = original.merge(replaced, on=keys, how="inner", validate="one_to_one")
    gaps[COL_GAP] = gaps[COL_ORIGINAL] - gaps[COL_REPLACED]
    return gaps.reset_index(drop=True)


def layer_dynamic_range(curves: pd.DataFrame) -> pd.DataFrame:
    """Per model and layer: mean positive-control minus mean negative-control cosine.

    Mean-pooled hidden states of the middle layers are anisotropic (every pair
    scores high there), so a raw cosine gap is not comparable across layers;
    divided by this range it is, as the OOV paper's normalized delta is across models.

    Args:
        curves: :func:`pair_layer_cosines` of pairs whose ``category`` is ``positive`` or ``negative``.

    Returns:
        ``model, layer, mean_positive, mean_negative, dynamic_range``.

    Raises:
        ValueError: when either control category is missing.
    """
    if constants.COL_CATEGORY not in curves.columns:
        raise ValueError(f"curves lack the {constants.COL_CATEGORY!r} column")
    present = set(curves[constants.COL_CATEGORY])
    if not {constants.CAT_POSITIVE, constants.CAT_NEGATIVE} <= present:
        raise ValueError("the dynamic range needs positive and negative control pairs")
    controls = curves[curves[constants.COL_CATEGORY].isin([constants.CAT_POSITIVE, constants.CAT_NEGATIVE])]
    means = controls.pivot_table(
        index=[constants.COL_MODEL, constants.COL_LAYER],
        columns=constants.COL_CATEGORY,
        values=constants.COL_COSINE,
        aggfunc="mean",
        sort=False,
    )
    out = pd.DataFrame({"mean_positive": means[constants.CAT_POSITIVE], "mean_negative": means[constants.CAT_NEGATIVE]}).reset_index()
    out["dynamic_range"] = out["mean_positive"] - out["mean_negative"]
    return out


def oov_layer_summary(gaps: pd.DataFrame, ranges: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean over entities per model and layer, with seeded 95% bootstrap intervals.

    Args:
        gaps: :func:`oov_layer_gaps`.
        ranges: :func:`layer_dynamic_range`, or None for no normalized columns.

    Returns:
        ``model, layer, depth, n, mean_original, original_low, original_high,
        mean_replaced, replaced_low, replaced_high, mean_gap, gap_low, gap_high``
        and, with ``ranges``, ``dynamic_range, normalized_gap, norm_low, norm_high``
        (the gap and its interval divided by the layer's range, held fixed);
        the gap's interval resamples entities with both cosines together (paired).
    """
    summary = _layer_means(gaps)
    if ranges is None or summary.empty:
        return summary
    keys = [constants.COL_MODEL, constants.COL_LAYER]
    summary = summary.merge(ranges[[*keys, "dynamic_range"]], on=keys, how="left")
    usable = summary["dynamic_range"] > 0
    for out, col in (("normalized_gap", "mean_gap"), ("norm_low", "gap_low"), ("norm_high", "gap_high")):
        summary[out] = (summary[col] / summary["dynamic_range"]).where(usable)
    return summary


def _layer_means(gaps: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (model, layer), group in gaps.groupby([constants.COL_MODEL, constants.COL_LAYER], sort=False):
        orig, repl = group[COL_ORIGINAL].to_numpy(float), group[COL_REPLACED].to_numpy(float)
        o_low, o_high = interval_or_nan(bootstrap_ci, orig)
        r_low, r_high = interval_or_nan(bootstrap_ci, repl)
        g_low, g_high = interval_or_nan(bootstrap_diff_ci, orig, repl)
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_LAYER: layer,
                constants.COL_DEPTH: float(group[constants.COL_DEPTH].iloc[0]),
                "n": len(group),
                "mean_original": orig.mean(),
                "original_low": o_low,
                "original_high": o_high,
                "mean_replaced": repl.mean(),
                "replaced_low": r_low,
                "replaced_high": r_high,
                "mean_gap": (orig - repl).mean(),
                "gap_low": g_low,
                "gap_high": g_high,
            }
        )
    return pd.DataFrame(rows)


def oov_divergence(gaps: pd.DataFrame) -> pd.DataFrame:
    """Where each entity's two curves part: onset and peak layer of the gap.

    Returns:
        ``model, pair_id, entity, layers, final_gap, onset_layer, peak_layer, peak_gap``:
        ``onset_layer`` is the first layer whose gap reaches half the final gap
        (same sign; NaN when the final gap is 0), ``peak_layer`` the layer of the
        largest gap in the final gap's direction.
    """
    rows = []
    for (model, pair_id, entity), group in gaps.groupby([constants.COL_MODEL, constants.COL_PAIR_ID, constants.COL_ENTITY], sort=False):
        g = group.sort_values(constants.COL_LAYER)
        layers, gap = g[constants.COL_LAYER].to_numpy(), g[COL_GAP].to_numpy(float)
        final = gap[-1]
        sign = 1.0 if final >= 0 else -1.0
        reached = np.flatnonzero(sign * gap >= ONSET_SHARE * abs(final)) if final != 0 else np.array([], dtype=int)
        peak = int(np.argmax(sign * gap))
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_PAIR_ID: pair_id,
                constants.COL_ENTITY: entity,
                "layers": int(layers[-1]),
                "final_gap": final,
                "onset_layer": float(layers[reached[0]]) if reached.size else np.nan,
                "peak_layer": int(layers[peak]),
                "peak_gap": gap[peak],
            }
        )
    return pd.DataFrame(rows)


def oov_layer_curves(model: LoadedModel) -> pd.DataFrame:
    """Layer curves of the OOV suite (three variants per entity) and of the baseline suite's controls.

    One pass over every distinct text; the controls give each layer's dynamic range.
    """
    from core.papers.suites import load_suite

    oov_pairs = load_suite(constants.SUITE_OOV)
    baseline = load_suite(constants.SUITE_BASELINE)
    controls = baseline[baseline[constants.COL_CATEGORY].isin([constants.CAT_POSITIVE, constants.CAT_NEGATIVE])]
    return pair_layer_cosines(model, pd.concat([oov_pairs, controls], ignore_index=True))


def oov_layer_report(curves: pd.DataFrame, reading: str = constants.VARIANT_REPLACED_B) -> dict[str, pd.DataFrame]:
    """Everything the layer-wise OOV view shows, for one reading.

    Args:
        curves: :func:`oov_layer_curves` (one model or several).
        reading: ``replaced_b`` or ``replaced_both``.

    Returns:
        ``gaps`` (per entity and layer), ``summary`` (means with intervals,
        normalized by ``ranges``), ``divergence`` (onset and peak per entity)
        and ``ranges`` (each layer's dynamic range).
    """
    oov_rows = curves[curves[constants.COL_SUITE] == constants.SUITE_OOV]
    gaps = oov_layer_gaps(oov_rows, reading)
    ranges = layer_dynamic_range(curves[curves[constants.COL_SUITE] == constants.SUITE_BASELINE])
    return {"gaps": gaps, "summary": oov_layer_summary(gaps, ranges), "divergence": oov_divergence(gaps), "ranges": ranges}
