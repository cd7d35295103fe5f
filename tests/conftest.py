"""Suite-wide settings: a held store lock is retried for 2 s, not the commands' default 30 s, so the
tests that hold a lock on purpose stay quick (``bfr_core.duck.connect``); a cache folder of the
session's own (:func:`_session_cache`); and every test leaves
``sys.modules["__main__"]`` as it found it (an AppTest script run in-process replaces it, and a spawned
worker process, ``evaluation.procpool``, would then re-run that script as its main)."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("BFR_LOCK_WAIT_S", "2")


def _session_cache() -> None:
    """The tests' own cache folder (``$BFR_CACHE_DIR``, inherited by every process they start): MiniLM
    calibrations measured under the suite's load must not become this machine's remembered ones
    (``retrieval.embed.remembered``). The machine's distilled static model is linked in (distilling it
    takes a minute), and one the suite distils is kept for the machine when the session ends."""
    if os.environ.get("BFR_CACHE_DIR"):
        return
    from bfr_core.retrieval.encoders import cache_dir

    machine = cache_dir()
    session = Path(tempfile.mkdtemp(prefix="bfr-test-cache-"))
    for f in machine.glob("*.npy"):
        (session / f.name).symlink_to(f)
    os.environ["BFR_CACHE_DIR"] = str(session)

    def keep_and_remove() -> None:
        for f in session.glob("*.npy"):
            if not f.is_symlink() and not (machine / f.name).exists():
                machine.mkdir(parents=True, exist_ok=True)
                shutil.move(str(f), machine / f.name)
        shutil.rmtree(session, ignore_errors=True)

    atexit.register(keep_and_remove)


_session_cache()


@pytest.fixture(autouse=True)
def _keep_main_module():
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report) -> None:
    """Sum setup, call and teardown time per test file, for ``$BFR_SUITE_TIMES``."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus) -> None:
    """With ``$BFR_SUITE_TIMES`` set, write each test file's seconds there as JSON, slowest first
    (``bench/speed/bench_suite.py`` reads it to record the suite's time per file)."""
    target = os.environ.get("BFR_SUITE_TIMES")
    if not target:
        return
    import json

    files = dict(sorted(((k, round(v, 2)) for k, v in _FILE_SECONDS.items()), key=lambda kv: (-kv[1], kv[0])))
    Path(target).write_text(json.dumps({"exitstatus": int(exitstatus), "tests": session.testscollected,
                                        "failed": session.testsfailed, "files": files}, indent=1), encoding="utf-8")
