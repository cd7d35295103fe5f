"""bfr_core.arm_names: our arm is registered as ``conv-fusion``; ``bfr`` is accepted as its alias on the
command line and when reading a run stored under that name (report, export, trace), which is never rewritten."""

from __future__ import annotations

import json

import pytest

from bfr_core import arm_names as N
from bfr_core import pipeline
from bfr_core.cli import main
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.runs import list_runs
from bfr_core.store import Store


def test_canonical_names_and_aliases():
    assert N.canonical_arm("bfr") == N.CONV_FUSION == "conv-fusion"
    assert N.canonical_arm("bfr-mv") == "bfr-mv" and N.canonical_arm("mem0") == "mem0"
    assert N.same_arm("bfr", "conv-fusion") and not N.same_arm("bfr", "bfr-mv")
    assert N.stored_names("bfr") == N.stored_names("conv-fusion") == ("conv-fusion", "bfr")
    assert N.stored_names("mem0") == ("mem0",)
    assert N.stored_name("conv-fusion", ["mem0", "bfr"]) == "bfr"
    assert N.stored_name("conv-fusion", ["mem0", "conv-fusion"]) == "conv-fusion"
    assert N.stored_name("amem", ["mem0"]) == "amem"


def test_the_registry_names_conv_fusion_and_resolves_the_alias():
    assert "conv-fusion" in pipeline.arm_names() and "bfr" not in pipeline.arm_names()
    assert pipeline.resolve("bfr") is pipeline.resolve("conv-fusion")
    assert pipeline.resolve_budget("bfr", None) == pipeline.resolve_budget("conv-fusion", None)
    with pytest.raises(Exception, match="unknown arm 'bfrx'"):
        pipeline.resolve("bfrx")


def test_sql_form_maps_the_alias(tmp_path):
    import duckdb

    con = duckdb.connect()
    rows = con.execute(f"SELECT {N.canonical_arm_sql('a')} FROM (VALUES ('bfr'), ('bfr-mv'), ('mem0')) t(a)").fetchall()
    assert [r[0] for r in rows] == ["conv-fusion", "bfr-mv", "mem0"]


def _as_stored_under_alias(db, run_id: str) -> None:
    """Rewrite a run's ``conv-fusion`` rows, traces and arms list to ``bfr``, as a store written before
    the arm had its registered name holds them."""
    s = Store(db)
    cur = s.cursor()
    cur.execute("UPDATE runs SET arms = list_transform(arms, lambda a: CASE a WHEN 'conv-fusion' THEN 'bfr' ELSE a END) "
                "WHERE run_id = ?", [run_id])
    cur.execute("UPDATE results SET arm = 'bfr' WHERE run_id = ? AND arm = 'conv-fusion'", [run_id])
    for qid, trace in cur.execute("SELECT question_id, trace FROM traces WHERE run_id = ? AND arm = 'conv-fusion'",
                                  [run_id]).fetchall():
        t = json.loads(trace)
        t["arm"] = "bfr"
        cur.execute("UPDATE traces SET arm = 'bfr', trace = ? WHERE run_id = ? AND question_id = ? AND arm = 'conv-fusion'",
                    [json.dumps(t), run_id, qid])
    s.close()


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """The demo store with a finished offline run of mem0 and ``--arms bfr`` (stored as conv-fusion), then
    rewritten to the alias as an earlier store holds it."""
    tmp = tmp_path_factory.mktemp("alias")
    db = tmp / "demo.duckdb"
    ensure_demo_store(db).close()
    assert main(["eval", "--db", str(db), "--dataset", "demo", "--arms", "mem0,bfr", "--quiet",
                 "--json", str(tmp / "o.json")]) == 0
    summary = json.loads((tmp / "o.json").read_text())
    assert set(summary["arms"]) == {"mem0", "conv-fusion"}  # the alias ran, under the registered name
    s = Store(db)
    (run,) = list_runs(s)
    assert run["arms"] == ["mem0", "conv-fusion"]
    s.close()
    _as_stored_under_alias(db, run["run_id"])
    return db, run["run_id"]


def test_eval_help_names_conv_fusion_and_the_alias(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = capsys.readouterr().out
    assert "conv-fusion" in out and "bfr = conv-fusion" in out


def test_a_run_stored_under_the_alias_reports_as_conv_fusion(old_run, capsys):
    db, run_id = old_run
    s = Store(db, read_only=True)
    assert s.cursor().execute("SELECT DISTINCT arm FROM results WHERE run_id = ? ORDER BY arm",
                              [run_id]).fetchall() == [("bfr",), ("mem0",)]  # stored as it was, not rewritten
    assert list_runs(s)[0]["arms"] == ["mem0", "conv-fusion"]
    s.close()
    capsys.readouterr()
    assert main(["report", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "| conv-fusion − mem0 |" in out and "| conv-fusion |" in out
    assert "| bfr " not in out and "bfr −" not in out
    assert main(["report", run_id, "--db", str(db), "--ref", "bfr"]) == 0  # the alias names the reference too
    assert "| mem0 − conv-fusion |" in capsys.readouterr().out


def test_a_run_stored_under_the_alias_exports_and_traces_as_conv_fusion(old_run, tmp_path, capsys):
    db, run_id = old_run
    out = tmp_path / "run.trec"
    assert main(["export-run", run_id, "--db", str(db), "--arm", "conv-fusion", "--out", str(out)]) == 0
    tags = {line.split()[-1] for line in out.read_text().splitlines()}
    assert tags == {"conv-fusion"}
    assert main(["export-run", run_id, "--db", str(db), "--arm", "bfr", "--out", str(out), "--force"]) == 0
    assert {line.split()[-1] for line in out.read_text().splitlines()} == {"conv-fusion"}
    s = Store(db, read_only=True)
    qid = s.cursor().execute("SELECT question_id FROM results WHERE run_id = ? AND arm = 'bfr' LIMIT 1",
                             [run_id]).fetchone()[0]
    s.close()
    capsys.readouterr()
    for name in ("conv-fusion", "bfr"):
        assert main(["trace", qid, "--db", str(db), "--run", run_id, "--arm", name, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["arm"] == "conv-fusion"


def test_an_imported_system_may_not_take_the_alias(tmp_path):
    from bfr_core.evaluation.imported import check_name

    with pytest.raises(Exception, match="an arm of this workbench"):
        check_name("bfr")
