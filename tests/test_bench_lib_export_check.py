"""bench/lib/export_check.py: its integrity counts and its outside system, on a hand-made store."""

from __future__ import annotations

import json

from test_ingest_longmemeval import _data, _write

import bench.lib.export_check as B
from bfr_core.ingest import ingest
from bfr_core.ingest.corpus import blind_id, corpus_lines
from bfr_core.store import Store


def test_integrity_counts_nothing_on_a_true_export_and_a_mismatch_on_a_tampered_one(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    ingest(store, "longmemeval", _write(tmp_path, _data()), name="lme", embed=False)
    full = [json.loads(x) for x in corpus_lines(store, "lme")]
    blind = [json.loads(x) for x in corpus_lines(store, "lme", blind=True)]
    got = B.integrity(store, "lme", full, blind)
    assert got["scopes"] == 2 and got["questions"] == 2
    assert all(v == 0 for k, v in got.items() if k not in ("scopes", "questions", "turns"))
    full[0]["sessions"].reverse()
    full[1]["questions"][0]["gold"] = ["nowhere"]
    bad = B.integrity(store, "lme", full, full)
    assert bad["scopes_whose_turns_differ_from_the_store"] == 1 and bad["questions_with_gold_outside_their_line"] == 1
    assert bad["blind_questions_with_a_label"] == 2 and bad["blind_scopes_whose_turns_differ"] == 2
    assert bad["store_ids_in_the_blind_file"] > 0
    # the outside system reads the blind file only: word overlap, ties by file order
    q1 = blind_id("lme", "question", "q1")
    order = [blind_id("lme", "turn", t) for t in ("sharegpt_x_0_1", "sharegpt_x_0_2", "answer_a_1_1", "answer_a_1_2")]
    assert dict(B.outside_run(blind))[q1] == order
    blind[0]["questions"][0]["question"] = "Where is the kite?"  # no word shared above: file order; now one is
    assert dict(B.outside_run(blind))[q1][0] == order[2]
