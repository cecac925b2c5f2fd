"""``tokens TEXT...``: the subword splits of texts under every model."""

from __future__ import annotations

import json

from core.cli.common import EXIT_NO_MODEL, add_model_options, models_arg, print_errors, require_text
from core.models import registry


def cmd_tokens(args) -> int:
    from core.models.tokens import load_tokenizers, token_rows

    texts = [require_text("TEXT", t) for t in args.texts]
    loaded, errors = load_tokenizers(models_arg(args.models))
    rows = token_rows(loaded, texts)
    print_errors(errors)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for text in texts:
            mine = [r for r in rows if r["text"] == text]
            same = mine[0]["identical_across_models"] if mine else True
            print(f"{text!r}  ({'identical' if same else 'different'} splits across {len(mine)} models)")
            for r in mine:
                print(f"  {registry.short_name(r['model']):<24} {r['n_tokens']:>4}  {' '.join(r['tokens'])}")
    return 0 if rows else EXIT_NO_MODEL


def register(subparsers) -> None:
    """Add the ``tokens`` command."""
    p = subparsers.add_parser("tokens", help="subword splits of texts under every model")
    p.add_argument("texts", nargs="+")
    add_model_options(p)
    p.set_defaults(func=cmd_tokens)
