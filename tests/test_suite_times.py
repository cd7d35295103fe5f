"""tests/suite_times.py: per-file times from a serial or parallel run, and the slowest-first order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from suite_times import recorded_seconds, slowest_files_first

HERE = Path(__file__).resolve().parent


def test_slowest_files_first_puts_unrecorded_files_first_then_the_slowest_keeping_each_files_order():
    ids = ["a.py::t1", "a.py::t2", "b.py::t1", "new.py::t1", "c.py::t1", "c.py::t2", "c.py::t3"]
    order = slowest_files_first(ids, {"a.py": 1.0, "b.py": 9.0, "c.py": 1.0})
    assert [ids[i] for i in order] == ["new.py::t1", "b.py::t1", "a.py::t1", "a.py::t2", "c.py::t1", "c.py::t2",
                                       "c.py::t3"]
    assert slowest_files_first(ids, {}) == list(range(len(ids)))


def test_recorded_seconds_reads_the_files_table_and_is_empty_when_unreadable(tmp_path):
    good = tmp_path / "times.json"
    good.write_text(json.dumps({"files": {"tests/test_a.py": 3.5, "tests/test_b.py": 2, "odd": "x"}}))
    assert recorded_seconds(good) == {"tests/test_a.py": 3.5, "tests/test_b.py": 2.0}
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text(json.dumps({"files": [1, 2]}))
    for name in ("absent.json", "bad.json", "list.json"):
        assert recorded_seconds(tmp_path / name) == {}


def test_a_parallel_run_writes_every_workers_files_into_one_json(tmp_path):
    """Two workers, two files: the controller's JSON names both files, every test and both workers."""
    (tmp_path / "test_one.py").write_text("import time\n\ndef test_x():\n    time.sleep(0.3)\n\ndef test_y():\n"
                                          "    pass\n")
    (tmp_path / "test_two.py").write_text("import time\n\ndef test_z():\n    time.sleep(0.2)\n")
    out = tmp_path / "times.json"
    env = {**os.environ, "BFR_SUITE_TIMES": str(out),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "suite_times", "-p", "no:cacheprovider",
                           "-n", "2", "--dist", "loadfile", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    times = json.loads(out.read_text(encoding="utf-8"))
    assert (times["tests"], times["failed"], times["exitstatus"]) == (3, 0, 0)
    assert set(times["files"]) == {"test_one.py", "test_two.py"}
    assert times["files"]["test_one.py"] >= 0.3 and times["files"]["test_two.py"] >= 0.2
    assert list(times["slowest_tests"]) == ["test_one.py::test_x", "test_two.py::test_z", "test_one.py::test_y"]
    assert set(times["worker_s"]) == {"gw0", "gw1"}
    assert sum(times["worker_s"].values()) >= 0.5 and times["pytest_s"] > 0
