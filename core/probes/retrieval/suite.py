"""The retrieval suite and user files, as tidy passage and query tables.

The shipped suite (``data/suites/retrieval.csv``, schema in ``data/README.md``)
is wide: one anchor group per row, with a paraphrase, one adversarial variant
per failure mode that applies, and, for NevIR-style groups, two queries.
:func:`tidy_suite` turns it into two long tables that the run and the page
share:

* passages: ``group_id, domain, role, mode, text``; role is ``anchor``,
  ``paraphrase`` or ``variant`` (``mode`` is empty except for variants);
* queries: ``group_id, domain, query_mode, which, text``; ``which`` is ``q1``
  (answered by the anchor, not by the ``query_mode`` variant) or ``q2`` (the
  other way round).

A user's pairs file becomes the same tables (:func:`pairs_to_suite`): each
distinct ``text_a`` (a query or an anchor) is a group, the ``text_b`` whose
category is ``paraphrase`` (or ``positive``/``correct``) its paraphrase and
those whose category is a failure mode its variants.  Corpus mode reads a
corpus file and a queries file, one text per row (:func:`read_text_list`).

:func:`validate_retrieval_suite` checks the wide file.  It reuses
``core.files.validators`` where a pair rule fits a variant as it is (negation,
entity swap); the numerical, temporal, quantifier and hedging rules first pair
off inflections of one word ("month"/"months", "acquired"/"acquire"), since a
variant of a longer passage must keep its grammar ("1 month" -> "10 months",
"acquired" -> "will acquire") where the pair suites' one-line rules allow no
other change.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from core import constants
from core.files.reader import PairsFileError, read_pairs_file
from core.files.texts import parse_texts, read_texts
from core.files.validators import (
    QUANTIFIERS,
    TEMPORAL_WORDS,
    Violation,
    check_distinct,
    check_entity_swap,
    check_negation,
    is_number_token,
    word_difference,
)
from core.paths import SUITES_DIR
from core.probes.perturb import HEDGE_WORDS

RETRIEVAL_FILE = SUITES_DIR / "retrieval.csv"
MODES = constants.FAILURE_MODES
WIDE_COLUMNS = (
    constants.COL_GROUP_ID,
    constants.COL_DOMAIN,
    constants.COL_ANCHOR,
    constants.COL_PARAPHRASE,
    *MODES,
    constants.COL_QUERY_MODE,
    constants.COL_Q1,
    constants.COL_Q2,
)
PASSAGE_COLUMNS = (constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_ROLE, constants.COL_MODE, constants.COL_TEXT)
QUERY_COLUMNS = (constants.COL_GROUP_ID, constants.COL_DOMAIN, constants.COL_QUERY_MODE, constants.COL_WHICH, constants.COL_TEXT)

# Relative age ("the older model" -> "the newer model") is a temporal change too.
_TEMPORAL_CUES = TEMPORAL_WORDS | frozenset("old older oldest new newer newest latest".split())  # noqa: SIM905 - a word list reads best as words
# Proportion adverbs ("owed mostly to" -> "owed partly to") quantify like "most"/"some".
_QUANTIFIER_CUES = QUANTIFIERS | frozenset("mostly partly largely mainly entirely wholly fully".split())  # noqa: SIM905
_HEDGE_CUES = frozenset(HEDGE_WORDS) | frozenset(
    "should ideally apparently seemingly reportedly allegedly said understood believed thought suggest suggests "  # noqa: SIM905
    "suggested appear appears appeared seem seems seemed possible unclear preliminary evidence".split()
)
_MAX_EXTRA_WORDS = 3
# A hedge is often a phrase ("is said to have", "it may be best to").
_MAX_EXTRA_HEDGE_WORDS = 6
_HEADER_CHARS = 64 * 1024
_TEXT_COLUMN_GUESSES = {
    "corpus": ("text", "passage", "document", "doc", "content", "sentence", "text_b"),
    "queries": ("query", "question", "text", "q", "sentence", "text_a"),
}


class RetrievalSuiteError(ValueError):
    """A retrieval suite, pairs, corpus or queries file cannot be used; the message says why."""


@dataclass(frozen=True)
class RetrievalSuite:
    """A retrieval suite as two tidy tables.

    Attributes:
        name: the suite's name (``retrieval``) or the file's stem.
        passages: one row per passage: group_id, domain, role, mode, text.
        queries: one row per NevIR query: group_id, domain, query_mode, which, text
            (empty for a pairs file).
        notes: what reading a user's file changed or ignored.
    """

    name: str
    passages: pd.DataFrame
    queries: pd.DataFrame
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def group_ids(self) -> list[str]:
        return list(dict.fromkeys(self.passages[constants.COL_GROUP_ID]))

    def head(self, n_groups: int) -> RetrievalSuite:
        """The same suite cut to its first ``n_groups`` groups (for quick runs and tests)."""
        if n_groups < 1:
            raise ValueError(f"n_groups must be at least 1, got {n_groups}")
        keep = set(self.group_ids[:n_groups])
        return RetrievalSuite(
            self.name,
            self.passages[self.passages[constants.COL_GROUP_ID].isin(keep)].reset_index(drop=True),
            self.queries[self.queries[constants.COL_GROUP_ID].isin(keep)].reset_index(drop=True),
            self.notes,
        )


# ------------------------------------------------------------------ the wide file


def read_retrieval_file(path: str | Path = RETRIEVAL_FILE) -> pd.DataFrame:
    """The wide retrieval file as strings, one anchor group per row.

    Raises:
        RetrievalSuiteError: unreadable file or missing columns.
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise RetrievalSuiteError(f"cannot read {path}: {str(exc).splitlines()[0]}") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in WIDE_COLUMNS if c not in frame.columns]
    if missing:
        raise RetrievalSuiteError(f"{Path(path).name} lacks the retrieval columns {missing}; see data/README.md")
    return frame.apply(lambda col: col.str.strip())


