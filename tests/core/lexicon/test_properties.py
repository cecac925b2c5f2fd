"""The generator, the validator and the guard agree: every variant ``perturb()`` writes is its mode.

Sentences come from a small grammar over the shapes a probe is typed as
(names with titles and several words, noun phrases, numbers that count and
numbers that name, time words, quantifiers, hedges, modals); for each
variant of each sentence the pair validator (``CATEGORY_RULES``), the
retrieval variant validator (``VARIANT_RULES``) and the guard
(``contradiction_flags``) must all recognise the variant's mode, and the
generator's self-check must have rejected nothing.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core import lexicon
from core.files.validators import CATEGORY_RULES, VARIANT_RULES, validate_pairs
from core.probes.perturb import perturb
from core.probes.retrieval.guard import contradiction_flags

SUBJECTS = [
    "The patient",
    "The patients",
    "Dr. Chen",
    "Mercy Hospital",
    "Google",
    "The drug",
    "The tenant",
    "All employees",
    "Some customers",
    "No contractor",
    "The Acme Corp board",
    "These headphones",
    "Patients",
]
VERB_PHRASES = [
    "acquired YouTube",
    "reduces the pain",
    "increases the risk of bleeding",
    "is allergic to penicillin",
    "was delayed",
    "will sign the lease",
    "may reduce symptoms",
    "referred the patient to Dr. Alvarez",
    "sued Orion Studios",
    "does not cover water damage",
    "report severe pain",
    "never shares your data",
    "paid Vantage Media a fee",
    "might leave the ward",
    "works with USB-C chargers",
    "manages type 2 diabetes",
    "has grown",
    "lowers blood pressure",
]
TAILS = [
    "",
    " before meals",
    " in 2006",
    " on March 5",
    " yesterday",
    " at 10:30",
    " for 5 days",
    " three times a week",
    " within 30 days",
    " after the merger",
    " by 15%",
    " over an eight-hour shift",
    " to London",
]
PREFIXES = ["", "Some evidence suggests that ", "Perhaps "]


def _sentence(prefix: str, subject: str, verb: str, tail: str) -> str:
    text = f"{subject} {verb}{tail}."
    if prefix:
        text = prefix + (text if subject.split()[0] not in {"The", "These", "All", "Some", "No"} else text[0].lower() + text[1:])
    return text


SENTENCES = st.builds(
    _sentence, st.sampled_from(PREFIXES), st.sampled_from(SUBJECTS), st.sampled_from(VERB_PHRASES), st.sampled_from(TAILS)
)


def _disagreements(text: str) -> list[str]:
    report = perturb(text)
    problems = [f"self-check rejected {v.rule}: {v.text!r}" for v in report.rejected]
    for v in report.variants:
        rule = CATEGORY_RULES.get(v.mode)
        if rule is not None and (problem := rule(text, v.text)):
            problems.append(f"pair validator refuses {v.rule} {v.text!r}: {problem}")
        if problem := VARIANT_RULES[v.mode](text, v.text):
            problems.append(f"variant validator refuses {v.rule} {v.text!r}: {problem}")
        if v.mode not in contradiction_flags(text, v.text):
            problems.append(f"guard misses {v.mode} ({v.rule}) {v.text!r}")
    frame = report.to_frame()
    problems += [str(p) for p in validate_pairs(frame)]
    return problems


@given(SENTENCES)  # examples per run: the profile in tests/conftest.py (HYPOTHESIS_PROFILE=nightly for 2000)
def test_every_variant_is_its_mode_for_validator_and_guard(text):
    assert _disagreements(text) == []


def test_the_grammar_reaches_every_mode():
    # Without this the property could hold by the generator writing nothing.
    texts = [_sentence(p, s, v, t) for p, s, v, t in zip(PREFIXES * 5, SUBJECTS, VERB_PHRASES, TAILS, strict=False)]
    modes = {v.mode for text in texts for v in perturb(text).variants}
    assert modes == set(lexicon.FAILURE_MODES)


ONCE_SPLIT = [
    "Dr. Alvarez referred the patient to Dr. Chen after the MRI showed a 2 cm lesion in the left kidney.",
    "Interest is charged on purchases if the statement balance is paid in full by the due date.",
    "The witness refused to answer the prosecutor's questions.",
    "Vantor Electronics signed a three-year contract to supply chips to Obrien Motors, and the first shipments arrived in April.",
    "Brazil beat Argentina 3-1 in the final.",
    "This adapter converts USB-C to HDMI.",
    "Never mix bleach with ammonia-based cleaners.",
    "Could you tell me how to get to the train station?",
    "The Halcyon M10 camera records 4K video at 60 frames per second.",
    "The shoes run small, so order a size up.",
]


def test_sentences_that_once_split_them_agree():
    # Each of these made the three disagree before core/lexicon (a hyphen, a title, a tense kept elsewhere, ...).
    problems = {text: found for text in ONCE_SPLIT if (found := _disagreements(text))}
    assert problems == {}
