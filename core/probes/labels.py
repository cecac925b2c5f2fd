"""A pairs file's label column read as the user meant it: match / no match, a graded score, or words.

Uploads carry labels as text ("1", "true", "entailment", "not paraphrase",
"4.2").  This module decides what they mean and what a label allows:

* **binary** labels (0/1, true/false, yes/no, paraphrase/not, entailment vs
  contradiction/neutral, ..., or any labels once the user names the value that
  means "same meaning", ``match_label``): cosine as a classifier of the label: ROC and
  AUC, the best threshold by Youden J (:mod:`core.probes.calibration`, strict
  ``>`` as everywhere), accuracy and F1 at it and at a given threshold, the
  share above the threshold per label;
* **graded** labels (numbers with more than two values): the correlations
  of :func:`core.scoring.tables.label_correlation` (unchanged);
* **text** labels that are neither: cosine by label only.

Which side is the match matters: in a negation set ``1`` often marks the
contradicting pair.  ``match_label`` flips the reading (``run --match-label``,
the Your data page's choice), and :func:`label_findings` (per model) and
:func:`label_lead` (across models, a page's first sentence, the AUC in a table) say in words when
the model ranks the non-matching pairs above the matching ones (AUC < 0.5) and
why no classifier can be fitted (one class).  ``summary.json``, the CLI
tables and the page all read :func:`label_report`.

It lives in ``probes`` (not ``scoring``) because it reuses the calibration
module's ROC and Youden cut, which sits a layer up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

from core import constants
from core.probes import calibration
from core.stats.rates import above, failure_rate

KIND_BINARY, KIND_GRADED, KIND_TEXT, KIND_NONE = "binary", "graded", "text", "none"
UNCATEGORIZED = "uncategorized"  # core.files.reader's category for rows without one
MATCH_WORDS = frozenset(
    {
        "1",
        "1.0",
        "true",
        "t",
        "yes",
        "y",
        "paraphrase",
        "entailment",
        "entailed",
        "similar",
        "same",
        "match",
        "positive",
        "duplicate",
        "relevant",
        "equivalent",
    }
)
NO_MATCH_WORDS = frozenset(
    {
        "0",
        "0.0",
        "false",
        "f",
        "no",
        "n",
        "not",
        "not paraphrase",
        "not_paraphrase",
        "non-paraphrase",
        "non_paraphrase",
        "nonparaphrase",
        "contradiction",
        "neutral",
        "dissimilar",
        "different",
        "mismatch",
        "no match",
        "negative",
        "not duplicate",
        "not_duplicate",
        "irrelevant",
        "not equivalent",
        "not_equivalent",
    }
)
_BOOL_WORDS = {"true": True, "false": False}
BY_LABEL_COLUMNS = [constants.COL_MODEL, constants.COL_LABEL, "match", "n", "mean", "sd", "median", "share_above"]
CLASSIFIER_COLUMNS = [
    constants.COL_MODEL,
    "n_match",
    "n_no_match",
    "auc",
    "best_threshold",
    "best_tpr",
    "best_fpr",
    "best_accuracy",
    "best_f1",
    constants.COL_THRESHOLD,
    "accuracy",
    "f1",
]


def _text(values: pd.Series) -> pd.Series:
    """Labels as stripped lower-case text, empty for missing."""
    return values.astype("string").str.strip().str.lower().fillna("")


def _match_value(match_label: object) -> str | None:
    """The user's "same meaning" value as label text (stripped, lower case); None for the default reading."""
    if match_label is None:
        return None
    text = str(match_label).strip().lower()
    if not text:
        raise ValueError("the label that means 'same meaning' is empty; name one of the label values (e.g. 1 or entailment)")
    return text


def _equals_value(text: pd.Series, value: str) -> pd.Series:
    """Labels equal to ``value`` as text, or as numbers when both are numbers (``1`` = ``1.0``)."""
    same = text == value
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    if pd.notna(number):
        same |= pd.to_numeric(text, errors="coerce") == number
    return same


