"""read_triples / parse_triples: column names, long and wide negatives, flags, and refusals that name the file."""

from __future__ import annotations

import json

import pytest

from core import constants
from core.files.errors import PairsFileError
from core.files.triples import TRIPLE_FLAGS, guess_triple_columns, parse_triples, read_triples
from core.paths import PROJECT_ROOT

TRIPLE_TEXT_COLUMNS = (constants.COL_ANCHOR, constants.COL_POSITIVE, constants.COL_NEGATIVE)
SAMPLE = PROJECT_ROOT / "data" / "samples" / "nli-triples.csv"


def test_sentence_transformers_names_and_one_row_per_negative():
    data = b"anchor,positive,negative\nq one,p one,n one\nq two,p two,n two\n"
    triples = parse_triples(data, "t.csv")
    assert list(triples.frame[constants.COL_NEGATIVE]) == ["n one", "n two"]
    assert triples.mapping == {"anchor": "anchor", "positive": "positive", "negative": ("negative",)}
    assert any("recognised by name" in n for n in triples.notes)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("premise,entailed,contradicted", ("premise", "entailed", ("contradicted",))),
        ("query,entailment,contradiction", ("query", "entailment", ("contradiction",))),
        ("query,positive,hard_negative", ("query", "positive", ("hard_negative",))),
        ("anchor,positive,negative_1,negative_2,id", ("anchor", "positive", ("negative_1", "negative_2"))),
    ],
)
def test_recognised_column_names(header, expected):
    guess = guess_triple_columns(header.split(","))
    assert (guess["anchor"], guess["positive"], guess["negative"]) == expected


def test_wide_negatives_keep_every_row_and_skip_empty_cells():
    data = b"anchor,positive,negative_1,negative_2\na,p,n1,n2\nb,q,m1,\n"
    triples = parse_triples(data, "wide.csv")
    assert list(zip(triples.frame["row"], triples.frame[constants.COL_NEGATIVE], strict=True)) == [(1, "n1"), (1, "n2"), (2, "m1")]
    assert "wide.csv: dropped 1 empty negative cell(s) of 'negative_2' (row 2)" in triples.notes


def test_long_format_keeps_repeated_text_as_its_own_rows():
    # Two rows with the same text are two passages: nothing is deduplicated.
    data = b"anchor,positive,negative\na,p,n1\na,p,n2\nb,p,n1\n"
    triples = parse_triples(data, "long.csv")
    assert len(triples.frame) == 3 and triples.n_rows == 3


def test_flags_override_and_name_the_columns():
    data = b"s1,s2,s3\na,p,n\n"
    with pytest.raises(PairsFileError, match=r"x\.csv: no column is named anchor .* --query COL"):
        parse_triples(data, "x.csv", flags=TRIPLE_FLAGS)
    triples = parse_triples(data, "x.csv", {"anchor": "s1", "positive": "s2", "negative": "s3"})
    assert triples.frame.iloc[0][[constants.COL_ANCHOR, constants.COL_POSITIVE, constants.COL_NEGATIVE]].tolist() == ["a", "p", "n"]
    assert any("columns as given" in n for n in triples.notes)
    many = parse_triples(b"s1,s2,s3,s4\na,p,n,m\n", "x.csv", {"anchor": "s1", "positive": "s2", "negative": "s3, s4"})
    assert list(many.frame[constants.COL_NEGATIVE]) == ["n", "m"]


def test_refusals_name_the_file():
    with pytest.raises(PairsFileError, match=r"^x\.csv: column\(s\) 'nope' not in the file"):
        parse_triples(b"anchor,positive,negative\na,p,n\n", "x.csv", {"negative": "nope"})
    with pytest.raises(PairsFileError, match=r"^x\.csv: one column is mapped to two roles"):
        parse_triples(b"anchor,positive,negative\na,p,n\n", "x.csv", {"positive": "anchor"})
    with pytest.raises(PairsFileError, match=r"^x\.csv: the file is empty"):
        parse_triples(b"  \n", "x.csv")
    with pytest.raises(PairsFileError, match=r"^x\.csv: no row has an anchor, a positive and a negative"):
        parse_triples(b"anchor,positive,negative\na,p,\n", "x.csv")
    nested = json.dumps([{"anchor": "a", "positive": {"t": 1}, "negative": "n"}]).encode()
    with pytest.raises(PairsFileError, match=r"^x\.json: column 'positive' holds JSON objects"):
        parse_triples(nested, "x.json")


