"""run_retrieval and run_corpus_probe with the real MiniLM on a few groups, every figure recomputed by hand from raw embeddings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core import constants
from core.models.cache import EmbeddingCache
from core.models.registry import MINILM_L6
from core.probes.perturb import perturb
from core.probes.retrieval import tables
from core.probes.retrieval.corpus import run_corpus_probe
from core.probes.retrieval.run import run_retrieval
from core.probes.retrieval.suite_files import load_retrieval_suite

N_GROUPS = 8


class Negate:
    """Reverses every ranking: the best passage becomes the worst."""

    name = "negate"

    def rescore(self, queries, passages, dense, *, model):
        return -np.asarray(dense)


class FilterAll:
    """Filters every passage out."""

    name = "filter-all"

    def rescore(self, queries, passages, dense, *, model):
        return np.full(np.shape(dense), -np.inf)


class Broken:
    name = "broken"

    def rescore(self, queries, passages, dense, *, model):
        raise RuntimeError("this mitigation always fails")


@pytest.fixture(scope="module")
def suite():
    return load_retrieval_suite().head(N_GROUPS)


@pytest.fixture(scope="module")
def cache():
    store = EmbeddingCache(False)
    yield store
    store.close()


@pytest.fixture(scope="module")
def result(suite, minilm, cache, tmp_path_factory):
    missing = str(tmp_path_factory.mktemp("models") / "no-such-model")
    return run_retrieval(suite, [missing, MINILM_L6], cache=cache, mitigations=[Negate(), FilterAll(), Broken()], n_resamples=500)


@pytest.fixture(scope="module")
def cos(minilm, suite):
    """cos(a, b) from raw MiniLM embeddings of every suite text, independent of the run's cache."""
    texts = list(dict.fromkeys([*suite.passages[constants.COL_TEXT], *suite.queries[constants.COL_TEXT]]))
    vectors = minilm.backend.embed(texts)
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    index = {t: i for i, t in enumerate(texts)}
    return lambda a, b: float(vectors[index[a]] @ vectors[index[b]])


def _rows(frame: pd.DataFrame, mitigation: str) -> pd.DataFrame:
    return frame[frame[constants.COL_MITIGATION] == mitigation].reset_index(drop=True)


def test_errors_are_per_model_and_per_mitigation(result):
    assert result.models == [MINILM_L6]
    assert any("no-such-model" in name for name in result.errors)
    assert f"{MINILM_L6} + broken" in result.errors and "always fails" in result.errors[f"{MINILM_L6} + broken"]
    assert result.mitigations == [constants.MITIGATION_NONE, "negate", "filter-all"]


def test_scores_are_the_cosines(result, suite, cos):
    rows = _rows(result.scores, constants.MITIGATION_NONE)
    p = suite.passages
    assert len(rows) == (p[constants.COL_ROLE] == constants.ROLE_VARIANT).sum()
    for r in rows.itertuples():
        assert r.cosine_paraphrase == pytest.approx(cos(r.anchor, r.paraphrase), abs=1e-4)
        assert r.cosine_variant == pytest.approx(cos(r.anchor, r.variant), abs=1e-4)
        assert r.win == (cos(r.anchor, r.variant) > cos(r.anchor, r.paraphrase))
    assert (rows[constants.COL_SCORE_VARIANT] == rows["cosine_variant"]).all()


def test_win_rates_by_hand(result):
    rows = _rows(result.scores, constants.MITIGATION_NONE)
    table = _rows(result.win_rates, constants.MITIGATION_NONE).set_index(constants.COL_MODE)
    for mode, part in rows.groupby(constants.COL_MODE):
        assert table.loc[mode, constants.COL_N] == len(part)
        assert table.loc[mode, constants.COL_WIN_RATE] == pytest.approx(part[constants.COL_WIN].sum() / len(part))
        assert table.loc[mode, constants.COL_CI_LOW] <= table.loc[mode, constants.COL_WIN_RATE] <= table.loc[mode, constants.COL_CI_HIGH]
    assert table.loc[constants.MODE_ALL, constants.COL_WIN_RATE] == pytest.approx(rows[constants.COL_WIN].mean())
    assert list(table.index)[-1] == constants.MODE_ALL


