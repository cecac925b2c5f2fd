"""A corpus with planted twins, so the audit's recall and precision are known exactly.

Base sentences are the distinct first sentences (``text_a``) of the shipped
suites, thinned so that no two share many words (word Jaccard below
:data:`MAX_BASE_OVERLAP`): the only pairs that are one edit apart are the
planted ones.  Each base gets one twin written by the rule-based generator
(:func:`core.probes.perturb.perturb`), its mode the one planted least so far
that the base allows; a base the generator has no variant for stays as a distractor.

The bases are split in two by a hash of their text: ``dev`` (rules were
written looking at it) and ``heldout`` (never looked at while writing rules;
its recall and precision are what ``docs/audit.md`` reports).

The planted corpus is easy by design; :func:`note_pairs` is the hard case:
templated notes (a shipping notice and a lab report of our own) that share
most of their words, each against one edit of every mode, against decoys of
several edits, another note, polarity decoys (negated antonyms, double
negations, "no longer" / "stopped", a reply word), a role swap and a copy,
split by group; :func:`note_scores` scores the pair classifier on them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
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


# ------------------------------------------------------------------ templated notes: one edit, several edits, decoys

# Two note templates of our own (a shipping notice and a lab report), each a list of sentences with slots.  Every
# failure mode has one slot it edits, so a single edit changes one place and a decoy can change two.
NOTE_GROUPS_PER_TEMPLATE = 60
DECOY_SEVERAL = "several edits"
DECOY_OTHER_NOTE = "another note"
DECOY_NEGATED_ANTONYM = "negated antonym"
DECOY_DOUBLE_NEGATION = "double negation"
DECOY_CEASING = "no longer / stopped"
DECOY_REPLY = "reply word"
DECOY_ROLE_SWAP = "role swap"
DECOY_COPY = "copy"
# What each decoy must not be called: a pair of several edits is never a twin; a negated antonym, a double
# negation, a verb of ceasing and a reply word are never negation twins; a role swap is never a near-duplicate,
# and a copy (an article or spacing changed) is a near-duplicate.
DECOY_TYPES = (
    DECOY_SEVERAL,
    DECOY_OTHER_NOTE,
    DECOY_NEGATED_ANTONYM,
    DECOY_DOUBLE_NEGATION,
    DECOY_CEASING,
    DECOY_REPLY,
    DECOY_ROLE_SWAP,
    DECOY_COPY,
)
NOTE_COLUMNS = ["group", "template", constants.COL_TEXT_A, constants.COL_TEXT_B, "label"]

_NAMES = (
    "Anna Berg",
    "Ben Okafor",
    "Carla Diaz",
    "David Lund",
    "Elif Kaya",
    "Femi Adeyemi",
    "Grace Liu",
    "Hugo Martin",
    "Ines Costa",
    "Jonas Weber",
    "Kira Novak",
    "Liam Byrne",
    "Maya Rossi",
    "Nils Dahl",
    "Omar Haddad",
    "Priya Nair",
    "Quinn Walsh",
    "Rosa Lopez",
    "Sven Holm",
    "Tara Singh",
    "Uma Patel",
    "Viktor Sokol",
    "Wen Zhao",
    "Yara Aziz",
)
_ITEMS = ["boxes of printer paper", "crates of apples", "cartons of gloves", "pallets of bricks", "bags of cement", "rolls of cable"]
_CITIES = ["Leeds", "Lyon", "Porto", "Gdansk", "Bremen", "Turin", "Ghent", "Malmo"]
_MATERIALS = ["bubble wrap", "foam", "cardboard", "paper"]
_ANALYTES = ["ferritin", "glucose", "sodium", "potassium", "creatinine", "calcium"]
_CONDITIONS = ["an iron deficiency", "a kidney problem", "dehydration", "an infection", "a thyroid disorder"]
_THINGS = ["seal", "box", "lid", "label", "tube", "form", "container", "casing"]
# Our own adjective pairs, "not X" meaning "Y" (complementary antonyms), and prefixed adjectives for double
# negations; split by word between dev and held-out, so a held-out decoy uses words dev never showed.
_ANTONYM_PAIRS = (
    ("broken", "intact"),
    ("empty", "full"),
    ("wet", "dry"),
    ("open", "closed"),
    ("clean", "dirty"),
    ("heavy", "light"),
    ("complete", "incomplete"),
    ("present", "absent"),
    ("correct", "wrong"),
    ("damaged", "undamaged"),
    ("sealed", "unsealed"),
    ("visible", "invisible"),
    ("safe", "dangerous"),
    ("loose", "tight"),
    ("warm", "cold"),
    ("legal", "illegal"),
    ("new", "old"),
    ("true", "false"),
)
_PREFIXED = (
    "unreadable",
    "incomplete",
    "invalid",
    "unclear",
    "incorrect",
    "unsafe",
    "unusual",
    "inaccurate",
    "illegible",
    "uncommon",
    "inadequate",
    "impossible",
    "unlabelled",
    "unopened",
    "unknown",
    "irregular",
)
_PREFIXES = ("un", "in", "il", "ir", "im")


def _unprefixed(word: str) -> str:
    return next(word[len(p) :] for p in _PREFIXES if word.startswith(p))


def _note_slots(rng: np.random.Generator, template: str, vocab_split: str) -> dict[str, str]:
    def pick(options):
        return options[int(rng.integers(len(options)))]

    antonyms = [p for p in _ANTONYM_PAIRS if _split_of(p[0]) == vocab_split]
    prefixed = [w for w in _PREFIXED if _split_of(w) == vocab_split]
    people = list(rng.choice(_NAMES, size=4, replace=False))
    adj, ant = pick(antonyms)
    if rng.integers(2):
        adj, ant = ant, adj
    return {
        "template": template,
        "ref": f"{int(rng.integers(1000, 9999))}",
        "a": people[0],
        "b": people[1],
        "c": people[2],
        "d": people[3],
        "qty": str(int(rng.integers(2, 40))),
        "days": str(int(rng.integers(2, 9))),
        "item": pick(_ITEMS),
        "city": pick(_CITIES),
        "material": pick(_MATERIALS),
        "analyte": pick(_ANALYTES),
        "condition": pick(_CONDITIONS),
        "value": f"{int(rng.integers(3, 90))}.{int(rng.integers(0, 10))}",
        "temp": str(int(rng.integers(2, 9))),
        "thing": pick(_THINGS),
        "adj": adj,
        "ant": ant,
        "prefixed": pick(prefixed),
    }


# Each template: sentences by slot name; a slot's base text and, per mode, its one edit.
_SHIPPING = {
    "head": "Shipping notice {ref}: {a} sent {qty} {item} to {b}.",
    "insured": "The parcel was insured.",
    "packed": "All items were packed in {material}.",
    "left": "It left the {city} depot before the weekend.",
    "takes": "Delivery takes {days} working days.",
    "costs": "Freight costs rose this month.",
    "state": "The {thing} was not {adj}.",
    "staff": "{c} no longer works at the {city} depot.",
}
_LAB = {
    "head": "Lab report {ref}: {a} sent the sample to {b} for a {analyte} test.",
    "insured": "The result was within the reference range.",
    "packed": "All replicates gave {value} mmol/L.",
    "left": "The sample was stored at {temp} degrees before analysis.",
    "takes": "This indicates {condition}.",
    "costs": "The level increased since the last visit.",
    "state": "The {thing} was not {adj}.",
    "staff": "{c} no longer runs the {analyte} assay.",
}
_TEMPLATES = {"shipping notice": _SHIPPING, "lab report": _LAB}
# The single edit of each mode: (slot, old words, new words); "{...}" fields are filled from the note's slots.
_EDITS = {
    "shipping notice": {
        "negation": ("insured", "was insured", "was not insured"),
        "numerical": ("head", "sent {qty}", "sent {qty10}"),
        "entity_swap": ("head", "{a} sent {qty} {item} to {b}", "{b} sent {qty} {item} to {a}"),
        "temporal": ("left", "before the weekend", "after the weekend"),
        "quantifier": ("packed", "All items", "Some items"),
        "hedging": ("takes", "Delivery takes", "Delivery may take"),
        "direction": ("costs", "rose", "fell"),
    },
    "lab report": {
        "negation": ("insured", "was within", "was not within"),
        "numerical": ("packed", "gave {value}", "gave {value10}"),
        "entity_swap": ("head", "{a} sent the sample to {b}", "{b} sent the sample to {a}"),
        "temporal": ("left", "was stored", "will be stored"),
        "quantifier": ("packed", "All replicates", "Few replicates"),
        "hedging": ("takes", "This indicates", "This may indicate"),
        "direction": ("costs", "increased", "decreased"),
    },
}
# Changes no failure mode names, for decoys that add one to a mode's edit.
_OTHER_EDITS = {
    "shipping notice": (
        ("head", "to {b}", "to {d}"),
        ("packed", "in {material}", "in {material2}"),
        ("left", "the {city} depot", "the {city2} depot"),
    ),
    "lab report": (
        ("head", "to {b}", "to {d}"),
        ("takes", "indicates {condition}", "indicates {condition2}"),
        ("head", "a {analyte} test", "a {analyte2} test"),
    ),
}


def _fill(text: str, slots: dict[str, str]) -> str:
    return text.format(**slots)


def _note(sentences: dict[str, str], slots: dict[str, str]) -> str:
    return " ".join(_fill(s, slots) for s in sentences.values())


def _edited(sentences: dict[str, str], slots: dict[str, str], edits) -> str:
    out = {slot: _fill(text, slots) for slot, text in sentences.items()}
    for slot, old, new in edits:
        before = _fill(old, slots)
        assert before in out[slot], (slot, before)  # noqa: S101 - the templates are ours: an edit always finds its words
        out[slot] = out[slot].replace(before, _fill(new, slots), 1)
    return " ".join(out.values())


def _group_pairs(group: str, template: str, rng: np.random.Generator, vocab_split: str) -> list[tuple[str, str, str, str, str]]:
    sentences = _TEMPLATES[template]
    slots = _note_slots(rng, template, vocab_split)
    slots["qty10"] = str(int(slots["qty"]) * 10)
    slots["value10"] = f"{float(slots['value']) * 10:.1f}"
    for field_name, options in (("material", _MATERIALS), ("city", _CITIES), ("condition", _CONDITIONS), ("analyte", _ANALYTES)):
        slots[field_name + "2"] = next(o for o in options if o != slots[field_name])
    base = _note(sentences, slots)
    rows: list[tuple[str, str, str, str, str]] = []

    def add(text_b: str, label: str) -> None:
        rows.append((group, template, base, text_b, label))

    single = {mode: _edited(sentences, slots, [edit]) for mode, edit in _EDITS[template].items()}
    for mode, text in single.items():
        add(text, mode)
    modes = list(single)
    # Several edits: two modes' edits in two places, a mode's edit and a change no mode names, two numbers.
    first = int(rng.integers(len(modes)))
    apart = [k for k, m in enumerate(modes) if _EDITS[template][m][0] != _EDITS[template][modes[first]][0]]
    second = apart[int(rng.integers(len(apart)))]
    add(_edited(sentences, slots, [_EDITS[template][modes[first]], _EDITS[template][modes[second]]]), DECOY_SEVERAL)
    other = _OTHER_EDITS[template][int(rng.integers(len(_OTHER_EDITS[template])))]
    elsewhere = [m for m in modes if _EDITS[template][m][0] != other[0]]
    add(_edited(sentences, slots, [_EDITS[template][elsewhere[int(rng.integers(len(elsewhere)))]], other]), DECOY_SEVERAL)
    if template == "shipping notice":
        add(_edited(sentences, slots, [("head", "sent {qty}", "sent {qty10}"), ("takes", "takes {days}", "takes 1{days}")]), DECOY_SEVERAL)
    # Another note of the same template: every field drawn again (a different shipment or patient).
    other_slots = _note_slots(rng, template, vocab_split)
    add(_note(sentences, other_slots), DECOY_OTHER_NOTE)
    # Polarity decoys, each in the note's own place ("state", "staff", "insured").
    add(_edited(sentences, slots, [("state", "not {adj}", "{ant}")]), DECOY_NEGATED_ANTONYM)
    doubled = dict(slots, adj=slots["prefixed"], plain=_unprefixed(slots["prefixed"]))
    rows.append(
        (
            group,
            template,
            _note(sentences, doubled),
            _edited(sentences, doubled, [("state", "not {adj}", "{plain}")]),
            DECOY_DOUBLE_NEGATION,
        )
    )
    stopped = "stopped working" if template == "shipping notice" else "stopped running"
    add(
        _edited(sentences, slots, [("staff", "no longer " + ("works" if template == "shipping notice" else "runs"), stopped)]),
        DECOY_CEASING,
    )
    plain = _fill(sentences["insured"], slots)
    rows.append((group, template, "No, " + plain[0].lower() + plain[1:], plain, DECOY_REPLY))
    # A role swap on its own line, as a user's corpus holds them: never a near-duplicate.
    a, b = slots["a"].split()[0], slots["b"].split()[0]
    swap = "{x} checked the {thing} while {y} signed the form."
    rows.append((group, template, swap.format(x=a, y=b, **slots), swap.format(x=b, y=a, **slots), DECOY_ROLE_SWAP))
    # A copy: an article and spacing changed, nothing else.
    add(_edited(sentences, slots, [("packed", "All", "All the")]).replace(". ", ".  ", 1), DECOY_COPY)
    # Every two single edits of the same note are two edits apart.
    for i, x in enumerate(modes):
        for y in modes[i + 1 :]:
            rows.append((group, template, single[x], single[y], DECOY_SEVERAL))
    return rows


@cache
def note_pairs(split: str) -> pd.DataFrame:
    """Labelled pairs of templated notes for one split (deterministic): single edits and decoys.

    Each group is one note drawn from one of two templates of our own (a
    shipping notice, a lab report); its pairs are the note against one single
    edit of every failure mode (``label`` = the mode), against decoys
    (``label`` in :data:`DECOY_TYPES`), and every two single edits against
    each other (two edits apart: ``several edits``).  Groups are split by a
    hash of their name, and the decoys' antonyms and prefixed adjectives by
    a hash of the word, so held-out decoys use words dev never showed.

    Raises:
        ValueError: an unknown split.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    rows = []
    for template in _TEMPLATES:
        for n in range(2 * NOTE_GROUPS_PER_TEMPLATE):
            group = f"{template} {n}"
            if _split_of(group) != split:
                continue
            seed = int.from_bytes(hashlib.sha256(group.encode()).digest()[:8], "little")
            rows += _group_pairs(group, template, np.random.default_rng(seed), split)
    return pd.DataFrame(rows, columns=NOTE_COLUMNS)


