"""The lexicon: what each failure mode is, in one home.

* :mod:`core.lexicon.wordsets`: every word list (negation cues, time words,
  quantifiers, hedges, the verb group's function words, swaps);
* :mod:`core.lexicon.numbers`: the one number parser (tokens, values, labels
  and dates that are not quantities);
* :mod:`core.lexicon.morphology`: the one cached lemma function and the verb
  forms built on it;
* :mod:`core.lexicon.verbs`: the verb group of a sentence and the tense of
  each verb;
* :mod:`core.lexicon.antonyms`: WordNet's antonyms (shipped under
  ``data/lexicon/``), so a negated antonym reads as the same meaning;
* :mod:`core.lexicon.modes`: one record per failure mode (:class:`FailureMode`
  in :data:`MODE_RECORDS`: name, label, order, suite counts, cues, the pair and
  variant rules, the generator's swaps, the reason text) from which every list
  of modes derives, and :func:`differs_by`, the predicate the validator
  (:mod:`core.files.validators`), the generator (:mod:`core.probes.perturb`)
  and the guard (:mod:`core.probes.retrieval.guard`) share.

A low layer: it imports ``core.constants`` and ``core.words`` only, never
models or scoring, so ``files`` and ``probes`` alike may use it.
"""

from core.lexicon.modes import (
    ADVERSARIAL_CATEGORIES,
    CATEGORY_LABELS,
    EXTENSION_MODES,
    FAILURE_MODES,
    MODE_RECORDS,
    MODES,
    PAPER_MODES,
    SUITE_COUNTS,
    FailureMode,
    differs_by,
    mode_record,
    modes_differing,
    modes_in_words,
    unexplained,
    word_difference,
)

__all__ = [
    "ADVERSARIAL_CATEGORIES",
    "CATEGORY_LABELS",
    "EXTENSION_MODES",
    "FAILURE_MODES",
    "MODES",
    "MODE_RECORDS",
    "PAPER_MODES",
    "SUITE_COUNTS",
    "FailureMode",
    "differs_by",
    "mode_record",
    "modes_differing",
    "modes_in_words",
    "unexplained",
    "word_difference",
]
