"""What a run scored, for its history settings: a shipped suite by name, or a file by path and SHA-256."""

from __future__ import annotations

import hashlib
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


def retrieval_pairs(scores: pd.DataFrame, suite: str) -> pd.DataFrame:
    """A retrieval run's dense scores as tidy pair results, so the history stores and diffs them like any run.

    Each anchor group gives one ``positive`` row (anchor vs its paraphrase) and
    one row per adversarial variant (anchor vs variant, category = its mode);
    ``win`` and ``margin`` ride along.  Only mitigation ``none`` is kept: the
    cosines are the model's, not a reranker's.

    Args:
        scores: ``RetrievalResult.scores`` (model, mitigation, group_id, mode, anchor,
            paraphrase, variant, cosine_paraphrase, cosine_variant, …).
        suite: the suite's name.

    Raises:
        ValueError: ``scores`` lacks a needed column.
    """
    needed = [constants.COL_MODEL, constants.COL_MITIGATION, constants.COL_GROUP_ID, constants.COL_MODE, constants.COL_ANCHOR,
              constants.COL_PARAPHRASE, "variant", "cosine_paraphrase", "cosine_variant"]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise ValueError(f"the retrieval scores lack columns {missing}")
    dense = scores[scores[constants.COL_MITIGATION] == constants.MITIGATION_NONE]
    extra = [c for c in (constants.COL_DOMAIN, constants.COL_WIN, "margin") if c in dense.columns]
    variants = pd.DataFrame({
        constants.COL_MODEL: dense[constants.COL_MODEL], constants.COL_SUITE: suite, constants.COL_CATEGORY: dense[constants.COL_MODE],
        constants.COL_PAIR_ID: dense[constants.COL_GROUP_ID].astype(str) + "/" + dense[constants.COL_MODE].astype(str),
        constants.COL_TEXT_A: dense[constants.COL_ANCHOR], constants.COL_TEXT_B: dense["variant"], constants.COL_COSINE: dense["cosine_variant"],
        **{c: dense[c] for c in extra},
    })
    groups = dense.drop_duplicates([constants.COL_MODEL, constants.COL_GROUP_ID])
    paraphrases = pd.DataFrame({
        constants.COL_MODEL: groups[constants.COL_MODEL], constants.COL_SUITE: suite, constants.COL_CATEGORY: constants.CAT_POSITIVE,
        constants.COL_PAIR_ID: groups[constants.COL_GROUP_ID].astype(str) + "/paraphrase",
        constants.COL_TEXT_A: groups[constants.COL_ANCHOR], constants.COL_TEXT_B: groups[constants.COL_PARAPHRASE], constants.COL_COSINE: groups["cosine_paraphrase"],
        **({constants.COL_DOMAIN: groups[constants.COL_DOMAIN]} if constants.COL_DOMAIN in groups.columns else {}),
    })
    return pd.concat([paraphrases, variants], ignore_index=True).sort_values([constants.COL_MODEL, constants.COL_PAIR_ID], kind="stable").reset_index(drop=True)
