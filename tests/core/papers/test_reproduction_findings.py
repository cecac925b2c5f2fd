"""Papers' finding in a sentence (core.papers.reproduce.reproduction_findings), against hand-made comparisons."""

from __future__ import annotations

import math

import pandas as pd

from core.papers.reproduce import KEYS, STATUS_COMPARED, STATUS_NOT_RUN, reproduction_findings

L6 = "sentence-transformers/all-MiniLM-L6-v2"


def _comparison(rows):
    """rows: (status, model, category, metric, published, recomputed); difference and differs at tolerance 0.02."""
    out = []
    for status, model, category, metric, pub, rec in rows:
        diff = rec - pub if not (math.isnan(pub) or math.isnan(rec)) else math.nan
        out.append(
            dict.fromkeys(KEYS, "")
            | {
                "status": status,
                "model": model,
                "category": category,
                "metric": metric,
                "published": pub,
                "recomputed": rec,
                "difference": diff,
                "differs": bool(abs(diff) > 0.02) if not math.isnan(diff) else False,
            }
        )
    return pd.DataFrame(out)


def test_counts_cells_within_tolerance_and_names_the_largest_gap():
    comp = _comparison(
        [
            (STATUS_COMPARED, L6, "negation", "mean_cosine", 0.90, 0.91),
            (STATUS_COMPARED, L6, "numerical", "mean_cosine", 0.80, 0.6532),
            (STATUS_COMPARED, L6, "hedging", "mean_cosine", 0.70, 0.705),
            (STATUS_NOT_RUN, "BERT", "negation", "mean_cosine", 0.5, math.nan),
        ]
    )
    assert reproduction_findings(comp, 0.02) == [
        "2 of 3 published cells reproduce within 0.020; the largest gap is -0.1468 (MiniLM-L6, numerical, mean cosine)."
    ]


def test_nothing_recomputed_says_nothing():
    comp = _comparison([(STATUS_NOT_RUN, "BERT", "negation", "mean_cosine", 0.5, math.nan)])
    assert reproduction_findings(comp, 0.02) == []
    assert reproduction_findings(comp.iloc[:0], 0.02) == []
