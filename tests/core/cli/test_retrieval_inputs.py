"""retrieval's user inputs on the command line: corpus mode that no rule applies to."""

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


def test_quiet_hides_progress_but_never_the_file_notes(tmp_path, capsys, minilm):
    # `retrieval --quiet` hid the rows dropped and the U+FFFD notes that `run --quiet` prints.
    triples = tmp_path / "t.jsonl"
    triples.write_text(
        '{"anchor": 12, "positive": "p", "negative": "n"}\n'
        '{"anchor": "A dog runs \\ud800.", "positive": "An animal moves.", "negative": "A dog sleeps."}\n'
        '{"anchor": "A cat sits.", "positive": "A cat rests.", "negative": true}\n'
        '{"anchor": "A bird sings.", "positive": "A bird makes a sound.", "negative": "A bird is silent."}\n',
        encoding="utf-8",
    )
    assert cli.main(["retrieval", "--triples", str(triples), "--models", MINILM_L6, "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "note: t.jsonl: dropped 1 row(s) of 'anchor' holding a number or a boolean, not a text (row 1)" in err
    assert "note: t.jsonl: row 2 held \\ud800-style escapes" in err and "U+FFFD" in err
    assert "note: t.jsonl: dropped 1 negative cell(s) of 'negative' holding a number or a boolean, not a text (row 3)" in err

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text(
        '{"_id": "d1", "text": "A dog runs."}\n{"_id": "d2", "text": 7}\n{"_id": "d3", "text": "A cat sits."}\n', encoding="utf-8"
    )
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "dog"}\n', encoding="utf-8")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    assert cli.main(["retrieval", "--beir", str(beir), "--models", MINILM_L6, "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "note: corpus.jsonl: dropped 1 passage(s) of 'text' holding a number or a boolean, not a text (line 2)" in err


def test_a_number_and_a_boolean_are_not_a_triple_the_win_rate_counts(tmp_path, capsys, minilm):
    # {"anchor": 12, "negative": true} was scored "12" vs "True" and counted: 1/3 instead of 0/2.
    triples = tmp_path / "t.jsonl"
    triples.write_text(
        '{"anchor": 12, "positive": "A man plays a guitar.", "negative": true}\n'
        '{"anchor": "A dog runs in the park.", "positive": "A dog is running outside.", "negative": "A cat sleeps on a sofa."}\n'
        '{"anchor": "The chef cooks pasta.", "positive": "Someone is cooking food.", "negative": "The river is frozen."}\n',
        encoding="utf-8",
    )
    assert cli.main(["retrieval", "--triples", str(triples), "--models", MINILM_L6, "--quiet", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_rows"] == 2 and doc["n_triples"] == 2
    (rates,) = doc["win_rates"]
    assert (rates["n"], rates["wins"]) == (2, 0)
