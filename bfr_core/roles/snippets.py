"""The evidence snippet format: "(date) speaker: text", written once and read back here.

Covers: :func:`render` (turns -> snippets, in the set's order, without ids), :data:`HEADER` (the
"(date) speaker: " prefix, kept whole when a snippet is shortened) and :data:`DATED` (the date in it,
which the numbered prompt lists once per change of date). Every role that reads snippets and the
evaluation that writes them use these, so the format lives in one place.
Does not cover: fitting snippets to a context (``roles.fit``), anonymising ids (``roles.sufficiency``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bfr_core.dates import UNDATED
from bfr_core.records import Turn

DATE_FORMAT = "%d %B %Y"
HEADER = re.compile(r"^\([^()\n]{1,40}\) [^:\n]{1,40}: ")
DATED = re.compile(rf"^\((\d{{1,2}} [A-Z][a-z]+ \d{{4}}|{UNDATED})\) ")


def render(turns: Sequence[Turn]) -> list[str]:
    """Evidence snippets as the answerer and judges read them, in the set's order, without ids."""
    out = []
    for t in turns:
        when = t.date.strftime(DATE_FORMAT) if t.date else UNDATED
        out.append(f"({when}) {t.speaker}: {t.text}")
    return out
