"""The Retrieval page and Compare's third box, driven through the real app with MiniLM.

Every rate the page shows is recomputed here by hand from raw MiniLM
embeddings (no cache): a variant wins when cos(anchor, variant) >
cos(anchor, paraphrase); a NevIR group is right when q1 prefers the anchor
and q2 the variant; recall@1 asks whether the top passage of the whole suite
is a right one.  The suite runs on its first few groups so the page answers
in seconds.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest
from apptest_support import expected_cosine, open_page
from streamlit.testing.v1 import AppTest

from core import constants, lexicon
from core.models.registry import MINILM_L6
from core.probes.perturb import perturb
from core.probes.retrieval.suite_files import load_retrieval_suite

PAGE = "views/retrieval.py"
N_GROUPS = 5
NONE_LABEL = constants.MITIGATION_LABELS[constants.MITIGATION_NONE]
GUARD_LABEL = constants.MITIGATION_LABELS[constants.MITIGATION_GUARD]
PAIRS = (
    "text_a,text_b,category\n"
    "The patient is allergic to penicillin.,The patient has a penicillin allergy.,paraphrase\n"
    "The patient is allergic to penicillin.,The patient is not allergic to penicillin.,negation\n"
    "The patient is allergic to penicillin.,The patient was allergic to penicillin.,temporal\n"
    "Acme paid 5 million for the startup.,The startup was bought by Acme for 5 million.,paraphrase\n"
    "Acme paid 5 million for the startup.,Acme paid 50 million for the startup.,numerical\n"
    "Acme paid 5 million for the startup.,The startup paid 5 million for Acme.,entity_swap\n"
)
CORPUS = (
    "The patient is allergic to penicillin.\n"
    "Acme acquired the startup in 2019.\n"
    "All trains stop at the central station.\n"
    "The bridge is closed for repairs.\n"
)
QUERIES = "Is the patient allergic to penicillin?\nWhen did Acme acquire the startup?\n"


# ------------------------------------------------------------------ hand computations


@pytest.fixture(scope="module")
def cos(minilm):
    """cos(a, b) of raw MiniLM embeddings, for any texts."""

    def cosine(pairs: list[tuple[str, str]]) -> list[float]:
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        vectors = minilm.backend.embed(texts)
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        index = {t: i for i, t in enumerate(texts)}
        return [float(vectors[index[a]] @ vectors[index[b]]) for a, b in pairs]

    return cosine


@pytest.fixture(scope="module")
def suite():
    return load_retrieval_suite().sample(N_GROUPS)  # the page runs an evenly spread sample of N groups


@pytest.fixture(scope="module")
def hand_wins(suite, cos) -> pd.DataFrame:
    """One row per variant: mode, win (cos(anchor, variant) > cos(anchor, paraphrase))."""
    rows = []
    for _, group in suite.passages.groupby(constants.COL_GROUP_ID, sort=False):
        by_role = group.groupby(constants.COL_ROLE)[constants.COL_TEXT].first()
        anchor, paraphrase = by_role[constants.ROLE_ANCHOR], by_role[constants.ROLE_PARAPHRASE]
        variants = group[group[constants.COL_ROLE] == constants.ROLE_VARIANT]
        para = cos([(anchor, paraphrase)])[0]
        for mode, text in zip(variants[constants.COL_MODE], variants[constants.COL_TEXT], strict=True):
            rows.append((mode, cos([(anchor, text)])[0] > para))
    return pd.DataFrame(rows, columns=["mode", "win"])


def _nevir(suite) -> list[dict]:
    out = []
    p, q = suite.passages, suite.queries
    for gid, queries in q.groupby(constants.COL_GROUP_ID, sort=False):
        mode = queries[constants.COL_QUERY_MODE].iloc[0]
        mine = p[p[constants.COL_GROUP_ID] == gid]
        texts = dict(zip(queries[constants.COL_WHICH], queries[constants.COL_TEXT], strict=True))
        out.append(
            {
                "mode": mode,
                "q1": texts["q1"],
                "q2": texts["q2"],
                "anchor": mine[mine[constants.COL_ROLE] == constants.ROLE_ANCHOR][constants.COL_TEXT].iloc[0],
                "paraphrase": mine[mine[constants.COL_ROLE] == constants.ROLE_PARAPHRASE][constants.COL_TEXT].iloc[0],
                "variant": mine[mine[constants.COL_MODE] == mode][constants.COL_TEXT].iloc[0],
            }
        )
    return out


@pytest.fixture(scope="module")
def hand_paired(suite, cos) -> pd.DataFrame:
    rows = []
    for g in _nevir(suite):
        a1, v1, a2, v2 = cos([(g["q1"], g["anchor"]), (g["q1"], g["variant"]), (g["q2"], g["anchor"]), (g["q2"], g["variant"])])
        rows.append((g["mode"], a1 > v1 and v2 > a2))
    return pd.DataFrame(rows, columns=["mode", "correct"])


@pytest.fixture(scope="module")
def hand_recall1(suite, cos) -> tuple[float, float]:
    """(recall@1, top-1 contradiction) over both queries of every NevIR group, the whole suite as the corpus."""
    corpus = list(dict.fromkeys(suite.passages[constants.COL_TEXT]))
    right, contradiction = [], []
    for g in _nevir(suite):
        for query, good, bad in (
            (g["q1"], {g["anchor"], g["paraphrase"]}, {g["variant"]}),
            (g["q2"], {g["variant"]}, {g["anchor"], g["paraphrase"]}),
        ):
            top = corpus[int(np.argmax(cos([(query, c) for c in corpus])))]
            right.append(top in good)
            contradiction.append(top in bad)
    return float(np.mean(right)), float(np.mean(contradiction))


# ------------------------------------------------------------------ page helpers


def _frame(app: AppTest, columns: set[str], last: bool = False) -> pd.DataFrame:
    frames = [d.value for d in app.dataframe if columns <= set(d.value.columns)]
    assert frames, f"no table with columns {columns}"
    return frames[-1] if last else frames[0]


def _charts(app: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in app.get("plotly_chart")]


def _run(app: AppTest) -> None:
    app.button(key="rt_run").click().run()
    assert not app.exception


@pytest.fixture(scope="module")
def at() -> AppTest:
    app = open_page(PAGE)
    assert any("Press **Run retrieval probes**" in i.value for i in app.info)
    app.number_input(key="rt_groups").set_value(N_GROUPS).run()
    _run(app)
    return app


# ------------------------------------------------------------------ the suite


def test_win_rates_equal_hand_computation(at, hand_wins):
    table = _frame(at, {"failure mode", "wins", constants.COL_WIN_RATE})
    table = table[table[constants.COL_MITIGATION] == NONE_LABEL].set_index("failure mode")
    for mode, group in hand_wins.groupby("mode"):
        row = table.loc[lexicon.CATEGORY_LABELS[mode]]
        assert (row["n"], row["wins"]) == (len(group), int(group["win"].sum())), mode
        assert row[constants.COL_WIN_RATE] == pytest.approx(group["win"].mean(), abs=1e-12)
        assert row[constants.COL_CI_LOW] <= row[constants.COL_WIN_RATE] <= row[constants.COL_CI_HIGH]
    pooled = table.loc["all modes"]
    assert (pooled["n"], pooled["wins"]) == (len(hand_wins), int(hand_wins["win"].sum()))
    # Modes are shown by their labels, never by their codes.
    assert not set(table.index) & set(lexicon.FAILURE_MODES)
    # The page leads with the pooled rate in one sentence, "lower is better" said once, and a table of every model and fix.
    said = f"MiniLM\\-L6 ranks the contradiction above the restatement for {100 * hand_wins['win'].mean():.0f}% of the variants"
    lead = next((m.value for m in at.markdown if m.value.startswith(said)), None)
    assert lead is not None, [m.value[:80] for m in at.markdown]
    assert lead.count("lower is better") == 1
    headline = _frame(at, {constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_WIN_RATE, constants.COL_FIXED})
    assert headline[constants.COL_WIN_RATE].iloc[0] == pytest.approx(hand_wins["win"].mean(), abs=1e-12)


def test_win_rate_chart_keeps_long_mode_labels_whole_and_hatches_bars_from_few_groups(at):
    """Direction (beyond the papers) was cut at the chart's edge; a bar from fewer than 5 anchor groups is hatched."""
    import json

    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Adversarial win rate by failure mode" in c.proto.spec)
    ticks = [x for trace in spec["data"] for x in trace["x"]]
    assert "Direction<br>(beyond the papers)" in ticks
    table = _frame(at, {"failure mode", "wins", constants.COL_WIN_RATE, "n_groups"})
    plain = table[table[constants.COL_MITIGATION] == NONE_LABEL]
    few = set(plain.loc[plain["n_groups"] < 5, "failure mode"])
    assert few, "a sample of 5 groups has modes with fewer than 5 groups"
    bars = spec["data"][0]
    for x, shape in zip(bars["x"], bars["marker"]["pattern"]["shape"], strict=True):
        assert (shape == "/") == (x.replace("<br>", " ") in few), x
    assert any("hatched" in a["text"] for a in spec["layout"]["annotations"])


