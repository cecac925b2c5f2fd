"""The run history: a DuckDB file in the cache folder with every run, its models and its per-pair results.

Tables (one row per …)::

    runs          run:              run_id, created_at (UTC), origin (cli|app), command (or page), threshold,
                                    source, n_pairs, settings (JSON), tool_version, pairs_digest, name, pinned
    run_models    model of a run:   run_id, model, revision, backend, model_source, status (ok|error), error, n_results
    pair_results  pair per model:   run_id, row_index, model, suite, category, pair_id, variant, text_a, text_b,
                                    cosine, n_tokens_a, n_tokens_b, truncated, extra (JSON of the other columns)

Runs are matched by what they scored, not by the source's name: ``pairs_digest``
is the SHA-256 of the first model's (text_a, text_b) in row order (each text
length-prefixed), computed by :data:`_DIGEST_SQL` when a run is stored, so a
CLI run of a file and a page run of the same file share it (:func:`comparable`).
A run can be named, pinned (kept from deletion; the History page compares the
latest run against its pinned comparable run first) and deleted.

Safety:

* A run is written in one transaction: a process killed mid-write leaves the
  history as it was before that run (DuckDB's write-ahead log replays only
  committed transactions).
* DuckDB lets one process at a time open the file.  Every operation opens it,
  does its work and closes it; a process that finds it locked retries with
  backoff (jittered, up to :data:`constants.HISTORY_LOCK_TIMEOUT_SECONDS`)
  and then raises :class:`HistoryBusy` with a message saying so.  Within a
  process (Streamlit's sessions are threads) a lock serialises operations.

``COSINE_PROBE_HISTORY=off`` turns recording off; any other value is the file to use.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from core import constants
from core.messages import first_line, redact, terminal_safe
from core.models import registry
from core.paths import cache_dir, same_file
from core.scoring.result import ProbeResult

SCHEMA_VERSION = 2  # 2: runs.pairs_digest, name, pinned
OFF_VALUES = ("off", "0", "false", "no")
STATUS_OK = "ok"
STATUS_ERROR = "error"

# The per-pair columns kept as columns; every other column of a results table goes into ``extra``.
PAIR_COLUMNS = (
    constants.COL_MODEL,
    constants.COL_SUITE,
    constants.COL_CATEGORY,
    constants.COL_PAIR_ID,
    constants.COL_VARIANT,
    constants.COL_TEXT_A,
    constants.COL_TEXT_B,
    constants.COL_COSINE,
    constants.COL_TOKENS_A,
    constants.COL_TOKENS_B,
    constants.COL_TRUNCATED,
)
_REQUIRED = (constants.COL_MODEL, constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id BIGINT PRIMARY KEY, created_at TIMESTAMP NOT NULL, origin VARCHAR NOT NULL, command VARCHAR NOT NULL,
        threshold DOUBLE, source VARCHAR, n_pairs BIGINT, settings VARCHAR, tool_version VARCHAR)""",
    """CREATE TABLE IF NOT EXISTS run_models (
        run_id BIGINT NOT NULL, model VARCHAR NOT NULL, revision VARCHAR, backend VARCHAR, model_source VARCHAR,
        status VARCHAR NOT NULL, error VARCHAR, n_results BIGINT)""",
    """CREATE TABLE IF NOT EXISTS pair_results (
        run_id BIGINT NOT NULL, row_index BIGINT NOT NULL, model VARCHAR NOT NULL, suite VARCHAR, category VARCHAR,
        pair_id VARCHAR, variant VARCHAR, text_a VARCHAR, text_b VARCHAR, cosine DOUBLE, n_tokens_a BIGINT,
        n_tokens_b BIGINT, truncated BOOLEAN, extra VARCHAR)""",
)