def is_wide_retrieval_file(path: str | Path) -> bool:
    """True when the file's header names the wide suite's anchor and paraphrase columns."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            # Only a bounded start of the first line: a JSON file or a 40,000-word first text is no wide header,
            # and csv's 128 KiB field limit must not turn it into a crash.
            first = fh.readline(_HEADER_CHARS)
        header = next(csv.reader([first]), [])
    except (OSError, csv.Error):
        return False
    return {constants.COL_ANCHOR, constants.COL_PARAPHRASE} <= {h.strip() for h in header}


def tidy_suite(wide: pd.DataFrame, name: str = constants.SUITE_RETRIEVAL) -> RetrievalSuite:
    """Long passage and query tables from the wide file (see the module docstring).

    Args:
        wide: one row per group with the columns of :data:`WIDE_COLUMNS`.
        name: the suite's name.

    Returns:
        A :class:`RetrievalSuite`; an empty mode cell gives no variant, an
        empty ``query_mode`` no queries.

    Raises:
        ValueError: a required column is missing or the table has no row.
    """
    missing = [c for c in WIDE_COLUMNS if c not in wide.columns]
    if missing:
        raise ValueError(f"the retrieval table lacks columns {missing}")
    if wide.empty:
        raise ValueError("the retrieval table has no anchor group")
    passages, queries = [], []
    for row in wide.to_dict("records"):
        gid, domain = row[constants.COL_GROUP_ID], row[constants.COL_DOMAIN]
        passages.append((gid, domain, constants.ROLE_ANCHOR, "", row[constants.COL_ANCHOR]))
        passages.append((gid, domain, constants.ROLE_PARAPHRASE, "", row[constants.COL_PARAPHRASE]))
        passages += [(gid, domain, constants.ROLE_VARIANT, mode, row[mode]) for mode in MODES if row[mode]]
        if row[constants.COL_QUERY_MODE]:
            queries += [(gid, domain, row[constants.COL_QUERY_MODE], which, row[which]) for which in constants.QUERY_WHICH]
    return RetrievalSuite(name, pd.DataFrame(passages, columns=list(PASSAGE_COLUMNS)), pd.DataFrame(queries, columns=list(QUERY_COLUMNS)))


# ------------------------------------------------------------------ validators


@cache
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    from lemminflect import getAllLemmas

    return getAllLemmas(word)


def _forms(word: str) -> frozenset[str]:
    return frozenset({word}.union(*_lemmas(word).values()))


def _is_verb(word: str) -> bool:
    return bool({"VERB", "AUX"} & set(_lemmas(word)))


def _content_difference(anchor: str, variant: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Differing words once inflections of one word are paired off, and the pairs taken out.

    ``"acquired ... last March"`` vs ``"will acquire ... next March"`` leaves
    ``["last", "will", "next"]`` and the pair ``("acquired", "acquire")``.
    """
    only_a, only_v = word_difference(anchor, variant)
    left_a, left_v = list(only_a.elements()), list(only_v.elements())
    paired = []
    for a in list(left_a):
        match = next((v for v in left_v if _forms(a) & _forms(v)), None)
        if match is not None:
            left_a.remove(a)
            left_v.remove(match)
            paired.append((a, match))
    return left_a + left_v, paired


