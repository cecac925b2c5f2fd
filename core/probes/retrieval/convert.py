"""A user's rows as a retrieval suite: a pairs table grouped by ``text_a``, a triples table grouped by anchor.

A pairs table (:func:`pairs_to_suite`): each distinct ``text_a`` (a query or
an anchor) is a group, the ``text_b`` whose category is ``paraphrase`` (or
``positive``/``correct``) its paraphrase and those whose category is a
failure mode its variants.  A triples table (:func:`triples_suite`, read by
:func:`core.files.triples.read_triples`): each distinct anchor is a group,
its first positive the paraphrase and its negatives variants of mode
``contradiction``.  Neither has NevIR queries.
"""

from __future__ import annotations

import pandas as pd

from core import constants, lexicon
from core.probes.retrieval.suite import PASSAGE_COLUMNS, QUERY_COLUMNS, RetrievalSuite, RetrievalSuiteError

TRIPLES_DOMAIN = "triples"


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
    known = category.isin(constants.PARAPHRASE_CATEGORIES) | category.isin(lexicon.ADVERSARIAL_CATEGORIES)
    notes = []
    if (~known).any():
        unused = sorted(set(category[~known]))
        notes.append(
            f"ignored {int((~known).sum())} pair(s) whose category is neither a paraphrase ({'/'.join(constants.PARAPHRASE_CATEGORIES)}) "
            f"nor a failure mode nor {constants.CAT_CONTRADICTION}: {', '.join(unused)}"
        )
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
        rows += [
            (gid, domain, constants.ROLE_VARIANT, cat, text)
            for cat, text in zip(group["_cat"][~is_para], group[constants.COL_TEXT_B][~is_para], strict=True)
        ]
    if not rows:
        raise RetrievalSuiteError(
            "no text_a has both a paraphrase (category paraphrase, positive or correct) and an adversarial variant "
            f"(category {', '.join(lexicon.ADVERSARIAL_CATEGORIES)}): nothing to rank"
        )
    if skipped:
        notes.append(f"dropped {skipped} text_a group(s) without both a paraphrase and a variant")
    if extra_paraphrases:
        notes.append(f"{extra_paraphrases} extra paraphrase(s) ignored: each text_a uses its first")
    queries = pd.DataFrame(columns=list(QUERY_COLUMNS))
    return RetrievalSuite(name, pd.DataFrame(rows, columns=list(PASSAGE_COLUMNS)), queries, tuple(notes))


def triples_suite(frame: pd.DataFrame, name: str) -> RetrievalSuite:
    """A user's triples (``anchor, positive, negative`` rows, :func:`core.files.triples.read_triples`) as a suite.

    What ``retrieval --triples FILE --mitigate`` ranks and what tune trains on.

    Each distinct anchor is one group, so the split never puts one anchor on
    both sides; its first positive is the paraphrase and each distinct
    negative (other than the anchor and that positive) a variant of mode
    ``contradiction``.  One domain, so the split is stratified by nothing.

    Raises:
        ValueError: a missing column or no usable anchor.
    """
    missing = [c for c in (constants.COL_ANCHOR, constants.COL_POSITIVE, constants.COL_NEGATIVE) if c not in frame.columns]
    if missing:
        raise ValueError(f"the triples lack the columns {missing}")
    rows = []
    for i, (anchor, part) in enumerate(frame.groupby(constants.COL_ANCHOR, sort=False)):
        gid, positive = f"{TRIPLES_DOMAIN}-{i + 1:05d}", str(part[constants.COL_POSITIVE].iloc[0])
        negatives = [n for n in dict.fromkeys(part[constants.COL_NEGATIVE].astype(str)) if n not in (anchor, positive)]
        if negatives:
            rows += [
                (gid, TRIPLES_DOMAIN, constants.ROLE_ANCHOR, "", anchor),
                (gid, TRIPLES_DOMAIN, constants.ROLE_PARAPHRASE, "", positive),
            ]
            rows += [(gid, TRIPLES_DOMAIN, constants.ROLE_VARIANT, constants.CAT_CONTRADICTION, n) for n in negatives]
    if not rows:
        raise ValueError(f"{name} has no anchor with a positive and a different negative")
    return RetrievalSuite(name, pd.DataFrame(rows, columns=list(PASSAGE_COLUMNS)), pd.DataFrame(columns=list(QUERY_COLUMNS)))
