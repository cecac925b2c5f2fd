"""Layer-wise cosines on MiniLM (last layer = the model's own pooled vector) and the OOV gap tables on hand-made curves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import constants, settings
from core.constants import BACKEND_AUTO
from core.models.encode import encode_texts
from core.models.loading import load_model
from core.models.registry import MINILM_L6_INT8
from core.papers.suites import load_suite
from core.probes.explain import layer_cosines, pair_layer_cosines, pooled_layers
from core.probes.explain.layers import layer_dynamic_range, oov_divergence, oov_layer_gaps, oov_layer_summary

torch = pytest.importorskip("torch")

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


def test_last_layer_is_the_models_pooled_vector_before_normalization(minilm):
    st = minilm.backend.model
    features = st.tokenize([A, B])
    with torch.inference_mode():
        features = st[1](st[0](features))  # transformer, then the model's own pooling; Normalize skipped
    want = features["sentence_embedding"].double().numpy()
    got = pooled_layers(minilm, [A, B])
    assert got.shape == (7, 2, 384)  # embeddings + 6 layers
    np.testing.assert_allclose(got[-1], want, atol=1e-5)


def test_last_point_of_the_curve_is_the_models_cosine(minilm):
    curve = layer_cosines(minilm, A, B)
    vectors, _ = encode_texts(minilm, [A, B], None)
    assert list(curve[constants.COL_LAYER]) == list(range(7))
    assert curve[constants.COL_COSINE].iloc[-1] == pytest.approx(float(vectors[A] @ vectors[B]), abs=1e-5)
    assert curve[constants.COL_DEPTH].iloc[-1] == 1.0 and set(curve["pooling"]) == {"mean"}


def test_layer_zero_is_the_mean_of_the_embedding_output(minilm):
    bert = minilm.backend.model[0].auto_model
    ids = torch.tensor([minilm.tokenizer(A)["input_ids"]])
    with torch.inference_mode():
        want = bert.embeddings(input_ids=ids).mean(dim=1)[0].double().numpy()
    np.testing.assert_allclose(pooled_layers(minilm, [A])[0, 0], want, atol=1e-5)


def test_padding_in_a_batch_changes_nothing(minilm):
    pairs = pd.DataFrame(
        {
            constants.COL_TEXT_A: [A, "Short one", A],
            constants.COL_TEXT_B: [B, "A much longer sentence than the first text of its pair", "Cats"],
            constants.COL_PAIR_ID: ["p1", "p2", "p3"],
        }
    )
    batched = pair_layer_cosines(minilm, pairs)
    for pid, a, b in zip(pairs[constants.COL_PAIR_ID], pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True):
        mine = batched[batched[constants.COL_PAIR_ID] == pid][constants.COL_COSINE].to_numpy()
        np.testing.assert_allclose(mine, layer_cosines(minilm, a, b)[constants.COL_COSINE].to_numpy(), atol=1e-5)


def test_oov_gap_at_the_last_layer_is_the_oov_delta(minilm):
    suite = load_suite(constants.SUITE_OOV).head(9)  # three entities × three variants
    gaps = oov_layer_gaps(pair_layer_cosines(minilm, suite), constants.VARIANT_REPLACED_B)
    last = gaps[gaps[constants.COL_LAYER] == 6].set_index(constants.COL_ENTITY)
    for item in suite[suite[constants.COL_VARIANT] == constants.VARIANT_ORIGINAL].to_dict("records"):
        replaced = suite[
            (suite[constants.COL_PAIR_ID] == item[constants.COL_PAIR_ID]) & (suite[constants.COL_VARIANT] == constants.VARIANT_REPLACED_B)
        ].iloc[0]
        vectors, _ = encode_texts(minilm, [item["text_a"], item["text_b"], replaced["text_b"]], None)
        delta = float(vectors[item["text_a"]] @ vectors[item["text_b"]]) - float(vectors[item["text_a"]] @ vectors[replaced["text_b"]])
        assert last.at[item[constants.COL_ENTITY], "gap"] == pytest.approx(delta, abs=1e-5)


def test_onnx_has_no_layers(session_cache_dir):
    with pytest.raises(ValueError, match="torch model"):
        layer_cosines(load_model(MINILM_L6_INT8, backend=BACKEND_AUTO), A, B)


# ------------------------------------------------------------- the gap tables on hand-made curves


def _curves(original: list[list[float]], replaced: list[list[float]]) -> pd.DataFrame:
    """Curves of entities e0, e1, …: original[i][layer], replaced[i][layer] (replaced_b reading)."""
    rows = []
    for i, (orig, repl) in enumerate(zip(original, replaced, strict=True)):
        n = len(orig) - 1
        for variant, values in ((constants.VARIANT_ORIGINAL, orig), (constants.VARIANT_REPLACED_B, repl)):
            rows += [
                {
                    constants.COL_MODEL: "m",
                    constants.COL_PAIR_ID: f"p{i}",
                    constants.COL_ENTITY: f"e{i}",
                    constants.COL_VARIANT: variant,
                    constants.COL_LAYER: layer,
                    constants.COL_DEPTH: layer / n,
                    constants.COL_COSINE: v,
                }
                for layer, v in enumerate(values)
            ]
    return pd.DataFrame(rows)


ORIGINAL = [[0.8, 0.9, 0.9, 0.8], [0.7, 0.9, 0.95, 0.85], [0.6, 0.8, 0.9, 0.9]]
REPLACED = [[0.68, 0.88, 0.87, 0.6], [0.7, 0.85, 0.83, 0.65], [0.45, 0.8, 0.8, 0.7]]


@pytest.mark.full_bootstrap
def test_gaps_summary_and_divergence_by_hand():
    gaps = oov_layer_gaps(_curves(ORIGINAL, REPLACED))
    gap = np.array(ORIGINAL) - np.array(REPLACED)
    assert gaps.pivot_table(index=constants.COL_ENTITY, columns=constants.COL_LAYER, values="gap").to_numpy() == pytest.approx(gap)

    ranges = pd.DataFrame({constants.COL_MODEL: "m", constants.COL_LAYER: range(4), "dynamic_range": [0.4, 0.25, 0.0, 0.8]})
    summary = oov_layer_summary(gaps, ranges).set_index(constants.COL_LAYER)
    assert summary["mean_gap"].to_numpy() == pytest.approx(gap.mean(axis=0))
    assert summary["mean_original"].to_numpy() == pytest.approx(np.mean(ORIGINAL, axis=0))
    # The paired interval is scipy's percentile bootstrap of mean(original) - mean(replaced), seeded.
    o, r = np.array(ORIGINAL)[:, 3], np.array(REPLACED)[:, 3]
    ci = stats.bootstrap(
        (o, r),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=settings.BOOTSTRAP_RESAMPLES,
        confidence_level=constants.CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(constants.BOOTSTRAP_SEED),
    ).confidence_interval
    assert (summary.at[3, "gap_low"], summary.at[3, "gap_high"]) == pytest.approx((ci.low, ci.high))
    assert summary.at[3, "normalized_gap"] == pytest.approx(gap[:, 3].mean() / 0.8)
    assert summary.at[3, "norm_low"] == pytest.approx(ci.low / 0.8)
    assert np.isnan(summary.at[2, "normalized_gap"])  # a layer with no range has no normalized gap

    divergence = oov_divergence(gaps).set_index(constants.COL_ENTITY)
    # e0: gaps 0.12, 0.02, 0.03, 0.2 -> half the final (0.1) is reached at layer 0; the largest is the last.
    assert divergence.at["e0", "onset_layer"] == 0 and divergence.at["e0", "peak_layer"] == 3
    # e1: gaps 0, 0.05, 0.12, 0.2 -> onset at 2 (0.12 >= 0.1).
    assert divergence.at["e1", "onset_layer"] == 2 and divergence.at["e1", "final_gap"] == pytest.approx(0.2)
    # e2: gaps 0.15, 0, 0.1, 0.2 -> onset 0.
    assert divergence.at["e2", "onset_layer"] == 0 and divergence.at["e2", "peak_gap"] == pytest.approx(0.2)


def test_dynamic_range_by_hand_and_refusals():
    rows = [
        {constants.COL_MODEL: "m", constants.COL_LAYER: layer, constants.COL_CATEGORY: cat, constants.COL_COSINE: v}
        for layer, cat, v in [
            (0, "positive", 0.9),
            (0, "positive", 0.7),
            (0, "negative", 0.2),
            (1, "positive", 0.8),
            (1, "negative", 0.5),
            (1, "negative", 0.3),
        ]
    ]
    ranges = layer_dynamic_range(pd.DataFrame(rows)).set_index(constants.COL_LAYER)
    assert ranges["dynamic_range"].to_numpy() == pytest.approx([0.8 - 0.2, 0.8 - 0.4])
    with pytest.raises(ValueError, match="positive and negative"):
        layer_dynamic_range(pd.DataFrame(rows[:2]))
    with pytest.raises(ValueError, match="reading"):
        oov_layer_gaps(_curves(ORIGINAL, REPLACED), "original")
