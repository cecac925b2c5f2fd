"""The lexicon: what each failure mode is, in one home.

* :mod:`core.lexicon.wordsets`: every word list (negation cues, time words,
  quantifiers, hedges, the verb group's function words, swaps);
* :mod:`core.lexicon.numbers`: the one number parser (tokens, values, labels
  and dates that are not quantities);
* :mod:`core.lexicon.morphology`: the one cached lemma function and the verb
  forms built on it;
* :mod:`core.lexicon.verbs`: the verb group of a sentence and the tense of
  each verb;
* :mod:`core.lexicon.modes`: :func:`differs_by`, the predicate the validator
  (:mod:`core.files.validators`), the generator (:mod:`core.probes.perturb`)
  and the guard (:mod:`core.probes.retrieval.guard`) share.

A low layer: it imports ``core.constants`` and ``core.words`` only, never
models or scoring, so ``files`` and ``probes`` alike may use it.
"""

from core.lexicon.modes import MODES, differs_by, modes_differing, word_difference

__all__ = ["MODES", "differs_by", "modes_differing", "word_difference"]
