"""The dedup guard: a dedup run's clusters read beside the corpus, split by meaning, and what to keep instead.

Dedup tools (MinHash LSH, SemDeDup's k-means, embedding clusters) group
passages by n-gram or embedding similarity and keep one per cluster, never
asking what differs.  A negation twin ("engaged in full-time work" / "not
engaged in full-time work") is as close as a trivial copy, so the run
deletes the opposite of what it keeps.

:func:`guard_dedup` takes the run's decisions (:class:`DedupRun`, from a file
of ``id,cluster_id`` rows as Lilac's and NeMo Curator's cluster outputs have,
or ``id,duplicate_of`` pairs) and the corpus's passages by id
(:class:`IdCorpus`), and splits every cluster into groups of one meaning:
the passage the run keeps leads the first group, and each other passage, in
corpus order, joins the first group whose leader it is a near-duplicate of
(:func:`core.audit.kinds.pair_kind`), else leads a group of its own.  Any kind
other than near-duplicate is a different meaning.  Leaders are what the guard
keeps (``keep.csv``): one passage per distinct meaning.  Comparing with
leaders only never chains (a passage joins a group only through the passage
that group keeps), and a leader sharing under half of a passage's word stems
is not asked at all, so a cluster of many meanings costs about one
classification per passage.

Which passage a ``cluster_id`` run keeps is not in its file; as ``keep
first`` deduplication does (pandas' ``drop_duplicates``, Lilac's and NeMo
Curator's examples), the guard takes the cluster's first passage in corpus
order.  A ``duplicate_of`` run says it: each row removes ``id`` as a copy of
``duplicate_of``, so the passage at the end of each chain is kept.

Every problem with the files is a :class:`~core.files.errors.PairsFileError`
of one line naming the file.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core import lexicon
from core.audit import kinds
from core.files.decoding import decode_bytes
from core.files.errors import PairsFileError
from core.files.json_records import parse_json_records, row_listing
from core.files.reader import _check_size, _sniff
from core.files.texts import TEXT_COLUMNS, read_file_bytes
from core.messages import first_line
from core.words import word_changes

ID_COLUMNS = ("id", "_id", "doc_id")
CLUSTER_COLUMNS = ("cluster_id", "cluster", "group", "group_id", "__cluster__")
DUPLICATE_COLUMNS = ("duplicate_of",)
SHAPE_CLUSTER, SHAPE_DUPLICATE = "cluster_id", "duplicate_of"
COL_CLUSTER, COL_ID, COL_TEXT = "cluster_id", "id", "text"
COL_KEPT_ID, COL_REMOVED_ID, COL_KEPT_TEXT, COL_REMOVED_TEXT = "kept_id", "removed_id", "kept_text", "removed_text"
COL_KIND, COL_MODE, COL_MODES = "kind", "mode", "modes"
COL_CHANGED_KEPT, COL_CHANGED_REMOVED = "changed_kept", "changed_removed"
COL_GROUP, COL_RUN_KEEPS, COL_GUARD_KEEPS = "group", "run_keeps", "guard_keeps"
REMOVAL_COLUMNS = [
    COL_CLUSTER,
    COL_KEPT_ID,
    COL_REMOVED_ID,
    COL_KEPT_TEXT,
    COL_REMOVED_TEXT,
    COL_KIND,
    COL_MODE,
    COL_MODES,
    COL_CHANGED_KEPT,
    COL_CHANGED_REMOVED,
    COL_GUARD_KEEPS,
]
PASSAGE_COLUMNS = [COL_CLUSTER, COL_ID, COL_TEXT, COL_GROUP, COL_RUN_KEEPS, COL_GUARD_KEEPS]
SUMMARY_COLUMNS = [COL_KIND, COL_MODE, "removals", "clusters", "share_of_removals"]
KEEP_FILE = "keep.csv"
DEDUP_TYPES = ("csv", "tsv", "parquet", "json", "jsonl")
WORST = 5
# The candidate filter before a passage is classified against a group's leader: share of word stems in common.
MIN_SHARED_STEMS = 0.5
_STEM = 4
_ARTICLES = frozenset({"a", "an", "the"})
_WORD_RE = re.compile(r"\w+")
_EXAMPLE = "id,cluster_id (or id,duplicate_of)"

ProgressFn = Callable[[float, str], None]


@dataclass(frozen=True)
class IdCorpus:
    """A corpus whose passages carry ids.

    Attributes:
        ids: one id per row (n), distinct, never blank.
        texts: the passage of each row (n), whitespace runs collapsed (a blank passage is ``""``).
        notes: what reading changed, each naming the file.
    """

    ids: list[str]
    texts: list[str]
    notes: list[str] = field(default_factory=list)

    def text_of(self) -> dict[str, str]:
        """Id -> passage."""
        return dict(zip(self.ids, self.texts, strict=True))


@dataclass(frozen=True)
class DedupRun:
    """A dedup run's decisions.

    Attributes:
        shape: ``cluster_id`` or ``duplicate_of`` (which file shape it came from).
        clusters: cluster id -> its member ids (two or more), in corpus order with the kept one first.
        notes: what reading noticed (repeated rows, clusters of one, passages in no cluster), each naming the file.
    """

    shape: str
    clusters: dict[str, list[str]]
    notes: list[str] = field(default_factory=list)

    @property
    def removals(self) -> int:
        """How many passages the run removes (every member of a cluster but the first)."""
        return sum(len(m) - 1 for m in self.clusters.values())


@dataclass(frozen=True)
class DedupGuard:
    """What the guard found in a dedup run.

    Attributes:
        passages: one row per clustered passage (``PASSAGE_COLUMNS``): its cluster, its meaning group within the
            cluster (0 is the group of the passage the run keeps), whether the run keeps it, whether the guard does.
        removals: one row per passage the run removes (``REMOVAL_COLUMNS``): the pair (kept, removed) classified by
            :func:`core.audit.kinds.pair_kind`, the differing words of each side, whether the guard keeps it.
        summary: removals by kind and mode (``SUMMARY_COLUMNS``), tidy, twins first.
        keep: the ids the guard keeps (``keep.csv``), in corpus order: every passage in no cluster, and one
            passage per distinct meaning of each cluster.
        run_keeps: how many passages the run keeps (``len(keep)`` minus the meanings it would lose).
        notes: the run's reading notes.
    """

    passages: pd.DataFrame
    removals: pd.DataFrame
    summary: pd.DataFrame
    keep: list[str]
    run_keeps: int
    notes: list[str] = field(default_factory=list)

    @property
    def lost(self) -> pd.DataFrame:
        """The removals that delete a different meaning (any kind but near-duplicate), worst clusters first."""
        lost = self.removals[self.removals[COL_KIND] != kinds.KIND_DUPLICATE]
        twins = (lost[COL_KIND] == kinds.KIND_TWIN).groupby(lost[COL_CLUSTER]).transform("sum")
        size = lost.groupby(COL_CLUSTER)[COL_KIND].transform("size")
        order = pd.DataFrame({"twins": twins, "size": size, "cluster": lost[COL_CLUSTER]})
        ranked = order.sort_values(["twins", "size", "cluster"], ascending=[False, False, True], kind="stable").index
        return lost.loc[ranked].reset_index(drop=True)

    def worst(self, clusters: int = WORST) -> pd.DataFrame:
        """The removals of the ``clusters`` worst clusters (most twins deleted, then most meanings)."""
        lost = self.lost
        chosen = list(dict.fromkeys(lost[COL_CLUSTER].tolist()))[:clusters]
        return lost[lost[COL_CLUSTER].isin(chosen)].reset_index(drop=True)

    def keep_frame(self) -> pd.DataFrame:
        """``keep.csv``'s table: one ``id`` per row."""
        return pd.DataFrame({COL_ID: self.keep})


