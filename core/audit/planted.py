"""A corpus with planted twins, so the audit's recall and precision are known exactly.

Base sentences are the distinct first sentences (``text_a``) of the shipped
suites, thinned so that no two share many words (word Jaccard below
:data:`MAX_BASE_OVERLAP`): the only pairs that are one edit apart are the
planted ones.  Each base gets one twin written by the rule-based generator
(:func:`core.probes.perturb.perturb`), its mode the one planted least so far
that the base allows; a base the generator has no variant for stays as a distractor.

The bases are split in two by a hash of their text: ``dev`` (rules were
written and :data:`core.audit.kinds.MIN_SHARED_WORDS` chosen looking at it)
and ``heldout`` (never looked at while writing rules; its recall and
precision are what ``docs/audit.md`` reports).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import pandas as pd

from core import constants, lexicon
from core.audit import kinds
from core.audit.risk import Threshold, pairs_at
from core.audit.run import AuditResult
from core.papers.suites import load_suite
from core.probes.perturb import perturb
from core.words import overlap_words, passage_key

SPLITS = ("dev", "heldout")
MAX_BASE_OVERLAP = 0.3
PLANTED_COLUMNS = [constants.COL_TEXT_A, constants.COL_TEXT_B, "mode", "rule"]
SCORE_COLUMNS = [constants.COL_MODEL, "mode", "planted", "found", "recall", "flagged", "correct", "precision"]


@dataclass(frozen=True)
class PlantedCorpus:
    """A split's corpus and the twins planted in it.

    Attributes:
        split: ``dev`` or ``heldout``.
        passages: bases and their planted twins, in a fixed order.
        planted: one row per planted pair: text_a (base), text_b (twin), mode, rule.
    """

    split: str
    passages: list[str]
    planted: pd.DataFrame


def _split_of(text: str) -> str:
    return SPLITS[hashlib.sha256(text.encode("utf-8")).digest()[0] % 2]


@cache
def _bases() -> tuple[str, ...]:
    texts: list[str] = []
    for suite in (constants.SUITE_FAILURE_MODES, constants.SUITE_BASELINE):
        texts += load_suite(suite)[constants.COL_TEXT_A].tolist()
    kept: list[tuple[str, set[str]]] = []
    for text in dict.fromkeys(passage_key(t) for t in texts):
        words = set(overlap_words(text))
        # Greedy thinning: a base that shares many words with one already kept would make an unplanted twin.
        if words and all(len(words & w) / len(words | w) < MAX_BASE_OVERLAP for _, w in kept):
            kept.append((text, words))
    return tuple(t for t, _ in kept)


def planted_corpus(split: str) -> PlantedCorpus:
    """The planted corpus of one split (deterministic).

    Raises:
        ValueError: an unknown split.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    passages: list[str] = []
    planted = []
    counts = dict.fromkeys(lexicon.FAILURE_MODES, 0)
    for base in _bases():
        if _split_of(base) != split:
            continue
        passages.append(base)
        variants = perturb(base).variants
        if not variants:
            continue
        by_mode = {m: [v for v in variants if v.mode == m] for m in lexicon.FAILURE_MODES}
        # The mode planted least so far among those this base allows: every mode about as often as the generator can.
        mode = min((m for m in lexicon.FAILURE_MODES if by_mode[m]), key=lambda m: counts[m])
        variant = by_mode[mode][0]
        counts[mode] += 1
        if variant.text in passages:
            continue
        passages.append(variant.text)
        planted.append((base, variant.text, mode, variant.rule))
    return PlantedCorpus(split, passages, pd.DataFrame(planted, columns=PLANTED_COLUMNS))


def planted_scores(result: AuditResult, corpus: PlantedCorpus, threshold: Threshold) -> pd.DataFrame:
    """Recall and precision of the twin finder on a planted corpus, per model and mode (``all`` pools them).

    A planted pair is *found* when it is a close pair above the threshold,
    classified ``twin``, with its planted mode among the modes found.  A pair
    *flagged* as a twin of mode m (m among its modes; a planted "no" -> "all"
    is both negation and quantifier) is *correct* when it is a planted pair.
    Recall = found / planted; precision = correct / flagged.

    Returns:
        One row per model and mode (``SCORE_COLUMNS``); NaN where nothing was planted or flagged.
    """
    planted = {
        frozenset((a, b)): mode
        for a, b, mode in corpus.planted[[constants.COL_TEXT_A, constants.COL_TEXT_B, "mode"]].itertuples(index=False)
    }
    at = pairs_at(result, threshold)
    rows = []
    for model in result.models:
        mine = at[(at[constants.COL_MODEL] == model) & (at["kind"] == kinds.KIND_TWIN)]
        keys = [frozenset((a, b)) for a, b in zip(mine[constants.COL_TEXT_A], mine[constants.COL_TEXT_B], strict=True)]
        found_modes: Mapping[frozenset, set[str]] = {k: set(m.split(";")) for k, m in zip(keys, mine["modes"], strict=True)}
        for mode in ("all", *lexicon.FAILURE_MODES):
            wanted = [k for k, m in planted.items() if mode in ("all", m)]
            found = sum(1 for k in wanted if planted[k] in found_modes.get(k, ()))
            flagged = [k for k in keys if mode == "all" or mode in found_modes[k]]
            correct = sum(1 for k in flagged if k in planted)
            rows.append(
                (
                    model,
                    mode,
                    len(wanted),
                    found,
                    found / len(wanted) if wanted else float("nan"),
                    len(flagged),
                    correct,
                    correct / len(flagged) if flagged else float("nan"),
                )
            )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)
