"""Suite-wide settings: a held store lock is retried for 2 s, not the commands' default 30 s, so the
tests that hold a lock on purpose stay quick (``bfr_core.duck.connect``); a cache folder of each test
process's own (:func:`_session_cache`); every test leaves ``sys.modules["__main__"]`` as it found it (an
AppTest script run in-process replaces it, and a spawned worker process, ``evaluation.procpool``, would
then re-run that script as its main); and the per-file times and parallel order of ``suite_times``.

``scripts/test.sh`` runs the suite in two pytest-xdist worker processes (``--dist loadfile``: each file
runs whole in one worker), so nothing here may assume one test process."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from suite_times import (  # noqa: F401 - pytest hooks, registered by their names here
    pytest_collection_modifyitems,
    pytest_runtest_logreport,
    pytest_sessionfinish,
)

os.environ.setdefault("BFR_LOCK_WAIT_S", "2")

# The session cache folder this file made in a parent pytest process (the controller of parallel workers):
# a worker inheriting it makes its own, so no two test processes share calibrations or distilled models.
_SESSION_CACHE_VAR = "BFR_TEST_SESSION_CACHE"


def _session_cache() -> None:
    """The tests' own cache folder (``$BFR_CACHE_DIR``, inherited by every process they start), one per
    test process: MiniLM calibrations measured under the suite's load must not become this machine's
    remembered ones (``retrieval.embed.remembered``). The machine's distilled static model is linked in
    (distilling it takes a minute), and one the suite distils is kept for the machine when the process
    ends (written whole, then renamed, as two workers may both keep one)."""
    inherited = os.environ.get("BFR_CACHE_DIR")
    if inherited and inherited != os.environ.get(_SESSION_CACHE_VAR):
        return  # the user's own choice
    from bfr_core.retrieval.encoders import cache_dir

    os.environ.pop("BFR_CACHE_DIR", None)
    machine = cache_dir()
    session = Path(tempfile.mkdtemp(prefix="bfr-test-cache-"))
    for f in machine.glob("*.npy"):
        (session / f.name).symlink_to(f)
    os.environ["BFR_CACHE_DIR"] = os.environ[_SESSION_CACHE_VAR] = str(session)

    def keep_and_remove() -> None:
        for f in session.glob("*.npy"):
            if not f.is_symlink() and not (machine / f.name).exists():
                machine.mkdir(parents=True, exist_ok=True)
                tmp = machine / f"{f.stem}.{os.getpid()}.tmp"
                shutil.move(str(f), tmp)
                tmp.replace(machine / f.name)
        shutil.rmtree(session, ignore_errors=True)

    atexit.register(keep_and_remove)


_session_cache()


@pytest.fixture(autouse=True)
def _keep_main_module():
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main

