"""Score sentence pairs with several models into one tidy long table.

One row per pair per model, with the cosine, each side's token count, whether
either side was cut at the model's maximum length, and token/word Jaccard.
A model that fails to load or to encode is reported in ``errors`` and the
other models still run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core import constants
from core.messages import counted
from core.models.cache import EmbeddingCache
from core.models.encode import EncodeReport, embedding_matrix, encode_texts
from core.models.loading import LoadedModel
from core.models.options import DEFAULT_OPTIONS, EncodeOptions
from core.models.runs import ModelRun, ProgressFn, model_runs
from core.scoring.result import HistoryRecord
from core.stats import cos_sim, pairwise_cos_sim, token_jaccard, word_jaccard


@dataclass
class RunResult:
    """Everything one run produced.

    Attributes:
        results: tidy long table, one row per pair per model that ran.
        errors: model name -> one-line reason, for models that did not run.
        reports: model name -> encoding report (counts, truncations).
        seconds: wall time of the run.
    """

    results: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    reports: dict[str, EncodeReport] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def devices(self) -> dict[str, str]:
        """Model name -> the device it encoded on (``cpu``, ``cuda``, ``mps``)."""
        return {name: report.device for name, report in self.reports.items()}

    @property
    def backends(self) -> dict[str, str]:
        """Model name -> the backend that encoded (``torch`` or ``onnx``; a bundled torch model may run on its exact ONNX export)."""
        return {name: report.backend for name, report in self.reports.items() if report.backend}

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.results[constants.COL_MODEL])) if not self.results.empty else []

    @property
    def notes(self) -> list[str]:
        """Every model's encode notes (e.g. its weights changed since they were cached), once each."""
        return list(dict.fromkeys(note for report in self.reports.values() for note in report.notes))

    def summary(self) -> pd.DataFrame:
        """Mean ± SD cosine, its interval and the failure rate at the default threshold per model and category
        (:func:`core.scoring.tables.category_summary`; a page or command with its own threshold calls that itself)."""
        from core.scoring.tables import category_summary

        return category_summary(self.results)

    def history_record(self, name: str) -> HistoryRecord:
        """Its results as they are (already tidy pairs; ``name`` is not used: each row names its suite), the devices and backends."""
        return HistoryRecord(self.results, {"devices": self.devices, "backends": self.backends})

    def truncations(self) -> pd.DataFrame:
        """Texts cut at a model's maximum length: model, text, n_tokens, max_tokens."""
        rows = [
            {constants.COL_MODEL: name, "text": t.text, "n_tokens": t.n_tokens, "max_tokens": t.max_tokens}
            for name, rep in self.reports.items()
            for t in rep.truncated
        ]
        return pd.DataFrame(rows, columns=[constants.COL_MODEL, "text", "n_tokens", "max_tokens"])


def _validate_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    missing = {constants.COL_TEXT_A, constants.COL_TEXT_B} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs table lacks columns {sorted(missing)}")
    out = pairs.copy()
    for col, default in ((constants.COL_SUITE, "custom"), (constants.COL_CATEGORY, "uncategorized")):
        if col not in out.columns:
            out[col] = default
    if constants.COL_PAIR_ID not in out.columns:
        out[constants.COL_PAIR_ID] = [f"pair-{i + 1}" for i in range(len(out))]
    out[constants.COL_TEXT_A] = out[constants.COL_TEXT_A].astype(str)
    out[constants.COL_TEXT_B] = out[constants.COL_TEXT_B].astype(str)
    return out.reset_index(drop=True)


def score_pairs(
    model: LoadedModel,
    pairs: pd.DataFrame,
    cache: EmbeddingCache | None,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int | None = None,
) -> tuple[pd.DataFrame, EncodeReport]:
    """Score every pair with one loaded model.

    Args:
        model: a loaded model.
        pairs: validated pairs table (n rows).
        cache: vector cache or None.
        progress: called with (texts encoded so far, texts to encode).
        batch_size: texts per forward pass; None uses the model's device default.

    Returns:
        The pairs table (n rows) with ``model``, ``cosine``, token counts,
        ``truncated`` and Jaccard columns added, and the encoding report.
    """
    texts = list(pairs[constants.COL_TEXT_A]) + list(pairs[constants.COL_TEXT_B])
    vectors, report = encode_texts(model, texts, cache, progress=progress, batch_size=batch_size)
    # The one cosine (core.stats.similarity), normalising inside: a vector's length never enters a score.
    cos = (
        pairwise_cos_sim(
            embedding_matrix(vectors, list(pairs[constants.COL_TEXT_A])), embedding_matrix(vectors, list(pairs[constants.COL_TEXT_B]))
        )
        if len(pairs)
        else np.zeros(0)
    )
    tokenize = model.tokenizer.tokenize
    token_cache: dict[str, list[str]] = {}

    def toks(text: str) -> list[str]:
        if text not in token_cache:
            with model.lock:  # shared tokenizer: see encode_texts
                # A text cut before encoding (core.models.bounds) is compared by the part the model saw.
                token_cache[text] = list(tokenize(report.model_parts.get(text, text)))
        return token_cache[text]

    out = pairs.copy()
    out.insert(0, constants.COL_MODEL, model.name)
    out[constants.COL_COSINE] = cos.astype(float)
    out[constants.COL_TOKENS_A] = [report.token_counts[t] for t in pairs[constants.COL_TEXT_A]]
    out[constants.COL_TOKENS_B] = [report.token_counts[t] for t in pairs[constants.COL_TEXT_B]]
    out[constants.COL_TRUNCATED] = (out[constants.COL_TOKENS_A] > model.max_seq_length) | (
        out[constants.COL_TOKENS_B] > model.max_seq_length
    )
    out[constants.COL_TOKEN_JACCARD] = [
        token_jaccard(toks(x), toks(y)) for x, y in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)
    ]
    out[constants.COL_WORD_JACCARD] = [
        word_jaccard(x, y) for x, y in zip(pairs[constants.COL_TEXT_A], pairs[constants.COL_TEXT_B], strict=True)
    ]
    return out, report