def test_paired_accuracy_by_hand(result, suite, cos):
    rows = _rows(result.paired_groups, constants.MITIGATION_NONE)
    q = suite.queries
    assert len(rows) == len(q) // 2 > 0
    hits = []
    for r in rows.itertuples():
        ok = cos(r.q1, r.anchor) > cos(r.q1, r.variant) and cos(r.q2, r.variant) > cos(r.q2, r.anchor)
        assert r.paired_correct == ok
        hits.append(ok)
    table = _rows(result.paired, constants.MITIGATION_NONE).set_index(constants.COL_MODE)
    assert table.loc[constants.MODE_ALL, constants.COL_PAIRED_ACCURACY] == pytest.approx(np.mean(hits))
    assert (table[constants.COL_RANDOM] == 0.25).all()


def _first_position(query: str, right: set[str], corpus: list[str], cos) -> int:
    order = sorted(corpus, key=lambda t: -cos(query, t))
    return next(i for i, t in enumerate(order) if t in right) + 1


def test_in_corpus_ranks_by_hand(result, suite, cos):
    rows = _rows(result.ranks, constants.MITIGATION_NONE)
    p = suite.passages
    corpus = list(dict.fromkeys(p[constants.COL_TEXT]))
    paraphrase = dict(
        zip(
            p[p[constants.COL_ROLE] == constants.ROLE_PARAPHRASE][constants.COL_GROUP_ID],
            p[p[constants.COL_ROLE] == constants.ROLE_PARAPHRASE][constants.COL_TEXT],
            strict=True,
        )
    )
    expected_right, expected_contra = [], []
    for r in rows.itertuples():
        same_as_anchor = r.correct if r.which == constants.COL_Q1 else r.contradiction
        right = {r.correct} | ({paraphrase[r.group_id]} if r.which == constants.COL_Q1 else set())
        contra = {r.contradiction} | ({paraphrase[r.group_id]} if r.which == constants.COL_Q2 else set())
        assert same_as_anchor in corpus
        expected_right.append(_first_position(r.query, right, corpus, cos))
        expected_contra.append(_first_position(r.query, contra, corpus, cos))
        assert r.top1 == max(corpus, key=lambda t: cos(r.query, t))
    assert rows[constants.COL_RANK_CORRECT].tolist() == expected_right
    assert rows[constants.COL_RANK_CONTRADICTION].tolist() == expected_contra
    ranking = _rows(result.ranking, constants.MITIGATION_NONE).iloc[0]
    right = np.array(expected_right, dtype=float)
    assert ranking[constants.COL_RECALL_AT[1]] == pytest.approx((right == 1).mean())
    assert ranking[constants.COL_RECALL_AT[5]] == pytest.approx((right <= 5).mean())
    assert ranking[constants.COL_MRR] == pytest.approx((1 / right).mean())
    assert ranking[constants.COL_TOP1_CONTRADICTION] == pytest.approx((np.array(expected_contra) == 1).mean())


def test_literal_nevir_ranking_counts_only_the_anchor(suite, cache, cos):
    literal = run_retrieval(suite, [MINILM_L6], cache=cache, paraphrase_is_answer=False, n_resamples=100)
    corpus = list(dict.fromkeys(suite.passages[constants.COL_TEXT]))
    for r in literal.ranks.itertuples():
        assert r.rank_correct == _first_position(r.query, {r.correct}, corpus, cos)


def test_negated_scores_reverse_every_verdict(result, cos):
    before, after = _rows(result.scores, constants.MITIGATION_NONE), _rows(result.scores, "negate")
    assert (after[constants.COL_WIN] == (before["cosine_variant"] < before["cosine_paraphrase"])).all()
    paired = _rows(result.paired_groups, "negate")
    for r in paired.itertuples():
        assert r.paired_correct == (cos(r.q1, r.anchor) < cos(r.q1, r.variant) and cos(r.q2, r.variant) < cos(r.q2, r.anchor))


