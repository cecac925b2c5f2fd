"""Reading a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

The retrieval community's format (Thakur et al., BEIR, 2021): one JSON
object per line with ``_id``, ``title`` and ``text`` in the corpus, ``_id``
and ``text`` in the queries, and tab-separated relevance judgements
``query-id, corpus-id, score`` with a header row.  A passage is its title
and text joined by a space, as the BEIR evaluation scripts embed it.

The corpus is never held whole: :meth:`BeirFolder.corpus_chunks` reads it
``chunk_rows`` lines at a time, each block parsed by
:func:`core.files.json_records.parse_json_records` (the pairs files' JSON
rules: nesting, lone surrogates, objects and arrays refused), so a corpus
larger than memory streams.  A passage or query text takes part by the rule
of every reader of texts (:func:`core.files.texts.unreadable_rows`): a JSON
number or boolean, null, ``""`` and a text of only invisible characters are
dropped with a note naming the lines; a title that is not a string is left
out of its passage.  :func:`read_beir` reads the corpus once before any
model runs, so what it drops, passage ids judged in the qrels but absent
from the corpus, repeated ids and a corpus with no passage are said (or
refused) up front.  Queries are read only for the split's judged query ids;
a query id given twice is refused.  Every message names the file.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from core.files.archive import ZipLimits, unpack_zip
from core.files.decoding import decode_bytes
from core.files.errors import PairsFileError
from core.files.json_records import parse_json_records, row_listing
from core.files.reader import _os_error_message
from core.files.texts import dropped_notes, merge_rows, unreadable_rows
from core.messages import first_line
from core.words import passage_key

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FOLDER = "qrels"
DEFAULT_SPLIT = "test"
ID_FIELD = "_id"
_QREL_COLUMNS = ("query-id", "corpus-id", "score")
# Corpus lines parsed at a time by the scan read_beir makes before any model runs.
SCAN_ROWS = 8192
# An uploaded BEIR zip may unpack to at most this many bytes (a larger corpus streams from disk on the command line).
MAX_UNZIPPED_BYTES = 512 * 1024 * 1024
# A split names a file under qrels/, never a path: no separator, no leading dot.
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")
# Folders an archiver adds beside the content (macOS resource forks).
_ARCHIVER_FOLDERS = frozenset({"__MACOSX"})


@dataclass(frozen=True)
class CorpusChunk:
    """A block of corpus lines: passage ids and texts (title and text), and how far into the file it ends.

    Attributes:
        ids, texts: the passages that take part, in file order.
        fraction: how far into the file the block ends.
        dropped: why passages of the block take no part -> their line numbers
            (:func:`core.files.texts.unreadable_rows`).
        untitled: lines whose title is not a string and was left out.
    """

    ids: list[str]
    texts: list[str]
    fraction: float
    dropped: dict[str, list[int]] = field(default_factory=dict)
    untitled: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class BeirFolder:
    """A BEIR folder, its judged queries read, its corpus ready to stream.

    Attributes:
        folder: the folder.
        split: the qrels split read.
        queries: query id -> text, for every judged query of the split, in qrels order.
        qrels: query id -> {corpus id: relevance}, positive judgements only.
        notes: what reading dropped or changed.
    """

    folder: Path
    split: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def corpus_path(self) -> Path:
        return self.folder / CORPUS_FILE

    def corpus_chunks(self, chunk_rows: int = 2048) -> Iterator[CorpusChunk]:
        """The corpus ``chunk_rows`` lines at a time (module docstring).

        Raises:
            ValueError: ``chunk_rows`` below 1.
            PairsFileError: a line that is not a JSON object with ``_id`` and
                ``text``, a repeated id, or an unreadable file.
        """
        return _corpus_chunks(self.corpus_path, chunk_rows)


def _corpus_chunks(path: Path, chunk_rows: int) -> Iterator[CorpusChunk]:
    """The corpus file ``chunk_rows`` lines at a time (:meth:`BeirFolder.corpus_chunks`)."""
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    seen: dict[str, int] = {}
    lines: list[str] = []
    first, done = 1, 0
    try:
        size = max(path.stat().st_size, 1)
        with open(path, "rb") as fh:
            for raw in fh:
                done += len(raw)
                lines.append(raw.decode("utf-8", errors="replace"))
                if len(lines) >= chunk_rows:
                    yield _corpus_block(lines, first, seen, done / size)
                    first += len(lines)
                    lines = []
            if any(line.strip() for line in lines):
                yield _corpus_block(lines, first, seen, 1.0)
    except OSError as exc:
        raise PairsFileError(f"{CORPUS_FILE}: {_os_error_message(path, exc)}") from exc


def _record_lines(lines: list[str], first: int) -> list[int]:
    """The line number of each JSON Lines record in ``lines`` (blank lines hold none), ``first`` being the first line's."""
    return [first + k for k, line in enumerate(lines) if line.strip()]


