"""Errors a user can act on. The CLI prints them as one line (exit 2); the app shows them in a box.

Anything else escaping is a bug and keeps its traceback. :func:`some` is how every message lists
ids: a few, then how many more (one home, for ingest and for imported runs alike). :func:`printable`
is how a stored or user-given name reaches a terminal: control and format characters (an escape
sequence would recolour, move or clear the terminal) shown as Python escapes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


class BfrError(Exception):
    """Base class: the message alone must say what went wrong and, where possible, what to do."""


class InputError(BfrError):
    """A bad input file or record. The message names the file, the record and the field."""

    def __init__(self, path: str, message: str, *, record: str | None = None, field: str | None = None):
        where = path
        if record is not None:
            where += f", record {record}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.path, self.record, self.field = path, record, field


def printable(text: str) -> str:
    """``text`` with each control, format, separator-other-than-space or unassigned character (Unicode
    categories Cc, Cf, Cs, Co, Cn, Zl, Zp) written as its escape (``\\x1b``, ``\\u202e``), so
    printing it shows what it holds and does nothing to the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c == " " or (unicodedata.category(c)[0] not in "CZ" or unicodedata.category(c) == "Zs")
                   else repr(c)[1:-1] for c in text)


def some(ids: Sequence[str], limit: int = 5) -> str:
    """At most ``limit`` ids for a message, and how many more: an error naming 5,000 scopes was 39 KB."""
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")
