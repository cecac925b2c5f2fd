"""Rule-based perturbations of one sentence, one family per failure mode.

Type a sentence, get the variants the failure-mode paper tests by hand:
negation, numerical, entity or role swap, temporal, quantifier and hedging,
and any mode beyond the papers by the word swaps on its record (direction).
Every rule is deterministic and named (``Perturbation.rule``), and a mode the
sentence gives no handle for is reported with the reason instead of a
made-up variant.

The words, numbers, lemmas and the verb group the rules read come from
:mod:`core.lexicon` (lemminflect, offline); the rules supply the little
syntax they use: a verb group found from auxiliaries and finite verb forms,
with noun phrases on either side.  That is enough for the short declarative
sentences a probe is typed as; anything subtler is left alone and said so.
Every variant passes a self-check: :func:`core.lexicon.differs_by` must
recognise it as its mode (the validator and the guard ask the same), or it
goes to ``PerturbationReport.rejected`` instead of ``variants``.

Rules, per mode (each is a function below, tested on sentences it must and
must not change):

========== ===================== ================================================
mode       rule                  what it does
========== ===================== ================================================
negation   remove_not            "is not" / "isn't" -> "is"; "does not like" -> "likes"
negation   remove_never_no       "never X" -> "X"; "no" (determiner) -> "some"
negation   add_not_aux           "is" -> "is not" (first auxiliary or modal)
negation   add_not_do            "acquired" -> "did not acquire" (no auxiliary)
numerical  scale_number          each number × 10, unit kept ("5 mg" -> "50 mg");
                                 four-digit years are left to temporal; labels
                                 ("type 2", "Chapter 11"), dates and times too;
                                 the first MAX_NUMBERS_SCALED (20), the rest noted
numerical  scale_number_word     "three" -> "thirty" (two..nine), the first 20
entity     swap_entities         the first two names swap places ("Dr. Chen",
                                 "Mercy Hospital", "USB-C" stay whole)
entity     swap_roles            subject and object of the verb swap places
temporal   swap_temporal_word    before/after, yesterday/tomorrow, earlier/later,
                                 last/next, previously/subsequently, past/future
temporal   past_to_future        "acquired" -> "will acquire", "was" -> "will be"
temporal   future_to_past        "will acquire" -> "acquired"
temporal   present_to_past       "is" -> "was", "reduces" -> "reduced"
quantifier swap_quantifier       all/every -> some, no; some -> all, no; none ->
                                 all; few <-> many; most -> few
quantifier add_quantifier        "The patients" / "Patients" -> "All patients" /
                                 "Few patients"
hedging    remove_hedge          drops may/might/could/possibly/perhaps/likely/
                                 probably and "some evidence suggests that"
                                 (not a "may" of permission: "No one may enter")
hedging    add_hedge             "reduces" -> "may reduce"; "Some evidence
                                 suggests that ..." in front (names, "I" and
                                 acronyms keep their capital)
any other  swap_<mode>_word      a mode beyond the papers swaps the first word of
                                 its record's ``swaps`` ("increases" ->
                                 "decreases" for direction)
========== ===================== ================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from core import constants
from core.lexicon import MODE_RECORDS, FailureMode, differs_by
from core.lexicon.modes import is_permission_may, opens_question
from core.lexicon.morphology import inflect, is_participle, is_plural_noun, lemmas
from core.lexicon.numbers import SCALABLE_RE, TENFOLD_WORDS, is_label_or_date, is_year
from core.lexicon.verbs import Sentence, VerbGroup, find_verb_group
from core.lexicon.wordsets import (
    AUXILIARIES,
    BE_FORMS,
    CONTRACTIONS,
    DETERMINERS,
    DO_FORMS,
    HEDGE_PHRASES,
    HEDGE_PREFIX,
    HEDGE_WORDS,
    MODALS,
    NOT_VERBS,
    PHRASE_BREAKS,
    PLURAL_PRONOUNS,
    QUANTIFIER_SWAPS,
    TEMPORAL_SWAPS,
    TITLES,
)

NUMBER_SCALE = 10
# Each variant is the whole sentence and its self-check (differs_by) reads all of it, so one variant per number
# costs the square of the length: a 2,000-character line of numbers took 28 s.  Past this many numbers (digits,
# and number words, each rule on its own) the rest are counted in a note instead; a sentence holds far fewer.
MAX_NUMBERS_SCALED = 20


@dataclass(frozen=True)
class Perturbation:
    """One variant of the typed sentence.

    Attributes:
        mode: Failure mode (``core.lexicon.FAILURE_MODES``).
        rule: Name of the rule that made it (see the module table).
        text: The perturbed sentence.
        change: What changed, e.g. ``"is -> is not"``.
    """

    mode: str
    rule: str
    text: str
    change: str


@dataclass
class PerturbationReport:
    """Every variant of one sentence, and why the other modes have none.

    Attributes:
        text: The sentence as typed (stripped).
        variants: Variants in failure-mode order; no duplicates, none equal to ``text``.
        not_applicable: Failure mode -> plain-language reason it has no variant.
        rejected: Variants a rule wrote that :func:`core.lexicon.differs_by` does
            not recognise as their mode, left out of ``variants`` (the
            generator's self-check; ``tests/core/lexicon/`` keeps it empty).
        notes: What the user should know, e.g. that only the first
            :data:`MAX_NUMBERS_SCALED` numbers were scaled.
    """

    text: str
    variants: list[Perturbation] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)
    rejected: list[Perturbation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """Original-variant pairs as a long frame ``run_pairs`` accepts.

        Returns:
            One row per variant: ``pair_id``, ``suite``, ``category`` (the
            mode), ``rule``, ``change``, ``text_a`` (original), ``text_b``.
        """
        rows = [
            {
                constants.COL_PAIR_ID: f"perturb-{i + 1:02d}",
                constants.COL_SUITE: constants.SUITE_PERTURB,
                constants.COL_CATEGORY: v.mode,
                constants.COL_RULE: v.rule,
                constants.COL_CHANGE: v.change,
                constants.COL_TEXT_A: self.text,
                constants.COL_TEXT_B: v.text,
            }
            for i, v in enumerate(self.variants)
        ]
        columns = [
            constants.COL_PAIR_ID,
            constants.COL_SUITE,
            constants.COL_CATEGORY,
            constants.COL_RULE,
            constants.COL_CHANGE,
            constants.COL_TEXT_A,
            constants.COL_TEXT_B,
        ]
        return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ tokens


class _Sentence(Sentence):
    """A sentence as lossless tokens (:class:`core.lexicon.verbs.Sentence`) that joins back tidied."""

    def join(self, tokens: list[str] | None = None) -> str:
        return _tidy("".join(self.tokens if tokens is None else tokens))


def _tidy(text: str) -> str:
    """Collapse the double spaces a deletion leaves and capitalize the first letter."""
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r" {2,}", " ", text)).strip()
    return text[:1].upper() + text[1:] if text else text


def _match_case(new: str, old: str) -> str:
    if old.isupper() and len(old) > 1:
        return new.upper()
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def _subject_plural(s: _Sentence, verb_start: int) -> bool:
    """Whether the word right before the verb group at ``verb_start`` is plural (decides "was"/"were", "reduce"/"reduces")."""
    before = [i for i in s.words if i < verb_start]
    if not before:
        return False
    head = s.lower(before[-1])
    return head in PLURAL_PRONOUNS or is_plural_noun(head)


# ------------------------------------------------------------------ negation


def remove_not(s: _Sentence) -> list[Perturbation]:
    """Drop "not"/"n't" from a verb group; a "do" auxiliary goes too and the verb takes its tense."""
    t = list(s.tokens)
    words = s.words
    for pos, i in enumerate(words):
        w = s.lower(i)
        if w in CONTRACTIONS:
            base = CONTRACTIONS[w]
            t[i] = _match_case(base, s.tokens[i])
            change = f"{s.tokens[i]} -> {base}"
            aux_i, not_i = i, None
        elif w == "not" and pos > 0 and s.lower(words[pos - 1]) in AUXILIARIES:
            aux_i, not_i = words[pos - 1], i
            t[i] = ""
            change = f"{s.tokens[aux_i]} not -> {s.tokens[aux_i]}"
        else:
            continue
        aux = CONTRACTIONS.get(s.lower(aux_i), s.lower(aux_i))
        if aux in DO_FORMS:
            nxt = [j for j in words if j > (not_i if not_i is not None else aux_i)]
            if nxt and lemmas(s.tokens[nxt[0]]).get("VERB"):
                tag = {"does": "VBZ", "did": "VBD", "do": "VBP"}[aux]
                verb = inflect(s.lower(nxt[0]), tag)
                t[aux_i] = ""
                t[nxt[0]] = verb
                change = f"{s.tokens[aux_i]}{' not' if not_i is not None else ''} {s.tokens[nxt[0]]} -> {verb}"
        return [Perturbation(constants.CAT_NEGATION, "remove_not", s.join(t), change)]
    return []


def remove_never_no(s: _Sentence) -> list[Perturbation]:
    """Drop "never"; turn the determiner "no" into "some"."""
    out = []
    for i in s.words:
        w = s.lower(i)
        if w == "never":
            t = list(s.tokens)
            t[i] = ""
            out.append(Perturbation(constants.CAT_NEGATION, "remove_never_no", s.join(t), "never -> (removed)"))
        elif w == "no":
            nxt = [j for j in s.words if j > i]
            if not nxt or s.lower(nxt[0]) in PHRASE_BREAKS:
                continue  # "say no to": no determiner
            new = "some"  # fits plural, mass and singular nouns alike ("some evidence", "some patient")
            t = list(s.tokens)
            t[i] = _match_case(new, s.tokens[i])
            out.append(Perturbation(constants.CAT_NEGATION, "remove_never_no", s.join(t), f"no -> {new}"))
    return out[:1]


def add_not(s: _Sentence, clause: VerbGroup | None) -> list[Perturbation]:
    """Negate the verb group: "not" after its auxiliary, or "do"-support for a lone verb."""
    if clause is None:
        return []
    t = list(s.tokens)
    if clause.aux is not None:
        if any(s.lower(i) in {"not", "never"} or s.lower(i) in CONTRACTIONS for i in s.words if clause.start <= i <= clause.end):
            return []
        t[clause.start] = s.tokens[clause.start] + " not"
        return [Perturbation(constants.CAT_NEGATION, "add_not_aux", s.join(t), f"{s.tokens[clause.start]} -> {s.tokens[clause.start]} not")]
    do = {"VBD": "did", "VBZ": "does", "VBP": "do"}[clause.tag]
    t[clause.start] = f"{do} not {clause.lemma}"
    return [Perturbation(constants.CAT_NEGATION, "add_not_do", s.join(t), f"{s.tokens[clause.start]} -> {do} not {clause.lemma}")]


# ------------------------------------------------------------------ numerical


def _scaled(token: str) -> str | None:
    m = SCALABLE_RE.match(token)
    if not m or is_year(token):
        return None  # a year: shifting it is a temporal change, not a magnitude
    whole, frac, pct = m.groups()
    value = float(whole.replace(",", "") + (frac or ""))
    new = value * NUMBER_SCALE
    decimals = max(0, len(frac or "") - 1 - 1) if frac else 0
    text = f"{new:,.{decimals}f}" if "," in whole else f"{new:.{decimals}f}"
    if frac and float(text.replace(",", "")) != new:
        text = f"{new:g}"
    return text + pct


def _scalable_numbers(s: _Sentence) -> list[tuple[int, str]]:
    """(token index, scaled text) of every number :func:`scale_number` would scale, in order."""
    out = []
    for i in s.words:
        new = _scaled(s.tokens[i])
        if new is not None and not is_label_or_date(s.tokens, i):
            out.append((i, new))
    return out


def _number_words(s: _Sentence) -> list[tuple[int, str]]:
    """(token index, its tenfold word) of every spelled-out count :func:`scale_number_word` would scale, in order."""
    return [(i, new) for i in s.words if (new := TENFOLD_WORDS.get(s.lower(i))) is not None]


def scale_number(s: _Sentence, limit: int | None = None) -> list[Perturbation]:
    """Multiply each number by ten, one variant per number (the first ``limit``); the unit after it is untouched.

    Years, labels ("type 2", "Chapter 11"), dates ("March 5", "5/3/2024")
    and times ("10:30") are left alone: they name, not count.
    """
    out = []
    for i, new in _scalable_numbers(s)[:limit]:
        t = list(s.tokens)
        t[i] = new
        out.append(Perturbation(constants.CAT_NUMERICAL, "scale_number", s.join(t), f"{s.tokens[i]} -> {new}"))
    return out


def scale_number_word(s: _Sentence, limit: int | None = None) -> list[Perturbation]:
    """ "three" -> "thirty": a spelled-out count scaled by ten, the first ``limit`` ("one" is skipped: it is often a pronoun)."""
    out = []
    for i, new in _number_words(s)[:limit]:
        t = list(s.tokens)
        t[i] = _match_case(new, s.tokens[i])
        out.append(Perturbation(constants.CAT_NUMERICAL, "scale_number_word", s.join(t), f"{s.tokens[i]} -> {t[i]}"))
    return out


def _numbers_note(s: _Sentence) -> str | None:
    """Said when the sentence holds more numbers (or number words) than :data:`MAX_NUMBERS_SCALED`."""
    counts = {"numbers": len(_scalable_numbers(s)), "number words": len(_number_words(s))}
    over = [f"{n:,} {what}" for what, n in counts.items() if n > MAX_NUMBERS_SCALED]
    if not over:
        return None
    return (
        f"numerical: the text holds {' and '.join(over)}; the first {MAX_NUMBERS_SCALED} of each are scaled, one variant each "
        "(every variant repeats the whole text, so one per number would cost the square of its length)"
    )


# ------------------------------------------------------------------ entity / role swap


def _word_end(s: _Sentence, i: int) -> int:
    """The last token of the word at ``i`` with its hyphenated parts ("USB-C", "gluten-free")."""
    while i + 2 < len(s.tokens) and s.tokens[i + 1] == "-" and s.tokens[i + 2][:1].isalnum():
        i += 2
    return i


def _joins_name(s: _Sentence, end: int, nxt: int) -> bool:
    """Whether the capitalized word at ``nxt`` continues the name ending at ``end``: one space apart, or after a title ("Dr. Chen")."""
    if not s.tokens[nxt][:1].isupper():
        return False
    if nxt == end + 2 and s.tokens[end + 1] == " ":
        return True
    return s.lower(end) in TITLES and s.tokens[end + 1 : nxt] == [".", " "]


def _names(s: _Sentence) -> list[tuple[int, int]]:
    """Token spans of capitalized names ("Dr. Chen", "Mercy Hospital", "USB-C").

    A sentence-initial word counts only if it is a name (:func:`_starts_with_name`),
    a title, or the first of several capitalized words ("Mercy Hospital reported").
    A capital glued to a number ("4K") starts no name.
    """
    spans: list[tuple[int, int]] = []
    words = [i for i in s.words if not s.in_compound(i)]
    k = 0
    while k < len(words):
        i = words[k]
        tok = s.tokens[i]
        glued = i > 0 and s.tokens[i - 1][:1].isalnum()
        if tok[:1].isupper() and not glued:
            end, j = _word_end(s, i), k
            while j + 1 < len(words) and _joins_name(s, end, words[j + 1]):
                j += 1
                end = _word_end(s, words[j])
            several = j > k and s.lower(i) not in NOT_VERBS | AUXILIARIES
            if k > 0 or several or s.lower(i) in TITLES or _starts_with_name(s):
                spans.append((i, end))
                k = j + 1
                continue
        k += 1
    return spans


def _initial_is_name(s: _Sentence) -> bool:
    """Whether the first word is capitalized for being a name: the lexicon has no common-word reading of it.

    "Google" is listed only as a verb, so it is a name; "Revenue" and "The"
    are common words that are capitalized only for starting the sentence.
    """
    words = s.words
    if not words or not s.tokens[words[0]][:1].isupper() or s.lower(words[0]) in NOT_VERBS | AUXILIARIES:
        return False
    return not set(lemmas(s.tokens[words[0]])) & {"NOUN", "ADJ", "ADV", "PRON", "DET", "ADP", "CCONJ", "AUX"}


def _starts_with_name(s: _Sentence) -> bool:
    """A sentence starts with a name if its first word is one and the whole subject is capitalized."""
    words = s.words
    if not _initial_is_name(s):
        return False
    clause = find_verb_group(s)
    if clause is None:
        return False
    between = [i for i in words if i < clause.start]
    return all(s.tokens[i][:1].isupper() for i in between)


def _swap_spans(s: _Sentence, a: tuple[int, int], b: tuple[int, int], fix_case: bool = True) -> str:
    t = list(s.tokens)
    first = "".join(t[a[0] : a[1] + 1])
    second = "".join(t[b[0] : b[1] + 1])
    if fix_case and a[0] == s.words[0] and s.lower(a[0]) in DETERMINERS:
        # "The dog bit the man" -> "The man bit the dog": the moved phrase loses its sentence capital.
        first = first[:1].lower() + first[1:]
    new = t[: a[0]] + [second] + t[a[1] + 1 : b[0]] + [first] + t[b[1] + 1 :]
    return _tidy("".join(new))


def swap_entities(s: _Sentence) -> list[Perturbation]:
    """Swap the first two capitalized names ("from Paris to London" -> "from London to Paris")."""
    spans = _names(s)
    for k in range(len(spans) - 1):
        a, b = spans[k], spans[k + 1]
        first = "".join(s.tokens[a[0] : a[1] + 1])
        second = "".join(s.tokens[b[0] : b[1] + 1])
        if first != second:
            return [Perturbation(constants.CAT_ENTITY_SWAP, "swap_entities", _swap_spans(s, a, b), f"{first} <-> {second}")]
    return []


def _phrase_after(s: _Sentence, i: int) -> tuple[int, int] | None:
    """The noun phrase starting after token ``i``: up to a preposition, conjunction, determiner, number or punctuation.

    Hyphenated words stay whole ("USB-C", "gluten-free"); a number after the
    phrase is a measure ("beat Argentina 3-1"), not part of it.
    """
    words = [j for j in s.words if j > i and not s.in_compound(j)]
    if not words:
        return None
    start = words[0]
    if s.lower(start) in PHRASE_BREAKS or s.lower(start) in {"not", "never"}:
        return None
    end = _word_end(s, start)
    for j in words[1:]:
        if j <= end:
            continue
        gap = "".join(s.tokens[end + 1 : j])
        if gap.strip() or s.lower(j) in PHRASE_BREAKS or s.lower(j) in DETERMINERS or s.tokens[j][:1].isdigit():
            break  # a determiner starts the next phrase: "paid Orion Studios | a fee"
        end = _word_end(s, j)
    return start, end


def swap_roles(s: _Sentence, clause: VerbGroup | None) -> list[Perturbation]:
    """Swap subject and object of the verb ("The dog bit the man" -> "The man bit the dog").

    Passive "X was acquired by Y" swaps X and Y.  The subject is everything
    before the verb group (a name or a short noun phrase, no comma); the
    object is the noun phrase right after the main verb.
    """
    if clause is None:
        return []
    words = s.words
    subject = [i for i in words if i < clause.start]
    if not subject or len(subject) > 4 or "," in "".join(s.tokens[: clause.start]):
        return []
    subj = (subject[0], subject[-1])
    after = clause.end
    if clause.lemma == "be" and clause.end > clause.start:
        # "can be made by": a modal passive; the participle after "be" is the real verb
        nxt = [j for j in words if j > after]
        if nxt and is_participle(s.tokens[nxt[0]]):
            after = nxt[0]
    nxt = [j for j in words if j > after]
    passive = clause.aux in BE_FORMS or clause.lemma == "be"
    if passive and nxt and s.lower(nxt[0]) == "by":
        after = nxt[0]  # "X was acquired by Y": swap X and Y
    elif passive:
        return []  # a copula or a passive without its agent has no object to swap
    obj = _phrase_after(s, after)
    if obj is None:
        return []
    first = "".join(s.tokens[subj[0] : subj[1] + 1])
    second = "".join(s.tokens[obj[0] : obj[1] + 1])
    # "Revenue grew 15%": a quantity after the verb is a measure, not an object.
    if first.lower() == second.lower() or second[:1].isdigit() or first[:1].isdigit():
        return []
    return [Perturbation(constants.CAT_ENTITY_SWAP, "swap_roles", _swap_spans(s, subj, obj), f"{first} <-> {second}")]


# ------------------------------------------------------------------ temporal


def swap_temporal_word(s: _Sentence) -> list[Perturbation]:
    """Swap the first time word for its opposite (before/after, yesterday/tomorrow, ...)."""
    for i in s.words:
        new = TEMPORAL_SWAPS.get(s.lower(i))
        if new:
            t = list(s.tokens)
            t[i] = _match_case(new, s.tokens[i])
            return [Perturbation(constants.CAT_TEMPORAL, "swap_temporal_word", s.join(t), f"{s.tokens[i]} -> {t[i]}")]
    return []


def change_tense(s: _Sentence, clause: VerbGroup | None) -> list[Perturbation]:
    """Past -> future ("acquired" -> "will acquire"), future -> past, or present -> past, for simple verb groups only."""
    if clause is None:
        return []
    t = list(s.tokens)
    old = "".join(s.tokens[clause.start : clause.end + 1])
    if clause.aux is None and clause.tag == "VBD":
        t[clause.start] = f"will {clause.lemma}"
        return [Perturbation(constants.CAT_TEMPORAL, "past_to_future", s.join(t), f"{old} -> will {clause.lemma}")]
    if clause.aux in {"was", "were"}:
        t[clause.start] = "will be"
        new = "will be" + "".join(s.tokens[clause.start + 1 : clause.end + 1])
        return [Perturbation(constants.CAT_TEMPORAL, "past_to_future", s.join(t), f"{old} -> {new}")]
    if clause.aux in {"is", "are", "am"}:
        past = {"is": "was", "are": "were", "am": "was"}[clause.aux]
        t[clause.start] = _match_case(past, s.tokens[clause.start])
        return [Perturbation(constants.CAT_TEMPORAL, "present_to_past", s.join(t), f"{s.tokens[clause.start]} -> {past}")]
    if clause.aux is None and clause.tag in {"VBZ", "VBP"}:
        past = inflect(clause.lemma, "VBD")
        t[clause.start] = past
        return [Perturbation(constants.CAT_TEMPORAL, "present_to_past", s.join(t), f"{old} -> {past}")]
    if clause.aux == "will" and clause.end > clause.start:
        between = [i for i in s.words if clause.start < i < clause.end]
        if between:  # "will not go": leave negated futures alone
            return []
        plural = _subject_plural(s, clause.start)
        past = ("were" if plural else "was") if clause.lemma == "be" else inflect(clause.lemma, "VBD")
        t[clause.start : clause.end + 1] = [past]
        return [Perturbation(constants.CAT_TEMPORAL, "future_to_past", s.join(t), f"{old} -> {past}")]
    return []


# ------------------------------------------------------------------ quantifier


def swap_quantifier(s: _Sentence) -> list[Perturbation]:
    """Replace the first quantifier with each contrasting one ("all" -> "some", "no")."""
    for i in s.words:
        w = s.lower(i)
        if w not in QUANTIFIER_SWAPS:
            continue
        nxt = [j for j in s.words if j > i]
        # "no" and "some" are quantifiers only before a noun phrase ("no evidence", not "say no")
        if w in {"no", "some"} and (not nxt or s.lower(nxt[0]) in PHRASE_BREAKS):
            continue
        out = []
        for new in QUANTIFIER_SWAPS[w]:
            t = list(s.tokens)
            t[i] = _match_case(new, s.tokens[i])
            out.append(Perturbation(constants.CAT_QUANTIFIER, "swap_quantifier", s.join(t), f"{s.tokens[i]} -> {t[i]}"))
        return out
    return []


def add_quantifier(s: _Sentence) -> list[Perturbation]:
    """A definite or bare plural subject gets a quantifier.

    "The patients ..." / "Patients ..." -> "All patients ..." / "Few patients ...".
    """
    words = s.words
    if len(words) < 2:
        return []
    out = []
    if s.lower(words[0]) == "the" and is_plural_noun(s.tokens[words[1]]):
        for new in ("All", "Few"):
            t = list(s.tokens)
            t[words[0]] = new
            out.append(Perturbation(constants.CAT_QUANTIFIER, "add_quantifier", s.join(t), f"The -> {new}"))
        return out
    clause = find_verb_group(s)
    bare = s.tokens[words[0]]
    if clause is None or clause.start != words[1] or not is_plural_noun(bare) or _initial_is_name(s) or s.lower(words[0]) in NOT_VERBS:
        return []
    for new in ("All", "Few"):
        t = list(s.tokens)
        t[words[0]] = f"{new} {bare[:1].lower()}{bare[1:]}"
        out.append(Perturbation(constants.CAT_QUANTIFIER, "add_quantifier", s.join(t), f"{bare} -> {new} {bare.lower()}"))
    return out


# ------------------------------------------------------------------ hedging


def remove_hedge(s: _Sentence) -> list[Perturbation]:
    """Drop a hedge: a leading "some evidence suggests that" or a hedging word; "may reduce" -> "reduces".

    A "may" of permission ("No contractor may begin") and a modal that opens
    a question ("Could you tell me ...?") are no hedges and stay.
    """
    text = s.join()
    lowered = [s.lower(i) for i in s.words]
    for phrase in HEDGE_PHRASES:
        m = re.match(re.escape(phrase) + r"\s+", text, flags=re.IGNORECASE)
        if m:
            return [Perturbation(constants.CAT_HEDGING, "remove_hedge", _tidy(text[m.end() :]), f"{text[: m.end()].strip()} -> (removed)")]
    for pos, i in enumerate(s.words):
        w = s.lower(i)
        if w not in HEDGE_WORDS or is_permission_may(lowered, pos) or (pos == 0 and opens_question(text, lowered)):
            continue
        t = list(s.tokens)
        t[i] = ""
        change = f"{s.tokens[i]} -> (removed)"
        if w in MODALS:
            nxt = [j for j in s.words if j > i]
            if not nxt:
                continue
            verb = nxt[0]
            plural = _subject_plural(s, i)
            new = ("are" if plural else "is") if s.lower(verb) == "be" else inflect(s.lower(verb), "VBP" if plural else "VBZ")
            t[verb] = new
            change = f"{s.tokens[i]} {s.tokens[verb]} -> {new}"
        return [Perturbation(constants.CAT_HEDGING, "remove_hedge", s.join(t), change)]
    return []


def _keeps_capital(s: _Sentence) -> bool:
    """Whether the first word keeps its capital inside a sentence.

    It does for a name ("Google", "Mercy Hospital", "Dr. Chen"), "I", an
    acronym ("FDA") and a label before its number ("Chapter 11"); "The" and
    "Revenue" are capitalized only for starting the sentence.
    """
    first = s.tokens[s.words[0]]
    if first == "I" or sum(ch.isupper() for ch in first) > 1 or _initial_is_name(s) or s.names_a_number(s.words[0]):
        return True
    return any(start == s.words[0] for start, _ in _names(s))


def add_hedge(s: _Sentence, clause: VerbGroup | None) -> list[Perturbation]:
    """Hedge the claim: "may" before a lone verb ("reduces" -> "may reduce"), and a hedging lead-in."""
    out = []
    if clause is not None and clause.aux is None and clause.tag in {"VBZ", "VBP"}:
        t = list(s.tokens)
        t[clause.start] = f"may {clause.lemma}"
        out.append(Perturbation(constants.CAT_HEDGING, "add_hedge", s.join(t), f"{s.tokens[clause.start]} -> may {clause.lemma}"))
    elif clause is not None and clause.aux in {"is", "are"}:
        t = list(s.tokens)
        after = [i for i in s.words if i > clause.start]
        if after and s.lower(after[0]) == "not":
            # "is not allergic" -> "may not be allergic"
            t[clause.start], t[after[0]] = "may", "not be"
            change = f"{s.tokens[clause.start]} not -> may not be"
        else:
            t[clause.start] = "may be"
            change = f"{s.tokens[clause.start]} -> may be"
        out.append(Perturbation(constants.CAT_HEDGING, "add_hedge", s.join(t), change))
    if clause is None:
        return out  # a lead-in needs a statement to hedge: "Some evidence suggests that hello" is none
    text = s.join()
    body = text if _keeps_capital(s) else text[:1].lower() + text[1:]
    out.append(Perturbation(constants.CAT_HEDGING, "add_hedge", f"{HEDGE_PREFIX} {body}", f"(none) -> {HEDGE_PREFIX.lower()}"))
    return out


# ------------------------------------------------------------------ public API


def swap_word(s: _Sentence, record: FailureMode) -> list[Perturbation]:
    """Swap the first word of the record's swaps for its opposite ("increases" -> "decreases"): any mode with ``swaps``."""
    swaps = record.swaps or {}
    for i in s.words:
        new = swaps.get(s.lower(i))
        if new:
            t = list(s.tokens)
            t[i] = _match_case(new, s.tokens[i])
            return [Perturbation(record.name, f"swap_{record.name}_word", s.join(t), f"{s.tokens[i]} -> {t[i]}")]
    return []


def perturb(text: str) -> PerturbationReport:
    """Every rule-based variant of ``text``, grouped by failure mode.

    Args:
        text: One sentence.  Leading and trailing whitespace is ignored.

    Returns:
        A report with the variants (deduplicated, none equal to the input)
        and, for each mode with none, the reason.

    Raises:
        ValueError: If ``text`` is empty or has no word at all.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, not {type(text).__name__}")
    stripped = " ".join(text.split())
    if not stripped or not any(ch.isalnum() for ch in stripped):
        raise ValueError("type a sentence with at least one word")
    s = _Sentence(stripped)
    clause = find_verb_group(s)
    negation = remove_not(s) or remove_never_no(s)
    if not negation:
        negation = add_not(s, clause)
    # The papers' six modes read syntax with their own rules; any other mode swaps the words of its record.
    own_rules = {
        constants.CAT_NEGATION: negation,
        constants.CAT_NUMERICAL: scale_number(s, MAX_NUMBERS_SCALED) + scale_number_word(s, MAX_NUMBERS_SCALED),
        constants.CAT_ENTITY_SWAP: swap_entities(s) + swap_roles(s, clause),
        constants.CAT_TEMPORAL: swap_temporal_word(s) + change_tense(s, clause),
        constants.CAT_QUANTIFIER: swap_quantifier(s) or add_quantifier(s),
        constants.CAT_HEDGING: remove_hedge(s) or add_hedge(s, clause),
    }
    report = PerturbationReport(text=stripped, notes=list(filter(None, [_numbers_note(s)])))
    seen = {stripped}
    for record in MODE_RECORDS:
        mode = record.name
        kept: list[Perturbation] = []
        for v in own_rules[mode] if record.swaps is None else swap_word(s, record):
            if v.text in seen:
                continue
            seen.add(v.text)
            # The self-check: a variant its own mode does not recognise would be mislabelled.
            (kept if differs_by(mode, stripped, v.text) else report.rejected).append(v)
        if kept:
            report.variants.extend(kept)
        else:
            report.not_applicable[mode] = record.no_variant_reason
    return report