# --------------------------------------------------------------------------- reading


def _cell(value: object) -> str:
    """A cell as an id: stripped text; a whole float (``12.0``, as Parquet writes an integer column with nulls) as ``12``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _table(data: bytes, name: str, what: str, max_mb: float) -> pd.DataFrame:
    """A tabular file's rows (CSV, TSV, Parquet, JSON, JSON Lines), every value text; columns stripped."""
    suffix = Path(name).suffix.lower()
    try:
        _check_size(len(data), max_mb)
        if suffix == ".parquet":
            try:
                frame = pd.read_parquet(io.BytesIO(bytes(data)))
            except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds on bad bytes; each becomes one line
                raise PairsFileError(f"cannot be read as Parquet: {first_line(exc)}") from exc
            frame = frame.map(_cell) if len(frame.columns) else frame
        else:
            text = decode_bytes(bytes(data)).text
            if suffix in (".json", ".jsonl") or text.lstrip().startswith(("{", "[")):
                frame = parse_json_records(text).frame.fillna("")
            else:
                try:
                    frame = pd.read_csv(io.StringIO(text), sep=_sniff(text, suffix), dtype=str, keep_default_na=False)
                except (pd.errors.ParserError, csv.Error) as exc:
                    raise PairsFileError(f"cannot be read as delimited text: {first_line(exc)}") from exc
                except pd.errors.EmptyDataError as exc:
                    raise PairsFileError("is empty") from exc
    except PairsFileError as exc:
        raise PairsFileError(f"{what} file {name}: {str(exc).removeprefix('the file ')}") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _find(columns: Sequence[str], guesses: Sequence[str]) -> str | None:
    lower = {c.lower(): c for c in columns}
    return next((lower[g] for g in guesses if g in lower), None)


