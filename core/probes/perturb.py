"""Rule-based perturbations of one sentence, one family per failure mode.

Type a sentence, get the variants the failure-mode paper tests by hand:
negation, numerical, entity or role swap, temporal, quantifier and hedging.
Every rule is deterministic and named (``Perturbation.rule``), and a mode the
sentence gives no handle for is reported with the reason instead of a
made-up variant.

Why rules and lemminflect rather than a parser: spaCy's English models and
NLTK's tagger data download from GitHub at run time, which fails offline;
lemminflect ships its English lexicon inside its wheel.  It supplies what the
rules need, lemmas and inflections ("acquired" -> "acquire" -> "will
acquire"), and the rules supply the little syntax they use: a verb group
found from auxiliaries and finite verb forms, with noun phrases on either
side.  That is enough for the short declarative sentences a probe is
typed as; anything subtler is left alone and said so.

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
                                 four-digit years are left to temporal
numerical  scale_number_word     "three" -> "thirty" (two..nine)
entity     swap_entities         the first two capitalized names swap places
entity     swap_roles            subject and object of the verb swap places
temporal   swap_temporal_word    before/after, yesterday/tomorrow, earlier/later,
                                 last/next, previously/subsequently, past/future
temporal   past_to_future        "acquired" -> "will acquire", "was" -> "will be"
temporal   future_to_past        "will acquire" -> "acquired"
temporal   present_to_past       "is" -> "was", "reduces" -> "reduced"
quantifier swap_quantifier       all/every -> some, no; some -> all, no; none ->
                                 all; few <-> many; most -> few
quantifier add_quantifier        "The patients" -> "All patients" / "Few patients"
hedging    remove_hedge          drops may/might/could/possibly/perhaps/likely/
                                 probably and "some evidence suggests that"
hedging    add_hedge             "reduces" -> "may reduce"; "Some evidence
                                 suggests that ..." in front
========== ===================== ================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from core import constants
from core.words import surface_tokens

# ------------------------------------------------------------------ vocabulary

_NUMBER_RE = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)$")

DETERMINERS = {
    "a", "an", "the", "this", "that", "these", "those", "its", "his", "her", "their", "our", "my", "your",
    "each", "every", "all", "some", "no", "any", "many", "few", "most", "several", "both",
}
PRONOUN_SUBJECTS = {"i", "we", "you", "they", "he", "she", "it"}
PLURAL_PRONOUNS = {"we", "you", "they", "i"}
BE_FORMS = {"is", "are", "was", "were", "am"}
HAVE_FORMS = {"has", "have", "had"}
DO_FORMS = {"do", "does", "did"}
MODALS = {"will", "would", "can", "could", "shall", "should", "may", "might", "must"}
AUXILIARIES = BE_FORMS | HAVE_FORMS | DO_FORMS | MODALS
# Words that end a noun phrase: the object of "acquired" in "acquired YouTube in 2006" is "YouTube".
PHRASE_BREAKS = {
    "in", "on", "at", "for", "with", "from", "to", "by", "after", "before", "during", "since", "because",
    "and", "or", "but", "that", "which", "who", "when", "while", "if", "than", "as", "into", "over",
    "under", "between", "without", "within", "yesterday", "today", "tomorrow", "last", "next",
}
# Not verbs even though the lexicon lists a verb reading ("patient", "report" are handled by position).
NOT_VERBS = DETERMINERS | PHRASE_BREAKS | PRONOUN_SUBJECTS | {
    "not", "never", "very", "also", "only", "just", "more", "less", "than", "of", "new", "one", "up",
    "down", "out", "off", "there", "here", "then", "now", "so", "such", "none", "much", "too",
}
CONTRACTIONS = {
    "isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "doesn't": "does", "don't": "do",
    "didn't": "did", "can't": "can", "won't": "will", "shouldn't": "should", "couldn't": "could",
    "wouldn't": "would", "hasn't": "has", "haven't": "have", "hadn't": "had", "mustn't": "must",
}
TEMPORAL_SWAPS = {
    "before": "after", "after": "before", "yesterday": "tomorrow", "tomorrow": "yesterday",
    "earlier": "later", "later": "earlier", "last": "next", "next": "last",
    "previously": "subsequently", "subsequently": "previously", "past": "future", "future": "past",
    "prior": "subsequent", "subsequent": "prior",
}
QUANTIFIER_SWAPS = {
    "all": ("some", "no"), "every": ("no",), "some": ("all", "no"), "none": ("all",),
    "few": ("many",), "many": ("few",), "most": ("few",), "no": ("all", "some"),
}
NUMBER_WORDS = {
    "two": "twenty", "three": "thirty", "four": "forty", "five": "fifty", "six": "sixty",
    "seven": "seventy", "eight": "eighty", "nine": "ninety",
}
HEDGE_WORDS = {"may", "might", "could", "possibly", "perhaps", "likely", "probably", "potentially"}
HEDGE_PHRASES = (
    "some evidence suggests that",
    "there is some evidence that",
    "it is possible that",
    "it appears that",
    "it seems that",
)
HEDGE_PREFIX = "Some evidence suggests that"
YEAR_RANGE = (1800, 2100)
NUMBER_SCALE = 10


@dataclass(frozen=True)
class Perturbation:
    """One variant of the typed sentence.

    Attributes:
        mode: Failure mode (``core.constants.FAILURE_MODES``).
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
    """

    text: str
    variants: list[Perturbation] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)

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
        columns = [constants.COL_PAIR_ID, constants.COL_SUITE, constants.COL_CATEGORY, constants.COL_RULE, constants.COL_CHANGE, constants.COL_TEXT_A, constants.COL_TEXT_B]
        return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ tokens


class _Sentence:
    """A sentence as word, number, punctuation and whitespace tokens that join back losslessly."""

    def __init__(self, text: str):
        self.tokens: list[str] = surface_tokens(text)

    @property
    def words(self) -> list[int]:
        """Indices of the non-space, non-punctuation tokens."""
        return [i for i, t in enumerate(self.tokens) if t[0].isalnum()]

    def lower(self, i: int) -> str:
        return self.tokens[i].lower()

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


# ------------------------------------------------------------------ lexicon


def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word.lower())


def _inflect(lemma: str, tag: str) -> str:
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else lemma


def _verb_form(word: str) -> tuple[str, str] | None:
    """``(lemma, tag)`` when ``word`` is a finite verb form: VBD, VBZ or VBP."""
    lemmas = _lemmas(word).get("VERB")
    if not lemmas:
        return None
    lemma, w = lemmas[0], word.lower()
    from lemminflect import getInflection

    for tag in ("VBD", "VBZ"):
        if w in getInflection(lemma, tag=tag):
            return lemma, tag
    if w == lemma:
        return lemma, "VBP"
    return None


@dataclass(frozen=True)
class _Clause:
    """The verb group of a simple clause: where it is and what kind."""

    start: int  # token index of the first verb-group word
    end: int  # token index of the main verb (== start for a single word)
    aux: str | None  # lowercased auxiliary or modal, if the group has one
    lemma: str  # main verb lemma
    tag: str  # VBD, VBZ, VBP, or MD for a modal group, BE for a lone be-form


def _find_clause(s: _Sentence) -> _Clause | None:
    """The first verb group after a non-empty subject, or None.

    An auxiliary (be, have, do, a modal) wins; otherwise the first finite verb
    form that is not capitalized (a name) and not right after a determiner (a
    noun: "the report").  A bare base form ("report") counts only after a
    plural pronoun, so "Patients report pain" is found but "The report
    shows" finds "shows".
    """
    words = s.words
    for pos, i in enumerate(words[1:], start=1):
        w = s.lower(i)
        if w in CONTRACTIONS:
            w = CONTRACTIONS[w]
        if w in AUXILIARIES:
            nxt = words[pos + 1] if pos + 1 < len(words) else None
            # "is not accepted", "will acquire", "has grown", or a lone "is" (copula)
            j = nxt
            if j is not None and s.lower(j) in {"not", "never"}:
                j = words[pos + 2] if pos + 2 < len(words) else None
            main = None
            if j is not None:
                lem = _lemmas(s.tokens[j]).get("VERB")
                if lem and s.tokens[j][:1].islower() and s.lower(j) not in NOT_VERBS:
                    main = (j, lem[0])
            if w in BE_FORMS and (main is None or not s.lower(main[0]).endswith(("ed", "en", "ing")) and _verb_form(s.tokens[main[0]]) is None):
                return _Clause(i, i, w, "be", "BE")
            if main is None:
                if w in BE_FORMS:
                    return _Clause(i, i, w, "be", "BE")
                continue
            return _Clause(i, main[0], w, main[1], "MD" if w in MODALS else w.upper())
    for pos, i in enumerate(words[1:], start=1):
        tok = s.tokens[i]
        if not tok[:1].islower() or s.lower(i) in NOT_VERBS:
            continue
        form = _verb_form(tok)
        if form is None:
            continue
        prev = s.lower(words[pos - 1])
        if prev in DETERMINERS or prev in PHRASE_BREAKS:
            continue  # "the report" is a noun; "to drugs", "of sales" are no finite verbs
        if form[1] == "VBP" and prev not in PLURAL_PRONOUNS and not _plural_noun(s.tokens[words[pos - 1]]):
            continue
        nxt = words[pos + 1] if pos + 1 < len(words) else None
        if (
            form[1] in {"VBZ", "VBP"}
            and "NOUN" in _lemmas(tok)
            and nxt is not None
            and s.tokens[nxt][:1].islower()
            and s.lower(nxt) not in NOT_VERBS
            and _verb_form(s.tokens[nxt]) is not None
        ):
            continue  # "Consumer prices rose": "prices" is the noun, "rose" the verb
        return _Clause(i, i, None, form[0], form[1])
    return None


def _is_participle(word: str) -> bool:
    """Whether ``word`` is a past participle ("made", "acquired", "taken")."""
    from lemminflect import getInflection

    lemmas = _lemmas(word).get("VERB")
    return lemmas is not None and bool(lemmas) and word.lower() in (getInflection(lemmas[0], tag="VBN") or ())


def _plural_noun(word: str) -> bool:
    w = word.lower()
    nouns = _lemmas(w).get("NOUN")
    return nouns is not None and bool(nouns) and nouns[0] != w and w.endswith("s")


def _subject_plural(s: _Sentence, verb_start: int) -> bool:
    """Whether the word right before the verb group at ``verb_start`` is plural (decides "was"/"were", "reduce"/"reduces")."""
    before = [i for i in s.words if i < verb_start]
    if not before:
        return False
    head = s.lower(before[-1])
    return head in PLURAL_PRONOUNS or _plural_noun(head)


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
            if nxt and _lemmas(s.tokens[nxt[0]]).get("VERB"):
                tag = {"does": "VBZ", "did": "VBD", "do": "VBP"}[aux]
                verb = _inflect(s.lower(nxt[0]), tag)
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


def add_not(s: _Sentence, clause: _Clause | None) -> list[Perturbation]:
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
    m = _NUMBER_RE.match(token)
    if not m:
        return None
    whole, frac, pct = m.groups()
    value = float(whole.replace(",", "") + (frac or ""))
    if not frac and not pct and "," not in whole and YEAR_RANGE[0] <= value <= YEAR_RANGE[1] and len(whole) == 4:
        return None  # a year: shifting it is a temporal change, not a magnitude
    new = value * NUMBER_SCALE
    decimals = max(0, len(frac or "") - 1 - 1) if frac else 0
    text = f"{new:,.{decimals}f}" if "," in whole else f"{new:.{decimals}f}"
    if frac and float(text.replace(",", "")) != new:
        text = f"{new:g}"
    return text + pct


def scale_number(s: _Sentence) -> list[Perturbation]:
    """Multiply each number by ten, one variant per number; the unit after it is untouched."""
    out = []
    for i in s.words:
        new = _scaled(s.tokens[i])
        if new is None:
            continue
        t = list(s.tokens)
        t[i] = new
        out.append(Perturbation(constants.CAT_NUMERICAL, "scale_number", s.join(t), f"{s.tokens[i]} -> {new}"))
    return out


def scale_number_word(s: _Sentence) -> list[Perturbation]:
    """"three" -> "thirty": a spelled-out count scaled by ten ("one" is skipped: it is often a pronoun)."""
    out = []
    for i in s.words:
        new = NUMBER_WORDS.get(s.lower(i))
        if new is None:
            continue
        t = list(s.tokens)
        t[i] = _match_case(new, s.tokens[i])
        out.append(Perturbation(constants.CAT_NUMERICAL, "scale_number_word", s.join(t), f"{s.tokens[i]} -> {t[i]}"))
    return out


# ------------------------------------------------------------------ entity / role swap


def _names(s: _Sentence) -> list[tuple[int, int]]:
    """Token spans of capitalized names; a sentence-initial word counts only if the verb follows it."""
    spans: list[tuple[int, int]] = []
    words = s.words
    k = 0
    while k < len(words):
        i = words[k]
        tok = s.tokens[i]
        if tok[:1].isupper() and (k > 0 or _starts_with_name(s)):
            j = k
            while j + 1 < len(words) and s.tokens[words[j + 1]][:1].isupper() and words[j + 1] == words[j] + 2:
                j += 1
            spans.append((i, words[j]))
            k = j + 1
        else:
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
    return not set(_lemmas(s.tokens[words[0]])) & {"NOUN", "ADJ", "ADV", "PRON", "DET", "ADP", "CCONJ", "AUX"}


def _starts_with_name(s: _Sentence) -> bool:
    """A sentence starts with a name if its first word is one and the whole subject is capitalized."""
    words = s.words
    if not _initial_is_name(s):
        return False
    clause = _find_clause(s)
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
    """The noun phrase starting after token ``i``: up to a preposition, conjunction or punctuation."""
    words = [j for j in s.words if j > i]
    if not words:
        return None
    start = words[0]
    if s.lower(start) in PHRASE_BREAKS or s.lower(start) in {"not", "never"}:
        return None
    end = start
    for j in words[1:]:
        gap = "".join(s.tokens[end + 1 : j])
        if gap.strip() or s.lower(j) in PHRASE_BREAKS:
            break
        end = j
    return start, end


def swap_roles(s: _Sentence, clause: _Clause | None) -> list[Perturbation]:
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
        if nxt and _is_participle(s.tokens[nxt[0]]):
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


def change_tense(s: _Sentence, clause: _Clause | None) -> list[Perturbation]:
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
        past = _inflect(clause.lemma, "VBD")
        t[clause.start] = past
        return [Perturbation(constants.CAT_TEMPORAL, "present_to_past", s.join(t), f"{old} -> {past}")]
    if clause.aux == "will" and clause.end > clause.start:
        between = [i for i in s.words if clause.start < i < clause.end]
        if between:  # "will not go": leave negated futures alone
            return []
        plural = _subject_plural(s, clause.start)
        past = ("were" if plural else "was") if clause.lemma == "be" else _inflect(clause.lemma, "VBD")
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
    """"The patients ..." -> "All patients ..." / "Few patients ...": a definite plural subject gets a quantifier."""
    words = s.words
    if len(words) < 2 or s.lower(words[0]) != "the" or not _plural_noun(s.tokens[words[1]]):
        return []
    out = []
    for new in ("All", "Few"):
        t = list(s.tokens)
        t[words[0]] = new
        out.append(Perturbation(constants.CAT_QUANTIFIER, "add_quantifier", s.join(t), f"The -> {new}"))
    return out


# ------------------------------------------------------------------ hedging


def remove_hedge(s: _Sentence) -> list[Perturbation]:
    """Drop a hedge: a leading "some evidence suggests that" or a hedging word; "may reduce" -> "reduces"."""
    text = s.join()
    for phrase in HEDGE_PHRASES:
        m = re.match(re.escape(phrase) + r"\s+", text, flags=re.IGNORECASE)
        if m:
            return [Perturbation(constants.CAT_HEDGING, "remove_hedge", _tidy(text[m.end() :]), f"{text[: m.end()].strip()} -> (removed)")]
    for i in s.words:
        w = s.lower(i)
        if w not in HEDGE_WORDS:
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
            new = ("are" if plural else "is") if s.lower(verb) == "be" else _inflect(s.lower(verb), "VBP" if plural else "VBZ")
            t[verb] = new
            change = f"{s.tokens[i]} {s.tokens[verb]} -> {new}"
        return [Perturbation(constants.CAT_HEDGING, "remove_hedge", s.join(t), change)]
    return []


def add_hedge(s: _Sentence, clause: _Clause | None) -> list[Perturbation]:
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
    # Keep a name's capital ("Google ..."), drop a common word's ("The ...", "Revenue ...").
    body = text if _initial_is_name(s) else text[:1].lower() + text[1:]
    out.append(Perturbation(constants.CAT_HEDGING, "add_hedge", f"{HEDGE_PREFIX} {body}", f"(none) -> {HEDGE_PREFIX.lower()}"))
    return out


# ------------------------------------------------------------------ public API

_REASONS = {
    constants.CAT_NEGATION: "no verb group to negate and no negation to remove",
    constants.CAT_NUMERICAL: "no number to scale (four-digit years are left to temporal)",
    constants.CAT_ENTITY_SWAP: "no two names and no subject-verb-object to swap",
    constants.CAT_TEMPORAL: "no time word (before, after, yesterday, ...) and no simple present, past or future verb",
    constants.CAT_QUANTIFIER: "no quantifier (all, some, none, few, many, ...) and no 'The' + plural subject",
    constants.CAT_HEDGING: "nothing to hedge",
}


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
    clause = _find_clause(s)
    negation = remove_not(s) or remove_never_no(s)
    if not negation:
        negation = add_not(s, clause)
    by_mode = {
        constants.CAT_NEGATION: negation,
        constants.CAT_NUMERICAL: scale_number(s) + scale_number_word(s),
        constants.CAT_ENTITY_SWAP: swap_entities(s) + swap_roles(s, clause),
        constants.CAT_TEMPORAL: swap_temporal_word(s) + change_tense(s, clause),
        constants.CAT_QUANTIFIER: swap_quantifier(s) or add_quantifier(s),
        constants.CAT_HEDGING: remove_hedge(s) or add_hedge(s, clause),
    }
    report = PerturbationReport(text=stripped)
    seen = {stripped}
    for mode in constants.FAILURE_MODES:
        kept = []
        for v in by_mode[mode]:
            if v.text not in seen:
                seen.add(v.text)
                kept.append(v)
        if kept:
            report.variants.extend(kept)
        else:
            report.not_applicable[mode] = _REASONS[mode]
    return report
