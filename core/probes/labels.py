"""A pairs file's label column read as the user meant it: match / no match, a graded score, or words.

Uploads carry labels as text ("1", "true", "entailment", "not paraphrase",
"4.2").  This module decides what they mean and what a label allows:

* **binary** labels (0/1, true/false, yes/no, paraphrase/not, entailment vs
  contradiction/neutral, ...): cosine as a classifier of the label: ROC and
  AUC, the best threshold by Youden J (:mod:`core.probes.calibration`, strict
  ``>`` as everywhere), accuracy and F1 at it and at a given threshold, the
  share above the threshold per label;
* **graded** labels (numbers with more than two values): the correlations
  of :func:`core.scoring.tables.label_correlation` (unchanged);
* **text** labels that are neither: cosine by label only.

It lives in ``probes`` (not ``scoring``) because it reuses the calibration
module's ROC and Youden cut, which sits a layer up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import constants
from core.probes import calibration

KIND_BINARY, KIND_GRADED, KIND_TEXT, KIND_NONE = "binary", "graded", "text", "none"
UNCATEGORIZED = "uncategorized"  # core.files.reader's category for rows without one
MATCH_WORDS = frozenset({"1", "1.0", "true", "t", "yes", "y", "paraphrase", "entailment", "entailed", "similar", "same", "match", "positive",
                         "duplicate", "relevant", "equivalent"})
NO_MATCH_WORDS = frozenset({"0", "0.0", "false", "f", "no", "n", "not", "not paraphrase", "not_paraphrase", "non-paraphrase", "non_paraphrase",
                            "nonparaphrase", "contradiction", "neutral", "dissimilar", "different", "mismatch", "no match", "negative",
                            "not duplicate", "not_duplicate", "irrelevant", "not equivalent", "not_equivalent"})
_BOOL_WORDS = {"true": True, "false": False}
BY_LABEL_COLUMNS = [constants.COL_MODEL, constants.COL_LABEL, "match", "n", "mean", "sd", "median", "share_above"]
CLASSIFIER_COLUMNS = [constants.COL_MODEL, "n_match", "n_no_match", "auc", "best_threshold", "best_tpr", "best_fpr", "best_accuracy", "best_f1",
                      constants.COL_THRESHOLD, "accuracy", "f1"]


def _text(values: pd.Series) -> pd.Series:
    """Labels as stripped lower-case text, empty for missing."""
    return values.astype("string").str.strip().str.lower().fillna("")


def match_labels(values: pd.Series) -> pd.Series:
    """Each label as 1.0 (a match), 0.0 (no match) or NaN (empty or not a known word).

    Args:
        values: a label column, shape (n,), any dtype.

    Returns:
        Floats, shape (n,), aligned with ``values``.
    """
    text = _text(values)
    out = pd.Series(np.nan, index=values.index, dtype=float)
    out[text.isin(MATCH_WORDS)] = 1.0
    out[text.isin(NO_MATCH_WORDS)] = 0.0
    return out


def label_kind(values: pd.Series) -> str:
    """What a label column is: ``binary``, ``graded``, ``text`` or ``none`` (no non-empty label).

    Binary: every non-empty label is a match or no-match word and both occur.
    Graded: every non-empty label is a number and there are more than two values.
    """
    if not isinstance(values, pd.Series):
        raise TypeError(f"labels must be a pandas Series, got {type(values).__name__}")
    text = _text(values)
    given = text[text != ""]
    if given.empty:
        return KIND_NONE
    matched = match_labels(values)[text != ""]
    if matched.notna().all() and matched.nunique() == 2:
        return KIND_BINARY
    numbers = pd.to_numeric(given, errors="coerce")
    if numbers.notna().all() and np.isfinite(numbers.to_numpy(float)).all() and numbers.nunique() > 2:
        return KIND_GRADED
    return KIND_TEXT


def typed_labels(values: pd.Series) -> pd.Series:
    """Labels with the type they were written in, for JSON exports: bools, integers, floats or text.

    A column is converted only when every non-empty label fits the type
    (all true/false, all integers, all numbers); empty labels become None.
    """
    text = values.astype("string").str.strip()
    given = text.fillna("") != ""
    low = text.str.lower()
    if given.any() and low[given].isin(list(_BOOL_WORDS)).all():
        return pd.Series([_BOOL_WORDS[v] if g else None for v, g in zip(low, given, strict=True)], index=values.index, dtype=object)
    numbers = pd.to_numeric(text.where(given), errors="coerce")
    if given.any() and numbers[given].notna().all():
        integral = bool((numbers[given] == numbers[given].round()).all()) and not text[given].str.contains(r"[.eE]", regex=True).any()
        return pd.Series([(int(v) if integral else float(v)) if g else None for v, g in zip(numbers, given, strict=True)], index=values.index, dtype=object)
    return pd.Series([str(v) if g else None for v, g in zip(text, given, strict=True)], index=values.index, dtype=object)


def labels_as_categories(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs with each label as its category, when no row has a category of its own.

    Rows without a label keep ``uncategorized``.  A table that has categories,
    no label column, or graded labels (a score per pair is no group) is
    returned unchanged.
    """
    if constants.COL_LABEL not in pairs.columns or constants.COL_CATEGORY not in pairs.columns:
        return pairs
    if label_kind(pairs[constants.COL_LABEL]) in (KIND_GRADED, KIND_NONE):
        return pairs
    if not (pairs[constants.COL_CATEGORY] == UNCATEGORIZED).all():
        return pairs
    label = pairs[constants.COL_LABEL].astype("string").str.strip().fillna("")
    return pairs.assign(**{constants.COL_CATEGORY: label.where(label != "", UNCATEGORIZED).astype(object)})


