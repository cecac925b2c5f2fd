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
* :func:`natural_cost`: the general cost on natural public data the tuning
  never saw (WordNet antonym glosses, ``data/natural/``): opposite win rate
  and in-corpus recall@1 before/after, with bootstrap intervals, the paired
  difference and fixed/broken counts;
* :func:`shortcut_table`: the negation-shortcut probe, cosine per pair and
  setting of hand-written pairs that mean the same despite a negation cue
  ("The door was open." / "The door was not closed.") or the opposite;
* :func:`cost_table`: general similarity before/after (AUC of same vs
  different meaning on the baseline suite and on a labelled file);
* :func:`at_ceiling`: a row whose every value sits at its measure's best
  possible value cannot show a change; every cost row says so;
* :func:`warnings`: modes whose held-out win rate did not move,
  :func:`cost_warnings` a cost the intervals show and the shortcut;
* :func:`to_markdown`: the whole report as Markdown.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core import constants, lexicon
from core.files.triples import Triples
from core.probes.calibration import auc
from core.probes.retrieval.metrics import adversarial_wins, flips, mcnemar_exact, rate_difference_ci, rate_with_ci
from core.probes.retrieval.triples import score_vectors
from core.probes.tune.data import MEANING_OPPOSITE, MEANING_SAME
from core.stats.similarity import pairwise_cos_sim

C = constants
EncodeFn = Callable[[list[str]], np.ndarray]
"""texts -> embeddings, shape ``(len(texts), dim)``."""
ALL = C.MODE_ALL
SCORE_COLUMNS = [
    C.COL_SETTING,
    C.COL_SPLIT,
    C.COL_GROUP_ID,
    C.COL_DOMAIN,
    C.COL_MODE,
    C.COL_VARIANT_SOURCE,
    C.COL_ANCHOR,
    C.ROLE_VARIANT,
    "cosine_paraphrase",
    "cosine_variant",
    C.COL_WIN,
    C.COL_TIE,
]
WIN_COLUMNS = [C.COL_SETTING, C.COL_SPLIT, C.COL_MODE, C.COL_N, C.COL_WINS, C.COL_TIES, C.COL_WIN_RATE, C.COL_CI_LOW, C.COL_CI_HIGH]
TEST_COLUMNS = [
    C.COL_SETTING,
    C.COL_SPLIT,
    C.COL_MODE,
    C.COL_N,
    "before",
    "after",
    "difference",
    C.COL_CI_LOW,
    C.COL_CI_HIGH,
    "fixed",
    "broken",
    "pvalue",
]
COST_COLUMNS = ["data", "measure", C.COL_SETTING, "value", "n", "best", "at_ceiling"]
MEASURE_AUC = "auc"
MEASURE_WIN_RATE = "opposite win rate"
MEASURE_RECALL_AT_1 = "recall@1"
BEST = {MEASURE_AUC: 1.0, MEASURE_WIN_RATE: 0.0, MEASURE_RECALL_AT_1: 1.0}
"""Each measure's best possible value: a row at it cannot improve, and easy data sits there whatever the model."""
NATURAL_COLUMNS = [
    "data",
    "measure",
    C.COL_SETTING,
    C.COL_N,
    "value",
    C.COL_CI_LOW,
    C.COL_CI_HIGH,
    "difference",
    "difference_low",
    "difference_high",
    "fixed",
    "broken",
    "best",
    "at_ceiling",
]
SHORTCUT_TABLE_COLUMNS = ["item", "meaning", C.COL_TEXT_A, C.COL_TEXT_B, C.COL_SETTING, C.COL_COSINE]
SHORTCUT_MEAN_COLUMNS = [C.COL_SETTING, "meaning", C.COL_N, "mean_cosine"]


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
    known = lexicon.FAILURE_MODES if by == C.COL_MODE else C.VARIANT_SOURCES
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
    keys = [_ordered(frame, C.COL_SPLIT, C.TUNE_SPLITS), _ordered(frame, C.COL_SETTING, C.TUNE_SETTINGS)]
    order = np.lexsort(tuple(k.to_numpy() for k in reversed(keys)))
    return frame.iloc[order].reset_index(drop=True)


