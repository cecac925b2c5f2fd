"""The audit's optional judge: an NLI cross-encoder reads each confusable twin pair and says whether it is a contradiction.

The model is loaded the way the reranker mitigation loads one
(:mod:`core.probes.retrieval.reranker`: a Hugging Face id or a folder, found
where the user has it, bounded wait).  Where it cannot load here, the audit
runs without it and says so in one line: the judge is a second opinion, never
a reason to lose the audit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core import constants
from core.audit.kinds import KIND_OTHER, KIND_TWIN
from core.models.loading import ModelUnavailable
from core.probes.retrieval.reranker import NLI_CONTRADICTION, nli_labels

COL_JUDGE = "judge"


@dataclass
class Judgement:
    """What the judge said about the twin pairs.

    Attributes:
        model: the NLI model's id or folder.
        labels: (text_a, text_b) -> the model's label for that twin pair.
        error: why the judge could not run here, or None.
    """

    model: str
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    error: str | None = None

    def apply(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """``pairs`` with a ``judge`` column: the label of each judged twin pair, "" for the rest."""
        keys = zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)
        return pairs.assign(**{COL_JUDGE: [self.labels.get(k, "") for k in keys]})

    def decide(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """``pairs`` with the judge's word taking the kind: a twin it read and did not call a contradiction becomes ``other``.

        Rows the judge did not read keep the rules' kind; the ``judge`` column says what it read.
        """
        judged = self.apply(pairs)
        overruled = (judged["kind"] == KIND_TWIN) & (judged[COL_JUDGE] != "") & (judged[COL_JUDGE] != NLI_CONTRADICTION)
        judged.loc[overruled, ["kind", "mode", "modes"]] = [KIND_OTHER, "", ""]
        return judged

    def summary(self, pairs: pd.DataFrame) -> list[dict]:
        """Per model: twin pairs judged, how many the judge calls contradictions, and so the twin precision it implies.

        ``twin_precision`` reads the judge as the truth: contradictions / twin pairs judged.
        """
        judged = self.apply(pairs)
        judged = judged[judged[COL_JUDGE] != ""]
        out = []
        for model, mine in judged.groupby(constants.COL_MODEL, sort=False):
            n, k = len(mine), int((mine[COL_JUDGE] == NLI_CONTRADICTION).sum())
            share = k / n if n else float("nan")
            out.append({"model": model, "twin_pairs_judged": n, "contradictions": k, "share": share, "twin_precision": share})
        return out

    def sentence(self, pairs: pd.DataFrame) -> str:
        """The judge in one sentence (or why it did not run)."""
        if self.error is not None:
            return f"The judge {self.model} could not run here ({self.error}); the audit ran without it."
        rows = self.summary(pairs)
        if not rows:
            return f"The judge {self.model} had no twin pair to read."
        return " ".join(
            f"The judge {self.model} reads {r['contradictions']:,} of {r['twin_pairs_judged']:,} twin pairs "
            f"with {r['model'].rsplit('/', 1)[-1]} as contradictions: the twin precision it implies is {r['twin_precision']:.3f}."
            for r in rows
        )


def judge_twins(pairs: pd.DataFrame, model_id: str) -> Judgement:
    """Ask the NLI model ``model_id`` about every distinct twin pair of ``pairs`` (text_a as premise, text_b as hypothesis).

    Returns:
        A :class:`Judgement`; its ``error`` says why when the model cannot load here (nothing raised).

    Raises:
        ValueError: an empty model id.
    """
    if not isinstance(model_id, str) or not model_id.strip():
        raise ValueError("--judge needs a model id or folder, e.g. cross-encoder/nli-deberta-v3-small")
    twins = pairs[pairs["kind"] == KIND_TWIN]
    distinct = list(dict.fromkeys(zip(twins[constants.COL_TEXT_A], twins[constants.COL_TEXT_B], strict=True)))
    try:
        labels = nli_labels(model_id.strip(), distinct)
    except ModelUnavailable as exc:
        reason = str(exc)
        reason = reason[len(model_id.strip()) + 2 :] if reason.startswith(f"{model_id.strip()}: ") else reason
        return Judgement(model_id.strip(), error=reason)
    return Judgement(model_id.strip(), dict(zip(distinct, labels, strict=True)))
