"""What a run scored, for its history settings: a shipped suite by name, or a file by path and SHA-256."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from core import constants
from core.papers.suites import SUITE_FILES

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def bytes_sha256(data: bytes) -> str:
    """Hex SHA-256 of uploaded bytes."""
    return hashlib.sha256(data).hexdigest()


def suite_source(name_or_path: str) -> dict[str, Any]:
    """``{"suite": name, "sha256": …}`` for a shipped suite (its CSV's hash, so an edited suite shows),
    ``{"file": path, "sha256": …}`` for a file, ``{"suite": name}`` when neither can be hashed.

    ``all`` lists no hash (it is three files); use one entry per suite for that.
    """
    if name_or_path in SUITE_FILES:
        return {"suite": name_or_path, "sha256": file_sha256(SUITE_FILES[name_or_path])}
    if name_or_path == constants.SUITE_ALL or name_or_path == constants.SUITE_RETRIEVAL:
        return {"suite": name_or_path}
    path = Path(name_or_path).expanduser()
    try:
        return {"file": str(path.resolve()), "sha256": file_sha256(path)}
    except OSError:
        return {"suite": name_or_path}


def _mitigated(rows: pd.DataFrame, scores: pd.DataFrame, keys: list[str], score: str) -> pd.DataFrame:
    """``rows`` (dense, with ``keys``) plus one ``score[<mitigation>]`` column per other mitigation: the score
    that mitigation gave the same passage (matched by ``keys`` and order among equal keys)."""
    rows = rows.assign(_occ=rows.groupby(keys, sort=False).cumcount())
    for mitigation in dict.fromkeys(scores[constants.COL_MITIGATION]):
        if mitigation == constants.MITIGATION_NONE:
            continue
        part = scores.loc[scores[constants.COL_MITIGATION] == mitigation, [*keys, score]]
        part = part.assign(_occ=part.groupby(keys, sort=False).cumcount()).rename(columns={score: f"score[{mitigation}]"})
        rows = rows.merge(part, on=[*keys, "_occ"], how="left")
    return rows.drop(columns="_occ")


def retrieval_pairs(scores: pd.DataFrame, suite: str) -> pd.DataFrame:
    """A retrieval run's scores as tidy pair results, so the history stores and diffs them like any run.

    Each anchor group gives one ``positive`` row (anchor vs its paraphrase) and
    one row per adversarial variant (anchor vs variant, category = its mode);
    ``win`` and ``margin`` ride along.  ``cosine`` is mitigation ``none``'s (the
    model's, not a reranker's); each other mitigation's score of the same
    passage is kept beside it as ``score[<mitigation>]``.

    Args:
        scores: ``RetrievalResult.scores`` (model, mitigation, group_id, mode, anchor,
            paraphrase, variant, cosine_paraphrase, cosine_variant, and
            score_paraphrase/score_variant for mitigated scores).
        suite: the suite's name.

    Raises:
        ValueError: ``scores`` lacks a needed column.
    """
    needed = [
        constants.COL_MODEL,
        constants.COL_MITIGATION,
        constants.COL_GROUP_ID,
        constants.COL_MODE,
        constants.COL_ANCHOR,
        constants.COL_PARAPHRASE,
        "variant",
        "cosine_paraphrase",
        "cosine_variant",
    ]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ValueError(f"the retrieval scores lack columns {missing}")
    mitigated = {"score_paraphrase", "score_variant"} <= set(scores.columns)
    dense = scores[scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    extra = [c for c in (constants.COL_DOMAIN, constants.COL_WIN, "margin") if c in dense.columns]
    variant_keys = [constants.COL_MODEL, constants.COL_GROUP_ID, constants.COL_MODE]
    if mitigated:
        dense = _mitigated(dense, scores, variant_keys, "score_variant")
    variants = pd.DataFrame(
        {
            constants.COL_MODEL: dense[constants.COL_MODEL],
            constants.COL_SUITE: suite,
            constants.COL_CATEGORY: dense[constants.COL_MODE],
            constants.COL_PAIR_ID: dense[constants.COL_GROUP_ID].astype(str) + "/" + dense[constants.COL_MODE].astype(str),
            constants.COL_TEXT_A: dense[constants.COL_ANCHOR],
            constants.COL_TEXT_B: dense["variant"],
            constants.COL_COSINE: dense["cosine_variant"],
            **{c: dense[c] for c in extra},
            **{c: dense[c] for c in dense.columns if c.startswith("score[")},
        }
    )
    group_keys = [constants.COL_MODEL, constants.COL_GROUP_ID]
    groups = dense.drop_duplicates(group_keys)[[c for c in dense.columns if not c.startswith("score[")]]
    if mitigated:
        groups = _mitigated(groups, scores.drop_duplicates([*group_keys, constants.COL_MITIGATION]), group_keys, "score_paraphrase")
    paraphrases = pd.DataFrame(
        {
            constants.COL_MODEL: groups[constants.COL_MODEL],
            constants.COL_SUITE: suite,
            constants.COL_CATEGORY: constants.CAT_POSITIVE,
            constants.COL_PAIR_ID: groups[constants.COL_GROUP_ID].astype(str) + "/paraphrase",
            constants.COL_TEXT_A: groups[constants.COL_ANCHOR],
            constants.COL_TEXT_B: groups[constants.COL_PARAPHRASE],
            constants.COL_COSINE: groups["cosine_paraphrase"],
            **({constants.COL_DOMAIN: groups[constants.COL_DOMAIN]} if constants.COL_DOMAIN in groups.columns else {}),
            **{c: groups[c] for c in groups.columns if c.startswith("score[")},
        }
    )
    return (
        pd.concat([paraphrases, variants], ignore_index=True)
        .sort_values([constants.COL_MODEL, constants.COL_PAIR_ID], kind="stable")
        .reset_index(drop=True)
    )


def corpus_pairs(pairs: pd.DataFrame, name: str) -> pd.DataFrame:
    """Corpus mode's pairs (``CorpusResult.pairs``) as tidy pair results: per model and query, the query vs its
    top passage (category ``positive``) and vs each rule-made variant of it (category = the mode); ``cosine`` is
    mitigation ``none``'s, the other mitigations' scores ride along as ``score[<mitigation>]``.

    Raises:
        ValueError: ``pairs`` lacks a needed column.
    """
    needed = [
        constants.COL_MODEL,
        constants.COL_MITIGATION,
        constants.COL_QUERY,
        "original",
        constants.COL_MODE,
        constants.COL_RULE,
        "variant",
        "score_original",
        "score_variant",
    ]
    if pairs.empty:
        # No query's top passage gave a rule a handle: no variant, so no pair (the frame then has no columns either).
        return pd.DataFrame(columns=list(constants.RESULT_COLUMNS))
    missing = [c for c in needed if c not in pairs.columns]
    if missing:
        raise ValueError(f"the corpus-mode pairs lack columns {missing}")
    keys = [constants.COL_MODEL, constants.COL_QUERY, constants.COL_MODE, constants.COL_RULE]
    dense = _mitigated(pairs[pairs[constants.COL_MITIGATION] == constants.MITIGATION_NONE], pairs, keys, "score_variant")
    mitigated = [c for c in dense.columns if c.startswith("score[")]
    query_id = dense.groupby(constants.COL_MODEL, sort=False)[constants.COL_QUERY].transform(lambda q: pd.factorize(q)[0]).astype(str)
    variants = pd.DataFrame(
        {
            constants.COL_MODEL: dense[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: dense[constants.COL_MODE],
            constants.COL_PAIR_ID: "q" + query_id + "/" + dense[constants.COL_RULE].astype(str),
            constants.COL_TEXT_A: dense[constants.COL_QUERY],
            constants.COL_TEXT_B: dense["variant"],
            constants.COL_COSINE: dense["score_variant"],
            **{c: dense[c] for c in (constants.COL_OUTRANKS, "rank_original") if c in dense.columns},
            **{c: dense[c] for c in mitigated},
        }
    )
    first = dense.assign(_qid=query_id).drop_duplicates([constants.COL_MODEL, constants.COL_QUERY])
    tops = _mitigated(
        first.drop(columns=mitigated),
        pairs.drop_duplicates([constants.COL_MODEL, constants.COL_QUERY, constants.COL_MITIGATION]),
        [constants.COL_MODEL, constants.COL_QUERY],
        "score_original",
    )
    originals = pd.DataFrame(
        {
            constants.COL_MODEL: tops[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: constants.CAT_POSITIVE,
            constants.COL_PAIR_ID: "q" + tops["_qid"] + "/top",
            constants.COL_TEXT_A: tops[constants.COL_QUERY],
            constants.COL_TEXT_B: tops["original"],
            constants.COL_COSINE: tops["score_original"],
            **{c: tops[c] for c in tops.columns if c.startswith("score[")},
        }
    )
    return (
        pd.concat([originals, variants], ignore_index=True)
        .sort_values([constants.COL_MODEL, constants.COL_PAIR_ID], kind="stable")
        .reset_index(drop=True)
    )


def mitigation_settings(mitigations: Sequence[Any]) -> list[dict[str, Any]]:
    """What each mitigation ran with: its name and its plain settings (numbers, text, per-model thresholds), for the history.

    Sorted by name: each mitigation rescores on its own, so the set is what ran, and one set picked
    in another order (typed on the CLI, ticked on the page) records the same settings.
    """
    out = []
    for m in mitigations:
        own = {k: v for k, v in vars(m).items() if not k.startswith("_") and _plain(v)} if hasattr(m, "__dict__") else {}
        out.append({"name": str(getattr(m, "name", m)), **own})
    return sorted(out, key=lambda setting: setting["name"])


def _plain(value: Any) -> bool:
    if isinstance(value, str | int | float | bool) or value is None:
        return True
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return False


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in frame.to_dict("records")]


def retrieval_record(result: Any, name: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Any retrieval result as history rows and settings: (tidy pairs, settings).

    Generic over the result's kind, so every retrieval input (suite, pairs file, corpus mode, and later
    ones) flows through one recorder:

    * a result with ``history_pairs(name)`` gives its own tidy pairs (the hook for new kinds);
    * else ``scores`` in the suite's shape (:func:`retrieval_pairs`);
    * else corpus mode's ``pairs`` (:func:`corpus_pairs`).

    Settings: ``threshold`` None (ranking cuts nothing; a calibrated filter's per-model thresholds are in its
    mitigation's settings), ``backends`` (from ``reports`` when present), ``summary`` (``summary()``: each model
    and mitigation's win rate, paired accuracy, ranking, costs) or ``rates`` (corpus mode).

    Raises:
        TypeError: a result of no known shape.
        ValueError: a result lacking the needed columns.
    """
    hook = getattr(result, "history_pairs", None)
    scores, corpus = getattr(result, "scores", None), getattr(result, "pairs", None)
    if not (callable(hook) or isinstance(scores, pd.DataFrame) or isinstance(corpus, pd.DataFrame)):
        raise TypeError(f"a {type(result).__name__} has no scores the history can store")
    if callable(hook):
        pairs = hook(name)
    elif isinstance(scores, pd.DataFrame):
        pairs = retrieval_pairs(scores, name)
    else:
        pairs = corpus_pairs(pd.DataFrame(corpus), name)
    settings: dict[str, Any] = {"threshold": None}
    reports = getattr(result, "reports", None) or {}
    settings["backends"] = {str(m): r.backend for m, r in reports.items() if getattr(r, "backend", "")}
    summary = getattr(result, "summary", None)
    if callable(summary):
        settings["summary"] = _records(summary())
    elif isinstance(getattr(result, "rates", None), pd.DataFrame):
        settings["rates"] = _records(result.rates)
    return pairs, settings


