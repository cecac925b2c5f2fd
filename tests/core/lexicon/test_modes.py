"""differs_by on pairs each mode must and must not recognise, and the lexicon's parts it reads."""

from __future__ import annotations

import pytest

from core import constants, lexicon
from core.lexicon import MODES, differs_by, modes_differing, morphology, word_difference
from core.lexicon.modes import hedge_count, is_permission_may, negation_count
from core.lexicon.numbers import is_label_or_date, is_number_token, number_values
from core.lexicon.verbs import Sentence, find_verb_group, finite_tenses, possible_tenses
from core.words import rule_words, surface_tokens

DIFFERS = [
    (constants.CAT_NEGATION, "The patient is allergic.", "The patient is not allergic."),
    # A negating verb's base form counts: "did not refuse" is the negation of "refused".
    (constants.CAT_NEGATION, "The witness refused to answer.", "The witness did not refuse to answer."),
    (constants.CAT_NUMERICAL, "Take 5 mg daily.", "Take 50 mg daily."),
    (constants.CAT_NUMERICAL, "A three-year contract.", "A thirty-year contract."),
    (constants.CAT_NUMERICAL, "Store at -18 degrees.", "Store at 18 degrees."),
    (constants.CAT_ENTITY_SWAP, "Google acquired YouTube.", "YouTube acquired Google."),
    (constants.CAT_TEMPORAL, "Take it before meals.", "Take it after meals."),
    (constants.CAT_TEMPORAL, "Google acquired YouTube.", "Google will acquire YouTube."),
    # "is" stays on both sides, but one of its two uses changed tense.
    (constants.CAT_TEMPORAL, "Interest is charged if the balance is paid.", "Interest was charged if the balance is paid."),
    # Forms that are also nouns or participles ("report", "run", "shut") still change tense in place.
    (constants.CAT_TEMPORAL, "The patients report pain.", "The patients reported pain."),
    (constants.CAT_TEMPORAL, "The shoes run small.", "The shoes ran small."),
    (constants.CAT_TEMPORAL, "The microwave shuts off.", "The microwave shut off."),
    (constants.CAT_QUANTIFIER, "All patients recovered.", "Some patients recovered."),
    (constants.CAT_QUANTIFIER, "The patients recovered.", "Few patients recovered."),
    (constants.CAT_QUANTIFIER, "Customers can return items.", "Some customers can return items."),
    (constants.CAT_QUANTIFIER, "No fee applies on purchases.", "No fee applies on some purchases."),
    (constants.CAT_HEDGING, "The drug reduces pain.", "The drug may reduce pain."),
    (constants.CAT_HEDGING, "The drug reduces pain.", "Some evidence suggests that the drug reduces pain."),
]

SAME = [
    (constants.CAT_NEGATION, "The tenant must give at least 30 days notice.", "The tenant must give no less than 30 days notice."),
    (constants.CAT_NUMERICAL, "Take three tablets.", "Take 3 tablets."),
    (constants.CAT_NUMERICAL, "How much is the dose?", "The dose is 50 mg."),
    (constants.CAT_ENTITY_SWAP, "Google acquired YouTube.", "YouTube was acquired by Google."),
    (constants.CAT_TEMPORAL, "Take it before surgery.", "Take it prior to surgery."),
    # A verb turned into a noun moves; it is no change of tense.
    (constants.CAT_TEMPORAL, "Dr. Brooks repaired the valve.", "After the valve repair by Dr. Brooks."),
    (constants.CAT_TEMPORAL, "The drug may cut costs.", "The drug cuts costs and may cut costs."),
    (constants.CAT_QUANTIFIER, "Every patient recovered.", "All patients recovered."),
    # A "no" where the other side has nothing is the negation rule's.
    (constants.CAT_QUANTIFIER, "The patient has no fever.", "The patient has fever."),
    (constants.CAT_HEDGING, "Could you tell me the way?", "Tell me the way?"),
]


@pytest.mark.parametrize(("mode", "text_a", "text_b"), DIFFERS, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(DIFFERS)])
def test_differs_by_recognises_the_change_both_ways(mode, text_a, text_b):
    assert differs_by(mode, text_a, text_b)
    assert differs_by(mode, text_b, text_a)
    assert mode in modes_differing(text_a, text_b)


@pytest.mark.parametrize(("mode", "text_a", "text_b"), SAME, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(SAME)])
def test_differs_by_ignores_paraphrases_of_the_mode(mode, text_a, text_b):
    assert not differs_by(mode, text_a, text_b)


def test_differs_by_refuses_unknown_modes_and_non_text():
    assert set(MODES) == set(lexicon.FAILURE_MODES)
    with pytest.raises(ValueError, match="unknown failure mode 'contradiction'"):
        differs_by("contradiction", "a", "b")
    with pytest.raises(ValueError, match="text_b must be a string"):
        differs_by(constants.CAT_NEGATION, "a", None)  # type: ignore[arg-type]


