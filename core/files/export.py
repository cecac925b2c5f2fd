"""Making tables safe to open in a spreadsheet.

OWASP's CSV-injection rule: a cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return may be run as a formula by Excel, LibreOffice
or Google Sheets.  Such text cells get a leading apostrophe, which the
spreadsheet shows as plain text.  Numbers are left alone: ``-0.12`` stays a
number.
"""

from __future__ import annotations

import pandas as pd

_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralize_cell(value: object) -> object:
    """Prefix a formula-looking string with ``'``; return anything else as is."""
    if isinstance(value, str) and value.startswith(_TRIGGERS):
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
