"""CSV writers that neutralise formula injection, for every CSV the platform writes.

As OWASP recommends, a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage
return gets a leading `'`, so a spreadsheet shows it as text instead of evaluating it
(`=HYPERLINK(...)`, `=cmd|' /C calc'!A0`). Numbers stay numbers: a cell that is a plain
number ("-0.25") cannot be a formula and is written unchanged.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(TRIGGERS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


class _Writer:
    def __init__(self, out: Any, **kwargs: Any) -> None:
        self._writer = csv.writer(out, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: Any, **kwargs: Any) -> _Writer:
    """csv.writer with every cell neutralised."""
    return _Writer(out, **kwargs)


class DictWriter(csv.DictWriter):
    """csv.DictWriter with every cell (and the header) neutralised."""

    def writeheader(self) -> Any:
        return self.writer.writerow([cell(f) for f in self.fieldnames])

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({k: cell(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for row in rowdicts:
            self.writerow(row)