# Columns added after schema 1; an older history file gains them (and its runs their digests) when opened.
_ADDED_RUN_COLUMNS = (("pairs_digest", "VARCHAR"), ("name", "VARCHAR"), ("pinned", "BOOLEAN DEFAULT FALSE"))
_RUN_COLUMNS = (
    "run_id",
    "created_at",
    "origin",
    "command",
    "threshold",
    "source",
    "n_pairs",
    "settings",
    "tool_version",
    "pairs_digest",
    "name",
    "pinned",
)
# The digest of what a run scored: its first model's pairs (the model of row 0) in row order, each text
# length-prefixed so no separator inside a text can make two different pair lists collide.
_DIGEST_SQL = """
    UPDATE runs SET pairs_digest = d.digest FROM (
        SELECT p.run_id, sha256(string_agg(
                   length(coalesce(p.text_a, '')) || ':' || coalesce(p.text_a, '')
                   || length(coalesce(p.text_b, '')) || ':' || coalesce(p.text_b, ''),
                   '|' ORDER BY p.row_index)) AS digest
        FROM pair_results p JOIN (SELECT run_id, model FROM pair_results WHERE row_index = 0) f USING (run_id, model)
        WHERE p.run_id IN (SELECT run_id FROM runs WHERE pairs_digest IS NULL)
        GROUP BY p.run_id) d
    WHERE runs.run_id = d.run_id"""
NAME_MAX_CHARS = 80

# DuckDB shares one database instance among a process's connections; one operation at a time keeps
# two sessions' transactions from conflicting.
_PROCESS_LOCK = threading.RLock()


class HistoryError(RuntimeError):
    """The history cannot be read or written; the message says why."""


class HistoryBusy(HistoryError):
    """Another process held the history file for longer than the wait allowed."""


@dataclass(frozen=True)
class StoredRun:
    """One run as stored.

    Attributes:
        run_id: its number.
        created_at: when it was recorded (UTC).
        origin: ``cli`` or ``app``.
        command: the CLI command or the app page.
        threshold: the global threshold it ran at (None when it had none).
        source: what it scored, in a few words.
        settings: everything else it was run with.
        models: one row per model: model, revision, backend, model_source, status, error, n_results.
        results: the per-pair results, tidy long, the ``extra`` columns restored.
        pairs_digest: what it scored (see the module docstring); None for a run without pairs.
        name: the name a user gave it, or None.
        pinned: kept from deletion, and the History page's first choice of a run to compare against.
    """

    run_id: int
    created_at: datetime
    origin: str
    command: str
    threshold: float | None
    source: str
    settings: dict[str, Any] = field(default_factory=dict)
    models: pd.DataFrame = field(default_factory=pd.DataFrame)
    results: pd.DataFrame = field(default_factory=pd.DataFrame)
    pairs_digest: str | None = None
    name: str | None = None
    pinned: bool = False

    def comparable_with(self, other: StoredRun) -> bool:
        """Whether the two runs scored the same pairs (same digest), whatever their sources were called."""
        return self.pairs_digest is not None and self.pairs_digest == other.pairs_digest

    def thresholds(self) -> dict[str, float]:
        """model -> the threshold its verdicts used: ``settings["thresholds"]`` where given, else the run's threshold."""
        fallback = self.threshold if self.threshold is not None else constants.DEFAULT_THRESHOLD
        own = self.settings.get("thresholds") or {}
        models = list(dict.fromkeys(self.results[constants.COL_MODEL])) if not self.results.empty else []
        return {m: float(own.get(m, fallback)) for m in models}


# ------------------------------------------------------------------ the file


def history_path() -> Path | None:
    """The history file: ``$COSINE_PROBE_HISTORY``, else ``history.duckdb`` in the cache folder; None when recording is off."""
    env = os.environ.get(constants.HISTORY_ENV_VAR, "").strip()
    if env.lower() in OFF_VALUES:
        return None
    return Path(env).expanduser() if env else cache_dir() / constants.HISTORY_FILE


def history_files(history: Path) -> tuple[Path, Path]:
    """The history file and its write-ahead log: what writing over would destroy every stored run."""
    return history, history.with_name(history.name + ".wal")