def test_paired_accuracy_equals_hand_computation_and_draws_the_random_line(at, hand_paired):
    table = _frame(at, {constants.COL_PAIRED_ACCURACY, "failure mode"})
    table = table[table[constants.COL_MITIGATION] == NONE_LABEL].set_index("failure mode")
    assert table.loc["all modes", "n"] == len(hand_paired)
    assert table.loc["all modes", constants.COL_PAIRED_ACCURACY] == pytest.approx(hand_paired["correct"].mean(), abs=1e-12)
    assert set(table[constants.COL_RANDOM]) == {0.25}
    paired_charts = [c for c in _charts(at) if "Paired accuracy" in c["layout"]["title"]["text"]]
    assert len(paired_charts) == 1
    lines = [s for s in paired_charts[0]["layout"]["shapes"] if s.get("line", {}).get("dash") == "dash"]
    assert [(s["y0"], s["y1"]) for s in lines] == [(0.25, 0.25)]
    assert any("random ranking (25%)" in a["text"] for a in paired_charts[0]["layout"]["annotations"])


def test_win_rate_chart_has_one_bar_per_mode_and_model(at, hand_wins):
    chart = next(c for c in _charts(at) if "Adversarial win rate" in c["layout"]["title"]["text"])
    assert len(chart["data"]) == 1  # MiniLM only
    assert list(chart["data"][0]["x"])[-1] == "all modes"
    assert len(chart["data"][0]["x"]) == hand_wins["mode"].nunique() + 1