def _repeated(values: Sequence[str]) -> list[str]:
    return [v for v, count in Counter(values).items() if count > 1]


def _listing(values: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit:,} more" if len(values) > limit else "")


def parse_id_corpus(data: bytes, name: str, *, max_rows: int, max_mb: float) -> IdCorpus:
    """A corpus file's passages with their ids (CSV, TSV, Parquet, JSON or JSON Lines with an id and a text column).

    Args:
        data: the file's bytes.
        name: its name; the suffix picks the format and messages name it.
        max_rows: refuse more rows than this.
        max_mb: refuse larger files.

    Returns:
        An :class:`IdCorpus` holding every row (repeated passages too: a dedup run decides about each row).

    Raises:
        PairsFileError: unreadable, no id or text column, blank or repeated ids, too many rows.
    """
    if Path(name).suffix.lower() == ".txt":
        raise PairsFileError(
            f"corpus file {name} is plain text, one passage per line, without ids; the dedup guard needs a CSV, TSV, Parquet "
            "or JSON file with an id and a text column"
        )
    frame = _table(data, name, "corpus", max_mb)
    id_column = _find(list(frame.columns), ID_COLUMNS)
    text_column = _find([c for c in frame.columns if c != id_column], TEXT_COLUMNS["corpus"])
    if id_column is None or text_column is None:
        missing = "an id column (id, _id or doc_id)" if id_column is None else f"a text column ({', '.join(TEXT_COLUMNS['corpus'][:3])})"
        raise PairsFileError(f"corpus file {name} has columns {list(frame.columns)}; the dedup guard needs {missing}")
    if len(frame) > max_rows:
        raise PairsFileError(f"corpus file {name} has {len(frame):,} rows; the limit is {max_rows:,}")
    ids = [_cell(v) for v in frame[id_column].tolist()]
    blank = [n for n, i in enumerate(ids, start=1) if not i]
    if blank:
        raise PairsFileError(f"corpus file {name}: no id in column {id_column!r} on {row_listing(blank)}; every passage needs one")
    repeated = _repeated(ids)
    if repeated:
        raise PairsFileError(f"corpus file {name}: id {_listing(repeated)} is on more than one row; ids must name one passage each")
    texts = [" ".join(str(t).split()) for t in frame[text_column].tolist()]
    empty = [n for n, t in enumerate(texts, start=1) if not t]
    notes = [f"{name}: an empty passage on {row_listing(empty)}"] if empty else []
    return IdCorpus(ids, texts, notes)


