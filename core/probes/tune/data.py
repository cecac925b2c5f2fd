"""Training triples from the retrieval suite's failing variants, split by anchor group.

Variants of one anchor share almost every word, so a split by row would put
the same sentence on both sides; :func:`split_groups` splits whole anchor
groups, stratified by domain and seeded.  :func:`training_triples` writes
sentence-transformers' ``(anchor, positive, negative)`` columns: for every
variant that outranks its paraphrase (a failure), ``(anchor, paraphrase,
variant)`` (the anchor is the query the probe asks with), and for NevIR
groups ``(q1, anchor, variant)`` and ``(q2, variant, anchor)``.  One row per
failing variant, not both directions: on the shipped suite that is ~450
rows, ~28 steps an epoch at batch 16, close to the 63 steps of the measured
recipe over three epochs, which matters on a 2-core CPU.  The no-hard-negative
control trains on the same ``(anchor, positive)`` pairs alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from core import constants
from core.files.triples import Triples
from core.paths import DATA_DIR
from core.probes.retrieval.origin import variant_sources
from core.probes.retrieval.suite import RetrievalSuite

C = constants
VARIANT_COLUMNS = [
    C.COL_GROUP_ID,
    C.COL_DOMAIN,
    C.COL_MODE,
    C.COL_ANCHOR,
    C.COL_PARAPHRASE,
    C.ROLE_VARIANT,
    C.COL_VARIANT_SOURCE,
]
TRIPLE_COLUMNS = [C.COL_ANCHOR, C.COL_POSITIVE, C.COL_NEGATIVE]
TRIPLE_META = [C.COL_GROUP_ID, C.COL_DOMAIN, C.COL_MODE, C.COL_VARIANT_SOURCE, C.COL_SPLIT]
NATURAL_FILE = DATA_DIR / "natural" / "wordnet-antonym-triples.csv"
"""Public natural triples (WordNet 3.0 adjective glosses, WordNet licence; data/natural/README.md) for the general cost."""
NATURAL_NAME = "WordNet antonym glosses"
NATURAL_SOURCE = (
    "515 WordNet 3.0 adjective definitions written by its lexicographers (Princeton University, WordNet licence), "
    "each with the definition of a similar adjective (positive) and of its antonym (negative); lexical "
    "definitions, not sentence-level NLI; antonym pairs told apart by a negation cue left out; data/natural/README.md."
)
NATURAL_SENTENCES_FILE = DATA_DIR / "samples" / "nli-triples.csv"
"""Sentence-level contradictions (hand-made in SNLI's style; data/samples/README.md) for the general cost on sentences."""
NATURAL_SENTENCES_NAME = "NLI sentence triples"
NATURAL_SENTENCES_SOURCE = (
    "24 hand-made premises in the style of SNLI's test set, each with an entailed and a contradicted hypothesis "
    "(sentences, not definitions; a sample this small gives wide intervals); data/samples/README.md."
)


@dataclasses.dataclass(frozen=True)
class NaturalSet:
    """One shipped set of natural triples the general cost is measured on.

    Attributes:
        name: the set's name in the tables.
        path: its triples file.
        source: where it comes from and what it is, in a sentence or two.
    """

    name: str
    path: Path
    source: str


NATURAL_SETS = (
    NaturalSet(NATURAL_NAME, NATURAL_FILE, NATURAL_SOURCE),
    NaturalSet(NATURAL_SENTENCES_NAME, NATURAL_SENTENCES_FILE, NATURAL_SENTENCES_SOURCE),
)
"""Word-level glosses and sentence-level pairs: a tuned model can gain on one and lose on the other, so both are measured."""

SHORTCUT_FILE = DATA_DIR / "shortcut" / "negation-shortcut.csv"
"""Our hand-written same-meaning and opposite-meaning negation pairs (data/shortcut/README.md)."""
SHORTCUT_COLUMNS = ["item", "meaning", C.COL_TEXT_A, C.COL_TEXT_B]
MEANING_SAME, MEANING_OPPOSITE = "same", "opposite"


def variant_table(suite: RetrievalSuite) -> pd.DataFrame:
    """One row per variant with its group's anchor and paraphrase and whether the rules make it.

    Returns:
        Columns :data:`VARIANT_COLUMNS`, in suite order; groups without an
        anchor or a paraphrase are left out.
    """
    v = variant_rows(suite)
    return v.assign(**{C.COL_VARIANT_SOURCE: variant_sources(v[C.COL_ANCHOR], v[C.ROLE_VARIANT])})[VARIANT_COLUMNS]


def variant_rows(suite: RetrievalSuite) -> pd.DataFrame:
    """:func:`variant_table`'s rows without ``variant_source`` (which reruns the rules on every anchor): what a count needs.

    Returns:
        Columns :data:`VARIANT_COLUMNS` but the last, in suite order; groups without an anchor or a paraphrase are left out.
    """
    p = suite.passages
    role = p[C.COL_ROLE]
    anchors = p[role == C.ROLE_ANCHOR].drop_duplicates(C.COL_GROUP_ID).set_index(C.COL_GROUP_ID)[C.COL_TEXT]
    paraphrases = p[role == C.ROLE_PARAPHRASE].drop_duplicates(C.COL_GROUP_ID).set_index(C.COL_GROUP_ID)[C.COL_TEXT]
    v = p[role == C.ROLE_VARIANT].copy()
    v[C.COL_ANCHOR] = v[C.COL_GROUP_ID].map(anchors)
    v[C.COL_PARAPHRASE] = v[C.COL_GROUP_ID].map(paraphrases)
    v = v.dropna(subset=[C.COL_ANCHOR, C.COL_PARAPHRASE]).rename(columns={C.COL_TEXT: C.ROLE_VARIANT}).reset_index(drop=True)
    return v[VARIANT_COLUMNS[:-1]]


def split_groups(groups: pd.DataFrame, *, train_fraction: float = C.TUNE_TRAIN_FRACTION, seed: int = 0) -> dict[str, str]:
    """Each anchor group to ``training`` or ``held-out``: whole groups, stratified by domain, seeded.

    Within each domain (sorted by name) the groups are shuffled with one
    ``numpy`` generator and the first ``round(n * train_fraction)`` train.

    Args:
        groups: at least ``group_id`` and ``domain``; one row per group or per variant.
        train_fraction: share of each domain's groups that train, in (0, 1).
        seed: the generator's seed.

    Returns:
        group_id -> :data:`core.constants.SPLIT_TRAIN` or :data:`core.constants.SPLIT_HELD_OUT`.

    Raises:
        ValueError: a fraction outside (0, 1), missing columns, a group in two domains, or fewer than two groups.
    """
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be between 0 and 1, got {train_fraction}")
    missing = [c for c in (C.COL_GROUP_ID, C.COL_DOMAIN) if c not in groups.columns]
    if missing:
        raise ValueError(f"groups lack the columns {missing}")
    per_group = groups[[C.COL_GROUP_ID, C.COL_DOMAIN]].astype(str).drop_duplicates()
    if per_group[C.COL_GROUP_ID].duplicated().any():
        raise ValueError("a group_id appears under two domains; a group must sit in one")
    if len(per_group) < 2:
        raise ValueError(f"a split needs at least two anchor groups, got {len(per_group)}")
    rng = np.random.default_rng(seed)
    domains = [sorted(frame[C.COL_GROUP_ID]) for _, frame in sorted(per_group.groupby(C.COL_DOMAIN), key=lambda kv: str(kv[0]))]
    n_train = _largest_remainder([len(ids) for ids in domains], train_fraction, len(per_group), rng)
    split: dict[str, str] = {}
    for ids, k in zip(domains, n_train, strict=True):
        for rank, i in enumerate(rng.permutation(len(ids))):
            split[ids[i]] = C.SPLIT_TRAIN if rank < k else C.SPLIT_HELD_OUT
    return split


def _largest_remainder(sizes: list[int], fraction: float, total: int, rng: np.random.Generator) -> list[int]:
    """Training groups per domain: floors of ``size * fraction``, the rest to the largest remainders (ties drawn),
    so the whole split holds ``round(total * fraction)`` (100/100 of 200, not 98/102 from rounding each domain)."""
    exact = np.asarray(sizes, dtype=float) * fraction
    counts = np.floor(exact).astype(int)
    left = int(round(total * fraction)) - int(counts.sum())
    order = np.lexsort((rng.random(len(sizes)), -(exact - counts)))
    counts[order[: max(left, 0)]] += 1
    return [int(c) for c in counts]


def training_triples(
    variants: pd.DataFrame, split: Mapping[str, str], failing: pd.Series, queries: pd.DataFrame | None = None
) -> pd.DataFrame:
    """sentence-transformers ``(anchor, positive, negative)`` rows from the training half's failing variants.

    Args:
        variants: :func:`variant_table`'s rows.
        split: :func:`split_groups`' mapping.
        failing: booleans aligned with ``variants``: the variant outranks its paraphrase under the model to tune.
        queries: the suite's NevIR queries (``group_id, query_mode, which, text``), or None.

    Returns:
        Columns :data:`TRIPLE_COLUMNS` then :data:`TRIPLE_META`; only training groups.

    Raises:
        ValueError: ``failing`` of another length, or a group missing from ``split``.
    """
    if len(failing) != len(variants):
        raise ValueError(f"failing has {len(failing)} values for {len(variants)} variants")
    unknown = sorted(set(variants[C.COL_GROUP_ID]) - set(split))
    if unknown:
        raise ValueError(f"groups missing from the split: {unknown[:5]}")
    rows = []
    chosen = variants[np.asarray(failing, dtype=bool)]
    chosen = chosen[chosen[C.COL_GROUP_ID].map(split) == C.SPLIT_TRAIN]
    for r in chosen.to_dict("records"):
        meta = (r[C.COL_GROUP_ID], r[C.COL_DOMAIN], r[C.COL_MODE], r[C.COL_VARIANT_SOURCE], C.SPLIT_TRAIN)
        rows.append((r[C.COL_ANCHOR], r[C.COL_PARAPHRASE], r[C.ROLE_VARIANT], *meta))
    if queries is not None and not queries.empty:
        by_key = {(r[C.COL_GROUP_ID], r[C.COL_MODE]): r for r in chosen.to_dict("records")}
        for (gid, mode), q in queries.groupby([C.COL_GROUP_ID, C.COL_QUERY_MODE]):
            found = by_key.get((gid, mode))
            texts = dict(zip(q[C.COL_WHICH], q[C.COL_TEXT], strict=True))
            if found is None or not all(w in texts for w in C.QUERY_WHICH):
                continue
            meta = (gid, found[C.COL_DOMAIN], mode, found[C.COL_VARIANT_SOURCE], C.SPLIT_TRAIN)
            rows.append((texts[C.COL_Q1], found[C.COL_ANCHOR], found[C.ROLE_VARIANT], *meta))
            rows.append((texts[C.COL_Q2], found[C.ROLE_VARIANT], found[C.COL_ANCHOR], *meta))
    return pd.DataFrame(rows, columns=[*TRIPLE_COLUMNS, *TRIPLE_META])


def control_pairs(triples: pd.DataFrame) -> pd.DataFrame:
    """The control's data: the triples' distinct ``(anchor, positive)`` pairs, no hard negative."""
    return triples[[C.COL_ANCHOR, C.COL_POSITIVE]].drop_duplicates().reset_index(drop=True)


def write_parquet(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` as Parquet through a temporary file, so a cancel leaves no half file."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    frame.to_parquet(tmp, index=False)
    tmp.replace(out)
    return out


def labelled_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """A labelled pairs table (``text_a, text_b, label``) as ``text_a, text_b, same``, for the AUC cost before/after.

    Rows whose label is neither match nor no match are left out.

    Args:
        frame: a pairs table with the project's column names (``core.files.reader``), ``n`` rows.

    Returns:
        ``m <= n`` rows: ``text_a``, ``text_b`` and ``same`` (bool).

    Raises:
        ValueError: no label column, or not both match and no-match labels.
    """
    from core.probes.labels import match_labels

    if C.COL_LABEL not in frame.columns:
        raise ValueError("no label column (match/no match, 1/0)")
    same = match_labels(frame[C.COL_LABEL])
    if same.nunique() < 2:
        raise ValueError("needs both match and no-match labels")
    kept = same.notna()
    return pd.DataFrame(
        {C.COL_TEXT_A: frame.loc[kept, C.COL_TEXT_A], C.COL_TEXT_B: frame.loc[kept, C.COL_TEXT_B], "same": same[kept].astype(bool)}
    )


def labelled_from_bytes(data: bytes, name: str) -> pd.DataFrame:
    """An uploaded labelled pairs file (columns guessed as for any pairs file) as :func:`labelled_pairs` gives it.

    Raises:
        PairsFileError: the file does not parse or lacks its text columns.
        ValueError: as :func:`labelled_pairs`.
    """
    from core.files.reader import apply_mapping, guess_mapping, parse_pairs

    parsed = parse_pairs(data, name)
    frame, _ = apply_mapping(parsed, guess_mapping(list(parsed.frame.columns), parsed.frame), suite=Path(name).stem)
    return labelled_pairs(frame)


def natural_triples(path: str | Path = NATURAL_FILE) -> Triples:
    """The shipped natural triples (or another triples file) for the general cost, read as any triples file.

    Raises:
        PairsFileError: the file cannot be read as triples.
    """
    from core.files.triples import read_triples

    return read_triples(path)


def _key(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def unseen_triples(triples: Triples, seen: Iterable[str]) -> tuple[Triples | None, int]:
    """``triples`` without the source rows that share a text with what the tuning saw, so the cost is measured on unseen data.

    Texts match after case folding and collapsing white space.

    Args:
        triples: natural triples (:func:`natural_triples`).
        seen: every text the tuning probed or trained on (anchors, paraphrases, variants, queries).

    Returns:
        ``(kept, dropped)``: the triples whose every text is unseen (None when
        none is left) and the number of source rows left out.
    """
    known = {_key(t) for t in seen}
    frame = triples.frame
    texts = frame[[C.COL_ANCHOR, C.COL_POSITIVE, C.COL_NEGATIVE]].map(_key)
    overlapping = texts.isin(known).any(axis=1)
    rows = frame.loc[overlapping, C.COL_SOURCE_ROW]
    kept = frame[~frame[C.COL_SOURCE_ROW].isin(rows)].reset_index(drop=True)
    dropped = int(rows.nunique())
    if kept.empty:
        return None, dropped
    return dataclasses.replace(triples, frame=kept), dropped


def shortcut_pairs(path: str | Path = SHORTCUT_FILE) -> pd.DataFrame:
    """The negation-shortcut probe's pairs: columns :data:`SHORTCUT_COLUMNS`, ``meaning`` same or opposite.

    Raises:
        ValueError: missing columns, another meaning, or an empty text.
    """
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in SHORTCUT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{Path(path).name} lacks the columns {missing}")
    bad = sorted(set(frame["meaning"]) - {MEANING_SAME, MEANING_OPPOSITE})
    if bad:
        raise ValueError(f"{Path(path).name}: meaning must be {MEANING_SAME!r} or {MEANING_OPPOSITE!r}, got {bad}")
    if (frame[[C.COL_TEXT_A, C.COL_TEXT_B]].apply(lambda c: c.str.strip()) == "").any(axis=None):
        raise ValueError(f"{Path(path).name} has an empty text")
    return frame[SHORTCUT_COLUMNS].reset_index(drop=True)
