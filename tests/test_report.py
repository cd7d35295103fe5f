"""bfr report: paper-style tables and paired tests for a finished run on the demo dataset."""

from bfr_core.cli import main
from bfr_core.ingest.demo import ensure_demo_store


def test_report_after_eval_with_answers(tmp_path, capsys):
    db = tmp_path / "demo.duckdb"
    ensure_demo_store(db).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr-mv", "--judge",
                 "--json", str(tmp_path / "o.json"), "--quiet"]) == 0
    from bfr_core.runs import list_runs
    from bfr_core.store import Store

    s = Store(db)
    run_id = list_runs(s)[0]["run_id"]
    s.close()
    capsys.readouterr()
    assert main(["report", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"# Run {run_id}" in out and "offline rules" in out
    assert "| bfr-mv − mem0 |" in out and "p (Holm)" in out
    row = next(line for line in out.splitlines() if line.startswith("| mem0 |"))
    assert row.count("|") > 10  # per-type columns, not a single overall value
    assert main(["report", run_id, "--db", str(db), "--ref", "bfr"]) == 2  # not an arm of this run
    err = capsys.readouterr().err
    assert "--ref 'bfr'" in err and "has no such arm (its arms: mem0, bfr-mv)" in err


def test_report_unknown_run_is_a_clear_error(tmp_path, capsys):
    db = tmp_path / "demo.duckdb"
    ensure_demo_store(db).close()
    assert main(["report", "nope", "--db", str(db)]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def _two_sizes(tmp_path):
    """A demo store with a finished offline run of mem0 (10 turns) and bfr-mv (40)."""
    db = tmp_path / "demo.duckdb"
    ensure_demo_store(db, embed=False).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr-mv", "--quiet"]) == 0
    from bfr_core.runs import list_runs
    from bfr_core.store import Store

    s = Store(db)
    run_id = list_runs(s)[0]["run_id"]
    s.close()
    return db, run_id


def test_report_compares_at_a_common_set_size_unless_told_not_to(tmp_path, capsys):
    import pytest

    from bfr_core.errors import BfrError
    from bfr_core.evaluation import report as REP
    from bfr_core.evaluation.summary import run_rows, set_sizes
    from bfr_core.store import Store

    db, run_id = _two_sizes(tmp_path)
    s = Store(db, read_only=True)
    rows = run_rows(s, run_id)
    sizes = set_sizes(rows)
    assert sizes["mem0"] < sizes["bfr-mv"]
    with pytest.raises(BfrError, match="arms of different set sizes"):  # no paired test across sizes
        REP.paired_table(rows, ["mem0", "bfr-mv"], "mem0")
    s.close()
    capsys.readouterr()
    assert main(["report", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"every set cut to its first {sizes['mem0']} ids, the smallest arm's largest set" in out
    budgets = out.split("## Budgets")[1].split("##")[0]
    assert f"| bfr-mv | {float(sizes['mem0'])} |" in budgets  # bfr-mv's sets cut to mem0's size
    assert "Wilson 95% interval" in out and "(n=" in out and "†" in out  # demo types hold 1-2 questions
    assert main(["report", run_id, "--db", str(db), "--own-budgets"]) == 0
    out = capsys.readouterr().out
    assert "NOT AT EQUAL BUDGET" in out and f"bfr-mv {sizes['bfr-mv']}" in out
    assert main(["report", run_id, "--db", str(db), "--k", "5", "--own-budgets"]) == 2
    assert "exclude each other" in capsys.readouterr().err