def test_in_corpus_ranking_equals_hand_computation(at, hand_recall1):
    table = _frame(at, {constants.COL_RECALL_AT[1], constants.COL_MRR})
    row = table[table[constants.COL_MITIGATION] == NONE_LABEL].iloc[0]
    assert row[constants.COL_RECALL_AT[1]] == pytest.approx(hand_recall1[0], abs=1e-12)
    assert row[constants.COL_TOP1_CONTRADICTION] == pytest.approx(hand_recall1[1], abs=1e-12)


def test_per_group_table_worst_first_and_searchable(at, hand_wins, cos):
    table = _frame(at, {"anchor", "paraphrase", "variant", "rank_variant"}, last=True)
    assert len(table) == len(hand_wins)
    assert list(table["margin"]) == sorted(table["margin"], reverse=True)
    first = table.iloc[0]
    want_para, want_var = cos([(first["anchor"], first["paraphrase"]), (first["anchor"], first["variant"])])
    assert first["cosine_paraphrase"] == pytest.approx(want_para, abs=1e-5)
    assert first["cosine_variant"] == pytest.approx(want_var, abs=1e-5)
    assert first["margin"] == pytest.approx(want_var - want_para, abs=1e-5)
    assert bool(first["win"]) == (first["rank_variant"] < first["rank_paraphrase"])
    word = first["anchor"].split()[1]
    at.text_input(key="rt_group_search").input(word).run()
    found = _frame(at, {"anchor", "rank_variant"}, last=True)
    assert 0 < len(found) <= len(table)
    assert all(word.lower() in " ".join(r).lower() for r in found[["anchor", "paraphrase", "variant"]].itertuples(index=False))
    at.text_input(key="rt_group_search").input("").run()


