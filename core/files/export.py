"""Making tables safe to open in a spreadsheet.

OWASP's CSV-injection rule: a cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return may be run as a formula by Excel, LibreOffice
or Google Sheets.  Such text cells get a leading apostrophe, which the
spreadsheet shows as plain text.  Numbers are left alone, whether they are
numbers (``-0.12``) or text that is exactly a decimal number (a label column
read from a file holds ``"-1"``): a spreadsheet reads ``-1`` as a number and
runs nothing, and ``'-1`` would turn the number into text.
"""

from __future__ import annotations

import re

import pandas as pd

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number: sign, digits, optional fraction and exponent; nothing a formula could hide in.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralize_cell(value: object) -> object:
    """Prefix a formula-looking string with ``'``; return anything else (numbers as text included) as is."""
    if isinstance(value, str) and value.startswith(_TRIGGERS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells cannot run as spreadsheet formulas."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(neutralize_cell)
    return out


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    """UTF-8 CSV of a table, neutralized for spreadsheets."""
    return safe_frame(frame).to_csv(index=False).encode("utf-8")


def to_json_bytes(frame: pd.DataFrame) -> bytes:
    """JSON records of a table (JSON is not run by spreadsheets; kept verbatim)."""
    return frame.to_json(orient="records", force_ascii=False, indent=1).encode("utf-8")
