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
  and kind, as a pairs table :func:`core.runner.run_pairs` accepts.
* :func:`oov_replicate_deltas` / :func:`oov_replicate_summary` turn the run
  into deltas (original cosine - replaced cosine) with bootstrap intervals per
  entity, per model, and plausible vs random.

Everything is deterministic given a seed.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core import constants as C
from core import stats
from core.suites import replace_entity
from core.tokens import is_vocab_entry, split_words, word_pieces

__all__ = [
    "InventedWord",
    "generate_words",
    "is_english_word",
    "oov_replacements",
    "oov_replicate_deltas",
    "oov_replicate_summary",
    "validate_request",
]

# ------------------------------------------------------------- inventories


@dataclass(frozen=True)
class _Table:
    """Weighted units, with cumulative weights precomputed for ``random.choices``."""

    units: tuple[str, ...]
    cum_weights: tuple[int, ...]


def _table(*pairs: tuple[str, int]) -> _Table:
    units, weights = zip(*pairs, strict=True)
    return _Table(tuple(units), tuple(itertools.accumulate(weights)))


# (unit, weight).  Onsets and codas are clusters English allows at a syllable
# edge; weights make single consonants commoner than clusters, as in English.
_ONSETS = _table(
    *((c, 6) for c in "bdfgklmnprstvwz"),
    *((c, 2) for c in ("h", "j", "ch", "sh", "th", "qu", "x")),
    *((c, 3) for c in ("bl", "br", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "kr", "pl", "pr", "tr", "st", "sp", "sk", "sl", "sn", "sm", "sw")),
    *((c, 1) for c in ("ph", "str", "spr", "scr", "wh", "zr", "vr")),
)
_NUCLEI = _table(
    *((v, 10) for v in "aeiou"),
    ("y", 2),
    *((v, 1) for v in ("ai", "au", "ea", "ee", "ei", "ia", "io", "oa", "oo", "ou", "oi")),
)
_CODAS = _table(
    ("", 30),
    *((c, 4) for c in ("b", "d", "g", "k", "l", "m", "n", "p", "r", "s", "t", "x", "z")),
    *((c, 2) for c in ("ck", "ld", "lk", "lm", "lp", "lt", "mp", "nd", "ng", "nk", "nt", "nx", "rb", "rd", "rk", "rm", "rn", "rp", "rt", "sk", "sp", "st", "th", "tz", "ft", "ct")),
)
# Inside a word: no "ck", which would meet the next onset as "ckk"/"ckb".
_MEDIAL_CODAS = _table(
    *((c, 4) for c in ("b", "d", "g", "k", "l", "m", "n", "p", "r", "s", "t", "x")),
    *((c, 1) for c in ("ld", "lt", "mp", "nd", "nt", "rk", "rn", "rt", "st")),
)
_SINGLE_VOWELS = _table(*((v, 1) for v in "aeiou"))
# Word endings like the paper's (-ix, -ia, -os, -ium): they make a string
# read as a name.  Neutral ones only; no "-mycin" or "-ware", which carry meaning.
_ENDINGS = _table(
    *((e, 1) for e in ("a", "o", "ix", "ex", "ax", "ox", "ia", "ium", "on", "os", "is", "ar", "or", "el", "en", "an", "us", "ot", "ith", "ene", "ine", "ade", "ule", "eth", "ik"))
)
# A consonant between a vowel-final stem and a vowel-initial ending.
_LINKS = _table(*((c, 1) for c in "lnrstvxz"))
_SYLLABLES = _table(("2", 5), ("3", 4), ("4", 1))
_ENDING_PROBABILITY = 0.4
_MEDIAL_CODA_PROBABILITY = 0.35
_VOWELS = frozenset("aeiouy")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_MAX_CONSONANT_RUN = 3
_MAX_VOWEL_RUN = 2
_MIN_LETTERS = 2
_MAX_LETTERS = 40


@dataclass(frozen=True)
class InventedWord:
    """One fabricated word and how the tokenizer splits it.

    Attributes:
        word: the word as it goes into a sentence (``"Wompelfritz"``).
        kind: ``"plausible"`` or ``"random"``.
        pieces: subword pieces under the tokenizer it was made for.
        n_pieces: ``len(pieces)``, always >= 2 (one piece = a vocabulary entry).
    """

    word: str
    kind: str
    pieces: tuple[str, ...]
    n_pieces: int

    def as_dict(self) -> dict:
        return {"word": self.word, "kind": self.kind, "pieces": list(self.pieces), "n_pieces": self.n_pieces}