def test_jsonl_with_lone_surrogate_is_read_with_a_note():
    data = b'{"anchor": "a \\ud800", "positive": "p", "negative": "n"}\n{"anchor": "b", "positive": "q", "negative": "m"}\n'
    triples = parse_triples(data, "x.jsonl")
    assert triples.frame[constants.COL_ANCHOR].iloc[0] == "a \ufffd"
    assert any("x.jsonl:" in n and "U+FFFD" in n for n in triples.notes)


def test_read_triples_from_disk(tmp_path):
    assert read_triples(SAMPLE).n_rows == 24
    with pytest.raises(PairsFileError, match=r"^absent\.csv: cannot read"):
        read_triples(tmp_path / "absent.csv")


# A JSON number or boolean was scored as its printed form ("12" against "True"), null and "" took part.
HOSTILE_JSONL = (
    "\n".join(
        [
            '{"anchor": 12, "positive": "A man plays a guitar.", "negative": true}',
            '{"anchor": "A dog runs.", "positive": "An animal moves.", "negative": "A dog sleeps."}',
            '{"anchor": "A cat sits.", "positive": null, "negative": "A cat runs."}',
            '{"anchor": "A bird sings.", "positive": "A bird makes a sound.", "negative": 7}',
            '{"anchor": "A boy reads.", "positive": "\u200b\u200d", "negative": "A boy sleeps."}',
            '{"anchor": "A girl swims.", "positive": "A girl is in water.", "negative": ""}',
            '{"anchor": false, "positive": "x", "negative": "y"}',
        ]
    )
    + "\n"
)


def test_json_numbers_booleans_null_empty_and_invisible_values_take_no_part():
    triples = parse_triples(HOSTILE_JSONL.encode("utf-8"), "t.jsonl")
    assert list(zip(triples.frame["row"], triples.frame[constants.COL_ANCHOR], triples.frame[constants.COL_NEGATIVE], strict=True)) == [
        (2, "A dog runs.", "A dog sleeps.")
    ]
    notes = set(triples.notes)
    assert {
        "t.jsonl: dropped 2 row(s) of 'anchor' holding a number or a boolean, not a text (rows 1, 7)",
        "t.jsonl: dropped 1 empty row(s) of 'positive' (row 3)",
        "t.jsonl: dropped 1 row(s) of 'positive' holding only invisible or control characters, nothing a model could read (row 5)",
        "t.jsonl: dropped 1 negative cell(s) of 'negative' holding a number or a boolean, not a text (row 4)",
        "t.jsonl: dropped 1 empty negative cell(s) of 'negative' (row 6)",
    } <= notes, triples.notes
    assert not any("12" in t or "True" in t or "False" in t for t in triples.frame[list(TRIPLE_TEXT_COLUMNS)].to_numpy().ravel())


def test_triples_and_the_corpus_reader_drop_the_same_values_with_the_same_words():
    from core.files.texts import TEXT_COLUMNS, parse_texts

    values = ["12", "true", "null", '""', '"\\u200b"', '"A real passage."', '"  "', "3.5"]
    corpus = parse_texts("\n".join(f'{{"text": {v}}}' for v in values).encode(), "c.jsonl", TEXT_COLUMNS["corpus"], what="corpus")
    rows = "\n".join(f'{{"anchor": {v}, "positive": "p", "negative": "n"}}' for v in values)
    triples = parse_triples(rows.encode(), "c.jsonl")
    assert list(triples.frame[constants.COL_ANCHOR]) == corpus.texts == ["A real passage."]
    said = [n.replace("'anchor'", "'text'") for n in triples.notes if "'anchor'" in n]
    assert said == corpus.notes and len(said) == 3