def tune_record(result: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A tune run (``core.probes.tune.run.TuneResult``) for the history: every setting's cosine(anchor, variant) as pairs.

    Returns:
        (pairs, settings): one pair per setting and variant, the model named ``model [setting]``;
        settings holding the run's ``config``.
    """
    scores = result.scores
    pairs = pd.DataFrame(
        {
            constants.COL_MODEL: result.doc["model"] + " [" + scores[constants.COL_SETTING] + "]",
            constants.COL_PAIR_ID: scores[constants.COL_GROUP_ID] + ":" + scores[constants.COL_MODE],
            constants.COL_CATEGORY: scores[constants.COL_MODE],
            constants.COL_TEXT_A: scores[constants.COL_ANCHOR],
            constants.COL_TEXT_B: scores[constants.ROLE_VARIANT],
            constants.COL_COSINE: scores["cosine_variant"],
            constants.COL_SPLIT: scores[constants.COL_SPLIT],
        }
    )
    return pairs, {"config": result.doc["config"]}


def audit_pairs(pairs: pd.DataFrame, name: str) -> pd.DataFrame:
    """An audit's close pairs (``core.audit.run.PAIR_COLUMNS``) as tidy pair results for the history.

    ``category`` is a twin's mode, else its kind (``near-duplicate``, ``other``); ``pair_id`` joins the two passage ids.

    Raises:
        ValueError: ``pairs`` lacks a needed column.
    """
    needed = [constants.COL_MODEL, "id_a", "id_b", constants.COL_TEXT_A, constants.COL_TEXT_B, constants.COL_COSINE, "kind", "mode"]
    missing = [c for c in needed if c not in pairs.columns]
    if missing:
        raise ValueError(f"the audit's pairs lack columns {missing}")
    category = pairs["mode"].where(pairs["kind"] == "twin", pairs["kind"]).astype(str)
    return pd.DataFrame(
        {
            constants.COL_MODEL: pairs[constants.COL_MODEL],
            constants.COL_SUITE: name,
            constants.COL_CATEGORY: category,
            constants.COL_PAIR_ID: pairs["id_a"].astype(str) + "~" + pairs["id_b"].astype(str),
            constants.COL_TEXT_A: pairs[constants.COL_TEXT_A],
            constants.COL_TEXT_B: pairs[constants.COL_TEXT_B],
            constants.COL_COSINE: pairs[constants.COL_COSINE].astype(float),
            "kind": pairs["kind"],
        }
    )


def index_settings_record(result: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    """An index-settings run (``core.probes.index_settings.IndexSettingsResult``) for the history, CLI and page alike:
    its pairs with the float32 ``cosine`` and each setting's ``score_<setting>`` beside it; the settings it ran and
    its whole table (NaN as null).

    Raises:
        ValueError: a run that scored no pairs (a retrieval- or triples-only run: the history stores pairs).
    """
    import json

    if result.pairs.empty:
        raise ValueError("the index-settings run scored no pairs to store")
    return result.pairs, {"index_settings": list(result.settings), "table": json.loads(result.table.to_json(orient="records"))}