def test_counts_behind_the_rules():
    assert negation_count(rule_words("No patient did not refuse, no less than 3 times.")) == 3  # no, n't... not, refuse
    assert hedge_count("Could you tell me if it may rain?") == 1  # the question's "Could" asks
    assert hedge_count("It appears that the drug reportedly works.") == 2  # the phrase once, the adverb once
    only_a, only_b = word_difference("a b b c", "b c c d")
    assert (dict(only_a), dict(only_b)) == ({"a": 1, "b": 1}, {"c": 1, "d": 1})


@pytest.mark.parametrize(
    ("text", "permission"),
    [
        ("No contractor may begin work", True),
        ("Any employee may apply", True),
        ("You may leave", True),
        ("Passengers may now board", True),
        ("The drug may reduce pain", False),
        ("Each child may have the disease", False),
        ("The result may not be accurate", False),
    ],
)
def test_permission_may(text, permission):
    words = rule_words(text)
    assert is_permission_may(words, words.index("may")) is permission


# ------------------------------------------------------------------ numbers


def test_number_tokens_and_values():
    assert all(is_number_token(t) for t in ("5mg", "$3.2m", "three", "three-year", "30-day", "twice"))
    assert not any(is_number_token(t) for t in ("mg", "year", "tree"))
    assert number_values(rule_words("Take three 5mg tablets, 1,200 in all, over a two-year course at -18")) == {
        3.0,
        5.0,
        1200.0,
        2.0,
        -18.0,
    }
    assert number_values(rule_words("Brazil won 3-1")) == {3.0, 1.0}
    assert number_values(rule_words("one patient")) == set()  # "one" is as often "a"


@pytest.mark.parametrize(
    ("text", "number", "label"),
    [
        ("type 2 diabetes", "2", True),
        ("Chapter 11 filing", "11", True),
        ("on March 5", "5", True),
        ("on 5 March", "5", True),
        ("at 10:30", "30", True),
        ("on 5/3/2024", "3", True),
        ("on 2024-05-01", "05", True),
        ("won 1-0", "1", False),
        ("a 30-day trial", "30", False),
        ("take 5 mg", "5", False),
    ],
)
def test_labels_and_dates_are_not_quantities(text, number, label):
    tokens = surface_tokens(text)
    assert is_label_or_date(tokens, tokens.index(number)) is label


# ------------------------------------------------------------------ lemmas and the verb group


def test_lemmas_are_read_lowercased_and_cached_once():
    morphology._lemmas.cache_clear()
    assert morphology.lemmas("Acquired") == morphology.lemmas("acquired")
    assert morphology.lemmas("acquired")["VERB"] == ("acquire",)
    info = morphology._lemmas.cache_info()
    assert (info.misses, info.hits) == (1, 2)  # "Acquired" read as "acquired": one entry, three reads


def test_verb_readings():
    assert morphology.can_be_verb("report") and not morphology.is_unambiguous_verb("report")
    assert morphology.is_unambiguous_verb("chased")
    assert morphology.finite_verb_form("acquired") == ("acquire", "VBD")
    assert morphology.is_participle("taken") and not morphology.is_participle("take")
    assert morphology.is_plural_noun("patients") and not morphology.is_plural_noun("news")
    assert morphology.inflect("acquire", "VBZ") == "acquires"
    assert morphology.word_forms("months") == {"months", "month"}


@pytest.mark.parametrize(
    ("text", "verb", "aux"),
    [
        ("The patient is not allergic", "is", "is"),
        ("Google acquired YouTube", "acquired", None),
        ("The report shows growth", "shows", None),
        ("Consumer prices rose", "rose", None),
        ("Metformin treats type 2 diabetes", "treats", None),
        ("Never mix bleach with ammonia-based cleaners", None, None),
    ],
)
def test_verb_group(text, verb, aux):
    s = Sentence(text)
    group = find_verb_group(s)
    if verb is None:
        assert group is None
    else:
        assert group is not None and (s.tokens[group.start], group.aux) == (verb, aux)


def test_tenses():
    assert finite_tenses(rule_words("The drug was approved and reduces pain")) == [("be", "past"), ("reduce", "present")]
    words = rule_words("the start may cut it and never shares it")
    assert possible_tenses(words, 1) == frozenset()  # a noun after "the"
    assert possible_tenses(words, 3) == frozenset()  # an infinitive after "may"
    assert possible_tenses(words, words.index("shares")) == {"present"}
    assert possible_tenses(rule_words("it shut"), 1) == {"past", "present"}
