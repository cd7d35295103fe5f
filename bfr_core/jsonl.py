"""JSON Lines as the workbench writes and reads its own files (the label journal, label and corpus exports).

One home for where a line ends: at "\n" only. JSON allows U+2028, U+2029 and U+0085 raw inside a
string, and ``str.splitlines`` breaks at them, so a line written with them raw is split by such a
reader (an annotator's note pasted from a web page was: its pending label could not be read back).
:func:`dumps_line` keeps text readable (``ensure_ascii=False``) but escapes those three;
:func:`split_lines` reads a file written by any JSON Lines writer, the raw characters included.

Does not cover: benchmark files (``ingest.common.iter_jsonl`` reads them, with its own error reporting,
through :func:`split_lines`), run files (``evaluation.runfiles``).
"""

from __future__ import annotations

import json
from typing import Any

LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}  # line ends only str.splitlines sees


def dumps_line(obj: Any, **kwargs: Any) -> str:
    """``obj`` as one JSON line ending in "\n", text as written except :data:`LINE_BREAKS` escaped
    (``kwargs`` go to ``json.dumps``, e.g. ``default=str``)."""
    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    for raw, escaped in LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text + "\n"


def split_lines(text: str | bytes) -> list:
    """``text`` split where JSON Lines end, at "\n" only (a "\r" before it is JSON whitespace); bytes stay
    bytes (a line that is no UTF-8 can then be kept as it was)."""
    return text.split(b"\n" if isinstance(text, bytes) else "\n")