def test_mitigation_toggle_changes_the_tables(at, hand_wins):
    assert any("Tick a mitigation above" in i.value for i in at.info)
    at.checkbox(key="rt_m_guard").check().run()
    assert not at.exception
    summary = _frame(at, {constants.COL_PARAPHRASES_LOST, constants.COL_MS_PER_QUERY})
    assert list(summary[constants.COL_MITIGATION]) == [NONE_LABEL, GUARD_LABEL]
    assert summary[constants.COL_CORRECT_LOST].ge(0).all() and summary[constants.COL_MS_PER_QUERY].ge(0).all()
    wins = _frame(at, {"failure mode", "wins", constants.COL_WIN_RATE})
    assert set(wins[constants.COL_MITIGATION]) == {NONE_LABEL, GUARD_LABEL}
    before_after = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith("Before and after"))
    assert {tuple(d["x"]) for d in before_after["data"]} == {(NONE_LABEL, GUARD_LABEL)}
    # Every mitigation on hand-written (held-out) variants first, then rule-made, ties apart.
    by_source = _frame(at, {"variants", constants.COL_TIES})
    assert list(by_source["variants"]) == [constants.SOURCE_HAND, constants.SOURCE_RULE] * 2
    assert list(by_source[constants.COL_MITIGATION]) == [NONE_LABEL, NONE_LABEL, GUARD_LABEL, GUARD_LABEL]
    assert by_source[constants.COL_N].sum() == 2 * len(hand_wins)

    at.checkbox(key="rt_m_weighted").check().run()
    at.slider(key="rt_m_weight").set_value(0.5).run()
    assert not at.exception
    labels = list(_frame(at, {constants.COL_PARAPHRASES_LOST})[constants.COL_MITIGATION])
    assert labels == [NONE_LABEL, "BM25 + dense (weighted, w = 0.5)", GUARD_LABEL]

    at.selectbox(key="rt_shown_mitigation").set_value(constants.MITIGATION_GUARD).run()
    groups = _frame(at, {"anchor", "rank_variant"}, last=True)
    assert {constants.COL_SCORE_PARAPHRASE, constants.COL_SCORE_VARIANT} <= set(groups.columns)

    at.checkbox(key="rt_m_guard").uncheck().run()
    at.checkbox(key="rt_m_weighted").uncheck().run()
    assert any("Tick a mitigation above" in i.value for i in at.info)


