"""Reading a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

The retrieval community's format (Thakur et al., BEIR, 2021): one JSON
object per line with ``_id``, ``title`` and ``text`` in the corpus, ``_id``
and ``text`` in the queries, and tab-separated relevance judgements
``query-id, corpus-id, score`` with a header row.  A passage is its title
and text joined by a space, as the BEIR evaluation scripts embed it.

The corpus is never held whole: :meth:`BeirFolder.corpus_chunks` reads it
``chunk_rows`` lines at a time, each block parsed by
:func:`core.files.json_records.parse_json_records` (the pairs files' JSON
rules: nesting, lone surrogates, objects and arrays refused, numbers
dropped), so a corpus larger than memory streams.  Queries are read only for
the split's judged query ids.  Every message names the file.
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
from core.messages import first_line

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FOLDER = "qrels"
DEFAULT_SPLIT = "test"
ID_FIELD = "_id"
_QREL_COLUMNS = ("query-id", "corpus-id", "score")
# An uploaded BEIR zip may unpack to at most this many bytes (a larger corpus streams from disk on the command line).
MAX_UNZIPPED_BYTES = 512 * 1024 * 1024
# A split names a file under qrels/, never a path: no separator, no leading dot (issue 38).
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")
# Folders an archiver adds beside the content (macOS resource forks).
_ARCHIVER_FOLDERS = frozenset({"__MACOSX"})


@dataclass(frozen=True)
class CorpusChunk:
    """A block of corpus lines: passage ids and texts (title and text), and how far into the file it ends."""

    ids: list[str]
    texts: list[str]
    fraction: float


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
        if chunk_rows < 1:
            raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
        path, size = self.corpus_path, max(self.corpus_path.stat().st_size, 1)
        seen: set[str] = set()
        lines: list[str] = []
        first, done = 1, 0
        try:
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


def _corpus_block(lines: list[str], first: int, seen: set[str], fraction: float) -> CorpusChunk:
    text = "".join(lines)
    if not text.strip():
        return CorpusChunk([], [], fraction)
    try:
        records = parse_json_records(text)
    except PairsFileError as exc:
        raise PairsFileError(f"{CORPUS_FILE} (lines {first}-{first + len(lines) - 1}): {exc}") from exc
    frame = records.frame
    for column in (ID_FIELD, "text"):
        if column not in frame.columns:
            raise PairsFileError(f"{CORPUS_FILE} (lines {first}-{first + len(lines) - 1}): no {column!r} field; a BEIR corpus line is "
                                 '{"_id": "d1", "title": "…", "text": "…"}')
        if column in records.nested:
            raise PairsFileError(f"{CORPUS_FILE}: {column!r} holds JSON objects or arrays in {row_listing([first + r - 1 for r in records.nested[column]])}")
    titles = frame["title"] if "title" in frame.columns and "title" not in records.nested else pd.Series("", index=frame.index)
    ids, texts = [], []
    for doc_id, title, body in zip(frame[ID_FIELD], titles, frame["text"], strict=True):
        if doc_id in seen:
            raise PairsFileError(f"{CORPUS_FILE}: the id {doc_id!r} appears twice; every passage needs its own _id")
        seen.add(doc_id)
        ids.append(str(doc_id))
        texts.append(" ".join(f"{title} {body}".split()))
    return CorpusChunk(ids, texts, fraction)


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
        raise PairsFileError(f"{path.parent.name}/{path.name}: the header must be {chr(9).join(_QREL_COLUMNS)} (tab-separated), got {list(frame.columns)}")
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = [i + 2 for i in frame.index[scores.isna() | (scores % 1 != 0)]]
    if bad:
        raise PairsFileError(f"{path.parent.name}/{path.name}: the score is not a whole number on line(s) {', '.join(map(str, bad[:10]))}")
    qrels: dict[str, dict[str, int]] = {}
    for qid, did, score in zip(frame["query-id"], frame["corpus-id"], scores.astype(int), strict=True):
        if score > 0:
            qrels.setdefault(qid.strip(), {})[did.strip()] = int(score)
    return qrels


def _read_queries(path: Path, wanted: set[str]) -> tuple[dict[str, str], list[str]]:
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
            raise PairsFileError(f"{QUERIES_FILE}: each line needs a {column!r} string; a BEIR query line is " '{"_id": "q1", "text": "…"}')
    found = {str(q): " ".join(str(t).split()) for q, t in zip(frame[ID_FIELD], frame["text"], strict=True) if q in wanted}
    return found, [f"{QUERIES_FILE}: {n}" for n in records.notes]


def read_beir(folder: str | Path, split: str = DEFAULT_SPLIT) -> BeirFolder:
    """A BEIR folder's judged queries and judgements; the corpus is streamed later.

    Args:
        folder: the folder holding ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/``.
        split: the qrels file's stem (``test``, ``dev``, ``train``).

    Returns:
        A :class:`BeirFolder`; judged queries missing from ``queries.jsonl``
        or with an empty text are dropped with a note.

    Raises:
        PairsFileError: a split that is not a plain name (:func:`check_split`),
            not a folder, a file missing (the message lists the splits there
            are), a malformed file, or no judged query left.
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
    queries, notes = _read_queries(folder / QUERIES_FILE, set(qrels))
    missing = [q for q in qrels if not queries.get(q)]
    if missing:
        notes.append(f"{len(missing)} judged quer{'y' if len(missing) == 1 else 'ies'} not in {QUERIES_FILE} (or empty) left out, e.g. {missing[0]!r}")
    kept = {q: queries[q] for q in qrels if queries.get(q)}
    if not kept:
        raise PairsFileError(f"{folder}: no query of {QRELS_FOLDER}/{split}.tsv has a positive judgement and a text in {QUERIES_FILE}")
    return BeirFolder(folder, split, kept, {q: qrels[q] for q in kept}, tuple(notes))