# ------------------------------------------------------------- validation


def validate_request(n: int = 1, *, kind: str = C.WORD_PLAUSIBLE, pieces: int | None = None, length: tuple[int, int] = C.INVENTED_LENGTH) -> None:
    """Check a word request without a tokenizer (cheap, for early CLI errors).

    Args:
        n: words wanted, >= 1.
        kind: ``"plausible"`` or ``"random"``.
        pieces: exact subword pieces wanted, or None for any count >= 2.
        length: (min, max) letters, inclusive.

    Raises:
        TypeError: ``n`` or ``pieces`` is not a whole number.
        ValueError: with a message saying what is wrong and why.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be a whole number, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if kind not in C.WORD_KINDS:
        raise ValueError(f"kind must be one of {', '.join(C.WORD_KINDS)}, got {kind!r}")
    try:
        lo, hi = (int(v) for v in length)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"length must be (min, max) letters, got {length!r}") from exc
    if not _MIN_LETTERS <= lo <= hi <= _MAX_LETTERS:
        raise ValueError(f"length must satisfy {_MIN_LETTERS} <= min <= max <= {_MAX_LETTERS}, got {length!r}")
    if pieces is None:
        return
    if isinstance(pieces, bool) or not isinstance(pieces, int):
        raise TypeError(f"pieces must be a whole number or None, got {pieces!r}")
    if pieces == 1:
        raise ValueError("pieces=1 can never work: a word that is a single piece is a vocabulary entry, so it is not out of vocabulary; ask for 2 or more")
    if pieces < 1:
        raise ValueError(f"pieces must be 2 or more (a word of one piece is a vocabulary entry), got {pieces}")
    if pieces > hi:
        raise ValueError(f"pieces={pieces} cannot fit a word of at most {hi} letters (every piece holds at least one letter); raise the maximum length")


def is_english_word(word: str) -> bool:
    """True when lemminflect's English lexicon knows ``word`` (any case, any inflection)."""
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word.lower()))


# ------------------------------------------------------------- generation


def _pick(rng: random.Random, table: _Table) -> str:
    return rng.choices(table.units, cum_weights=table.cum_weights, k=1)[0]


def _runs_ok(word: str) -> bool:
    """No tripled letter, and consonant/vowel runs a speaker could say."""
    cons = vows = 0
    for i, ch in enumerate(word):
        if i >= 2 and ch == word[i - 1] == word[i - 2]:
            return False
        if ch in _VOWELS:
            vows, cons = vows + 1, 0
        else:
            cons, vows = cons + 1, 0
        if cons > _MAX_CONSONANT_RUN or vows > _MAX_VOWEL_RUN:
            return False
    return True


def _plausible_candidate(rng: random.Random) -> str:
    """One English-like word: 2-4 (onset) nucleus (coda) syllables, maybe an ending."""
    n_syll = int(_pick(rng, _SYLLABLES))
    parts: list[str] = []
    for i in range(n_syll):
        last = i == n_syll - 1
        # A vowel-initial first syllable now and then ("Ulvarix"), with a plain
        # vowel ("Oihelen" reads badly); later syllables always have an onset,
        # which keeps vowels from piling up across the join.
        if i == 0 and rng.random() < 0.15:
            onset, nucleus = "", _pick(rng, _SINGLE_VOWELS)
        else:
            onset, nucleus = _pick(rng, _ONSETS), _pick(rng, _NUCLEI)
        medial_coda = rng.random() < _MEDIAL_CODA_PROBABILITY
        coda = _pick(rng, _CODAS) if last else (_pick(rng, _MEDIAL_CODAS) if medial_coda else "")
        parts.append(onset + nucleus + coda)
    word = "".join(parts)
    if rng.random() < _ENDING_PROBABILITY:
        ending = _pick(rng, _ENDINGS)
        if word[-1] in _VOWELS:
            word += _pick(rng, _LINKS)
        word += ending
    return word


def _plausible_in_range(rng: random.Random, lo: int, hi: int) -> str:
    """A plausible candidate within the length range (rarely takes more than a few draws)."""
    while True:
        word = _plausible_candidate(rng)
        if lo <= len(word) <= hi and _runs_ok(word):
            return word


