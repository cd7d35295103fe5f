"""bench/lib/speaker_labels.py: the labelled copy of a LoCoMo sample."""

from __future__ import annotations

import bench.lib.speaker_labels as B


def test_relabel_replaces_first_names_as_whole_words_and_keeps_ids_and_nicknames():
    sample = {"sample_id": "conv-x",
              "conversation": {"speaker_a": "Jon Smith", "speaker_b": "Gina",
                               "session_1": [{"speaker": "Jon Smith", "dia_id": "D1:1", "text": "Hi Gina! Jonathan says hi."},
                                             {"speaker": "Gina", "dia_id": "D1:2", "text": "Hey Jonny, Jon's here?"}]},
              "qa": [{"question": "What did Gina tell Jon?", "answer": "hi", "evidence": ["D1:2"], "category": 4}]}
    out = B.relabel(sample)
    conv = out["conversation"]
    assert (conv["speaker_a"], conv["speaker_b"]) == B.LABELS
    assert [t["speaker"] for t in conv["session_1"]] == ["Speaker 1", "Speaker 2"]
    assert conv["session_1"][0]["text"] == "Hi Speaker 2! Jonathan says hi."  # "Jonathan" is another word
    assert conv["session_1"][1]["text"] == "Hey Jonny, Speaker 1's here?"
    assert out["qa"][0]["question"] == "What did Speaker 2 tell Speaker 1?"
    assert out["qa"][0]["evidence"] == ["D1:2"] and conv["session_1"][0]["dia_id"] == "D1:1"
    assert sample["conversation"]["speaker_a"] == "Jon Smith"  # the input is not changed


def test_lowercase_questions_changes_only_the_questions():
    sample = {"conversation": {"speaker_a": "Jon"}, "qa": [{"question": "What did Jon buy in May?", "evidence": ["D1:1"]}]}
    out = B.lowercase_questions(sample)
    assert out["qa"] == [{"question": "what did jon buy in may?", "evidence": ["D1:1"]}]
    assert out["conversation"] is sample["conversation"] and sample["qa"][0]["question"] == "What did Jon buy in May?"