def match_labels(values: pd.Series, match_label: object = None) -> pd.Series:
    """Each label as 1.0 (a match), 0.0 (no match) or NaN (empty, or not a known word).

    Args:
        values: a label column, shape (n,), any dtype.
        match_label: the value that means "same meaning" (every other non-empty
            label is then a no-match); None reads :data:`MATCH_WORDS` and
            :data:`NO_MATCH_WORDS` (1/true/paraphrase/entailment vs 0/false/…).

    Returns:
        Floats, shape (n,), aligned with ``values``.
    """
    text = _text(values)
    out = pd.Series(np.nan, index=values.index, dtype=float)
    value = _match_value(match_label)
    if value is not None:
        out[text != ""] = 0.0
        out[_equals_value(text, value) & (text != "")] = 1.0
        return out
    out[text.isin(MATCH_WORDS)] = 1.0
    out[text.isin(NO_MATCH_WORDS)] = 0.0
    return out


def label_words(values: pd.Series, match_label: object = None) -> pd.Series:
    """Each label as a reader sees it on a chart's axis: "match (1)" / "no match (0)" for a match or no-match label
    (:func:`match_labels`), else the label as written.

    Returns:
        Text, shape (n,), aligned with ``values``.
    """
    return _in_words(values.astype("string").str.strip().fillna(""), match_labels(values, match_label))


def _in_words(text: pd.Series, flag: pd.Series) -> pd.Series:
    """Labels as written, each "match (…)" / "no match (…)" where its flag is 1 / 0."""
    said = np.where(flag == 1.0, "match (" + text + ")", np.where(flag == 0.0, "no match (" + text + ")", text))
    return pd.Series(said, index=text.index, dtype=object)


def by_label_in_words(by_label: pd.DataFrame) -> pd.DataFrame:
    """:func:`label_report`'s ``by_label`` as a page shows it: each label named as the chart's axis names it ("match (1)",
    "no match (0)", :func:`label_words`), read from the report's own ``match`` column, which then goes (a bare 0/1 column
    said nothing the label does not).

    Returns:
        The same rows, ``label`` in words, without ``match``.
    """
    text = by_label[constants.COL_LABEL].astype("string").fillna("")
    return by_label.assign(**{constants.COL_LABEL: _in_words(text, by_label["match"].astype(float))}).drop(columns="match")


def label_kind(values: pd.Series, match_label: object = None) -> str:
    """What a label column is: ``binary``, ``graded``, ``text`` or ``none`` (no non-empty label).

    Binary: a ``match_label`` is given, or every non-empty label is a match or
    no-match word (one class only is still binary: :func:`label_report` then
    says why no classifier can be fitted).
    Graded: every non-empty label is a number and there are more than two values.
    """
    if not isinstance(values, pd.Series):
        raise TypeError(f"labels must be a pandas Series, got {type(values).__name__}")
    text = _text(values)
    given = text[text != ""]
    if given.empty:
        return KIND_NONE
    if _match_value(match_label) is not None:
        return KIND_BINARY
    matched = match_labels(values)[text != ""]
    if matched.notna().all():
        return KIND_BINARY
    numbers = pd.to_numeric(given, errors="coerce")
    if numbers.notna().all() and np.isfinite(numbers.to_numpy(float)).all() and numbers.nunique() > 2:
        return KIND_GRADED
    return KIND_TEXT


def results_label_kind(results: pd.DataFrame, match_label: object = None) -> str:
    """The one rule of what a results table's labels are (:func:`label_kind` of its label column), for CLI and page alike.

    ``none`` when there is no label column or no row; graded labels get a correlation with cosine, binary ones a
    classifier, text ones neither.
    """
    if not isinstance(results, pd.DataFrame):
        raise TypeError(f"results must be a pandas DataFrame, got {type(results).__name__}")
    if constants.COL_LABEL not in results.columns or results.empty:
        return KIND_NONE
    return label_kind(results[constants.COL_LABEL], match_label)


def label_values(values: pd.Series, limit: int = 200) -> list[str]:
    """The distinct non-empty labels as written (stripped), in order of first appearance, at most ``limit``:
    the choices for "which label means 'same meaning'"."""
    text = values.astype("string").str.strip().fillna("")
    return list(dict.fromkeys(v for v in text if v))[:limit]


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
        return pd.Series(
            [(int(v) if integral else float(v)) if g else None for v, g in zip(numbers, given, strict=True)],
            index=values.index,
            dtype=object,
        )
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


