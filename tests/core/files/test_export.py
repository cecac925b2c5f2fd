"""Spreadsheet-safe exports (OWASP CSV injection)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from core.files.export import neutralize_cell, safe_frame, to_csv_bytes, to_json_bytes


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_formula_prefixes_are_neutralized(prefix):
    value = f"{prefix}SUM(A1:A9)"
    assert neutralize_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["plain text", "", " =not at start", "'already quoted", "1+1"])
def test_ordinary_text_is_untouched(value):
    assert neutralize_cell(value) == value


@pytest.mark.parametrize("value", [-0.12, 3, 0.0, -5, np.float64(-0.5), np.int64(-3), None, True])
def test_non_strings_are_untouched(value):
    assert neutralize_cell(value) is value


def test_safe_frame_keeps_numbers_and_does_not_mutate():
    frame = pd.DataFrame(
        {
            "text": ["=cmd|' /C calc'!A0", "fine", "-2 apples", "@SUM(1)"],
            "cosine": [-0.12, 0.5, 0.9, -1.0],
            "n": [1, -2, 3, 4],
            "flag": [True, False, True, False],
        }
    )
    original = frame.copy()
    safe = safe_frame(frame)
    pd.testing.assert_frame_equal(frame, original)
    assert safe["text"].tolist() == ["'=cmd|' /C calc'!A0", "fine", "'-2 apples", "'@SUM(1)"]
    pd.testing.assert_series_equal(safe["cosine"], frame["cosine"])
    pd.testing.assert_series_equal(safe["n"], frame["n"])
    pd.testing.assert_series_equal(safe["flag"], frame["flag"])


def test_string_dtype_columns_are_neutralized():
    frame = pd.DataFrame({"text": pd.array(["=1+1", "ok"], dtype="string")})
    assert safe_frame(frame)["text"].tolist() == ["'=1+1", "ok"]


def test_csv_bytes_round_trip():
    frame = pd.DataFrame(
        {
            "model": ["m", "m"],
            "text_a": ['=HYPERLINK("http://evil")', 'Café, "quoted"\nnew line'],
            "cosine": [-0.25, 0.75],
        }
    )
    data = to_csv_bytes(frame)
    assert isinstance(data, bytes)
    back = pd.read_csv(io.BytesIO(data), encoding="utf-8")
    assert back["text_a"].tolist() == ['\'=HYPERLINK("http://evil")', 'Café, "quoted"\nnew line']
    assert back["cosine"].tolist() == [-0.25, 0.75]
    assert list(back.columns) == ["model", "text_a", "cosine"]


def test_json_bytes_are_verbatim():
    frame = pd.DataFrame({"text": ["=1+1", "Café"], "cosine": [-0.5, 1.0]})
    rows = json.loads(to_json_bytes(frame).decode("utf-8"))
    assert rows == [{"text": "=1+1", "cosine": -0.5}, {"text": "Café", "cosine": 1.0}]


@pytest.mark.parametrize("value", ["-1", "-0.25", "+3", "-1e5", "-.5", "+0.75E-3"])
def test_numbers_held_as_text_stay_numbers(value):
    # A label column read from a file holds "-1"; "'-1" would turn it into text.
    assert neutralize_cell(value) == value
    exported = pd.read_csv(io.BytesIO(to_csv_bytes(pd.DataFrame({"label": [value], "text_a": ["-x"]}))), dtype=str)
    assert exported["label"].tolist() == [value] and float(exported["label"][0]) == float(value)
    assert exported["text_a"].tolist() == ["'-x"]


@pytest.mark.parametrize("value", ["-1+1", "-1)", "- 1", "-1\n", "-inf", "-0x10", "+1;=cmd"])
def test_formulas_that_start_like_numbers_are_still_neutralized(value):
    assert neutralize_cell(value) == "'" + value
