"""Invented words: plausible or random fabricated words under a model's tokenizer.

:func:`generate_words` makes *plausible* (English-like syllables, as the OOV
paper's words) or *random* (uniform letters, the paper's "xyzqwrt" control)
words, optionally with an exact number of subword pieces.  Every word is
guaranteed not to be a vocabulary entry of the tokenizer, not an English word
(lemminflect's lexicon), not the entity it replaces and not a duplicate.
Deterministic given a seed.  Why the package exists: ``core.probes.invented``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from core import constants
from core.lexicon.morphology import lemmas
from core.models.tokens import is_vocab_entry, word_pieces


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
    *(
        (c, 3)
        for c in ("bl", "br", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "kr", "pl", "pr", "tr", "st", "sp", "sk", "sl", "sn", "sm", "sw")
    ),
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
    *(
        (c, 2)
        for c in (
            "ck",
            "ld",
            "lk",
            "lm",
            "lp",
            "lt",
            "mp",
            "nd",
            "ng",
            "nk",
            "nt",
            "nx",
            "rb",
            "rd",
            "rk",
            "rm",
            "rn",
            "rp",
            "rt",
            "sk",
            "sp",
            "st",
            "th",
            "tz",
            "ft",
            "ct",
        )
    ),
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
    *(
        (e, 1)
        for e in (
            "a",
            "o",
            "ix",
            "ex",
            "ax",
            "ox",
            "ia",
            "ium",
            "on",
            "os",
            "is",
            "ar",
            "or",
            "el",
            "en",
            "an",
            "us",
            "ot",
            "ith",
            "ene",
            "ine",
            "ade",
            "ule",
            "eth",
            "ik",
        )
    )
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


def validate_request(
    n: int = 1, *, kind: str = constants.WORD_PLAUSIBLE, pieces: int | None = None, length: tuple[int, int] = constants.INVENTED_LENGTH
) -> None:
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
    if kind not in constants.WORD_KINDS:
        raise ValueError(f"kind must be one of {', '.join(constants.WORD_KINDS)}, got {kind!r}")
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
        raise ValueError(
            "pieces=1 can never work: a word that is a single piece is a vocabulary entry, so it is not out of vocabulary; ask for 2 or "
            "more"
        )
    if pieces < 1:
        raise ValueError(f"pieces must be 2 or more (a word of one piece is a vocabulary entry), got {pieces}")
    if pieces > hi:
        raise ValueError(
            f"pieces={pieces} cannot fit a word of at most {hi} letters (every piece holds at least one letter); raise the maximum length"
        )


def is_english_word(word: str) -> bool:
    """True when lemminflect's English lexicon knows ``word`` (any case, any inflection; the lexicon's cached lemmas)."""
    return bool(lemmas(word))


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
        raw = _plausible_in_range(rng, lo, hi) if kind == constants.WORD_PLAUSIBLE else _random_candidate(rng, lo, hi)
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
    kind: str = constants.WORD_PLAUSIBLE,
    pieces: int | None = None,
    length: tuple[int, int] = constants.INVENTED_LENGTH,
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

    Pieces are those of the word on its own (:func:`core.models.tokens.word_pieces`),
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
        max_attempts = constants.INVENTED_ATTEMPTS_PER_WORD * n
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