NOTE_SCORE_COLUMNS = ["by", "name", "n", "found", "recall", "flagged", "correct", "precision"]
# The kind each label must get: a single edit is a twin of its mode (a role swap too); a copy is a near-duplicate;
# several edits and another note are several differences; a negation that keeps the polarity is other.
EXPECTED_KIND = {
    **dict.fromkeys(lexicon.FAILURE_MODES, kinds.KIND_TWIN),
    DECOY_ROLE_SWAP: kinds.KIND_TWIN,
    DECOY_COPY: kinds.KIND_DUPLICATE,
    DECOY_SEVERAL: kinds.KIND_SEVERAL,
    DECOY_OTHER_NOTE: kinds.KIND_SEVERAL,
    DECOY_NEGATED_ANTONYM: kinds.KIND_OTHER,
    DECOY_DOUBLE_NEGATION: kinds.KIND_OTHER,
    DECOY_CEASING: kinds.KIND_OTHER,
    DECOY_REPLY: kinds.KIND_OTHER,
}


def _decoy_passes(label: str, found: kinds.PairKind) -> bool:
    """What a decoy must never be (``DECOY_TYPES``' comment), read off its kind."""
    if label in (DECOY_SEVERAL, DECOY_OTHER_NOTE):
        return found.kind != kinds.KIND_TWIN
    if label == DECOY_ROLE_SWAP:
        return found.kind != kinds.KIND_DUPLICATE
    if label == DECOY_COPY:
        return found.kind == kinds.KIND_DUPLICATE
    return not (found.kind == kinds.KIND_TWIN and constants.CAT_NEGATION in found.modes)


