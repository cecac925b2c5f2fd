"""The Retrieval page on the user's own data: a triples file (columns mapped by pickers) and a BEIR folder as a zip.

The win rate and recall@1 the page shows are recomputed from raw MiniLM
embeddings, as a user of sentence-transformers would compute them.
"""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pandas as pd
import pytest
from apptest_support import open_page

from core import constants
from core.history import store
from core.history.sources import file_sha256
from core.paths import PROJECT_ROOT
from ui.widgets import MARK

PAGE = "views/retrieval.py"
SAMPLES = PROJECT_ROOT / "data" / "samples"


def _frame(app, columns: set[str]) -> pd.DataFrame:
    frames = [d.value for d in app.dataframe if columns <= set(d.value.columns)]
    assert frames, f"no table with columns {columns}"
    return frames[0]


@pytest.fixture(scope="module")
def direct(minilm):
    frame = pd.read_csv(SAMPLES / "nli-triples.csv")
    texts = list(dict.fromkeys([*frame["premise"], *frame["entailed"], *frame["contradicted"]]))
    vectors = minilm.backend.embed(texts)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    v = {t: vectors[i] for i, t in enumerate(texts)}
    wins = [
        float(v[a] @ v[n]) > float(v[a] @ v[p]) for a, p, n in zip(frame["premise"], frame["entailed"], frame["contradicted"], strict=True)
    ]
    passages = [*frame["entailed"], *frame["contradicted"]]
    premises = list(dict.fromkeys(frame["premise"]))
    positives = frame.groupby("premise")["entailed"].agg(set)
    top = [passages[int(np.argmax([v[q] @ v[p] for p in passages]))] for q in premises]
    return {
        "win_rate": float(np.mean(wins)),
        "recall_at_1": float(np.mean([t in positives[q] for q, t in zip(premises, top, strict=True)])),
    }


def _history(tmp_path, monkeypatch):
    path = tmp_path / "history.duckdb"
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(path))
    return path


def test_triples_upload_maps_columns_and_equals_a_direct_computation(direct, tmp_path, monkeypatch):
    stored = _history(tmp_path, monkeypatch)
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("triples").run()
    data = (SAMPLES / "nli-triples.csv").read_bytes()
    app.file_uploader[0].set_value(("nli.csv", data, "text/csv")).run()
    assert not app.exception
    pickers = {s.label: s.value for s in app.selectbox if "column" in s.label}
    assert pickers == {"Anchor (query) column": "premise", "Positive column": "entailed"}
    assert [m.value for m in app.multiselect if m.label == "Negative column(s)"] == [["contradicted"]]
    app.button(key="rt_run").click().run()
    assert not app.exception
    wins = _frame(app, {"win_rate", "ties"})
    ranking = _frame(app, {"recall_at_1", "ndcg_at_10"})
    assert wins["win_rate"].iloc[0] == pytest.approx(direct["win_rate"], abs=1e-4)
    assert ranking["recall_at_1"].iloc[0] == pytest.approx(direct["recall_at_1"], abs=1e-4)
    assert any(b.label.startswith("CSV") or "CSV" in b.label for b in app.get("download_button"))
    # Stored in the history as the CLI stores it: the file by its bytes' SHA-256, the columns, the win rate.
    run = store.load_run(1, stored)
    assert run.command == "retrieval" and run.origin == "app" and run.settings["mode"] == "triples"
    assert run.settings["sources"] == [{"file": "nli.csv", "sha256": file_sha256(SAMPLES / "nli-triples.csv")}]
    assert run.settings["columns"] == {"anchor": "premise", "positive": "entailed", "negative": ["contradicted"]}
    assert run.settings["summary"][0]["win_rate"] == pytest.approx(direct["win_rate"], abs=1e-4)
    # Swapping the positive and the negative columns by the pickers turns the win rate round.
    app.selectbox(key=[s.key for s in app.selectbox if s.label == "Positive column"][0]).set_value("contradicted").run()
    app.multiselect(key=[m.key for m in app.multiselect if m.label == "Negative column(s)"][0]).set_value(["entailed"]).run()
    app.button(key="rt_run").click().run()
    assert _frame(app, {"win_rate", "ties"})["win_rate"].iloc[0] == pytest.approx(1 - direct["win_rate"], abs=1e-4)


