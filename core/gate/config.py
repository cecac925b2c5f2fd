"""The ``cosine-probe check`` config: a TOML file read into frozen dataclasses, every value checked.

Schema (``docs/check-example.toml`` is a commented example)::

    models = ["MiniLM-L6", "mpnet-base"]     # optional; default: the installed bundled models but the approximate 4-bit e5
    suites = ["failure-modes"]               # shipped pair suites (default: failure-modes when no files)
    files = ["pairs/regressions.csv"]        # pairs files, relative to the config file
    threshold = 0.85                         # the global retrieval threshold, in [-1, 1]
    threshold_mode = "global"                # or "calibrated": each model's own threshold from the controls

    [calibration]                            # for threshold_mode = "calibrated" and min_control_auc
    method = "youden"                        # or "fpr"
    negatives = ["negative"]                 # add "near_miss" to count near-misses as negatives
    max_fpr = 0.05                           # the "fpr" method's target false-positive rate

    [retrieval]                              # for the retrieval budgets
    suite = "retrieval"                      # the shipped retrieval suite or a file
    triples = "nli-triples.csv"              # a triples file, for max_win_rate and min_recall_at_k
    triples_columns = { query = "premise" }  # its columns when not recognised by name (query, positive, negative)
    beir = "scifact"                         # a BEIR folder, for min_recall_at_k
    split = "test"                           # its qrels split

    [labels]                                 # for min_label_auc
    column = "gold"                          # the files' label column (default: one named label, score, gold or similar)
    match = "1"                              # the label value that means "same meaning" (default: 1/true/paraphrase/entailment)

    [budgets]
    min_control_auc = 0.95                   # ROC AUC of cosine on the controls, per model
    min_label_auc = 0.80                     # ROC AUC of cosine as a classifier of the files' own labels, per model
    min_paired_accuracy = 0.30               # NevIR paired accuracy over all modes (or a table per mode)

    [budgets.max_failure_rate]               # per category: share of pairs above the threshold
    negation = 0.70

    [budgets.max_adversarial_win_rate]       # per failure mode (or "all"): variants that outrank the paraphrase
    negation = 0.50

    max_win_rate = 0.30                      # triples: share of negatives that outrank their positive (ties apart)
    [budgets.min_recall_at_k]                # triples and BEIR: recall at k (1, 5 or 10)
    1 = 0.60

    [audit]                                  # for max_twin_share (docs/audit.md)
    corpus = "kb.txt"                        # a corpus file: one passage per line, or a text column

    [budgets.max_twin_share]                 # per failure mode (or "all"): share of passages with a confusable twin
    all = 0.05

Every problem raises :class:`ConfigError` whose message starts with the key
(``budgets.max_failure_rate.negation: ...``), so the CLI prints one line.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from core import constants, lexicon
from core.probes.calibration import DEFAULT_MAX_FPR, METHOD_YOUDEN, METHODS

THRESHOLD_GLOBAL = "global"
THRESHOLD_CALIBRATED = "calibrated"
THRESHOLD_MODES = (THRESHOLD_GLOBAL, THRESHOLD_CALIBRATED)

BUDGET_FAILURE_RATE = "max_failure_rate"
BUDGET_CONTROL_AUC = "min_control_auc"
BUDGET_WIN_RATE = "max_adversarial_win_rate"
BUDGET_PAIRED_ACCURACY = "min_paired_accuracy"
BUDGET_TRIPLES_WIN_RATE = "max_win_rate"
BUDGET_LABEL_AUC = "min_label_auc"
BUDGET_RECALL_AT_K = "min_recall_at_k"
BUDGET_TWIN_SHARE = "max_twin_share"
BUDGET_KINDS = (
    BUDGET_FAILURE_RATE,
    BUDGET_CONTROL_AUC,
    BUDGET_WIN_RATE,
    BUDGET_PAIRED_ACCURACY,
    BUDGET_TRIPLES_WIN_RATE,
    BUDGET_RECALL_AT_K,
    BUDGET_LABEL_AUC,
    BUDGET_TWIN_SHARE,
)
AUDIT_MODES = (*lexicon.FAILURE_MODES, constants.MODE_ALL)
# The user-data inputs of [retrieval] the recall budget is measured on, in this order.
SOURCE_TRIPLES = "triples"
SOURCE_BEIR = "beir"
_TRIPLE_COLUMN_KEYS = ("query", "positive", "negative")
RETRIEVAL_BUDGETS = (BUDGET_WIN_RATE, BUDGET_PAIRED_ACCURACY)
PAIR_SUITES = (*constants.SUITES, constants.SUITE_ALL)
RETRIEVAL_MODES = (*lexicon.ADVERSARIAL_CATEGORIES, constants.MODE_ALL)

_TOP_KEYS = ("models", "suites", "files", "threshold", "threshold_mode", "calibration", "retrieval", "labels", "budgets", "audit")
_AUDIT_KEYS = ("corpus",)
_LABELS_KEYS = ("column", "match")
_CALIBRATION_KEYS = ("method", "negatives", "max_fpr")
_RETRIEVAL_KEYS = ("suite", SOURCE_TRIPLES, "triples_columns", SOURCE_BEIR, "split")


class ConfigError(ValueError):
    """A config problem; the message starts with the key it concerns."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key


