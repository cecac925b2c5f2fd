"""Integrated gradients on MiniLM: against a hand-written Gauss-Legendre integral, and the completeness check."""

from __future__ import annotations

import numpy as np
import pytest

from core import constants
from core.constants import BACKEND_AUTO
from core.models.encode import encode_texts
from core.models.loading import load_model
from core.models.registry import MINILM_L6_INT8
from core.probes.explain import integrated_gradients
from core.probes.explain.forward import embed_ids

torch = pytest.importorskip("torch")

A = "The patient is allergic to penicillin"
B = "The patient is not allergic to penicillin"


@pytest.fixture(scope="module")
def explained(minilm):
    return integrated_gradients(minilm, A, B, steps=constants.IG_STEPS)


def _ids(model, text: str) -> list[int]:
    return list(model.tokenizer(text)["input_ids"])


def _masked(model, ids: list[int]) -> list[int]:
    """Every token but [CLS] and [SEP] replaced by [MASK]: the documented baseline."""
    return [ids[0]] + [model.tokenizer.mask_token_id] * (len(ids) - 2) + [ids[-1]]


def _hand_ig(model, a: str, b: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(x - x') · sum_k w_k ∇f(x' + α_k (x - x')), per token, with Gauss-Legendre nodes on [0, 1] and plain mean pooling."""
    bert = model.backend.model[0].auto_model
    embed = bert.get_input_embeddings()
    ids_a, ids_b = _ids(model, a), _ids(model, b)
    with torch.no_grad():
        xa, xb = embed(torch.tensor([ids_a])), embed(torch.tensor([ids_b]))
        ba, bb = embed(torch.tensor([_masked(model, ids_a)])), embed(torch.tensor([_masked(model, ids_b)]))
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    grad_a, grad_b = torch.zeros_like(xa), torch.zeros_like(xb)
    for node, weight in zip(nodes, weights, strict=True):
        alpha = 0.5 * (1 + node)
        pa = (ba + alpha * (xa - ba)).requires_grad_(True)
        pb = (bb + alpha * (xb - bb)).requires_grad_(True)
        va, vb = bert(inputs_embeds=pa).last_hidden_state.mean(dim=1), bert(inputs_embeds=pb).last_hidden_state.mean(dim=1)
        cos = torch.nn.functional.cosine_similarity(va, vb)[0]
        ga, gb = torch.autograd.grad(cos, (pa, pb))
        grad_a += 0.5 * weight * ga
        grad_b += 0.5 * weight * gb
    return ((xa - ba) * grad_a).sum(-1)[0, 1:-1].numpy(), ((xb - bb) * grad_b).sum(-1)[0, 1:-1].numpy()


def test_attributions_match_a_hand_written_integral(minilm):
    steps = 8
    explained = integrated_gradients(minilm, A, B, steps=steps)
    want_a, want_b = _hand_ig(minilm, A, B, steps)
    table = explained.table
    got_a = table[table[constants.COL_SIDE] == constants.SIDE_A][constants.COL_ATTRIBUTION].to_numpy()
    got_b = table[table[constants.COL_SIDE] == constants.SIDE_B][constants.COL_ATTRIBUTION].to_numpy()
    np.testing.assert_allclose(got_a, want_a, atol=1e-5)
    np.testing.assert_allclose(got_b, want_b, atol=1e-5)


def test_completeness_is_checked_against_independent_cosines(minilm, explained):
    check = explained.completeness
    vectors, _ = encode_texts(minilm, [A, B], None)
    assert check.cosine == pytest.approx(float(vectors[A] @ vectors[B]), abs=1e-5)
    base = embed_ids(minilm, [_masked(minilm, _ids(minilm, A)), _masked(minilm, _ids(minilm, B))])
    assert check.baseline_cosine == pytest.approx(float(base[0] @ base[1]), abs=1e-5)
    # [CLS]/[SEP] equal their baseline, so every attribution is in the table and they sum to the reported total.
    assert check.attribution_sum == pytest.approx(float(explained.table[constants.COL_ATTRIBUTION].sum()), abs=1e-6)
    change = check.cosine - check.baseline_cosine
    assert check.miss == pytest.approx(check.attribution_sum - change, abs=1e-9)
    assert check.relative_miss == pytest.approx(abs(check.miss) / abs(change))
    assert check.relative_miss < constants.IG_MAX_RELATIVE_MISS and check.ok
    assert check.steps == constants.IG_STEPS and check.baseline == constants.BASELINE_MASK


def test_more_steps_shrink_the_miss(minilm, explained):
    coarse = integrated_gradients(minilm, A, B, steps=2).completeness
    assert abs(coarse.miss) > abs(explained.completeness.miss)


def test_identical_sentences_have_nothing_to_attribute(minilm):
    same = integrated_gradients(minilm, A, A, steps=8)
    assert same.cosine == pytest.approx(1.0, abs=1e-5)
    assert np.abs(same.table[constants.COL_ATTRIBUTION].to_numpy()).max() < 1e-4
    assert same.completeness.ok


def test_onnx_and_bad_settings_are_refused(minilm, session_cache_dir):
    with pytest.raises(ValueError, match="torch model"):
        integrated_gradients(load_model(MINILM_L6_INT8, backend=BACKEND_AUTO), A, B)
    for steps in (0, 2001, 2.5, True):
        with pytest.raises(ValueError, match="steps"):
            integrated_gradients(minilm, A, B, steps=steps)
    with pytest.raises(ValueError, match="baseline"):
        integrated_gradients(minilm, A, B, baseline="zeros")