def _zip(folder, prefix: str = "nli-beir/") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for path in folder.rglob("*"):
            if path.is_file():
                zf.write(path, prefix + str(path.relative_to(folder)))
    return out.getvalue()


def test_beir_zip_gives_the_same_recall_at_1(direct, tmp_path, monkeypatch):
    stored = _history(tmp_path, monkeypatch)
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("beir").run()
    app.file_uploader[0].set_value(("nli-beir.zip", b"not a zip", "application/zip")).run()
    assert any("not a zip file" in e.value for e in app.error)
    app.file_uploader[0].set_value(("nli-beir.zip", _zip(SAMPLES / "nli-beir"), "application/zip")).run()
    assert not app.exception and not app.error
    app.button(key="rt_run").click().run()
    ranking = _frame(app, {"recall_at_1", "mrr_at_10", "ndcg_at_10"})
    assert ranking["recall_at_1"].iloc[0] == pytest.approx(direct["recall_at_1"], abs=1e-4)
    # Stored with each unpacked file's SHA-256 (as the CLI stores the folder) and the split.
    run = store.load_run(1, stored)
    assert run.settings["mode"] == "beir" and run.settings["split"] == "test"
    folder = SAMPLES / "nli-beir"
    assert [s["sha256"] for s in run.settings["sources"]] == [
        file_sha256(f) for f in (folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / "test.tsv")
    ]
    assert run.settings["summary"][0]["recall_at_1"] == pytest.approx(direct["recall_at_1"], abs=1e-4)
    # The History names the run by the zip the user uploaded, not by the files inside it nor the session's temp folder.
    listed = store.list_runs(stored).set_index("run_id").loc[1, "source"]
    assert listed.startswith("nli-beir.zip") and "corpus.jsonl" not in listed
    assert [s["file"] for s in run.settings["sources"]] == ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"]


def test_mitigations_apply_to_a_triples_file_and_a_beir_zip_with_a_finding_and_a_chart(tmp_path, monkeypatch, minilm):
    """The ticked mitigations run on both user inputs, which lead with a sentence and a chart."""
    _history(tmp_path, monkeypatch)
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("triples").run()
    app.file_uploader[0].set_value(("nli.csv", (SAMPLES / "nli-triples.csv").read_bytes(), "text/csv")).run()
    assert [c.label for c in app.checkbox if c.key == "rt_m_rrf"], "the mitigations are offered for a triples file"
    app.button(key="rt_run").click().run()
    assert any("ranks a negative above its positive" in m.value for m in app.markdown)
    app.checkbox(key="rt_m_rrf").check().run()  # a ticked mitigation re-runs the same inputs
    assert not app.exception
    table = _frame(app, {"mitigation", "ties", "fixed", "broken", "recall_gained", "recall_lost"})
    assert len(table) == 2 and not table.isna().all().any()
    sentence = next(m.value for m in app.markdown if "ranks a negative above its positive" in m.value)
    assert "fixed" in sentence and "broken" in sentence
    assert app.get("plotly_chart"), "a chart of the triples result"
    _captions_name_columns_as_shown(app)

    app.radio(key="rt_source").set_value("beir").run()
    app.file_uploader[0].set_value(("nli-beir.zip", _zip(SAMPLES / "nli-beir"), "application/zip")).run()
    app.button(key="rt_run").click().run()
    assert not app.exception
    table = _frame(app, {"mitigation", "recall_at_1", "recall_gained", "recall_lost", "tied_queries"})
    assert table["mitigation"].nunique() == 2 and not table.isna().all().any()
    assert any("By your judgements" in m.value and "gained" in m.value for m in app.markdown)
    assert app.get("plotly_chart"), "a chart of the BEIR result"
    _captions_name_columns_as_shown(app)