def _is_number(token: str) -> bool:
    # "three-year" and "30-day" carry their number in the first part.
    return is_number_token(token) or any(is_number_token(part) for part in token.split("-"))


def check_numerical_variant(anchor: str, variant: str) -> str | None:
    """A number changes; other words change only in agreement with it ("1 month" -> "10 months")."""
    diff, _ = _content_difference(anchor, variant)
    if not diff:
        return "no number differs"
    bad = sorted({t for t in diff if not _is_number(t)})
    return f"non-number words differ: {bad}" if bad else None


def _lexical(anchor: str, variant: str, cues: frozenset[str], name: str, max_extra: int, *, tense_counts: bool = False) -> str | None:
    diff, paired = _content_difference(anchor, variant)
    # A verb in another tense ("reduces" -> "reduced") is itself the temporal change.
    tense = tense_counts and any(_is_verb(a) and _is_verb(b) for a, b in paired)
    if not any(t in cues for t in diff) and not tense:
        return f"no {name} word among the differing words {sorted(set(diff) | {w for p in paired for w in p})}"
    extra = sorted({t for t in diff if t not in cues})
    if len([t for t in diff if t not in cues]) > max_extra:
        return f"too many non-{name} words differ: {extra}"
    return None


def check_temporal_variant(anchor: str, variant: str) -> str | None:
    """A time word or a verb's tense changes, with at most three other words."""
    return _lexical(anchor, variant, _TEMPORAL_CUES, "temporal", _MAX_EXTRA_WORDS, tense_counts=True)


def check_quantifier_variant(anchor: str, variant: str) -> str | None:
    """A quantifier changes (all/some/few/most/mostly ...), with at most three other words."""
    return _lexical(anchor, variant, _QUANTIFIER_CUES, "quantifier", _MAX_EXTRA_WORDS)


def check_hedging_variant(anchor: str, variant: str) -> str | None:
    """A hedge (may, apparently, is said to, suggested ...) is added or removed."""
    return _lexical(anchor, variant, _HEDGE_CUES, "hedge", _MAX_EXTRA_HEDGE_WORDS)


VARIANT_RULES = {
    constants.CAT_NEGATION: check_negation,
    constants.CAT_NUMERICAL: check_numerical_variant,
    constants.CAT_ENTITY_SWAP: check_entity_swap,
    constants.CAT_TEMPORAL: check_temporal_variant,
    constants.CAT_QUANTIFIER: check_quantifier_variant,
    constants.CAT_HEDGING: check_hedging_variant,
}


