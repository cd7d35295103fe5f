"""The suite's time per test file, and the order a parallel run hands files out in (pytest hooks that
``tests/conftest.py`` takes in; ``-p suite_times`` loads them into any pytest run).

Covers: summing each file's and each test's setup + call + teardown seconds (and each worker's) from the
test reports; writing them, with the session's wall seconds, to ``$BFR_SUITE_TIMES`` as JSON from the
process that holds every report (the only one in a serial run, the controller of pytest-xdist's workers, which receive
their reports); in a parallel worker, collecting the files slowest first by the times
``bench/out/suite_times.json`` recorded, so that ``--dist loadfile --no-loadscope-reorder`` hands the
long files out first. Does not cover: choosing the number of workers (``scripts/test.sh``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

# Seconds per test file of the last recorded suite run (bench/speed/bench_suite.py): the parallel order.
RECORDED_TIMES = Path(__file__).resolve().parents[1] / "bench" / "out" / "suite_times.json"

_FILE_SECONDS: dict[str, float] = {}
_TEST_SECONDS: dict[str, float] = {}
SLOWEST_TESTS = 40  # the slowest tests the record lists by name (every file is listed)
_WORKER_SECONDS: dict[str, float] = {}
_STARTED = time.perf_counter()


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def recorded_seconds(path: Path = RECORDED_TIMES) -> dict[str, float]:
    """Each test file's seconds in the suite run recorded at ``path`` ({} when it is missing or unreadable)."""
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {k: float(v) for k, v in files.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def slowest_files_first(nodeids: list[str], seconds: dict[str, float]) -> list[int]:
    """Positions of ``nodeids`` reordered file by file: files without a recorded time first (a new or
    renamed file may be a long one), then the recorded ones slowest first, in collection order among
    equals; a file's tests keep their order."""
    first: dict[str, int] = {}
    for i, nodeid in enumerate(nodeids):
        first.setdefault(file_of(nodeid), i)

    def key(i: int) -> tuple[bool, float, int]:
        file = file_of(nodeids[i])
        return (file in seconds, -seconds.get(file, 0.0), first[file])

    return sorted(range(len(nodeids)), key=key)


def pytest_collection_modifyitems(config, items) -> None:
    """In a parallel worker, collect the slowest files first; every worker reads the same record, so all
    collect the same order, as pytest-xdist requires."""
    if not hasattr(config, "workerinput"):
        return
    order = slowest_files_first([item.nodeid for item in items], recorded_seconds())
    items[:] = [items[i] for i in order]


def pytest_runtest_logreport(report) -> None:
    """Sum setup, call and teardown time per test file and per worker ("main" in a serial run)."""
    path = file_of(report.nodeid)
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration
    _TEST_SECONDS[report.nodeid] = _TEST_SECONDS.get(report.nodeid, 0.0) + report.duration
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    worker = getattr(gateway, "id", "main")
    _WORKER_SECONDS[worker] = _WORKER_SECONDS.get(worker, 0.0) + report.duration


def slowest(seconds: dict[str, float], n: int) -> dict[str, float]:
    """The ``n`` largest entries of ``seconds``, rounded to 0.01 s, slowest first (ties by name)."""
    return dict(sorted(((k, round(v, 2)) for k, v in seconds.items()), key=lambda kv: (-kv[1], kv[0]))[:n])


def pytest_sessionfinish(session, exitstatus) -> None:
    """With ``$BFR_SUITE_TIMES`` set, write each test file's seconds there as JSON, slowest first, and the
    :data:`SLOWEST_TESTS` slowest tests' (setup + call + teardown), with the tests, failures, exit status,
    wall seconds and each worker's busy seconds (``bench/speed/bench_suite.py`` reads it). A parallel
    worker writes nothing: its controller holds every report."""
    target = os.environ.get("BFR_SUITE_TIMES")
    if not target or hasattr(session.config, "workerinput"):
        return
    files = slowest(_FILE_SECONDS, len(_FILE_SECONDS))
    Path(target).write_text(json.dumps({
        "exitstatus": int(exitstatus), "tests": session.testscollected, "failed": session.testsfailed,
        "pytest_s": round(time.perf_counter() - _STARTED, 1),
        "worker_s": {k: round(v, 1) for k, v in sorted(_WORKER_SECONDS.items())}, "files": files,
        "slowest_tests": slowest(_TEST_SECONDS, SLOWEST_TESTS),
    }, indent=1), encoding="utf-8")