def check_split(split: str) -> str:
    """``split`` when it is a plain name of a file under ``qrels/`` (``test``, ``dev``, ``train``).

    Raises:
        PairsFileError: a path (``/``, ``\\``, ``..``), a name starting with a dot, or an empty one.
    """
    if not isinstance(split, str) or not _SPLIT_NAME.match(split):
        raise PairsFileError(f"the split must be the name of a file under {QRELS_FOLDER}/ without .tsv (test, dev, train), "
                             f"not a path: got {str(split)[:60]!r}")
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
        inner = parts[len(root):]
        if parts[: len(root)] != root:
            continue
        if inner in ((CORPUS_FILE,), (QUERIES_FILE,)) or (len(inner) == 2 and inner[0] == QRELS_FOLDER and inner[1].endswith(".tsv")
                                                         and _SPLIT_NAME.match(inner[1][: -len(".tsv")])):
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
        raise PairsFileError(f"{name}: no {QUERIES_FILE} beside {CORPUS_FILE}; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/<split>.tsv")
    splits = beir_splits(into)
    if not splits:
        raise PairsFileError(f"{name}: no {QRELS_FOLDER}/<split>.tsv beside {CORPUS_FILE}; a BEIR folder holds {CORPUS_FILE}, {QUERIES_FILE} and {QRELS_FOLDER}/<split>.tsv")
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


def beir_from_zip(data: bytes, name: str, into: str | Path, split: str = DEFAULT_SPLIT, *, max_bytes: int = MAX_UNZIPPED_BYTES) -> BeirFolder:
    """An uploaded zip of a BEIR folder, unpacked into ``into`` (:func:`unpack_beir_zip`) and read (:func:`read_beir`).

    Raises:
        PairsFileError: as :func:`unpack_beir_zip` and :func:`read_beir`; the message names the upload.
    """
    check_split(split)
    unpack_beir_zip(data, name, into, max_bytes=max_bytes)
    return read_unpacked(into, name, split)
