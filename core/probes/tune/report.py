"""The tune report: untouched vs tuned vs the no-hard-negative control, per mode, on both halves.

Every figure is a win rate (share of variants that outrank their paraphrase
for the anchor as query; lower is better).  Ties (variant and paraphrase
exactly equal) are no win and are counted apart, never as fixes.  Tables lead
with the held-out half and the hand-written variants: the training half and
the rule-made variants are what the fix was fitted to.

* :func:`score_variants`: one row per variant and setting (cosines, win, tie);
* :func:`win_table`: setting × split × mode (and ``all``) with clustered
  bootstrap intervals, :func:`source_table` the same by variant source;
* :func:`paired_tests`: untouched vs each setting on the same variants
  (McNemar's exact test and a paired bootstrap interval of the difference);
* :func:`cost_table`: general similarity before/after (AUC of same vs
  different meaning on the baseline suite and on a labelled file);
* :func:`warnings`: modes whose held-out win rate did not move;
* :func:`to_markdown`: the whole report as Markdown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core import constants
from core.probes.calibration import auc
from core.probes.retrieval.metrics import adversarial_wins, mcnemar_exact, rate_difference_ci, rate_with_ci
from core.stats.similarity import pairwise_cos_sim

C = constants
EncodeFn = Callable[[list[str]], np.ndarray]
"""texts -> embeddings, shape ``(len(texts), dim)``."""
ALL = C.MODE_ALL
SCORE_COLUMNS = [C.COL_SETTING, C.COL_SPLIT, C.COL_GROUP_ID, C.COL_DOMAIN, C.COL_MODE, C.COL_VARIANT_SOURCE,
                 C.COL_ANCHOR, C.ROLE_VARIANT, "cosine_paraphrase", "cosine_variant", C.COL_WIN, C.COL_TIE]
WIN_COLUMNS = [C.COL_SETTING, C.COL_SPLIT, C.COL_MODE, C.COL_N, C.COL_WINS, C.COL_TIES, C.COL_WIN_RATE, C.COL_CI_LOW, C.COL_CI_HIGH]
TEST_COLUMNS = [C.COL_SETTING, C.COL_SPLIT, C.COL_MODE, C.COL_N, "before", "after", "difference", C.COL_CI_LOW, C.COL_CI_HIGH,
                "fixed", "broken", "pvalue"]
COST_COLUMNS = ["data", "measure", C.COL_SETTING, "value", "n"]


def encode_unique(encode: EncodeFn, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Each distinct text encoded once."""
    unique = list(dict.fromkeys(texts))
    vectors = np.asarray(encode(unique), dtype=float)
    if vectors.ndim != 2 or len(vectors) != len(unique):
        raise ValueError(f"the encoder returned shape {vectors.shape} for {len(unique)} texts")
    return dict(zip(unique, vectors, strict=True))


def score_variants(encode: EncodeFn, variants: pd.DataFrame, split: Mapping[str, str], setting: str) -> pd.DataFrame:
    """Cosine(anchor, paraphrase) and cosine(anchor, variant) for every variant under one model.

    Args:
        encode: the model's encoder.
        variants: :func:`core.probes.tune.data.variant_table`'s rows.
        split: group_id -> split.
        setting: the name of this model (untouched, tuned, control).

    Returns:
        Columns :data:`SCORE_COLUMNS`, one row per variant; ``win`` is
        ``cosine_variant > cosine_paraphrase``, ``tie`` equality.
    """
    vec = encode_unique(encode, [*variants[C.COL_ANCHOR], *variants[C.COL_PARAPHRASE], *variants[C.ROLE_VARIANT]])

    def stack(column: str) -> np.ndarray:
        return np.stack([vec[t] for t in variants[column]]) if len(variants) else np.zeros((0, 1))

    anchors = stack(C.COL_ANCHOR)
    para = pairwise_cos_sim(anchors, stack(C.COL_PARAPHRASE)) if len(variants) else np.zeros(0)
    var = pairwise_cos_sim(anchors, stack(C.ROLE_VARIANT)) if len(variants) else np.zeros(0)
    out = variants[[C.COL_GROUP_ID, C.COL_DOMAIN, C.COL_MODE, C.COL_VARIANT_SOURCE, C.COL_ANCHOR, C.ROLE_VARIANT]].copy()
    out.insert(0, C.COL_SPLIT, variants[C.COL_GROUP_ID].map(split).to_numpy())
    out.insert(0, C.COL_SETTING, setting)
    out["cosine_paraphrase"], out["cosine_variant"] = para, var
    out[C.COL_WIN] = adversarial_wins(para, var)
    out[C.COL_TIE] = var == para
    return out[SCORE_COLUMNS].reset_index(drop=True)


