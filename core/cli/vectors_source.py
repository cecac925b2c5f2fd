"""``--vectors FILE`` on ``audit``, ``retrieval`` (corpus mode) and ``index-settings``: vectors a pipeline already made.

A Parquet or Arrow file with a text, a vector and optionally an id column, or
a ``.npy`` matrix with ``FILE.txt`` beside it (:func:`core.files.vectors.read_vectors_file`,
read in batches).  No model is needed to audit given vectors; ``--models M``
(one model, needed to encode queries, pairs or variants the file does not
hold) is first checked on 20 of its passages, as for a store.
"""

from __future__ import annotations

from pathlib import Path

from core.cli.common import CliError, embedding_cache, print_notes, print_progress, run_options

VECTORS_HELP = (
    "vectors a pipeline already made: a Parquet or Arrow file with a text, a vector (list or fixed-size list of floats) and "
    "optionally an id column, or a .npy (n, d) matrix with FILE.txt beside it (line i the passage of row i); no model is "
    "needed, --models NAME (the model that made them) is checked on 20 passages"
)
VECTORS_EXAMPLE = "cosine-probe audit --vectors chunks.parquet --threshold 0.9 --out audit/"


def read_vectors_arg(args):
    """The passages and unit vectors ``--vectors`` names (``--text-column``/``--vector-column`` when given), its notes printed."""
    from core.files.vectors import VectorsError, read_vectors_file

    try:
        source = read_vectors_file(args.vectors, text_column=args.text_column, vector_column=args.vector_column)
    except VectorsError as exc:
        raise CliError(str(exc)) from exc
    print_notes(source.notes)
    return source


def vectors_label(args) -> str:
    """What the rows name as their model when no model was given: the file."""
    return f"vectors:{Path(args.vectors).name}"


def one_model(args, needed_for: str | None = None) -> str | None:
    """``--models``'s one model (None when not given and not needed); several, or none where ``needed_for`` needs one, is an error."""
    if args.models and len(args.models) != 1:
        raise CliError("--vectors takes one --models NAME: the model that made the vectors (it is checked on 20 passages)")
    if not args.models and needed_for:
        raise CliError(f"{needed_for} with --vectors needs --models NAME: the model that made the vectors encodes them")
    return args.models[0] if args.models else None


def checked_model(args, source, model: str, texts: list[str]):
    """The model checked on 20 of the file's passages and ``texts`` encoded by it; a mismatch is one line."""
    from core.models.check import encode_checked

    try:
        checked = encode_checked(
            source.passages,
            source.vectors,
            model,
            texts,
            what="given",
            cache=embedding_cache(args),
            options=run_options(args),
            progress=None if args.quiet else print_progress,
        )
    except ValueError as exc:
        if not args.quiet:
            import sys

            print(file=sys.stderr)
        raise CliError(str(exc)) from exc
    return checked


def check_line(check, file: str) -> str:
    """The model check in one line."""
    from core.models import registry

    return (
        f"model check: {registry.short_name(check.model)} re-encoded {len(check.cosines)} of the {check.rows:,} passages of {file}: "
        f"cosine with their given vectors {min(check.cosines):.4f} to {max(check.cosines):.4f}"
    )