def _accuracy_f1(cosine: np.ndarray, truth: np.ndarray, threshold: float) -> tuple[float, float]:
    from sklearn.metrics import accuracy_score, f1_score

    predicted = (cosine > threshold).astype(int)
    return float(accuracy_score(truth, predicted)), float(f1_score(truth, predicted, zero_division=0.0))


def label_report(results: pd.DataFrame, threshold: float) -> dict[str, pd.DataFrame]:
    """Everything a label column allows, per model.

    Args:
        results: tidy runner results with a ``label`` column (text as read).
        threshold: the threshold the accuracy, F1 and share above are also given at.

    Returns:
        ``kind``: one-cell frame with the label kind;
        ``by_label``: model, label, match (1/0/NaN), n, mean, sd, median,
        share_above (cosine > threshold) per model and label;
        ``classifier`` (binary labels only): model, n_match, n_no_match, auc,
        best_threshold (Youden J), best_tpr, best_fpr, best_accuracy, best_f1,
        threshold, accuracy, f1;
        ``roc`` (binary only): model, threshold, fpr, tpr.

    Raises:
        ValueError: no label column, or a threshold outside [-1, 1].
    """
    if constants.COL_LABEL not in results.columns:
        raise ValueError("these results have no label column")
    if not -1.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    kind = label_kind(results[constants.COL_LABEL]) if not results.empty else KIND_NONE
    data = results.assign(_label=results[constants.COL_LABEL].astype("string").str.strip().fillna(""), _match=match_labels(results[constants.COL_LABEL]))
    data = data[data["_label"] != ""]
    rows = []
    for (model, label), group in data.groupby([constants.COL_MODEL, "_label"], sort=False):
        cos = group[constants.COL_COSINE].to_numpy(float)
        rows.append({constants.COL_MODEL: model, constants.COL_LABEL: label, "match": group["_match"].iloc[0], "n": len(cos), "mean": float(cos.mean()),
                     "sd": float(cos.std(ddof=1)) if len(cos) > 1 else np.nan, "median": float(np.median(cos)), "share_above": float((cos > threshold).mean())})
    out = {"kind": pd.DataFrame({"kind": [kind]}), "by_label": pd.DataFrame(rows, columns=BY_LABEL_COLUMNS)}
    classifier, curves = [], []
    if kind == KIND_BINARY:
        for model, group in data.groupby(constants.COL_MODEL, sort=False):
            cos, truth = group[constants.COL_COSINE].to_numpy(float), group["_match"].to_numpy(int)
            pos, neg = cos[truth == 1], cos[truth == 0]
            if not len(pos) or not len(neg):
                continue
            best = calibration.youden_threshold(pos, neg)
            best_acc, best_f1 = _accuracy_f1(cos, truth, best.threshold)
            acc, f1 = _accuracy_f1(cos, truth, threshold)
            classifier.append({constants.COL_MODEL: model, "n_match": len(pos), "n_no_match": len(neg), "auc": calibration.auc(pos, neg),
                               "best_threshold": best.threshold, "best_tpr": best.tpr, "best_fpr": best.fpr, "best_accuracy": best_acc, "best_f1": best_f1,
                               constants.COL_THRESHOLD: float(threshold), "accuracy": acc, "f1": f1})
            curves.append(calibration.roc_curve(pos, neg).assign(**{constants.COL_MODEL: model}))
    out["classifier"] = pd.DataFrame(classifier, columns=CLASSIFIER_COLUMNS)
    out["roc"] = pd.concat(curves, ignore_index=True)[[constants.COL_MODEL, "threshold", "fpr", "tpr"]] if curves else pd.DataFrame(
        columns=[constants.COL_MODEL, "threshold", "fpr", "tpr"])
    return out