def _captions_name_columns_as_shown(app) -> None:
    """A caption explains a column by the header a reader sees ("recall gained"), never by its code (``recall_gained``)."""
    coded = [c.value for c in app.caption if re.search(r"\b[a-z0-9]+_[a-z0-9_]+\b", re.sub(r"\w*trec_eval", "", c.value))]
    assert not coded, coded


def _shown_in_full(app, header: str) -> str:
    """The text a row detail shows under ``header`` (its Markdown's marks and escapes taken off), or "" when none does."""
    for m in app.markdown:
        if m.value.startswith(f"**{header}**  \n"):
            body = m.value.split("  \n", 1)[1]
            return re.sub(r"\\(.)", r"\1", body.replace(f":{MARK}[**", "").replace("**]", ""))
    return ""


def test_the_worst_triple_and_the_worst_query_are_shown_in_full_with_the_changed_words_marked(tmp_path, monkeypatch):
    """The triples and BEIR per-row tables cut the negative (the top passage) at the table's edge; the worst row
    is now shown under them with both texts in full and the words that differ marked, as Failure modes does."""
    _history(tmp_path, monkeypatch)
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("triples").run()
    app.file_uploader[0].set_value(("nli.csv", (SAMPLES / "nli-triples.csv").read_bytes(), "text/csv")).run()
    app.button(key="rt_run").click().run()
    assert not app.exception
    scores = _frame(app, {"positive", "negative", "margin", "changed words"})
    worst = scores.iloc[0]
    assert worst["margin"] == scores["margin"].max()
    assert _shown_in_full(app, "positive") == worst["positive"]
    assert _shown_in_full(app, "negative") == worst["negative"]
    assert any(m.value.startswith("**negative**") and f":{MARK}[**" in m.value for m in app.markdown), "no word of the negative marked"

    app.radio(key="rt_source").set_value("beir").run()
    app.file_uploader[0].set_value(("nli-beir.zip", _zip(SAMPLES / "nli-beir"), "application/zip")).run()
    app.button(key="rt_run").click().run()
    assert not app.exception
    queries = _frame(app, {"query", "top1", "relevant", "ndcg_at_10", "changed words"})
    worst = queries.iloc[0]
    assert worst["ndcg_at_10"] == queries["ndcg_at_10"].min()
    # The wrong top passage beside the relevant one, the words that separate them marked (the query's changes said nothing).
    assert worst["top1"] != worst["relevant"] and worst["relevant_rank"] > 1
    assert _shown_in_full(app, "top passage") == worst["top1"] and len(worst["top1"]) > 0
    assert _shown_in_full(app, "relevant passage") == worst["relevant"]
    assert any(m.value.startswith("**relevant passage**") and f":{MARK}[**" in m.value for m in app.markdown)


def test_the_guard_warns_when_it_moves_a_judged_relevant_passage_down(tmp_path, monkeypatch):
    """A question "Is aspirin recommended...?" answered by "Aspirin is not recommended...": the guard penalises the right
    answer, and the page says so in words."""
    import json

    _history(tmp_path, monkeypatch)
    root = tmp_path / "aspirin"
    (root / "qrels").mkdir(parents=True)
    corpus = {
        "d1": "Aspirin is not recommended for children with a viral infection.",
        "d2": "Ibuprofen is recommended for children with a fever.",
        "d5": "Aspirin is recommended for children with a viral infection.",
        "d6": "Ibuprofen is recommended for children with a viral infection.",
    }
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": v}) + "\n" for k, v in corpus.items()))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "Is aspirin recommended for children with a viral infection?"}))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("beir").run()
    app.file_uploader[0].set_value(("aspirin.zip", _zip(root, "aspirin/"), "application/zip")).run()
    app.checkbox(key="rt_m_guard").check().run()
    app.button(key="rt_run").click().run()
    assert not app.exception
    warned = [w.value.replace("\\", "") for w in app.warning if "judged relevant down" in w.value]
    assert len(warned) == 1, [w.value for w in app.warning]
    assert warned[0].startswith("Contradiction guard moved a passage you judged relevant down for 1 of 1 query with MiniLM-L6")
    assert "polarity differs" in warned[0]
