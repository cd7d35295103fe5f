"""bench/lib/byo_readme.py: which run each row of the BEAM / LoCoMo-Plus tables comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bench.lib.byo_readme as B


def _fig(hit: float) -> dict:
    return {k: {"overall": {"n": 2, "turn_hit": hit, "recall_all": hit / 2, "mean_set_size": float(k)}}
            for k in ("10", "40")}


def _write(out: Path, name: str, setting: dict | None, systems: dict) -> None:
    data = {"systems": systems, "conversations": 1, "conversations_done": 1, "chunks": []}
    if setting is not None:
        data["bfr_setting"] = setting
    (out / name).write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(("all_arms_setting", "earlier_row"), [({"w": 1}, True), ({"w": 2}, False), (None, True)])
def test_bfr_and_references_come_from_the_rerun_and_an_earlier_bfr_only_when_it_differs(
        tmp_path, monkeypatch, all_arms_setting, earlier_row):
    monkeypatch.setattr(B, "OUT", tmp_path)
    _write(tmp_path, "beam_1m.json", all_arms_setting,
           {"mem0": _fig(10), "bfr": _fig(20), "ref:bm25": _fig(30), "ref:dense": _fig(40)})
    _write(tmp_path, "beam_1m_bfr.json", {"w": 2}, {"bfr": _fig(50), "ref:bm25": _fig(31), "ref:dense": _fig(41)})
    _, systems, about = B.source("1M")
    assert systems["conv-fusion"]["10"]["overall"]["turn_hit"] == 50  # the JSON's alias bfr, under its name
    assert "bfr" not in systems
    assert systems["ref:bm25"]["10"]["overall"]["turn_hit"] == 31  # beside our arm, by the same code
    assert systems["mem0"]["10"]["overall"]["turn_hit"] == 10  # the paper's arms stay the all-arm run's
    assert ("conv-fusion (earlier setting)" in systems) is earlier_row
    assert "`conv-fusion` and the reference rankings: `beam_1m_bfr.json`" in about