@dataclass(frozen=True)
class CalibrationSettings:
    """How each model's own threshold and the control AUC are computed (``core.probes.calibration``)."""

    method: str = METHOD_YOUDEN
    negatives: tuple[str, ...] = (constants.CAT_NEGATIVE,)
    max_fpr: float = DEFAULT_MAX_FPR


@dataclass(frozen=True)
class Budgets:
    """The limits a run must keep; an empty mapping or None means "no such budget".

    Attributes:
        max_failure_rate: category -> largest share of pairs above the threshold.
        min_control_auc: smallest ROC AUC on the controls.
        max_adversarial_win_rate: failure mode (or ``all``) -> largest retrieval win rate of a variant.
        min_paired_accuracy: failure mode (or ``all``) -> smallest NevIR paired accuracy.
        min_label_auc: smallest ROC AUC of cosine as a classifier of the files' labels.
        max_twin_share: failure mode (or ``all``) -> largest share of the ``[audit]`` corpus's passages with a confusable twin.
    """

    max_failure_rate: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    min_control_auc: float | None = None
    max_adversarial_win_rate: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    min_paired_accuracy: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    min_label_auc: float | None = None
    max_win_rate: float | None = None
    min_recall_at_k: Mapping[int, float] = field(default_factory=lambda: MappingProxyType({}))
    max_twin_share: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def needs_audit(self) -> bool:
        """Whether the ``[audit]`` corpus must be audited (``max_twin_share``)."""
        return bool(self.max_twin_share)

    @property
    def needs_user_retrieval(self) -> bool:
        """Whether the triples or BEIR inputs of ``[retrieval]`` must run."""
        return self.max_win_rate is not None or bool(self.min_recall_at_k)

    @property
    def needs_pairs(self) -> bool:
        """Whether a pairs run is needed (failure-rate or AUC budgets)."""
        return bool(self.max_failure_rate) or self.min_control_auc is not None or self.min_label_auc is not None

    @property
    def needs_retrieval(self) -> bool:
        """Whether the retrieval probes are needed."""
        return bool(self.max_adversarial_win_rate) or bool(self.min_paired_accuracy)


@dataclass(frozen=True)
class CheckConfig:
    """One gate: what to run and the budgets it must keep.

    Attributes:
        path: the config file (files are relative to its folder).
        models: model names; empty means the installed bundled models but the approximate 4-bit e5.
        suites: shipped pair suites to run.
        files: pairs files to run, absolute.
        threshold: the global retrieval threshold.
        threshold_mode: ``global`` or ``calibrated``.
        calibration: calibration settings.
        retrieval_suite: the retrieval suite name or file (for retrieval budgets).
        budgets: the budgets.
        triples: a triples file (absolute), for ``max_win_rate`` and ``min_recall_at_k``.
        triples_columns: role (anchor, positive, negative) -> column of the triples file.
        beir: a BEIR folder (absolute), for ``min_recall_at_k``.
        audit_corpus: the ``[audit]`` corpus file (absolute), for ``max_twin_share``.
        split: the BEIR folder's qrels split.
        match_label: the label value that means "same meaning" for ``min_label_auc`` (None: the default words).
        label_column: the files' label column (None: guessed by name).
    """

    path: Path
    models: tuple[str, ...]
    suites: tuple[str, ...]
    files: tuple[Path, ...]
    threshold: float
    threshold_mode: str
    calibration: CalibrationSettings
    retrieval_suite: str
    budgets: Budgets
    triples: Path | None = None
    triples_columns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    beir: Path | None = None
    split: str = "test"
    match_label: str | None = None
    label_column: str | None = None
    audit_corpus: Path | None = None

    @property
    def calibrated(self) -> bool:
        return self.threshold_mode == THRESHOLD_CALIBRATED


# ------------------------------------------------------------------ value checks