def _group_violations(row: dict[str, str]) -> list[Violation]:
    gid = row[constants.COL_GROUP_ID] or "(no id)"
    out = []
    if row[constants.COL_DOMAIN] not in constants.DOMAINS:
        out.append(Violation(gid, "domain", f"unknown domain {row[constants.COL_DOMAIN]!r}; use one of {constants.DOMAINS}"))
    anchor, paraphrase = row[constants.COL_ANCHOR], row[constants.COL_PARAPHRASE]
    for col, text in ((constants.COL_ANCHOR, anchor), (constants.COL_PARAPHRASE, paraphrase)):
        if not text:
            out.append(Violation(gid, col, f"the {col} is empty"))
    if not anchor:
        return out
    if paraphrase and check_distinct(anchor, paraphrase):
        out.append(Violation(gid, "paraphrase", "the paraphrase repeats the anchor"))
    modes = [m for m in MODES if row[m]]
    if len(modes) < constants.RETRIEVAL_MIN_MODES:
        out.append(Violation(gid, "modes", f"{len(modes)} mode(s) ({', '.join(modes) or 'none'}); a group needs at least {constants.RETRIEVAL_MIN_MODES}"))
    for mode in modes:
        problem = check_distinct(anchor, row[mode]) or VARIANT_RULES[mode](anchor, row[mode])
        if problem is None and paraphrase and check_distinct(paraphrase, row[mode]) is not None:
            problem = "the variant repeats the paraphrase"
        if problem:
            out.append(Violation(gid, mode, problem))
    qmode, q1, q2 = row[constants.COL_QUERY_MODE], row[constants.COL_Q1], row[constants.COL_Q2]
    if qmode:
        if qmode not in MODES:
            out.append(Violation(gid, "query_mode", f"unknown mode {qmode!r}; use one of {MODES}"))
        elif not row[qmode]:
            out.append(Violation(gid, "query_mode", f"query_mode {qmode!r} names an empty variant"))
        if not q1 or not q2:
            out.append(Violation(gid, "queries", "a group with a query_mode needs both q1 and q2"))
        elif check_distinct(q1, q2) is not None:
            out.append(Violation(gid, "queries", "q1 and q2 are the same"))
    elif q1 or q2:
        out.append(Violation(gid, "queries", "q1/q2 given without a query_mode"))
    return out


def _repeats(wide: pd.DataFrame, columns: Iterable[str], what: str) -> list[Violation]:
    seen: dict[str, tuple[int, str]] = {}
    out = []
    for i, row in enumerate(wide.to_dict("records")):
        for col in columns:
            text = row[col]
            if not text:
                continue
            # By row, not by id: two rows sharing an id still share no text.
            if text in seen and seen[text][0] != i:
                out.append(Violation(row[constants.COL_GROUP_ID], f"unique-{what}", f"{col} repeats a {what} of {seen[text][1]}"))
            seen.setdefault(text, (i, row[constants.COL_GROUP_ID]))
    return out


def validate_retrieval_suite(wide: pd.DataFrame) -> list[Violation]:
    """Check the wide retrieval table; every violation names the group and the rule.

    Rules: the columns of :data:`WIDE_COLUMNS`; unique, non-empty group ids;
    known domains; non-empty anchor and paraphrase, the paraphrase not the
    anchor; at least ``RETRIEVAL_MIN_MODES`` variants; each variant obeys
    its mode's rule (:data:`VARIANT_RULES`); a ``query_mode`` names a mode
    with a variant and comes with two different queries; no passage and no
    query text occurs in two groups (a query has exactly one right passage).

    Args:
        wide: the table :func:`read_retrieval_file` returns.

    Returns:
        The violations; an empty list means the suite is valid.
    """
    missing = [c for c in WIDE_COLUMNS if c not in wide.columns]
    if missing:
        return [Violation("*", "columns", f"missing columns: {missing}")]
    wide = wide.fillna("").astype(str)
    out: list[Violation] = []
    ids = wide[constants.COL_GROUP_ID]
    out += [Violation(str(g), "unique-id", "group_id appears more than once") for g in ids[ids.duplicated() & (ids != "")].unique()]
    for row in wide.to_dict("records"):
        if not row[constants.COL_GROUP_ID]:
            out.append(Violation("(no id)", "group_id", f"a row has no group_id (anchor {row[constants.COL_ANCHOR][:40]!r})"))
        out += _group_violations({str(k): v for k, v in row.items()})
    out += _repeats(wide, (constants.COL_ANCHOR, constants.COL_PARAPHRASE, *MODES), "passage")
    out += _repeats(wide, (constants.COL_Q1, constants.COL_Q2), "query")
    return out


def perturb_matches(wide: pd.DataFrame) -> pd.DataFrame:
    """How many variants per mode equal one of ``core.probes.perturb.perturb(anchor)``'s variants of that mode.

    Returns:
        Columns mode, variants, from_perturb (counts), in failure-mode order.
    """
    from core.probes.perturb import perturb

    made = {mode: 0 for mode in MODES}
    total = {mode: 0 for mode in MODES}
    for row in wide.to_dict("records"):
        report = perturb(row[constants.COL_ANCHOR])
        for mode in (m for m in MODES if row[m]):
            total[mode] += 1
            made[mode] += any(v.mode == mode and v.text == row[mode] for v in report.variants)
    return pd.DataFrame({"mode": list(MODES), "variants": [total[m] for m in MODES], "from_perturb": [made[m] for m in MODES]})