def read_id_corpus(path: str | Path, *, max_rows: int, max_mb: float) -> IdCorpus:
    """:func:`parse_id_corpus` of a file on disk (its size checked before reading).

    Raises:
        PairsFileError: unreadable, or as :func:`parse_id_corpus`.
    """
    path = Path(path).expanduser()
    return parse_id_corpus(read_file_bytes(path, max_mb, f"corpus file {path}"), path.name, max_rows=max_rows, max_mb=max_mb)


def _cluster_rows(ids: list[str], clusters: list[str], name: str, order: Mapping[str, int], notes: list[str]) -> dict[str, list[str]]:
    members: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    unclustered = 0
    for row, (pid, cluster) in enumerate(zip(ids, clusters, strict=True), start=1):
        if not cluster:
            unclustered += 1
            continue
        if pid in seen:
            if seen[pid] != cluster:
                raise PairsFileError(
                    f"dedup file {name}: id {pid!r} is in cluster {seen[pid]!r} and, on row {row}, in cluster {cluster!r}; "
                    "a passage belongs to one cluster"
                )
            continue
        seen[pid] = cluster
        members.setdefault(cluster, []).append(pid)
    if unclustered:
        notes.append(f"{name}: {unclustered:,} row(s) have no cluster_id: those passages are in no cluster")
    return {c: sorted(m, key=order.__getitem__) for c, m in members.items()}


def _duplicate_rows(ids: list[str], targets: list[str], name: str, order: Mapping[str, int]) -> dict[str, list[str]]:
    """Clusters of ``id,duplicate_of`` pairs: each chain's end is kept, and names its cluster."""
    parent: dict[str, str] = {}
    for row, (pid, target) in enumerate(zip(ids, targets, strict=True), start=1):
        if not target or target == pid:
            continue  # a passage marked as its own original (or with none) is one the run keeps
        if pid in parent and parent[pid] != target:
            raise PairsFileError(
                f"dedup file {name}: id {pid!r} is a duplicate of {parent[pid]!r} and, on row {row}, of {target!r}; "
                "give each removed passage one original"
            )
        parent[pid] = target
    root_of: dict[str, str] = {}
    for start in parent:
        path: list[str] = []
        node = start
        while node in parent and node not in root_of:
            if node in path:
                loop = path[path.index(node) :]
                raise PairsFileError(
                    f"dedup file {name}: ids {_listing(loop)} are duplicates of one another in a loop; the run would keep none of them"
                )
            path.append(node)
            node = parent[node]
        root = root_of.get(node, node)
        for visited in path:
            root_of[visited] = root
    members: dict[str, list[str]] = {}
    for pid, root in root_of.items():
        members.setdefault(root, [root]).append(pid)
    # The kept passage first, then the removed ones in corpus order.
    return {root: [root, *sorted(m[1:], key=order.__getitem__)] for root, m in members.items()}


