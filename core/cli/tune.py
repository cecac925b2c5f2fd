"""``cosine-probe tune``: fine-tune a model on the retrieval suite's failures and report honestly what it bought.

Probes the model, splits the suite's anchor groups in two (stratified by
domain, seeded), trains on the training half's failing variants as hard
negatives (and, as a control, on the same pairs without them), averages the
weights with the original, and reports every setting on the held-out half
first.  ``--out DIR`` receives the model folder (``--models DIR/model``
loads it), the triples and split as Parquet, the scores, ``report.json`` and
``report.md``.  Ctrl-C stops it with nothing half-written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from core import constants
from core.cli.common import EXIT_NO_MODEL, CliError, print_progress
from core.cli.outputs import output_folder, remember_written

if TYPE_CHECKING:
    from core.probes.tune.run import TuneResult

EXAMPLES = (
    "cosine-probe tune --models MiniLM-L6 --out tuned --seed 0",
    "cosine-probe tune --models MiniLM-L6 --out tuned --labels my-labelled-pairs.csv --average 1.0",
    "cosine-probe tune --models ./my-model --suite my-pairs.csv --out tuned --distill 2 --no-control",
    "cosine-probe tune --models MiniLM-L6 --triples my-triples.csv --out tuned",
)

TUNE_OUTPUTS = ("triples.parquet", "split.parquet", "scores.parquet", "report.json", "report.md")
"""The files ``tune --out DIR`` writes beside its model folder, replaced only where the tool wrote them."""


def register(subparsers) -> None:
    """Add the ``tune`` command."""
    p = subparsers.add_parser(
        "tune",
        help="fine-tune a model on the retrieval suite's failures (hard negatives) and report before/after on held-out groups",
        epilog="examples:\n  " + "\n  ".join(EXAMPLES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--models", nargs=1, metavar="M", required=True, help="the one model to tune: a registry name, Hugging Face id or folder (torch)"
    )
    p.add_argument("--out", metavar="DIR", required=True, help="write the tuned model (DIR/model), triples, split, scores and report here")
    p.add_argument(
        "--suite",
        default=constants.SUITE_RETRIEVAL,
        help="'retrieval' (the shipped suite), a file in its format, or a pairs file "
        "(text_a = anchor, text_b = passage, category = paraphrase or a failure mode)",
    )
    p.add_argument(
        "--triples",
        metavar="FILE",
        help="train and judge on your own triples file instead (anchor/positive/negative or NLI "
        "premise/entailed/contradicted columns; each anchor is one group of the split)",
    )
    p.add_argument(
        "--labels",
        metavar="FILE",
        action="append",
        default=[],
        help="a labelled pairs file (label = match/no match): its AUC before/after is reported as a cost; repeatable",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the split, the training and the intervals (default %(default)s)")
    p.add_argument("--lr", type=float, default=constants.TUNE_DEFAULT_LR, help="learning rate (default %(default)s)")
    p.add_argument("--batch-size", type=int, default=constants.TUNE_DEFAULT_BATCH, help="rows per batch (default %(default)s)")
    p.add_argument("--epochs", type=float, default=constants.TUNE_DEFAULT_EPOCHS, help="passes over the triples (default %(default)s)")
    p.add_argument("--max-steps", type=int, help="stop after this many steps (a quick look)")
    p.add_argument(
        "--average",
        type=float,
        default=constants.TUNE_DEFAULT_AVERAGE,
        help="weight of the tuned model averaged with the original, in (0, 1]; 1 keeps it unaveraged (default %(default)s)",
    )
    p.add_argument(
        "--distill", type=float, default=0.0, metavar="LAMBDA", help="add a distillation term towards the original, weight LAMBDA (e.g. 2)"
    )
    p.add_argument("--no-control", action="store_true", help="skip the no-hard-negative control (faster; the report then lacks it)")
    p.add_argument("--trust-remote-code", nargs="+", metavar="M", help="opt in to running repository code for these models")
    p.add_argument("--json", action="store_true", help="print the JSON report on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_tune)


def _config(args):
    from core.probes.tune.train import TuneConfig

    try:
        return TuneConfig(
            learning_rate=args.lr,
            batch_size=args.batch_size,
            epochs=args.epochs,
            seed=args.seed,
            average=args.average,
            distill=args.distill,
            max_steps=args.max_steps,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def _labelled(paths: list[str]) -> dict[str, pd.DataFrame]:
    """Each ``--labels`` file as ``text_a, text_b, same`` (:func:`core.probes.tune.data.labelled_pairs`)."""
    from core.files.errors import PairsFileError
    from core.files.reader import read_pairs_file
    from core.probes.tune.data import labelled_pairs

    out = {}
    for path in paths:
        try:
            frame, _ = read_pairs_file(path)
            out[Path(path).name] = labelled_pairs(frame)
        except (PairsFileError, ValueError) as exc:
            raise CliError(f"--labels {path}: {exc}") from exc
    return out


def _triples(path: str, suite: str):
    """``--triples FILE`` as a suite (:func:`core.probes.retrieval.convert.triples_suite`)."""
    from core.files.errors import PairsFileError
    from core.files.triples import read_triples
    from core.probes.retrieval.convert import triples_suite

    if suite != constants.SUITE_RETRIEVAL:
        raise CliError("give --suite or --triples, not both")
    try:
        triples = read_triples(path)
        for note in triples.notes:
            print(f"note: {note}", file=sys.stderr)
        return triples_suite(triples.frame, triples.name)
    except (PairsFileError, ValueError) as exc:
        raise CliError(f"--triples {path}: {exc}") from exc


def _model(name: str, allow_remote_code: bool):
    from core.models.loading import ModelUnavailable, load_model
    from core.models.registry import resolve
    from core.probes.tune.train import untunable_reason

    reason = untunable_reason(resolve(name))
    if reason:
        raise _NoModel(reason)
    try:
        loaded = load_model(name, allow_remote_code=allow_remote_code, backend="torch")
    except ModelUnavailable as exc:
        raise _NoModel(str(exc)) from exc
    st_model = loaded.backend.torch_model
    if st_model is None or not hasattr(st_model, "fit"):
        raise _NoModel(f"{name}: tune needs a sentence-transformers torch model; this one runs on {loaded.meta.backend}")
    return loaded.meta.name, st_model


def _say_expected(name: str, suite, config, labelled: dict[str, pd.DataFrame], *, control: bool) -> None:
    """One line before the run: training takes minutes (:func:`core.probes.tune.estimate.estimate_tune`)."""
    from core.models.registry import resolve
    from core.probes.tune.estimate import estimate_tune, expected_words, suite_counts
    from core.probes.tune.train import untunable_reason

    if untunable_reason(resolve(name)):
        return  # the load says why, next
    try:
        counts = suite_counts(suite, config.seed)
    except ValueError:
        return  # the run refuses this suite with its own message
    est = estimate_tune(name, counts, config, control=control, labelled=list(labelled.values()))
    print(f"note: expected time {expected_words(est)}", file=sys.stderr)


class _NoModel(Exception):
    pass


def _out_folder(path: str) -> Path:
    """``--out``, proven writable (and its ``model`` folder not a file) before any model loads: training takes minutes."""
    out = output_folder(path, "--out", "tune", TUNE_OUTPUTS)
    assert out is not None  # --out is required
    model = out / "model"
    if model.exists() and not model.is_dir():
        raise CliError(f"--out: {model} is a file; the tuned model is written to a folder of that name. Move it or give another --out")
    if model.is_dir():
        output_folder(str(model), "--out", "tune")
    return out


def cmd_tune(args) -> int:
    from core.cli.retrieval import load_suite
    from core.probes.tune.run import run_tune, write_outputs
    from core.probes.tune.train import TuneCancelled

    config = _config(args)
    suite = _triples(args.triples, args.suite) if args.triples else load_suite(args.suite)
    labelled = _labelled(args.labels)
    out = _out_folder(args.out)
    name = args.models[0]
    if not args.quiet:
        _say_expected(name, suite, config, labelled, control=not args.no_control)
    try:
        model_name, model = _model(name, bool(args.trust_remote_code and name in args.trust_remote_code))
    except _NoModel as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_NO_MODEL
    try:
        result = run_tune(
            model,
            model_name,
            suite,
            config,
            labelled=labelled,
            control=not args.no_control,
            progress=None if args.quiet else print_progress,
        )
    except TuneCancelled as exc:
        print(f"\n{exc}", file=sys.stderr)
        return 130
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if not args.quiet:
        print(file=sys.stderr)
    try:
        written = write_outputs(result, out)
    except OSError as exc:
        raise CliError(f"--out: cannot write the tuned model and its report into {out} ({exc.strerror or type(exc).__name__})") from exc
    remember_written("tune", *(path for name, path in written.items() if name != "model"))
    _record(result)
    if args.json:
        print(json.dumps(result.doc, default=str))
    else:
        print(result.markdown)
    for warning in result.doc["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"note: tuned model in {written['model']} (use --models {written['model']}); report in {written['report.md']}", file=sys.stderr)
    return 0


def _record(result: TuneResult) -> None:
    """The run in the history (:meth:`core.probes.tune.run.TuneResult.history_record`)."""
    from core.cli.history import record_result_history

    suite = result.doc["suite"]
    record_result_history("tune", suite, result, {"sources": [{"suite": suite}]})
