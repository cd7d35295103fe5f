"""An arm from another package (a plug-in) is checked where it returns (``method.arms.checked_steps``,
called by ``pipeline.run_query``): an output that breaks the arm contract fails that (question, arm)
row with the reason and keeps every other row; the run finishes. Origins are marked in the report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reliability_stats import record

from bfr_core import pipeline
from bfr_core.cli import main
from bfr_core.evaluation.evaluate import RunSpec, evaluate
from bfr_core.ingest.demo import ensure_demo_store
from bfr_core.method.arms import ArmOutputError, checked_steps
from bfr_core.records import Step
from bfr_core.runs import load_results
from bfr_core.store import Store

STATS: dict[str, int] = {}


@pytest.fixture(scope="module", autouse=True)
def _stats():
    """Counts for bench/checks/bench_reliability.py (``BFR_RELIABILITY_STATS`` names the JSON file)."""
    yield
    record("plugins", STATS)


def _arm(evidence_of):
    def arm(ctx, query):  # noqa: ANN001, ANN202 - the arm contract
        return [Step("topk", "plug-in", evidence_of(ctx), 1, {})]
    return arm


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("plug") / "demo.duckdb"
    ensure_demo_store(db, embed=False).close()
    other = db.parent / "other.jsonl"  # a second dataset: its turns are another scope's ids
    other.write_text(json.dumps({"type": "session", "session_id": "elsewhere", "date": "2024-03-01T10:00", "turns": [
        {"speaker": "user", "text": "I bought a tripod."}]}) + "\n" + json.dumps(
        {"type": "question", "question_id": "q1", "question": "What did I buy?", "answer": "a tripod",
         "gold": ["elsewhere_1"], "date": "2024-03-02"}) + "\n", encoding="utf-8")
    assert main(["ingest", "jsonl", str(other), "--db", str(db), "--name", "other", "--no-embed", "--quiet"]) == 0
    return db


def test_bad_plugin_output_fails_its_rows_with_a_reason_and_keeps_the_others(demo, tmp_path, monkeypatch) -> None:
    store = Store(demo)
    elsewhere = store.scope_turns("other", store.scopes("other")[0].scope_id)[0].turn_id

    bad = {
        "p-int-ids": (_arm(lambda ctx: (5, 6)), "is a int (5), not a turn id"),
        "p-other-scope": (_arm(lambda ctx: (elsewhere,)), "names no turn of the question's scope"),
        "p-missing": (_arm(lambda ctx: ("no-such-turn",)), "'no-such-turn' names no turn"),
        "p-repeated": (_arm(lambda ctx: (ctx.views.turns[0].turn_id,) * 2), "is in the evidence twice"),
        "p-not-steps": (lambda ctx, query: [{"evidence": ["x"]}], "is a dict, not a bfr_core.records.Step"),
        "p-bad-data": (lambda ctx, query: [Step("topk", "t", (), 0, {"x": object()})], "not JSON serializable"),
    }
    good = _arm(lambda ctx: tuple(t.turn_id for t in ctx.views.turns[:2]))
    for name, (fn, _) in bad.items():
        monkeypatch.setitem(pipeline.ARMS, name, fn)
    monkeypatch.setitem(pipeline.ARMS, "p-good", good)
    arms = ("mem0", "p-good", *bad)
    try:
        run_id = evaluate(store, RunSpec("demo", arms, "", 3, "offline rules", 4))
        rows = load_results(store, run_id)
        finished = store.cursor().execute("SELECT finished FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    finally:
        store.close()
    n_q = len({r["question_id"] for r in rows})
    STATS.update(bad_outputs=len(bad), rows=len(rows), bad_rows_refused=sum(
        r["arm"] in bad and r["status"] == "failed" for r in rows), good_rows_kept=sum(
        r["arm"] not in bad and r["status"] == "ok" for r in rows), rows_lost=n_q * len(arms) - len(rows))
    assert n_q == 4 and len(rows) == n_q * len(arms) and finished is not None
    for r in rows:
        if r["arm"] in bad:
            assert r["status"] == "failed" and r["set_size"] == 0 and bad[r["arm"]][1] in r["error"], r
        else:
            assert r["status"] == "ok" and r["error"] is None and r["set_size"] > 0, r


def test_checked_steps_keeps_a_good_output_and_turns_lists_into_tuples() -> None:
    steps = checked_steps([Step("topk", "t", ["a", "b"], 2, {"k": 2})], {"a": 0, "b": 1})  # type: ignore[arg-type]
    assert steps[0].evidence == ("a", "b") and isinstance(steps, tuple)
    for output, why in (([], "not a non-empty list"), (None, "not a non-empty list"),
                        ([Step("topk", "t", ("a",), True, {})], "not a whole number"),
                        ([Step("topk", "t", ("a",), -1, {})], "not a whole number"),
                        ([Step("topk", "t", "ab", 0, {})], "not a list of turn ids")):
        with pytest.raises(ArmOutputError, match=why):
            checked_steps(output, {"a": 0, "b": 1})


def test_plugin_arms_are_marked_in_the_report_and_by_eval(demo, monkeypatch, capsys) -> None:
    from bfr_core.commands.eval import plugin_note
    from bfr_core.evaluation.report import PLUGIN_WARNING, report

    monkeypatch.setitem(pipeline.ARMS, "p-good", _arm(lambda ctx: (ctx.views.turns[0].turn_id,)))
    store = Store(demo)
    try:
        run_id = evaluate(store, RunSpec("demo", ("mem0", "p-good"), "", 3, "offline rules", 2))
        text = report(store, run_id, own_budgets=True)  # each arm's own set size in the table
    finally:
        store.close()
    assert "| mem0 | 3.0 | 1.0 | 0 | built-in |" in text and "| p-good | 1.0 | 1.0 | 0 | plug-in |" in text
    assert PLUGIN_WARNING in text
    plugin_note(("mem0", "p-good"))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: arm p-good is a plug-in") and "gold" in err[0]


HANGING = """
import sys, threading, time
from pathlib import Path
from bfr_core import pipeline
from bfr_core.cli import main

marker = Path(sys.argv[2])

def hangs(ctx, query):
    marker.write_text("in")
    threading.Event().wait()  # never returns

pipeline.ARMS["p-hangs"] = hangs
raise SystemExit(main(["eval", "--db", sys.argv[1], "--dataset", "demo", "--arms", "p-hangs,mem0", "--workers", "2",
                       "--quiet", "--limit", "3"]))
"""


HUNG_TIMEOUT_S = 60  # far above a loaded machine's exit (seconds); how long the exit takes is the bench's figure


def test_ctrl_c_with_workers_2_does_not_wait_for_a_hung_plugin_arm(demo, tmp_path) -> None:
    import shutil
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    db, marker = tmp_path / "s.duckdb", tmp_path / "marker"
    shutil.copyfile(demo, db)
    # a shell's background job inherits SIGINT ignored, and Python then leaves it ignored: the child
    # gets the default handler back, so Ctrl-C reaches the run whatever started this test
    proc = subprocess.Popen([sys.executable, "-c", HANGING, str(db), str(marker)], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "the arm never ran"
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:  # the hung arm never returns: a run that waited for it would still be running at the timeout
            _, err = proc.communicate(timeout=HUNG_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            STATS.update(interrupt_s=None, interrupt_timeouts=1)
            raise AssertionError(f"still running {HUNG_TIMEOUT_S} s after Ctrl-C: it waits for the hung arm") from None
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    STATS.update(interrupt_s=round(took, 2), interrupt_timeouts=0, interrupt_tracebacks=int("Traceback" in err))
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err[-2000:]
