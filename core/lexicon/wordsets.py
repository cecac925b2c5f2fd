"""Every word list the failure modes are defined by, in one place.

Word lists, not logic: the validator's cues (:mod:`core.files.validators`),
the generator's vocabulary (:mod:`core.probes.perturb`) and the guard's
classes (:mod:`core.probes.retrieval.guard`) all read these sets, so a word
added here reaches all three.  Number words live in
:mod:`core.lexicon.numbers` with their values.
"""

from __future__ import annotations

# ------------------------------------------------------------------ function words and the verb group

DETERMINERS = frozenset(
    {
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "its",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "each",
        "every",
        "all",
        "some",
        "no",
        "any",
        "many",
        "few",
        "most",
        "several",
        "both",
    }
)
PRONOUN_SUBJECTS = frozenset({"i", "we", "you", "they", "he", "she", "it"})
PLURAL_PRONOUNS = frozenset({"we", "you", "they", "i"})
BE_FORMS = frozenset({"is", "are", "was", "were", "am"})
HAVE_FORMS = frozenset({"has", "have", "had"})
DO_FORMS = frozenset({"do", "does", "did"})
MODALS = frozenset({"will", "would", "can", "could", "shall", "should", "may", "might", "must"})
AUXILIARIES = BE_FORMS | HAVE_FORMS | DO_FORMS | MODALS
# Words that end a noun phrase: the object of "acquired" in "acquired YouTube in 2006" is "YouTube".
PHRASE_BREAKS = frozenset(
    {
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "to",
        "by",
        "after",
        "before",
        "during",
        "since",
        "because",
        "and",
        "or",
        "but",
        "that",
        "which",
        "who",
        "when",
        "while",
        "if",
        "than",
        "as",
        "into",
        "over",
        "under",
        "between",
        "without",
        "within",
        "yesterday",
        "today",
        "tomorrow",
        "last",
        "next",
    }
)
# Not verbs even though the lexicon lists a verb reading ("patient", "report" are handled by position).
NOT_VERBS = (
    DETERMINERS
    | PHRASE_BREAKS
    | PRONOUN_SUBJECTS
    | frozenset(
        {
            "not",
            "never",
            "very",
            "also",
            "only",
            "just",
            "more",
            "less",
            "than",
            "of",
            "new",
            "one",
            "up",
            "down",
            "out",
            "off",
            "there",
            "here",
            "then",
            "now",
            "so",
            "such",
            "none",
            "much",
            "too",
        }
    )
)
CONTRACTIONS = {
    "isn't": "is",
    "aren't": "are",
    "wasn't": "was",
    "weren't": "were",
    "doesn't": "does",
    "don't": "do",
    "didn't": "did",
    "can't": "can",
    "won't": "will",
    "shouldn't": "should",
    "couldn't": "could",
    "wouldn't": "would",
    "hasn't": "has",
    "haven't": "have",
    "hadn't": "had",
    "mustn't": "must",
}
# Titles that belong to the name after them: "Dr. Chen" is one name, not "Dr" and "Chen".
TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st", "gen", "lt", "col", "capt", "rev", "sen", "rep", "gov"})

# ------------------------------------------------------------------ negation

NEGATION_CUES = frozenset(
    "not n't no never cannot can't won't don't doesn't didn't isn't aren't wasn't "  # noqa: SIM905 - a word list reads best as words
    "weren't hasn't haven't hadn't shouldn't wouldn't couldn't mustn't needn't "
    "without none nobody nothing nowhere neither nor no-one non lacks lacking absent "
    "fails failed refuses refused denies denied unable".split()
)
# The base forms of the negating verbs above: "refused" -> "did not refuse" keeps one, adds "not".
NEGATING_VERB_BASES = frozenset({"lack", "fail", "refuse", "deny"})
# Words a negation legitimately drags along ("has" -> "does not have").
NEGATION_SUPPORT = frozenset(
    "do does did is are was were has have had can could will would should must may "  # noqa: SIM905
    "might shall be been being a an any some".split()
)
# Verbs that carry a negation in their meaning without a cue ("stopped smoking" is "no longer smokes", "failed
# to reply" is "did not reply"): a negation cue against one of them keeps the polarity, so it is no negation edit.
# The implicative verbs of the negative kind (lack, fail, refuse, deny) and the verbs of ceasing.
IMPLICIT_NEGATIVE_VERBS = frozenset({"lack", "fail", "refuse", "deny", "stop", "cease", "quit", "discontinue"})
# "no longer" / "any longer" / "anymore": the negation's second word is part of the cue, not another change.
NEGATION_PARTICLES = frozenset({"longer", "more", "anymore"})
# A reply word that opens a text before a comma ("No, ..." / "Naw, ...") answers; it negates nothing after it.
INTERJECTIONS = frozenset({"no", "nope", "nah", "naw", "yes", "yeah", "yep", "well", "oh", "ok", "okay"})
# "no less than" is "at least", a bound, not a negation.
COMPARATIVES = frozenset({"less", "more", "fewer", "greater"})