# ------------------------------------------------------------------ user files


def pairs_to_suite(pairs: pd.DataFrame, name: str = "pairs") -> RetrievalSuite:
    """A pairs table as a retrieval suite: groups by ``text_a`` (see the module docstring).

    Args:
        pairs: columns ``text_a``, ``text_b``, ``category`` (``domain`` kept when present).
        name: the suite's name.

    Returns:
        A suite with no queries; groups without both a paraphrase and a
        variant are dropped, and the notes say how many.

    Raises:
        RetrievalSuiteError: no group has both a paraphrase and a variant.
    """
    missing = {constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_CATEGORY} - set(pairs.columns)
    if missing:
        raise RetrievalSuiteError(f"the pairs table lacks columns {sorted(missing)}")
    category = pairs[constants.COL_CATEGORY].astype(str).str.strip().str.lower()
    known = category.isin(constants.PARAPHRASE_CATEGORIES) | category.isin(constants.ADVERSARIAL_CATEGORIES)
    notes = []
    if (~known).any():
        unused = sorted(set(category[~known]))
        notes.append(f"ignored {int((~known).sum())} pair(s) whose category is neither a paraphrase ({'/'.join(constants.PARAPHRASE_CATEGORIES)}) nor a failure mode nor {constants.CAT_CONTRADICTION}: {', '.join(unused)}")
    rows, skipped, extra_paraphrases = [], 0, 0
    kept = pairs.assign(_cat=category)[known]
    domains = kept[constants.COL_DOMAIN].astype(str) if constants.COL_DOMAIN in kept.columns else pd.Series("", index=kept.index)
    for i, (anchor, group) in enumerate(kept.groupby(constants.COL_TEXT_A, sort=False)):
        is_para = group["_cat"].isin(constants.PARAPHRASE_CATEGORIES)
        if not is_para.any() or is_para.all():
            skipped += 1
            continue
        extra_paraphrases += int(is_para.sum()) - 1
        gid, domain = f"group-{i + 1:03d}", domains[group.index[0]]
        rows.append((gid, domain, constants.ROLE_ANCHOR, "", anchor))
        rows.append((gid, domain, constants.ROLE_PARAPHRASE, "", group[constants.COL_TEXT_B][is_para].iloc[0]))
        rows += [(gid, domain, constants.ROLE_VARIANT, cat, text) for cat, text in zip(group["_cat"][~is_para], group[constants.COL_TEXT_B][~is_para], strict=True)]
    if not rows:
        raise RetrievalSuiteError(
            "no text_a has both a paraphrase (category paraphrase, positive or correct) and an adversarial variant "
            f"(category {', '.join(constants.ADVERSARIAL_CATEGORIES)}): nothing to rank"
        )
    if skipped:
        notes.append(f"dropped {skipped} text_a group(s) without both a paraphrase and a variant")
    if extra_paraphrases:
        notes.append(f"{extra_paraphrases} extra paraphrase(s) ignored: each text_a uses its first")
    queries = pd.DataFrame(columns=list(QUERY_COLUMNS))
    return RetrievalSuite(name, pd.DataFrame(rows, columns=list(PASSAGE_COLUMNS)), queries, tuple(notes))


def load_retrieval_suite(name_or_path: str = constants.SUITE_RETRIEVAL) -> RetrievalSuite:
    """The shipped suite by name, a wide file in its format, or a user's pairs file.

    Raises:
        RetrievalSuiteError: unknown name, unreadable file, or nothing to rank.
    """
    if name_or_path == constants.SUITE_RETRIEVAL:
        return tidy_suite(read_retrieval_file(), constants.SUITE_RETRIEVAL)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise RetrievalSuiteError(f"no retrieval suite named {name_or_path!r} and no such file; use {constants.SUITE_RETRIEVAL!r} or a pairs file")
    if is_wide_retrieval_file(path):
        wide = read_retrieval_file(path)
        problems = validate_retrieval_suite(wide)
        try:
            suite = tidy_suite(wide, path.stem)
        except ValueError as exc:
            raise RetrievalSuiteError(f"{path}: {exc}") from exc
        note = (f"{len(problems)} rule violation(s), e.g. {problems[0]}",) if problems else ()
        return RetrievalSuite(suite.name, suite.passages, suite.queries, note)
    try:
        pairs, notes = read_pairs_file(path)
    except PairsFileError as exc:
        raise RetrievalSuiteError(f"{path}: {exc}") from exc
    suite = pairs_to_suite(pairs, path.stem)
    return RetrievalSuite(suite.name, suite.passages, suite.queries, (*notes, *suite.notes))