def parse_dedup(data: bytes, name: str, corpus_ids: Sequence[str], *, max_rows: int, max_mb: float) -> DedupRun:
    """A dedup run's decisions file, checked against the corpus's ids.

    The file is CSV, TSV, Parquet, JSON or JSON Lines with an id column (``id``, ``_id`` or ``doc_id``) and either a
    cluster column (``cluster_id``, ``cluster``, ``group``, ``group_id`` or text-dedup's ``__cluster__``) or a
    ``duplicate_of`` column, never both.

    Args:
        data: the file's bytes.
        name: its name; the suffix picks the format and messages name it.
        corpus_ids: the corpus's ids (n), in corpus order.
        max_rows: refuse more rows than this.
        max_mb: refuse larger files.

    Returns:
        A :class:`DedupRun` whose clusters hold two or more passages each.

    Raises:
        PairsFileError: unreadable; no id column; neither or both shapes; an id the corpus lacks; an id in two clusters
            or a duplicate of two passages; a loop of duplicates; no cluster of two or more passages.
    """
    frame = _table(data, name, "dedup", max_mb)
    id_column = _find(list(frame.columns), ID_COLUMNS)
    cluster_column = _find(list(frame.columns), CLUSTER_COLUMNS)
    duplicate_column = _find(list(frame.columns), DUPLICATE_COLUMNS)
    if id_column is None or (cluster_column is None and duplicate_column is None):
        raise PairsFileError(f"dedup file {name} has columns {list(frame.columns)}; it needs {_EXAMPLE}")
    if cluster_column is not None and duplicate_column is not None:
        raise PairsFileError(
            f"dedup file {name} has both a {cluster_column!r} and a {duplicate_column!r} column; give one shape: {_EXAMPLE}"
        )
    if len(frame) > max_rows:
        raise PairsFileError(f"dedup file {name} has {len(frame):,} rows; the limit is {max_rows:,}")
    if frame.empty:
        raise PairsFileError(f"dedup file {name} holds no rows")
    second = cluster_column or duplicate_column
    ids = [_cell(v) for v in frame[id_column].tolist()]
    others = [_cell(v) for v in frame[second].tolist()]
    blank = [n for n, i in enumerate(ids, start=1) if not i]
    if blank:
        raise PairsFileError(f"dedup file {name}: no id on {row_listing(blank)}")
    order = {pid: n for n, pid in enumerate(corpus_ids)}
    named = ids + (others if duplicate_column is not None else [])
    unknown = list(dict.fromkeys(i for i in named if i and i not in order))
    if unknown:
        raise PairsFileError(
            f"dedup file {name} names {len(unknown):,} id(s) the corpus does not hold ({_listing(unknown)}): "
            "is it the run of another corpus?"
        )
    notes: list[str] = []
    rows = list(zip(ids, others, strict=True))
    repeats = len(rows) - len(set(rows))
    if repeats:
        notes.append(f"{name}: {repeats:,} repeated row(s) read once")
    if cluster_column is not None:
        shape, clusters = SHAPE_CLUSTER, _cluster_rows(ids, others, name, order, notes)
    else:
        shape, clusters = SHAPE_DUPLICATE, _duplicate_rows(ids, others, name, order)
    singles = [c for c, m in clusters.items() if len(m) < 2]
    if singles:
        notes.append(f"{name}: {len(singles):,} cluster(s) hold one passage ({_listing(singles)}): the run removes nothing there")
    clusters = {c: m for c, m in clusters.items() if len(m) >= 2}
    if not clusters:
        raise PairsFileError(f"dedup file {name} holds no cluster of two or more passages: the run removed nothing to check")
    in_clusters = sum(len(m) for m in clusters.values())
    if shape == SHAPE_CLUSTER and in_clusters + len(singles) < len(order):
        notes.append(f"{name}: {len(order) - in_clusters - len(singles):,} passage(s) of the corpus are in no cluster: kept as they are")
    return DedupRun(shape, clusters, notes)


def read_dedup(path: str | Path, corpus_ids: Sequence[str], *, max_rows: int, max_mb: float) -> DedupRun:
    """:func:`parse_dedup` of a file on disk (its size checked before reading).

    Raises:
        PairsFileError: unreadable, or as :func:`parse_dedup`.
    """
    path = Path(path).expanduser()
    return parse_dedup(read_file_bytes(path, max_mb, f"dedup file {path}"), path.name, corpus_ids, max_rows=max_rows, max_mb=max_mb)


# --------------------------------------------------------------------------- the guard


def _stems(text: str) -> frozenset[str]:
    """The text's word stems as the candidate filter compares them: lowercase words cut to 4 letters, articles dropped."""
    return frozenset(w[:_STEM] for w in _WORD_RE.findall(text.casefold()) if w not in _ARTICLES)


