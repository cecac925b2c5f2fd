"""The one contract every probe's result meets, so the history, the CLI and the pages read any result the same way.

A suite run (in memory or chunked to disk), the retrieval suite, a triples file, a BEIR folder, corpus mode,
index settings, a tune run and a corpus audit each produce their own tables; what every caller needs of any of
them is the same few members: the models that produced something, the one-line reason of each that did not, how
each model encoded, the wall time, one summary table, and the run as the history stores it (tidy pairs and
settings).  The history takes a :class:`ProbeResult` and asks it for its :class:`HistoryRecord`: no caller reads
a result's own attributes to guess its kind.

It lives below the probes, the audit and the history so that every one of them can name it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import pandas as pd


@dataclass(frozen=True)
class HistoryRecord:
    """A run as the history stores it.

    Attributes:
        pairs: tidy long pair results, at least ``model``, ``text_a``, ``text_b`` and ``cosine`` (one row per pair
            per model; extra columns such as a mitigation's ``score[<name>]`` ride along).
        settings: JSON-able settings the result itself knows (backends, its summary, its configuration); the caller
            adds what only it knows (sources, the sidebar's models, the device).
        nothing: why ``pairs`` may be empty, said instead of storing a run with nothing to compare; None when a run
            without pairs is still a finding to store (an audit that found no close pair).
    """

    pairs: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    nothing: str | None = "the run scored no pair, so there is nothing to compare"

    @property
    def storable(self) -> bool:
        """Whether the history stores this record: it holds pairs, or a run without them is a finding."""
        return not self.pairs.empty or self.nothing is None


class Encoding(Protocol):
    """What a result says of how each model encoded, whatever it kept (``EncodeReport``, a chunked run's ``ModelTally``)."""

    @property
    def device(self) -> str:
        """``cpu``, ``cuda`` or ``mps``."""
        ...

    @property
    def backend(self) -> str:
        """``torch``, ``onnx``, …; empty when unknown."""
        ...


@runtime_checkable
class ProbeResult(Protocol):
    """What every probe's result offers (read-only members; a dataclass field satisfies each property)."""

    @property
    def models(self) -> Sequence[str]:
        """The models that produced a result, in run order."""
        ...

    @property
    def errors(self) -> Mapping[str, str]:
        """Model (or ``model + what``) -> the one-line reason it produced nothing."""
        ...

    @property
    def reports(self) -> Mapping[str, Encoding]:
        """Model -> how it encoded (device, backend, and what the probe counts); empty where the probe encodes otherwise."""
        ...

    @property
    def seconds(self) -> float:
        """Wall time of the run."""
        ...

    def summary(self) -> pd.DataFrame:
        """One tidy table of the run's headline figures (per model, and per mitigation or setting where it has them)."""
        ...

    def history_record(self, name: str) -> HistoryRecord:
        """The run as the history stores it; ``name`` is what was scored (a suite's or a file's name: the pairs' ``suite``)."""
        ...


def backends(reports: Mapping[str, Encoding]) -> dict[str, str]:
    """Model -> the backend that encoded it (``torch``, ``onnx``, …), models without one left out."""
    return {str(model): report.backend for model, report in reports.items() if report.backend}


def json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as JSON-able dicts (numpy scalars as Python ones) for a history record's settings."""
    return [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in frame.to_dict("records")]
