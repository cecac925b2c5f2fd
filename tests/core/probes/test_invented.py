"""Invented-word generator and the k-replicate OOV measurement (core.invented, `oov-words`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from lemminflect import getAllLemmas

from core import constants, stats
from core.cli import main as cli
from core.models.registry import MINILM_L6
from core.models.tokens import is_vocab_entry, word_pieces
from core.papers.suites import load_suite, read_suite_file
from core.paths import PROJECT_ROOT
from core.probes.invented import (
    InventedWord,
    generate_words,
    is_english_word,
    oov_replacements,
    oov_replicate_deltas,
    oov_replicate_summary,
    validate_request,
)


@pytest.fixture(scope="module")
def tok():
    from core.models.loading import load_tokenizer

    return load_tokenizer(MINILM_L6)


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    return read_suite_file(constants.SUITE_OOV)


def _assert_out_of_vocab(tok, w: InventedWord) -> None:
    assert w.word.isalpha(), w
    assert not is_vocab_entry(tok, w.word) and not is_vocab_entry(tok, w.word.lower()), w
    assert tuple(word_pieces(tok, w.word)) == w.pieces and w.n_pieces == len(w.pieces) >= 2, w
    assert tok.unk_token not in w.pieces, w
    assert getAllLemmas(w.word.lower()) == {}, w


# ------------------------------------------------------------------ generator


@pytest.mark.parametrize("kind", constants.WORD_KINDS)
@pytest.mark.parametrize("pieces", [2, 3, 4, 5])
def test_words_are_never_vocab_entries_and_have_the_requested_pieces(tok, kind, pieces):
    for seed in range(5):
        words = generate_words(tok, 8, kind=kind, pieces=pieces, seed=seed)
        assert len(words) == 8
        assert len({w.word.casefold() for w in words}) == 8, "duplicates"
        for w in words:
            _assert_out_of_vocab(tok, w)
            assert w.kind == kind and w.n_pieces == pieces
            assert constants.INVENTED_LENGTH[0] <= len(w.word) <= constants.INVENTED_LENGTH[1]


@pytest.mark.parametrize("kind", constants.WORD_KINDS)
def test_any_piece_count_and_style(tok, kind):
    words = generate_words(tok, 40, kind=kind, seed=11, length=(4, 12))
    for w in words:
        _assert_out_of_vocab(tok, w)
        assert 4 <= len(w.word) <= 12
        assert w.word[0].isupper() and w.word[1:].islower()
    lower = generate_words(tok, 10, kind=kind, seed=11, capitalize=False)
    assert all(w.word.islower() for w in lower)


def test_random_words_split_finer_than_plausible_ones(tok):
    # The control is what the paper proposed: letter soup, which WordPiece
    # cuts into more, shorter pieces than English-like syllables.
    plausible = generate_words(tok, 60, kind=constants.WORD_PLAUSIBLE, seed=3)
    random_ = generate_words(tok, 60, kind=constants.WORD_RANDOM, seed=3)
    assert np.mean([w.n_pieces for w in random_]) > np.mean([w.n_pieces for w in plausible])
    vowels = lambda ws: np.mean([sum(ch in "aeiouy" for ch in w.word.lower()) / len(w.word) for w in ws])  # noqa: E731
    assert vowels(plausible) > vowels(random_)


def test_same_seed_same_words_other_seed_other_words(tok):
    for kind in constants.WORD_KINDS:
        a = generate_words(tok, 10, kind=kind, seed=42)
        b = generate_words(tok, 10, kind=kind, seed=42)
        c = generate_words(tok, 10, kind=kind, seed=43)
        assert a == b
        assert {w.word for w in a}.isdisjoint({w.word for w in c})


def test_entity_and_exclusions_never_come_back(tok):
    first = generate_words(tok, 12, seed=5)
    banned = [w.word for w in first[:6]]
    again = generate_words(tok, 12, seed=5, exclude=banned)
    assert not {w.word for w in again} & set(banned)
    # Treat a word the generator makes as the entity: it must neither
    # come back nor survive inside another word.
    entity = first[0].word
    words = generate_words(tok, 12, seed=5, entity=entity.upper())
    assert all(entity.casefold() not in w.word.casefold() for w in words)


def test_other_tokenizers_vocabularies_are_respected(tok):
    class EveryWordIsAnEntry:
        unk_token = "[UNK]"

        def tokenize(self, word: str) -> list[str]:
            return [word.lower()]

    with pytest.raises(ValueError, match="found only 0 of 2"):
        generate_words(tok, 2, other_tokenizers=[EveryWordIsAnEntry()], max_attempts=50)


def test_dictionary_check():
    assert is_english_word("Running") and is_english_word("mars") and is_english_word("google")
    assert not is_english_word("Xylophrix") and not is_english_word("Wompelfritz")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"pieces": 1}, ValueError, "pieces=1 can never work.*vocabulary entry"),
        ({"pieces": 0}, ValueError, "pieces must be 2 or more"),
        ({"pieces": -3}, ValueError, "pieces must be 2 or more"),
        ({"pieces": 12}, ValueError, "cannot fit a word of at most 10 letters"),
        ({"pieces": True}, TypeError, "pieces must be a whole number"),
        ({"n": 0}, ValueError, "n must be at least 1"),
        ({"kind": "gibberish"}, ValueError, "kind must be one of plausible, random"),
        ({"length": (8, 5)}, ValueError, "length must satisfy"),
        ({"length": "long"}, ValueError, "length must be"),
        ({"seed": 1.5}, TypeError, "seed must be a whole number"),
    ],
)
def test_impossible_requests_raise_clear_errors(tok, kwargs, error, message):
    args = {"n": 3, **kwargs}
    with pytest.raises(error, match=message):
        generate_words(tok, args.pop("n"), **args)


def test_exhausted_attempts_say_what_was_found(tok):
    # 9 pieces in at most 9 letters means one letter per piece: essentially
    # never for English-like syllables.
    with pytest.raises(ValueError, match=r"found only \d+ of 3 plausible words with 9 pieces and 5-9 letters in 300 attempts"):
        generate_words(tok, 3, pieces=9, length=(5, 9), max_attempts=300)


@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        ({"pieces": 4, "length": (5, 10)}, {"pieces": 11, "length": (5, 10)}, "pieces"),
        ({"length": (5, 10)}, {"length": (10, 5)}, "min <= max"),
        ({}, {"kind": "gibberish"}, "kind must be one of"),
    ],
)
def test_validate_request_accepts_a_good_request_and_refuses_its_one_bad_neighbour(good, bad, message):
    """No tokenizer is needed (that is what makes it cheap), and one changed setting is enough to be refused."""
    assert validate_request(5, **{"kind": constants.WORD_RANDOM, **good}) is None
    with pytest.raises(ValueError, match=message):
        validate_request(5, **{"kind": constants.WORD_RANDOM, **good, **bad})


# ------------------------------------------------------------ replacement pairs


def test_replacement_frame_has_k_per_kind_and_reading(tok, items):
    k = 3
    readings = (constants.VARIANT_REPLACED_BOTH, constants.VARIANT_REPLACED_B)
    pairs = oov_replacements(items, tok, k, readings=readings, seed=1)
    per_item = 1 + len(constants.WORD_KINDS) * k * len(readings)
    assert len(pairs) == len(items) * per_item
    assert set(pairs[constants.COL_SUITE]) == {constants.SUITE_OOV_INVENTED}
    assert set(pairs[constants.COL_CATEGORY]) == {constants.CAT_OOV}
    for entity, group in pairs.groupby(constants.COL_ENTITY):
        item = items[items[constants.COL_ENTITY] == entity].iloc[0]
        original = group[group[constants.COL_VARIANT] == constants.VARIANT_ORIGINAL]
        assert len(original) == 1
        assert (original[constants.COL_TEXT_A].iloc[0], original[constants.COL_TEXT_B].iloc[0]) == (
            item[constants.COL_TEXT_A],
            item[constants.COL_TEXT_B],
        )
        replaced = group[group[constants.COL_VARIANT] != constants.VARIANT_ORIGINAL]
        counts = replaced.groupby([constants.COL_KIND, constants.COL_VARIANT]).size()
        assert (counts == k).all() and len(counts) == len(constants.WORD_KINDS) * len(readings)
        assert sorted(set(replaced[constants.COL_REPLICATE])) == list(range(1, k + 1))
        assert replaced[constants.COL_REPLACEMENT].nunique() == len(constants.WORD_KINDS) * k
        entity_re = re.compile(rf"\b{re.escape(entity)}\b")
        for row in replaced.to_dict("records"):
            word = row[constants.COL_REPLACEMENT]
            assert re.search(rf"\b{word}\b", row[constants.COL_TEXT_B])
            assert not entity_re.search(row[constants.COL_TEXT_B])
            if row[constants.COL_VARIANT] == constants.VARIANT_REPLACED_BOTH:
                assert re.search(rf"\b{word}\b", row[constants.COL_TEXT_A]) and not entity_re.search(row[constants.COL_TEXT_A])
            else:
                assert row[constants.COL_TEXT_A] == item[constants.COL_TEXT_A]
            assert (
                row[constants.COL_PIECES].split() == word_pieces(tok, word)
                and row[constants.COL_N_PIECES] == len(word_pieces(tok, word)) >= 2
            )
            assert not is_vocab_entry(tok, word) and not is_english_word(word)
            # Case follows the entity: "Einstein" -> "Wompelfritz", "insulin" -> "dravomycin".
            assert word[0].isupper() == entity[0].isupper()


def test_replacements_are_deterministic_and_per_entity(tok, items):
    full = oov_replacements(items, tok, 2, seed=7)
    again = oov_replacements(items, tok, 2, seed=7)
    pd.testing.assert_frame_equal(full, again)
    # An entity's words do not depend on which other entities are in the run.
    subset = oov_replacements(items.iloc[[3, 11]], tok, 2, seed=7)
    expected = full[full[constants.COL_ENTITY].isin(subset[constants.COL_ENTITY])].reset_index(drop=True)
    pd.testing.assert_frame_equal(subset.reset_index(drop=True), expected)
    other = oov_replacements(items, tok, 2, seed=8)
    assert set(other[constants.COL_REPLACEMENT]) - {""} != set(full[constants.COL_REPLACEMENT]) - {""}


def test_expanded_suite_is_reduced_to_its_originals(tok):
    expanded = load_suite(constants.SUITE_OOV)
    assert len(expanded) == 60
    pairs = oov_replacements(expanded, tok, 1, kinds=[constants.WORD_RANDOM])
    assert len(pairs) == 20 * 2


def test_pieces_option_reaches_every_word(tok, items):
    pairs = oov_replacements(items.iloc[:4], tok, 2, pieces=4)
    replaced = pairs[pairs[constants.COL_VARIANT] != constants.VARIANT_ORIGINAL]
    assert set(replaced[constants.COL_N_PIECES]) == {4}


@pytest.mark.parametrize(
    ("change", "kwargs", "error", "message"),
    [
        ("drop-entity", {}, ValueError, r"lack columns \['entity'\]"),
        (None, {"k": 0}, ValueError, "k must be at least 1"),
        (None, {"k": 2.0}, TypeError, "k must be a whole number"),
        (None, {"kinds": ("plausible", "fancy")}, ValueError, "kinds must be"),
        (None, {"kinds": ()}, ValueError, "kinds must be"),
        (None, {"readings": ("original",)}, ValueError, "readings must be"),
        (None, {"pieces": 1}, ValueError, "pieces=1 can never work"),
        ("absent-entity", {}, ValueError, "does not occur as a word"),
    ],
)
def test_replacement_bad_input(tok, items, change, kwargs, error, message):
    data = items.iloc[:2].copy()
    if change == "drop-entity":
        data = data.drop(columns=[constants.COL_ENTITY])
    elif change == "absent-entity":
        data[constants.COL_ENTITY] = "Zanzibar"
    with pytest.raises(error, match=message):
        oov_replacements(data, tok, **{"k": 2, **kwargs})


# ------------------------------------------------------------------ summaries


def _tiny_results() -> pd.DataFrame:
    """Runner-shaped rows: 2 entities x 2 kinds x 3 replicates, one model, known cosines."""
    rows = []
    replaced = {
        ("E1", constants.WORD_PLAUSIBLE): [0.70, 0.60, 0.65],
        ("E1", constants.WORD_RANDOM): [0.50, 0.55, 0.40],
        ("E2", constants.WORD_PLAUSIBLE): [0.80, 0.80, 0.80],
        ("E2", constants.WORD_RANDOM): [0.60, 0.75, 0.70],
    }
    originals = {"E1": 0.90, "E2": 0.85}
    for entity, cos in originals.items():
        rows.append(
            {
                constants.COL_MODEL: "m",
                constants.COL_SUITE: constants.SUITE_OOV_INVENTED,
                constants.COL_PAIR_ID: f"p-{entity}",
                constants.COL_ENTITY: entity,
                constants.COL_VARIANT: constants.VARIANT_ORIGINAL,
                constants.COL_KIND: "",
                constants.COL_REPLICATE: 0,
                constants.COL_REPLACEMENT: "",
                constants.COL_N_PIECES: 0,
                constants.COL_COSINE: cos,
            }
        )
    for (entity, kind), values in replaced.items():
        for rep, cos in enumerate(values, start=1):
            rows.append(
                {
                    constants.COL_MODEL: "m",
                    constants.COL_SUITE: constants.SUITE_OOV_INVENTED,
                    constants.COL_PAIR_ID: f"p-{entity}",
                    constants.COL_ENTITY: entity,
                    constants.COL_VARIANT: constants.VARIANT_REPLACED_BOTH,
                    constants.COL_KIND: kind,
                    constants.COL_REPLICATE: rep,
                    constants.COL_REPLACEMENT: f"W{entity}{kind[0]}{rep}",
                    constants.COL_N_PIECES: 3 if kind == constants.WORD_PLAUSIBLE else 5,
                    constants.COL_COSINE: cos,
                }
            )
    # A row of another suite must be ignored.
    rows.append(
        {
            constants.COL_MODEL: "m",
            constants.COL_SUITE: constants.SUITE_OOV,
            constants.COL_PAIR_ID: "p-E1",
            constants.COL_ENTITY: "E1",
            constants.COL_VARIANT: constants.VARIANT_ORIGINAL,
            constants.COL_KIND: "",
            constants.COL_REPLICATE: 0,
            constants.COL_REPLACEMENT: "",
            constants.COL_N_PIECES: 0,
            constants.COL_COSINE: 0.1,
        }
    )
    return pd.DataFrame(rows)


def test_replicate_deltas_are_original_minus_replaced():
    deltas = oov_replicate_deltas(_tiny_results())
    assert len(deltas) == 12
    e1p = deltas[(deltas[constants.COL_ENTITY] == "E1") & (deltas[constants.COL_KIND] == constants.WORD_PLAUSIBLE)]
    np.testing.assert_allclose(e1p["delta"], [0.20, 0.30, 0.25])
    assert set(deltas["reading"]) == {constants.VARIANT_REPLACED_BOTH}


def test_summary_matches_hand_computation():
    tables = oov_replicate_summary(_tiny_results())
    by_entity = tables["by_entity"].set_index([constants.COL_ENTITY, constants.COL_KIND])
    hand = {
        ("E1", constants.WORD_PLAUSIBLE): [0.20, 0.30, 0.25],
        ("E1", constants.WORD_RANDOM): [0.40, 0.35, 0.50],
        ("E2", constants.WORD_PLAUSIBLE): [0.05, 0.05, 0.05],
        ("E2", constants.WORD_RANDOM): [0.25, 0.10, 0.15],
    }
    for key, d in hand.items():
        row = by_entity.loc[key]
        assert row["n"] == 3
        assert row["mean_delta"] == pytest.approx(np.mean(d))
        assert row["sd_delta"] == pytest.approx(np.std(d, ddof=1))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(stats.bootstrap_ci(np.array(d)))
        assert row["ci_low"] <= row["mean_delta"] <= row["ci_high"]
    # Three equal deltas: every resample has the same mean.
    assert (
        by_entity.loc[("E2", constants.WORD_PLAUSIBLE), "ci_low"],
        by_entity.loc[("E2", constants.WORD_PLAUSIBLE), "ci_high"],
    ) == pytest.approx((0.05, 0.05))
    assert by_entity.loc[("E1", constants.WORD_RANDOM), "words"] == "WE1r1, WE1r2, WE1r3"

    by_model = tables["by_model"].set_index(constants.COL_KIND)
    plaus_means = np.array([0.25, 0.05])
    rand_means = np.array([np.mean(hand[("E1", constants.WORD_RANDOM)]), np.mean(hand[("E2", constants.WORD_RANDOM)])])
    assert by_model.loc[constants.WORD_PLAUSIBLE, "mean_delta"] == pytest.approx(0.15)
    assert (by_model.loc[constants.WORD_PLAUSIBLE, "ci_low"], by_model.loc[constants.WORD_PLAUSIBLE, "ci_high"]) == pytest.approx(
        stats.bootstrap_ci(plaus_means)
    )
    assert by_model.loc[constants.WORD_RANDOM, "mean_delta"] == pytest.approx(rand_means.mean())
    assert by_model.loc[constants.WORD_RANDOM, "n_entities"] == 2 and by_model.loc[constants.WORD_RANDOM, "n_words"] == 6
    assert by_model.loc[constants.WORD_PLAUSIBLE, "mean_pieces"] == 3 and by_model.loc[constants.WORD_RANDOM, "mean_pieces"] == 5

    (cmp,) = tables["plausible_vs_random"].to_dict("records")
    assert cmp["n_entities"] == 2
    assert cmp["difference"] == pytest.approx(0.15 - rand_means.mean())
    assert (cmp["ci_low"], cmp["ci_high"]) == pytest.approx(stats.bootstrap_diff_ci(plaus_means, rand_means))
    all_p = np.concatenate([hand[("E1", constants.WORD_PLAUSIBLE)], hand[("E2", constants.WORD_PLAUSIBLE)]])
    all_r = np.concatenate([hand[("E1", constants.WORD_RANDOM)], hand[("E2", constants.WORD_RANDOM)]])
    assert cmp["cohens_d"] == pytest.approx(stats.cohens_d(all_p, all_r))
    assert cmp["cohens_d"] < 0  # random strings cost more similarity here


def test_summary_accepts_deltas_and_one_kind():
    deltas = oov_replicate_deltas(_tiny_results())
    pd.testing.assert_frame_equal(oov_replicate_summary(deltas)["by_model"], oov_replicate_summary(_tiny_results())["by_model"])
    only_plausible = oov_replicate_summary(deltas[deltas[constants.COL_KIND] == constants.WORD_PLAUSIBLE])
    assert len(only_plausible["by_model"]) == 1 and only_plausible["plausible_vs_random"].empty


def test_deltas_need_their_originals():
    results = _tiny_results()
    with pytest.raises(ValueError, match="no original row for pair 'p-E2'"):
        oov_replicate_deltas(
            results[~((results[constants.COL_ENTITY] == "E2") & (results[constants.COL_VARIANT] == constants.VARIANT_ORIGINAL))]
        )
    with pytest.raises(ValueError, match="lack columns"):
        oov_replicate_deltas(results.drop(columns=[constants.COL_KIND]))
    assert oov_replicate_deltas(results[results[constants.COL_SUITE] == constants.SUITE_OOV]).empty


# ------------------------------------------------------------------------ CLI


def test_cli_lists_words_with_their_pieces(capsys, tok):
    assert cli.main(["oov-words", "Einstein", "--pieces", "3", "--n", "4", "--models", MINILM_L6]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "'Einstein' under MiniLM-L6: 1 piece: einstein"
    assert [line.split(" words")[0] for line in out if not line.startswith(" ")][1:] == list(constants.WORD_KINDS)
    word_lines = [line.split() for line in out if line.startswith("  ")]
    assert len(word_lines) == 8
    for word, n, *pieces in word_lines:
        assert n == "3" and pieces == word_pieces(tok, word) and not is_vocab_entry(tok, word)
        assert word[0].isupper()


def test_cli_json_and_kind(capsys, tok):
    assert (
        cli.main(
            ["oov-words", "penicillin", "--kind", "random", "--n", "5", "--pieces", "4", "--seed", "9", "--model", MINILM_L6, "--json"]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["entity_pieces"] == ["pen", "##ici", "##llin"] and doc["model"] == MINILM_L6
    assert len(doc["words"]) == 5 and {w["kind"] for w in doc["words"]} == {constants.WORD_RANDOM}
    for w in doc["words"]:
        assert w["n_pieces"] == 4 == len(w["pieces"]) and w["word"].islower() and not is_vocab_entry(tok, w["word"])
    assert [
        w.word for w in generate_words(tok, 5, kind=constants.WORD_RANDOM, pieces=4, seed=9, capitalize=False, entity="penicillin")
    ] == [w["word"] for w in doc["words"]]


CLI_USER_ERRORS = {
    "pieces 0": (["oov-words", "Einstein", "--pieces", "0"], "pieces must be 2 or more"),
    "pieces 1": (["oov-words", "Einstein", "--pieces", "1"], "pieces=1 can never work"),
    "n 0": (["oov-words", "Einstein", "--n", "0"], "--n must be at least 1"),
    "k 0": (["oov-words", "--run", "--k", "0"], "--k must be at least 1"),
    "no word": (["oov-words"], "ENTITY_OR_WORD is missing"),
    "blank word": (["oov-words", "  "], "ENTITY_OR_WORD is missing or empty"),
    "word and run": (["oov-words", "Einstein", "--run"], "not both"),
    "bad length": (["oov-words", "Einstein", "--length", "9", "3"], "length must satisfy"),
    "unknown entity": (["oov-words", "--run", "--entities", "Atlantis", "--models", MINILM_L6], "no OOV entity 'Atlantis'"),
    "exhausted": (["oov-words", "Mars", "--pieces", "9", "--length", "5", "9", "--models", MINILM_L6], "found only"),
}


@pytest.mark.parametrize("case", list(CLI_USER_ERRORS))
def test_cli_user_error_is_one_line(capsys, case):
    args, message = CLI_USER_ERRORS[case]
    assert cli.main(args) == cli.EXIT_USAGE
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], captured.err
    assert captured.out == ""


def test_cli_unknown_model_exits_3_with_reason(capsys):
    assert cli.main(["oov-words", "Einstein", "--models", "no-such-org/x"]) == cli.EXIT_NO_MODEL
    err = capsys.readouterr().err
    assert re.fullmatch(r"error: no-such-org/x: .+\n", err), err


def test_python_m_core_oov_words_error_has_no_traceback():
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("COSINE_PROBE_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-m", "core", "oov-words", "Einstein", "--pieces", "0"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == cli.EXIT_USAGE
    assert proc.stderr.strip().splitlines() == ["error: pieces must be 2 or more (a word of one piece is a vocabulary entry), got 0"]


def test_cli_run_end_to_end_on_minilm(capsys, tmp_path, minilm):
    out = tmp_path / "oov"
    args = [
        "oov-words",
        "--run",
        "--k",
        "2",
        "--models",
        MINILM_L6,
        "--entities",
        "Einstein",
        "google",
        "--out",
        str(out),
        "--quiet",
        "--json",
    ]
    assert cli.main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["k"] == 2 and doc["models"] == [MINILM_L6] and doc["reading"] == constants.OOV_DEFAULT_READING
    by_entity = pd.DataFrame(doc["tables"]["by_entity"])
    assert len(by_entity) == 4 and set(by_entity["n"]) == {2}
    assert set(by_entity[constants.COL_ENTITY]) == {"Einstein", "Google"}
    assert by_entity["mean_delta"].between(-1, 1).all()
    assert (by_entity["ci_low"] <= by_entity["mean_delta"] + 1e-12).all() and (
        by_entity["mean_delta"] <= by_entity["ci_high"] + 1e-12
    ).all()
    assert len(doc["tables"]["by_model"]) == 2 and len(doc["tables"]["plausible_vs_random"]) == 1
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False)
    assert len(pairs) == 2 * (1 + 2 * 2)
    assert json.loads((out / "summary.json").read_text())["tables"] == doc["tables"]

    # Plain output prints the three tables.
    assert cli.main([a for a in args if a not in ("--json", "--out", str(out))]) == 0
    plain = capsys.readouterr().out
    assert "== plausible vs random (paired over entities) ==" in plain and "Einstein" in plain


def test_slot_pairs_replace_the_whole_word_only():
    from core.probes.invented import InventedWord, slot_pairs

    words = [InventedWord("Xylophrix", constants.WORD_PLAUSIBLE, ("x", "##yl", "##op", "##hri", "##x"), 5)]
    pairs = slot_pairs("Google bought Googleplex from Google.", "Google", words)
    assert pairs[constants.COL_TEXT_B].tolist() == ["Xylophrix bought Googleplex from Xylophrix."]
    assert pairs[constants.COL_TEXT_A].tolist() == ["Google bought Googleplex from Google."]
    assert pairs[constants.COL_SUITE].tolist() == [constants.SUITE_OOV_SLOT]
    with pytest.raises(ValueError, match="not a whole word"):
        slot_pairs("google is lower case here", "Google", words)
    with pytest.raises(ValueError, match="give both"):
        slot_pairs("   ", "Google", words)
