"""CSV that a spreadsheet opens as data: no cell of text runs as a formula.

Excel, LibreOffice and Google Sheets run a cell that starts with `=`, `+`, `-` or `@` (and,
through some import paths, a tab or carriage return) as a formula: `=HYPERLINK(...)` in a
title becomes a link that leaks or runs. OWASP's rule is to put a `'` in front of such a
cell, which spreadsheets show as text. It is applied to text columns only: the numeric
columns hold numbers this tool formats itself (`-2.8`), and a `'` there would turn a
negative gain into text that no longer sorts or sums.
"""

from __future__ import annotations

# https://owasp.org/www-community/attacks/CSV_Injection
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(text: str) -> str:
    """`text` as a spreadsheet shows it, never runs it: `'` before a formula's first character."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