def _may_be_near_duplicates(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two passages share enough stems to be worth classifying (a near-duplicate shares nearly all of them)."""
    if not a or not b:
        return a == b
    return len(a & b) >= MIN_SHARED_STEMS * len(a | b)


def _groups(texts: list[str]) -> tuple[list[int], list[kinds.PairKind | None]]:
    """Each passage's meaning group (0: the first passage's) and its kind against the first passage (None for it).

    A passage joins the first group whose leader it is a near-duplicate of, else leads a new one.  Every passage is
    classified against the first (what the run deletes); against the other leaders only where they share at least
    :data:`MIN_SHARED_STEMS` of their stems, so a cluster of many meanings costs one set comparison per leader, not
    one classification.  A pair the filter skips stays apart: the filter can keep a copy, never delete a meaning.
    """
    stems = [_stems(t) for t in texts]
    leaders: list[int] = [0]
    group = [0]
    against_kept: list[kinds.PairKind | None] = [None]
    for n in range(1, len(texts)):
        verdict = kinds.pair_kind(texts[0], texts[n])
        against_kept.append(verdict)
        if verdict.kind == kinds.KIND_DUPLICATE:
            group.append(0)
            continue
        joined = next(
            (
                g
                for g, lead in enumerate(leaders)
                if g > 0
                and _may_be_near_duplicates(stems[lead], stems[n])
                and kinds.pair_kind(texts[lead], texts[n]).kind == kinds.KIND_DUPLICATE
            ),
            None,
        )
        if joined is None:
            leaders.append(n)
            joined = len(leaders) - 1
        group.append(joined)
    return group, against_kept


def _kind_order(kind: str, mode: str) -> tuple[int, int, str]:
    """Twins first (modes in ``FAILURE_MODES`` order), then other different meanings, near-duplicates last."""
    if kind == kinds.KIND_TWIN:
        return 0, lexicon.FAILURE_MODES.index(mode) if mode in lexicon.FAILURE_MODES else len(lexicon.FAILURE_MODES), mode
    return (2 if kind == kinds.KIND_DUPLICATE else 1), 0, kind


def removal_summary(removals: pd.DataFrame) -> pd.DataFrame:
    """Removals by kind and mode: count, clusters touched, share of all removals (``SUMMARY_COLUMNS``), twins first.

    Args:
        removals: rows of ``REMOVAL_COLUMNS`` (exactly those to count).
    """
    if removals.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    grouped = removals.groupby([COL_KIND, COL_MODE], sort=False).agg(removals=(COL_REMOVED_ID, "size"), clusters=(COL_CLUSTER, "nunique"))
    summary = grouped.reset_index()
    summary["share_of_removals"] = summary["removals"] / len(removals)
    order = sorted(range(len(summary)), key=lambda r: _kind_order(str(summary[COL_KIND].iat[r]), str(summary[COL_MODE].iat[r])))
    return summary.iloc[order].reset_index(drop=True)[SUMMARY_COLUMNS]


def guard_dedup(corpus: IdCorpus, run: DedupRun, *, progress: ProgressFn | None = None) -> DedupGuard:
    """Split each of the run's clusters by meaning and say what the run deletes (the rule of the module docstring).

    Args:
        corpus: the passages by id (n).
        run: the run's clusters, every id in ``corpus``.
        progress: (fraction, message) callback, called every few clusters.

    Returns:
        A :class:`DedupGuard`.

    Raises:
        ValueError: a cluster names an id the corpus lacks, or a passage is in two clusters.
    """
    text = corpus.text_of()
    placed: dict[str, str] = {}
    for cluster, members in run.clusters.items():
        for pid in members:
            if pid not in text:
                raise ValueError(f"cluster {cluster!r} names id {pid!r}, which the corpus does not hold")
            if pid in placed:
                raise ValueError(f"id {pid!r} is in clusters {placed[pid]!r} and {cluster!r}")
            placed[pid] = cluster
    passages, removals = [], []
    guard_drops: set[str] = set()
    total = len(run.clusters)
    for done, (cluster, members) in enumerate(run.clusters.items()):
        texts = [text[pid] for pid in members]
        group, verdicts = _groups(texts)
        leaders = {g: n for n, g in reversed(list(enumerate(group)))}
        for n, pid in enumerate(members):
            keeps = leaders[group[n]] == n
            if not keeps:
                guard_drops.add(pid)
            passages.append((cluster, pid, texts[n], group[n], n == 0, keeps))
            verdict = verdicts[n]
            if verdict is None:
                continue
            # The marked words matter where one edit separates the texts; passages that differ throughout are not marked.
            changed = kinds.changed_words(texts[0], texts[n]) if verdict.kind != kinds.KIND_OTHER else ("", "")
            removals.append(
                (cluster, members[0], pid, texts[0], texts[n], verdict.kind, verdict.mode, ";".join(verdict.modes), *changed, keeps)
            )
        if progress is not None and (done % 50 == 0 or done == total - 1):
            progress((done + 1) / total, f"split {done + 1:,}/{total:,} clusters by meaning")
    removal_frame = pd.DataFrame(removals, columns=REMOVAL_COLUMNS)
    keep = [pid for pid in corpus.ids if pid not in guard_drops]
    run_keeps = len(corpus.ids) - run.removals
    return DedupGuard(
        pd.DataFrame(passages, columns=PASSAGE_COLUMNS), removal_frame, removal_summary(removal_frame), keep, run_keeps, list(run.notes)
    )


def dedup_findings(guard: DedupGuard) -> list[str]:
    """The guard's finding in sentences: what the run removes, how much of it is another meaning, what keep.csv keeps."""
    removals = guard.removals
    n = len(removals)
    clusters = removals[COL_CLUSTER].nunique()
    lost = removals[removals[COL_KIND] != kinds.KIND_DUPLICATE]
    twins = lost[lost[COL_KIND] == kinds.KIND_TWIN]
    by_mode = twins[COL_MODE].value_counts()
    modes = ", ".join(f"{str(mode).replace('_', ' ')} {count:,}" for mode, count in by_mode.items())
    lines = [
        f"The dedup run removes {n:,} passage(s) from {clusters:,} cluster(s); {len(lost):,} of them "
        f"({len(lost) / max(n, 1):.0%}) say something other than the passage it keeps: "
        f"{len(twins):,} confusable twin(s){f' ({modes})' if modes else ''} and {len(lost) - len(twins):,} other difference(s)."
    ]
    kept_extra = len(guard.keep) - guard.run_keeps
    lines.append(
        f"keep.csv keeps {len(guard.keep):,} passages where the run keeps {guard.run_keeps:,}: one per distinct meaning in each "
        f"cluster, {kept_extra:,} more than one per cluster."
        if kept_extra
        else "Every removal is a near-duplicate of the passage the run keeps: keep.csv keeps what the run keeps."
    )
    return lines