def _random_candidate(rng: random.Random, lo: int, hi: int) -> str:
    # Same length distribution as the plausible words (the length of a fresh
    # plausible draw), so the control differs in letters, not in size.
    size = len(_plausible_in_range(rng, lo, hi))
    return "".join(rng.choice(_LETTERS) for _ in range(size))


def _styled(word: str, capitalize: bool) -> str:
    return word.capitalize() if capitalize else word.lower()


def _acceptable(
    tokenizer,
    word: str,
    pieces: int | None,
    banned: set[str],
    substrings: Sequence[str],
    others: Sequence,
) -> tuple[str, ...] | None:
    """The word's pieces when it meets every guarantee, else None."""
    folded = word.casefold()
    if folded in banned or any(s in folded for s in substrings):
        return None
    split = tuple(word_pieces(tokenizer, word))
    if len(split) < 2 or (pieces is not None and len(split) != pieces):
        return None
    unk = getattr(tokenizer, "unk_token", None)
    if unk is not None and unk in split:
        return None
    # A cased vocabulary may hold the lower-case form as one entry even when
    # the capitalized form splits; in a sentence the word may appear either way.
    for tok in (tokenizer, *others):
        if is_vocab_entry(tok, word) or is_vocab_entry(tok, word.lower()):
            return None
    if is_english_word(word):
        return None
    return split


def _generate(
    tokenizer,
    n: int,
    kind: str,
    pieces: int | None,
    length: tuple[int, int],
    rng: random.Random,
    capitalize: bool,
    banned: set[str],
    substrings: Sequence[str],
    others: Sequence,
    max_attempts: int,
) -> list[InventedWord]:
    lo, hi = length
    out: list[InventedWord] = []
    attempts = 0
    while len(out) < n:
        if attempts >= max_attempts:
            want = f"{pieces} pieces" if pieces is not None else "2+ pieces"
            raise ValueError(
                f"found only {len(out)} of {n} {kind} words with {want} and {lo}-{hi} letters in {max_attempts} attempts; "
                "ask for fewer words, another piece count, or a wider length range"
            )
        attempts += 1
        raw = _plausible_in_range(rng, lo, hi) if kind == C.WORD_PLAUSIBLE else _random_candidate(rng, lo, hi)
        word = _styled(raw, capitalize)
        split = _acceptable(tokenizer, word, pieces, banned, substrings, others)
        if split is None:
            continue
        banned.add(word.casefold())
        out.append(InventedWord(word=word, kind=kind, pieces=split, n_pieces=len(split)))
    return out


def generate_words(
    tokenizer,
    n: int,
    *,
    kind: str = C.WORD_PLAUSIBLE,
    pieces: int | None = None,
    length: tuple[int, int] = C.INVENTED_LENGTH,
    seed: int = 0,
    capitalize: bool = True,
    entity: str | None = None,
    exclude: Iterable[str] = (),
    other_tokenizers: Sequence = (),
    max_attempts: int | None = None,
) -> list[InventedWord]:
    """Fabricated words that are out of vocabulary for a model's tokenizer.

    Candidates are drawn and rejected until ``n`` meet every guarantee:

    * not a single vocabulary entry of ``tokenizer`` or of any of
      ``other_tokenizers``, in the given case or lower-cased (so always
      at least 2 pieces, never [UNK]);
    * exactly ``pieces`` pieces under ``tokenizer`` when ``pieces`` is given;
    * not an English word or inflection (lemminflect's lexicon);
    * not ``entity``, and not containing it when it has 3+ letters
      ("Marsilo" for "Mars" would keep the entity's own piece);
    * not in ``exclude`` (case-insensitive) and no duplicates.

    Pieces are those of the word on its own (:func:`core.tokens.word_pieces`),
    which is how WordPiece splits it inside a sentence; a byte-level BPE
    tokenizer may split the in-sentence form (" word") differently.

    Args:
        tokenizer: a Hugging Face tokenizer; pieces are counted under it.
        n: words wanted, >= 1.
        kind: ``"plausible"`` (English-like syllables, like the OOV paper's
            "Wompelfritz") or ``"random"`` (uniform letters with the same
            length distribution, the paper's suggested "xyzqwrt" control).
        pieces: exact subword count wanted (>= 2), or None for any count.
        length: (min, max) letters, inclusive.
        seed: seed of the generator; the same arguments and seed give the
            same words.
        capitalize: "Xylophrix" when True, "xylophrix" when False.
        entity: the word being replaced, if any.
        exclude: words the result must not be (e.g. the sentence's other
            words, or words already used).
        other_tokenizers: more tokenizers whose vocabularies the words must
            also stay out of (pieces are still counted under ``tokenizer``).
        max_attempts: candidates tried before giving up; default
            ``INVENTED_ATTEMPTS_PER_WORD * n``.

    Returns:
        ``n`` :class:`InventedWord` in the order drawn.

    Raises:
        ValueError: for an impossible or malformed request (``pieces=1``, more
            pieces than letters, ...), or when ``max_attempts`` candidates did
            not yield ``n`` words.
    """
    validate_request(n, kind=kind, pieces=pieces, length=length)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be a whole number, got {seed!r}")
    if max_attempts is None:
        max_attempts = C.INVENTED_ATTEMPTS_PER_WORD * n
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    banned = {w.casefold() for w in exclude if isinstance(w, str) and w.strip()}
    substrings: list[str] = []
    if entity is not None and entity.strip():
        banned.add(entity.strip().casefold())
        if len(entity.strip()) >= 3:
            substrings.append(entity.strip().casefold())
    return _generate(
        tokenizer,
        n,
        kind,
        pieces,
        (int(length[0]), int(length[1])),
        random.Random(int(seed)),
        capitalize,
        banned,
        substrings,
        tuple(other_tokenizers),
        max_attempts,
    )