def categories_in_words(results: pd.DataFrame, match_label: object = None) -> pd.DataFrame:
    """The results with each category that is its pair's match or no-match label (:func:`labels_as_categories`) said as
    :func:`label_words` says it ("no match (0)", "match (1)"), so a chart's axis never reads a bare 0 or 1.

    Read through ``match_label`` as every other label figure is, so a flipped polarity flips these words too. Other
    categories, and a table without binary labels, are returned unchanged.

    Returns:
        The results, same shape; ``results`` itself when nothing changes.
    """
    if constants.COL_LABEL not in results.columns or constants.COL_CATEGORY not in results.columns or results.empty:
        return results
    if label_kind(results[constants.COL_LABEL], match_label) != KIND_BINARY:
        return results
    label = results[constants.COL_LABEL].astype("string").str.strip().fillna("")
    own = (label != "") & (results[constants.COL_CATEGORY].astype("string") == label).fillna(False).astype(bool)
    if not own.any():
        return results
    words = label_words(results[constants.COL_LABEL], match_label)
    return results.assign(**{constants.COL_CATEGORY: results[constants.COL_CATEGORY].where(~own, words)})


def _accuracy_f1(cosine: np.ndarray, truth: np.ndarray, threshold: float) -> tuple[float, float]:
    from sklearn.metrics import accuracy_score, f1_score

    predicted = above(cosine, threshold).astype(int)
    return float(accuracy_score(truth, predicted)), float(f1_score(truth, predicted, zero_division=0.0))


def _labels_text(labels: list[str]) -> str:
    shown = ", ".join(repr(v) if " " in v or not v else v for v in labels[:6])
    return shown + (f" and {len(labels) - 6} more" if len(labels) > 6 else "")


def _no_classifier_reason(data: pd.DataFrame, value: str | None) -> str:
    """Why the labelled pairs allow no classifier ("" when both classes occur); pairs counted once, not per model."""
    first = data[data[constants.COL_MODEL] == data[constants.COL_MODEL].iloc[0]] if not data.empty else data
    n_match, n_no = int((first["_match"] == 1).sum()), int((first["_match"] == 0).sum())
    if n_match and n_no:
        return ""
    present = _labels_text(list(dict.fromkeys(first["_label"])))
    if value is not None and not n_match:
        side = f"no labelled pair has the label {value!r} (labels here: {present})"
    elif value is not None:
        side = f"all {n_match} labelled pairs have the label {value!r}"
    elif n_match:
        side = f"all {n_match} labelled pairs read as a match (labels here: {present})"
    else:
        side = f"all {n_no} labelled pairs read as no match (labels here: {present})"
    return (
        f"{side}; a classifier needs both matching and non-matching pairs, so no ROC, AUC or threshold can be fitted. "
        "If another value means 'same meaning', name it (“Which label means ‘same meaning’?” on the page, --match-label VALUE on "
        "the command line)."
    )