def _ordered(frame: pd.DataFrame, column: str, order: Sequence[str]) -> pd.Series:
    rank = {v: i for i, v in enumerate(order)}
    return frame[column].map(lambda v: rank.get(v, len(rank)))


def _slices(scores: pd.DataFrame, by: str) -> list[tuple[str, pd.DataFrame]]:
    known = C.FAILURE_MODES if by == C.COL_MODE else C.VARIANT_SOURCES
    present = list(dict.fromkeys(scores[by]))
    # A user's file may hold modes of its own (e.g. contradiction): after the known ones, as they come.
    values = [v for v in known if v in present] + [v for v in present if v not in known]
    return [(ALL, scores), *((v, scores[scores[by] == v]) for v in values)]


def win_table(scores: pd.DataFrame, by: str = C.COL_MODE, *, seed: int = C.BOOTSTRAP_SEED) -> pd.DataFrame:
    """Win rate per setting, split and ``by`` (mode or variant source), plus ``all``; held-out first.

    Intervals resample whole anchor groups (:func:`rate_with_ci` with clusters),
    since the variants of one group are not independent.
    """
    rows = []
    for (setting, split), frame in scores.groupby([C.COL_SETTING, C.COL_SPLIT], sort=False):
        for value, part in _slices(frame, by):
            rate, low, high = rate_with_ci(part[C.COL_WIN].to_numpy(), part[C.COL_GROUP_ID].to_numpy(), seed=seed)
            rows.append((setting, split, value, len(part), int(part[C.COL_WIN].sum()), int(part[C.COL_TIE].sum()), rate, low, high))
    out = pd.DataFrame(rows, columns=[C.COL_SETTING, C.COL_SPLIT, by, *WIN_COLUMNS[3:]])
    return _sorted(out)


def source_table(scores: pd.DataFrame, *, seed: int = C.BOOTSTRAP_SEED) -> pd.DataFrame:
    """:func:`win_table` by variant source (hand-written first, then rule-made)."""
    return win_table(scores, C.COL_VARIANT_SOURCE, seed=seed)


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [_ordered(frame, C.COL_SPLIT, C.TUNE_SPLITS),
            _ordered(frame, C.COL_SETTING, C.TUNE_SETTINGS)]
    order = np.lexsort(tuple(k.to_numpy() for k in reversed(keys)))
    return frame.iloc[order].reset_index(drop=True)