def test_ticked_mitigations_run_and_record_as_the_cli_does(at, suite, cli, tmp_path, monkeypatch):
    """The page's widgets give typed specs: guard + weighted 0.3 rank and record exactly as ``--mitigate guard,bm25-weighted:0.3``."""
    from core.history import store
    from core.probes.retrieval.suite_files import read_retrieval_file

    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))  # tests/conftest.py turns the history off
    at.checkbox(key="rt_m_guard").check().run()
    at.checkbox(key="rt_m_weighted").check().run()
    at.slider(key="rt_m_weight").set_value(0.3).run()
    assert not at.exception
    shown = list(_frame(at, {constants.COL_PARAPHRASES_LOST})[constants.COL_MITIGATION])
    assert shown == [NONE_LABEL, "BM25 + dense (weighted, w = 0.3)", GUARD_LABEL]
    wide = tmp_path / "retrieval.csv"
    rows = read_retrieval_file()
    rows[rows[constants.COL_GROUP_ID].isin(suite.group_ids)].to_csv(wide, index=False)  # the page's sample of N groups
    models = sorted(set(_frame(at, {constants.COL_PARAPHRASES_LOST})[constants.COL_MODEL]))
    assert models == ["MiniLM-L6"]  # the sidebar's default
    code, _, err = cli("retrieval", "--suite", str(wide), "--models", MINILM_L6, "--mitigate", "guard,bm25-weighted:0.3", "--quiet")
    assert code == 0, err
    runs = store.list_runs().sort_values("run_id")
    page, command_line = (store.load_run(int(r)) for r in runs["run_id"].iloc[-2:])
    assert (page.origin, command_line.origin) == ("app", "cli")

    def settings(run) -> list[dict]:
        return sorted(run.settings["mitigations"], key=lambda m: m["name"])

    assert settings(page) == settings(command_line)
    assert [m["name"] for m in settings(page)] == ["bm25-weighted:0.3", "guard"]
    # The same rows: every pair's dense cosine and each mitigation's score of it.
    scores = [constants.COL_COSINE, "score[guard]", "score[bm25-weighted:0.3]"]
    keys = [constants.COL_MODEL, constants.COL_PAIR_ID, constants.COL_TEXT_A, constants.COL_TEXT_B]
    rows = [run.results.sort_values(keys).reset_index(drop=True) for run in (page, command_line)]
    assert len(rows[0]) == len(rows[1]) > 0
    pd.testing.assert_frame_equal(rows[0][keys], rows[1][keys])
    np.testing.assert_allclose(rows[0][scores].to_numpy(float), rows[1][scores].to_numpy(float), atol=1e-6)
    at.checkbox(key="rt_m_guard").uncheck().run()
    at.checkbox(key="rt_m_weighted").uncheck().run()


def test_calibrated_filter_after_calibrating(at, suite, cos):
    from core.papers.suites import control_pairs
    from core.probes.calibration import calibrate, thresholds_by_model

    at.checkbox(key="rt_m_calibrated").check().run()
    assert any("press **Calibrate on the control pairs**" in i.value for i in at.info)
    at.button(key="rt_calibrate").click().run()
    assert not at.exception
    label = constants.MITIGATION_LABELS[constants.MITIGATION_CALIBRATED]
    assert list(_frame(at, {constants.COL_PARAPHRASES_LOST})[constants.COL_MITIGATION]) == [NONE_LABEL, label]

    # By hand: MiniLM's Youden threshold t on the controls; a passage at or below t is dropped, so a
    # variant wins when it stays (cos > t) and its paraphrase is lower or dropped.
    controls = control_pairs()
    scored = controls.assign(model="m", cosine=cos(list(zip(controls[constants.COL_TEXT_A], controls[constants.COL_TEXT_B], strict=True))))
    t = thresholds_by_model(calibrate(scored))["m"]
    wins = []
    for _, group in suite.passages.groupby(constants.COL_GROUP_ID, sort=False):
        anchor, paraphrase = (
            group[group[constants.COL_ROLE] == role][constants.COL_TEXT].iloc[0]
            for role in (constants.ROLE_ANCHOR, constants.ROLE_PARAPHRASE)
        )
        para = cos([(anchor, paraphrase)])[0]
        for text in group[group[constants.COL_ROLE] == constants.ROLE_VARIANT][constants.COL_TEXT]:
            var = cos([(anchor, text)])[0]
            wins.append(var > t and (var > para or para <= t))
    table = _frame(at, {"failure mode", "wins", constants.COL_WIN_RATE})
    pooled = table[(table[constants.COL_MITIGATION] == label) & (table["failure mode"] == "all modes")].iloc[0]
    assert (pooled["n"], pooled["wins"]) == (len(wins), sum(wins))
    at.checkbox(key="rt_m_calibrated").uncheck().run()