# ------------------------------------------------------------------ temporal

TEMPORAL_WORDS = frozenset(
    "before after prior following earlier later previously subsequently then first "  # noqa: SIM905
    "last next previous yesterday today tomorrow tonight morning evening night noon "
    "midnight daily weekly monthly yearly annually past future ago since until till "
    "during while when once soon already still yet recently now formerly afterwards "
    "afterward beforehand early late preceding succeeding upcoming former latter "
    "start end beginning ending began ended begins ends pre post precede precedes "
    "preceded follow follows followed week month year day hour minute weekend "
    "monday tuesday wednesday thursday friday saturday sunday will was were is are "
    "had has have been did does do going went go".split()
)
# Relative age ("the older model" -> "the newer model") is a temporal change too (retrieval variants).
RELATIVE_AGE = frozenset("old older oldest new newer newest latest".split())  # noqa: SIM905
TEMPORAL_SWAPS = {
    "before": "after",
    "after": "before",
    "yesterday": "tomorrow",
    "tomorrow": "yesterday",
    "earlier": "later",
    "later": "earlier",
    "last": "next",
    "next": "last",
    "previously": "subsequently",
    "subsequently": "previously",
    "past": "future",
    "future": "past",
    "prior": "subsequent",
    "subsequent": "prior",
}
# Synonyms within the time words, so "prior to" for "before" is no change: each word maps to its class.
TIME_CLASS = {
    "prior": "before",
    "previously": "before",
    "earlier": "before",
    "preceding": "before",
    "beforehand": "before",
    "precede": "before",
    "precedes": "before",
    "preceded": "before",
    "former": "before",
    "formerly": "before",
    "previous": "before",
    "past": "before",
    "last": "before",
    "following": "after",
    "follow": "after",
    "follows": "after",
    "followed": "after",
    "subsequently": "after",
    "later": "after",
    "afterwards": "after",
    "afterward": "after",
    "once": "after",
    "post": "after",
    "succeeding": "after",
    "next": "after",
    "upcoming": "after",
    "beginning": "start",
    "begins": "start",
    "began": "start",
    "ending": "end",
    "ends": "end",
    "ended": "end",
    "daily": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
# Time words that are tense auxiliaries (the tense rule handles them) or question and clause words.
TIME_IGNORED = BE_FORMS | HAVE_FORMS | DO_FORMS | frozenset({"will", "been", "going", "went", "go", "when", "while", "then", "now"})
TIME_CUES = TEMPORAL_WORDS - TIME_IGNORED
TIME_PREPOSITIONS = frozenset({"within"}) | (PHRASE_BREAKS & TEMPORAL_WORDS)
FUTURE_MARKERS = frozenset({"will", "won't"})
MONTHS = frozenset(
    "january february march april may june july august september october november december "  # noqa: SIM905
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)

# ------------------------------------------------------------------ quantifier

QUANTIFIERS = frozenset(
    "all some none no few many most several every each any both neither either "  # noqa: SIM905
    "nobody everyone everybody someone somebody anyone nothing everything something "
    "anything always never sometimes rarely often seldom usually occasionally "
    "majority minority half fraction handful lot lots plenty numerous countless "
    "only single one a an little much more less fewer least nearly almost hardly "
    "barely entire whole partial".split()
)
# Proportion adverbs ("owed mostly to" -> "owed partly to") quantify like "most"/"some" (retrieval variants).
PROPORTION_ADVERBS = frozenset("mostly partly largely mainly entirely wholly fully".split())  # noqa: SIM905
# Agreement changes a quantifier forces ("All patients were" -> "No patient was").
QUANTIFIER_SUPPORT = frozenset(
    "is are was were has have does do of the them their its it they he she his her "  # noqa: SIM905
    "patient patients customer customers user users employee employees".split()
)
QUANTIFIER_SWAPS = {
    "all": ("some", "no"),
    "every": ("no",),
    "some": ("all", "no"),
    "none": ("all",),
    "few": ("many",),
    "many": ("few",),
    "most": ("few",),
    "no": ("all", "some"),
}
# Synonyms within the quantifiers, so a paraphrase that says "every" for "all" is no change.
QUANTIFIER_CLASS = {
    "every": "all",
    "each": "all",
    "both": "all",
    "entire": "all",
    "whole": "all",
    "everyone": "all",
    "everybody": "all",
    "everything": "all",
    "majority": "most",
    "none": "no",
    "neither": "no",
    "nobody": "no",
    "nothing": "no",
    "several": "some",
    "someone": "some",
    "somebody": "some",
    "something": "some",
    "minority": "few",
    "handful": "few",
    "numerous": "many",
    "countless": "many",
    "lot": "many",
    "lots": "many",
    "plenty": "many",
    "almost": "nearly",
    "barely": "hardly",
}
# "a", "an", "one", "only", "more", "less" are quantifiers too, but a paraphrase trades them freely;
# "any" is mostly a negative-polarity item ("did not occur in any") and "never" a negation.
QUANTIFIER_CUES = QUANTIFIERS - frozenset(
    {"a", "an", "one", "single", "only", "more", "less", "much", "little", "fewer", "least", "any", "never"}
)
# The quantifiers the perturbation rules write (swap_quantifier, add_quantifier), by class.
RULE_QUANTIFIERS = frozenset(QUANTIFIER_CLASS.get(q, q) for q in QUANTIFIER_SWAPS) | frozenset(
    QUANTIFIER_CLASS.get(q, q) for swaps in QUANTIFIER_SWAPS.values() for q in swaps
)

# ------------------------------------------------------------------ hedging

HEDGE_WORDS = frozenset({"may", "might", "could", "possibly", "perhaps", "likely", "probably", "potentially"})
HEDGE_PHRASES = (
    "some evidence suggests that",
    "there is some evidence that",
    "it is possible that",
    "it appears that",
    "it seems that",
)
HEDGE_PREFIX = "Some evidence suggests that"
# Hedges the perturbation rules never write but people do: evidential adverbs, and the verbs of
# HEDGE_PHRASES ("it appears that", "some evidence suggests that") in any form.
EVIDENTIAL_ADVERBS = frozenset({"reportedly", "apparently", "allegedly", "supposedly", "presumably", "arguably", "seemingly"})
HEDGE_VERBS = frozenset({"suggest", "appear", "seem"})
# A retrieval variant's hedge is often a phrase ("is said to have", "should ideally"): its words.
HEDGE_CUES = HEDGE_WORDS | frozenset(
    "should ideally apparently seemingly reportedly allegedly said understood believed thought suggest suggests "  # noqa: SIM905
    "suggested appear appears appeared seem seems seemed possible unclear preliminary evidence".split()
)
# Subjects that make "may" a permission ("No contractor may begin", "Any employee may apply").
PERMISSION_SUBJECTS = frozenset({"no", "any", "only", "you", "anyone", "nobody", "everyone"})
# Words after "may" that make it a permission ("may only use", "may now board").
PERMISSION_FOLLOWERS = frozenset({"only", "now", "freely"})
# Nouns a number after them names rather than counts: "type 2 diabetes", "Chapter 11", "phase 3".
LABEL_NOUNS = frozenset(
    "type phase stage grade level chapter section article version firmware class category room gate route "  # noqa: SIM905
    "floor step table figure page item rule title schedule tier series generation number act part "
    "paragraph clause amendment exhibit appendix platform terminal lane bay ward unit apartment suite".split()
)

# ------------------------------------------------------------------ direction (beyond the papers)

# Opposite directions of a change, each form with its opposite form: "increases" / "decreases", "rose" / "fell",
# "more effective" / "less effective", "gained" / "lost".  The generator swaps the first one it meets; the
# predicate reads a word of one direction on one side and of the other on the other side.
DIRECTION_PAIRS = (
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("raise", "lower"),
    ("raises", "lowers"),
    ("raised", "lowered"),
    ("raising", "lowering"),
    ("rise", "fall"),
    ("rises", "falls"),
    ("rose", "fell"),
    ("risen", "fallen"),
    ("rising", "falling"),
    ("improve", "worsen"),
    ("improves", "worsens"),
    ("improved", "worsened"),
    ("improving", "worsening"),
    ("better", "worse"),
    ("more", "less"),
    ("greater", "smaller"),
    ("larger", "smaller"),
    ("gain", "lose"),
    ("gains", "loses"),
    ("gained", "lost"),
    ("gaining", "losing"),
    ("boost", "cut"),
    ("boosts", "cuts"),
    ("boosted", "cut"),
)
DIRECTION_UP = frozenset(up for up, _ in DIRECTION_PAIRS)
DIRECTION_DOWN = frozenset(down for _, down in DIRECTION_PAIRS)
DIRECTION_WORDS = DIRECTION_UP | DIRECTION_DOWN
# The generator's swap: each word to its first opposite ("lower" -> "higher", as an adjective is the commoner reading).
DIRECTION_SWAPS = {**{down: up for up, down in reversed(DIRECTION_PAIRS)}, **{up: down for up, down in DIRECTION_PAIRS}}