def _rate(k: int, n: int) -> float:
    return k / n if n else float("nan")


def note_scores(split: str) -> pd.DataFrame:
    """The pair classifier on the templated notes of one split: recall and precision per mode and per kind, decoys' pass rates.

    * ``by = "mode"``: recall = single edits of the mode classified a twin
      whose ``mode`` is it; precision = of the pairs classified a twin of that
      mode, those that are its single edits (``all`` pools the modes; role
      swaps count as ``entity_swap`` edits);
    * ``by = "kind"``: the same for each kind against :data:`EXPECTED_KIND`;
    * ``by = "decoy"``: ``found`` = decoys that are not what they must never
      be (:func:`_decoy_passes`), ``recall`` their share; no precision (a
      decoy's precision is its expected kind's).

    Returns:
        One row per mode, kind and decoy type (:data:`NOTE_SCORE_COLUMNS`).

    Raises:
        ValueError: an unknown split.
    """
    pairs = note_pairs(split)
    found = [kinds.pair_kind(a, b) for a, b in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)]
    labels = pairs["label"].tolist()
    truth = [constants.CAT_ENTITY_SWAP if lab == DECOY_ROLE_SWAP else lab for lab in labels]
    said = [k.mode if k.kind == kinds.KIND_TWIN else "" for k in found]
    rows = []
    for mode in ("all", *lexicon.FAILURE_MODES):

        def wanted(t: str, mode: str = mode) -> bool:
            return t in lexicon.FAILURE_MODES if mode == "all" else t == mode

        n = sum(wanted(t) for t in truth)
        hit = sum(wanted(t) and s == t for t, s in zip(truth, said, strict=True))
        flagged = sum(bool(s) and wanted(s) for s in said)
        correct = sum(bool(s) and wanted(s) and s == t for t, s in zip(truth, said, strict=True))
        rows.append(("mode", mode, n, hit, _rate(hit, n), flagged, correct, _rate(correct, flagged)))
    expected = [EXPECTED_KIND[lab] for lab in labels]
    for kind in kinds.KINDS:
        n = expected.count(kind)
        got = [k.kind for k in found]
        hit = sum(e == kind and g == kind for e, g in zip(expected, got, strict=True))
        flagged = got.count(kind)
        rows.append(("kind", kind, n, hit, _rate(hit, n), flagged, hit, _rate(hit, flagged)))
    for decoy in DECOY_TYPES:
        mine = [k for lab, k in zip(labels, found, strict=True) if lab == decoy]
        passed = sum(_decoy_passes(decoy, k) for k in mine)
        rows.append(("decoy", decoy, len(mine), passed, _rate(passed, len(mine)), 0, 0, float("nan")))
    return pd.DataFrame(rows, columns=NOTE_SCORE_COLUMNS)