def _line_listing(numbers: list[int]) -> str:
    return row_listing(numbers).replace("rows ", "lines ", 1).replace("row ", "line ", 1)


def _corpus_block(lines: list[str], first: int, seen: dict[str, int], fraction: float) -> CorpusChunk:
    text = "".join(lines)
    if not text.strip():
        return CorpusChunk([], [], fraction)
    try:
        records = parse_json_records(text)
    except PairsFileError as exc:
        raise PairsFileError(f"{CORPUS_FILE} (lines {first}-{first + len(lines) - 1}): {exc}") from exc
    frame = records.frame
    numbers = _record_lines(lines, first)
    if len(numbers) != len(frame):  # not one record per line (a JSON array): count records instead
        numbers = [first + r for r in range(len(frame))]
    for column in (ID_FIELD, "text"):
        if column not in frame.columns:
            raise PairsFileError(
                f"{CORPUS_FILE} (lines {first}-{first + len(lines) - 1}): no {column!r} field; a BEIR corpus line is "
                '{"_id": "d1", "title": "…", "text": "…"}'
            )
        if column in records.nested:
            raise PairsFileError(
                f"{CORPUS_FILE}: {column!r} holds JSON objects or arrays in "
                f"{_line_listing([numbers[r - 1] for r in records.nested[column]])}"
            )
    bodies = [passage_key(t) for t in frame["text"]]
    dropped = unreadable_rows(bodies, records.non_text.get("text", []))
    skip = {r for found in dropped.values() for r in found}
    untitled = sorted(set(records.nested.get("title", [])) | set(records.non_text.get("title", [])))
    titles = list(frame["title"]) if "title" in frame.columns else [""] * len(frame)
    ids, texts = [], []
    for r, (doc_id, title, body) in enumerate(zip(frame[ID_FIELD], titles, bodies, strict=True), start=1):
        if doc_id in seen:
            raise PairsFileError(
                f"{CORPUS_FILE}: the id {doc_id!r} appears twice (lines {seen[doc_id]} and {numbers[r - 1]}); every passage needs its "
                "own _id"
            )
        seen[doc_id] = numbers[r - 1]
        if r in skip:
            continue
        ids.append(str(doc_id))
        texts.append(" ".join(f"{'' if r in untitled else title} {body}".split()))
    return CorpusChunk(
        ids, texts, fraction, {why: [numbers[r - 1] for r in found] for why, found in dropped.items()}, [numbers[r - 1] for r in untitled]
    )


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    try:
        decoded = decode_bytes(path.read_bytes())
    except OSError as exc:
        raise PairsFileError(f"{path.parent.name}/{path.name}: {_os_error_message(path, exc)}") from exc
    except PairsFileError as exc:
        raise PairsFileError(f"{path.parent.name}/{path.name}: {exc}") from exc
    try:
        frame = pd.read_csv(io.StringIO(decoded.text), sep="\t", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise PairsFileError(f"{path.parent.name}/{path.name}: not a tab-separated qrels file ({first_line(exc)})") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    if list(frame.columns[:3]) != list(_QREL_COLUMNS):
        raise PairsFileError(
            f"{path.parent.name}/{path.name}: the header must be {chr(9).join(_QREL_COLUMNS)} (tab-separated), got {list(frame.columns)}"
        )
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = [i + 2 for i in frame.index[scores.isna() | (scores % 1 != 0)]]
    if bad:
        raise PairsFileError(f"{path.parent.name}/{path.name}: the score is not a whole number on line(s) {', '.join(map(str, bad[:10]))}")
    qrels: dict[str, dict[str, int]] = {}
    for qid, did, score in zip(frame["query-id"], frame["corpus-id"], scores.astype(int), strict=True):
        if score > 0:
            qrels.setdefault(qid.strip(), {})[did.strip()] = int(score)
    return qrels


def _read_queries(path: Path, wanted: set[str]) -> tuple[dict[str, str], set[str], list[str]]:
    """The judged queries' texts, the judged ids the file holds (texts or not), and the notes."""
    try:
        decoded = decode_bytes(path.read_bytes())
        records = parse_json_records(decoded.text)
    except OSError as exc:
        raise PairsFileError(f"{QUERIES_FILE}: {_os_error_message(path, exc)}") from exc
    except PairsFileError as exc:
        raise PairsFileError(f"{QUERIES_FILE}: {exc}") from exc
    frame = records.frame
    for column in (ID_FIELD, "text"):
        if column not in frame.columns or column in records.nested:
            raise PairsFileError(f'{QUERIES_FILE}: each line needs a {column!r} string; a BEIR query line is {{"_id": "q1", "text": "…"}}')
    numbers = _record_lines(decoded.text.splitlines(), 1)
    if len(numbers) != len(frame):
        numbers = list(range(1, len(frame) + 1))
    seen: dict[str, int] = {}
    for qid, line in zip(frame[ID_FIELD], numbers, strict=True):
        if qid in seen:
            # A second line would silently replace the judged query's text.
            raise PairsFileError(
                f"{QUERIES_FILE}: the query id {qid!r} appears twice (lines {seen[qid]} and {line}); every query needs its own _id"
            )
        seen[qid] = line
    texts = [passage_key(t) for t in frame["text"]]
    judged = [r for r, q in enumerate(frame[ID_FIELD], start=1) if q in wanted]
    non_text = set(records.non_text.get("text", []))
    dropped = unreadable_rows(
        [texts[r - 1] for r in judged],
        [k for k, r in enumerate(judged, start=1) if r in non_text],
        numbers=[numbers[r - 1] for r in judged],
    )
    skip = {r for found in dropped.values() for r in found}
    found = {str(q): t for q, t, line in zip(frame[ID_FIELD], texts, numbers, strict=True) if q in wanted and line not in skip}
    notes = [f"{QUERIES_FILE}: {n}" for n in records.notes]
    notes += [f"{QUERIES_FILE}: {n}" for n in dropped_notes(dropped, "text", unit="judged query", where="line")]
    return found, {str(q) for q in frame[ID_FIELD] if q in wanted}, notes


def _scan_corpus(path: Path, qrels: dict[str, dict[str, int]]) -> list[str]:
    """Read the corpus once before any model runs: what to say about it (module docstring).

    Raises:
        PairsFileError: a malformed line, a repeated id, or no passage that takes part.
    """
    ids: set[str] = set()
    dropped: dict[str, list[int]] = {}
    untitled: list[int] = []
    for chunk in _corpus_chunks(path, SCAN_ROWS):
        ids.update(chunk.ids)
        merge_rows(dropped, chunk.dropped)
        untitled += chunk.untitled
    notes = [f"{CORPUS_FILE}: {n}" for n in dropped_notes(dropped, "text", unit="passage", where="line")]
    if untitled:
        notes.append(
            f"{CORPUS_FILE}: left out the 'title' of {len(untitled)} passage(s) whose title is not a text, the passage's text kept "
            f"({_line_listing(untitled)})"
        )
    if not ids:
        why = f" ({len({r for found in dropped.values() for r in found})} line(s) dropped: {'; '.join(notes)})" if dropped else ""
        raise PairsFileError(
            f'{CORPUS_FILE} holds no passage to rank{why}; a BEIR corpus line is {{"_id": "d1", "title": "…", "text": "…"}}'
        )
    judged = {d for q in qrels.values() for d in q}
    absent = sorted(judged - ids)
    if absent:
        every = " none of the judged passages is there, so every figure will be 0;" if len(absent) == len(judged) else ""
        notes.append(
            f"{len(absent)} of the {len(judged)} passage id(s) judged relevant are not in {CORPUS_FILE} (or were dropped), e.g. "
            f"{absent[0]!r}:"
            f"{every} they still count as relevant (trec_eval's rule) but cannot be retrieved, so recall and nDCG are lower"
        )
    return notes


def read_beir(folder: str | Path, split: str = DEFAULT_SPLIT) -> BeirFolder:
    """A BEIR folder's judged queries and judgements; the corpus is read once here (checked, noted) and streamed later.

    Args:
        folder: the folder holding ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/``.
        split: the qrels file's stem (``test``, ``dev``, ``train``).

    Returns:
        A :class:`BeirFolder`; judged queries missing from ``queries.jsonl``
        or without a text, passages without a text, and judged passages absent
        from the corpus are said in its notes.

    Raises:
        PairsFileError: a split that is not a plain name (:func:`check_split`),
            not a folder, a file missing (the message lists the splits there
            are), a malformed file, a repeated query or passage id, no judged
            query left, or no passage to rank.
    """
    check_split(split)
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise PairsFileError(f"{folder}: not a folder; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/<split>.tsv")
    for name in (CORPUS_FILE, QUERIES_FILE):
        if not (folder / name).is_file():
            raise PairsFileError(f"{folder}: no {name}; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/<split>.tsv")
    qrels_path = folder / QRELS_FOLDER / f"{split}.tsv"
    if not qrels_path.is_file():
        splits = beir_splits(folder)
        raise PairsFileError(f"{folder}: no {QRELS_FOLDER}/{split}.tsv; splits there: {', '.join(splits) or 'none'}")
    qrels = _read_qrels(qrels_path)
    queries, present, notes = _read_queries(folder / QUERIES_FILE, set(qrels))
    missing = [q for q in qrels if q not in present]
    if missing:
        notes.append(f"{len(missing)} judged quer{'y' if len(missing) == 1 else 'ies'} not in {QUERIES_FILE} left out, e.g. {missing[0]!r}")
    kept = {q: queries[q] for q in qrels if queries.get(q)}
    if not kept:
        raise PairsFileError(f"{folder}: no query of {QRELS_FOLDER}/{split}.tsv has a positive judgement and a text in {QUERIES_FILE}")
    judged = {q: qrels[q] for q in kept}
    return BeirFolder(folder, split, kept, judged, tuple(notes + _scan_corpus(folder / CORPUS_FILE, judged)))


def check_split(split: str) -> str:
    """``split`` when it is a plain name of a file under ``qrels/`` (``test``, ``dev``, ``train``).

    Raises:
        PairsFileError: a path (``/``, ``\\``, ``..``), a name starting with a dot, or an empty one.
    """
    if not isinstance(split, str) or not _SPLIT_NAME.match(split):
        raise PairsFileError(
            f"the split must be the name of a file under {QRELS_FOLDER}/ without .tsv (test, dev, train), "
            f"not a path: got {str(split)[:60]!r}"
        )
    return split


def beir_splits(folder: str | Path) -> list[str]:
    """The splits a BEIR folder holds: the stems of ``qrels/*.tsv`` that are plain names, sorted."""
    qrels = Path(folder) / QRELS_FOLDER
    if not qrels.is_dir():
        return []
    return sorted(p.stem for p in qrels.glob("*.tsv") if p.is_file() and not p.is_symlink() and _SPLIT_NAME.match(p.stem))


def _beir_members(files: list[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Which members of a zip form the BEIR folder, and their names inside it.

    The folder is the one holding the shallowest ``corpus.jsonl``: the zip's
    top, or a folder in it (``scifact/corpus.jsonl``, ``export/scifact/...``);
    an archiver's ``__MACOSX`` copies are passed over.
    """
    content = [p for p in files if p[0] not in _ARCHIVER_FOLDERS]
    corpora = sorted((p for p in content if p[-1] == CORPUS_FILE), key=len)
    if not corpora:
        raise PairsFileError(f"no {CORPUS_FILE} in the zip; zip the folder that holds {CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/")
    shallowest = [p for p in corpora if len(p) == len(corpora[0])]
    if len(shallowest) > 1:
        folders = ", ".join("/".join(p[:-1]) + "/" for p in shallowest[:3])
        raise PairsFileError(f"holds {len(shallowest)} BEIR folders side by side ({folders}); zip one of them")
    root = corpora[0][:-1]
    picked: dict[tuple[str, ...], tuple[str, ...]] = {}
    for parts in content:
        inner = parts[len(root) :]
        if parts[: len(root)] != root:
            continue
        if inner in ((CORPUS_FILE,), (QUERIES_FILE,)) or (
            len(inner) == 2 and inner[0] == QRELS_FOLDER and inner[1].endswith(".tsv") and _SPLIT_NAME.match(inner[1][: -len(".tsv")])
        ):
            picked[parts] = inner
    return picked


def unpack_beir_zip(data: bytes, name: str, into: str | Path, *, max_bytes: int = MAX_UNZIPPED_BYTES) -> list[str]:
    """Unpack an uploaded zip of a BEIR folder into ``into``; returns the splits it holds.

    The folder may sit at the zip's top or inside folders (``scifact/corpus.jsonl``).
    Only ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` are
    unpacked, through :func:`core.files.archive.unpack_zip` (no links, no paths
    out of ``into``, limits on entries, size and compression ratio).

    Raises:
        PairsFileError: not a zip, a damaged or refused member, no ``corpus.jsonl``,
            no ``queries.jsonl`` or no split, or larger than ``max_bytes``; the message names the upload.
    """

    def pick(files: list[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
        try:
            return _beir_members(files)
        except PairsFileError as exc:
            raise PairsFileError(f"{name}: {exc}") from None

    written = unpack_zip(data, name, into, pick, ZipLimits(max_bytes=max_bytes))
    if (QUERIES_FILE,) not in written:
        raise PairsFileError(
            f"{name}: no {QUERIES_FILE} beside {CORPUS_FILE}; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and "
            f"{QRELS_FOLDER}/<split>.tsv"
        )
    splits = beir_splits(into)
    if not splits:
        raise PairsFileError(
            f"{name}: no {QRELS_FOLDER}/<split>.tsv beside {CORPUS_FILE}; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and "
            f"{QRELS_FOLDER}/<split>.tsv"
        )
    return splits


def read_unpacked(folder: str | Path, name: str, split: str) -> BeirFolder:
    """:func:`read_beir` of a folder :func:`unpack_beir_zip` wrote, its messages naming the upload instead of the folder.

    Raises:
        PairsFileError: as :func:`read_beir`.
    """
    try:
        return read_beir(folder, split)
    except PairsFileError as exc:
        raise PairsFileError(f"{name}: {str(exc).replace(str(folder), 'the zip')}") from None


def beir_from_zip(
    data: bytes, name: str, into: str | Path, split: str = DEFAULT_SPLIT, *, max_bytes: int = MAX_UNZIPPED_BYTES
) -> BeirFolder:
    """An uploaded zip of a BEIR folder, unpacked into ``into`` (:func:`unpack_beir_zip`) and read (:func:`read_beir`).

    Raises:
        PairsFileError: as :func:`unpack_beir_zip` and :func:`read_beir`; the message names the upload.
    """
    check_split(split)
    unpack_beir_zip(data, name, into, max_bytes=max_bytes)
    return read_unpacked(into, name, split)