def marked_pair(text_kept: str, text_removed: str, open_mark: str = "[", close_mark: str = "]") -> tuple[str, str]:
    """Both passages with each run of differing words (:func:`core.words.word_changes`) between the marks, for plain text."""
    out = []
    for tokens in word_changes(text_kept, text_removed):
        parts: list[str] = []
        run: list[str] = []
        for token, changed in [*tokens, ("", False)]:
            if changed:
                run.append(token)
                continue
            if run:
                parts.append(f"{open_mark}{''.join(run)}{close_mark}")
                run = []
            parts.append(token)
        out.append("".join(parts))
    return out[0], out[1]


def removal_cosines(removals: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The audit's cosine of each removal's (kept, removed) pair, per model, where the audit found the pair close.

    Args:
        removals: rows of ``REMOVAL_COLUMNS``.
        pairs: the audit's close pairs (``core.audit.run.PAIR_COLUMNS``: model, text_a, text_b, cosine).

    Returns:
        Tidy rows of cluster_id, removed_id, model, cosine; a removal below the audit's floor (or of a text the
        audit read as the same passage) has no row.
    """
    columns = [COL_CLUSTER, COL_REMOVED_ID, "model", "cosine"]
    if removals.empty or pairs.empty:
        return pd.DataFrame(columns=columns)
    both_ways = pd.concat(
        [
            pairs[["model", "text_a", "text_b", "cosine"]],
            pairs[["model", "text_b", "text_a", "cosine"]].set_axis(["model", "text_a", "text_b", "cosine"], axis=1),
        ],
        ignore_index=True,
    )
    joined = removals[[COL_CLUSTER, COL_REMOVED_ID, COL_KEPT_TEXT, COL_REMOVED_TEXT]].merge(
        both_ways, left_on=[COL_KEPT_TEXT, COL_REMOVED_TEXT], right_on=["text_a", "text_b"]
    )
    return joined[columns].drop_duplicates().reset_index(drop=True)
