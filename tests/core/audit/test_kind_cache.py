"""Pair kinds kept on disk: a second audit classifies nothing, a change of rules or a damaged file classifies again."""

from __future__ import annotations

import pytest

from core.audit import kind_cache, kinds
from core.audit.run import audit_corpus
from core.models.cache import EmbeddingCache
from core.models.registry import MINILM_L6

CORPUS = [
    "Take 5 mg of the drug twice a day.",
    "Take 500 mg of the drug twice a day.",
    "The patient has diabetes.",
    "The patient does not have diabetes.",
    "The drug reduces pain.",
    "the drug reduces pain",
    "Paris is the capital of France.",
]
COLUMNS = ["index_a", "index_b", "kind", "mode", "modes", "changed_a", "changed_b"]


def _audit(folder):
    return audit_corpus(CORPUS, [MINILM_L6], 0.5, cache=EmbeddingCache(folder / "e.sqlite"))


def _refuse(*_args):
    raise AssertionError("classified again")


def test_a_second_run_classifies_nothing_and_equals_the_first(minilm, tmp_path, monkeypatch):
    first = _audit(tmp_path)
    assert (tmp_path / kind_cache.KIND_CACHE_FILE).exists()
    assert set(first.pairs["kind"]) >= {kinds.KIND_TWIN, kinds.KIND_DUPLICATE}
    monkeypatch.setattr(kinds, "pair_kind", _refuse)
    second = _audit(tmp_path)
    assert second.pairs[COLUMNS].equals(first.pairs[COLUMNS])


def test_new_rules_or_a_damaged_file_classify_again(minilm, tmp_path, monkeypatch):
    first = _audit(tmp_path)
    calls = []
    real = kinds.pair_kind

    def counted(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(kinds, "pair_kind", counted)
    monkeypatch.setattr(kind_cache, "rules_version", lambda: "other rules")
    assert _audit(tmp_path).pairs[COLUMNS].equals(first.pairs[COLUMNS])
    assert len(calls) == len(first.pairs)
    (tmp_path / kind_cache.KIND_CACHE_FILE).write_bytes(b"not a database" * 100)
    calls.clear()
    assert _audit(tmp_path).pairs[COLUMNS].equals(first.pairs[COLUMNS])
    assert len(calls) == len(first.pairs)
    # The damaged file was replaced: the next run reads every kind again.
    calls.clear()
    assert _audit(tmp_path).pairs[COLUMNS].equals(first.pairs[COLUMNS])
    assert calls == []


def test_no_store_without_a_disk_cache(minilm, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    audit_corpus(CORPUS, [MINILM_L6], 0.5, cache=EmbeddingCache(False))
    assert not list(tmp_path.rglob(kind_cache.KIND_CACHE_FILE))


@pytest.mark.parametrize("name", ["lexicon/modes.py", "audit/kinds.py", "words.py"])
def test_the_rules_version_reads_every_rule_file(name):
    assert (kind_cache._CORE / name).is_file()
    assert len(kind_cache.rules_version()) == 64


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        ("UPDATE pair_kinds SET kind = 'banana'", "failing the checksum"),
        ("UPDATE pair_kinds SET mode = '', modes = '' WHERE kind = 'twin'", "failing the checksum"),
        ("UPDATE pair_kinds SET checksum = NULL", "failing the checksum"),
    ],
)
def test_an_edited_row_is_classified_again_with_a_warning(minilm, tmp_path, monkeypatch, edit, reason):
    import sqlite3

    first = _audit(tmp_path)
    with sqlite3.connect(tmp_path / kind_cache.KIND_CACHE_FILE) as conn:
        conn.execute(edit)
    calls = []
    real = kinds.pair_kind

    def counted(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(kinds, "pair_kind", counted)
    with pytest.warns(kind_cache.KindCacheWarning, match=reason):
        again = _audit(tmp_path)
    assert again.pairs[COLUMNS].equals(first.pairs[COLUMNS])
    assert calls  # the edited rows were classified again, not read


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (("twin", "negation", "negation", "has", "does not have"), None),
        (("near-duplicate", "", "", "", ""), None),
        (("several differences", "", "", "67 day 5", "72 day 3"), None),
        (("banana", "", "", "", ""), "kind"),
        (("twin", "", "", "", ""), "mode"),
        (("twin", "sarcasm", "sarcasm", "", ""), "mode"),
        (("twin", "negation", "numerical", "", ""), "mode"),
        (("other", "negation", "negation", "", ""), "mode"),
    ],
)
def test_a_row_with_a_good_checksum_still_needs_a_known_kind_and_mode(value, problem):
    key = kind_cache.pair_key("a", "b")
    assert kind_cache.row_problem(key, value, kind_cache.row_checksum(key, value)) == problem
    assert kind_cache.row_problem(key, value, b"x" * 16) == "checksum"