def run_pairs(
    pairs: pd.DataFrame,
    models: Sequence[str],
    *,
    cache: EmbeddingCache | None = None,
    options: EncodeOptions = DEFAULT_OPTIONS,
    progress: ProgressFn | None = None,
    on_load: Callable[[str], None] | None = None,
    on_model: Callable[[pd.DataFrame, EncodeReport], None] | None = None,
) -> RunResult:
    """Score pairs with each model; one model's failure never stops the rest.

    Args:
        pairs: at least ``text_a`` and ``text_b``; ``suite``, ``category``
            and ``pair_id`` are filled in when absent, other columns pass
            through.
        models: model names, Hugging Face ids or folders.
        cache: vector cache shared across calls, or None.
        options: device, batch size, backend and remote-code opt-ins; each
            model's report says where it really ran (ONNX models without a GPU
            provider stay on the CPU).
        progress: called with (fraction done, message).
        on_load: called with a one-line step just before a model's weights
            load (:func:`core.models.runs.model_runs`).
        on_model: called with a model's rows and report the moment it is done, before the next
            model starts, so a caller can show the fastest answer without waiting for the slowest.

    Returns:
        A :class:`RunResult` whose ``results`` has len(pairs) rows per model
        that ran.
    """
    start = time.perf_counter()
    table = _validate_pairs(pairs)
    frames: list[pd.DataFrame] = []
    result = RunResult(results=pd.DataFrame())
    texts = [*table[constants.COL_TEXT_A], *table[constants.COL_TEXT_B]]
    for run in model_runs(models, options, cache=cache, errors=result.errors, progress=progress, on_load=on_load):
        # Every text already cached: no weights load and torch is not imported (core.models.warm).
        model = run.model_for(texts)
        if model is None:
            continue

        def encoded(done: int, total: int, run: ModelRun = run) -> None:
            run.note(done / max(total, 1), f"{run.label}: encoded {done}/{counted(total, 'new text')}")

        try:
            # The run's cache: the caller's, or the one the options' engine filled (core.models.engines).
            frame, report = score_pairs(model, table, run.cache, progress=encoded, batch_size=options.batch_size)
        except Exception as exc:  # noqa: BLE001 - a model's encode may raise anything; the others must still run
            run.fail(exc)
            continue
        report = run.reported(report)
        frames.append(frame)
        result.reports[model.name] = report
        run.note(1.0, f"{model.name}: {report.n_encoded} encoded, {report.n_cached} from cache")
        if on_model is not None:
            on_model(frame, report)
    result.results = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[*constants.RESULT_COLUMNS])
    result.seconds = time.perf_counter() - start
    return result


def similarity_matrix(model: LoadedModel, texts: Sequence[str], cache: EmbeddingCache | None = None) -> np.ndarray:
    """Cosine of every text with every other text under one model.

    Each distinct text is encoded once (through ``cache`` when given), with
    the model's prompt, exactly as :func:`run_pairs` encodes pair texts.

    Args:
        model: a loaded model.
        texts: n texts, repeats allowed (a repeat gets its own row/column).
        cache: vector cache or None.

    Returns:
        (n, n) float64 matrix, symmetric, 1 on the diagonal, values in [-1, 1].

    Raises:
        ValueError: when ``texts`` is empty.
    """
    if not texts:
        raise ValueError("texts is empty; give at least one text")
    vectors, _report = encode_texts(model, list(texts), cache)
    matrix = embedding_matrix(vectors, list(texts)).astype(np.float64)
    return cos_sim(matrix, matrix)
