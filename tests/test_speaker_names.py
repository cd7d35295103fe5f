"""speaker_names: which scope speaker a question names, one rule for the prior, FirstPerson(q) and the cover."""

from __future__ import annotations

from bfr_core.method import requirements as R
from bfr_core.method import turn_scores
from bfr_core.method.speaker_names import key_position, name_keys, question_words, same_person
from bfr_core.records import Turn


def test_a_first_name_is_the_key_when_it_tells_the_speakers_apart():
    assert name_keys(["Caroline", "Melanie Smith"]) == [("caroline",), ("melanie",)]
    assert name_keys(["José", "Zoë"]) == [("jose",), ("zoe",)]


def test_a_shared_first_word_makes_the_whole_label_the_key():
    assert name_keys(["Speaker 1", "Speaker 2"]) == [("speaker", "1"), ("speaker", "2")]
    assert name_keys(["John Smith", "John Doe", "Ann"]) == [("john", "smith"), ("john", "doe"), ("ann",)]
    assert name_keys(["User A", "User B"]) == [("user", "a"), ("user", "b")]


def test_roles_and_empty_labels_are_never_names():
    assert name_keys(["user", "assistant"]) == [(), ()]
    assert name_keys(["System", "", "  "]) == [(), (), ()]
    assert name_keys(["assistant", "Assistant"]) == [(), ()]  # one role word, even when two labels share it


def test_a_key_is_found_where_its_words_occur_in_a_row():
    ws = question_words("What did Speaker 1's sister tell speaker 2?")
    assert ws[2:5] == ["speaker", "1", "sister"]  # the possessive is dropped, the digit kept
    assert key_position(ws, ("speaker", "1")) == 2
    assert key_position(ws, ("speaker", "2")) == 6
    assert key_position(ws, ("speaker", "3")) is None
    assert key_position(ws, ()) is None
    assert question_words("Caroline\u2019s dog") == ["caroline", "dog"]


def test_the_prior_names_one_labelled_speaker_where_the_first_word_named_both():
    labels = ["Speaker 1", "Speaker 2"]
    assert turn_scores.named_speakers("What job does Speaker 2 have?", labels) == ["Speaker 2"]
    assert turn_scores.named_speakers("What did Speaker 1's dog eat?", labels) == ["Speaker 1"]
    assert turn_scores.named_speakers("What does the speaker like?", labels) == []
    # first names keep their old behaviour, nicknames included
    assert turn_scores.named_speakers("What did Mel and her kids paint?", ["Caroline", "Melanie"]) == ["Melanie"]
    assert turn_scores.named_speakers("What did caroline's mum say?", ["Caroline", "Melanie"]) == ["Caroline"]
    assert turn_scores.named_speakers("What did I tell the assistant?", ["user", "assistant"]) == []


def test_first_person_returns_the_label_a_whole_label_key_matched():
    assert R.first_person("Where did Speaker 2 travel after Speaker 1 moved?", ["Speaker 1", "Speaker 2"]) == "Speaker 2"
    assert R.first_person("Where did John Doe go?", ["John Smith", "John Doe"]) == "John Doe"
    assert R.first_person("What did John say?", ["John Smith", "John Doe"]) == "John"  # a name span: neither speaker
    # at one position the longer key wins: "John" alone and "John Smith" are both speakers
    assert R.first_person("Where did John Smith go?", ["John", "John Smith"]) == "John Smith"
    assert R.first_person("Where did John go?", ["John", "John Smith"]) == "John"


def test_a_speaker_covers_an_entity_when_one_name_begins_the_other():
    assert same_person("Caroline", ("carolin",))  # stems: "caroline" -> "carolin"
    assert same_person("Caroline", ("carolin", "smith"))
    assert same_person("José", ("jose",))  # folded like the entity's own words
    assert not same_person("Speaker 2", ("speaker", "1"))
    assert same_person("Speaker 1", ("speaker", "1"))
    assert not same_person("", ("speaker",))

    req = R.Requirement("r1", "Speaker 1", "entity", ("speaker", "1"))
    assert not R.covers_lexically(req, Turn("t1", "s1", 0, "Speaker 2", "I love hiking."), frozenset({"love", "hike"}))
    assert R.covers_lexically(req, Turn("t2", "s1", 1, "Speaker 1", "Me too."), frozenset())


def test_chinese_speakers_are_named_through_their_character_bigrams():
    assert name_keys(["王小明", "李华"]) == [("王小",), ("李华",)]
    assert turn_scores.named_speakers("王小明上周去了哪里？", ["王小明", "李华"]) == ["王小明"]
    assert name_keys(["王小明", "王小红"]) == [("王小", "小明"), ("王小", "小红")]  # a shared first bigram: whole labels
    assert turn_scores.named_speakers("王小红喜欢什么？", ["王小明", "王小红"]) == ["王小红"]
