"""What ``bfr export-data`` wrote, checked against the store it came from (integrity counts), and an
outside system's run over the export, to import back.

Does not cover: timing the export (``bench.checks.bench_export_data``).
"""

from __future__ import annotations

import re
from typing import Any

from bfr_core.ingest.corpus import LABELS, blind_id
from bfr_core.store import Store

K = 10


_WORD = re.compile(r"[a-z0-9]+")


def _turn_ids(rec: dict) -> list[str]:
    """A corpus line's turn ids, in order."""
    return [t["turn_id"] for s in rec["sessions"] for t in s["turns"]]


def _every_id(rec: dict) -> set[str]:
    """Every id a corpus line names: its scope, questions, sessions and turns."""
    return {rec["scope_id"], *(q["question_id"] for q in rec["questions"]),
            *(s["session_id"] for s in rec["sessions"]), *_turn_ids(rec)}


def integrity(store: Store, dataset_id: str, full: list[dict], blind: list[dict]) -> dict[str, Any]:
    """What the files say against what the store holds (counts of mismatches; all 0 is a pass)."""
    stored = {f["scope_id"]: [t.turn_id for t in store.scope_turns(dataset_id, f["scope_id"])] for f in full}
    bad_turns = sum(_turn_ids(r) != stored[r["scope_id"]] for r in full)
    qids = [q["question_id"] for r in full for q in r["questions"]]
    stray_gold = sum(not set(q["gold"]) <= set(_turn_ids(r)) for r in full for q in r["questions"])
    labels = sum(bool(set(q) & set(LABELS)) for r in blind for q in r["questions"])
    local = sum("local_id" in t for r in blind for s in r["sessions"] for t in s["turns"])
    blind_turns = sum(_turn_ids(r) != [blind_id(dataset_id, "turn", t) for t in stored[f["scope_id"]]]
                      for r, f in zip(blind, full, strict=True))
    raw = set().union(*map(_every_id, full))
    seen = set().union(*map(_every_id, blind))
    return {"scopes": len(full), "questions": len(qids), "turns": sum(len(_turn_ids(r)) for r in full),
            "scopes_whose_turns_differ_from_the_store": bad_turns,
            "questions_missing_or_repeated": len(store.questions(dataset_id)) - len(set(qids)) + len(qids) - len(set(qids)),
            "questions_with_gold_outside_their_line": stray_gold, "blind_questions_with_a_label": labels,
            "blind_turns_with_a_source_id": local, "blind_scopes_whose_turns_differ": blind_turns,
            "store_ids_in_the_blind_file": len(raw & seen)}


def outside_run(blind: list[dict]) -> list[tuple[str, list[str]]]:
    """An outside system over the blind file alone: word overlap with the question, ties by file order."""
    out = []
    for r in blind:
        turns = [t for s in r["sessions"] for t in s["turns"]]
        words = [set(_WORD.findall(t["text"].lower())) for t in turns]
        for q in r["questions"]:
            qw = set(_WORD.findall(q["question"].lower()))
            order = sorted(range(len(turns)), key=lambda i: (-len(qw & words[i]), i))[:K]
            out.append((q["question_id"], [turns[i]["turn_id"] for i in order]))
    return out