def _unknown_keys(table: Mapping[str, Any], known: tuple[str, ...], prefix: str) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(f"{prefix}{key}", f"unknown key; known keys here: {', '.join(known)}")


def _table(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a table ([{key}]), got {type(value).__name__} {value!r}")
    return value


def _number(value: Any, key: str, low: float, high: float) -> float:
    # bool is an int in Python; `threshold = true` is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(key, f"expected a number between {low:g} and {high:g}, got {value!r}")
    if not low <= value <= high:
        raise ConfigError(key, f"must be between {low:g} and {high:g}, got {value!r}")  # repr: 1.0000001 must not print as 1
    return float(value)


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(key, f"expected a list of non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def _choice(value: Any, key: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ConfigError(key, f"expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


_PLURALS = {"category": "categories"}


def _limits(value: Any, key: str, keys: tuple[str, ...] | None, what: str) -> Mapping[str, float]:
    """A table of name -> limit in [0, 1]; ``keys`` (when given) are the names allowed."""
    table = _table(value, key)
    if not table:
        raise ConfigError(key, f"is empty; give at least one {what} and its limit")
    out = {}
    for name, limit in table.items():
        if keys is not None and name not in keys:
            raise ConfigError(f"{key}.{name}", f"no such {what}; {_PLURALS.get(what, what + 's')}: {', '.join(keys)}")
        out[name] = _number(limit, f"{key}.{name}", 0.0, 1.0)
    return MappingProxyType(out)


# ------------------------------------------------------------------ sections


def _calibration(value: Any) -> CalibrationSettings:
    table = _table(value, "calibration")
    _unknown_keys(table, _CALIBRATION_KEYS, "calibration.")
    method = _choice(table.get("method", METHOD_YOUDEN), "calibration.method", METHODS)
    negatives = _strings(table.get("negatives", [constants.CAT_NEGATIVE]), "calibration.negatives")
    for name in negatives:
        _choice(name, "calibration.negatives", (constants.CAT_NEGATIVE, constants.CAT_NEAR_MISS))
    max_fpr = _number(table.get("max_fpr", DEFAULT_MAX_FPR), "calibration.max_fpr", 0.0, 1.0)
    return CalibrationSettings(method, tuple(dict.fromkeys(negatives)), max_fpr)


def _known_categories(suites: tuple[str, ...]) -> tuple[str, ...]:
    chosen = constants.SUITES if constants.SUITE_ALL in suites else suites
    return tuple(dict.fromkeys(c for s in chosen for c in lexicon.SUITE_COUNTS[s]))


def _budgets(value: Any, suites: tuple[str, ...], has_files: bool) -> Budgets:
    table = _table(value, "budgets")
    _unknown_keys(table, BUDGET_KINDS, "budgets.")
    # A user's file may carry any category; with shipped suites only, a name outside them is a typo.
    # No suite at all is the `suites` key's problem (reported after), not every category's.
    categories = None if has_files or not suites else _known_categories(suites)
    budgets = Budgets(
        max_failure_rate=_limits(table[BUDGET_FAILURE_RATE], f"budgets.{BUDGET_FAILURE_RATE}", categories, "category")
        if BUDGET_FAILURE_RATE in table
        else MappingProxyType({}),
        min_control_auc=_number(table[BUDGET_CONTROL_AUC], f"budgets.{BUDGET_CONTROL_AUC}", 0.0, 1.0)
        if BUDGET_CONTROL_AUC in table
        else None,
        max_adversarial_win_rate=_limits(table[BUDGET_WIN_RATE], f"budgets.{BUDGET_WIN_RATE}", RETRIEVAL_MODES, "mode")
        if BUDGET_WIN_RATE in table
        else MappingProxyType({}),
        min_paired_accuracy=_paired(table[BUDGET_PAIRED_ACCURACY]) if BUDGET_PAIRED_ACCURACY in table else MappingProxyType({}),
        max_win_rate=_number(table[BUDGET_TRIPLES_WIN_RATE], f"budgets.{BUDGET_TRIPLES_WIN_RATE}", 0.0, 1.0)
        if BUDGET_TRIPLES_WIN_RATE in table
        else None,
        min_recall_at_k=_recall_limits(table[BUDGET_RECALL_AT_K]) if BUDGET_RECALL_AT_K in table else MappingProxyType({}),
        min_label_auc=_number(table[BUDGET_LABEL_AUC], f"budgets.{BUDGET_LABEL_AUC}", 0.0, 1.0) if BUDGET_LABEL_AUC in table else None,
        max_twin_share=_limits(table[BUDGET_TWIN_SHARE], f"budgets.{BUDGET_TWIN_SHARE}", AUDIT_MODES, "mode")
        if BUDGET_TWIN_SHARE in table
        else MappingProxyType({}),
    )
    if budgets.min_label_auc is not None and not has_files:
        raise ConfigError(
            f"budgets.{BUDGET_LABEL_AUC}",
            "measures the files' own labels: give files = [...] with a label column (min_control_auc measures the shipped controls)",
        )
    if not budgets.needs_pairs and not budgets.needs_retrieval and not budgets.needs_user_retrieval and not budgets.needs_audit:
        raise ConfigError("budgets", f"no budget given; use any of {', '.join(BUDGET_KINDS)}")
    return budgets


def _paired(value: Any) -> Mapping[str, float]:
    """``min_paired_accuracy``: one number (over all modes) or a table per mode."""
    key = f"budgets.{BUDGET_PAIRED_ACCURACY}"
    if isinstance(value, dict):
        return _limits(value, key, RETRIEVAL_MODES, "mode")
    return MappingProxyType({constants.MODE_ALL: _number(value, key, 0.0, 1.0)})


def _recall_limits(value: Any) -> Mapping[int, float]:
    """``min_recall_at_k``: a table of k -> smallest recall@k, k one of the reported cut-offs."""
    key = f"budgets.{BUDGET_RECALL_AT_K}"
    ks = tuple(str(k) for k in constants.IR_RECALL_KS)
    limits = _limits(value, key, ks, "k")
    return MappingProxyType({int(k): v for k, v in limits.items()})


def _user_retrieval(retrieval: Mapping[str, Any], folder: Path, budgets: Budgets) -> dict[str, Any]:
    """``[retrieval]``'s triples file, its columns and the BEIR folder, checked against the budgets that need them."""
    out: dict[str, Any] = {}
    for name, is_ok, what in ((SOURCE_TRIPLES, Path.is_file, "file"), (SOURCE_BEIR, Path.is_dir, "folder")):
        if name not in retrieval:
            continue
        value = retrieval[name]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"retrieval.{name}", f"expected a path to a {what}, got {value!r}")
        path = (folder / Path(value).expanduser()).resolve()
        if not is_ok(path):
            raise ConfigError(f"retrieval.{name}", f"no such {what}: {path}")
        out[name] = path
    columns = _table(retrieval.get("triples_columns", {}), "retrieval.triples_columns")
    _unknown_keys(columns, _TRIPLE_COLUMN_KEYS, "retrieval.triples_columns.")
    for role, column in columns.items():
        if not isinstance(column, str) or not column.strip():
            raise ConfigError(f"retrieval.triples_columns.{role}", f"expected a column name, got {column!r}")
    out["triples_columns"] = MappingProxyType({constants.COL_ANCHOR if r == "query" else r: c.strip() for r, c in columns.items()})
    split = retrieval.get("split", "test")
    if not isinstance(split, str) or not split.strip():
        raise ConfigError("retrieval.split", f"expected a qrels split name such as 'test', got {split!r}")
    out["split"] = split.strip()
    if budgets.max_win_rate is not None and SOURCE_TRIPLES not in out:
        raise ConfigError(f"budgets.{BUDGET_TRIPLES_WIN_RATE}", 'needs a triples file: set [retrieval] triples = "FILE"')
    if budgets.min_recall_at_k and not ({SOURCE_TRIPLES, SOURCE_BEIR} & set(out)):
        raise ConfigError(
            f"budgets.{BUDGET_RECALL_AT_K}", 'needs a triples file or a BEIR folder: set [retrieval] triples = "FILE" or beir = "DIR"'
        )
    return out


def _files(value: Any, folder: Path) -> tuple[Path, ...]:
    out = []
    for i, name in enumerate(_strings(value, "files")):
        path = (folder / Path(name).expanduser()).resolve()
        if not path.is_file():
            raise ConfigError(f"files[{i}]", _not_a_file(path))
        out.append(path)
    return tuple(out)


def _not_a_file(path: Path) -> str:
    """Why ``path`` cannot be read as a file: missing, or a folder."""
    return f"{path} is a folder, not a file" if path.is_dir() else f"no such file: {path}"


def parse_config(data: Mapping[str, Any], path: Path) -> CheckConfig:
    """A config from an already parsed TOML document.

    Args:
        data: the document as ``tomllib`` returns it.
        path: where it came from; ``files`` are relative to its folder.

    Raises:
        ConfigError: the first problem, its message led by the key.
    """
    _unknown_keys(data, _TOP_KEYS, "")
    if "budgets" not in data:
        raise ConfigError("budgets", "missing; a check needs at least one budget ([budgets] table)")
    models = _strings(data.get("models", []), "models")
    files = _files(data.get("files", []), path.parent)
    suites = _strings(data.get("suites", [] if files else [constants.SUITE_FAILURE_MODES]), "suites")
    for i, suite in enumerate(suites):
        _choice(suite, f"suites[{i}]", PAIR_SUITES)
    threshold = _number(data.get("threshold", constants.DEFAULT_THRESHOLD), "threshold", -1.0, 1.0)
    threshold_mode = _choice(data.get("threshold_mode", THRESHOLD_GLOBAL), "threshold_mode", THRESHOLD_MODES)
    calibration = _calibration(data.get("calibration", {}))
    retrieval = _table(data.get("retrieval", {}), "retrieval")
    _unknown_keys(retrieval, _RETRIEVAL_KEYS, "retrieval.")
    retrieval_suite = retrieval.get("suite", constants.SUITE_RETRIEVAL)
    if not isinstance(retrieval_suite, str) or not retrieval_suite.strip():
        raise ConfigError("retrieval.suite", f"expected a suite name or a file path, got {retrieval_suite!r}")
    if retrieval_suite != constants.SUITE_RETRIEVAL:
        retrieval_suite = str((path.parent / Path(retrieval_suite).expanduser()).resolve())
        if not Path(retrieval_suite).is_file():
            found = _not_a_file(Path(retrieval_suite))
            raise ConfigError(
                "retrieval.suite", f"no suite named {retrieval.get('suite')!r}, and {found}" if found.startswith("no such") else found
            )
    budgets = _budgets(data["budgets"], suites, bool(files))
    labels = _table(data.get("labels", {}), "labels")
    _unknown_keys(labels, _LABELS_KEYS, "labels.")
    match_label = labels.get("match")
    if match_label is not None and (
        isinstance(match_label, bool) or not isinstance(match_label, str | int) or not str(match_label).strip()
    ):
        raise ConfigError(
            "labels.match", f'expected the label value that means \'same meaning\' (e.g. "1" or "entailment"), got {match_label!r}'
        )
    label_column = labels.get("column")
    if label_column is not None and (not isinstance(label_column, str) or not label_column.strip()):
        raise ConfigError("labels.column", f"expected the name of the files' label column, got {label_column!r}")
    if labels and not files:
        raise ConfigError("labels", "reads the files' labels: give files = [...]")
    if budgets.needs_pairs and not suites and not files:
        raise ConfigError("suites", "empty; failure-rate and AUC budgets need pairs: give a suite or files")
    user = _user_retrieval(retrieval, path.parent, budgets)
    return CheckConfig(
        path,
        models,
        suites,
        files,
        threshold,
        threshold_mode,
        calibration,
        retrieval_suite,
        budgets,
        match_label=str(match_label).strip() if match_label is not None else None,
        label_column=label_column.strip() if label_column else None,
        audit_corpus=_audit(data.get("audit", {}), path.parent, budgets),
        **user,
    )


def _audit(value: Any, folder: Path, budgets: Budgets) -> Path | None:
    """``[audit]``'s corpus file, required by ``max_twin_share``."""
    table = _table(value, "audit")
    _unknown_keys(table, _AUDIT_KEYS, "audit.")
    corpus = table.get("corpus")
    if corpus is None:
        if budgets.needs_audit:
            raise ConfigError(f"budgets.{BUDGET_TWIN_SHARE}", 'needs a corpus: set [audit] corpus = "FILE"')
        return None
    if not isinstance(corpus, str) or not corpus.strip():
        raise ConfigError("audit.corpus", f"expected a path to a corpus file, got {corpus!r}")
    path = (folder / Path(corpus).expanduser()).resolve()
    if not path.is_file():
        raise ConfigError("audit.corpus", _not_a_file(path))
    return path


def load_config(path: str | Path) -> CheckConfig:
    """Read and check a config file.

    Raises:
        ConfigError: the file cannot be read, is not TOML, or a value is wrong.
    """
    path = Path(path).expanduser()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the config: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), "not UTF-8 text; TOML files are UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from exc
    except RecursionError as exc:  # tomllib parses nested arrays and inline tables recursively
        raise ConfigError(
            str(path), "arrays or tables nested too deeply for the TOML parser; a gate config is flat keys and [tables]"
        ) from exc
    return parse_config(data, path.resolve())