def paired_tests(scores: pd.DataFrame, *, seed: int = C.BOOTSTRAP_SEED) -> pd.DataFrame:
    """Untouched vs every other setting on the same variants, per split and mode (and ``all``).

    Returns:
        Columns :data:`TEST_COLUMNS`: ``before``/``after`` win rates, their
        difference with a paired bootstrap interval, ``fixed`` (paraphrase
        strictly first after and not before: a win turned tie is no fix),
        ``broken`` (the other way) and McNemar's exact p on the wins.
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
                # As in the retrieval churn table: a win that became a tie is no fix.
                fixed, broken = flips(_strictly_first(bp), _strictly_first(ap))
                rows.append((setting, split, mode, len(bp), _mean(before), _mean(after), diff, low, high, fixed, broken, test.pvalue))
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def _strictly_first(scores: pd.DataFrame) -> np.ndarray:
    """Per row, whether the right text scored strictly above the other (neither a win nor a tie), shape ``(n,)``."""
    return ~(scores[C.COL_WIN].to_numpy(dtype=bool) | scores[C.COL_TIE].to_numpy(dtype=bool))


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


def at_ceiling(values: Sequence[float] | np.ndarray, best: float) -> bool:
    """True when every value of a row (before and each after) sits at ``best``, the measure's best possible value.

    Such a row cannot show a gain, and the data behind it is easy enough for
    every setting to score perfectly, so it shows no cost short of a collapse.

    Args:
        values: the row's values, one per setting; NaN counts as not at the bound.
        best: the measure's best possible value (:data:`BEST`).

    Returns:
        False for no values.
    """
    arr = np.asarray(values, dtype=float)
    return bool(arr.size) and bool(np.all(np.isclose(arr, best, rtol=0.0, atol=1e-12)))


def _flag_ceilings(frame: pd.DataFrame) -> pd.DataFrame:
    """Set ``at_ceiling`` on every row of a (data, measure) group whose every setting is at its best value."""
    if frame.empty:
        return frame.assign(at_ceiling=pd.Series(dtype=bool))
    flags = {
        key: at_ceiling(rows["value"].to_numpy(dtype=float), BEST[str(key[1])])
        for key, rows in frame.groupby(["data", "measure"], sort=False)
    }
    return frame.assign(at_ceiling=[flags[key] for key in zip(frame["data"], frame["measure"], strict=True)])


def cost_table(encoders: Mapping[str, EncodeFn], labelled: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """General-similarity cost: AUC of same vs different meaning per labelled data set and setting.

    Args:
        encoders: setting -> encoder.
        labelled: data name -> ``text_a, text_b, same`` (booleans).

    Returns:
        Columns :data:`COST_COLUMNS` (measure ``auc``, best 1.0); ``at_ceiling``
        when every setting scores 1.0 on that data (:func:`at_ceiling`).
    """
    rows = []
    for name, frame in labelled.items():
        for setting, encode in encoders.items():
            value = pair_auc(encode, list(frame[C.COL_TEXT_A]), list(frame[C.COL_TEXT_B]), frame["same"].to_numpy())
            rows.append((name, MEASURE_AUC, setting, value, len(frame), BEST[MEASURE_AUC], False))
    return _flag_ceilings(pd.DataFrame(rows, columns=COST_COLUMNS))


def _natural_outcomes(encode: EncodeFn, triples: Triples, setting: str) -> dict[str, tuple[np.ndarray, np.ndarray | None, np.ndarray]]:
    """Per measure: the indicator the rate counts per unit, the unit's cluster, and whether the unit succeeded.

    The opposite win rate counts wins per triple (clustered by anchor) and a
    triple succeeds only when its positive is strictly first (a tie is
    neither); recall@1 counts and succeeds on the anchors it finds.
    """
    frame = triples.frame
    vectors = encode_unique(encode, [*frame[C.COL_ANCHOR], *frame[C.COL_POSITIVE], *frame[C.COL_NEGATIVE]])
    scores, ranks = score_vectors(triples, vectors, setting)
    found = ranks[C.COL_IR_RECALL_AT[1]].to_numpy(dtype=float) > 0
    return {
        MEASURE_WIN_RATE: (scores[C.COL_WIN].to_numpy(dtype=bool), scores[C.COL_ANCHOR].to_numpy(), _strictly_first(scores)),
        MEASURE_RECALL_AT_1: (found, None, found),
    }


def natural_cost(encoders: Mapping[str, EncodeFn], triples: Triples, name: str, *, seed: int = C.BOOTSTRAP_SEED) -> pd.DataFrame:
    """The general cost on natural triples the tuning never saw, per setting, against the untouched model.

    Two measures, both by the rules of the triples probe
    (:func:`core.probes.retrieval.triples.score_vectors`): the **opposite win
    rate** (share of triples whose negative, the opposite meaning, outranks
    the positive for the anchor; lower is better; ties are no win) with
    intervals resampling anchors, and **recall@1** of the in-corpus ranking
    (every anchor against every positive and negative of the file; higher is
    better).

    Args:
        encoders: setting -> encoder; must hold :data:`core.constants.TUNE_SETTING_UNTOUCHED`.
        triples: the natural triples (``anchor, positive, negative``, or NLI's ``premise, entailed, contradicted``).
        name: the data's name in the table.
        seed: of the bootstrap intervals.

    Returns:
        Columns :data:`NATURAL_COLUMNS`: per measure and setting the value with
        its 95% interval; for every other setting than untouched the paired
        difference (after minus before) with its bootstrap interval and the
        ``fixed`` / ``broken`` counts (units that succeed after and did not
        before, and the other way; a triple succeeds when its positive is
        strictly first, so a win turned tie is no fix); ``at_ceiling`` when every setting sits at the
        measure's best value.

    Raises:
        ValueError: no untouched encoder.
    """
    if C.TUNE_SETTING_UNTOUCHED not in encoders:
        raise ValueError("natural_cost needs the untouched model's encoder as the baseline")
    outcomes = {setting: _natural_outcomes(encode, triples, setting) for setting, encode in encoders.items()}
    base = outcomes[C.TUNE_SETTING_UNTOUCHED]
    rows = []
    for measure, (before, clusters, succeeded_before) in base.items():
        for setting, found in outcomes.items():
            after, _, succeeded_after = found[measure]
            value, low, high = rate_with_ci(after, clusters, seed=seed)
            diff = (math.nan,) * 3
            fixed: int | None = None
            broken: int | None = None
            if setting != C.TUNE_SETTING_UNTOUCHED:
                diff = rate_difference_ci(after, before, seed=seed)
                fixed, broken = flips(succeeded_before, succeeded_after)
            rows.append((name, measure, setting, len(after), value, low, high, *diff, fixed, broken, BEST[measure], False))
    out = pd.DataFrame(rows, columns=NATURAL_COLUMNS).astype({"fixed": "Int64", "broken": "Int64"})
    return _flag_ceilings(out)


def shortcut_table(encoders: Mapping[str, EncodeFn], pairs: pd.DataFrame) -> pd.DataFrame:
    """The negation-shortcut probe: cosine(text_a, text_b) of every pair under every setting.

    Args:
        encoders: setting -> encoder.
        pairs: :func:`core.probes.tune.data.shortcut_pairs`' rows.

    Returns:
        Columns :data:`SHORTCUT_TABLE_COLUMNS`, pairs in file order within each setting.
    """
    frames = []
    for setting, encode in encoders.items():
        vec = encode_unique(encode, [*pairs[C.COL_TEXT_A], *pairs[C.COL_TEXT_B]])
        cos = pairwise_cos_sim(np.stack([vec[t] for t in pairs[C.COL_TEXT_A]]), np.stack([vec[t] for t in pairs[C.COL_TEXT_B]]))
        frame = pairs[["item", "meaning", C.COL_TEXT_A, C.COL_TEXT_B]].copy()
        frame[C.COL_SETTING], frame[C.COL_COSINE] = setting, cos
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)[SHORTCUT_TABLE_COLUMNS] if frames else pd.DataFrame(columns=SHORTCUT_TABLE_COLUMNS)


def shortcut_means(table: pd.DataFrame) -> pd.DataFrame:
    """Mean cosine per setting and meaning (same, opposite) of :func:`shortcut_table`'s rows, settings in their order."""
    if table.empty:
        return pd.DataFrame(columns=SHORTCUT_MEAN_COLUMNS)
    out = table.groupby([C.COL_SETTING, "meaning"], sort=False)[C.COL_COSINE].agg(["size", "mean"]).reset_index()
    return out.rename(columns={"size": C.COL_N, "mean": "mean_cosine"})[SHORTCUT_MEAN_COLUMNS]


def warnings(tests: pd.DataFrame, *, setting: str = C.TUNE_SETTING_TUNED, points: float = C.TUNE_MOVED_POINTS) -> list[str]:
    """Plain sentences for every mode whose held-out win rate fell by fewer than ``points`` points (or rose)."""
    held = tests[(tests[C.COL_SETTING] == setting) & (tests[C.COL_SPLIT] == C.SPLIT_HELD_OUT) & (tests[C.COL_MODE] != ALL)]
    out = []
    for r in held.to_dict("records"):
        drop = 100 * (r["before"] - r["after"])
        if math.isnan(drop) or drop >= points:
            continue
        label = lexicon.CATEGORY_LABELS.get(r[C.COL_MODE], r[C.COL_MODE])
        why = " (a mean-pooled model does not see word order)" if r[C.COL_MODE] == C.CAT_ENTITY_SWAP else ""
        verb = "rose" if drop < 0 else "did not move"
        out.append(
            f"{label}: the tuned model did not fix it{why}: held-out win rate {100 * r['before']:.1f}% -> {100 * r['after']:.1f}% "
            f"({verb}; {r['fixed']} fixed, {r['broken']} broken, McNemar p = {r['pvalue']:.3g})."
        )
    return out


def _worse(r: Mapping[Any, Any]) -> bool:
    """The interval of the difference lies wholly on the bad side of zero."""
    return bool(r["difference_low"] > 0) if BEST[r["measure"]] == 0 else bool(r["difference_high"] < 0)


def _shortcut_drop(means: pd.DataFrame, setting: str, meaning: str) -> tuple[float, float]:
    """Mean cosine of ``meaning`` pairs under the untouched model and under ``setting``."""
    at = means.set_index([C.COL_SETTING, "meaning"])["mean_cosine"]
    return float(at.get((C.TUNE_SETTING_UNTOUCHED, meaning), math.nan)), float(at.get((setting, meaning), math.nan))


def cost_warnings(
    natural: pd.DataFrame, shortcut: pd.DataFrame, *, setting: str = C.TUNE_SETTING_TUNED, drop: float = C.TUNE_SHORTCUT_DROP
) -> list[str]:
    """Plain sentences for a general cost the intervals show and for the negation shortcut.

    Args:
        natural: :func:`natural_cost`'s rows.
        shortcut: :func:`shortcut_table`'s rows.
        setting: the setting judged (the tuned model).
        drop: the fall in mean cosine of the same-meaning shortcut pairs that is worth a warning.
    """
    out = []
    for r in natural[natural[C.COL_SETTING] == setting].to_dict("records") if not natural.empty else []:
        if _worse(r):
            out.append(
                f"General cost: {r['measure']} on {r['data']} got worse, {_pct(_before(natural, r))}% -> {_pct(r['value'])}% "
                f"(difference {_pct(r['difference'])} points, 95% CI {_pct(r['difference_low'])} to {_pct(r['difference_high'])}; "
                f"{_count(r['fixed'])} fixed, {_count(r['broken'])} broken)."
            )
    means = shortcut_means(shortcut)
    same_before, same_after = _shortcut_drop(means, setting, MEANING_SAME)
    if same_before - same_after >= drop:
        opp_before, opp_after = _shortcut_drop(means, setting, MEANING_OPPOSITE)
        out.append(
            f'Negation shortcut: pairs that mean the same despite a negation cue ("The door was open." / "The door was not closed.") '
            f"fell from mean cosine {same_before:.3f} to {same_after:.3f} (opposite-meaning pairs {opp_before:.3f} -> {opp_after:.3f}): "
            "the tuned model reads a negation cue as a change of meaning, whatever the meaning."
        )
    return out


def _before(natural: pd.DataFrame, r: Mapping[Any, Any]) -> float:
    """The untouched value of ``r``'s data and measure (what the difference is measured from)."""
    base = natural[
        (natural["data"] == r["data"]) & (natural["measure"] == r["measure"]) & (natural[C.COL_SETTING] == C.TUNE_SETTING_UNTOUCHED)
    ]
    return float(base["value"].iloc[0]) if not base.empty else math.nan


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
            cells = {
                r[by]: f"{_pct(r[C.COL_WIN_RATE])} ({r[C.COL_N]}{', ' + str(r[C.COL_TIES]) + ' ties' if r[C.COL_TIES] else ''})"
                for r in rows.to_dict("records")
            }
            lines.append(f"| {setting} | " + " | ".join(cells.get(v, "—") for v in values) + " |")
        lines.append("")
    return lines


def _count(value: Any) -> str:
    """A count that JSON may have turned into a float, or "—" where there is none (the untouched row)."""
    return "—" if value is None or pd.isna(value) else str(int(value))


def _interval(value: float, low: float, high: float) -> str:
    return f"{_pct(value)} ({_pct(low)}–{_pct(high)})"


def _ceiling_note(rows: pd.DataFrame, fmt: str) -> str:
    if not rows["at_ceiling"].any():
        return ""
    return (
        f"at ceiling: every setting scores {format(float(rows['best'].iloc[0]), fmt)}, the best possible value; these pairs are too easy "
        "to show a cost"
    )


def _setting_order(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame[C.COL_SETTING]))
    return [s for s in C.TUNE_SETTINGS if s in present] + [s for s in present if s not in C.TUNE_SETTINGS]


