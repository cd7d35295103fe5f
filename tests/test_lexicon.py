"""bfr_core.lexicon: the word tables' own shape (their use is tested where they are used).

Fixtures are written here, never taken from a benchmark's questions.
"""

from bfr_core.lexicon import CANONICAL_STEM, RELATED_GROUPS, RELATED_STEMS, question_noise
from bfr_core.text import stem


def test_related_stems_are_the_symmetric_closure_of_the_groups():
    for group in RELATED_GROUPS:
        for a in group:
            assert set(group) <= RELATED_STEMS[a]
    for a, rel in RELATED_STEMS.items():
        assert all(a in RELATED_STEMS[b] for b in rel)
    assert "bought" in RELATED_STEMS["purchas"] and "sell" not in RELATED_STEMS["buy"]


def test_canonical_stems_fold_onto_stems_that_are_not_folded_again():
    assert CANONICAL_STEM["arriv"] == "receiv"
    assert not set(CANONICAL_STEM.values()) & set(CANONICAL_STEM)


def test_question_noise_is_stemmed_scaffolding_without_content_words():
    noise = question_noise()
    assert {stem("remember"), stem("mentioned"), stem("what")} <= noise
    assert not {stem("guitar"), stem("birthday"), stem("restaurant")} & noise