def label_report(results: pd.DataFrame, threshold: float, match_label: object = None) -> dict[str, pd.DataFrame]:
    """Everything a label column allows, per model.

    Args:
        results: tidy runner results with a ``label`` column (text as read).
        threshold: the threshold the accuracy, F1 and share above are also given at.
        match_label: the label value that means "same meaning" (see :func:`match_labels`); None for the default words.

    Returns:
        ``kind``: one row: ``kind`` (the label kind), ``match_label`` (the value
        read as a match, or ``default``), ``match`` and ``no_match`` (the label
        values on each side, comma-separated), ``no_classifier`` (why no
        classifier can be fitted, "" when one is);
        ``by_label``: model, label, match (1/0/NaN), n, mean, sd, median,
        share_above (cosine > threshold) per model and label;
        ``classifier`` (binary labels only): model, n_match, n_no_match, auc,
        best_threshold (Youden J), best_tpr, best_fpr, best_accuracy, best_f1,
        threshold, accuracy, f1 (an ``auc`` below 0.5: the model ranks the
        non-matching pairs above the matching ones, see :func:`label_findings`);
        ``roc`` (binary only): model, threshold, fpr, tpr.

    Raises:
        ValueError: no label column, a threshold outside [-1, 1], or an empty ``match_label``.
    """
    if constants.COL_LABEL not in results.columns:
        raise ValueError("these results have no label column")
    if not -1.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be between -1 and 1, got {threshold}")
    value = _match_value(match_label)
    kind = results_label_kind(results, value)
    data = results.assign(
        _label=results[constants.COL_LABEL].astype("string").str.strip().fillna(""),
        _match=match_labels(results[constants.COL_LABEL], value),
    )
    data = data[data["_label"] != ""]
    sides = {
        side: ", ".join(dict.fromkeys(data.loc[data["_match"] == flag, "_label"])) for side, flag in (("match", 1.0), ("no_match", 0.0))
    }
    reason = _no_classifier_reason(data, value) if kind == KIND_BINARY else ""
    rows = []
    for (model, label), group in data.groupby([constants.COL_MODEL, "_label"], sort=False):
        cos = group[constants.COL_COSINE].to_numpy(float)
        rows.append(
            {
                constants.COL_MODEL: model,
                constants.COL_LABEL: label,
                "match": group["_match"].iloc[0],
                "n": len(cos),
                "mean": float(cos.mean()),
                "sd": float(cos.std(ddof=1)) if len(cos) > 1 else np.nan,
                "median": float(np.median(cos)),
                "share_above": failure_rate(cos, threshold),
            }
        )
    out = {
        "kind": pd.DataFrame(
            {
                "kind": [kind],
                "match_label": [value if value is not None else "default"],
                **{k: [v] for k, v in sides.items()},
                "no_classifier": [reason],
            }
        ),
        "by_label": pd.DataFrame(rows, columns=BY_LABEL_COLUMNS),
    }
    classifier, curves = [], []
    if kind == KIND_BINARY and not reason:
        for model, group in data.groupby(constants.COL_MODEL, sort=False):
            cos, truth = group[constants.COL_COSINE].to_numpy(float), group["_match"].to_numpy(int)
            pos, neg = cos[truth == 1], cos[truth == 0]
            if not len(pos) or not len(neg):
                continue
            best = calibration.youden_threshold(pos, neg)
            best_acc, best_f1 = _accuracy_f1(cos, truth, best.threshold)
            acc, f1 = _accuracy_f1(cos, truth, threshold)
            classifier.append(
                {
                    constants.COL_MODEL: model,
                    "n_match": len(pos),
                    "n_no_match": len(neg),
                    "auc": calibration.auc(pos, neg),
                    "best_threshold": best.threshold,
                    "best_tpr": best.tpr,
                    "best_fpr": best.fpr,
                    "best_accuracy": best_acc,
                    "best_f1": best_f1,
                    constants.COL_THRESHOLD: float(threshold),
                    "accuracy": acc,
                    "f1": f1,
                }
            )
            curves.append(calibration.roc_curve(pos, neg).assign(**{constants.COL_MODEL: model}))
    out["classifier"] = pd.DataFrame(classifier, columns=CLASSIFIER_COLUMNS)
    out["roc"] = (
        pd.concat(curves, ignore_index=True)[[constants.COL_MODEL, "threshold", "fpr", "tpr"]]
        if curves
        else pd.DataFrame(columns=[constants.COL_MODEL, "threshold", "fpr", "tpr"])
    )
    return out


class Finding(NamedTuple):
    """One finding of the label report in words; ``warning`` when it contradicts what the user would expect."""

    text: str
    warning: bool