def test_unavailable_reranker_is_reported_quickly(at):
    start = time.perf_counter()
    at.text_input(key="rt_m_reranker").input("no-such-org/no-such-cross-encoder").run()
    assert time.perf_counter() - start < 30  # the hub probe is bounded (5 s); the rest is the page's rerun
    assert not at.exception
    assert any("Reranker unavailable" in w.value for w in at.warning)
    # Left out of the run: the results keep only the plain cosine.
    assert set(_frame(at, {"failure mode", "wins"})[constants.COL_MITIGATION]) == {NONE_LABEL}
    at.text_input(key="rt_m_reranker").input("").run()


def test_results_and_choices_survive_a_page_switch(at):
    at.switch_page("views/home.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.number_input(key="rt_groups").value == N_GROUPS
    assert _frame(at, {"failure mode", "wins"}) is not None
    assert any("Results for 1 model" in s.value for s in at.success)


# ------------------------------------------------------------------ uploads


@pytest.fixture(scope="module")
def uploads() -> AppTest:
    app = open_page(PAGE)
    app.radio(key="rt_source").set_value("pairs").run()
    assert any("Upload a pairs file to start" in i.value for i in app.info)
    return app


def test_pairs_file_bad_upload_keeps_the_results(uploads, cos):
    app = uploads
    app.file_uploader[0].set_value(("my pairs.csv", PAIRS.encode(), "text/csv")).run()
    assert not app.exception
    _run(app)
    assert any("my pairs\\.csv" in s.value for s in app.success)
    groups = _frame(app, {"anchor", "rank_variant"}, last=True)
    assert len(groups) == 4
    for row in groups.itertuples(index=False):
        para, var = cos([(row.anchor, row.paraphrase), (row.anchor, row.variant)])
        assert bool(row.win) == (var > para)
    assert any("no query pairs" in i.value for i in app.info)  # a pairs file has no q1/q2

    app.file_uploader[0].set_value(("book.csv", b"PK\x03\x04rest", "text/csv")).run()
    assert not app.exception
    assert any("Could not use book\\.csv" in e.value and "my pairs\\.csv is kept" in e.value for e in app.error)
    assert any("my pairs\\.csv" in s.value for s in app.success)
    assert len(_frame(app, {"anchor", "rank_variant"}, last=True)) == 4

    app.switch_page("views/compare.py").run()
    app.switch_page(PAGE).run()
    assert not app.exception
    assert app.radio(key="rt_source").value == "pairs"
    assert any("my pairs\\.csv: 2 anchor group" in c.value for c in app.caption)
    assert len(_frame(app, {"anchor", "rank_variant"}, last=True)) == 4


def test_corpus_mode_counts_variants_that_outrank_the_top_passage(uploads, cos, tmp_path, monkeypatch):
    monkeypatch.setenv(constants.HISTORY_ENV_VAR, str(tmp_path / "history.duckdb"))  # tests/conftest.py turns the history off
    app = uploads
    app.radio(key="rt_source").set_value("corpus").run()
    app.file_uploader[0].set_value(("corpus.txt", CORPUS.encode(), "text/plain")).run()
    app.file_uploader[1].set_value(("queries.txt", QUERIES.encode(), "text/plain")).run()
    _run(app)
    corpus, queries = CORPUS.splitlines(), QUERIES.splitlines()
    outranked = []
    for query in queries:
        top = corpus[int(np.argmax(cos([(query, c) for c in corpus])))]
        variants = [v.text for v in perturb(top).variants]
        scores = cos([(query, top), *((query, v) for v in variants)])
        outranked += [s > scores[0] for s in scores[1:]]
    rates = _frame(app, {"outranked", "rate"})
    pooled = rates[(rates[constants.COL_MITIGATION] == NONE_LABEL) & (rates["failure mode"] == "all modes")].iloc[0]
    assert (pooled["n"], pooled["outranked"]) == (len(outranked), sum(outranked))
    pairs = _frame(app, {"original", "score_variant"}, last=True)
    assert list(pairs["margin"]) == sorted(pairs["margin"], reverse=True)
    # The run is in the history like the CLI's: its pairs, no threshold (a ranking cuts nothing), the mode.
    from core.history import store

    stored = store.load_run(int(store.list_runs()["run_id"].iloc[0]))
    assert (stored.command, stored.origin, stored.threshold, stored.settings["mode"]) == ("retrieval", "app", None, "corpus")
    mine = stored.results[stored.results[constants.COL_MODEL] == stored.results[constants.COL_MODEL].iloc[0]]
    assert (mine[constants.COL_CATEGORY] != constants.CAT_POSITIVE).sum() == len(outranked)


# ------------------------------------------------------------------ Compare's third box

A = "The patient is allergic to penicillin"  # Compare's default pair
B = "The patient is not allergic to penicillin"


def test_compare_third_box_ranks_b_against_the_passage():
    app = open_page("views/compare.py", timeout=120)
    assert app.text_area(key="cmp_text_c").value == ""
    seen = set()
    # A near copy of A must beat its negation; an unrelated sentence must lose to it.
    for passage in ("The patient is allergic to penicillin.", "The quarterly report was published on Monday"):
        app.text_area(key="cmp_text_c").input(passage).run()
        assert not app.exception
        cos_b, cos_c = expected_cosine(A, B), expected_cosine(A, passage)
        table = _frame(app, {"cosine_b", "cosine_should_win", "verdict"})
        assert len(table) == 1
        row = table.iloc[0]
        assert row["cosine_b"] == pytest.approx(cos_b, abs=1e-4)
        assert row["cosine_should_win"] == pytest.approx(cos_c, abs=1e-4)
        assert row["verdict"] == (constants.VERDICT_CONTRADICTION_WINS if cos_b > cos_c else constants.VERDICT_RIGHT_PASSAGE_WINS)
        assert row["ranked_first"] == (constants.RANKED_B if cos_b > cos_c else constants.RANKED_SHOULD_WIN)
        seen.add(row["verdict"])
    assert seen == {constants.VERDICT_CONTRADICTION_WINS, constants.VERDICT_RIGHT_PASSAGE_WINS}
    # Compare's own table is untouched, and the box keeps its text across a page switch.
    assert len([d for d in app.dataframe if {"cosine", "verdict"} <= set(d.value.columns)]) == 1
    app.switch_page("views/home.py").run()
    app.switch_page("views/compare.py").run()
    assert app.text_area(key="cmp_text_c").value == "The quarterly report was published on Monday"
    assert len(_frame(app, {"cosine_b", "verdict"})) == 1


def test_the_calibrated_filter_lets_the_user_choose_what_counts_as_a_negative():
    """Retrieval's calibrated filter used the saved near-miss choice without showing it; now the choice sits under
    the filter (shared with Failure modes), and with the controls scored the thresholds it uses are named with their negatives."""
    from apptest_support import open_page

    app = open_page("views/retrieval.py", timeout=300)
    assert not [c for c in app.checkbox if c.key == "cal_near_miss"]
    app.checkbox(key="rt_m_calibrated").check().run()
    assert not app.exception
    near_miss = app.checkbox(key="cal_near_miss")
    assert near_miss.label == "Count near-miss controls as negatives" and near_miss.value is False
    app.button(key="rt_calibrate").click().run()
    assert not app.exception
    low = [c.value for c in app.caption if c.value.startswith("Thresholds: ")]
    app.checkbox(key="cal_near_miss").check().run()
    assert app.checkbox(key="cal_near_miss").value is True
    high = [c.value for c in app.caption if c.value.startswith("Thresholds: ")]
    assert low and "(negatives: unrelated pairs)" in low[0] and high and "(negatives: unrelated pairs and near-misses)" in high[0]
    app.checkbox(key="cal_near_miss").uncheck().run()
    app.checkbox(key="rt_m_calibrated").uncheck().run()