def _resolve(path: str | Path | None) -> Path:
    target = Path(path) if path is not None else history_path()
    if target is None:
        raise HistoryError(f"run history is off ({constants.HISTORY_ENV_VAR}={os.environ.get(constants.HISTORY_ENV_VAR)})")
    return target


@contextmanager
def _connect(path: Path, timeout: float) -> Iterator[Any]:
    """An open connection with the schema in place; waits (with backoff) while another process holds the file."""
    import duckdb

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HistoryError(f"cannot create the folder for {path.name}: {exc.strerror or exc}") from exc
    with _PROCESS_LOCK:
        deadline = time.monotonic() + max(0.0, timeout)
        delay = 0.02
        while True:
            try:
                con = duckdb.connect(str(path))
                break
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower():
                    raise HistoryError(f"cannot open the run history {path}: {first_line(exc)}") from exc
                if time.monotonic() >= deadline:
                    raise HistoryBusy(
                        f"the run history {path} is in use by another process (waited {timeout:g} s); "
                        f"try again, or set {constants.HISTORY_ENV_VAR}=off to skip recording"
                    ) from exc
                # Jitter, so two waiting processes do not retry in lockstep.
                time.sleep(min(delay * (0.5 + random.random()), max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 0.5)
            except duckdb.Error as exc:
                raise HistoryError(f"cannot open the run history {path}: {first_line(exc)}") from exc
        try:
            _ensure_schema(con)
            yield con
        except duckdb.Error as exc:
            raise HistoryError(f"run history {path}: {first_line(exc)}") from exc
        finally:
            con.close()


def _ensure_schema(con: Any) -> None:
    for statement in _SCHEMA:
        con.execute(statement)
    have = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'").fetchall()}
    missing = [(name, kind) for name, kind in _ADDED_RUN_COLUMNS if name not in have]
    if missing:
        for name, kind in missing:
            con.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")
        con.execute(_DIGEST_SQL)  # runs stored before digests existed
    con.execute("INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT DO UPDATE SET value = excluded.value", [str(SCHEMA_VERSION)])


def _insert_frame(con: Any, table: str, frame: pd.DataFrame) -> None:
    """Insert a frame's rows into ``table``, columns matched by name."""
    con.register("incoming_rows", frame)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister("incoming_rows")


# ------------------------------------------------------------------ writing


def _json_ready(value: Any) -> Any:
    """Settings with NaN and infinities as None (JSON has neither), at any depth."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return str(value)


def _pair_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The results as ``pair_results`` rows (without run_id)."""
    n = len(results)
    out = pd.DataFrame({"row_index": range(n)})
    for col in PAIR_COLUMNS:
        out[col] = results[col].to_numpy() if col in results.columns else None
    out[constants.COL_COSINE] = pd.to_numeric(out[constants.COL_COSINE], errors="coerce").astype(float)
    for col in (constants.COL_TOKENS_A, constants.COL_TOKENS_B):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("Int64")
    out[constants.COL_TRUNCATED] = out[constants.COL_TRUNCATED].astype("boolean")
    for col in (
        constants.COL_MODEL,
        constants.COL_SUITE,
        constants.COL_CATEGORY,
        constants.COL_PAIR_ID,
        constants.COL_VARIANT,
        constants.COL_TEXT_A,
        constants.COL_TEXT_B,
    ):
        out[col] = out[col].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)).astype(object)
    extra = [c for c in results.columns if c not in PAIR_COLUMNS]
    records = results[extra].to_dict("records") if extra else [{}] * n
    out["extra"] = [json.dumps(r, default=_json_default, ensure_ascii=False, allow_nan=False) if r else None for r in _finite(records)]
    return out


def _finite(records: list[dict[Any, Any]]) -> list[dict[Any, Any]]:
    """NaN cells become None (JSON has no NaN)."""
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in records]


