"""Pairs with invented words: k replacements per OOV entity and kind, and slot pairs for a typed sentence."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from core import constants
from core.papers.suites import replace_entity
from core.probes.invented.words import InventedWord, generate_words, validate_request
from core.words import pretokenizer_words


def _item_seed(seed: int, entity: str, kind: str) -> int:
    """A seed per (entity, kind): an entity's words do not change when other entities are added."""
    seq = np.random.SeedSequence([int(seed), zlib.crc32(entity.encode("utf-8")), constants.WORD_KINDS.index(kind)])
    return int(seq.generate_state(1)[0])


def _case_like(entity: str) -> bool:
    # "Google", "DNA" -> "Xylophrix"; "penicillin" -> "flobnaxitol" (the paper's Table 2 style).
    return entity[:1].isupper()


_REQUIRED_ITEM_COLUMNS = (constants.COL_PAIR_ID, constants.COL_ENTITY, constants.COL_TEXT_A, constants.COL_TEXT_B)


_PASS_THROUGH = (constants.COL_DOMAIN, constants.COL_SOURCE)


def oov_replacements(
    items: pd.DataFrame,
    tokenizer,
    k: int = constants.OOV_REPLICATES,
    *,
    kinds: Sequence[str] = constants.WORD_KINDS,
    readings: Sequence[str] = (constants.OOV_DEFAULT_READING,),
    pieces: int | None = None,
    length: tuple[int, int] = constants.INVENTED_LENGTH,
    seed: int = 0,
    other_tokenizers: Sequence = (),
) -> pd.DataFrame:
    """Pairs that replace each OOV entity with k invented words of each kind.

    Args:
        items: one row per OOV item (the raw suite, :func:`core.papers.suites.read_suite_file`
            ``("oov")``, m rows) with ``pair_id``, ``entity``, ``text_a``,
            ``text_b``; rows already expanded into variants are reduced to
            their ``original`` row.
        tokenizer: pieces and vocabulary are judged under this tokenizer.
        k: invented words per entity and kind, >= 1.
        kinds: any of ``"plausible"``, ``"random"``.
        readings: ``replaced_both`` (entity replaced in both sentences) and/or
            ``replaced_b`` (second sentence only), as in :func:`core.papers.suites.expand_oov`.
        pieces: exact subword count per word, or None for the natural count.
        length: (min, max) letters of each word.
        seed: base seed; each (entity, kind) gets its own derived seed.
        other_tokenizers: the words must be out of these vocabularies too
            (pass every model that will score the pairs).

    Returns:
        ``m * (1 + len(kinds) * k * len(readings))`` rows, suite
        ``oov-invented``: per item one ``original`` row (replicate 0, empty
        kind and replacement) and one row per kind, replicate 1..k and
        reading, with columns suite, category, pair_id, entity, variant,
        kind, replicate, replacement (the invented word), n_pieces, pieces
        (space-joined), text_a, text_b, plus domain/source when present.
        The same invented word serves every reading of a replicate.

    Raises:
        ValueError: missing columns, an entity absent from its sentences,
            bad k/kinds/readings, or an impossible word request.
    """
    missing = [c for c in _REQUIRED_ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ValueError(f"OOV items lack columns {missing}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be a whole number, got {k!r}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    kinds = list(dict.fromkeys(kinds))
    if not kinds or any(kd not in constants.WORD_KINDS for kd in kinds):
        raise ValueError(f"kinds must be a non-empty selection of {', '.join(constants.WORD_KINDS)}, got {kinds!r}")
    readings = list(dict.fromkeys(readings))
    if not readings or any(r not in constants.OOV_READINGS for r in readings):
        raise ValueError(f"readings must be a non-empty selection of {', '.join(constants.OOV_READINGS)}, got {readings!r}")
    for kd in kinds:
        validate_request(k, kind=kd, pieces=pieces, length=length)
    data = items
    if constants.COL_VARIANT in data.columns:
        data = data[data[constants.COL_VARIANT].isin([constants.VARIANT_ORIGINAL, "", None]) | data[constants.COL_VARIANT].isna()]
    return _replacement_rows(data, tokenizer, k, kinds, readings, pieces, length, seed, tuple(other_tokenizers))


def _replacement_rows(
    data: pd.DataFrame,
    tokenizer,
    k: int,
    kinds: list[str],
    readings: list[str],
    pieces: int | None,
    length: tuple[int, int],
    seed: int,
    others: tuple,
) -> pd.DataFrame:
    rows: list[dict] = []
    extra = [c for c in _PASS_THROUGH if c in data.columns]
    for item in data.to_dict("records"):
        entity, a, b = str(item[constants.COL_ENTITY]), str(item[constants.COL_TEXT_A]), str(item[constants.COL_TEXT_B])
        if not re.search(rf"\b{re.escape(entity)}\b", a + "\n" + b):
            raise ValueError(f"item {item[constants.COL_PAIR_ID]}: entity {entity!r} does not occur as a word in its sentences")
        base = {
            constants.COL_SUITE: constants.SUITE_OOV_INVENTED,
            constants.COL_CATEGORY: constants.CAT_OOV,
            constants.COL_PAIR_ID: item[constants.COL_PAIR_ID],
            constants.COL_ENTITY: entity,
            **{c: item[c] for c in extra},
        }
        rows.append(
            {
                **base,
                constants.COL_VARIANT: constants.VARIANT_ORIGINAL,
                constants.COL_KIND: "",
                constants.COL_REPLICATE: 0,
                constants.COL_REPLACEMENT: "",
                constants.COL_N_PIECES: 0,
                constants.COL_PIECES: "",
                constants.COL_TEXT_A: a,
                constants.COL_TEXT_B: b,
            }
        )
        # Words already in the pair are excluded so the invented word is the
        # only new word; words of the other kind too, so no word serves twice.
        exclude = [*pretokenizer_words(a), *pretokenizer_words(b)]
        for kind in kinds:
            words = generate_words(
                tokenizer,
                k,
                kind=kind,
                pieces=pieces,
                length=length,
                seed=_item_seed(seed, entity, kind),
                capitalize=_case_like(entity),
                entity=entity,
                exclude=exclude,
                other_tokenizers=others,
            )
            exclude += [w.word for w in words]
            for rep, w in enumerate(words, start=1):
                for reading in readings:
                    ta = replace_entity(a, entity, w.word) if reading == constants.VARIANT_REPLACED_BOTH else a
                    tb = replace_entity(b, entity, w.word)
                    rows.append(
                        {
                            **base,
                            constants.COL_VARIANT: reading,
                            constants.COL_KIND: kind,
                            constants.COL_REPLICATE: rep,
                            constants.COL_REPLACEMENT: w.word,
                            constants.COL_N_PIECES: w.n_pieces,
                            constants.COL_PIECES: " ".join(w.pieces),
                            constants.COL_TEXT_A: ta,
                            constants.COL_TEXT_B: tb,
                        }
                    )
    cols = [
        constants.COL_SUITE,
        constants.COL_CATEGORY,
        constants.COL_PAIR_ID,
        constants.COL_ENTITY,
        *extra,
        constants.COL_VARIANT,
        constants.COL_KIND,
        constants.COL_REPLICATE,
        constants.COL_REPLACEMENT,
        constants.COL_N_PIECES,
        constants.COL_PIECES,
        constants.COL_TEXT_A,
        constants.COL_TEXT_B,
    ]
    return pd.DataFrame(rows, columns=cols)


def slot_pairs(sentence: str, entity: str, words: Sequence[InventedWord]) -> pd.DataFrame:
    """The typed sentence against itself with ``entity`` replaced by each invented word.

    Args:
        sentence: A sentence that contains ``entity`` as a whole word.
        entity: The word to replace (case-sensitive, as in the OOV suite).
        words: Invented words, e.g. from :func:`generate_words`.

    Returns:
        One pair per word, ready for ``run_pairs``: pair_id, suite, category,
        kind, replacement, n_pieces, text_a (the sentence), text_b.

    Raises:
        ValueError: If the sentence or entity is empty, or the entity is not a
            whole word of the sentence.
    """
    if not sentence or not sentence.strip() or not entity or not entity.strip():
        raise ValueError("give both a sentence and the word in it to replace")
    if replace_entity(sentence, entity, "\0") == sentence:
        raise ValueError(f"{entity!r} is not a whole word of the sentence (the match is case-sensitive)")
    rows = [
        {
            constants.COL_PAIR_ID: f"slot-{i + 1:02d}",
            constants.COL_SUITE: constants.SUITE_OOV_SLOT,
            constants.COL_CATEGORY: constants.CAT_OOV,
            constants.COL_KIND: w.kind,
            constants.COL_REPLACEMENT: w.word,
            constants.COL_N_PIECES: w.n_pieces,
            constants.COL_TEXT_A: sentence,
            constants.COL_TEXT_B: replace_entity(sentence, entity, w.word),
        }
        for i, w in enumerate(words)
    ]
    return pd.DataFrame(rows)
