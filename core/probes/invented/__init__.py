"""Invented words for OOV probes, and the OOV measurement with k of them per entity.

The OOV paper replaces each of 20 known entities with ONE hand-made word
("Einstein" -> "Wompelfritz") and names two limits of that design: a single
word per entity, and no purely random control.  This module lifts both:

* :func:`generate_words` makes fabricated words under a model's tokenizer,
  either *plausible* (English-like syllables, as the paper's words) or
  *random* (uniform letters, the paper's "xyzqwrt" control), optionally with
  an exact number of subword pieces.  Every word is guaranteed not to be a
  vocabulary entry of the tokenizer, not an English word (lemminflect's
  lexicon), not the entity it replaces and not a duplicate.
* :func:`oov_replacements` turns the OOV suite into k replacements per entity
  and kind, as a pairs table :func:`core.scoring.runner.run_pairs` accepts.
* :func:`oov_replicate_deltas` / :func:`oov_replicate_summary` turn the run
  into deltas (original cosine - replaced cosine) with bootstrap intervals per
  entity, per model, and plausible vs random.

Everything is deterministic given a seed.

Modules: :mod:`.words` (generation), :mod:`.pairs` (replacement and slot
pairs), :mod:`.summary` (deltas and their intervals).
"""

from core.probes.invented.pairs import oov_replacements, slot_pairs
from core.probes.invented.summary import invented_findings, oov_replicate_deltas, oov_replicate_summary, slot_table
from core.probes.invented.words import InventedWord, generate_words, is_english_word, validate_request

__all__ = [
    "InventedWord",
    "invented_findings",
    "generate_words",
    "is_english_word",
    "oov_replacements",
    "oov_replicate_deltas",
    "oov_replicate_summary",
    "slot_pairs",
    "slot_table",
    "validate_request",
]