def label_findings(report: dict[str, pd.DataFrame], name: Callable[[str], str] = str) -> list[Finding]:
    """The label report's findings in plain sentences: per model its AUC read in words (below 0.5: the
    model ranks the non-matching pairs above the matching ones), or why no classifier can be fitted.

    Args:
        report: :func:`label_report`'s result.
        name: model id -> the name to print (e.g. a short name).
    """
    head = report["kind"].iloc[0]
    if head["kind"] != KIND_BINARY:
        return []
    if head["no_classifier"]:
        return [Finding(f"No classifier: {head['no_classifier']}", True)]
    match, no_match = head["match"], head["no_match"]
    out = []
    for row in report["classifier"].to_dict("records"):
        who, auc = name(row[constants.COL_MODEL]), float(row["auc"])
        if auc < 0.5:
            out.append(
                Finding(
                    f"{who}: AUC {auc:.3f} is below 0.5: the model ranks the non-matching pairs (label {no_match}) above the matching "
                    f"ones (label {match}); a higher cosine here means less likely the same meaning. If {match} is not the label for "
                    "'same meaning', choose the one that is (“Which label means ‘same meaning’?” on the page, --match-label on the "
                    "command line).",
                    True,
                )
            )
        elif auc == 0.5:
            out.append(
                Finding(
                    f"{who}: AUC 0.500: cosine does not separate matching (label {match}) from non-matching pairs (label {no_match}) at "
                    "all.",
                    True,
                )
            )
        else:
            out.append(
                Finding(
                    f"{who}: AUC {auc:.3f}: a matching pair (label {match}) outscores a non-matching one (label {no_match}) "
                    f"{auc:.0%} of the time; the best threshold {row['best_threshold']:.3f} gives F1 {row['best_f1']:.3f} "
                    f"(F1 {row['f1']:.3f} at {row[constants.COL_THRESHOLD]:.2f}).",
                    False,
                )
            )
    return out


def label_warnings(report: dict[str, pd.DataFrame], choose: str = "`--match-label`") -> list[str]:
    """What a page warns about its labels beyond its lead (:func:`label_lead`) and the classifier's table, which say the
    AUC once: why no classifier can be fitted, or, when a model ranks the groups backwards, that the match side may be
    the wrong one and where to name it. No AUC here: it is in the table.

    Args:
        report: :func:`label_report`'s result.
        choose: where the reader names the label that means "same meaning" (the CLI's flag, a page's selector).
    """
    head = report["kind"].iloc[0]
    if head["kind"] != KIND_BINARY:
        return []
    if head["no_classifier"]:
        return [f"No classifier: {head['no_classifier']}"]
    classifier = report["classifier"]
    if classifier.empty or not (classifier["auc"].astype(float) < 0.5).any():
        return []
    return [
        f"A model that ranks the groups backwards may be reading the labels the wrong way round: if “{head['match']}” is not the "
        f"label for 'same meaning', name the right one ({choose})."
    ]


