"""An audit said once: the lead sentence, the table of every model, each pair once with every model's cosine (hand-made audits)."""

from __future__ import annotations

import pandas as pd
import pytest

from core.audit.findings import TABLE_COLUMNS, audit_findings, history_settings, pair_cards, risk_words, side_by_side_words
from core.audit.risk import risk_summary
from core.audit.run import PAIR_COLUMNS, AuditResult
from core.models.encode import EncodeReport

A, B = "sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-mpnet-base-v2"
PASSAGES = ["Take 5 mg.", "Take 500 mg.", "He has it.", "He does not have it.", "Paris.", "Rome."]


def _row(model, i, j, cosine, kind="twin", mode="numerical"):
    return (model, str(i + 1), str(j + 1), PASSAGES[i], PASSAGES[j], cosine, kind, mode, mode, "", "", i, j)


def _audit(rows, models=(A, B)) -> AuditResult:
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS).sort_values("cosine", ascending=False).reset_index(drop=True)
    return AuditResult(PASSAGES, [str(i + 1) for i in range(len(PASSAGES))], [], 0.5, pairs, reports={m: EncodeReport(m) for m in models})


@pytest.fixture
def audit():
    # Pair (0, 1) numerical for both models, (2, 3) negation for A only above 0.8 (B keeps it at 0.7, below), (4, 5) other.
    return _audit(
        [
            _row(A, 0, 1, 0.95),
            _row(B, 0, 1, 0.90),
            _row(A, 2, 3, 0.85, mode="negation"),
            _row(B, 2, 3, 0.70, mode="negation"),
            _row(A, 4, 5, 0.82, kind="other", mode=""),
        ]
    )


def test_each_pair_once_with_every_models_cosine_grouped_by_mode(audit):
    cards = pair_cards(audit, 0.8, kind="twin")
    # Two twin pairs, not four rows: B's 0.70 stands beside A's 0.85 though it is below the threshold.
    assert len(cards) == 2
    assert list(cards["mode"]) == ["negation", "numerical"]  # the modes' order, not the cosine's
    negation = cards.iloc[0]
    assert negation["cosines"] == {A: pytest.approx(0.85), B: pytest.approx(0.70)}
    assert negation["above"] == [A]
    assert cards.iloc[1]["above"] == [A, B] and cards.iloc[1]["best_cosine"] == pytest.approx(0.95)
    assert len(pair_cards(audit, 0.8)) == 3 and pair_cards(audit, 0.99).empty


def test_lead_sentence_and_table(audit):
    summary = risk_summary(audit, 0.8, n_resamples=200)
    said = audit_findings(audit, summary, 0.8)
    # A: passages 0-3 have a twin (4 of 6); B: passages 0 and 1 (2 of 6).
    assert said.lead.startswith("66.7% of the 6 passages have a confusable twin above 0.80 for MiniLM-L6 (95% CI ")
    assert "by negation and numerical alike" in said.lead and said.lead.endswith("; the other model: 33.3%.")
    assert list(said.table.columns) == [c for c in TABLE_COLUMNS if c not in ("query_twin_top5", "twin_first")]
    assert said.table["twin_pairs"].tolist() == [2, 1]
    assert said.table["most_twins_mode"].tolist() == ["Negation and Numerical (1 pair each)", "Numerical (1 pair)"]
    words = said.words_table()
    assert words.columns.tolist()[:3] == ["model", "twin pairs", "share of passages with a twin"]
    assert words.iloc[0]["share of passages with a twin"] == "66.7% (4)"
    # The worst pair once, with both models' cosines.
    assert said.worst[0].startswith("Worst pair (numerical; cosine MiniLM-L6 0.950, mpnet-base 0.900)")
    assert len(said.worst) == 2
    kept = history_settings(said, 0.8)
    assert kept["findings"][0] == said.lead and kept["findings_table"][0]["model"] == "MiniLM-L6"


def test_no_twin_and_extra_sentences():
    audit = _audit([_row(A, 4, 5, 0.9, kind="other", mode="")], models=(A,))
    said = audit_findings(audit, risk_summary(audit, 0.8, n_resamples=50), 0.8, extra=("The judge could not load.",))
    assert said.lead == "No two of the 6 passages are confusable twins above 0.80 for MiniLM-L6."
    assert said.lines() == [said.lead, "The judge could not load."]
    with pytest.raises(ValueError, match="worst"):
        audit_findings(audit, risk_summary(audit, 0.8, n_resamples=50), 0.8, worst=-1)


def test_risk_words_fit_a_screen_in_words_and_percentages(audit):
    """Five columns for the finding (the summary's fifteen ran off a 1280 px screen), modes by label, shares as percentages."""
    summary = risk_summary(audit, 0.8, n_resamples=50)
    shown = risk_words(summary)
    assert shown.columns.tolist() == ["model", "failure mode", "twin pairs", "share of passages with a twin", "95% CI"]
    assert shown.iloc[0]["failure mode"] == "all modes" and shown.iloc[0]["share of passages with a twin"] == "66.7% (4)"
    assert shown.iloc[0]["95% CI"].endswith("%")
    assert "Entity/role swap" in set(risk_words(summary.assign(mode="entity_swap"))["failure mode"])
    with_queries = risk_words(summary.assign(query_twin_top5=0.5, twin_first=float("nan")))
    assert with_queries.columns.tolist()[5:] == ["queries whose top 5 holds a passage and its twin"]
    assert with_queries.iloc[0, 5] == "50.0%"


def test_side_by_side_words_one_column_per_number(audit):
    """Exact vs the store: each number's two values in one column, no raw fraction; a number neither side has is left out."""
    summary = risk_summary(audit, 0.8, n_resamples=50)
    side = summary[["model", "mode"]].assign(
        twin_pairs_exact=2,
        twin_pairs_store=1,
        twin_share_exact=0.5,
        twin_share_store=float("nan"),
        twin_first_exact=float("nan"),
        twin_first_store=float("nan"),
    )
    words = side_by_side_words(side)
    assert words.columns.tolist() == ["model", "failure mode", "twin pairs: exact → store", "share of passages with a twin: exact → store"]
    assert words.iloc[0, 2] == "2 → 1" and words.iloc[0, 3] == "50.0% → —"