def natural_sets(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the general cost was measured on, one record per natural set (a report written with one set gave a mapping)."""
    info = doc.get("natural_data") or []
    return [dict(info)] if isinstance(info, Mapping) else [dict(i) for i in info]


def _cost_parts(rows_of_set: pd.DataFrame, setting: str) -> list[str]:
    parts = []
    for measure, rows in rows_of_set.groupby("measure", sort=False):
        by = {str(r[C.COL_SETTING]): r for r in rows.to_dict("records")}
        if setting not in by or C.TUNE_SETTING_UNTOUCHED not in by:
            continue
        r = by[setting]
        better = "lower" if BEST[str(measure)] == 0 else "higher"
        note = "; at ceiling" if bool(r["at_ceiling"]) else ""
        parts.append(
            f"{measure} {_pct(by[C.TUNE_SETTING_UNTOUCHED]['value'])}% -> {_pct(r['value'])}% ({better} is better; "
            f"difference {_pct(r['difference'])} points, 95% CI {_pct(r['difference_low'])} to {_pct(r['difference_high'])}; "
            f"{_count(r['fixed'])} fixed, {_count(r['broken'])} broken{note})"
        )
    return parts


def cost_headline(doc: Mapping[str, Any], *, setting: str = C.TUNE_SETTING_TUNED) -> list[str]:
    """One paragraph: the general cost on each natural set (tuned vs untouched) and the shortcut probe's headline pair."""
    natural = pd.DataFrame(doc.get("natural_cost") or [])
    shortcut = pd.DataFrame(doc.get("shortcut") or [])
    lines = []
    for info in natural_sets(doc) or [{"reason": "no natural data"}]:
        rows = natural[natural["data"] == info.get("name")] if not natural.empty else natural
        if rows.empty:
            lines.append(f"**General cost on {info.get('name', 'natural data')}**: not measured ({info.get('reason', 'no natural data')}).")
            continue
        parts = _cost_parts(rows, setting)
        n = int(rows[C.COL_N].iloc[0])
        left_out = f"; {info['left_out']} row(s) sharing a text with the tuning data left out" if info.get("left_out") else ""
        head = f"**General cost on {info['name']}, natural data it never trained on** ({n} triples{left_out}): "
        lines.append(head + "; ".join(parts) + "." if parts else head + "no tuned setting to compare.")
    if not shortcut.empty and setting in set(shortcut[C.COL_SETTING]):
        first = shortcut[shortcut["meaning"] == MEANING_SAME].iloc[0]
        pair = shortcut[(shortcut[C.COL_TEXT_A] == first[C.COL_TEXT_A]) & (shortcut[C.COL_TEXT_B] == first[C.COL_TEXT_B])].set_index(
            C.COL_SETTING
        )[C.COL_COSINE]
        means = shortcut_means(shortcut)
        n_same = int(((shortcut[C.COL_SETTING] == setting) & (shortcut["meaning"] == MEANING_SAME)).sum())
        same_b, same_a = _shortcut_drop(means, setting, MEANING_SAME)
        opp_b, opp_a = _shortcut_drop(means, setting, MEANING_OPPOSITE)
        lines.append(
            f'**Shortcut probe**: "{first[C.COL_TEXT_A]}" / "{first[C.COL_TEXT_B]}" (same meaning) '
            f"{pair[C.TUNE_SETTING_UNTOUCHED]:.3f} -> {pair[setting]:.3f}; mean cosine of the {n_same} "
            f"same-meaning negation pairs {same_b:.3f} -> {same_a:.3f}, of the opposite-meaning ones {opp_b:.3f} -> {opp_a:.3f}."
        )
    return [" ".join(lines), ""]


def _natural_lines(natural: pd.DataFrame, infos: list[dict[str, Any]]) -> list[str]:
    lines = ["## General cost on natural data it never trained on", ""]
    if not infos:
        return [*lines, "Not measured: no natural data.", ""]
    lines += [
        "Each anchor is the query; opposite win rate = share of triples whose negative (the opposite meaning) outranks the "
        "positive (lower is better, ties are no win); recall@1 = share of anchors whose top passage among every positive and "
        "negative of the file is their positive (higher is better). 95% intervals by bootstrap; fixed / broken = triples or "
        "anchors that succeed after and did not before, and the other way (a triple succeeds when its positive is strictly "
        "first: a win turned tie is no fix).",
        "",
    ]
    for info in infos:
        rows_of_set = natural[natural["data"] == info.get("name")] if not natural.empty else natural
        lines += [f"### {info.get('name', 'natural data')}", ""]
        if rows_of_set.empty:
            lines += [f"Not measured: {info.get('reason', 'no natural data')}.", ""]
            continue
        left_out = f" {info['left_out']} row(s) sharing a text with the tuning data were left out." if info.get("left_out") else ""
        lines += [
            f"{info.get('source', '')}{left_out}",
            "",
            "| measure | setting | n | value % (95% CI) | difference, points (95% CI) | fixed | broken | note |",
            "|---" * 8 + "|",
        ]
        for measure, rows in rows_of_set.groupby("measure", sort=False):
            note = _ceiling_note(rows, ".0%")
            for r in rows.to_dict("records"):
                diff = (
                    "—"
                    if r[C.COL_SETTING] == C.TUNE_SETTING_UNTOUCHED
                    else f"{_pct(r['difference'])} ({_pct(r['difference_low'])} to {_pct(r['difference_high'])})"
                )
                fixed, broken = _count(r["fixed"]), _count(r["broken"])
                lines.append(
                    f"| {measure} | {r[C.COL_SETTING]} | {r[C.COL_N]} | {_interval(r['value'], r[C.COL_CI_LOW], r[C.COL_CI_HIGH])} | "
                    f"{diff} | {fixed} | {broken} | {note} |"
                )
        lines.append("")
    return lines


def _shortcut_lines(shortcut: pd.DataFrame) -> list[str]:
    if shortcut.empty:
        return []
    settings = _setting_order(shortcut)
    means = {(str(r[C.COL_SETTING]), str(r["meaning"])): r for r in shortcut_means(shortcut).to_dict("records")}
    lines = [
        "## Shortcut probe: a negation cue, or the meaning?",
        "",
        'Hand-written pairs (data/shortcut/): *same* says the same thing with a negation cue and an antonym ("open" / "not closed"), '
        "*opposite* negates it. Tuning that learned meaning pushes the opposite pairs apart and keeps the same ones close; tuning that "
        'learned "a negation cue means a different meaning" pushes both apart.',
        "",
        "| meaning | n | " + " | ".join(settings) + " |",
        "|---" * (2 + len(settings)) + "|",
    ]
    for meaning in (MEANING_SAME, MEANING_OPPOSITE):
        if (settings[0], meaning) in means:
            cells = " | ".join(f"{means[(s, meaning)]['mean_cosine']:.3f}" if (s, meaning) in means else "—" for s in settings)
            lines.append(f"| mean cosine, {meaning} meaning | {means[(settings[0], meaning)][C.COL_N]} | {cells} |")
    lines += ["", "| item | meaning | text_a | text_b | " + " | ".join(settings) + " |", "|---" * (4 + len(settings)) + "|"]
    cosine = {(str(r["item"]), str(r["meaning"]), str(r[C.COL_SETTING])): float(r[C.COL_COSINE]) for r in shortcut.to_dict("records")}
    first = shortcut[shortcut[C.COL_SETTING] == settings[0]]
    for r in first.to_dict("records"):
        item, meaning = str(r["item"]), str(r["meaning"])
        cells = " | ".join(f"{cosine[(item, meaning, s)]:.3f}" if (item, meaning, s) in cosine else "—" for s in settings)
        lines.append(f"| {item} | {meaning} | {r[C.COL_TEXT_A]} | {r[C.COL_TEXT_B]} | {cells} |")
    return [*lines, ""]


def to_markdown(doc: Mapping[str, Any]) -> str:
    """The report as Markdown.

    Headline with the general cost, warnings, win rates, natural cost, shortcut probe, sources, tests, AUC costs.
    """
    modes, sources = pd.DataFrame(doc["win_rates"]), pd.DataFrame(doc["by_source"])
    tests, costs = pd.DataFrame(doc["paired_tests"]), pd.DataFrame(doc["costs"])
    natural, shortcut = pd.DataFrame(doc.get("natural_cost") or []), pd.DataFrame(doc.get("shortcut") or [])
    lines = [
        f"# cosine-probe tune: {doc['model']}",
        "",
        f"Win rate = share of variants that outrank their paraphrase (lower is better; ties are no win and counted apart). "
        f"Split by anchor group, stratified by domain, seed {doc['config']['seed']}: {doc['groups'][C.SPLIT_TRAIN]} training groups, "
        f"{doc['groups'][C.SPLIT_HELD_OUT]} held-out. Trained on {doc['training']['rows']} triples, {doc['training']['steps']} steps, "
        f"{doc['training']['seconds']:.0f} s; weights averaged {doc['config']['average']:.2f}/{1 - doc['config']['average']:.2f} with "
        "the original" + (f"; distillation λ = {doc['config']['distill']}" if doc["config"]["distill"] else "") + ".",
        "",
        *cost_headline(doc),
    ]
    if doc.get("warnings"):
        lines += ["## Warnings", "", *(f"- {w}" for w in doc["warnings"]), ""]
    lines += ["## Win rate by mode (%), held-out half first", "", *_wide(modes, C.COL_MODE)]
    lines += _natural_lines(natural, natural_sets(doc))
    lines += _shortcut_lines(shortcut)
    lines += ["## Hand-written vs rule-made variants (%)", "", *_wide(sources, C.COL_VARIANT_SOURCE)]
    if not tests.empty:
        lines += [
            "## Paired tests against the untouched model",
            "",
            "| setting | split | mode | before | after | difference (95% CI) | fixed | broken | McNemar p |",
            "|---" * 9 + "|",
        ]
        for r in tests.to_dict("records"):
            lines.append(
                f"| {r[C.COL_SETTING]} | {r[C.COL_SPLIT]} | {r[C.COL_MODE]} | {_pct(r['before'])} | {_pct(r['after'])} | "
                f"{_pct(r['difference'])} ({_pct(r[C.COL_CI_LOW])} to {_pct(r[C.COL_CI_HIGH])}) | {r['fixed']} | {r['broken']} | "
                f"{r['pvalue']:.3g} |"
            )
        lines.append("")
    if not costs.empty:
        settings = _setting_order(costs)
        lines += [
            "## Cost on labelled pairs: same vs different meaning, AUC before/after",
            "",
            "| data | n | " + " | ".join(settings) + " | note |",
            "|---" * (3 + len(settings)) + "|",
        ]
        for name, rows in costs.groupby("data", sort=False):
            by = rows.set_index(C.COL_SETTING)["value"]
            values = " | ".join("—" if s not in by.index or pd.isna(by[s]) else f"{by[s]:.3f}" for s in settings)
            note = _ceiling_note(rows, ".3f") if "at_ceiling" in rows.columns else ""
            lines.append(f"| {name} | {rows['n'].iloc[0]} | {values} | {note} |")
        lines.append("")
    return "\n".join(lines)