def _paraphrase_first(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby(constants.COL_GROUP_ID, sort=False).apply(
        lambda g: bool(
            (g[constants.COL_SCORE_VARIANT] < g[constants.COL_SCORE_PARAPHRASE].iloc[0]).all()
            and math.isfinite(g[constants.COL_SCORE_PARAPHRASE].iloc[0])
        )
    )


def test_costs_by_hand(result):
    costs = result.costs.set_index(constants.COL_MITIGATION)
    first_before = _paraphrase_first(_rows(result.scores, constants.MITIGATION_NONE))
    top_before = _rows(result.ranks, constants.MITIGATION_NONE)[constants.COL_RANK_CORRECT] == 1
    for name in ("negate", "filter-all"):
        first_after = _paraphrase_first(_rows(result.scores, name))
        top_after = _rows(result.ranks, name)[constants.COL_RANK_CORRECT] == 1
        assert costs.loc[name, constants.COL_PARAPHRASES_LOST] == int((first_before & ~first_after).sum())
        assert costs.loc[name, constants.COL_CORRECT_LOST] == int((top_before & ~top_after).sum())
        assert costs.loc[name, constants.COL_MS_PER_QUERY] > 0
    assert costs.loc[
        constants.MITIGATION_NONE, [constants.COL_PARAPHRASES_LOST, constants.COL_CORRECT_LOST, constants.COL_MS_PER_QUERY]
    ].tolist() == [0, 0, 0.0]
    assert costs.loc["filter-all", constants.COL_PARAPHRASES_LOST] == int(first_before.sum())


def test_filtering_everything_loses_everything(result):
    assert not _rows(result.scores, "filter-all")[constants.COL_WIN].any()
    ranking = _rows(result.ranking, "filter-all").iloc[0]
    assert ranking[constants.COL_MRR] == 0 and ranking[constants.COL_RECALL_AT[5]] == 0
    assert np.isinf(_rows(result.ranks, "filter-all")[constants.COL_RANK_CORRECT]).all()


def test_summary_has_one_row_per_mitigation(result):
    summary = result.summary()
    assert summary[constants.COL_MITIGATION].tolist() == result.mitigations
    none = summary.iloc[0]
    assert none[constants.COL_WIN_RATE] == pytest.approx(
        _rows(result.win_rates, constants.MITIGATION_NONE).iloc[-1][constants.COL_WIN_RATE]
    )
    assert set(result.frames()) >= {"scores", "win_rates", "paired_accuracy", "ranking", "costs", "summary"}


def test_bad_calls_are_refused(suite):
    with pytest.raises(ValueError, match="model"):
        run_retrieval(suite, [])
    with pytest.raises(ValueError, match="unique"):
        run_retrieval(suite, [MINILM_L6], mitigations=[Negate(), Negate()])
    with pytest.raises(ValueError, match="passages table lacks columns"):
        run_retrieval((pd.DataFrame({"text": ["x"]}), suite.queries), [MINILM_L6])
    with pytest.raises(ValueError, match="corpus is empty"):
        run_corpus_probe(["  "], ["q"], [MINILM_L6])
    with pytest.raises(ValueError, match="no query"):
        run_corpus_probe(["p"], [], [MINILM_L6])


# ------------------------------------------------------------------ model vs model (tables only)


def test_comparison_table_by_hand():
    wins_a = [True, True, True, True, False, True, False, True]
    wins_b = [False, False, False, True, True, True, False, False]
    rows = []
    for model, wins in (("A", wins_a), ("B", wins_b)):
        rows += [
            {
                constants.COL_MODEL: model,
                constants.COL_MITIGATION: "none",
                constants.COL_GROUP_ID: f"g{i // 2}",
                constants.COL_MODE: ("negation", "numerical")[i % 2],
                constants.COL_VARIANT: f"v{i}",
                constants.COL_WIN: w,
            }
            for i, w in enumerate(wins)
        ]
    table = tables.comparison_table(pd.DataFrame(rows), n_resamples=200).set_index(constants.COL_MODE)
    overall = table.loc[constants.MODE_ALL]
    assert (overall["model_a"], overall["model_b"], overall[constants.COL_N]) == ("A", "B", 8)
    assert overall["difference"] == pytest.approx(6 / 8 - 3 / 8)
    # Only A: units 0, 1, 2, 7; only B: unit 4.  Exact p = 2 * P(X <= 1), X ~ Bin(5, 1/2) = 2 * 6 / 32.
    assert (overall["a_only"], overall["b_only"]) == (4, 1)
    assert overall["mcnemar_p"] == pytest.approx(12 / 32)
    negation = table.loc["negation"]  # units 0, 2, 4, 6: A wins 0, 2; B wins 4
    assert (negation[constants.COL_N], negation["a_only"], negation["b_only"]) == (4, 2, 1)


# ------------------------------------------------------------------ corpus mode


CORPUS = [
    "The patient is allergic to penicillin and must not receive it.",
    "Aspirin reduces the risk of a second heart attack in most patients.",
    "Tenants must give 30 days notice before they move out.",
    "The museum opens at 9 am every day except Monday.",
]
QUERIES = ["Which antibiotic is the patient allergic to?", "How much notice must tenants give?"]


@pytest.fixture(scope="module")
def corpus_result(minilm, cache):
    return run_corpus_probe(CORPUS, QUERIES, [MINILM_L6], cache=cache, mitigations=[Negate()], n_resamples=200)


def test_corpus_mode_by_hand(corpus_result, minilm):
    rows = _rows(corpus_result.pairs, constants.MITIGATION_NONE)
    expected = []
    for query in QUERIES:
        texts = [query, *CORPUS]
        vectors = minilm.backend.embed(texts)
        scores = vectors[1:] @ vectors[0]
        top = CORPUS[int(np.argmax(scores))]
        for v in perturb(top).variants:
            vv = minilm.backend.embed([v.text])[0]
            expected.append((query, top, v.mode, v.text, bool(vv @ vectors[0] > scores.max())))
    got = list(
        rows[[constants.COL_QUERY, "original", constants.COL_MODE, constants.COL_VARIANT, constants.COL_OUTRANKS]].itertuples(
            index=False, name=None
        )
    )
    assert got == expected
    rates = _rows(corpus_result.rates, constants.MITIGATION_NONE).set_index(constants.COL_MODE)
    for mode, part in rows.groupby(constants.COL_MODE):
        assert rates.loc[mode, "rate"] == pytest.approx(part[constants.COL_OUTRANKS].mean())
    assert rates.loc[constants.MODE_ALL, constants.COL_N] == len(rows)


def test_corpus_mode_rescores_the_same_pairs(corpus_result):
    before, after = _rows(corpus_result.pairs, constants.MITIGATION_NONE), _rows(corpus_result.pairs, "negate")
    assert before[constants.COL_VARIANT].tolist() == after[constants.COL_VARIANT].tolist()
    assert (after[constants.COL_OUTRANKS] == (before["score_variant"] < before["score_original"])).all()


def test_every_mitigation_is_reported_on_hand_written_then_rule_made_variants(result):
    """A variant is rule-made when perturb(anchor) writes it; ties are counted apart, never as fixes."""
    scores = result.scores
    rule = [
        v in {p.text for p in perturb(a).variants} for a, v in zip(scores[constants.COL_ANCHOR], scores[constants.COL_VARIANT], strict=True)
    ]
    expected = np.where(rule, constants.SOURCE_RULE, constants.SOURCE_HAND)
    assert (scores[constants.COL_VARIANT_SOURCE].to_numpy() == expected).all()
    table = result.by_source
    for mitigation in result.mitigations:
        rows = _rows(table, mitigation)
        assert rows[constants.COL_VARIANT_SOURCE].tolist() == [constants.SOURCE_HAND, constants.SOURCE_RULE]
        for row in rows.to_dict("records"):
            part = _rows(scores, mitigation)
            part = part[part[constants.COL_VARIANT_SOURCE] == row[constants.COL_VARIANT_SOURCE]]
            assert row[constants.COL_N] == len(part)
            assert row[constants.COL_WIN_RATE] == pytest.approx(part[constants.COL_WIN].mean())
    # Filtering every passage ties paraphrase and variant at -inf: all ties, no win, no "fix".
    filtered = _rows(table, "filter-all")
    assert (filtered[constants.COL_TIES] == filtered[constants.COL_N]).all() and (filtered[constants.COL_WINS] == 0).all()
    assert (_rows(table, constants.MITIGATION_NONE)[constants.COL_TIES] == 0).all()
    assert "win_rates_by_source" in result.frames()


def test_before_after_shows_ties_and_churn_beside_each_net_figure(result):
    """A win turned into a tie is no fix, and flips both ways are counted beside the net figures."""
    summary = result.summary().set_index([constants.COL_MODEL, constants.COL_MITIGATION])
    none, negate, filtered = (summary.loc[(MINILM_L6, m)] for m in (constants.MITIGATION_NONE, "negate", "filter-all"))
    scores = result.scores
    before, after = _rows(scores, constants.MITIGATION_NONE), _rows(scores, "negate")
    strictly_before = (before[constants.COL_SCORE_PARAPHRASE] > before[constants.COL_SCORE_VARIANT]).to_numpy()
    strictly_after = (after[constants.COL_SCORE_PARAPHRASE] > after[constants.COL_SCORE_VARIANT]).to_numpy()
    assert (negate[constants.COL_FIXED], negate[constants.COL_BROKEN]) == (
        (~strictly_before & strictly_after).sum(),
        (strictly_before & ~strictly_after).sum(),
    )
    assert negate[constants.COL_BROKEN] > 0 and negate[constants.COL_FIXED] > 0
    # Filtering everything ties every variant: the win rate falls to 0, yet nothing is fixed and every right order is broken.
    assert filtered[constants.COL_WIN_RATE] == 0 and filtered[constants.COL_TIES] == len(before)
    assert filtered[constants.COL_FIXED] == 0 and filtered[constants.COL_BROKEN] == strictly_before.sum()
    assert none[constants.COL_TIES] == 0 and none[constants.COL_FIXED] == 0 and none[constants.COL_BROKEN] == 0
    paired_b, paired_a = _rows(result.paired_groups, constants.MITIGATION_NONE), _rows(result.paired_groups, "negate")
    ok_b, ok_a = paired_b[constants.COL_PAIRED_CORRECT].to_numpy(bool), paired_a[constants.COL_PAIRED_CORRECT].to_numpy(bool)
    assert (negate["paired_fixed"], negate["paired_broken"]) == ((~ok_b & ok_a).sum(), (ok_b & ~ok_a).sum())
    columns = list(summary.reset_index().columns)
    win = columns.index(constants.COL_WIN_RATE)
    assert columns[win + 1 : win + 4] == [constants.COL_TIES, constants.COL_FIXED, constants.COL_BROKEN]
    assert columns[columns.index(constants.COL_RECALL_AT[1]) + 1 : columns.index(constants.COL_RECALL_AT[1]) + 3] == [
        "correct_gained",
        constants.COL_CORRECT_LOST,
    ]
    # The win-rate table (the headline) counts the ties too.
    all_modes = result.win_rates[
        (result.win_rates[constants.COL_MODE] == constants.MODE_ALL) & (result.win_rates[constants.COL_MODEL] == MINILM_L6)
    ]
    assert all_modes.set_index(constants.COL_MITIGATION).loc["filter-all", constants.COL_TIES] == len(before)


def test_corpus_mode_rates_show_ties_fixed_and_broken(corpus_result):
    """In corpus mode: each mitigation's rate with its ties and the pairs it flipped each way."""
    before, after = _rows(corpus_result.pairs, constants.MITIGATION_NONE), _rows(corpus_result.pairs, "negate")
    was = (before["score_original"] > before["score_variant"]).to_numpy()
    now = (after["score_original"] > after["score_variant"]).to_numpy()
    rates = corpus_result.rates
    pooled = rates[(rates[constants.COL_MITIGATION] == "negate") & (rates[constants.COL_MODE] == constants.MODE_ALL)].iloc[0]
    assert (pooled[constants.COL_FIXED], pooled[constants.COL_BROKEN]) == ((~was & now).sum(), (was & ~now).sum())
    assert pooled[constants.COL_TIES] == (after["score_original"] == after["score_variant"]).sum()
    plain = rates[rates[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    assert (plain[[constants.COL_FIXED, constants.COL_BROKEN]] == 0).all().all()
