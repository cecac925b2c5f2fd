"""Scoring pairs of any number in chunks, writing results as they come: bounded memory.

:func:`core.scoring.runner.run_pairs` holds the pairs, every vector and the
whole results table at once; for 100k pairs that is most of the memory a
run takes.  Here the checked pairs are first staged in a Parquet file
(:func:`stage_pairs`), then each model reads them back ``chunk_rows`` at a
time, encodes (through the cache), scores with
:func:`core.scoring.runner.score_pairs` and appends the chunk to its own part
file; the cache's memory layer is emptied after each chunk (the disk layer
keeps every vector, so an interrupted run, rerun, encodes only what is
missing).  Finally the parts of the models that succeeded are copied into
``pairs.parquet`` and ``pairs.csv`` batch by batch.

A chunk whose texts are all cached is scored without loading the model
(:func:`core.models.warm.cached_model`); the weights load at the first chunk
that needs them, at most once.  With the Ray engine in the options
(``run --engine ray``, :class:`core.models.engines.RayEngine`) each chunk's
missing texts are encoded on Ray's actors into the cache first, so every
chunk is served from the cache and scored here by the same code.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd

from core import constants
from core.files.export import safe_frame
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, model_runs
from core.scoring.result import HistoryRecord
from core.scoring.runner import _validate_pairs, score_pairs

STAGED_PAIRS = "pairs-input.parquet"


class ChunkProgress(Protocol):
    """Receives a model's progress in pairs; the CLI draws one bar per model from it."""

    def start(self, model: str, total: int) -> None: ...

    def advance(self, model: str, done: int) -> None: ...

    def finish(self, model: str) -> None: ...


class _Silent:
    def start(self, model: str, total: int) -> None:
        pass

    def advance(self, model: str, done: int) -> None:
        pass

    def finish(self, model: str) -> None:
        pass


@dataclass
class ModelTally:
    """One model's encoding summed over chunks (the :class:`EncodeReport` fields a run reports).

    ``unique_texts`` counts a text once per chunk it appears in;
    ``weights_loaded`` is True when a model with its weights in memory scored
    some chunk (loaded by this run, or already loaded in this process) and
    False when every chunk came from the cache.
    """

    unique_texts: int = 0
    encoded: int = 0
    from_cache: int = 0
    truncated: int = 0
    device: str = ""
    backend: str = ""  # torch or onnx (a bundled torch model may run on its exact ONNX export)
    batch_size: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    weights_loaded: bool = False
    api_tokens: int | None = None  # tokens an endpoint reported for this run's requests; None for local models

    def add(self, report: EncodeReport) -> None:
        self.unique_texts += report.n_unique
        self.encoded += report.n_encoded
        self.from_cache += report.n_cached
        self.truncated += len(report.truncated)
        self.device, self.batch_size = report.device, report.batch_size
        self.backend = report.backend or self.backend
        self.seconds += report.seconds
        self.notes += [n for n in report.notes if n not in self.notes]
        if report.api_tokens is not None:
            self.api_tokens = (self.api_tokens or 0) + report.api_tokens


