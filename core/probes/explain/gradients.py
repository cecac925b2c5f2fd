"""Integrated gradients of a pair's cosine with respect to both sentences' input embeddings (torch models).

The function explained is ``f(x_a, x_b) = cos(pool(model(x_a)), pool(model(x_b)))``
where ``x_a``, ``x_b`` are the word-embedding rows of the two sentences (the
model adds its own position and segment embeddings on top) and ``pool`` is the
model's own sentence-transformers pooling.  captum's ``IntegratedGradients``
integrates the gradient along the straight line from a baseline pair to the
real one, for both sentences at once; a token's attribution is its
embedding-dimension sum.

Baseline: every token of the text is replaced by the ``[MASK]`` embedding
(``mask``, the default) or the ``[PAD]`` embedding (``pad``); the special
tokens (``[CLS]``/``[SEP]``, ``<s>``/``</s>``) and a prompt keep their own, and
the attention mask stays the real one, so the baseline pair is "two sentences
of the same lengths with no words in them".  Their attributions are 0.
Both baselines score near 1 (two empty sentences of similar length look
alike), so the attributions share out ``cos(pair) - ~1``: a negative token
pulls the sentences apart.  ``mask`` is the default because with ``pad``
MiniLM spreads that change almost evenly over the two sides (every token of
A negative, every token of B positive) instead of onto the words that differ.

Completeness (Sundararajan et al. 2017): the attributions sum to
``f(real) - f(baseline)``.  A Riemann or Gauss-Legendre sum only approximates
the integral, so :class:`~core.probes.explain.result.Completeness` reports
the miss; above ``IG_MAX_RELATIVE_MISS`` the caller should offer more steps.
"""

from __future__ import annotations

from core import constants
from core.models.loading import LoadedModel
from core.probes.explain.forward import explain_tokenizer, require_torch
from core.probes.explain.result import Explanation, as_table, completeness, token_rows
from core.probes.explain.sides import Side, tokenize_side

# Steps × tokens per forward pass: bounds activation memory for long pairs and big models.
_TOKENS_PER_BATCH = 2048
_MAX_STEPS = 2000


def integrated_gradients(
    model: LoadedModel,
    text_a: str,
    text_b: str,
    *,
    steps: int = constants.IG_STEPS,
    baseline: str = constants.IG_BASELINE,
) -> Explanation:
    """Attribute a pair's cosine to every token of both sentences with integrated gradients.

    Args:
        model: a loaded torch (sentence-transformers) model.
        text_a: sentence A.
        text_b: sentence B.
        steps: integration steps (Gauss-Legendre), 1 to 2000.
        baseline: ``pad`` or ``mask`` (see the module docstring).

    Returns:
        An :class:`Explanation` with one row per token of A then of B and its
        :class:`~core.probes.explain.result.Completeness` check.

    Raises:
        ValueError: for an ONNX model, an empty sentence, a bad step count or baseline.
    """
    st = require_torch(model, "integrated gradients")
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= _MAX_STEPS:
        raise ValueError(f"steps must be an integer from 1 to {_MAX_STEPS}, got {steps!r}")
    if baseline not in constants.IG_BASELINES:
        raise ValueError(f"baseline must be one of {', '.join(constants.IG_BASELINES)}, got {baseline!r}")
    with model.lock:
        sides = [
            tokenize_side(model.tokenizer, t, s, prompt=model.meta.prompt, max_length=model.max_seq_length)
            for t, s in ((text_a, constants.SIDE_A), (text_b, constants.SIDE_B))
        ]
        tok = explain_tokenizer(model)
        baseline_id = tok.pad_token_id if baseline == constants.BASELINE_PAD else tok.mask_token_id
        if baseline_id is None:
            raise ValueError(f"{model.name}'s tokenizer has no {baseline} token: choose another baseline")
        per_side, cos, base_cos, total = _attribute(st, model.tokenizer, sides, int(baseline_id), steps)
    rows = []
    for side, values in zip(sides, per_side, strict=True):
        rows += token_rows(model.name, side, values, constants.METHOD_IG)
    return Explanation(
        model=model.name,
        method=constants.METHOD_IG,
        unit=constants.UNIT_TOKEN,
        cosine=cos,
        table=as_table(rows),
        completeness=completeness(steps, baseline, cos, base_cos, total),
        truncated=tuple(s.side for s in sides if s.truncated),
    )


def _attribute(st, tokenizer, sides: list[Side], baseline_id: int, steps: int):
    """Run captum on both sides; per-side token attributions [(T_A,), (T_B,)], cos, baseline cos, attribution sum."""
    import torch
    from captum.attr import IntegratedGradients

    transformer, pooling = st[0].auto_model, list(st)[1:]
    embed = transformer.get_input_embeddings()
    device = st.device
    with_types = "token_type_ids" in tokenizer.model_input_names

    def inputs(side: Side) -> tuple[torch.Tensor, torch.Tensor]:
        ids = torch.tensor([side.input_ids], device=device)
        base_ids = ids.clone()
        base_ids[0, list(side.positions)] = baseline_id
        with torch.no_grad():
            return embed(ids).detach(), embed(base_ids).detach()

    def sentence(x: torch.Tensor) -> torch.Tensor:
        mask = torch.ones(x.shape[:2], dtype=torch.long, device=device)
        kwargs = {"token_type_ids": torch.zeros_like(mask)} if with_types else {}
        features = {
            "token_embeddings": transformer(inputs_embeds=x, attention_mask=mask, **kwargs).last_hidden_state,
            "attention_mask": mask,
        }
        for module in pooling:
            features = module(features)
        return features["sentence_embedding"]

    def cosine(xa: torch.Tensor, xb: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cosine_similarity(sentence(xa), sentence(xb), dim=-1)

    (xa, ba), (xb, bb) = inputs(sides[0]), inputs(sides[1])
    per_pass = max(1, _TOKENS_PER_BATCH // (xa.shape[1] + xb.shape[1]))
    attr_a, attr_b = IntegratedGradients(cosine).attribute(
        (xa, xb), baselines=(ba, bb), n_steps=steps, method="gausslegendre", internal_batch_size=per_pass
    )
    with torch.no_grad():
        cos, base_cos = float(cosine(xa, xb)[0]), float(cosine(ba, bb)[0])
    token_a, token_b = attr_a[0].sum(-1).detach().cpu().numpy(), attr_b[0].sum(-1).detach().cpu().numpy()
    total = float(token_a.sum() + token_b.sum())
    return [token_a[list(sides[0].positions)], token_b[list(sides[1].positions)]], cos, base_cos, total
