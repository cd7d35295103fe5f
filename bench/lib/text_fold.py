"""What the Unicode fold of ``bfr_core/text.py`` touches in a text: non-ASCII letters, words that fold
to ASCII, and the counts per benchmark.

Does not cover: timing the tokeniser (``bench.quality.bench_text_fold``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bfr_core.text import words

_ASCII = re.compile(r"[a-z0-9]+")


def ascii_words(text: str) -> list[str]:
    """The rule before the fold, as ``text.words`` read it until 2026-12-02 (the reference)."""
    return _ASCII.findall(text.lower().replace("'", "").replace("\u2019", ""))


def has_non_ascii_letter(text: str) -> bool:
    return not text.isascii() and any(not c.isascii() and c.isalpha() for c in text)


def counts(texts: Sequence[str]) -> dict[str, int]:
    """Texts, those with a non-ASCII letter, and those whose words the fold changed."""
    return {"texts": len(texts), "with_non_ascii_letters": sum(map(has_non_ascii_letter, texts)),
            "words_changed": sum(words(t) != ascii_words(t) for t in texts)}