# ------------------------------------------------------------- OOV pairs


def _item_seed(seed: int, entity: str, kind: str) -> int:
    """A seed per (entity, kind): an entity's words do not change when other entities are added."""
    seq = np.random.SeedSequence([int(seed), zlib.crc32(entity.encode("utf-8")), C.WORD_KINDS.index(kind)])
    return int(seq.generate_state(1)[0])


def _case_like(entity: str) -> bool:
    # "Google", "DNA" -> "Xylophrix"; "penicillin" -> "flobnaxitol" (the paper's Table 2 style).
    return entity[:1].isupper()


_REQUIRED_ITEM_COLUMNS = (C.COL_PAIR_ID, C.COL_ENTITY, C.COL_TEXT_A, C.COL_TEXT_B)
_PASS_THROUGH = (C.COL_DOMAIN, C.COL_SOURCE)


def oov_replacements(
    items: pd.DataFrame,
    tokenizer,
    k: int = C.OOV_REPLICATES,
    *,
    kinds: Sequence[str] = C.WORD_KINDS,
    readings: Sequence[str] = (C.VARIANT_REPLACED_BOTH,),
    pieces: int | None = None,
    length: tuple[int, int] = C.INVENTED_LENGTH,
    seed: int = 0,
    other_tokenizers: Sequence = (),
) -> pd.DataFrame:
    """Pairs that replace each OOV entity with k invented words of each kind.

    Args:
        items: one row per OOV item (the raw suite, :func:`core.suites.read_suite_file`
            ``("oov")``, m rows) with ``pair_id``, ``entity``, ``text_a``,
            ``text_b``; rows already expanded into variants are reduced to
            their ``original`` row.
        tokenizer: pieces and vocabulary are judged under this tokenizer.
        k: invented words per entity and kind, >= 1.
        kinds: any of ``"plausible"``, ``"random"``.
        readings: ``replaced_both`` (entity replaced in both sentences) and/or
            ``replaced_b`` (second sentence only), as in :func:`core.suites.expand_oov`.
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
    if not kinds or any(kd not in C.WORD_KINDS for kd in kinds):
        raise ValueError(f"kinds must be a non-empty selection of {', '.join(C.WORD_KINDS)}, got {kinds!r}")
    readings = list(dict.fromkeys(readings))
    if not readings or any(r not in C.OOV_READINGS for r in readings):
        raise ValueError(f"readings must be a non-empty selection of {', '.join(C.OOV_READINGS)}, got {readings!r}")
    for kd in kinds:
        validate_request(k, kind=kd, pieces=pieces, length=length)
    data = items
    if C.COL_VARIANT in data.columns:
        data = data[data[C.COL_VARIANT].isin([C.VARIANT_ORIGINAL, "", None]) | data[C.COL_VARIANT].isna()]
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
        entity, a, b = str(item[C.COL_ENTITY]), str(item[C.COL_TEXT_A]), str(item[C.COL_TEXT_B])
        if not re.search(rf"\b{re.escape(entity)}\b", a + "\n" + b):
            raise ValueError(f"item {item[C.COL_PAIR_ID]}: entity {entity!r} does not occur as a word in its sentences")
        base = {
            C.COL_SUITE: C.SUITE_OOV_INVENTED,
            C.COL_CATEGORY: C.CAT_OOV,
            C.COL_PAIR_ID: item[C.COL_PAIR_ID],
            C.COL_ENTITY: entity,
            **{c: item[c] for c in extra},
        }
        rows.append({**base, C.COL_VARIANT: C.VARIANT_ORIGINAL, C.COL_KIND: "", C.COL_REPLICATE: 0, C.COL_REPLACEMENT: "", C.COL_N_PIECES: 0, C.COL_PIECES: "", C.COL_TEXT_A: a, C.COL_TEXT_B: b})
        # Words already in the pair are excluded so the invented word is the
        # only new word; words of the other kind too, so no word serves twice.
        exclude = [*split_words(a), *split_words(b)]
        for kind in kinds:
            words = generate_words(
                tokenizer, k, kind=kind, pieces=pieces, length=length, seed=_item_seed(seed, entity, kind),
                capitalize=_case_like(entity), entity=entity, exclude=exclude, other_tokenizers=others,
            )
            exclude += [w.word for w in words]
            for rep, w in enumerate(words, start=1):
                for reading in readings:
                    ta = replace_entity(a, entity, w.word) if reading == C.VARIANT_REPLACED_BOTH else a
                    tb = replace_entity(b, entity, w.word)
                    rows.append(
                        {**base, C.COL_VARIANT: reading, C.COL_KIND: kind, C.COL_REPLICATE: rep, C.COL_REPLACEMENT: w.word,
                         C.COL_N_PIECES: w.n_pieces, C.COL_PIECES: " ".join(w.pieces), C.COL_TEXT_A: ta, C.COL_TEXT_B: tb}
                    )
    cols = [C.COL_SUITE, C.COL_CATEGORY, C.COL_PAIR_ID, C.COL_ENTITY, *extra, C.COL_VARIANT, C.COL_KIND, C.COL_REPLICATE,
            C.COL_REPLACEMENT, C.COL_N_PIECES, C.COL_PIECES, C.COL_TEXT_A, C.COL_TEXT_B]
    return pd.DataFrame(rows, columns=cols)


# ------------------------------------------------------------- summaries

_DELTA_COLUMNS = [C.COL_MODEL, "reading", C.COL_PAIR_ID, C.COL_ENTITY, C.COL_KIND, C.COL_REPLICATE, C.COL_REPLACEMENT, C.COL_N_PIECES,
                  "cosine_original", "cosine_replaced", "delta"]


def oov_replicate_deltas(results: pd.DataFrame) -> pd.DataFrame:
    """One delta per model, reading, entity, kind and replicate.

    Args:
        results: runner output of :func:`oov_replacements` pairs (rows of
            other suites are ignored).

    Returns:
        Columns model, reading, pair_id, entity, kind, replicate, replacement,
        n_pieces, cosine_original, cosine_replaced, delta, where
        ``delta = cosine_original - cosine_replaced`` (:func:`core.stats.oov_delta`;
        positive = similarity lost to the invented word).

    Raises:
        ValueError: when a needed column is missing, or an item's original
            row is missing for a model.
    """
    needed = [C.COL_MODEL, C.COL_SUITE, C.COL_PAIR_ID, C.COL_VARIANT, C.COL_COSINE, C.COL_ENTITY, C.COL_KIND, C.COL_REPLICATE, C.COL_REPLACEMENT]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise ValueError(f"results lack columns {missing}; pass the runner output of oov_replacements pairs")
    data = results[results[C.COL_SUITE] == C.SUITE_OOV_INVENTED]
    if data.empty:
        return pd.DataFrame(columns=_DELTA_COLUMNS)
    original = data[data[C.COL_VARIANT] == C.VARIANT_ORIGINAL][[C.COL_MODEL, C.COL_PAIR_ID, C.COL_COSINE]]
    if original.duplicated([C.COL_MODEL, C.COL_PAIR_ID]).any():
        raise ValueError("more than one original row for a model and pair_id")
    replaced = data[data[C.COL_VARIANT] != C.VARIANT_ORIGINAL]
    merged = replaced.merge(original.rename(columns={C.COL_COSINE: "cosine_original"}), on=[C.COL_MODEL, C.COL_PAIR_ID], how="left")
    if merged["cosine_original"].isna().any():
        lost = merged.loc[merged["cosine_original"].isna(), C.COL_PAIR_ID].iloc[0]
        raise ValueError(f"no original row for pair {lost!r}")
    merged = merged.rename(columns={C.COL_COSINE: "cosine_replaced", C.COL_VARIANT: "reading"})
    if C.COL_N_PIECES not in merged.columns:
        merged[C.COL_N_PIECES] = np.nan
    merged["delta"] = stats.oov_delta(merged["cosine_original"].to_numpy(float), merged["cosine_replaced"].to_numpy(float)) if len(merged) else []
    return merged[_DELTA_COLUMNS].reset_index(drop=True)


def _ci(fn, *args, **kwargs) -> tuple[float, float]:
    try:
        return fn(*args, **kwargs)
    except ValueError:
        return (math.nan, math.nan)


def _safe(fn, *args) -> float:
    try:
        return float(fn(*args))
    except (ValueError, ZeroDivisionError):
        return math.nan


def oov_replicate_summary(
    results: pd.DataFrame,
    *,
    n_resamples: int = C.BOOTSTRAP_RESAMPLES,
    confidence: float = C.CONFIDENCE,
    seed: int = C.BOOTSTRAP_SEED,
) -> dict[str, pd.DataFrame]:
    """Mean delta with bootstrap intervals per entity, per model, and plausible vs random.

    Args:
        results: runner output of :func:`oov_replacements` pairs, or the
            output of :func:`oov_replicate_deltas` (recognized by its
            ``delta`` column).
        n_resamples, confidence, seed: passed to the :mod:`core.stats`
            bootstraps (percentile, seeded).

    Returns:
        ``{"by_entity", "by_model", "plausible_vs_random"}``:

        * by_entity: model, reading, entity, kind, n (replicates), mean_delta,
          sd_delta, ci_low, ci_high (bootstrap of the mean over the k
          replicates, :func:`core.stats.bootstrap_ci`), mean_pieces,
          cosine_original, words.
        * by_model: model, reading, kind, n_entities, n_words, mean_delta (mean
          of the entity means; equals the mean of all deltas when every
          entity has k words), sd_entity, ci_low, ci_high (bootstrap over
          entities, the independent unit: replicates of one entity share its
          sentences), min_entity, max_entity, mean_pieces.
        * plausible_vs_random: model, reading, n_entities, mean_plausible,
          mean_random, difference (plausible - random), ci_low, ci_high
          (paired bootstrap over entities of the entity means,
          :func:`core.stats.bootstrap_diff_ci`), cohens_d
          (:func:`core.stats.cohens_d` of all plausible vs all random
          deltas, pooled SD; positive = plausible words cost more
          similarity), mean_pieces_plausible, mean_pieces_random.  Empty
          unless both kinds were run.
    """
    deltas = results if "delta" in results.columns else oov_replicate_deltas(results)
    boot = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    by_entity = _by_entity(deltas, boot)
    return {
        "by_entity": by_entity,
        "by_model": _by_model(by_entity, boot),
        "plausible_vs_random": _plausible_vs_random(deltas, by_entity, boot),
    }


_ENTITY_COLUMNS = [C.COL_MODEL, "reading", C.COL_ENTITY, C.COL_KIND, "n", "mean_delta", "sd_delta", "ci_low", "ci_high", "mean_pieces", "cosine_original", "words"]
_MODEL_COLUMNS = [C.COL_MODEL, "reading", C.COL_KIND, "n_entities", "n_words", "mean_delta", "sd_entity", "ci_low", "ci_high", "min_entity", "max_entity", "mean_pieces"]
_COMPARE_COLUMNS = [C.COL_MODEL, "reading", "n_entities", "mean_plausible", "mean_random", "difference", "ci_low", "ci_high", "cohens_d",
                    "mean_pieces_plausible", "mean_pieces_random"]


def _by_entity(deltas: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading, entity, kind), g in deltas.groupby([C.COL_MODEL, "reading", C.COL_ENTITY, C.COL_KIND], sort=False):
        d = g["delta"].to_numpy(float)
        mean, sd = stats.mean_sd(d)
        lo, hi = _ci(stats.bootstrap_ci, d, "mean", **boot)
        rows.append({
            C.COL_MODEL: model, "reading": reading, C.COL_ENTITY: entity, C.COL_KIND: kind, "n": int(d.size),
            "mean_delta": mean, "sd_delta": sd, "ci_low": lo, "ci_high": hi,
            "mean_pieces": float(pd.to_numeric(g[C.COL_N_PIECES], errors="coerce").mean()),
            "cosine_original": float(g["cosine_original"].iloc[0]),
            "words": ", ".join(map(str, g[C.COL_REPLACEMENT])),
        })
    return pd.DataFrame(rows, columns=_ENTITY_COLUMNS)


def _by_model(by_entity: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading, kind), g in by_entity.groupby([C.COL_MODEL, "reading", C.COL_KIND], sort=False):
        means = g["mean_delta"].to_numpy(float)
        mean, sd = stats.mean_sd(means)
        lo, hi = _ci(stats.bootstrap_ci, means, "mean", **boot)
        rows.append({
            C.COL_MODEL: model, "reading": reading, C.COL_KIND: kind, "n_entities": int(means.size), "n_words": int(g["n"].sum()),
            "mean_delta": mean, "sd_entity": sd, "ci_low": lo, "ci_high": hi,
            "min_entity": float(means.min()), "max_entity": float(means.max()),
            "mean_pieces": float((g["mean_pieces"] * g["n"]).sum() / g["n"].sum()),
        })
    return pd.DataFrame(rows, columns=_MODEL_COLUMNS)


def _plausible_vs_random(deltas: pd.DataFrame, by_entity: pd.DataFrame, boot: dict) -> pd.DataFrame:
    rows = []
    for (model, reading), g in by_entity.groupby([C.COL_MODEL, "reading"], sort=False):
        wide = g.pivot_table(index=C.COL_ENTITY, columns=C.COL_KIND, values="mean_delta", sort=False)
        if not {C.WORD_PLAUSIBLE, C.WORD_RANDOM} <= set(wide.columns):
            continue
        # Paired by entity: both kinds replace the same entity in the same
        # sentences, so entity-to-entity variation cancels in the difference.
        wide = wide.dropna(subset=[C.WORD_PLAUSIBLE, C.WORD_RANDOM])
        plaus, rand = wide[C.WORD_PLAUSIBLE].to_numpy(float), wide[C.WORD_RANDOM].to_numpy(float)
        if plaus.size == 0:
            continue
        lo, hi = _ci(stats.bootstrap_diff_ci, plaus, rand, **boot)
        sel = deltas[(deltas[C.COL_MODEL] == model) & (deltas["reading"] == reading)]
        d_plaus = sel.loc[sel[C.COL_KIND] == C.WORD_PLAUSIBLE, "delta"].to_numpy(float)
        d_rand = sel.loc[sel[C.COL_KIND] == C.WORD_RANDOM, "delta"].to_numpy(float)
        pieces = pd.to_numeric(sel[C.COL_N_PIECES], errors="coerce")
        rows.append({
            C.COL_MODEL: model, "reading": reading, "n_entities": int(plaus.size),
            "mean_plausible": float(plaus.mean()), "mean_random": float(rand.mean()), "difference": float(plaus.mean() - rand.mean()),
            "ci_low": lo, "ci_high": hi, "cohens_d": _safe(stats.cohens_d, d_plaus, d_rand),
            "mean_pieces_plausible": float(pieces[sel[C.COL_KIND] == C.WORD_PLAUSIBLE].mean()),
            "mean_pieces_random": float(pieces[sel[C.COL_KIND] == C.WORD_RANDOM].mean()),
        })
    return pd.DataFrame(rows, columns=_COMPARE_COLUMNS)


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
            C.COL_PAIR_ID: f"slot-{i + 1:02d}",
            C.COL_SUITE: C.SUITE_OOV_SLOT,
            C.COL_CATEGORY: C.CAT_OOV,
            C.COL_KIND: w.kind,
            C.COL_REPLACEMENT: w.word,
            C.COL_N_PIECES: w.n_pieces,
            C.COL_TEXT_A: sentence,
            C.COL_TEXT_B: replace_entity(sentence, entity, w.word),
        }
        for i, w in enumerate(words)
    ]
    return pd.DataFrame(rows)

