"""The budget grid C0..C9 and budget_for; realized cost against Table 16 on an unbounded fake."""

from __future__ import annotations

import pytest
from fakes_views import big_rows, make_views

from bfr_core.config import Budget, Config
from bfr_core.errors import BfrError
from bfr_core.method import budgets
from bfr_core.method.stage2 import MV, TEXT, complete
from bfr_core.pipeline import ArmContext, resolve_budget
from bfr_core.records import Query

BIG = make_views(big_rows())


def test_grid_shape_and_main_points():
    for grid in budgets.GRID.values():
        assert list(grid) == [f"C{i}" for i in range(10)]
        assert grid["C0"] == Budget(0, 0, 0, 0)
        assert all(grid[f"C{i}"].calls == i for i in range(10))
    assert budgets.budget_for("bfr-text", "C3") == Budget(rounds=3, calls=3, new=30, keep=8)
    assert budgets.budget_for("bfr-mv", "C6") == Budget(rounds=3, calls=6, new=30, keep=20)  # B_mid
    assert budgets.budget_for("bfr-mv", "c9").new == 50
    assert budgets.budget_for("fca-ms", "C0") == Budget(0, 0, 0, 0)
    assert budgets.budget_for("mem0", "C6") == budgets.budget_for("bfr-mv", "C6")  # mixed-arm --budget
    with pytest.raises(BfrError):
        budgets.budget_for("bfr-mv", "C10")


def test_pipeline_defaults():
    assert resolve_budget("bfr-text", None) == ("C3", budgets.budget_for("bfr-text", "C3"))
    assert resolve_budget("bfr-mv", None) == ("C6", budgets.budget_for("bfr-mv", "C6"))
    assert resolve_budget("fca-ms", None)[0] == "C0"


@pytest.mark.parametrize("arm,schedule", [("bfr-text", TEXT), ("bfr-mv", MV)])
def test_realized_cost_within_10pct_of_table16(arm, schedule):
    """With E0 = 10 and views that never run dry, every reported point lands within 10% of Table 16
    (calls and size); the two operating points Text C3 and MV C6 are the brief's hard targets."""
    e0 = [t.turn_id for t in BIG.turns[:10]]
    q = Query("q", "s", "What did Caroline say about the camera and the tripod?")
    for name, paper in budgets.PAPER_TABLE16[arm].items():
        if paper is None:
            continue
        b = budgets.budget_for(arm, name)
        steps = complete(ArmContext(BIG, Config(), b, name, None, 10), q, e0, schedule)
        calls = steps[-1].calls if steps else 0
        size = len(steps[-1].evidence) if steps else len(e0)
        assert abs(calls - paper[0]) <= 0.1 * max(paper[0], 1), (arm, name, calls, paper)
        assert abs(size - paper[1]) <= 0.1 * paper[1], (arm, name, size, paper)


def test_sweep_and_trace_commands_on_the_demo(tmp_path, capsys):
    """End to end on the project's demo data: `bfr sweep` writes the frontier, `bfr trace` prints."""

    from bfr_core.cli import main
    from bfr_core.ingest.demo import demo_file

    demo = demo_file()
    db = tmp_path / "demo.duckdb"
    assert main(["ingest", "jsonl", str(demo), "--db", str(db), "--name", "demo", "--quiet"]) == 0
    out = tmp_path / "sweep"
    assert main(["sweep", "--db", str(db), "--dataset", "demo", "--budgets", "C0,C3,C6", "--out", str(out),
                 "--quiet", "--no-png"]) == 0
    import json

    result = json.loads((out / "frontier.json").read_text())
    assert {(p["arm"], p["budget"]) for p in result["points"]} == {
        (a, b) for a in ("bfr-text", "bfr-mv") for b in ("C0", "C3", "C6")}
    assert (out / "frontier.html").exists()
    c0 = [p for p in result["points"] if p["budget"] == "C0"]
    assert all(p["calls"] == 0 for p in c0)
    from bfr_core.store import Store

    qid = Store(db, read_only=True).questions("demo")[0].question_id
    capsys.readouterr()
    assert main(["trace", qid, "--db", str(db), "--arm", "bfr-mv", "--budget", "C3"]) == 0
    text = capsys.readouterr().out
    for needle in ("Pool:", "requirement(s)", "Formal context", "Lattice:", "Selected", "E0:", "Round 1", "Final set"):
        assert needle in text