def _model_rows(results: pd.DataFrame, errors: Mapping[str, str], backends: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One ``run_models`` row per model; ``backends`` (what actually encoded) wins over the registry's backend,
    which names only the model's own one (a bundled torch model may have run on its exact ONNX export)."""
    ran = {str(k): str(v) for k, v in (backends or {}).items() if v}
    rows = []
    counts = results[constants.COL_MODEL].value_counts(sort=False) if not results.empty else pd.Series(dtype=int)
    names = [*counts.index, *(m for m in errors if m not in counts.index)]
    for name in names:
        revision: str | None = None
        backend: str | None = None
        source: str | None = None
        try:
            meta = registry.resolve(str(name))
            revision, backend, source = meta.revision, meta.backend, meta.source
        except ValueError:
            pass  # an unresolvable name is still recorded, without metadata
        backend = ran.get(str(name), backend)
        ok = name in counts.index
        rows.append(
            {
                "model": str(name),
                "revision": revision,
                "backend": backend,
                "model_source": source,
                "status": STATUS_OK if ok else STATUS_ERROR,
                "error": None if ok else redact(errors[name]),
                "n_results": int(counts.get(name, 0)),
            }
        )
    return pd.DataFrame(rows, columns=["model", "revision", "backend", "model_source", "status", "error", "n_results"])


def describe_sources(settings: Mapping[str, Any]) -> str:
    """What a run scored, in a few words, from ``settings["sources"]`` (``[{"suite"|"file": …, "sha256": …}]``).

    Files unpacked from one upload (``"archive"``: its name, ``"archive_digest"``) are said once, by the upload's
    name: a person uploaded ``clinical.zip``, not ``corpus.jsonl``, ``queries.jsonl`` and ``test.tsv``.
    """
    parts = []
    archives: set[str] = set()
    for item in settings.get("sources") or []:
        if item.get("archive"):
            archive = Path(str(item["archive"])).name
            if archive not in archives:
                archives.add(archive)
                digest = str(item.get("archive_digest") or "")[:8]
                parts.append(archive + (f" ({digest})" if digest else ""))
        elif item.get("suite"):
            parts.append(str(item["suite"]))
        elif item.get("file"):
            digest = str(item.get("sha256") or "")[:8]
            parts.append(f"{Path(str(item['file'])).name}" + (f" ({digest})" if digest else ""))
    return ", ".join(parts)


def _tool_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cosine-probe")
    except PackageNotFoundError:
        return None


def record_run(
    results: pd.DataFrame,
    *,
    command: str,
    origin: str,
    settings: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    path: str | Path | None = None,
    timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS,
) -> int:
    """Store one run and return its id.

    Args:
        results: tidy long results, at least ``model``, ``text_a``, ``text_b``, ``cosine``;
            other columns are kept (``extra``).
        command: the CLI command or app page (``run``, ``check``, ``failure-modes``, …).
        origin: ``cli`` or ``app``.
        settings: JSON-able settings: ``threshold``, ``thresholds`` (per model), ``backends`` (model -> the
            backend that actually encoded, stored with the models),
            ``sources`` (``[{"suite": name} | {"file": path, "sha256": hex}]``), ``reading``, …
        errors: model -> why it did not run (stored with the models).
        path: the history file (default :func:`history_path`).
        timeout: seconds to wait for another process to release the file.

    Raises:
        ValueError: bad arguments (unknown origin, empty command, missing columns, settings that are not JSON).
        HistoryBusy: another process kept the file longer than ``timeout``.
        HistoryError: the file cannot be opened or written (recording off, unreadable file).
    """
    if origin not in (constants.ORIGIN_CLI, constants.ORIGIN_APP):
        raise ValueError(f"origin must be {constants.ORIGIN_CLI!r} or {constants.ORIGIN_APP!r}, got {origin!r}")
    if not command or not command.strip():
        raise ValueError("command is empty; name the CLI command or app page")
    missing = [c for c in _REQUIRED if c not in results.columns]
    if missing:
        raise ValueError(f"results lack columns {missing}")
    settings = _json_ready(dict(settings or {}))
    try:
        # Notes and errors in the settings went through the one redaction where they were made; this is the last
        # gate before the disk (the redaction only ever replaces text inside JSON strings with "[redacted]").
        settings_json = redact(json.dumps(settings, sort_keys=True, default=_json_default, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"settings are not JSON: {exc}") from exc
    threshold = settings.get("threshold")
    # A run with no threshold (retrieval ranks, it does not cut) stores none, never NaN.
    threshold = (
        float(threshold) if isinstance(threshold, int | float) and not isinstance(threshold, bool) and math.isfinite(threshold) else None
    )
    pairs = _pair_rows(results)
    backends = settings.get("backends")
    models = _model_rows(results, errors or {}, backends if isinstance(backends, Mapping) else None)
    n_pairs = int(results.groupby(constants.COL_MODEL).size().max()) if not results.empty else 0
    target = _resolve(path)
    with _connect(target, timeout) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            run_id = int(con.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()[0])
            con.execute(
                f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) VALUES ({', '.join('?' * len(_RUN_COLUMNS))})",
                [
                    run_id,
                    datetime.now(UTC).replace(tzinfo=None),
                    origin,
                    command.strip(),
                    threshold,
                    describe_sources(settings),
                    n_pairs,
                    settings_json,
                    _tool_version(),
                    None,
                    None,
                    False,
                ],
            )
            _insert_frame(con, "run_models", models.assign(run_id=run_id))
            _insert_frame(con, "pair_results", pairs.assign(run_id=run_id))
            con.execute(_DIGEST_SQL)
            con.execute("COMMIT")
        except BaseException:
            with suppress(Exception):
                con.execute("ROLLBACK")
            raise
    return run_id


def record_result(
    result: ProbeResult,
    name: str,
    *,
    command: str,
    origin: str,
    settings: Mapping[str, Any] | None = None,
    path: str | Path | None = None,
) -> int | None:
    """Store any probe's result: the pairs of its history record, its own settings under the caller's, its errors.

    Args:
        result: any :class:`core.scoring.result.ProbeResult` (a suite run, retrieval, triples, BEIR, corpus mode,
            index settings, tune, an audit).
        name: what it scored (the pairs' ``suite``).
        command, origin, path: as :func:`record_run`.
        settings: what only the caller knows (sources, the selected models, the device); a key here wins over the result's.

    Returns:
        The run's id, or None when the record is not stored (no pair to compare: its ``nothing`` says why).

    Raises:
        As :func:`record_run`.
    """
    record = result.history_record(name)
    if not record.storable:
        return None
    return record_run(
        record.pairs, command=command, origin=origin, settings={**record.settings, **(settings or {})}, errors=result.errors, path=path
    )


# ------------------------------------------------------------------ reading


def list_runs(path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS) -> pd.DataFrame:
    """Every run, newest first: run_id, created_at, origin, command, name, pinned, source, threshold, n_pairs, models, errors,
    pairs_digest (runs with the same digest scored the same pairs).

    A history file that does not exist yet gives an empty table (and is created).
    """
    query = """
        SELECT r.run_id, r.created_at, r.origin, r.command, r.name, coalesce(r.pinned, false) AS pinned, r.source, r.threshold, r.n_pairs,
               coalesce(string_agg(m.model, ', ' ORDER BY m.model) FILTER (WHERE m.status = 'ok'), '') AS models,
               count(*) FILTER (WHERE m.status = 'error') AS errors, r.pairs_digest
        FROM runs r LEFT JOIN run_models m USING (run_id)
        GROUP BY ALL ORDER BY r.run_id DESC"""
    with _connect(_resolve(path), timeout) as con:
        return con.execute(query).df()


def _check_id(run_id: object) -> int:
    if isinstance(run_id, bool) or not isinstance(run_id, int) or run_id < 1:
        raise ValueError(f"a run id is a whole number from 1, got {run_id!r}")
    return run_id


def _restore_extra(frame: pd.DataFrame) -> pd.DataFrame:
    """Expand the ``extra`` JSON back into columns; columns every row lacks are dropped."""
    extras = [json.loads(e) if isinstance(e, str) else {} for e in frame.pop("extra")]
    if any(extras):
        frame = pd.concat([frame.reset_index(drop=True), pd.DataFrame(extras)], axis=1)
    return frame.dropna(axis=1, how="all")


def load_run(run_id: int, path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS) -> StoredRun:
    """One run with its models and per-pair results.

    Raises:
        ValueError: no run with that id, or an id that is not a positive whole number.
        HistoryError: the file cannot be read.
    """
    run_id = _check_id(run_id)
    with _connect(_resolve(path), timeout) as con:
        row = con.execute(
            "SELECT run_id, created_at, origin, command, threshold, source, settings, pairs_digest, name, coalesce(pinned, false) "
            "FROM runs WHERE run_id = ?",
            [run_id],
        ).fetchone()
        if row is None:
            last = con.execute("SELECT max(run_id) FROM runs").fetchone()[0]
            raise ValueError(f"no run {run_id} in the history ({'it is empty' if last is None else f'runs go up to {last}'})")
        models = con.execute(
            "SELECT model, revision, backend, model_source, status, error, n_results FROM run_models WHERE run_id = ? ORDER BY rowid",
            [run_id],
        ).df()
        columns = ", ".join(["row_index", *PAIR_COLUMNS, "extra"])
        results = con.execute(f"SELECT {columns} FROM pair_results WHERE run_id = ? ORDER BY model, row_index", [run_id]).df()
    # Keep the run's model order (the order it scored them in), not the alphabetical one.
    order = {m: i for i, m in enumerate(models["model"])}
    results = results.sort_values(["model", "row_index"], key=lambda s: s.map(order) if s.name == "model" else s, kind="stable")
    results = _restore_extra(results.drop(columns="row_index").reset_index(drop=True))
    return StoredRun(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        row[4],
        row[5] or "",
        json.loads(row[6] or "{}"),
        models,
        results,
        pairs_digest=row[7],
        name=row[8],
        pinned=bool(row[9]),
    )


def export_run(run_id: int, out: str | Path, path: str | Path | None = None) -> Path:
    """Write a run's per-pair results to a Parquet file, with the run's id, command, time and each model's revision and backend.

    Raises:
        ValueError: no such run, an output folder that does not exist, or ``out`` naming the history file
            itself (or its write-ahead log): writing there would destroy every stored run.
        HistoryError: the history cannot be read.
    """
    out = Path(out).expanduser()
    if not out.parent.is_dir():
        raise ValueError(f"no folder {out.parent} to write {out.name} into")
    history = _resolve(path)
    if any(same_file(out, kept) for kept in history_files(history)):
        raise ValueError(
            f"--out {out} is the run history itself; writing the export there would destroy every stored run. Name another file"
        )
    run = load_run(run_id, path)
    meta = run.models[["model", "revision", "backend"]]
    frame = run.results.merge(meta, on=constants.COL_MODEL, how="left")
    frame.insert(0, constants.COL_RUN_ID, run.run_id)
    frame.insert(1, constants.COL_COMMAND, run.command)
    frame.insert(2, constants.COL_CREATED_AT, pd.Timestamp(run.created_at))
    frame["run_threshold"] = run.threshold
    try:
        frame.to_parquet(out, index=False)
    except OSError as exc:
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return out


def run_models(run_id: int, path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS) -> pd.DataFrame:
    """A run's models (model, revision, backend, model_source, status, error, n_results), without its results.

    Raises:
        ValueError: an id that is not a positive whole number.
        HistoryError: the file cannot be read.
    """
    run_id = _check_id(run_id)
    with _connect(_resolve(path), timeout) as con:
        return con.execute(
            "SELECT model, revision, backend, model_source, status, error, n_results FROM run_models WHERE run_id = ? ORDER BY rowid",
            [run_id],
        ).df()


# ------------------------------------------------------------------ naming, pinning, deleting


def _existing(con: Any, run_id: int) -> tuple[Any, ...]:
    row = con.execute("SELECT run_id, coalesce(pinned, false), name FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        last = con.execute("SELECT max(run_id) FROM runs").fetchone()[0]
        raise ValueError(f"no run {run_id} in the history ({'it is empty' if last is None else f'runs go up to {last}'})")
    return tuple(row)


def name_run(
    run_id: int, name: str | None, path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS
) -> None:
    """Give a run a name (None or blank removes it).

    Raises:
        ValueError: no such run, or a name longer than :data:`NAME_MAX_CHARS` or on several lines.
        HistoryError: the file cannot be written.
    """
    run_id = _check_id(run_id)
    text = (name or "").strip()
    if len(text) > NAME_MAX_CHARS or "\n" in text or "\r" in text:
        raise ValueError(f"a run name is one line of at most {NAME_MAX_CHARS} characters, got {len(text)}")
    if terminal_safe(text) != text:
        raise ValueError("a run name holds no control characters (an escape sequence would act on a terminal that lists it)")
    with _connect(_resolve(path), timeout) as con:
        _existing(con, run_id)
        con.execute("UPDATE runs SET name = ? WHERE run_id = ?", [text or None, run_id])


def pin_run(
    run_id: int, pinned: bool = True, path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS
) -> None:
    """Pin a run (kept from deletion, compared against first) or unpin it.

    Raises:
        ValueError: no such run.
        HistoryError: the file cannot be written.
    """
    run_id = _check_id(run_id)
    with _connect(_resolve(path), timeout) as con:
        _existing(con, run_id)
        con.execute("UPDATE runs SET pinned = ? WHERE run_id = ?", [bool(pinned), run_id])


def delete_run(run_id: int, path: str | Path | None = None, timeout: float = constants.HISTORY_LOCK_TIMEOUT_SECONDS) -> None:
    """Delete a run with its models and results, in one transaction.

    Raises:
        ValueError: no such run, or a pinned one (unpin it first).
        HistoryError: the file cannot be written.
    """
    run_id = _check_id(run_id)
    with _connect(_resolve(path), timeout) as con:
        _, pinned, name = _existing(con, run_id)
        if pinned:
            raise ValueError(f"run {run_id}{f' ({name})' if name else ''} is pinned; unpin it first")
        con.execute("BEGIN TRANSACTION")
        try:
            for table in ("pair_results", "run_models", "runs"):
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            con.execute("COMMIT")
        except BaseException:
            with suppress(Exception):
                con.execute("ROLLBACK")
            raise


def comparable(runs: pd.DataFrame) -> tuple[int, int] | None:
    """The default pair of runs to compare: (before, after) sharing their pairs, or None when no two do.

    After is the newest run that has a comparable run; before is the newest pinned run comparable with it,
    else the newest comparable run older than it.

    Args:
        runs: :func:`list_runs`' table (run_id, pinned, pairs_digest), any order.
    """
    if runs.empty:
        return None
    ordered = runs.sort_values(constants.COL_RUN_ID, ascending=False)
    ids = [int(i) for i in ordered[constants.COL_RUN_ID]]
    digests = [d if isinstance(d, str) else None for d in ordered["pairs_digest"]]
    pinned = [bool(p) for p in ordered["pinned"]]
    for after, digest in zip(ids, digests, strict=True):
        if digest is None:
            continue
        same = [(i, pin) for i, d, pin in zip(ids, digests, pinned, strict=True) if d == digest and i != after]  # newest first
        if not same:
            continue
        before = next((i for i, pin in same if pin), None) or next((i for i, _ in same if i < after), same[0][0])
        return before, after
    return None