def read_text_list(path: str | Path, kind: str = "corpus", max_rows: int = constants.MAX_UPLOAD_ROWS) -> tuple[list[str], list[str]]:
    """The texts of a corpus or queries file, one per row, and what reading changed.

    Read by :func:`core.files.texts.read_texts`, the pairs files' rules:
    ``.txt``: one text per non-empty line. ``.csv``/``.tsv``: a header row,
    then one text per row; the column is the only one, or the one named
    ``text``/``passage``/``document`` (corpus) or ``query``/``question``/``text``
    (queries). ``.jsonl``/``.json``: strings, or objects with such a field.
    Empty rows, repeats and values that are not text are dropped, with a note.

    Args:
        path: the file.
        kind: ``corpus`` or ``queries`` (picks the column names to look for).
        max_rows: refuse files with more texts than this.

    Raises:
        ValueError: unknown ``kind``.
        RetrievalSuiteError: unreadable, empty, ambiguous or too long; the message names the file.
    """
    if kind not in _TEXT_COLUMN_GUESSES:
        raise ValueError(f"kind must be one of {sorted(_TEXT_COLUMN_GUESSES)}, got {kind!r}")
    try:
        found = read_texts(path, _TEXT_COLUMN_GUESSES[kind], what=kind, max_rows=max_rows)
    except PairsFileError as exc:
        raise RetrievalSuiteError(str(exc)) from exc
    return found.texts, found.notes


def texts_of_bytes(data: bytes, name: str, kind: str = "corpus", max_rows: int = constants.MAX_UPLOAD_ROWS) -> tuple[list[str], list[str]]:
    """The texts of an uploaded corpus or queries file (the rules of :func:`read_text_list`).

    Raises:
        ValueError: unknown ``kind``.
        RetrievalSuiteError: unreadable, empty, ambiguous or too long.
    """
    if kind not in _TEXT_COLUMN_GUESSES:
        raise ValueError(f"kind must be one of {sorted(_TEXT_COLUMN_GUESSES)}, got {kind!r}")
    try:
        found = parse_texts(data, name, _TEXT_COLUMN_GUESSES[kind], what=kind, max_rows=max_rows)
    except PairsFileError as exc:
        raise RetrievalSuiteError(str(exc)) from exc
    return found.texts, found.notes


def suite_counts(suite: RetrievalSuite) -> pd.DataFrame:
    """Variants per mode and domain, plus groups and NevIR groups per domain (for data/README.md).

    Returns:
        One row per domain (and a ``total`` row): groups, each mode's
        variant count, and ``queries`` (groups with q1/q2).
    """
    p, q = suite.passages, suite.queries
    groups = p[p[constants.COL_ROLE] == constants.ROLE_ANCHOR].groupby(constants.COL_DOMAIN, sort=False).size().rename("groups")
    variants = p[p[constants.COL_ROLE] == constants.ROLE_VARIANT]
    by_mode = pd.crosstab(variants[constants.COL_DOMAIN], variants[constants.COL_MODE]).reindex(columns=list(MODES), fill_value=0)
    nevir = q[q[constants.COL_WHICH] == constants.COL_Q1].groupby(constants.COL_DOMAIN).size().rename("queries")
    table = pd.concat([groups, by_mode, nevir], axis=1).fillna(0).astype(int)
    order = [d for d in constants.DOMAINS if d in table.index] + [d for d in table.index if d not in constants.DOMAINS]
    table = table.loc[order]
    table.loc["total"] = table.sum()
    return table.rename_axis(constants.COL_DOMAIN).reset_index()

