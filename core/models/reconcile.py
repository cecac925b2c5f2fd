"""The registry's record of a model against the model actually loaded: the loaded model wins, a note says so.

The registry holds each papers' model as published (pinned revision,
dimension, tokens kept, pooling, prompt).  A user's copy can differ: another
snapshot in their Hugging Face cache, a fine-tune saved under the same id, a
tiny stand-in in the tests.  Encoding always follows the weights that were
loaded (sentence-transformers honours the model's own pooling and length
config), so the record is corrected to match them and every correction is
reported in one sentence a user can read beside the results.

The prompt is the exception: it is part of how the papers ran a model, so the
registry's prompt is applied as written.  A model's own *default* prompt
(``default_prompt_name`` in its sentence-transformers config) is applied only
to models the registry does not know, and always said.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.models.registry import REGISTRY, ModelMeta


@dataclass(frozen=True)
class Observed:
    """What a loaded model reports about itself.

    Attributes:
        dimension: length of its embeddings.
        max_seq_length: tokens kept per text, special tokens included.
        pooling: ``cls``, ``mean``, … or ``unknown``.
        default_prompt: the prompt its config would add by default, or "".
        revision: the Hugging Face commit whose snapshot was loaded, or None
            when the weights did not come from a hub cache snapshot.
    """

    dimension: int
    max_seq_length: int
    pooling: str = "unknown"
    default_prompt: str = ""
    revision: str | None = None


def reconcile(meta: ModelMeta, observed: Observed) -> tuple[ModelMeta, tuple[str, ...]]:
    """The record of what was loaded, and one note per way it departs from the registry.

    Args:
        meta: the registry's record (or one built on the fly for an unknown id).
        observed: what the loaded model reports.

    Returns:
        ``meta`` with dimension, max_seq_length, pooling, revision and prompt
        set to what encoding really uses, and the notes (possibly none).

    Raises:
        ValueError: when the observed dimension or token limit is not positive.
    """
    if observed.dimension < 1 or observed.max_seq_length < 1:
        raise ValueError(f"observed dimension and max_seq_length must be positive; got {observed.dimension} and {observed.max_seq_length}")
    notes = [note for note in (_revision_note(meta, observed.revision), *_metadata_notes(meta, observed)) if note]
    prompt, prompt_note = _prompt(meta, observed.default_prompt)
    if prompt_note:
        notes.append(prompt_note)
    effective = dataclasses.replace(
        meta,
        dimension=observed.dimension,
        max_seq_length=observed.max_seq_length,
        pooling=observed.pooling if observed.pooling != "unknown" else meta.pooling,
        revision=observed.revision or meta.revision,
        prompt=prompt,
    )
    return effective, tuple(notes)


def _revision_note(meta: ModelMeta, loaded: str | None) -> str | None:
    if loaded is None or meta.revision is None or loaded == meta.revision:
        return None
    return (
        f"the pinned revision {meta.revision[:12]} is not in the local Hugging Face cache; "
        f"using the cached snapshot {loaded[:12]}, whose weights may differ from the ones the papers measured"
    )


def _metadata_notes(meta: ModelMeta, observed: Observed) -> list[str]:
    notes = []
    if meta.dimension is not None and meta.dimension != observed.dimension:
        notes.append(
            f"the loaded model's embeddings have {observed.dimension} dimensions, the registry says {meta.dimension}; using the loaded "
            "model's"
        )
    if meta.max_seq_length is not None and meta.max_seq_length != observed.max_seq_length:
        notes.append(
            f"the loaded model keeps {observed.max_seq_length} tokens per text, the registry says {meta.max_seq_length}; "
            "truncation follows the loaded model"
        )
    if observed.pooling != "unknown" and meta.name in REGISTRY and meta.pooling != observed.pooling:
        notes.append(f"the loaded model pools by {observed.pooling}, the registry says {meta.pooling}; using the loaded model's pooling")
    return notes


def _prompt(meta: ModelMeta, default_prompt: str) -> tuple[str, str | None]:
    """The prompt to prepend, and a note when the model's own default prompt is involved."""
    if not default_prompt or default_prompt == meta.prompt:
        return meta.prompt, None
    if meta.name not in REGISTRY:
        return default_prompt, f"applying the model's default prompt {default_prompt!r} from its sentence-transformers config"
    used = f"the registry's prompt {meta.prompt!r} is" if meta.prompt else "no prompt is"
    return meta.prompt, f"the model's config sets a default prompt {default_prompt!r}; {used} applied, as the papers ran it"
