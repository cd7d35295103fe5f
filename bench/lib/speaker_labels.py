"""A LoCoMo copy with its speakers labelled "Speaker 1" / "Speaker 2" (:func:`relabel`) and its
questions lowercased where they name a speaker.

Does not cover: running the arms on it (``bench.quality.bench_speaker_labels``).
"""

from __future__ import annotations

import json
import re

LABELS = ("Speaker 1", "Speaker 2")


def relabel(sample: dict) -> dict:
    """One LoCoMo sample with its two speakers labelled (see the module docstring)."""
    conv = sample["conversation"]
    names = (conv["speaker_a"], conv["speaker_b"])
    text = json.dumps(sample, ensure_ascii=False)
    for name, label in zip(names, LABELS, strict=True):  # the whole name first, then the first name alone
        for word in dict.fromkeys((name, name.split()[0])):
            text = re.sub(rf"\b{re.escape(word)}\b", label, text)
    out = json.loads(text)
    out["conversation"]["speaker_a"], out["conversation"]["speaker_b"] = LABELS
    return out


def lowercase_questions(sample: dict) -> dict:
    """One LoCoMo sample with its questions typed in lower case (names included: "what did caroline ...")."""
    return {**sample, "qa": [{**q, "question": q["question"].lower()} for q in sample["qa"]]}