def label_summary(report: dict[str, pd.DataFrame], name: Callable[[str], str] = str) -> dict[str, object]:
    """The label report as one JSON-ready document (``summary.json``'s ``labels``): kind, which labels
    match, the findings in words, cosine by label and the classifier per model (NaN as null)."""
    head = report["kind"].iloc[0]

    def records(frame: pd.DataFrame) -> list[dict[str, object]]:
        return [
            {str(k): (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()} for r in frame.to_dict("records")
        ]

    return {
        "kind": head["kind"],
        "match_label": head["match_label"],
        "match": head["match"],
        "no_match": head["no_match"],
        "no_classifier": head["no_classifier"] or None,
        "findings": [f.text for f in label_findings(report, name)],
        "by_label": records(report["by_label"]),
        "classifier": records(report["classifier"]),
    }


class ReportLabels(NamedTuple):
    """What an HTML report says about a label column (``core.history.report.report_html``'s label inputs)."""

    sentences: list[str]
    match: pd.Series | None
    settings: dict[str, str]
    table: pd.DataFrame | None = None


AUC_READINGS = ((0.5, "backwards: no-match pairs score higher"), (0.6, "barely tells them apart"), (float("inf"), "the right way"))


def _auc_reading(auc: float) -> str:
    return next(said for bound, said in AUC_READINGS if auc < bound) if auc == auc else "—"


def label_table(report: dict[str, pd.DataFrame], name: Callable[[str], str] = str) -> pd.DataFrame:
    """The classifier per model in a reader's words, the AUC said once here (a report's table).

    Returns:
        model, AUC, how to read it (backwards below 0.5, barely 0.5-0.6, the right way above), the best threshold
        (Youden J) with its F1, and the F1 at the report's threshold; empty without a classifier.
    """
    classifier = report["classifier"]
    at = float(classifier[constants.COL_THRESHOLD].iloc[0]) if not classifier.empty else float("nan")
    return pd.DataFrame(
        {
            "model": [name(m) for m in classifier[constants.COL_MODEL]],
            "AUC": classifier["auc"].astype(float).round(3),
            "reading": classifier["auc"].astype(float).map(_auc_reading),
            "best threshold": classifier["best_threshold"].astype(float).round(3),
            "F1 at the best threshold": classifier["best_f1"].astype(float).round(3),
            f"F1 at {at:.2f}": classifier["f1"].astype(float).round(3),
        }
    )


def label_lead(report: dict[str, pd.DataFrame], name: Callable[[str], str] = str) -> list[str]:
    """One sentence before :func:`label_table`: what the AUC measures on these labels, and the models that read them
    backwards or barely (the numbers stay in the table); the reason when no classifier can be fitted."""
    head = report["kind"].iloc[0]
    if head["kind"] != KIND_BINARY:
        return []
    if head["no_classifier"]:
        return [f"No classifier: {head['no_classifier']}"]
    classifier = report["classifier"]
    match, no_match = (f"{w} ({v})" if v else w for w, v in (("match", head["match"]), ("no match", head["no_match"])))
    auc = classifier["auc"].astype(float)
    sentence = (
        f"The AUC below is how often a “{match}” pair outscores a “{no_match}” pair ({int(classifier['n_match'].iloc[0])} and "
        f"{int(classifier['n_no_match'].iloc[0])} pairs; 0.5 is a coin flip, 1.0 separates them perfectly)"
    )
    bands = (
        (classifier[auc < 0.5], ("ranks them backwards", "rank them backwards")),
        (classifier[(auc >= 0.5) & (auc < 0.6)], ("barely tells them apart", "barely tell them apart")),
    )
    for rows, (one, many) in bands:
        if len(rows):
            names = [name(m) for m in rows[constants.COL_MODEL]]
            if len(rows) == len(classifier) and len(rows) > 1:
                sentence += f"; every model {one}"
            else:
                sentence += f"; {_and_names(names)} {one if len(names) == 1 else many}"
    return [sentence + "."]


def _and_names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def report_labels(results: pd.DataFrame, threshold: float, match_label: object = None, name: Callable[[str], str] = str) -> ReportLabels:
    """A labelled run's finding for a report: one sentence (:func:`label_lead`) and the AUC once, in a table
    (:func:`label_table`); each row's match flag and the label settings; empty parts when the run has no label column.

    Args:
        results: tidy runner results, with or without a ``label`` column.
        threshold: the report's threshold.
        match_label: the label value that means "same meaning" (None: the default words).
        name: model id -> the name to print.

    Returns:
        ``sentences`` (the one lead sentence), ``match`` (1/0/NaN per row, aligned with ``results``; None unless the
        labels are binary), ``settings`` (label kind, which value is the match, the values on each side) and ``table``
        (the classifier per model; None without one).

    Raises:
        ValueError: a threshold outside [-1, 1] or an empty ``match_label``.
    """
    if constants.COL_LABEL not in results.columns or results.empty:
        return ReportLabels([], None, {})
    report = label_report(results, threshold, match_label)
    head = report["kind"].iloc[0]
    settings = {
        "label kind": str(head["kind"]),
        "match label": "automatic (1, true, yes, paraphrase, entailment, …)"
        if head["match_label"] == "default"
        else str(head["match_label"]),
        "labels read as match": str(head.get("match", "")),
        "labels read as no match": str(head.get("no_match", "")),
    }
    if head["kind"] != KIND_BINARY:
        return ReportLabels([], None, settings)
    table = label_table(report, name) if not report["classifier"].empty else None
    return ReportLabels(label_lead(report, name), match_labels(results[constants.COL_LABEL], _match_value(match_label)), settings, table)
