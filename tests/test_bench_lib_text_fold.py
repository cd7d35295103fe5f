"""bench/lib/text_fold.py: what it counts as touched by the fold."""

from __future__ import annotations

import bench.lib.text_fold as B


def test_the_old_rule_is_the_ascii_one_and_counts_tell_letters_from_other_symbols():
    assert B.ascii_words("Zürich isn’t far") == ["z", "rich", "isnt", "far"]
    assert B.has_non_ascii_letter("Zoë") and not B.has_non_ascii_letter("x² — 😀") and not B.has_non_ascii_letter("ok")
    # "x²" has no non-ASCII letter, but its words change ("x" -> "x2"); plain ASCII changes nothing
    assert B.counts(["Zoë", "x²", "plain text"]) == {"texts": 3, "with_non_ascii_letters": 1, "words_changed": 2}
