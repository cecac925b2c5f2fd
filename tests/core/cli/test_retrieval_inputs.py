"""retrieval's user inputs on the command line: corpus mode that no rule applies to (issue 23.11)."""

from __future__ import annotations

import json

from core.cli import main as cli
from core.models.registry import MINILM_L6


def test_corpus_mode_without_any_applicable_rule_says_why(tmp_path, capsys, minilm):
    corpus, queries = tmp_path / "c.txt", tmp_path / "q.txt"
    corpus.write_text("Hello there\nGood morning\n")
    queries.write_text("Oh wow\n")
    code = cli.main(["retrieval", "--corpus", str(corpus), "--queries", str(queries), "--models", MINILM_L6, "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "no model produced results" not in captured.err
    assert "no perturbation rule" in captured.out and "applies to any query's top passage" in captured.out
    assert cli.main(["retrieval", "--corpus", str(corpus), "--queries", str(queries), "--models", MINILM_L6, "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["corpus"]["models"] == [MINILM_L6] and doc["corpus"]["no_variant"] == {MINILM_L6: 1}