@dataclass
class ChunkedResult:
    """What a chunked run wrote and how each model fared.

    Attributes:
        parquet: the results file (one row per pair per model that ran).
        csv: the same rows as CSV (formula-guarded), or None when not asked for.
        models: models whose every chunk was scored, in order.
        errors: model -> one-line reason, for models with no results.
        tallies: model -> its summed encoding counts.
        n_pairs: pairs scored per model.
        n_rows: rows written (``n_pairs * len(models)``).
        seconds: wall time.
    """

    parquet: Path
    csv: Path | None
    models: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    tallies: dict[str, ModelTally] = field(default_factory=dict)
    n_pairs: int = 0
    n_rows: int = 0
    seconds: float = 0.0

    @property
    def devices(self) -> dict[str, str]:
        return {m: t.device for m, t in self.tallies.items() if m in self.models}

    @property
    def backends(self) -> dict[str, str]:
        """Model -> the backend that encoded it (``torch`` or ``onnx``)."""
        return {m: t.backend for m, t in self.tallies.items() if m in self.models and t.backend}

    @property
    def notes(self) -> list[str]:
        return list(dict.fromkeys(n for m in self.models for n in self.tallies[m].notes))

    @property
    def reports(self) -> dict[str, ModelTally]:
        """Model -> its encoding summed over the chunks."""
        return self.tallies

    def summary(self) -> pd.DataFrame:
        """Mean ± SD cosine, its interval and the failure rate at the default threshold per model and category, read back
        from the written results (their cosines only; :func:`core.scoring.tables.category_summary`)."""
        from core.scoring.tables import category_summary

        return category_summary(read_results(self.parquet, SUMMARY_COLUMNS))

    def history_record(self, name: str) -> HistoryRecord:
        """The written results read back (``name`` is not used: each row names its suite), the devices and backends; none
        above :data:`constants.RUN_HISTORY_MAX_ROWS` rows, which the history would hold in memory at once."""
        if self.n_rows > constants.RUN_HISTORY_MAX_ROWS:
            too_many = f"{self.n_rows:,} result rows (more than {constants.RUN_HISTORY_MAX_ROWS:,}); {self.parquet} holds them"
            return HistoryRecord(pd.DataFrame(columns=list(constants.RESULT_COLUMNS)), nothing=too_many)
        return HistoryRecord(read_results(self.parquet), {"devices": self.devices, "backends": self.backends})


def stage_pairs(chunks: Iterable[pd.DataFrame], path: Path) -> int:
    """Write checked pairs, chunk by chunk, to one Parquet file; returns how many.

    Args:
        chunks: pairs tables; the first one's columns and types are the
            file's, later chunks are fitted to them.
        path: the Parquet file to write (replaced).

    Raises:
        ValueError: no chunk held a pair.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer, schema, names, n = None, None, [], 0
    try:
        for chunk in chunks:
            if chunk.empty:
                continue
            table = _validate_pairs(chunk)
            if writer is None:
                names = list(table.columns)
                schema = pa.Schema.from_pandas(table, preserve_index=False)
                writer = pq.ParquetWriter(path, schema)
            writer.write_table(pa.Table.from_pandas(table.reindex(columns=names), schema=schema, preserve_index=False))
            n += len(table)
    finally:
        if writer is not None:
            writer.close()
    if n == 0:
        raise ValueError("no pair to score")
    return n


def score_staged(
    staged: Path,
    models: Sequence[str],
    out_dir: Path,
    *,
    cache: EmbeddingCache,
    chunk_rows: int = constants.RUN_CHUNK_PAIRS,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ChunkProgress | None = None,
    write_csv: bool = True,
) -> ChunkedResult:
    """Score staged pairs with each model, chunk by chunk, into ``pairs.parquet`` (and ``pairs.csv``).

    Args:
        staged: pairs written by :func:`stage_pairs` (n rows).
        models: model names, ids or folders; one's failure never stops the others.
        out_dir: folder for the results files (and, meanwhile, the part files).
        cache: the embedding cache (its memory layer is emptied after each chunk).
        chunk_rows: pairs read, encoded, scored and written at a time (>= 1).
        options: device, batch size, backend and remote-code opt-ins.
        progress: told each model's pairs done.
        write_csv: also write ``pairs.csv``.

    Returns:
        A :class:`ChunkedResult`; the files hold ``n * len(result.models)`` rows, models in order.

    Raises:
        ValueError: ``chunk_rows`` below 1.
    """
    import pyarrow.parquet as pq

    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    start = time.perf_counter()
    progress = progress or _Silent()
    out_dir.mkdir(parents=True, exist_ok=True)
    parts_dir = Path(tempfile.mkdtemp(prefix=".parts-", dir=out_dir))  # per run: two runs never share part files
    result = ChunkedResult(parquet=out_dir / constants.RESULTS_PARQUET, csv=out_dir / constants.RESULTS_CSV if write_csv else None)
    result.n_pairs = pq.ParquetFile(staged).metadata.num_rows
    parts: list[Path] = []
    try:
        for i, run in enumerate(model_runs(models, options, cache=cache, errors=result.errors)):
            part = parts_dir / f"part-{i}.parquet"
            tally = _score_model(staged, run, part, cache, chunk_rows, progress, result.n_pairs)
            if tally is None:
                continue
            result.tallies[run.label] = tally
            result.models.append(run.label)
            parts.append(part)
        result.n_rows = _assemble(parts, result.parquet, result.csv)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    result.seconds = time.perf_counter() - start
    return result


def _score_model(
    staged: Path, run: ModelRun, part: Path, cache: EmbeddingCache, chunk_rows: int, progress: ChunkProgress, total: int
) -> ModelTally | None:
    """One model over every chunk into ``part``; its tally, or None when it failed (``run`` recorded why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tally, writer, schema, done, name = ModelTally(), None, None, 0, run.name
    progress.start(name, total)
    try:
        for batch in pq.ParquetFile(staged).iter_batches(batch_size=chunk_rows):
            pairs = batch.to_pandas()
            # A chunk whose texts are all cached needs no weights; they load at the first chunk that does, once.
            model = run.model_for([*pairs[constants.COL_TEXT_A], *pairs[constants.COL_TEXT_B]])
            if model is None:
                return None
            n_chunk, base = len(pairs), done

            def encoded(k: int, of: int, base: int = base, n_chunk: int = n_chunk) -> None:
                progress.advance(name, base + n_chunk * k // max(of, 1))

            try:
                frame, report = score_pairs(model, pairs, cache, progress=encoded, batch_size=run.options.batch_size)
            except Exception as exc:  # noqa: BLE001 - a model's encode may raise anything; the others must still run
                run.fail(exc)
                return None
            report = run.reported(report)  # the texts the options' engine encoded (on Ray), and its notes
            if writer is None:
                schema = pa.Schema.from_pandas(frame, preserve_index=False)
                writer = pq.ParquetWriter(part, schema)
            writer.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False))
            tally.add(report)
            # The disk layer keeps every vector; holding them in memory too would grow with the file.
            cache.clear_memory()
            done += n_chunk
            progress.advance(name, done)
        tally.weights_loaded = run.weights_loaded
        return tally
    finally:
        if writer is not None:
            writer.close()
        progress.finish(name)


