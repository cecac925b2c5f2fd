"""The shareable HTML report of a run (core.history.report) and ``cosine-probe report``."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from core import constants
from core.cli.main import main
from core.history import store
from core.history.report import report_html
from core.models.registry import model_color

L6 = "sentence-transformers/all-MiniLM-L6-v2"
LONG_A = "The patient who was admitted on Tuesday with a severe rash is allergic to penicillin and to every drug of that family <b>"


def _results() -> pd.DataFrame:
    rows = [
        (constants.CAT_NEGATION, LONG_A, "The patient is not allergic to penicillin", 0.95),
        (constants.CAT_NEGATION, "It rains", "It does not rain", 0.88),
        (constants.CAT_NUMERICAL, "Take 5 mg", "Take 500 mg", 0.60),
        (constants.CAT_POSITIVE, "A cat sat", "A feline sat", 0.90),
    ]
    return pd.DataFrame(
        [
            {
                constants.COL_MODEL: L6,
                constants.COL_SUITE: "s",
                constants.COL_CATEGORY: c,
                constants.COL_PAIR_ID: f"p{i}",
                constants.COL_TEXT_A: a,
                constants.COL_TEXT_B: b,
                constants.COL_COSINE: cos,
            }
            for i, (c, a, b, cos) in enumerate(rows)
        ]
    )


def test_report_has_findings_inlined_plotly_full_worst_cases_and_settings():
    text = report_html(_results(), 0.7, "Run 1: failure-modes", {"threshold": 0.7, "note": "<script>x</script>"})
    # findings in sentences: 2 negation pairs are too few for a headline (a mode needs 5), and a failure rate never "passes"
    findings = text[text.index("<h2>Findings</h2>") : text.index("<h2>Charts</h2>")]
    assert "fewer than 5 pairs per model: too few for a headline" in findings and "passes" not in findings
    # plotly.js inlined once (no CDN), three interactive charts in the model's colour
    assert text.count("Plotly.newPlot") == 3 and not re.search(r"<script[^>]*\bsrc=", text) and text.count("window.PlotlyConfig") == 1
    assert len(text) > 3_000_000 and model_color(L6) in text
    # the worst case is readable in full (escaped), first in its table
    worst = text[text.index("Worst cases") :]
    assert worst.index("The patient who was admitted") < worst.index("It rains")
    assert LONG_A.replace("<b>", "&lt;b&gt;") in worst and "<script>x</script>" not in text
    assert "Versions" in text and "plotly" in text


def test_report_rejects_empty_results_and_bad_thresholds():
    with pytest.raises(ValueError, match="scored pairs"):
        report_html(pd.DataFrame(), 0.7, "x")
    with pytest.raises(ValueError, match="between -1 and 1"):
        report_html(_results(), 2.0, "x")


def test_cli_report_writes_a_stored_run_and_says_one_line_for_an_unknown_id(tmp_path, monkeypatch, capsys):
    history = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(history))
    run_id = store.record_run(_results(), command="failure-modes", origin=constants.ORIGIN_CLI, settings={"threshold": 0.7})
    out = tmp_path / "report.html"
    assert main(["report", str(run_id), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert f"cosine-probe run {run_id}: failure-modes" in text and "Plotly.newPlot" in text
    capsys.readouterr()
    assert main(["report", "999", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
    assert main(["report", str(run_id), "--out", str(tmp_path / "missing" / "r.html")]) == 2


# ---------------------------------------------------------------- Labels, every non-matching pair, the models


def _labelled() -> pd.DataFrame:
    """A negation set labelled 1 = same meaning, where the model scores the contradictions highest (AUC below 0.5)."""
    rows = [
        ("custom", "He is here", "He is not here", 0.97, "0"),
        ("custom", "It is safe", "It is not safe", 0.95, "0"),
        ("custom", "A cat sat", "A feline sat", 0.80, "1"),
        ("custom", "She left", "She went away", 0.70, "1"),
    ]
    return pd.DataFrame(
        [
            {
                constants.COL_MODEL: L6,
                constants.COL_SUITE: "s",
                constants.COL_CATEGORY: c,
                constants.COL_PAIR_ID: f"p{i}",
                constants.COL_TEXT_A: a,
                constants.COL_TEXT_B: b,
                constants.COL_COSINE: cos,
                constants.COL_LABEL: label,
            }
            for i, (c, a, b, cos, label) in enumerate(rows)
        ]
    )


def test_report_of_a_labelled_run_leads_with_the_label_finding_and_draws_worst_cases_from_no_match_pairs():
    from core.models.registry import short_name
    from core.probes.labels import report_labels

    results = _labelled()
    said, match, label_settings, table = report_labels(results, 0.7, None, short_name)
    assert len(said) == 1 and "coin flip" in said[0] and "MiniLM-L6 ranks them backwards" in said[0]
    text = report_html(results, 0.7, "Your data", {}, label_sentences=said, match=match, label_settings=label_settings, label_table=table)
    findings_part = text[text.index("<h2>Findings</h2>") : text.index("<h2>Charts</h2>")]
    assert "coin flip" in findings_part
    # The AUC said once, in the table (0.000: both no-match pairs outscore both match pairs), never in a paragraph.
    assert "<th>AUC</th>" in findings_part and "AUC 0" not in findings_part and findings_part.count("AUC") == 2  # header + lead
    assert findings_part.count("<p class='finding'>") == 2  # the label sentence and the pairs scored
    assert "`" not in findings_part  # no command-line flag in backticks in a report's prose
    worst = text[text.index("Worst cases") : text.index("<h2>By category</h2>")]
    assert "He is not here" in worst and "It is not safe" in worst and "A feline sat" not in worst  # the no-match pairs only
    assert "of 2 pairs that should not match" in worst
    labels_part = text[text.index("<h2>Labels</h2>") : text.index("<h2>Settings</h2>")]
    assert "match label" in labels_part and "automatic" in labels_part
    models_part = text[text.index("<h2>Models</h2>") :]
    assert "MiniLM-L6" in models_part and L6 in models_part  # the models, even when the caller gives no model table


def test_report_worst_cases_take_every_pair_that_should_not_match_not_only_the_six_modes():
    results = pd.concat(
        [
            _results(),
            _results()
            .assign(
                **{
                    constants.COL_CATEGORY: constants.CAT_CONTRADICTION,
                    constants.COL_PAIR_ID: "c",
                    constants.COL_TEXT_A: "Trains run late",
                    constants.COL_TEXT_B: "Trains never run late",
                    constants.COL_COSINE: 0.99,
                }
            )
            .head(1),
        ],
        ignore_index=True,
    )
    worst = report_html(results, 0.7, "x")
    worst = worst[worst.index("Worst cases") : worst.index("<h2>By category</h2>")]
    assert worst.index("Trains never run late") < worst.index("The patient who was admitted")  # a contradiction pair, highest first
    assert "A feline sat" not in worst  # a paraphrase control is no worst case


def test_cli_report_of_a_labelled_run_says_the_label_finding(tmp_path, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    run_id = store.record_run(_labelled(), command="run", origin=constants.ORIGIN_CLI, settings={"threshold": 0.7, "match_label": "1"})
    out = tmp_path / "report.html"
    assert main(["report", str(run_id), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "coin flip" in text and "He is not here" in text[text.index("Worst cases") :]


def test_report_says_each_pair_once_with_every_models_cosine_and_no_headline_from_one_pair():
    mp = "sentence-transformers/all-mpnet-base-v2"
    two = pd.concat([_results(), _results().assign(**{constants.COL_MODEL: mp, constants.COL_COSINE: [0.5, 0.6, 0.75, 0.8]})])
    text = report_html(two, 0.7, "x")
    worst = text[text.index("Worst cases") : text.index("<h2>By category</h2>")]
    assert worst.count("It does not rain") == 1  # once, not once per model
    assert "<th>cosine MiniLM-L6</th>" in worst and "<th>cosine mpnet-base</th>" in worst
    row = worst[worst.index("Take 5 mg") - 400 : worst.index("Take 5 mg")]
    assert "0.6000" in row and "0.7500" in row and row.endswith("<td>mpnet-base</td><td>")  # both cosines; only mpnet above 0.70
    one = report_html(_results().head(1), 0.7, "Compare")
    findings = one[one.index("<h2>Findings</h2>") : one.index("<h2>Charts</h2>")]
    assert "One pair scored by 1 model (cosine MiniLM-L6 0.950)" in findings and "1 pairs" not in findings and "100%" not in findings


def test_report_of_an_audit_shows_its_findings_table_once():
    settings = {
        "findings": ["66.7% of the 6 passages have a confusable twin."],
        "findings_table": [{"model": "MiniLM-L6", "twin pairs": "2"}],
    }
    text = report_html(_results(), 0.7, "audit", settings)
    findings = text[text.index("<h2>Findings</h2>") : text.index("<h2>Charts</h2>")]
    assert "<th>twin pairs</th>" in findings and "66.7% of the 6 passages" in findings
    assert "findings_table" not in text[text.index("<h2>Settings</h2>") :]


def test_cli_report_of_a_page_run_grouped_by_its_0_1_labels_names_the_groups_in_words(tmp_path, monkeypatch):
    """A Your data run with no category column groups its pairs by their 0/1 labels; the page names the groups "no match
    (0)" / "match (1)", and the report of the stored run (which keeps the labels, not the page's polarity) says the same."""
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))
    rows = [("He is here", "He is not here", "0", 0.9), ("A cat sat", "A feline sat", "1", 0.8), ("It is safe", "It is unsafe", "0", 0.95)]
    results = pd.DataFrame(
        [
            {
                constants.COL_MODEL: L6,
                constants.COL_SUITE: "uploaded",
                constants.COL_CATEGORY: label,
                constants.COL_PAIR_ID: f"p{i}",
                constants.COL_TEXT_A: a,
                constants.COL_TEXT_B: b,
                constants.COL_COSINE: cos,
                constants.COL_LABEL: label,
            }
            for i, (a, b, label, cos) in enumerate(rows)
        ]
    )
    run_id = store.record_run(results, command="run", origin=constants.ORIGIN_APP, settings={"threshold": 0.7})
    out = tmp_path / "report.html"
    assert main(["report", str(run_id), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    by_category = text[text.index("<h2>By category</h2>") : text.index("<h2>Models</h2>")]
    assert "<td>no match (0)</td>" in by_category and "<td>match (1)</td>" in by_category
    assert not re.search(r"MiniLM-L6</td><td>[01]</td>", by_category)  # no group named by a bare 0 or 1