def paired_tests(scores: pd.DataFrame, *, seed: int = C.BOOTSTRAP_SEED) -> pd.DataFrame:
    """Untouched vs every other setting on the same variants, per split and mode (and ``all``).

    Returns:
        Columns :data:`TEST_COLUMNS`: ``before``/``after`` win rates, their
        difference with a paired bootstrap interval, ``fixed`` (won before,
        not after), ``broken`` (the other way) and McNemar's exact p.
    """
    base = scores[scores[C.COL_SETTING] == C.TUNE_SETTING_UNTOUCHED]
    rows = []
    present = set(scores[C.COL_SETTING])
    for setting in [s for s in C.TUNE_SETTINGS if s in present and s != C.TUNE_SETTING_UNTOUCHED]:
        other = scores[scores[C.COL_SETTING] == setting]
        for split in C.TUNE_SPLITS:
            b, a = base[base[C.COL_SPLIT] == split], other[other[C.COL_SPLIT] == split]
            if len(b) != len(a):
                raise ValueError(f"{setting} scored {len(a)} {split} variants, untouched {len(b)}")
            for (mode, bp), (_, ap) in zip(_slices(b, C.COL_MODE), _slices(a, C.COL_MODE), strict=True):
                before, after = bp[C.COL_WIN].to_numpy(), ap[C.COL_WIN].to_numpy()
                test = mcnemar_exact(before, after)
                diff, low, high = rate_difference_ci(after, before, seed=seed)
                rows.append((setting, split, mode, len(bp), _mean(before), _mean(after), diff, low, high, test.a_only, test.b_only, test.pvalue))
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def pair_auc(encode: EncodeFn, text_a: Sequence[str], text_b: Sequence[str], same: Sequence[bool] | np.ndarray) -> float:
    """AUC of cosine(text_a, text_b) as a detector of same meaning (``same`` True); NaN without both kinds."""
    same_arr = np.asarray(same, dtype=bool)
    if same_arr.all() or not same_arr.any():
        return math.nan
    vec = encode_unique(encode, [*text_a, *text_b])
    cos = pairwise_cos_sim(np.stack([vec[t] for t in text_a]), np.stack([vec[t] for t in text_b]))
    return auc(cos[same_arr], cos[~same_arr])