def _assemble(parts: list[Path], parquet: Path, csv: Path | None) -> int:
    """Copy the part files, in order, into the results files (written aside, then moved in place)."""
    import pyarrow.parquet as pq

    tmp_parquet = parquet.with_name(f".{parquet.name}.{os.getpid()}.tmp")
    tmp_csv = csv.with_name(f".{csv.name}.{os.getpid()}.tmp") if csv is not None else None
    writer, rows = None, 0
    try:
        with open(tmp_csv, "w", encoding="utf-8", newline="") if tmp_csv else _NoFile() as fh:
            for part in parts:
                source = pq.ParquetFile(part)
                if writer is None:
                    writer = pq.ParquetWriter(tmp_parquet, source.schema_arrow)
                for batch in source.iter_batches():
                    writer.write_batch(batch)
                    if tmp_csv is not None:
                        safe_frame(batch.to_pandas()).to_csv(fh, index=False, header=rows == 0)
                    rows += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        return 0
    os.replace(tmp_parquet, parquet)
    if tmp_csv is not None and csv is not None:
        os.replace(tmp_csv, csv)
    return rows


class _NoFile:
    def __enter__(self):
        return None

    def __exit__(self, *exc: object) -> None:
        return None


SUMMARY_COLUMNS = (constants.COL_MODEL, constants.COL_SUITE, constants.COL_CATEGORY, constants.COL_VARIANT, constants.COL_COSINE)


def read_results(parquet: Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The written results, only ``columns`` when given (those the file lacks are skipped)."""
    import pyarrow.parquet as pq

    names = pq.ParquetFile(parquet).schema_arrow.names
    wanted = [c for c in columns if c in names] if columns is not None else None
    return pq.read_table(parquet, columns=wanted).to_pandas()
