"""bfr report: paper-style tables and paired tests for a finished run on the demo dataset."""

from bfr_core.cli import main
from bfr_core.ingest.demo import ensure_demo_store


def test_report_after_eval_with_answers(tmp_path, capsys):
    db = tmp_path / "demo.duckdb"
    ensure_demo_store(db).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr-mv", "--judge",
                 "--json", str(tmp_path / "o.json"), "--quiet"]) == 0
    from bfr_core.evaluation.evaluate import list_runs
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