def cost_table(encoders: Mapping[str, EncodeFn], labelled: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """General-similarity cost: AUC of same vs different meaning per labelled data set and setting.

    Args:
        encoders: setting -> encoder.
        labelled: data name -> ``text_a, text_b, same`` (booleans).

    Returns:
        Columns :data:`COST_COLUMNS` (measure ``auc``).
    """
    rows = []
    for name, frame in labelled.items():
        for setting, encode in encoders.items():
            value = pair_auc(encode, list(frame[C.COL_TEXT_A]), list(frame[C.COL_TEXT_B]), frame["same"].to_numpy())
            rows.append((name, "auc", setting, value, len(frame)))
    return pd.DataFrame(rows, columns=COST_COLUMNS)


def warnings(tests: pd.DataFrame, *, setting: str = C.TUNE_SETTING_TUNED, points: float = C.TUNE_MOVED_POINTS) -> list[str]:
    """Plain sentences for every mode whose held-out win rate fell by fewer than ``points`` points (or rose)."""
    held = tests[(tests[C.COL_SETTING] == setting) & (tests[C.COL_SPLIT] == C.SPLIT_HELD_OUT) & (tests[C.COL_MODE] != ALL)]
    out = []
    for r in held.to_dict("records"):
        drop = 100 * (r["before"] - r["after"])
        if math.isnan(drop) or drop >= points:
            continue
        label = C.CATEGORY_LABELS.get(r[C.COL_MODE], r[C.COL_MODE])
        why = " (a mean-pooled model does not see word order)" if r[C.COL_MODE] == C.CAT_ENTITY_SWAP else ""
        verb = "rose" if drop < 0 else "did not move"
        out.append(f"{label}: the tuned model did not fix it{why}: held-out win rate {100 * r['before']:.1f}% -> {100 * r['after']:.1f}% "
                   f"({verb}; {r['fixed']} fixed, {r['broken']} broken, McNemar p = {r['pvalue']:.3g}).")
    return out


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records")) if not frame.empty else []


def report_doc(tables: Mapping[str, pd.DataFrame], meta: Mapping[str, Any], notes: Sequence[str]) -> dict[str, Any]:
    """The JSON report: ``meta`` (model, settings, split sizes, timings), every table, the warnings."""
    return {**meta, **{name: _records(frame) for name, frame in tables.items()}, "warnings": list(notes)}


def _pct(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}"


def _wide(table: pd.DataFrame, by: str) -> list[str]:
    """Setting rows, one column per ``by`` value, per split (held-out first) as Markdown lines."""
    values = list(dict.fromkeys(table[by]))
    lines = []
    for split in C.TUNE_SPLITS:
        part = table[table[C.COL_SPLIT] == split]
        if part.empty:
            continue
        lines += [f"**{split} half**", "", "| setting | " + " | ".join(f"{v} (n)" for v in values) + " |", "|---" * (len(values) + 1) + "|"]
        for setting, rows in part.groupby(C.COL_SETTING, sort=False):
            cells = {r[by]: f"{_pct(r[C.COL_WIN_RATE])} ({r[C.COL_N]}{', ' + str(r[C.COL_TIES]) + ' ties' if r[C.COL_TIES] else ''})"
                     for r in rows.to_dict("records")}
            lines.append(f"| {setting} | " + " | ".join(cells.get(v, "—") for v in values) + " |")
        lines.append("")
    return lines


def to_markdown(doc: Mapping[str, Any]) -> str:
    """The report as Markdown: headline, warnings, win rates by mode and by source, paired tests, costs."""
    modes, sources = pd.DataFrame(doc["win_rates"]), pd.DataFrame(doc["by_source"])
    tests, costs = pd.DataFrame(doc["paired_tests"]), pd.DataFrame(doc["costs"])
    lines = [
        f"# cosine-probe tune: {doc['model']}",
        "",
        f"Win rate = share of variants that outrank their paraphrase (lower is better; ties are no win and counted apart). "
        f"Split by anchor group, stratified by domain, seed {doc['config']['seed']}: {doc['groups'][C.SPLIT_TRAIN]} training groups, "
        f"{doc['groups'][C.SPLIT_HELD_OUT]} held-out. Trained on {doc['training']['rows']} triples, {doc['training']['steps']} steps, "
        f"{doc['training']['seconds']:.0f} s; weights averaged {doc['config']['average']:.2f}/{1 - doc['config']['average']:.2f} with the original"
        + (f"; distillation λ = {doc['config']['distill']}" if doc["config"]["distill"] else "") + ".",
        "",
    ]
    if doc.get("warnings"):
        lines += ["## Did not move", "", *(f"- {w}" for w in doc["warnings"]), ""]
    lines += ["## Win rate by mode (%), held-out half first", "", *_wide(modes, C.COL_MODE)]
    lines += ["## Hand-written vs rule-made variants (%)", "", *_wide(sources, C.COL_VARIANT_SOURCE)]
    if not tests.empty:
        lines += ["## Paired tests against the untouched model", "",
                  "| setting | split | mode | before | after | difference (95% CI) | fixed | broken | McNemar p |", "|---" * 9 + "|"]
        for r in tests.to_dict("records"):
            lines.append(f"| {r[C.COL_SETTING]} | {r[C.COL_SPLIT]} | {r[C.COL_MODE]} | {_pct(r['before'])} | {_pct(r['after'])} | "
                         f"{_pct(r['difference'])} ({_pct(r[C.COL_CI_LOW])} to {_pct(r[C.COL_CI_HIGH])}) | {r['fixed']} | {r['broken']} | {r['pvalue']:.3g} |")
        lines.append("")
    if not costs.empty:
        lines += ["## Cost: same vs different meaning, AUC before/after", "", "| data | n | " + " | ".join(dict.fromkeys(costs[C.COL_SETTING])) + " |",
                  "|---" * (2 + costs[C.COL_SETTING].nunique()) + "|"]
        for name, rows in costs.groupby("data", sort=False):
            values = " | ".join("—" if r["value"] is None or math.isnan(r["value"]) else f"{r['value']:.3f}" for r in rows.to_dict("records"))
            lines.append(f"| {name} | {rows['n'].iloc[0]} | {values} |")
        lines.append("")
    return "\n".join(lines)
